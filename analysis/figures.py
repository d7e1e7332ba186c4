"""The report's two figures, with matplotlib: the headline (instructions per disabled site)
and the native spread (TSC ticks per call, each process and placement a point)."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
import pandas as pd  # noqa: E402

# One colour per writer of the site, the same in every figure.
WRITERS = (("c_trace", "C trace_<event>()", "#1f77b4"),
           ("rust_trace", "Rust declare_trace!", "#d95f02"),
           ("rust_helper", "Rust -> out-of-line C helper", "#7f7f7f"))
CONFIG_TITLES = (("jump_label", "CONFIG_JUMP_LABEL=y"), ("no_jump_label", "CONFIG_JUMP_LABEL=n"))


def instruction_axis(ax, title: str, top: float, what: str) -> None:
    """A panel of horizontal bars in instructions: whole ticks, room for the printed values."""
    ax.set_title(title, fontsize=9)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(0, top * 1.12)
    ax.set_xlabel(f"{what} (exact, TCG -icount)")
    ax.grid(axis="x", color="#dddddd")
    ax.set_axisbelow(True)


def headline_rows(table: pd.DataFrame, profile: str) -> list[tuple[str, str]]:
    """The (arch, kernel) rows of the headline figure, in the order of the table."""
    part = table[table.profile == profile]
    order = {"series": 0, "series-gcc14": 1, "mainline": 2}
    keys = list(dict.fromkeys(zip(part.arch, part.kernel)))
    archs = list(dict.fromkeys(part.arch))
    return sorted(keys, key=lambda k: (archs.index(k[0]), order.get(k[1], 9)))


def headline(table: pd.DataFrame, profile: str, title: str, out: Path) -> Path:
    """Horizontal bars: a panel per config on one scale, a row per architecture and kernel, a
    bar per writer with its value printed; a missing site says so instead of a zero bar."""
    rows = headline_rows(table, profile)
    part = table[table.profile == profile].set_index(["arch", "kernel", "config", "variant"])
    top = part.instructions_per_site.max()
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.55 * len(rows) * len(WRITERS) / 2 + 1.6),
                             sharey=True)
    height = 0.8 / len(WRITERS)
    for ax, (config, config_title) in zip(axes, CONFIG_TITLES):
        for i, (arch, kernel) in enumerate(rows):
            for j, (variant, label, colour) in enumerate(WRITERS):
                y = i + (j - 1) * height
                key = (arch, kernel, config, variant)
                if key not in part.index:
                    missing = ("no Rust (6.12 arm)" if variant != "c_trace" and arch == "arm"
                               and kernel != "mainline" else "not measured")
                    ax.text(0.1, y, missing, va="center", fontsize=7, color="#999999")
                    continue
                value = float(part.loc[key].instructions_per_site)
                ax.barh(y, value, height=height * 0.9, color=colour,
                        label=label if i == 0 else None)
                ax.text(value + top * 0.01, y, f"{value:g}", va="center", fontsize=7)
        instruction_axis(ax, config_title, top, "instructions per disabled site")
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels([f"{a} {k}" for a, k in rows], fontsize=8)
    axes[0].invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def native(processes: pd.DataFrame, noise: dict, unit: str, title: str, out: Path) -> Path:
    """Each process x placement a point, per site and config; the median a bar across; the A/A
    noise a grey band around zero."""
    variants = [w for w in WRITERS if w[0] in set(processes.variant)]
    configs = [c for c in CONFIG_TITLES if c[0] in set(processes.config)]
    fig, axes = plt.subplots(1, len(configs), figsize=(5 * len(configs), 3.6), sharey=True,
                             squeeze=False)
    placements = sorted(set(processes.accel), key=lambda a: int(a.partition("+")[2] or 0))
    for ax, (config, config_title) in zip(axes[0], configs):
        band = noise.get(("x86_64", config), 0.0)
        ax.axhspan(-band, band, color="#dddddd", label=f"A/A noise (±{band:.2f})")
        for i, (variant, label, colour) in enumerate(variants):
            mine = processes[(processes.config == config) & (processes.variant == variant)]
            for k, accel in enumerate(placements):
                values = mine[mine.accel == accel].cost
                x = [i + (k - (len(placements) - 1) / 2) * 0.12] * len(values)
                ax.scatter(x, values, s=12, color=colour, alpha=0.7, linewidths=0)
            if len(mine):
                ax.hlines(mine.cost.median(), i - 0.3, i + 0.3, color="black", linewidth=1.5)
        ax.set_xticks(range(len(variants)))
        ax.set_xticklabels([label.replace(" -> ", "\n-> ") for _, label, _ in variants],
                           fontsize=8)
        ax.set_title(config_title, fontsize=10)
        ax.grid(axis="y", color="#eeeeee")
        ax.set_axisbelow(True)
        ax.legend(loc="upper left", fontsize=7, frameon=False)
    axes[0][0].set_ylabel(f"{unit} per call")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


# The driver figure's bars, per panel: (variant, label, colour); dense sites per site.
DRIVER_PANELS = (
    ("Arguments: one in a register, or three fields read through a pointer",
     (("c_trace", "C, bare site", "#9ecae1"), ("c_txn", "C, 3 fields of t", "#1f77b4"),
      ("rust_trace", "Rust, bare site", "#fdae6b"), ("rust_txn", "Rust, 3 fields of t",
                                                     "#d95f02"),
      ("rust_txn_lazy", "Rust, 3 fields, inside if enabled", "#7b3294"))),
    ("Density: a site alone, or each of 16 in a row",
     (("c_trace", "C, a site alone", "#9ecae1"), ("c_dense", "C, each of 16", "#1f77b4"),
      ("rust_trace", "Rust, a site alone", "#fdae6b"), ("rust_dense", "Rust, each of 16",
                                                        "#d95f02"))))


def driver(table: pd.DataFrame, title: str, out: Path) -> Path | None:
    """Disabled sites as drivers write them, per architecture and config: horizontal bars with
    their values, a panel per question; a variant the run lacks gets no bar and no legend."""
    if not table.variant.isin(["c_txn", "c_dense"]).any():
        return None
    part = table.set_index(["arch", "config", "variant"])
    rows = list(dict.fromkeys(zip(table.arch, table.config)))
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.85 * len(rows) + 1.8), sharey=True)
    top = table.instructions_per_site.max()
    for ax, (panel_title, bars) in zip(axes, DRIVER_PANELS):
        bars = [b for b in bars if table.variant.eq(b[0]).any()]
        height = 0.84 / len(bars)
        for i, (arch, config) in enumerate(rows):
            for j, (variant, label, colour) in enumerate(bars):
                y = i + (j - (len(bars) - 1) / 2) * height
                if (arch, config, variant) not in part.index:
                    continue
                value = float(part.loc[(arch, config, variant)].instructions_per_site)
                ax.barh(y, value, height=height * 0.9, color=colour, label=label)
                ax.text(value + top * 0.01, y, f"{value:.3g}", va="center", fontsize=6)
        instruction_axis(ax, panel_title, top, "instructions per site, event off")
        handles, labels = ax.get_legend_handles_labels()
        unique = dict(zip(labels, handles))
        ax.legend(unique.values(), unique.keys(), fontsize=7, loc="lower right")
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels([f"{a} {'JL=y' if c == 'jump_label' else 'JL=n'}"
                             for a, c in rows], fontsize=8)
    axes[0].invert_yaxis()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


ARCH_COLOURS = {"x86_64": "#1f77b4", "arm64": "#d95f02", "arm": "#7f7f7f",
                "riscv64": "#1b9e77", "loongarch64": "#7b3294"}


def size(growth: dict, title: str, out: Path) -> Path | None:
    """Bytes a module gains for k sites of one event: the two measured points of each
    architecture and language (k = 1 and 16), joined by a thin line that is only a guide (the
    growth is linear in k by construction: a site's bytes times k plus the once-per-event
    functions). A colour per architecture, a marker and line style per language."""
    if not growth:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    for (arch, _), lines in growth.items():
        for language, points in lines.items():
            ks, bytes_ = zip(*points)
            style = dict(marker="o", linestyle="-") if language == "C" else \
                dict(marker="s", linestyle="--")
            ax.plot(ks, bytes_, color=ARCH_COLOURS.get(arch, "black"), linewidth=1, **style,
                    label=f"{arch}, {language}")
    ks = sorted({k for lines in growth.values() for pts in lines.values() for k, _ in pts})
    ax.set_xticks(ks)
    ax.set_xlim(0, max(ks) + 3)
    ax.set_ylim(0, None)
    ax.set_xlabel("sites of the event in the module (k); measured at these k only")
    ax.set_ylabel("bytes: k sites + __jump_table + once-per-event code")
    ax.grid(color="#eeeeee")
    ax.legend(fontsize=7, ncol=2, loc="upper left")
    ax.set_title(title, fontsize=9, wrap=True)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
