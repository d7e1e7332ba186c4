"""Plots with gnuplot (pngcairo and svg): data files plus a script, run once per format."""

import re
import subprocess
from pathlib import Path

import pandas as pd

from analysis import sites, stats
from runner import matrix

VARIANT_ORDER = list(matrix.VARIANTS)


def ordered(variants) -> list[str]:
    return [v for v in VARIANT_ORDER if v in set(variants)] + \
        sorted(v for v in set(variants) if v not in VARIANT_ORDER)


def unit_label(unit: str) -> str:
    return f"{unit} per call"


def write_data(samples: pd.DataFrame, summary: pd.DataFrame, outdir: Path) -> dict:
    """Writes the .dat files the scripts read; returns what the scripts need to know."""
    outdir.mkdir(parents=True, exist_ok=True)
    variants = ordered(summary.variant.unique())
    # "boxes": the variants each box plot has samples of (32-bit arm has no Rust ones).
    # "scaling": the variants each line plot has, in its blocks' order: gnuplot does not count
    # an empty block as an index, so a variant without samples gets no block at all.
    meta = {"panels": [], "variants": variants, "boxes": {}, "scaling": {}}
    for arch, config in stats.panels(summary):
        tag = f"{arch}-{config}"
        part = stats.rows(summary, arch=arch, config=config)
        mine = stats.rows(samples, arch=arch, config=config)
        meta["panels"].append((arch, config, part.accel.iloc[0], part.unit.iloc[0]))
        with open(outdir / f"percall-{tag}.dat", "w") as f:
            f.write("# index variant " + " ".join(f"{s} lo hi" for s in matrix.STATES) + "\n")
            for i, v in enumerate(variants):
                cells = [str(i), v]
                for state in matrix.STATES:
                    r = stats.rows(part, variant=v, state=state)
                    cells += (["NaN"] * 3 if r.empty else
                              [f"{r.per_call.iloc[0]:.4f}", f"{r.ci_lo.iloc[0]:.4f}",
                               f"{r.ci_hi.iloc[0]:.4f}"])
                f.write(" ".join(cells) + "\n")
        for state in matrix.STATES:
            with open(outdir / f"scaling-{tag}-{state}.dat", "w") as f:
                meta["scaling"][f"{tag}-{state}"] = []
                for v in variants:
                    g = stats.rows(mine, variant=v, state=state)
                    g = g[g.n > 0]
                    if g.empty:
                        continue
                    meta["scaling"][f"{tag}-{state}"].append(v)
                    f.write(f'# "{v}"\n')
                    for n, cycles in g.groupby("n").cycles.median().items():
                        f.write(f"{n} {cycles}\n")
                    f.write("\n\n")
            with open(outdir / f"box-{tag}-{state}.dat", "w") as f:
                meta["boxes"][f"{tag}-{state}"] = []
                for i, v in enumerate(variants):
                    g = stats.rows(mine, variant=v, state=state)
                    if g.empty:
                        continue
                    meta["boxes"][f"{tag}-{state}"].append(i)
                    for value in stats.per_call_samples(g):
                        f.write(f"{i} {value:.6f}\n")
    return meta


