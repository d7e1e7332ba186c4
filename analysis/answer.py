"""REPORT.md: the answer first, on a few screens, from a run's verdict table.

Everything here is a pure function of the verdict rows (analysis.verdict), the run's
context and the names of the detail pages written beside it; the details themselves are
analysis.report's pages.
"""

import os
from pathlib import Path

import pandas as pd

from analysis.stats import fmt
from analysis.report import PAGES
from analysis.load import kernel_of, profile_of
from analysis.pages import clang as clang_page
from analysis.pages.method import reproduce_command
from analysis.verdict import cell
from analysis.words import PAGES_DIR, SHORT, native_of, native_words, thunk_label, tool_words
from kelf.rewrites import THUNKS

CONFIGS = (("jump_label", "with jump labels"), ("no_jump_label", "without jump labels"))




def and_list(words: list[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def plural(n, word: str) -> str:
    return f"{fmt(n)} {word}" + ("" if n == 1 else "s")


def archs_of(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table.arch))


def build_words(kernel: str, profile: str) -> str:
    """"built tiny", "mainline", "mainline built tiny": a kernel and build beside the
    series' distro one."""
    return " ".join(w for w in (kernel if kernel != "series" else "",
                                f"built {profile}" if profile != "distro" else "") if w)


def c_against_rust(main: pd.DataFrame, config: str, words: str,
                   table: pd.DataFrame | None = None) -> str:
    """One sentence: where Rust's bare site costs what C's does, and where not, in the run's
    own kernel and build; then each other kernel and build of `table` where a site costs
    otherwise, so that the sentence holds for every row the site table shows."""
    same, differ = {}, []
    for arch in archs_of(main):
        c, r = (cell(main, arch=arch, config=config, variant=v) for v in ("c_trace", "rust_trace"))
        if c is None or r is None:
            continue
        if c == r:
            same.setdefault(c, []).append(arch)
        else:
            differ.append(f"on {arch} Rust's runs {fmt(r)} and C's {fmt(c)}")
    if not same and not differ:
        return ""
    parts = [f"{plural(n, 'instruction')} each on {and_list(a)}" for n, a in same.items()]
    text = f"{words}: " + "; ".join(parts + differ)
    others: dict[tuple, list[str]] = {}
    first = main.iloc[0]
    rest = (table[(table.kernel != first.kernel) | (table.profile != first.profile)]
            if table is not None else main.iloc[:0])
    for (kernel, profile), g in rest.groupby(["kernel", "profile"], sort=False):
        for arch in archs_of(g):
            c, r = (cell(g, arch=arch, config=config, variant=v) for v in ("c_trace", "rust_trace"))
            if c is None or r is None:
                continue
            mc, mr = (cell(main, arch=arch, config=config, variant=v)
                      for v in ("c_trace", "rust_trace"))
            if (c, r) != (mc, mr):
                others.setdefault((build_words(kernel, profile), c, r), []).append(arch)
    if others:
        text += f" ({first.kernel}, built {first.profile}); " + "; ".join(
            f"{w}, C's runs {fmt(c)} and Rust's {fmt(r)} on {and_list(a)}"
            for (w, c, r), a in others.items())
    return text + "."


def helper_sentence(main: pd.DataFrame, thunks: pd.DataFrame, host: str | None,
                    refused: str | None, table: pd.DataFrame | None = None) -> str:
    helper = main[main.variant == "rust_helper"]
    if helper.empty:
        return ""
    every = table[table.variant == "rust_helper"] if table is not None else helper
    native = helper[helper.native_median.notna()]
    sites = main[main.variant.isin(["c_trace", "rust_trace"]) & main.native_median.notna()]
    text = (f"**A Rust driver that calls an out-of-line C helper pays a call on every event "
            f"while tracing is off:** {fmt(every.instructions_per_site.min())} to "
            f"{fmt(every.instructions_per_site.max())} instructions per event, on every "
            "architecture, config, kernel and build measured")
    if not native.empty:
        r = native[native.config == "jump_label"].iloc[0] if (native.config == "jump_label").any() \
            else native.iloc[0]
        site = sites[sites.config == r.config]
        text += (f"; natively on x86_64 ({SHORT[r.config]}), returning as this host's kernel "
                 f"does ({thunk_label(host)}), {native_words(r)} {r.native_unit} per event "
                 f"over {r.native_processes} processes and every placement")
        words = {s.language: native_words(s) for s in site.itertuples()}
        if words and all("not resolved" in w for w in words.values()):
            bound = max(float(w.split()[1].rstrip(",")) for w in words.values())
            text += f", where C's and Rust's own sites are not resolved (< {bound:.2f} each)"
        elif words:
            text += "; " + ", ".join(f"{who}'s own site {w}" for who, w in words.items())
        config = r.config
    else:
        config = "jump_label"
        if refused:
            text += f"; natively on x86_64 not timed as this host's kernel runs it ({refused})"
    through = thunks[(thunks.variant == "rust_helper") & (thunks.config == config)
                     & (thunks.thunk != "ret")]
    if not through.empty:
        lo = through.loc[through.native_median.idxmin()]
        hi = through.loc[through.native_median.idxmax()]
        plain = thunks[(thunks.variant == "rust_helper") & (thunks.config == config)
                       & (thunks.thunk == "ret")]
        forced = ("" if host not in (None, "ret") else
                  " (this host's kernel needs none: each thunk forced on its CPU)")
        text += (f". **A kernel that returns through a thunk makes it dearer**{forced}: "
                 f"{native_words(lo)} with {thunk_label(lo.thunk)} to "
                 f"{native_words(hi)} with {thunk_label(hi.thunk)} {hi.native_unit} per "
                 f"event ({SHORT[config]}, median (range) over processes and placements)"
                 + (f", against {native_words(plain.iloc[0])} with plain `ret`"
                    if not plain.empty else "")
                 + "; " + sites_under_thunks(thunks, config))
    return text + "."


def sites_under_thunks(thunks: pd.DataFrame, config: str) -> str:
    """Whether C's and Rust's own sites stay within the A/A noise under every thunk."""
    mine = thunks[(thunks.config == config) & thunks.variant.isin(["c_trace", "rust_trace"])]
    resolved = [f"{r.variant} with {thunk_label(r.thunk)} {native_words(r)}"
                for r in mine.itertuples() if r.native_min > r.native_noise]
    if mine.empty:
        return "C's and Rust's own sites were not timed through the thunks"
    if not resolved:
        return (f"C's and Rust's own sites are not resolved from the A/A noise under any of "
                f"the {mine.thunk.nunique()} thunks (they have no return)")
    return "resolved from the A/A noise: " + "; ".join(resolved)


def arguments_sentence(main: pd.DataFrame, table: pd.DataFrame | None = None) -> str:
    """Who loads a driver's arguments while the event is off, per language and form: in the
    run's own kernel and build, then over every kernel and build of `table`."""
    def where(rows, variant):
        rows = rows[(rows.variant == variant) & rows.argument_loads.notna()]
        loads = [f"{r.arch} {SHORT[r.config]}" for r in rows.itertuples() if r.argument_loads > 0]
        return rows, loads
    table = main if table is None else table
    rust_rows, rust = where(main, "rust_txn")
    c_rows, c = where(main, "c_txn")
    lazy_rows, lazy = where(main, "rust_txn_lazy")
    if rust_rows.empty:
        return ""
    (all_rust, every_rust), (all_c, every_c), (all_lazy, every_lazy) = (
        where(table, v) for v in ("rust_txn", "c_txn", "rust_txn_lazy"))
    first = main.iloc[0]
    n = int(rust_rows.argument_loads.max())
    scope = f"{first.kernel} {first.profile}"
    text = (f"**Arguments read from a driver's structure:** with the event off, Rust's "
            f"`declare_trace!` function evaluates them before its key test: {n} loads per "
            f"call in {len(rust)} of {len(rust_rows)} {scope} kernels measured"
            + (f" ({len(every_rust)} of {len(all_rust)} over every kernel and build)"
               if len(all_rust) != len(rust_rows) else "")
            + (f"; C's `trace_<event>()` in {len(c)} of {len(c_rows)} ({', '.join(c)})"
               + (f", {len(every_c)} of {len(all_c)} over every kernel and build"
                  if len(all_c) != len(c_rows) else "")
               if c else "; C's in none, its compiler sinks them") + ". ")
    if lazy_rows.empty:
        return text + ("The form that keeps them off, `if <event>_enabled() { ... }` (patch 8), "
                       "is not in this run.")
    return text + ("Written inside `if <event>_enabled() { ... }` (patch 8) the site loads "
                   + (f"none in any of the {len(all_lazy)} kernels measured."
                      if not every_lazy else
                      f"them in {len(every_lazy)} of {len(all_lazy)} ({', '.join(every_lazy)})."))


def mainline_sentence(table: pd.DataFrame, profile: str, series: str, what: str) -> str:
    """Where mainline's sites cost what the series' do, and where they differ and why (the
    functions its disabled path calls)."""
    other = table[(table.kernel == "mainline") & (table.profile == profile)]
    if other.empty or series == "mainline":
        return ""
    mine = table[(table.kernel == series) & (table.profile == profile)]
    same, differ = 0, []
    for r in other[other.variant.isin(["c_trace", "rust_trace"])].itertuples():
        s = cell(mine, arch=r.arch, config=r.config, variant=r.variant)
        if s is None:
            continue
        if s == r.instructions_per_site:
            same += 1
        else:
            calls = f", calling `{r.calls_while_off}()`" if r.calls_while_off else ""
            differ.append(f"{r.arch} {SHORT[r.config]} {r.language} {fmt(s)} -> "
                          f"{fmt(r.instructions_per_site)}{calls}")
    if not same and not differ:
        return ""
    text = (f"**Mainline** ({what}) measured alike: {same} of "
            f"{same + len(differ)} bare sites cost what the series' do")
    return text + ("; " + "; ".join(differ) + "." if differ else ".")


def mainline_series_sentence(table: pd.DataFrame, profile: str) -> str:
    """What patches-mainline-series/ changes for mainline: Rust's bare site and its 16 in a
    row against C's, before and after, where the run measured both kernels; natively x86_64's
    16 in a row."""
    before = table[(table.kernel == "mainline") & (table.profile == profile)]
    after = table[(table.kernel == "mainline-series") & (table.profile == profile)]
    if after.empty or before.empty:
        return ""
    panels = list(dict.fromkeys(zip(after.arch, after.config)))
    changed, equal, dense = [], 0, []
    for arch, config in panels:
        where = dict(arch=arch, config=config)
        c, old, new = (cell(t, variant=v, **where) for t, v in ((after, "c_trace"),
                                                                  (before, "rust_trace"),
                                                                  (after, "rust_trace")))
        if None in (c, old, new):
            continue
        equal += new <= c
        if old != new:
            changed.append(f"{arch} {SHORT[config]} {fmt(old)} -> {fmt(new)} (C's {fmt(c)})")
        taken = [cell(t, "taken_per_site", variant=v, **where)
                 for t, v in ((before, "rust_dense"), (after, "rust_dense"), (after, "c_dense"))]
        if taken[0] != taken[1] and None not in taken:
            dense.append(f"{arch} {SHORT[config]} {fmt(taken[0])} -> {fmt(taken[1])} "
                         f"(C's {fmt(taken[2])})")
    if not changed and not dense:
        return ""
    text = (f"**The series for mainline** (`patches-mainline-series/`, 3 patches on 7.3.4): "
            f"Rust's bare site costs at most C's in {equal} of {len(panels)} architectures "
            f"and configs measured; " + ("; ".join(changed) if changed else "no count changes"))
    if dense:
        text += "; branches taken per site among 16 in a row: " + "; ".join(dense)
    where = {"arch": "x86_64", "config": "no_jump_label"}
    native = [native_of(t, variant=v, **where)
              for t, v in ((before, "rust_dense"), (after, "rust_dense"), (after, "c_dense"))]
    if native[1] and native[2]:
        old = f"{native[0]} -> " if native[0] else ""
        text += (f"; natively (x86_64 JL=n, 16 in a row) Rust's site {old}{native[1]} "
                 f"{cell(after, 'native_unit', **where)}, C's {native[2]}")
    return text + "."


# The sites C and Rust are weighed on, per site kind: (words, C's, Rust's).
PAIRS = (("bare", "c_trace", "rust_trace"), ("driver-like", "c_txn", "rust_txn"),
         ("16 in a row, per site", "c_dense", "rust_dense"))


def clang_sentence(table: pd.DataFrame) -> str:
    """Where C's and Rust's sites differ in the clang builds (every site kind, kernel,
    architecture and config), and what mainline's inline helpers make of its Rust site."""
    clang = table[table.profile == clang_page.PROFILE]
    if clang.empty:
        return ""
    same, differ = 0, []
    for (kernel, arch, config), g in clang.groupby(["kernel", "arch", "config"], sort=False):
        for words, c, r in PAIRS:
            cv, rv = cell(g, variant=c), cell(g, variant=r)
            if cv is None or rv is None:
                continue
            if round(cv, 2) == round(rv, 2):
                same += 1
                continue
            calls = cell(g, "calls_while_off", variant=c)
            taken = {v: cell(g, "taken_per_site", variant=v) for v in (c, r)}
            native = {v: g[g.variant == v].iloc[0] for v in (c, r)}
            timed = all(pd.notna(row.native_median) for row in native.values())
            differ.append(
                f"{kernel} {arch} {SHORT[config]} {words}: "
                + ", ".join(f"{who} {fmt(value)}" + (f" ({fmt(taken[v])} taken)" if taken[v]
                                                      else "")
                            for who, v, value in (("C", c, cv), ("Rust", r, rv)))
                + (f" (C calls `{calls}()`)" if isinstance(calls, str) and calls else "")
                + (f", natively C {native_words(native[c])} and Rust "
                   f"{native_words(native[r])} {native[c].native_unit}" if timed else ""))
    calls = []
    for r in clang[(clang.variant == "rust_helper") & (clang.config == "jump_label")].itertuples():
        gcc = cell(table, kernel=r.kernel, profile=clang_page.GCC, arch=r.arch,
                   config=r.config, variant="rust_helper")
        if gcc is not None and gcc != r.instructions_per_site:
            calls.append(f"{r.kernel} {r.arch} {fmt(gcc)} -> {fmt(r.instructions_per_site)}")
    helpers = [f"{r.arch} {SHORT[r.config]} {fmt(gcc.instructions_per_site)} -> "
               f"{fmt(r.instructions_per_site)} (C's: {fmt(c)})"
               + layout_words(clang[(clang.kernel == "mainline") & (clang.arch == r.arch)
                                    & (clang.config == r.config)])
               for gcc, r, c in clang_page.inline_helpers(table)]
    text = (f"**Built by clang as Android builds** (full LTO, kCFI, arm64's shadow call "
            f"stack): C's and Rust's sites cost alike in {same} of {same + len(differ)} "
            "cases (site kind, kernel, architecture, config)"
            + ("; they differ in " + "; ".join(differ) if differ else ""))
    if helpers:
        text += ("; mainline's inline helpers (CONFIG_RUST_INLINE_HELPERS) take Rust's site "
                 "from GCC's build to clang's: " + "; ".join(helpers))
    if calls:
        text += ("; a Rust driver's call of a C helper, with jump labels, from GCC's build to "
                 "clang's: " + "; ".join(calls))
    return text + "."


def layout_words(rows: pd.DataFrame) -> str:
    """", but among 16 in a row ...": where one language's dense sites take branches the
    other's do not, with their native time when the run has it; "" where they take alike."""
    by = {v: rows[rows.variant == v] for v in DENSE}
    if any(g.empty for g in by.values()):
        return ""
    c, r = (g.iloc[0] for g in by.values())
    if c.taken_per_site == r.taken_per_site:
        return ""
    text = (f", but among 16 in a row Rust's takes {fmt(r.taken_per_site)} branches per site "
            f"and C's {fmt(c.taken_per_site)}")
    if pd.notna(c.native_median) and pd.notna(r.native_median):
        text += (f": natively Rust {native_words(r)} and C {native_words(c)} {c.native_unit} "
                 "per site")
    return text


def site_table(table: pd.DataFrame) -> list[str]:
    """Extra instructions per disabled site: a row per architecture, kernel and build."""
    head = " | ".join(f"{who} {SHORT[c]}" for c, _ in CONFIGS for who in ("C", "Rust", "helper"))
    out = [f"| arch | kernel | build | {head} |", "|---|---|---|" + "---:|" * 6]
    order = {k: i for i, k in enumerate(("series", "series-gcc14", "mainline",
                                         "mainline-series"))}
    keys = (table[["arch", "kernel", "profile"]].drop_duplicates()
            .assign(o=lambda t: [(archs_of(table).index(a), order.get(k, 9), p != "distro")
                                 for a, k, p in zip(t.arch, t.kernel, t.profile)])
            .sort_values("o"))
    for r in keys.itertuples():
        mine = table[(table.arch == r.arch) & (table.kernel == r.kernel) & (table.profile == r.profile)]
        cells = []
        for config, _ in CONFIGS:
            for variant in ("c_trace", "rust_trace", "rust_helper"):
                v = cell(mine, config=config, variant=variant)
                taken = cell(mine, "taken_per_site", config=config, variant=variant)
                cells.append("-" if v is None else fmt(v) + (f", {fmt(taken)} taken"
                                                             if taken else ""))
        out.append(f"| {r.arch} | {r.kernel} | {r.profile} | {' | '.join(cells)} |")
    return out


DENSE = ("c_dense", "rust_dense")


def layout_groups(table: pd.DataFrame, config: str) -> dict[tuple, list[str]]:
    """(C's, Rust's branches taken per site among 16 in a row) -> the kernels, builds and
    architectures that show it, in `config`, of those where C's and Rust's sites run as many
    instructions (elsewhere the count already tells them apart)."""
    groups: dict[tuple, list[str]] = {}
    for (kernel, profile, arch), g in table[table.config == config].groupby(
            ["kernel", "profile", "arch"], sort=False):
        c, r = (cell(g, "taken_per_site", variant=v) for v in DENSE)
        counts = {fmt(cell(g, variant=v)) for v in DENSE}
        if c is not None and r is not None and len(counts) == 1:
            groups.setdefault((c, r), []).append(f"{kernel} {profile} {arch}")
    return groups


def layout_sentence(main: pd.DataFrame, table: pd.DataFrame) -> str:
    """Where C's and Rust's sites run as many instructions but one takes a branch the other
    does not: the taken branches per site among 16 sites in a row (one site's skip is the
    loop's own back edge, so a single site cannot show it), over every kernel, build and
    architecture, and the time it costs natively."""
    groups = layout_groups(table, "no_jump_label")
    if not groups:
        return ""
    parts = [f"C's {fmt(c)} and Rust's {fmt(r)} on {and_list(where)}"
             for (c, r), where in groups.items()]
    differ = any(c != r for c, r in groups)
    text = ("**Without jump labels, where the counts tie, the layout "
            + ("may not" if differ else "ties too") + ":** branches taken per disabled site "
            "among 16 in a row (an instruction count cannot see one), where C's and Rust's "
            "sites run as many instructions: " + "; ".join(parts))
    native = main[(main.config == "no_jump_label") & main.variant.isin(DENSE)
                  & main.native_median.notna()]
    if len(native) == 2:
        by = {r.variant: r for r in native.itertuples()}
        text += (f"; natively (x86_64 JL=n, {thunk_label(by['c_dense'].native_thunk)}) "
                 f"a Rust site among 16 costs {native_words(by['rust_dense'])} "
                 f"{by['rust_dense'].native_unit} per call, a C site "
                 f"{native_words(by['c_dense'])} (median (range) over processes and "
                 "placements)")
    return text + "."


def layout_table(table: pd.DataFrame, refused: dict[tuple, dict] | None = None) -> list[str]:
    """16 sites in a row: instructions and branches taken per site, C against Rust, and the
    native time per site where the run has it; `-` where the native stage has no figure
    (not x86_64), or why it refused the site (`refused`: (kernel, profile) -> the context's
    native_about.refused)."""
    rows = table[table.variant.isin(DENSE)]
    if rows.empty:
        return []
    refused = refused or {}
    out = ["| arch | kernel | build | config | C instructions | C taken | Rust instructions | "
           "Rust taken | C native | Rust native |", "|---|---|---|---|---:|---:|---:|---:|---|---|"]
    for (arch, kernel, profile, config), g in rows.groupby(
            ["arch", "kernel", "profile", "config"], sort=False):
        by = {r.variant: r for r in g.itertuples()}
        counts = ["-" if by.get(v) is None else fmt(getattr(by[v], column))
                  for v in DENSE for column in ("instructions_per_site", "taken_per_site")]
        why = refused.get((kernel, profile), {}).get(f"{arch}/{config}", {})
        native = [(native_words(by[v]) if by.get(v) is not None else "")
                  or (refused_words(why[v], v) if v in why else "-") for v in DENSE]
        out.append(f"| {arch} | {kernel} | {profile} | {SHORT[config]} | "
                   + " | ".join(counts + native) + " |")
    return out


def native_table(main: pd.DataFrame, context: dict) -> list[str]:
    native = main[main.native_median.notna()]
    if native.empty:
        return []
    refused = context.get("native_about", {}).get("refused", {})
    out = ["| arch | config | C | Rust | Rust via a C helper | A/A noise | processes |",
           "|---|---|---|---|---|---:|---:|"]
    for (arch, config), g in native.groupby(["arch", "config"], sort=False):
        by = {r.variant: native_words(r) for r in g.itertuples()}
        why = refused.get(f"{arch}/{config}", {})
        cells = [by.get(v) or (f"not timed: {why[v]}" if v in why else "")
                 for v in ("c_trace", "rust_trace", "rust_helper")]
        first = g.iloc[0]
        out.append(f"| {arch} | {SHORT[config]} | {' | '.join(cells)} | "
                   f"{first.native_noise:.2f} | {first.native_processes} |")
    return out


def refused_words(why: str, variant: str) -> str:
    """A table cell for a site the native stage refused: its reason without the function's
    name and the detail after the first comma ("calls the kernel's x(), a C helper ...")."""
    return "not timed: " + why.removeprefix(f"tpbench_{variant} ").split(", ")[0]


def native_refused(context: dict) -> str | None:
    """Why the native stage timed nothing as the host's kernel runs it, or None when it
    timed something: it did not run, or refused every variant (the first reason)."""
    about = context.get("native_about")
    if not about:
        return "the native stage did not run (the run has no record of it)"
    if about.get("ran") is False:
        return "the native stage did not run: " + about.get("why", "no reason recorded")
    variants = set(about.get("matrix", {}).get("variants", []))
    refused = about.get("refused", {})
    if refused and all(set(v) >= variants for v in refused.values()):
        why = next(iter(next(iter(refused.values())).values()))
        return f"every variant refused: {why}"
    return None


def thunk_table(thunks: pd.DataFrame) -> list[str]:
    """Each site's native cost per return thunk: the host kernel's own, and each other one
    a kernel may choose on x86_64."""
    if thunks.empty:
        return []
    out = ["| config | returns through | who needs it | Rust via a C helper | C | Rust | "
           "Rust, count by a call | A/A noise | processes |",
           "|---|---|---|---|---|---|---|---:|---:|"]
    for (config, thunk), g in thunks.groupby(["config", "thunk"], sort=False):
        by = {r.variant: native_words(r) for r in g.itertuples()}
        first = g.iloc[0]
        host = " **(this host's kernel)**" if first.host else ""
        noise = "" if pd.isna(first.native_noise) else f"{first.native_noise:.2f}"
        out.append(f"| {SHORT[config]} | {thunk_label(thunk)}{host} | {THUNKS[thunk][1]} | "
                   f"{by.get('rust_helper', '')} | {by.get('c_trace', '')} | "
                   f"{by.get('rust_trace', '')} | {by.get('rust_count_call', '')} | {noise} | "
                   f"{first.native_processes} |")
    return out


def host_words(about: dict, fallback: str) -> str:
    """The CPU the native figures hold for, and whether it is a virtual one."""
    cpu = about.get("host_cpu_identity")
    if not cpu:
        return (f"host CPU {about.get('host_cpu') or fallback} (this run predates recording "
                "its family, model and whether it is virtual)")
    what = (f"{cpu['name']} ({cpu['vendor']} family {cpu['family']} model {cpu['model']} "
            f"stepping {cpu['stepping']})")
    return (f"host CPU {what}, a **virtual CPU**: this host is itself a VM guest, so the "
            "figures hold for that VM" if cpu["hypervisor"] else f"host CPU {what}, not virtual")


def native_scope(context: dict, host: str) -> str:
    """The scope table's native row: what ran, on which CPU, through which return."""
    refused = native_refused(context)
    about = context.get("native_about", {})
    if refused and not about.get("thunks"):
        return f"**not measured**: {refused}"
    chosen = about.get("host_thunk", {"name": "ret", "why": "the run predates recording the "
                                      "choice; the loader then ran only where returns are "
                                      "plain `ret`"})
    others = [t for t in about.get("thunks", {}) if t != chosen["name"]]
    return ("the x86_64 modules' own code in a host process; "
            + (f"**not as this host's kernel runs it**: {refused}; " if refused else
               f"returns as this host's kernel sends them: {thunk_label(chosen['name'])} "
               f"({chosen['why']}); ")
            + (f"beside it, each other return thunk: {', '.join(map(thunk_label, others))}; "
               if others else "")
            + f"{host}; TSC ticks")


def compiler_words(context: dict) -> str:
    """Which C compiler (per architecture) and rustc built one kernel: "C by GCC 14.2.0
    (x86_64, arm64); clang 19.1.7 (riscv64); Rust by rustc 1.96.0"."""
    by: dict[str, list[str]] = {}
    for arch, tools in context.get("toolchain", {}).items():
        if tools.get("gcc"):
            by.setdefault(tool_words("gcc", tools["gcc"]), []).append(arch)
    rustc = {tool_words("rustc", t["rustc"]) for t in context.get("toolchain", {}).values()
             if t.get("rustc")}
    words = "; ".join(f"{name} ({', '.join(archs)})" for name, archs in by.items())
    return f"C by {words}; Rust by {', '.join(sorted(rustc))}"


def compilers_words(contexts: list[dict]) -> str:
    """Which C compiler and rustc built each kernel's C and Rust, per kernel, and why
    riscv64's C is clang's."""
    out = [f"**{kernel_of(c)} {profile_of(c)}**: {compiler_words(c)}" for c in contexts]
    text = "; ".join(dict.fromkeys(out))
    if any("riscv64" in c.get("toolchain", {}) for c in contexts):
        text += (". riscv64's C is clang's, not Debian's GCC: 6.12 offers Rust on riscv only "
                 "in a kernel built by clang (HAVE_RUST if CC_IS_CLANG)")
    return text


def missing_words(context: dict, others: list[dict]) -> str:
    """Each architecture of the run's own kernel that a further kernel or build lacks, and
    why: the reason the run recorded, or that the run's command did not ask for it."""
    archs = context.get("archs", [])
    out = []
    for c in [context, *others]:
        why = c.get("not_built", {})
        told = [f"{key.replace('/', ' ')} ({reason})" for key, reason in why.items()]
        asked = [a for a in archs if a not in c.get("archs", [])
                 and not any(key.startswith(a + "/") for key in why)]
        name = f"{kernel_of(c)} {profile_of(c)}"
        if told:
            out.append(f"{name}: {', '.join(told)}")
        if asked:
            out.append(f"{name}: {', '.join(asked)} (not asked for by the run's command: "
                       "COMPARE_ARCHS)")
    known = {kernel_of(c) for c in [context, *others]}
    absent = [k for k in context.get("kernels_known", []) if k not in known]
    if absent:
        out.append(f"{', '.join(absent)}: not in this run (COMPARE_KERNELS)")
    return "; ".join(out) or "nothing: every kernel and build on every architecture"


def guest_words(contexts: list[dict]) -> str:
    """The emulators the guests ran in and what their counter counts."""
    qemu: dict[str, list[str]] = {}
    for c in contexts:
        for arch, tools in c.get("toolchain", {}).items():
            version = tools.get("qemu", "").split("(")[0].replace("QEMU emulator version",
                                                                  "QEMU").strip()
            if version and arch not in qemu.setdefault(version, []):
                qemu[version].append(arch)
    emulators = "; ".join(f"{v} ({', '.join(a)})" for v, a in qemu.items())
    coarse = sorted({(c["arch"], c["counter_period"]) for ctx in contexts
                     for c in ctx.get("configs", {}).values()
                     if c.get("counter_period", 1) > 1 and c.get("accel") == "tcg"})
    exact = ("exact and the same on every repetition"
             + "".join(f"; {arch}'s counter ticks once per {period} instructions, so its "
                       f"per-call slope is within 0.002 of the count and rounds to it"
                       for arch, period in coarse))
    return (f"{emulators}; TCG `-icount shift=0,sleep=off`: the guest's counter counts "
            f"instructions, {exact}")


def reused_words(contexts: list[dict]) -> str:
    """The guests this run took from an earlier run (make bench REUSE=) instead of booting."""
    origins: dict[tuple[str, str], dict[str, list[str]]] = {}
    for c in contexts:
        for tag, entry in c.get("configs", {}).items():
            origin = entry.get("reused_from")
            if origin:
                part = origins.setdefault((origin["run"], origin["date"][:10]), {})
                part.setdefault(f"{kernel_of(c)} {profile_of(c)}", []).append(tag)
    if not origins:
        return "none: every guest booted in this run"
    return "; ".join(
        f"from run `{run}` ({date}), whose kernel builds, module sources, matrix and QEMU are "
        f"this run's (TCG's counts are exact and the same on every boot): "
        + "; ".join(f"{part}: {', '.join(tags)}" for part, tags in parts.items())
        for (run, date), parts in origins.items())


def native_scope_of_run(context: dict) -> str:
    """The scope table's native row for a run: what ran, on which CPU, through which return."""
    return native_scope(context, host_words(context.get("native_about", {}),
                                            context.get("host_cpu", "")))


def scope_lines(context: dict, others: list[dict], rel: Path) -> list[str]:
    """What the numbers hold for: kernels, builds, architectures, emulator, host."""
    contexts = [context, *others]
    kernels = {kernel_of(c): c.get("kernel_what") or c.get("kernel_package", "") for c in contexts}
    profiles = {profile_of(c): c.get("profile_what", "") for c in contexts}
    return [
        "| | |", "|---|---|",
        "| kernels | " + "; ".join(f"**{k}**: {w}" for k, w in kernels.items()) + " |",
        "| builds | " + "; ".join(f"**{p}**: {w}" for p, w in profiles.items()) + " |",
        "| architectures | " + "; ".join(
            f"{kernel_of(c)} {profile_of(c)}: {', '.join(c.get('archs', []))}"
            for c in contexts) + " |",
        f"| guest | {guest_words(contexts)} |",
        "| compilers | " + compilers_words(contexts) + " |",
        "| not measured | " + missing_words(context, others) + " |",
        f"| reused | {reused_words(contexts)} |",
        f"| native | {native_scope_of_run(context)} |",
        f"| run | `{context['run_id']}` ({context['date'][:10]}): "
        f"[samples]({rel}/samples.csv), [context]({rel}/context.json), "
        f"[verdict.csv]({rel}/verdict.csv) |",
    ]


# What each detail page answers, in the words of the question a reader brings.
QUESTIONS = {
    "binder": "What do a real driver's disabled tracepoints cost per transaction, Rust "
              "Binder beside C Binder?",
    "driver": "Does a site with a driver's struct-field arguments load them while off?",
    "mainline": "Does mainline's own implementation cost the same? Which differences are "
                "the compiler's, which the kernel's?",
    "profiles": "What changes in a kernel built for size (`-Os`, tinyconfig)?",
    "clang": "Does it hold in the kernels Android ships Rust drivers in (clang, full LTO, "
             "kCFI, shadow call stack, mainline's inline helpers)?",
    "dense": "Do 16 sites in one function each stay one NOP?",
    "recording": "What does a call cost while its event records, and are the records right?",
    "size": "How many bytes does each site and each event add?",
    "guest": "What does a site cost with a probe attached, and every variant in every state?",
    "native": "How much time is it natively, variant by variant and process by process?",
    "paths": "Which instructions does each disabled path run?",
    "codegen": "What code did the compilers generate, and which checks did it pass?",
    "method": "How was it measured, where did every input come from, how is it run again?",
}


def answer_sentences(table: pd.DataFrame, context: dict, others: list[dict],
                     thunks: pd.DataFrame | None = None) -> list[str]:
    """The Answer's numbered sentences (markdown), for REPORT.md and the cover letter."""
    profile, kernel = profile_of(context), kernel_of(context)
    main = table[(table.profile == profile) & (table.kernel == kernel)]
    thunks = pd.DataFrame(columns=["profile", "kernel", "arch", "config", "thunk", "variant"]) \
        if thunks is None else thunks
    thunks = thunks[(thunks.profile == profile) & (thunks.kernel == kernel)]
    host = context.get("native_about", {}).get("host_thunk", {}).get("name", "ret")
    refused = native_refused(context)
    return [s for s in (
        c_against_rust(main, "jump_label", "**With jump labels** (CONFIG_JUMP_LABEL=y, as "
                       "distributions build), Rust's `declare_trace!` site is C's NOP", table),
        c_against_rust(main, "no_jump_label", "**Without jump labels**, Rust's site reads the "
                       "key's count as C's does", table),
        layout_sentence(main, table),
        helper_sentence(main, thunks, host, refused, table), arguments_sentence(main, table),
        mainline_sentence(table, profile, kernel, next(
            (c.get("kernel_what", "") for c in others if kernel_of(c) == "mainline"), "")),
        mainline_series_sentence(table, profile), clang_sentence(table)) if s]


def native_lines(main: pd.DataFrame, context: dict, thunks: pd.DataFrame) -> list[str]:
    """The native sections: each site as this host's kernel runs it (or why it is not
    timed), then the helper under each return thunk."""
    host = context.get("native_about", {}).get("host_thunk", {}).get("name", "ret")
    refused = native_refused(context)
    native = native_table(main, context)
    lines = [f"## Native time per site (x86_64, TSC ticks per call, returns as this host's "
             f"kernel sends them: {thunk_label(host) if not refused else 'not timed'})", ""]
    if native:
        lines += ["The modules' own loop code run in a host process: median (min..max) over "
                  "processes and placements of `.text`; a site some process could not tell "
                  "from zero (within the A/A noise: the C site against itself, timed twice in "
                  "one process) is not resolved, given as less than the larger of the largest cost "
                  "seen and that noise.",
                  "", *native, ""]
    else:
        lines += ["**No native figure as this host's kernel runs the code**: "
                  + (refused or "the run has no native samples") + "."
                  + (" The return thunks below stand in." if not thunks.empty else ""), ""]
    table_of_thunks = thunk_table(thunks)
    if table_of_thunks:
        lines += ["## What the helper costs under each return thunk (x86_64, TSC ticks per "
                  "call)", "",
                  "The same modules and matrix, on the same host in the same run, with every "
                  "return of the module sent where a kernel with each mitigation sends it "
                  "(the thunks' own code, from 6.12's `arch/x86/lib/retpoline.S`): what a "
                  "disabled event costs a helper-calling Rust driver on a machine that needs "
                  "each. The host kernel's own choice is marked; the others are forced on "
                  "this host's CPU, so they hold for this CPU running that code, not for the "
                  "CPUs that need it.", "", *table_of_thunks, ""]
    return lines


def further_lines(pages: list[str], others: list[dict], found: dict[str, str],
                  rel: Path) -> list[str]:
    """A line per further question, with what its page found, linking to it."""
    titles = dict(PAGES)
    questions = dict(QUESTIONS)
    if not any(kernel_of(c) == "series-gcc14" for c in others):
        questions["mainline"] = ("Does mainline's own implementation cost the same? (Telling "
                                 "the compiler's part from the kernel's needs `series-gcc14`, "
                                 "not in this run.)")
    return ["## Further questions", ""] + [
        f"- **{questions.get(name, titles[name])}**"
        + (f" {found[name][0].upper()}{found[name][1:]}" if name in found else "")
        + f" [{titles[name]}]({rel}/{PAGES_DIR}/{name}.md)" for name in pages]


def render(table: pd.DataFrame, context: dict, others: list[dict], run: Path,
           repo_root: Path, pages: list[str], figure: str | None,
           found: dict[str, str] | None = None, thunks: pd.DataFrame | None = None,
           binder: str | None = None) -> str:
    """REPORT.md: the question, the answer (`binder` its last line, the real driver's), its
    scope, the two tables, the figure, and a line per further question linking to its
    page."""
    rel = Path(os.path.relpath(run, repo_root))
    profile, kernel = profile_of(context), kernel_of(context)
    main = table[(table.profile == profile) & (table.kernel == kernel)]
    answers = answer_sentences(table, context, others, thunks) + ([binder] if binder else [])
    thunks = pd.DataFrame(columns=["profile", "kernel", "arch", "config", "thunk", "variant"]) \
        if thunks is None else thunks
    thunks = thunks[(thunks.profile == profile) & (thunks.kernel == kernel)]
    incomplete = ([f"> **INCOMPLETE RUN**: {context.get('incomplete_reason')}. Every figure "
                   "below covers only what the run recorded.", ""]
                  if not context.get("complete") else [])
    lines = [
        "# Does a disabled tracepoint cost the same from Rust as from C?", "",
        *incomplete,
        f"Run `{context['run_id']}`: the series (`declare_trace!` with a static branch, "
        f"{len(context.get('series', []))} patches on {context.get('kernel_package', '')}), "
        f"built **{profile}** ({context.get('profile_what', '')}). Unit in the guest: "
        "**instructions** per disabled site, beyond the same loop without it (exact); "
        "natively: **TSC ticks**.", "",
        "## Answer", "",
        *[f"{i}. {s}" for i, s in enumerate(answers, 1)], "",
        "## Scope", "",
        *scope_lines(context, [o for o in others], rel), "",
        "## Extra instructions per disabled site", "",
        "Under QEMU TCG `-icount` (instructions, exact). `-`: no such site (32-bit arm has no "
        "Rust in 6.12) or not measured. \"n taken\": the site's path takes n branches more "
        "per event than the loop without it (from the disassembly).", "",
        *site_table(table), "",
    ]
    layout = layout_table(table, {(kernel_of(c), profile_of(c)): c.get("native_about", {})
                                  .get("refused", {}) for c in [context, *others]})
    if layout:
        lines += ["## Instructions and branches taken per site, 16 sites in a row", "",
                  "A branch that is taken redirects the CPU's fetch; one that falls through "
                  "does not, and an instruction count sees no difference. A single site "
                  "cannot show it: the branch over its call is also the loop's back edge. "
                  "Among 16 sites in a row, 15 of them show their own. Instructions and "
                  "branches taken per site (from the disassembly), beyond the loop without "
                  "sites; natively, TSC ticks per site, median (min..max) over processes and "
                  "placements (`-`: the native stage times x86_64 only).", "", *layout, ""]
    lines += native_lines(main, context, thunks)
    if figure:
        lines += [f"![{figure.split('/')[-1]}]({rel}/{figure})", ""]
    lines += further_lines(pages, others, found or {}, rel)
    lines += ["", "## Run it again", "", "```",
              reproduce_command(context, others) + "   # a new run like this one",
              f"make report RUN={context['run_id']}   # this report again, from the committed "
              "files", "```", ""]
    return "\n".join(lines)
