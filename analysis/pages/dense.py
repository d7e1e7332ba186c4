"""The dense page: many sites of one event in one function."""

from collections import Counter

import pandas as pd

from analysis import sites, stats
from analysis.stats import fmt
from common import matrix


# One site against sixteen in a row, per language.
DENSE_SITES = (("C", "c_trace", "c_dense"), ("Rust", "rust_trace", "rust_dense"))


def per_site_words(added: list[str], sites: int) -> str:
    """What each of `sites` identical sites runs: the instructions of the path difference
    that occur at least once per site, counted per site (what occurs less often is the
    loop's own shape, which the compilers change around many sites)."""
    # x86's sites are 2-byte or 5-byte NOPs, as objtool left them: one kind of word.
    nops = sorted({w.split()[0].strip("`") for w in added if "(NOP site)" in w})
    counts = Counter(f"the NOP site (`{'`, `'.join(nops)}`)" if "(NOP site)" in w else w
                     for w in added)
    return ", ".join(f"{fmt(n / sites)} x {w}" if n != sites else w
                     for w, n in counts.items() if n >= sites)


def density_section(summary: pd.DataFrame, paths: dict, profile: str) -> list[str]:
    """A site alone against one of 16 in a row, with the event off (exact, under icount)."""
    guest = stats.rows(summary, accel="tcg", state="disabled")
    rows = []
    for arch, config in stats.panels(guest):
        mine = stats.rows(guest, arch=arch, config=config)
        for language, single, dense in DENSE_SITES:
            one, many = (stats.rows(mine, variant=v) for v in (single, dense))
            if many.empty or pd.isna(many.net.iloc[0]):
                continue
            count = matrix.BY_NAME[dense].sites
            added = sites.site_instructions(paths.get(f"{arch}-{config}") or [], dense,
                                            many.baseline.iloc[0])
            rows.append(f"| {arch} | {config} | {language} | "
                        f"{fmt(one.net.iloc[0]) if len(one) else ''} | "
                        f"{fmt(many.net.iloc[0] / count)} | "
                        f"{per_site_words(added, count) if added else ''} |")
    if not rows:
        return []
    return ["## Many sites in one function", "",
            "`c_dense` and `rust_dense` run 16 `tpbench_hit` sites in a row per iteration. "
            "Per site, with the event off, against a site alone (instructions per call, "
            "exact; net of the loop without sites):", "",
            "| arch | config | language | a site alone | each of 16 sites | what each of the "
            "16 runs (disassembly) |", "|---|---|---|---:|---:|---|", *rows, "",
            "The last column leaves out what occurs less than once per site: the loop's own "
            "test, which the compilers lay out differently around many sites. "
            + ("Where C's dense sites run a `call`, GCC (at -Os: this run's build profile "
               f"{profile}) stopped inlining `trace_tpbench_hit()` in a file that calls it 16 "
               "times and calls one out-of-line copy instead, whose NOP is the site; "
               if any("`call`" in r for r in rows) else
               f"GCC (build profile {profile}) inlines `trace_tpbench_hit()` at all 16 sites; ")
            + "`declare_trace!` is `#[inline(always)]`, so each Rust site stays inline.", ""]
