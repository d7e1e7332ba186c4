"""The paths page: what each disabled path runs, explained from the disassembly."""

import pandas as pd

from analysis import sites, stats
from analysis.stats import fmt


def explained(paths: dict[str, list[list[str]]], summary: pd.DataFrame) -> list[str]:
    """Each disabled per-call cost beside the instructions the disassembly says one
    iteration runs; the two counts are compared by `make codegen`."""
    if not paths:
        return []
    out = ["## The disabled path, instruction by instruction", "",
           "What one loop iteration executes with the tracepoint off, walked in the "
           "disassembly of the measured module (calls followed into the module's own "
           "functions). Under icount the measured cost must equal the count.", ""]
    for arch, config in stats.panels(summary):
        if f"{arch}-{config}" not in paths:
            continue
        out += [f"| {arch} {config} | measured | counted | instructions |", "|---|---:|---:|---|"]
        for variant, count, text in paths[f"{arch}-{config}"]:
            r = stats.rows(summary, arch=arch, config=config, state="disabled", variant=variant)
            measured = fmt(r.per_call.iloc[0]) if len(r) else ""
            out.append(f"| `{variant}` | {measured} | {count} | {text} |")
        out.append("")
    return out


def explain_pair(costs: pd.DataFrame, spread: pd.DataFrame, arch: str, config: str,
                 path_rows) -> str:
    """A sentence on why instructions and native time agree or differ for C's and Rust's
    sites: the instructions each site adds to its loop (from the disassembly), its native
    time over the placements (`spread`, sites.over_placements of `costs`), and how the two
    sites compare at each placement."""
    words, added = [], {}
    for label, variant in sites.SITES[:2]:
        part = stats.rows(costs, arch=arch, config=config, variant=variant)
        guest = part[[not stats.is_native(a) for a in part.accel]]
        if guest.empty:
            continue
        g = guest.iloc[0]
        added[variant] = sites.site_instructions(path_rows or [], variant, g.baseline) or []
        what = f" ({', '.join(added[variant])})" if added[variant] else ""
        text = f"{label} adds {stats.quantity(g.cost, g.unit)}{what}"
        n = stats.rows(spread, arch=arch, config=config, variant=variant)
        if len(n):
            n = n.iloc[0]
            text += (f", natively {stats.measured(n['mean'])} {n.unit} on average over "
                     f"{n.placements} placements ({stats.measured(n['min'])}.."
                     f"{stats.measured(n['max'])}"
                     + (", not distinguishable from zero" if n["min"] <= 0 <= n["max"] else "")
                     + ")")
        words.append(text)
    if not words:
        return ""
    sentence = "; ".join(words) + "."
    cmp = sites.compare_placements(costs, arch, config, "c_trace", "rust_trace")
    if cmp:
        more, less, same, lo, hi = cmp
        unit = costs[costs.accel == "native"].unit.iloc[0]
        sentence += (f" Natively C's site costs more than Rust's at {more} of the "
                     f"{more + less + same} placements, less at {less}, the same within the "
                     f"noise at {same} (C minus Rust: {stats.measured(lo)}..{stats.measured(hi)} "
                     f"{unit}).")
    if len(added) == 2:
        c_only = sites.extra_words(added["c_trace"], added["rust_trace"])
        rust_only = sites.extra_words(added["rust_trace"], added["c_trace"])
        if c_only and not rust_only:
            sentence += f" In the disassembly, C's site runs {', '.join(c_only)} more than Rust's."
        elif rust_only and not c_only:
            sentence += f" In the disassembly, Rust's site runs {', '.join(rust_only)} more than C's."
        elif c_only:
            sentence += (f" In the disassembly, C's site runs {', '.join(c_only)} that Rust's "
                         f"does not, and Rust's {', '.join(rust_only)} that C's does not.")
        else:
            sentence += " In the disassembly both sites run the same instructions."
    return sentence
