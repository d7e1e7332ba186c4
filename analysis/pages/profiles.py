"""The profiles page: each further build profile beside the run's own."""

from analysis import sites, stats
from analysis.load import Analysed
from analysis.stats import fmt
from analysis.words import PAGE_TO_RUN, counted_words, profile_words


# The site kinds the profiles are compared on: C's and Rust's site of each, and the helper.
SITE_KINDS = (("one argument", ("c_trace", "rust_trace", "rust_helper")),
              ("driver-like, three fields", ("c_txn", "rust_txn", "rust_txn_lazy")),
              ("16 sites in a row", ("c_dense", "rust_dense")))


def profiles_section(main: "Analysed", other: "Analysed") -> list[str]:
    """Each site kind's disabled cost in two build profiles side by side, with the
    instructions that differ, read from both disassemblies."""
    rel = PAGE_TO_RUN / other.run.relative_to(main.run)
    a, b = main.profile, other.profile
    out = [f"## Built for size: profile {b} beside {a}" if b == "tiny" else
           f"## Profile {b} beside {a}", "",
           f"The same series, module and sources, built as {profile_words(other.context)}, "
           f"run in the same `make bench` (its run directory: [`{rel}`]({rel}/context.json)). "
           "Disabled, per call, net of each loop's baseline (the site's own cost); the last "
           "two columns name what one iteration runs in one profile's disassembly and not in "
           "the other's (the whole loop, site and loop code together, since the loop around "
           "a site is compiled differently too).", "",
           f"| arch | config | site kind | variant | {a} | {b} | only in {a} | only in {b} |",
           "|---|---|---|---|---:|---:|---|---|"]
    sentences = []
    for arch, config in stats.panels(main.summary):
        theirs = stats.rows(other.summary, arch=arch, config=config, state="disabled")
        if theirs.empty:
            continue
        mine = stats.rows(main.summary, arch=arch, config=config, state="disabled")
        paths_a = sites.path_words(main.paths.get(f"{arch}-{config}", []))
        paths_b = sites.path_words(other.paths.get(f"{arch}-{config}", []))
        costs = {}
        for kind, variants in SITE_KINDS:
            for v in variants:
                ra, rb = mine[mine.variant == v], theirs[theirs.variant == v]
                if ra.empty or rb.empty:
                    continue
                costs[v] = (ra.net.iloc[0], rb.net.iloc[0])
                only_a = only_b = "(no disassembly)"
                if v in paths_a and v in paths_b:
                    only_a = counted_words([f"`{w}`" for w in
                                            sites.extra_words(paths_a[v], paths_b[v])]) or "-"
                    only_b = counted_words([f"`{w}`" for w in
                                            sites.extra_words(paths_b[v], paths_a[v])]) or "-"
                out.append(f"| {arch} | {config} | {kind} | `{v}` | {fmt(costs[v][0])} | "
                           f"{fmt(costs[v][1])} | {only_a} | {only_b} |")
        words = [f"{what}: C {fmt(costs[c][0])}, Rust {fmt(costs[r][0])} in {a}; "
                 f"C {fmt(costs[c][1])}, Rust {fmt(costs[r][1])} in {b}"
                 for what, c, r in (("one site", "c_trace", "rust_trace"),
                                    ("driver-like site", "c_txn", "rust_txn"),
                                    ("16 sites", "c_dense", "rust_dense"))
                 if c in costs and r in costs]
        if words:
            sentences.append(f"- **{arch} {config}** ({main.summary.unit.iloc[0]} per call): "
                             + "; ".join(words) + ".")
    return out + [""] + sentences + [""]
