"""The native page: the module's own code timed on the host CPU, per process and thunk."""

from pathlib import Path

import pandas as pd

from analysis import stats
from analysis.plots import ordered
from analysis.pages.guest import instruction_check
from analysis.stats import fmt
from analysis.words import PAGE_TO_RUN, ci, native_hz, thunk_words


def native_section(run: Path, summary: pd.DataFrame, context: dict) -> list[str]:
    """Instructions (guest) beside native time for every variant with a native measurement,
    at each placement of .text, with the noise threshold and the alignment finding."""
    native = stats.native(summary)
    if native.empty:
        return []
    about = context.get("native_about", {})
    hz = native_hz(context)
    accels = sorted(set(native.accel), key=lambda a: int(a.partition("+")[2] or 0))
    unit = native.unit.iloc[0]
    infos = [i for v in context.get("native", {}).values() for i in v.values()]
    counters = sorted({i["counter"] for i in infos})
    perf = sorted({i.get("perf", "") for i in infos})
    matrix = about.get("matrix", {})
    out = ["## Native: the module's own code on the host CPU", "",
           "The `.text` of each measured x86_64 module, loaded into a host process with its "
           "relocations applied (every key reads disabled; every call out of the module is a "
           "trap, and none was reached)"
           + (" and what the host's kernel writes at load time (the Mitigations list of "
              "[the guest page](guest.md))"
              if about.get("rewrites") else "")
           + f", timed with the same matrix as the guest (N = "
           f"{', '.join(map(str, matrix.get('ns', [])))}; {matrix.get('reps')} repetitions "
           f"after {matrix.get('warmup')} warm-up)"
           + (f", {about['rounds']} times over, in rounds through every module and placement, "
              "with the repetitions of all rounds pooled" if about.get("rounds", 1) > 1 else "")
           + ", pinned to one CPU, between "
           f"`lfence`-ordered TSC reads. Host CPU: {about.get('host_cpu')}; counters: "
           f"{', '.join(counters)} (perf_event_open: {'; '.join(perf)}); unit: **{unit}**"
           + (f", {hz / 1e6:.2f} MHz ({'the host kernel' if about.get('tsc_hz_kernel') else 'calibrated'})"
              if hz else "") + ". "
           "The per-call cost is the slope through the fastest repetition at each N; the noise "
           f"threshold of each placement is the 95% interval of an A/A comparison (`{stats.AA_TWIN}` "
           f"is `{stats.REFERENCE}` timed a second time in the same run).", ""]
    out += instruction_check(run, summary, context)
    if (run / "plots" / "native.png").exists():
        out += [f"![each site per process and placement]({PAGE_TO_RUN}/plots/native.png)", ""]
    for arch, config in stats.panels(native):
        mine = stats.rows(native, arch=arch, config=config, state="disabled")
        guest = stats.rows(stats.guest(summary), arch=arch, config=config, state="disabled")
        head = " | ".join(f"{a} ({'kernel placement' if a == 'native' else '.text ' + a[6:] + ' B'})"
                          for a in accels)
        out += [f"### {arch} {config}, returns as this host's kernel sends them: "
                f"{thunk_words(context, why=False)}", "",
                f"| variant | guest | {head} | spread over placements |",
                "|---|---|" + "---|" * len(accels) + "---|"]
        for variant in ordered(mine.variant):
            g = guest[guest.variant == variant]
            cells = []
            values = []
            for a in accels:
                r = mine[(mine.variant == variant) & (mine.accel == a)]
                if r.empty:
                    cells.append("")
                    continue
                values.append(r.per_call.iloc[0])
                cells.append(f"{r.per_call.iloc[0]:.2f} ({ci(r.ci_lo.iloc[0], r.ci_hi.iloc[0])})")
            gtext = "" if g.empty else f"{fmt(g.per_call.iloc[0])} {g.unit.iloc[0]}"
            spread = f"{max(values) - min(values):.2f}" if values else ""
            out.append(f"| `{variant}` | {gtext} | {' | '.join(cells)} | {spread} |")
        noise = {a: mine[mine.accel == a].noise.iloc[0] for a in accels if (mine.accel == a).any()}
        out += ["", "A/A interval (the 95% interval of the twins' difference, pooled over "
                "processes, per placement; REPORT.md's A/A noise is instead the largest gap "
                "between the twins in any one process): "
                + ", ".join(f"{a} ±{v:.3f}" for a, v in noise.items())
                + f" {unit} per call.", ""]
        out += alignment_finding(mine, noise, unit)
    return out