def script(meta: dict, term: str, ext: str) -> str:
    variants = meta["variants"]
    xtics = ", ".join(f'"{v}" {i}' for i, v in enumerate(variants))
    lines = [f"set terminal {term} noenhanced", "set grid ytics", "set key top left",
             "set style fill solid 0.5 border -1", f"set xtics ({xtics}) rotate by -30"]
    for arch, config, accel, unit in meta["panels"]:
        tag = f"{arch}-{config}"
        acc = "TCG -icount (instructions)" if accel == "tcg" else f"{accel.upper()} (cycles)"
        lines += [
            f"set xtics ({xtics}) rotate by -30",
            f'set output "percall-{tag}.{ext}"',
            f'set title "Per-call cost by variant, {arch} {config}, {acc}"',
            'set xlabel "variant"', f'set ylabel "{unit_label(unit)}"',
            "set yrange [0:*]", "set xrange [-0.6:%f]" % (len(variants) - 0.4),
            "set boxwidth 0.35",
            f'plot "percall-{tag}.dat" using ($1-0.18):3 with boxes title "tracepoint disabled", '
            f'"" using ($1-0.18):3:4:5 with yerrorbars lc rgb "black" pt 0 notitle, '
            f'"" using ($1+0.18):6 with boxes title "tracepoint enabled", '
            f'"" using ($1+0.18):6:7:8 with yerrorbars lc rgb "black" pt 0 notitle',
        ]
        for state in [s for s in matrix.STATES if meta["boxes"].get(f"{tag}-{s}")]:
            boxes = " ".join(map(str, meta["boxes"][f"{tag}-{state}"]))
            lines += [
                f'set output "scaling-{tag}-{state}.{ext}"',
                f'set title "Cost against loop length, {arch} {config}, tracepoint {state}, {acc}"',
                'set xlabel "N (calls per timed loop)"', f'set ylabel "{unit} per timed loop (median)"',
                "set logscale xy", "set autoscale xy", "set xtics auto norotate", "set key top left",
                f'lines = "{" ".join(meta["scaling"][f"{tag}-{state}"])}"',
                f'plot for [i=0:{len(meta["scaling"][f"{tag}-{state}"]) - 1}] '
                f'"scaling-{tag}-{state}.dat" index i using 1:2 with linespoints '
                f'title word(lines, i + 1)',
                "unset logscale xy",
                f"set xtics ({xtics}) rotate by -30",
                f'set output "box-{tag}-{state}.{ext}"',
                f'set title "Samples at the largest N divided by N, {arch} {config}, tracepoint {state}, {acc}"',
                'set xlabel "variant"', f'set ylabel "{unit_label(unit)}"',
                "set xrange [-0.6:%f]" % (len(variants) - 0.4), "set yrange [0:*]",
                "set style data boxplot", "set boxwidth 0.5",
                f'plot for [k in "{boxes}"] "box-{tag}-{state}.dat" '
                f'using (int(k)):($1 == int(k) ? $2 : NaN) notitle lc int(k) + 1',
            ]
    return "\n".join(lines) + "\n"


# The driver figure's bars: (panel, label, variant); a dense loop's cost is per site.
DRIVER_BARS = (
    ("arguments", "C, bare site", "c_trace"), ("arguments", "C, 4 arguments from t", "c_txn"),
    ("arguments", "Rust, bare site", "rust_trace"), ("arguments", "Rust, 4 arguments from t", "rust_txn"),
    ("arguments", "Rust, the same inside if enabled", "rust_txn_lazy"),
    ("density", "C, a site alone", "c_trace"), ("density", "C, each of 16", "c_dense"),
    ("density", "Rust, a site alone", "rust_trace"), ("density", "Rust, each of 16", "rust_dense"),
)


def driver_figure_data(summary: pd.DataFrame, outdir: Path) -> list[tuple[str, str]]:
    """driver.dat: per (arch, config) of the TCG runs, the disabled site cost (net of its
    baseline, per site) of each bar of DRIVER_BARS; returns the panels it has."""
    guest = stats.rows(summary, accel="tcg", state="disabled")
    panels = [p for p in stats.panels(guest)
              if stats.rows(guest, arch=p[0], config=p[1]).variant.isin(["c_txn", "c_dense"]).any()]
    if not panels:
        return []
    with open(outdir / "driver.dat", "w") as f:
        f.write("# index panel " + " ".join(v for _, _, v in DRIVER_BARS) + "\n")
        for i, (arch, config) in enumerate(panels):
            cells = [str(i), f"{arch}/{config}"]
            for _, _, variant in DRIVER_BARS:
                r = stats.rows(guest, arch=arch, config=config, variant=variant)
                cells.append("NaN" if r.empty or pd.isna(r.net.iloc[0]) else
                             f"{r.net.iloc[0] / matrix.BY_NAME[variant].sites:.4f}")
            f.write(" ".join(cells) + "\n")
    return panels


def driver_bars(summary: pd.DataFrame) -> list[tuple[int, tuple[str, str, str]]]:
    """The bars of DRIVER_BARS whose variant the run has, each with its column's index."""
    guest = stats.rows(summary, accel="tcg", state="disabled")
    return [(k, bar) for k, bar in enumerate(DRIVER_BARS) if guest.variant.eq(bar[2]).any()]


