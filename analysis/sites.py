"""The disabled site's cost per call, and what the disassembly says it executes.

A site's cost is its trace loop minus the same loop without the site
(`c_base`, `rust_base`): the loops differ only by the site, so the difference
is the site's own, NOP included, on every architecture. Pure functions over
the summary (analysis.stats) and the disabled paths (analysis.codegen).
"""

from collections import Counter

import pandas as pd

from analysis import stats

# What a reader compares: C's site, Rust's site, and Rust calling an out-of-line C helper.
SITES = (("C trace_<name>()", "c_trace"), ("Rust declare_trace!", "rust_trace"),
         ("Rust -> C helper", "rust_helper"))


def site_costs(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (arch, config, accel, site) with the tracepoint off: cost, CI, unit."""
    rows = []
    for label, variant in SITES:
        part = stats.rows(summary, variant=variant, state="disabled")
        for r in part.itertuples():
            if pd.isna(r.net):
                continue
            rows.append(dict(arch=r.arch, config=r.config, accel=r.accel, site=label,
                             variant=variant, baseline=r.baseline, cost=r.net, lo=r.net_lo,
                             hi=r.net_hi, noise=r.noise, unit=r.unit))
    return pd.DataFrame(rows, columns=["arch", "config", "accel", "site", "variant",
                                       "baseline", "cost", "lo", "hi", "noise", "unit"])


def _matchable(word: str) -> str:
    """Conditional branches stand for each other when they go the same way (GCC writes `je`
    where the base loop has `jae`, LLVM `jne` for `jb`); everything else is itself."""
    mnemonic = word.split()[0]
    # x86's jcc; not jmp, nor riscv's jal/jalr (calls).
    if mnemonic.startswith("b.") or (mnemonic.startswith("j")
                                     and mnemonic not in ("jmp", "jal", "jalr")):
        return ("conditional branch (taken)" if word.endswith("(taken)")
                else "conditional branch (not taken)")
    return word


def path_words(paths: list[list[str]]) -> dict[str, list[str]]:
    """variant -> the instructions of its disabled path, from the rows of a
    paths-<arch>-<config>.tsv (variant, count, instructions)."""
    return {row[0]: row[2].split("; ") for row in paths if len(row) == 3}


def site_instructions(paths: list[list[str]], variant: str, baseline: str) -> list[str] | None:
    """What the variant's disabled path runs beyond its baseline's: the multiset difference
    of the two paths (conditional branches named by direction, as the two compilers pick
    different conditions for the same loop test), in path order. None when a path is
    missing; "minus ..." for what only the baseline runs."""
    by_variant = path_words(paths)
    if variant not in by_variant or baseline not in by_variant:
        return None
    mine = [_matchable(w) for w in by_variant[variant]]
    base = [_matchable(w) for w in by_variant[baseline]]
    extra = Counter(mine) - Counter(base)
    out = []
    # From the end: a loop's own test comes first in GCC's loops, the site's after it.
    for word in reversed(mine):
        if extra[word] > 0:
            extra[word] -= 1
            out.insert(0, f"`{word}`" if "branch" not in word else
                       f"a {word.split(' (')[1].rstrip(')')} conditional branch")
    missing = Counter(base) - Counter(mine)
    return out + [f"minus `{w}`" for w in missing.elements()]


def _unroll(count: str) -> int:
    """The unroll factor in a paths row's count field: "51" or "12 (24 per trip, unrolled 2
    times)"."""
    words = count.split()
    return int(words[words.index("unrolled") + 1]) if "unrolled" in words else 1


def taken_branches(paths: list[list[str]], variant: str, baseline: str) -> float | None:
    """The branches a variant's disabled path takes per loop iteration beyond its baseline's:
    what an instruction count cannot see (a taken branch redirects fetch; a NOP or a branch
    that falls through does not). None when a path is missing."""
    rows = {row[0]: row for row in paths if len(row) == 3}
    if variant not in rows or baseline not in rows:
        return None

    def per_iteration(row: list[str]) -> float:
        return sum(w.endswith("(taken)") for w in row[2].split("; ")) / _unroll(row[1])
    return per_iteration(rows[variant]) - per_iteration(rows[baseline])


def argument_loads(paths: list[list[str]], variant: str, baseline: str, bare: str,
                   bare_baseline: str | None) -> int | None:
    """The loads a site's disabled path runs beyond its baseline, less those the bare site of
    the same language runs beyond its own (the key's count without jump labels): the
    arguments read while the event is off (arm's literal loads are addresses, not
    arguments: codegen.literal_load). None when a path is missing."""
    added = site_instructions(paths, variant, baseline)
    bare_added = None if bare_baseline is None else site_instructions(paths, bare, bare_baseline)
    if added is None or bare_added is None:
        return None
    return sum("(load)" in w for w in added) - sum("(load)" in w for w in bare_added)


def within_noise(cost: float, lo: float, hi: float, noise: float) -> bool:
    """True when the interval of a cost lies inside +-noise of zero."""
    return -noise <= lo and hi <= noise


def cost_text(cost: float, lo: float, hi: float, unit: str) -> str:
    ci = "exact" if abs(hi - lo) < 1e-9 else f"CI {stats.number(lo)}..{stats.number(hi)}"
    return f"{stats.quantity(cost, unit)} ({ci})"


def over_placements(costs: pd.DataFrame) -> pd.DataFrame:
    """Native site costs summarised over the placements of .text: a loop's time moves by
    whole clock steps with its alignment, so one placement alone is one draw of that. One
    row per (arch, config, variant): mean, min, max, the kernel placement's value, count."""
    native = costs[[stats.is_native(a) for a in costs.accel]]
    rows = []
    for (arch, config, variant), g in native.groupby(["arch", "config", "variant"], sort=False):
        kernel = g[g.accel == "native"]
        rows.append(dict(arch=arch, config=config, variant=variant, site=g.site.iloc[0],
                         mean=round(g.cost.mean(), stats.DECIMALS), min=g.cost.min(),
                         max=g.cost.max(), kernel=kernel.cost.iloc[0] if len(kernel) else None,
                         placements=len(g), unit=g.unit.iloc[0]))
    return pd.DataFrame(rows, columns=["arch", "config", "variant", "site", "mean", "min", "max",
                                       "kernel", "placements", "unit"])


def compare_placements(costs: pd.DataFrame, arch: str, config: str, a: str, b: str):
    """How a's site compares with b's at each native placement: (more, less, same, smallest
    and largest difference a - b); "same" when the difference is within the two sites' noise.
    None without native rows for both."""
    mine = stats.native(stats.rows(costs, arch=arch, config=config))
    diffs, more, less = [], 0, 0
    for accel, g in mine.groupby("accel"):
        ga, gb = g[g.variant == a], g[g.variant == b]
        if ga.empty or gb.empty:
            continue
        d = ga.cost.iloc[0] - gb.cost.iloc[0]
        noise = ga.noise.iloc[0] + gb.noise.iloc[0]
        diffs.append(d)
        more += d > noise
        less += d < -noise
    if not diffs:
        return None
    return more, less, len(diffs) - more - less, min(diffs), max(diffs)


def extra_words(a: list[str], b: list[str]) -> list[str]:
    """The words of `a` that `b` lacks (a multiset difference that keeps a's order)."""
    remaining = Counter(w.strip("`") for w in b)
    out = []
    for word in a:
        key = word.strip("`")
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            out.append(word)
    return out
