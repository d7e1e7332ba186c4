"""What changed between two runs' verdicts: `make compare RUN=<a> AGAINST=<b>`.

A pure function of two verdict tables (analysis.verdict's rows): exact counts, argument
loads and calls compared as they are; native figures only when their ranges over processes
no longer overlap, since within them a second run of the same code lands anywhere."""

import pandas as pd

from analysis import stats

KEY = ["arch", "config", "profile", "kernel", "variant"]
EXACT = (("instructions_per_site", "instructions per site"),
         ("argument_loads", "argument loads while off"),
         ("calls_while_off", "calls while off"))


def same(a, b) -> bool:
    if pd.isna(a) and pd.isna(b):
        return True
    return a == b


def panel_words(keys) -> list[str]:
    """Rows grouped by their panel (arch, config, profile, kernel): "x86_64 jump_label distro
    series (c_trace, rust_trace)"."""
    panels: dict[tuple, list[str]] = {}
    for key in keys:
        panels.setdefault(tuple(key[:4]), []).append(str(key[4]))
    return [f"{' '.join(map(str, p))} ({', '.join(v)})" for p, v in panels.items()]


def changes(new: pd.DataFrame, old: pd.DataFrame) -> list[str]:
    """One line per difference of `new` against `old`, in the order of `new`'s rows; the
    sites one run has and the other lacks, a line per panel."""
    a, b = new.set_index(KEY), old.set_index(KEY)
    out = []
    for key in a.index.intersection(b.index):
        name = " ".join(str(k) for k in key)
        ra, rb = a.loc[key], b.loc[key]
        for column, words in EXACT:
            if column in ra and column in rb and not same(ra[column], rb[column]):
                out.append(f"{name}: {words} {cell(rb[column])} -> {cell(ra[column])}")
        out += native_change(name, ra, rb)
    out += [f"new: {w}" for w in panel_words(k for k in a.index if k not in b.index)]
    out += [f"gone: {w}" for w in panel_words(k for k in b.index if k not in a.index)]
    return out


def native_change(name: str, ra, rb) -> list[str]:
    """A native figure one row has and the other lacks, or ranges that no longer overlap."""
    has_a, has_b = (pd.notna(r.get("native_min")) for r in (ra, rb))
    if has_a != has_b:
        return [f"{name}: native figure " + (
            f"new ({ra.native_min:.2f}..{ra.native_max:.2f} {ra.native_unit})" if has_a else
            f"gone (was {rb.native_min:.2f}..{rb.native_max:.2f} {rb.native_unit})")]
    if has_a and (ra.native_min > rb.native_max or ra.native_max < rb.native_min):
        return [f"{name}: native {rb.native_min:.2f}..{rb.native_max:.2f} -> "
                f"{ra.native_min:.2f}..{ra.native_max:.2f} {ra.native_unit} "
                "(the ranges over processes no longer overlap)"]
    return []


THUNK_KEY = ["arch", "config", "profile", "kernel", "thunk", "variant"]


def thunk_changes(new: pd.DataFrame, old: pd.DataFrame) -> list[str]:
    """The native figures under each return thunk (thunks.csv): one line per figure one run
    has and the other lacks, or whose ranges over processes no longer overlap. The host
    kernel's own thunk in both runs is `changes`' to tell (verdict.csv's native columns)."""
    a, b = new.set_index(THUNK_KEY), old.set_index(THUNK_KEY)
    out = []
    for key in a.index.union(b.index):
        if all(key not in t.index or str(t.loc[key].host) == "True" for t in (a, b)):
            continue
        name = " ".join(str(k) for k in key[:4] + key[5:])
        ra = a.loc[key] if key in a.index else pd.Series(dtype=object)
        rb = b.loc[key] if key in b.index else pd.Series(dtype=object)
        out += native_change(f"{name} (returns through {key[4]})", ra, rb)
    return out


def cell(x) -> str:
    """A cell of either run: "none" where it has no value, text as it is, a number as the
    report prints it."""
    if x is None or (not isinstance(x, str) and pd.isna(x)):
        return "none"
    if isinstance(x, str):
        return x or "none"
    return stats.fmt(x)
