"""The report's figures, with gnuplot (pngcairo) as every plot of the project: the headline
(instructions per disabled site), drivers' sites, code size, and the native spread (TSC ticks
per call, each process and placement a point). Each figure is one script with its data
inline, written beside its PNG as <name>.gp."""

import subprocess
from pathlib import Path

import pandas as pd

from analysis.words import SHORT
from common import disk
from common.messages import Failure

# One colour per writer of the site, the same in every figure.
WRITERS = (("c_trace", "C trace_<event>()", "#1f77b4"),
           ("rust_trace", "Rust declare_trace!", "#d95f02"),
           ("rust_helper", "Rust -> out-of-line C helper", "#7f7f7f"))
CONFIG_TITLES = (("jump_label", "CONFIG_JUMP_LABEL=y"), ("no_jump_label", "CONFIG_JUMP_LABEL=n"))
FONT = "font 'sans,9'"


def quoted(text: str) -> str:
    """A gnuplot string literal (double-quoted: a newline is \\n)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def bars(rows: list[tuple[float, float, str, str]]) -> str:
    """A datablock of horizontal bars: y, value, colour, label."""
    return "\n".join(f"{y:.4f} {value:.4f} {colour.replace('#', '0x')} {quoted(label)}"
                     for y, value, colour, label in rows)


def bar_panel(name: str, title: str, rows, notes, top: float, labels: list[str],
              xlabel: str, height: float, show_labels: bool) -> list[str]:
    """One panel of horizontal bars with their values printed, and notes where a bar is
    missing (a site the kernel cannot have), on an axis from 0 with room for the values."""
    ytics = ", ".join(f"{quoted(label)} {i}" for i, label in enumerate(labels))
    blank = ", ".join(f'"" {i}' for i in range(len(labels)))
    lines = [f"${name} << EOD", bars(rows), "EOD",
             f"set title {quoted(title)}", f"set xlabel {quoted(xlabel)}",
             f"set xrange [0:{top * 1.15:.4f}]", f"set yrange [{len(labels) - 0.5}:-0.5]",
             f"set ytics ({ytics if show_labels else blank})",
             "unset label"]
    for y, text in notes:
        lines.append(f"set label {quoted(text)} at {top * 0.01:.4f},{y:.4f} "
                     "tc rgb '#888888' font 'sans,7'")
    lines.append(f"plot ${name} using ($2/2):1:($2/2):({height / 2:.4f}):3 "
                 "with boxxyerror fs solid 0.9 noborder lc rgb variable notitle, "
                 f"${name} using 2:1:(sprintf(' %.4g', $2)) with labels left font 'sans,7' "
                 "notitle")
    return lines


def with_legend(script: list[str], entries: list[tuple[str, str]]) -> list[str]:
    """The script with a legend of coloured boxes under the panels, set just before the last
    panel's plot (a panel's own labels are reset before its notes)."""
    last = max(i for i, line in enumerate(script) if line.startswith("plot "))
    return script[:last] + legend(entries) + script[last:]


def legend(entries: list[tuple[str, str]]) -> list[str]:
    """A legend of coloured boxes under the panels, as labels in screen coordinates, in rows
    that wrap at the figure's width."""
    out, x, y = [], 0.08, 0.075
    for label, colour in entries:
        width = 0.03 + 0.0068 * len(label)
        if x + width > 0.98:
            x, y = 0.08, y - 0.04
        out.append(f"set object rect from screen {x:.3f},{y - 0.01:.3f} to screen "
                   f"{x + 0.015:.3f},{y + 0.01:.3f} fc rgb '{colour}' fs solid noborder front")
        out.append(f"set label {quoted(label)} at screen {x + 0.02:.3f},{y:.3f} font 'sans,8'")
        x += width
    return out


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
    top = float(part.instructions_per_site.max())
    height = 0.8 / len(WRITERS)
    # A few rows still need room for the title above and the legend below the panels.
    script = [f"set terminal pngcairo noenhanced size 1100,{max(440, 160 + 44 * len(rows))} {FONT}",
              f"set output {quoted(out.name)}", "set grid xtics lc rgb '#dddddd'",
              f"set multiplot layout 1,2 title {quoted(title)} margins 0.15,0.98,0.2,0.86 "
              "spacing 0.03"]
    for k, (config, config_title) in enumerate(CONFIG_TITLES):
        drawn, notes = [], []
        for i, (arch, kernel) in enumerate(rows):
            for j, (variant, _, colour) in enumerate(WRITERS):
                y = i + (j - 1) * height
                key = (arch, kernel, config, variant)
                if key not in part.index:
                    note = ("no Rust (6.12 arm)" if variant != "c_trace" and arch == "arm"
                            and kernel != "mainline" else "not measured")
                    if (i, note) not in {(round(y0 - 0.5), n) for y0, n in notes}:
                        notes.append((y, note))
                    continue
                drawn.append((y, float(part.loc[key].instructions_per_site), colour, ""))
        script += bar_panel(f"h{k}", config_title, drawn, notes, top,
                            [f"{a} {kn}" for a, kn in rows],
                            "instructions per disabled site (exact, TCG -icount)",
                            height * 0.9, k == 0)
    script = with_legend(script, [(label, colour) for _, label, colour in WRITERS])
    return draw(script + ["unset multiplot"], out)