def driver_figure_script(panels, ext: str, bars_present=None) -> list[str]:
    if not panels:
        return []
    xtics = ", ".join(f'"{a}\\n{c}" {i}' for i, (a, c) in enumerate(panels))
    lines = [f'set output "driver.{ext}"',
             'set multiplot layout 2,1 title "Disabled sites as drivers write them, TCG -icount '
             '(instructions per call per site, net of the loop without sites)"',
             f"set xtics ({xtics}) norotate", "set xrange [-0.6:%f]" % (len(panels) - 0.4),
             "set style fill solid 0.6 border -1",
             "set key outside right top vertical", "set offsets 0, 0, graph 0.1, 0",
             'set ylabel "instructions per site"', "set yrange [0:*]", "set grid ytics",
             'set xlabel "architecture and kernel config"']
    for panel, title in (("arguments", "one argument in a register, or three read through a "
                          "pointer and the pointer"), ("density", "a site alone, or one of 16 in a row")):
        bars = [(k, label) for k, (p, label, _) in (bars_present or enumerate(DRIVER_BARS))
                if p == panel]
        width = 0.8 / len(bars)
        plots = [f'"driver.dat" using ($1{(j - (len(bars) - 1) / 2) * width:+.2f}):{k + 3} '
                 f'with boxes title "{label}"' for j, (k, label) in enumerate(bars)]
        lines += [f'set title "{title}"', f"set boxwidth {width * 0.9:.2f}",
                  "plot " + ", ".join(plots)]
    return lines + ["unset multiplot", "set key inside top left", "set offsets 0, 0, 0, 0"]


def size_figure_data(growth: dict, outdir: Path) -> list[str]:
    """size.dat: one block per (arch, config, language), bytes against sites; returns the
    block titles."""
    titles = []
    with open(outdir / "size.dat", "w") as f:
        for (arch, config), lines in growth.items():
            for language, points in lines.items():
                titles.append(f"{arch} {config} {language}")
                f.write(f"# {titles[-1]}\n" + "".join(f"{k} {b:.2f}\n" for k, b in points)
                        + "\n\n")
    return titles


def size_figure_script(titles: list[str], ext: str) -> list[str]:
    if not titles:
        return []
    return [f'set output "size.{ext}"',
            'set title "Bytes a module gains for k sites of one event (symbol sizes of the '
            'measured modules)"', 'set xlabel "sites of the event (k)"',
            'set ylabel "bytes: loop growth + __jump_table + once-per-event functions"',
            "set xrange [0:17]", "set yrange [0:*]", "set xtics (1, 4, 8, 12, 16) norotate",
            "set key top left", "set grid", "unset logscale xy",
            f'plot for [i=0:{len(titles) - 1}] "size.dat" index i using 1:2 with linespoints '
            f'lw 2 title word("{" ".join(t.replace(" ", "_") for t in titles)}", i + 1)']


def titled(script_text: str, profile: str | None) -> str:
    """Every figure's title names the build profile its kernels were built with."""
    if not profile:
        return script_text
    return re.sub(r'^(set title "|set multiplot layout \S+ title ")',
                  rf"\g<1>{profile} build: ", script_text, flags=re.M)


def render(samples: pd.DataFrame, summary: pd.DataFrame, outdir: Path,
           growth: dict | None = None, profile: str | None = None) -> list[Path]:
    """Per-panel plots of the guest runs, the headline figure of site costs (guest and
    native side by side), and, given `growth` ((arch, config) -> size.bytes_for_sites), the
    figure of bytes against sites; each title names the build `profile`."""
    meta = write_data(stats.guest(samples), stats.guest(summary), outdir)
    panels = stats.panels(summary)
    figure = site_figure_data(sites.site_costs(summary), panels, outdir)
    titles = size_figure_data(growth or {}, outdir)
    driver = driver_figure_data(summary, outdir)
    made = []
    for term, ext in (("pngcairo size 900,560 font 'sans,10'", "png"), ("svg size 900,560", "svg")):
        text = script(meta, term, ext) + "\n".join(
            [f"set terminal {term.replace('900,560', '900,760')} noenhanced"]
            + site_figure_script(figure, panels, term, ext)
            + [f"set terminal {term} noenhanced"] + size_figure_script(titles, ext)
            + [f"set terminal {term.replace('900,560', '900,760')} noenhanced"]
            + driver_figure_script(driver, ext, driver_bars(summary))) + "\n"
        (outdir / f"plots-{ext}.gp").write_text(titled(text, profile))
        # Relative names, run from the plot directory: the scripts hold no host paths.
        subprocess.run(["gnuplot", f"plots-{ext}.gp"], cwd=outdir, check=True,
                       capture_output=True, text=True)
        made += sorted(outdir.glob(f"*.{ext}"))
    return made


