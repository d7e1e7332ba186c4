"""Plots with gnuplot (pngcairo and svg): data files plus a script, run once per format."""

import subprocess
from pathlib import Path

import pandas as pd

from analysis import stats

VARIANT_ORDER = ["c_empty", "rust_empty", "c_trace", "rust_trace", "rust_helper", "rust_load",
                 "rust_count_call"]


def ordered(variants) -> list[str]:
    return [v for v in VARIANT_ORDER if v in set(variants)] + \
        sorted(v for v in set(variants) if v not in VARIANT_ORDER)


def unit_label(unit: str) -> str:
    return f"{unit} per call"


def write_data(samples: pd.DataFrame, summary: pd.DataFrame, outdir: Path) -> dict:
    """Writes the .dat files the scripts read; returns what the scripts need to know."""
    outdir.mkdir(parents=True, exist_ok=True)
    configs = sorted(summary.config.unique())
    variants = ordered(summary.variant.unique())
    for config in configs:
        with open(outdir / f"percall-{config}.dat", "w") as f:
            f.write("# index variant disabled lo hi enabled lo hi\n")
            for i, v in enumerate(variants):
                cells = [str(i), v]
                for state in ("disabled", "enabled"):
                    r = summary[(summary.config == config) & (summary.variant == v)
                                & (summary.state == state)]
                    cells += (["NaN"] * 3 if r.empty else
                              [f"{r.per_call.iloc[0]:.4f}", f"{r.ci_lo.iloc[0]:.4f}",
                               f"{r.ci_hi.iloc[0]:.4f}"])
                f.write(" ".join(cells) + "\n")
        for state in ("disabled", "enabled"):
            with open(outdir / f"scaling-{config}-{state}.dat", "w") as f:
                for v in variants:
                    g = samples[(samples.config == config) & (samples.variant == v)
                                & (samples.state == state) & (samples.n > 0)]
                    f.write(f'# "{v}"\n')
                    for n, cycles in g.groupby("n").cycles.median().items():
                        f.write(f"{n} {cycles}\n")
                    f.write("\n\n")
            with open(outdir / f"box-{config}-{state}.dat", "w") as f:
                for i, v in enumerate(variants):
                    g = stats.samples_of(samples, (config, samples.accel.iloc[0], v, state))
                    for value in stats.per_call_samples(g):
                        f.write(f"{i} {value:.6f}\n")
    return {"configs": configs, "variants": variants}


def script(meta: dict, outdir: Path, accel: str, unit: str, term: str, ext: str) -> str:
    variants = meta["variants"]
    xtics = ", ".join(f'"{v}" {i}' for i, v in enumerate(variants))
    acc = "TCG -icount (instructions)" if accel == "tcg" else f"{accel.upper()} (cycles)"
    names = " ".join(variants)
    lines = [f"set terminal {term} noenhanced", "set grid ytics", "set key top left",
             f'names = "{names}"',
             "set style fill solid 0.5 border -1", f"set xtics ({xtics}) rotate by -30"]
    for config in meta["configs"]:
        lines += [
            f'set output "percall-{config}.{ext}"',
            f'set title "Per-call cost by variant, x86_64 {config}, {acc}"',
            'set xlabel "variant"', f'set ylabel "{unit_label(unit)}"',
            "set yrange [0:*]", "set xrange [-0.6:%f]" % (len(variants) - 0.4),
            "set boxwidth 0.35",
            f'plot "percall-{config}.dat" using ($1-0.18):3 with boxes title "tracepoint disabled", '
            f'"" using ($1-0.18):3:4:5 with yerrorbars lc rgb "black" pt 0 notitle, '
            f'"" using ($1+0.18):6 with boxes title "tracepoint enabled", '
            f'"" using ($1+0.18):6:7:8 with yerrorbars lc rgb "black" pt 0 notitle',
        ]
        for state in ("disabled", "enabled"):
            lines += [
                f'set output "scaling-{config}-{state}.{ext}"',
                f'set title "Cost against loop length, x86_64 {config}, tracepoint {state}, {acc}"',
                'set xlabel "N (calls per timed loop)"', f'set ylabel "{unit} per timed loop (median)"',
                "set logscale xy", "set autoscale xy", "set xtics auto norotate", "set key top left",
                f'plot for [i=0:{len(variants) - 1}] "scaling-{config}-{state}.dat" '
                f'index i using 1:2 with linespoints title word(names, i + 1)',
                "unset logscale xy",
                f"set xtics ({xtics}) rotate by -30",
                f'set output "box-{config}-{state}.{ext}"',
                f'set title "Samples at the largest N divided by N, x86_64 {config}, tracepoint {state}, {acc}"',
                'set xlabel "variant"', f'set ylabel "{unit_label(unit)}"',
                "set xrange [-0.6:%f]" % (len(variants) - 0.4), "set yrange [0:*]",
                "set style data boxplot", "set boxwidth 0.5",
                f'plot for [i=0:{len(variants) - 1}] "box-{config}-{state}.dat" '
                f'using (i):($1 == i ? $2 : NaN) notitle lc i + 1',
            ]
    return "\n".join(lines) + "\n"


def render(samples: pd.DataFrame, summary: pd.DataFrame, outdir: Path, accel: str, unit: str) -> list[Path]:
    meta = write_data(samples, summary, outdir)
    made = []
    for term, ext in (("pngcairo size 900,560 font 'sans,10'", "png"), ("svg size 900,560", "svg")):
        text = script(meta, outdir, accel, unit, term, ext)
        (outdir / f"plots-{ext}.gp").write_text(text)
        # Relative names, run from the plot directory: the scripts hold no host paths.
        subprocess.run(["gnuplot", f"plots-{ext}.gp"], cwd=outdir, check=True,
                       capture_output=True, text=True)
        made += sorted(outdir.glob(f"*.{ext}"))
    return made
