"""The detail pages' plots with gnuplot (pngcairo): the data files and the script beside
the PNGs, so a reader can draw them again."""

import re
import subprocess
from pathlib import Path

import pandas as pd

from analysis import stats
from common import disk, matrix
from common.messages import Failure

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
    # "scaling": the variants each line plot has, in its blocks' order: gnuplot does not count
    # an empty block as an index, so a variant without samples gets no block at all.
    meta = {"panels": [], "variants": variants, "scaling": {}, "missing": {}}
    for arch, config in stats.panels(summary):
        tag = f"{arch}-{config}"
        part = stats.rows(summary, arch=arch, config=config)
        mine = stats.rows(samples, arch=arch, config=config)
        meta["panels"].append((arch, config, part.accel.iloc[0], part.unit.iloc[0]))
        with disk.writing(outdir / f"percall-{tag}.dat"), \
                open(outdir / f"percall-{tag}.dat", "w") as f:
            f.write("# index variant " + " ".join(f"{s} lo hi" for s in matrix.STATES) + "\n")
            meta["missing"][tag] = [i for i, v in enumerate(variants)
                                    if stats.rows(part, variant=v).empty]
            for i, v in enumerate(variants):
                cells = [str(i), v]
                for state in matrix.STATES:
                    r = stats.rows(part, variant=v, state=state)
                    cells += (["NaN"] * 3 if r.empty else
                              [f"{r.per_call.iloc[0]:.4f}", f"{r.ci_lo.iloc[0]:.4f}",
                               f"{r.ci_hi.iloc[0]:.4f}"])
                f.write(" ".join(cells) + "\n")
        for state in matrix.STATES:
            with disk.writing(outdir / f"scaling-{tag}-{state}.dat"), \
                    open(outdir / f"scaling-{tag}-{state}.dat", "w") as f:
                meta["scaling"][f"{tag}-{state}"] = []
                for v in variants:
                    g = stats.rows(mine, variant=v, state=state)
                    g = g[g.n > 0]
                    if g.empty:
                        continue
                    meta["scaling"][f"{tag}-{state}"].append(v)
                    f.write(f'# "{v}"\n')
                    for n, cycles in g.groupby("n").cycles.min().items():
                        f.write(f"{n} {cycles}\n")
                    f.write("\n\n")
    return meta


def script(meta: dict, term: str, ext: str) -> str:
    variants = meta["variants"]
    xtics = ", ".join(f'"{v}" {i}' for i, v in enumerate(variants))
    colours = ("#1f77b4", "#d95f02", "#1b9e77", "#7b3294", "#e7298a", "#66a61e", "#a6761d",
               "#666666")
    styles = [f"set linetype {101 + i} lc rgb '{colours[i % 8]}' pt {i % 14 + 1} "
              f"dt {i // 8 + 1}" for i in range(len(variants))]
    lines = [f"set terminal {term} noenhanced", *styles, "set grid ytics", "set key top left",
             "set style fill solid 0.5 border -1", f"set xtics ({xtics}) rotate by -30"]
    for arch, config, accel, unit in meta["panels"]:
        tag = f"{arch}-{config}"
        acc = "TCG -icount (instructions)" if accel == "tcg" else f"{accel.upper()} (cycles)"
        # Two panels, each on its own scale: on one, the probe-attached bars (hundreds of
        # instructions) would leave the disabled ones, the point of the study, a few pixels.
        missing = [f'set label "none" at {i},0 center offset 0,0.5 '
                   "font ',7' tc rgb '#888888'" for i in meta["missing"].get(tag, [])]
        lines += [
            f"set xtics ({xtics}) rotate by -30",
            f'set output "percall-{tag}.{ext}"',
            f'set multiplot layout 2,1 title "Per-call cost by variant, {arch} {config}, {acc}"',
            'set xlabel "variant"', f'set ylabel "{unit_label(unit)}"',
            "set yrange [0:*]", "set xrange [-0.6:%f]" % (len(variants) - 0.4),
            "set boxwidth 0.6", *missing,
            'set title "tracepoint disabled"',
            f'plot "percall-{tag}.dat" using 1:3 with boxes lc rgb "#1f77b4" notitle, '
            f'"" using 1:3:(sprintf("%g", $3)) with labels offset 0,0.6 font ",7" notitle',
            'set title "probe attached"',
            f'plot "percall-{tag}.dat" using 1:6 with boxes lc rgb "#d95f02" notitle, '
            f'"" using 1:6:(sprintf("%g", $6)) with labels offset 0,0.6 font ",7" notitle',
            "unset multiplot", "unset label", "unset title",
        ]
        for state in [s for s in matrix.STATES if meta["scaling"].get(f"{tag}-{s}")]:
            lines += [
                f'set output "scaling-{tag}-{state}.{ext}"',
                f'set title "Cost against loop length, {arch} {config}, tracepoint {state}, {acc}"',
                'set xlabel "N (calls per timed loop)"', f'set ylabel "{unit} per timed loop (fastest repetition)"',
                "set logscale xy", "set autoscale xy", "set xtics auto norotate", "set key top left",
                f'lines = "{" ".join(meta["scaling"][f"{tag}-{state}"])}"',
                # A colour, marker and dash per line: 8 colours, 14 markers, a new dash
                # after 8 lines, so that no two of up to 16 variants look alike.
                f'plot for [i=0:{len(meta["scaling"][f"{tag}-{state}"]) - 1}] '
                f'"scaling-{tag}-{state}.dat" index i using 1:2 with linespoints '
                f'lt (101 + i) title word(lines, i + 1)',
                "unset logscale xy", f"set xtics ({xtics}) rotate by -30",
            ]
    return "\n".join(lines) + "\n"


def titled(script_text: str, profile: str | None) -> str:
    """Every figure's title names the build profile its kernels were built with."""
    if not profile:
        return script_text
    return re.sub(r'^(set title "|set multiplot layout \S+ title ")',
                  rf"\g<1>{profile} build: ", script_text, flags=re.M)


def render(samples: pd.DataFrame, summary: pd.DataFrame, outdir: Path,
           profile: str | None = None) -> list[Path]:
    """Per-panel plots of the guest runs; each title names the build `profile`. The .dat
    files and the script (plots.gp) stay beside the PNGs: `gnuplot plots.gp` there draws
    them again."""
    with disk.writing(outdir):
        outdir.mkdir(parents=True, exist_ok=True)
    meta = write_data(stats.guest(samples), stats.guest(summary), outdir)
    text = script(meta, "pngcairo size 900,560 font 'sans,10'", "png")
    disk.write_atomically(outdir / "plots.gp", titled(text, profile))
    with disk.writing(outdir):
        proc = subprocess.run(["gnuplot", "plots.gp"], cwd=outdir, capture_output=True,
                              text=True)
    if proc.returncode != 0:
        raise Failure(f"gnuplot could not draw the plots in {outdir}: {proc.stderr.strip()}; "
                      f"{disk.where_words(outdir)}")
    made = []
    for arch, config, _, _ in meta["panels"]:
        tag = f"{arch}-{config}"
        made += [f"percall-{tag}"] + [f"scaling-{tag}-{s}" for s in matrix.STATES
                                      if meta["scaling"].get(f"{tag}-{s}")]
    return [outdir / f"{name}.png" for name in made]
