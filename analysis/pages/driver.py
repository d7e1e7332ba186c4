"""The driver page: arguments read from a driver's structure, with the event off."""

from pathlib import Path

import pandas as pd

from analysis import sites, stats
from analysis.stats import fmt


# The sites of the driver-like event, each beside the bare site of its language.
ARGUMENT_SITES = (("C", "c_txn", "c_trace"), ("Rust", "rust_txn", "rust_trace"),
                  ("Rust, `if tpbench_txn_enabled()`", "rust_txn_lazy", "rust_trace"))


def arguments_section(run: Path, summary: pd.DataFrame, paths: dict, rel: Path) -> list[str]:
    """With the event off, do a site's argument loads stay off the disabled path? Exact
    instruction counts under icount: the site of `tpbench_txn(t, t->id, t->flags, t->size)`
    against the bare `tpbench_hit(i)` site of the same language, and what it runs beyond
    its baseline in the disassembly."""
    guest = stats.rows(summary, accel="tcg", state="disabled")
    if not guest.variant.isin([v for _, v, _ in ARGUMENT_SITES]).any():
        return []
    out = ["## Arguments read from a driver's structure", "",
           "`c_txn` and `rust_txn` walk 16 transactions and fire `tpbench_txn(t, t->id, "
           "t->flags, t->size)`: three arguments loaded through the pointer, the pointer the "
           "fourth, as a driver's event reads its transaction. Their baselines walk the same "
           "array without the site. If the compiler loads the arguments before it tests the "
           "key, every call pays for the loads while the event is off; if it sinks them into "
           "the enabled block, the site costs what the one-argument `tpbench_hit` site costs. "
           + ("`rust_txn_lazy` writes the Rust site as `if tpbench_txn_enabled() { "
              "call_tpbench_txn(...) }` (the series' patch 8: the key test, then the call "
              "without a second test; on mainline the module writes the same key test itself "
              "and calls `tpbench_txn()`): its arguments are inside the `if`, so no compiler "
              "may read them first. " if guest.variant.eq("rust_txn_lazy").any() else "")
           + "Per call with the event off, under TCG -icount (instructions, exact):", "",
           *([f"![disabled sites as drivers write them]({rel}/plots/driver.png)", ""]
             if (run / "plots" / "driver.png").exists() else []),
           "| arch | config | language | site with 4 arguments | bare site (`tpbench_hit`) | "
           "argument loads on the disabled path | what the site runs beyond its baseline "
           "(disassembly) |",
           "|---|---|---|---:|---:|---|---|"]
    leaks: dict[str, list[int]] = {}
    for arch, config in stats.panels(guest):
        mine = stats.rows(guest, arch=arch, config=config)
        path_rows = paths.get(f"{arch}-{config}") or []
        for language, variant, bare in ARGUMENT_SITES:
            site, plain = (stats.rows(mine, variant=v) for v in (variant, bare))
            if site.empty or pd.isna(site.net.iloc[0]):
                continue
            base_cost = None if plain.empty or pd.isna(plain.net.iloc[0]) else plain.net.iloc[0]
            added = sites.site_instructions(path_rows, variant, site.baseline.iloc[0])
            loads = sites.argument_loads(path_rows, variant, site.baseline.iloc[0], bare,
                                         None if plain.empty else plain.baseline.iloc[0])
            leaked = ("" if loads is None else f"**{loads}**" if loads > 0 else "none")
            if loads is not None:
                leaks.setdefault(variant, []).append(loads)
            out.append(f"| {arch} | {config} | {language} | {fmt(site.net.iloc[0])} | "
                       f"{fmt(base_cost)} | {leaked} | {', '.join(added) if added else ''} |")
    out += ["", "The loads counted are those the site runs beyond the bare site's (whose "
            "own load, without jump labels, is the key's count): loads of the arguments that "
            "the compiler placed before the test of the key, so that every call pays for them "
            "while the event is off.", ""]
    return out + advice_on_arguments(leaks)


def advice_on_arguments(leaks: dict[str, list[int]]) -> list[str]:
    """What a driver author should write, from the argument loads each Rust form left on the
    disabled paths measured."""
    plain, lazy = leaks.get("rust_txn", []), leaks.get("rust_txn_lazy", [])
    if not plain or not lazy:
        return []
    if max(lazy) > 0:
        return [f"**`rust_txn_lazy` still loads arguments on {sum(n > 0 for n in lazy)} of "
                f"{len(lazy)} disabled paths**: the `if` form did not keep them off.", ""]
    return [f"What to write: `rust_txn` loads its arguments on the disabled path in "
            f"{sum(n > 0 for n in plain)} of the {len(plain)} kernels measured, "
            f"`rust_txn_lazy` in none. A Rust site whose arguments are read from memory or "
            "computed belongs inside `if <event>_enabled()`; one whose arguments are already "
            "in registers (as `tpbench_hit(i)`) costs the same in either form.", ""]