def draw(script: list[str], out: Path) -> Path:
    """Writes the gnuplot script beside `out` (its data inline, so `gnuplot <name>.gp` in
    that directory draws the figure again) and runs it there; gnuplot's errors, if any,
    name the figure."""
    with disk.writing(out.parent):
        out.parent.mkdir(parents=True, exist_ok=True)
    # gnuplot takes no datablock inside multiplot: every block goes first.
    blocks, rest, inside = [], [], False
    for line in script:
        inside = inside or line.endswith("<< EOD")
        (blocks if inside else rest).append(line)
        inside = inside and line != "EOD"
    gp = out.with_suffix(".gp")
    disk.write_atomically(gp, "\n".join(blocks + rest) + "\n")
    with disk.writing(out):
        proc = subprocess.run(["gnuplot", gp.name], cwd=out.parent, capture_output=True,
                              text=True)
    if proc.returncode != 0:
        raise Failure(f"gnuplot could not draw {out}: {proc.stderr.strip()}; "
                      f"{disk.where_words(out)}")
    return out


def native(processes: pd.DataFrame, noise: dict, unit: str, title: str, out: Path) -> Path:
    """Each process x placement a point, per site and config; the median a black bar across;
    the A/A noise a grey band around zero."""
    variants = [w for w in WRITERS if w[0] in set(processes.variant)]
    configs = [c for c in CONFIG_TITLES if c[0] in set(processes.config)]
    placements = sorted(set(processes.accel), key=lambda a: int(a.partition("+")[2] or 0))
    top = float(processes.cost.max())
    bottom = min(float(processes.cost.min()), -max(noise.values(), default=0.0))
    xtics = ", ".join(f"{quoted(label)} {i}" for i, (_, label, _) in enumerate(variants))
    script = [f"set terminal pngcairo noenhanced size {520 * len(configs)},420 {FONT}",
              f"set output {quoted(out.name)}",
              f"set multiplot layout 1,{len(configs)} title {quoted(title)}",
              f"set xtics ({xtics}) font 'sans,7'", f"set xrange [-0.6:{len(variants) - 0.4}]",
              f"set yrange [{bottom - 0.1 * (top - bottom):.4f}:{top + 0.1 * (top - bottom):.4f}]",
              f"set ylabel {quoted(unit + ' per call')}", "set grid ytics lc rgb '#eeeeee'",
              "set key top left font 'sans,7'"]
    for k, (config, config_title) in enumerate(configs):
        band = noise.get(("x86_64", config), 0.0)
        points, medians = [], []
        for i, (variant, _, colour) in enumerate(variants):
            mine = processes[(processes.config == config) & (processes.variant == variant)]
            for p, accel in enumerate(placements):
                x = i + (p - (len(placements) - 1) / 2) * 0.12
                points += [f"{x:.4f} {c:.4f} {colour.replace('#', '0x')}"
                           for c in mine[mine.accel == accel].cost]
            if len(mine):
                medians.append(f"{i:.4f} {mine.cost.median():.4f}")
        script += [f"$p{k} << EOD", *points, "EOD", f"$m{k} << EOD", *medians, "EOD",
                   f"set title {quoted(config_title)}",
                   f"set object 1 rect from graph 0, first {-band:.4f} to graph 1, first "
                   f"{band:.4f} fc rgb '#dddddd' fs solid noborder behind",
                   f"plot NaN with boxes fs solid fc rgb '#dddddd' "
                   f"title {quoted(f'A/A noise (±{band:.2f})')}, "
                   f"$p{k} using 1:2:3 with points pt 7 ps 0.5 lc rgb variable notitle, "
                   f"$m{k} using 1:2:(0.3) with xerrorbars pt -1 lw 2 lc rgb 'black' "
                   "title 'median'"]
    return draw(script + ["unset multiplot"], out)


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
    their values, a panel per question, the axis to the largest value drawn; a site the
    architecture cannot have (32-bit arm's Rust in 6.12) is named, not left blank."""
    if not table.variant.isin(["c_txn", "c_dense"]).any():
        return None
    part = table.set_index(["arch", "config", "variant"])
    rows = list(dict.fromkeys(zip(table.arch, table.config)))
    shown = [v for _, bars_ in DRIVER_PANELS for v, _, _ in bars_]
    top = float(table[table.variant.isin(shown)].instructions_per_site.max())
    size_y = int(120 + 24 * len(rows) * 2.2)
    script = [f"set terminal pngcairo noenhanced size 1200,{size_y} {FONT}",
              f"set output {quoted(out.name)}", "set grid xtics lc rgb '#dddddd'",
              f"set multiplot layout 1,2 title {quoted(title)} margins 0.1,0.98,0.2,0.9 "
              "spacing 0.03"]
    entries = {}
    for k, (panel_title, bars_) in enumerate(DRIVER_PANELS):
        bars_ = [b for b in bars_ if table.variant.eq(b[0]).any()]
        height = 0.84 / len(bars_)
        drawn, notes = [], []
        for i, (arch, config) in enumerate(rows):
            missing = [label for variant, label, _ in bars_ if (arch, config, variant)
                       not in part.index]
            for j, (variant, label, colour) in enumerate(bars_):
                y = i + (j - (len(bars_) - 1) / 2) * height
                if (arch, config, variant) in part.index:
                    value = float(part.loc[(arch, config, variant)].instructions_per_site)
                    drawn.append((y, round(value, 3), colour, label))
                    entries[label] = colour
            if missing:
                notes.append((i + 0.5 * height, "no Rust (6.12 arm)" if arch == "arm"
                              else "not measured: " + ", ".join(missing)))
        script += bar_panel(f"d{k}", panel_title, drawn, notes, top,
                            [f"{a} {SHORT[c]}" for a, c in rows],
                            "instructions per site, event off (exact, TCG -icount)",
                            height * 0.9, k == 0)
    script = with_legend(script, list(entries.items()))
    return draw(script + ["unset multiplot"], out)


ARCH_COLOURS = {"x86_64": "#1f77b4", "arm64": "#d95f02", "arm": "#7f7f7f",
                "riscv64": "#1b9e77", "loongarch64": "#7b3294"}


def size_terms(points: list[tuple[int, int]]) -> tuple[float, float]:
    """(bytes per site, bytes once per event) from a module's sizes at two numbers of sites:
    the growth is linear in k by construction (k sites, their __jump_table entries, and the
    event's own functions once)."""
    (k1, b1), (k2, b2) = sorted(points)[:1] + sorted(points)[-1:]
    per_site = (b2 - b1) / (k2 - k1)
    return per_site, b1 - per_site * k1


def size(growth: dict, title: str, out: Path) -> Path | None:
    """What k sites of one event cost in bytes, split as the module's sizes give it: bytes
    per site and bytes once per event, a bar each per architecture and language with its
    value (two lines per architecture on one axis hid each other where they coincide)."""
    if not growth:
        return None
    labels, per_site, once = [], [], []
    for (arch, _), lines in growth.items():
        for language in ("C", "Rust"):
            if language not in lines or len(lines[language]) < 2:
                continue
            a, b = size_terms(lines[language])
            y = len(labels)
            colour = ARCH_COLOURS.get(arch, "#000000")
            labels.append(f"{arch}, {language}")
            per_site.append((y, a, colour, ""))
            once.append((y, b, colour, ""))
    # Margins in pixels (a two-line title, a panel title; the x label below), as fractions
    # of a height that grows with the rows.
    height = 220 + 26 * len(labels)
    script = [f"set terminal pngcairo noenhanced size 1000,{height} {FONT}",
              f"set output {quoted(out.name)}", "set grid xtics lc rgb '#dddddd'",
              f"set multiplot layout 1,2 title {quoted(title)} margins 0.14,0.98,"
              f"{60 / height:.3f},{1 - 95 / height:.3f} spacing 0.03"]
    script += bar_panel("s0", "bytes per site (text and __jump_table entry)", per_site, [],
                        max(v for _, v, _, _ in per_site), labels, "bytes", 0.7, True)
    script += bar_panel("s1", "bytes once per event (its functions)", once, [],
                        max(v for _, v, _, _ in once), labels, "bytes", 0.7, False)
    return draw(script + ["unset multiplot"], out)
