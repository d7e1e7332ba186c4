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
        part = summary[(summary.variant == variant) & (summary.state == "disabled")]
        for r in part.itertuples():
            if pd.isna(r.net):
                continue
            rows.append(dict(arch=r.arch, config=r.config, accel=r.accel, site=label,
                             variant=variant, baseline=r.baseline, cost=r.net, lo=r.net_lo,
                             hi=r.net_hi, noise=r.noise, unit=r.unit))
    return pd.DataFrame(rows, columns=["arch", "config", "accel", "site", "variant",
                                       "baseline", "cost", "lo", "hi", "noise", "unit"])


def site_instructions(paths: list[list[str]], variant: str, baseline: str) -> list[str] | None:
    """The instructions the variant's disabled path runs beyond its baseline's (a multiset
    difference of the two paths' mnemonics), or None when a path is missing."""
    by_variant = {row[0]: row[2].split("; ") for row in paths if len(row) == 3}
    if variant not in by_variant or baseline not in by_variant:
        return None
    remaining = Counter(by_variant[baseline])
    out = []
    for word in by_variant[variant]:
        if remaining[word] > 0:
            remaining[word] -= 1
        else:
            out.append(f"`{word}`")
    return out + [f"minus `{word}`" for word in remaining.elements()]


def within_noise(cost: float, lo: float, hi: float, noise: float) -> bool:
    """True when the interval of a cost lies inside +-noise of zero."""
    return -noise <= lo and hi <= noise


def cost_text(cost: float, lo: float, hi: float, unit: str) -> str:
    ci = "exact" if abs(hi - lo) < 1e-9 else f"CI {stats.number(lo)}..{stats.number(hi)}"
    return f"{stats.quantity(cost, unit)} ({ci})"
