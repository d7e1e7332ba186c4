"""What changed between two runs' verdicts: `make compare RUN=<a> AGAINST=<b>`.

A pure function of two verdict tables (analysis.verdict's rows): exact counts, argument
loads and calls compared as they are; native figures only when their ranges over processes
no longer overlap, since within them a second run of the same code lands anywhere."""

import pandas as pd

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
                out.append(f"{name}: {words} {fmt(rb[column])} -> {fmt(ra[column])}")
        if all(pd.notna(r.get(c)) for r in (ra, rb) for c in ("native_min", "native_max")):
            if ra.native_min > rb.native_max or ra.native_max < rb.native_min:
                out.append(f"{name}: native {rb.native_min:.2f}..{rb.native_max:.2f} -> "
                           f"{ra.native_min:.2f}..{ra.native_max:.2f} {ra.native_unit} "
                           "(the ranges over processes no longer overlap)")
    out += [f"new: {w}" for w in panel_words(k for k in a.index if k not in b.index)]
    out += [f"gone: {w}" for w in panel_words(k for k in b.index if k not in a.index)]
    return out


def fmt(x) -> str:
    if x is None or (not isinstance(x, str) and pd.isna(x)):
        return "none"
    if isinstance(x, str):
        return x or "none"
    return f"{x:g}"