def site_figure_data(costs: pd.DataFrame, panels, outdir: Path) -> list[tuple[str, str]]:
    """sites-<source>.dat for the headline figure: one line per (arch, config), the C, Rust
    and helper site costs with their error bars: the 95% interval inside the guest; natively
    the mean over the placements of .text, from the smallest to the largest.
    Returns (source, y label) of each file made."""
    made = []
    guest = costs[[not stats.is_native(a) for a in costs.accel]]
    # Panels without a native measurement get a note in the figure instead of empty space.
    spread = sites.over_placements(costs).rename(columns={"mean": "cost", "min": "lo",
                                                          "max": "hi"})
    missing = [i for i, (a, c) in enumerate(panels)
               if stats.rows(spread, arch=a, config=c).empty]
    for source, mine in (("guest", guest), ("native", spread)):
        if mine.empty:
            continue
        with open(outdir / f"sites-{source}.dat", "w") as f:
            f.write("# index panel C lo hi Rust lo hi helper lo hi\n")
            for i, (arch, config) in enumerate(panels):
                cells = [str(i), f"{arch}/{config}"]
                for _, variant in sites.SITES:
                    r = stats.rows(mine, arch=arch, config=config, variant=variant)
                    cells += (["NaN"] * 3 if r.empty else
                              [f"{r.cost.iloc[0]:.4f}", f"{r.lo.iloc[0]:.4f}", f"{r.hi.iloc[0]:.4f}"])
                f.write(" ".join(cells) + "\n")
        accels = sorted(set(guest.accel))
        made.append((source, f"{mine.unit.iloc[0]} per call" + (
            f", {'/'.join('TCG -icount' if a == 'tcg' else a.upper() for a in accels)}"
            if source == "guest" else ""), missing if source == "native" else [],
            min(0.0, float(mine.lo.min()))))
    return made


def site_figure_script(made, panels, term: str, ext: str) -> list[str]:
    """The headline figure: one panel per source (guest instructions, native ticks)."""
    if not made:
        return []
    xtics = ", ".join(f'"{a}\\n{c}" {i}' for i, (a, c) in enumerate(panels))
    lines = [f'set output "sites.{ext}"', f"set multiplot layout {len(made)},1 "
             'title "The disabled tracepoint site, cost per call (site loop minus the same loop '
             'without the site)"',
             f"set xtics ({xtics}) norotate", "set xrange [-0.6:%f]" % (len(panels) - 0.4),
             "set boxwidth 0.25", "set style fill solid 0.6 border -1", "set key top left",
             'set xlabel "architecture and kernel config" offset 0,-0.8', "set xzeroaxis lt -1",
             "set offsets 0, 0, graph 0.15, 0"]
    for source, label, missing, ymin in made:
        where = ("inside the guest (error bars: 95% CI)" if source == "guest" else
                 "natively on the host CPU: mean over the placements of .text (bars: min to max)")
        lines += ["unset label"] + [
            f'set label "not run\\nnatively:\\nnot the\\nhost\'s\\narch" at {i}, graph 0.5 center'
            for i in missing]
        lines += [f'set title "{where}"', f'set ylabel "{label}"',
                  f"set yrange [{ymin - 0.2 if ymin < 0 else 0}:*]",
                  f'plot "sites-{source}.dat" using ($1-0.27):3 with boxes title "C trace_<name>()", '
                  f'"" using ($1-0.27):3:4:5 with yerrorbars lc rgb "black" pt 0 notitle, '
                  f'"" using ($1):6 with boxes title "Rust declare_trace!", '
                  f'"" using ($1):6:7:8 with yerrorbars lc rgb "black" pt 0 notitle, '
                  f'"" using ($1+0.27):9 with boxes title "Rust -> C helper", '
                  f'"" using ($1+0.27):9:10:11 with yerrorbars lc rgb "black" pt 0 notitle']
    return lines + ["unset multiplot", "unset label", "unset xzeroaxis", "set offsets 0, 0, 0, 0"]