def alignment_finding(mine: pd.DataFrame, noise: dict, unit: str) -> list[str]:
    """Which variants' per-call cost moves with the placement of .text beyond the noise,
    and whether any site verdict changes with it."""
    moved = []
    for variant in ordered(mine.variant):
        rows = mine[mine.variant == variant]
        if len(rows) < 2:
            continue
        spread = rows.per_call.max() - rows.per_call.min()
        if spread > 2 * max(noise.values()):
            lo, hi = rows.loc[rows.per_call.idxmin()], rows.loc[rows.per_call.idxmax()]
            moved.append(f"`{variant}` by {spread:.2f} ({lo.accel} {lo.per_call:.2f}, "
                         f"{hi.accel} {hi.per_call:.2f})")
    verdicts = {}
    for r in mine[mine.variant.isin(["rust_trace", "rust_helper"])].itertuples():
        kind = next((k for k in ("more", "less", "matches", "within noise") if k in r.verdict),
                    r.verdict)
        verdicts.setdefault(r.variant, set()).add(
            {"more": "costs more", "less": "costs less", "matches": "matches C"}.get(kind, kind))
    text = ("Alignment: " + ("the per-call cost depends on where `.text` sits in its page, "
                             "beyond twice the largest noise threshold, for " + "; ".join(moved)
                             if moved else "no variant's per-call cost moves with the placement "
                             "of `.text` beyond twice the largest noise threshold") + ". ")
    for variant, seen in sorted(verdicts.items()):
        text += (f"`{variant}` against C: {' / '.join(sorted(seen))} across placements. ")
    return [text.strip(), ""]


def thunk_section(thunks: pd.DataFrame) -> list[str]:
    """Every variant's native cost under each return thunk: median (min..max) over processes
    and placements, a column per thunk."""
    out = ["## Under each return thunk", "",
           "Every return of the module sent where a kernel with that mitigation sends it, on "
           "this host's CPU (the thunks' own code: `runner/thunks.py`); the host kernel's own "
           "marked with *. Per call, the site's loop minus its baseline: median (min..max) over "
           "processes and placements; the A/A noise of each thunk's processes last.", ""]
    for (arch, config), mine in thunks.groupby(["arch", "config"], sort=False):
        names = list(dict.fromkeys(mine.thunk))
        host = set(mine[mine.host.astype(str) == "True"].thunk)
        out += [f"### {arch} {config}", "",
                "| variant | " + " | ".join(f"{t}{' *' if t in host else ''}" for t in names)
                + " |", "|---|" + "---:|" * len(names)]
        for variant in ordered(mine.variant.unique()):
            cells = []
            for t in names:
                r = mine[(mine.variant == variant) & (mine.thunk == t)]
                cells.append("" if r.empty else f"{r.native_median.iloc[0]:.2f} "
                             f"({r.native_min.iloc[0]:.2f}..{r.native_max.iloc[0]:.2f})")
            out.append(f"| `{variant}` | " + " | ".join(cells) + " |")
        noise = [mine[mine.thunk == t].native_noise.iloc[0] for t in names]
        out.append("| A/A noise | " + " | ".join("" if pd.isna(n) else f"{n:.2f}" for n in noise)
                   + " |")
        out.append("")
    return out


def process_table(processes: pd.DataFrame, unit: str) -> list[str]:
    """Each native process's cost of each site (the median over its placements of .text):
    the spread a reader's own run may land anywhere in."""
    if processes is None or processes.empty:
        return []
    out = ["## Between processes", "",
           "Each round of the native stage is a new process. Per process, the site's cost "
           f"(its loop minus its baseline, {unit} per call), the median over the placements of "
           "`.text`; then the median and range over every process and placement, as REPORT.md "
           "gives them.", ""]
    rounds = sorted(processes["round"].unique())
    for (arch, config), mine in processes.groupby(["arch", "config"], sort=False):
        out += [f"### {arch} {config}", "",
                "| variant | " + " | ".join(f"process {r + 1}" for r in rounds)
                + " | median | range |", "|---|" + "---:|" * (len(rounds) + 2)]
        for variant in ordered(mine.variant.unique()):
            g = mine[mine.variant == variant]
            per = g.groupby("round").cost.median()
            out.append(f"| `{variant}` | " + " | ".join(
                f"{round(per[r], 2) + 0.0:.2f}" if r in per else "" for r in rounds)
                + f" | {round(g.cost.median(), 2) + 0.0:.2f} | {g.cost.min():.2f}.."
                f"{g.cost.max():.2f} |")
        out.append("")
    return out
