"""REPORT.md from one run directory; every number in it comes from that run's files."""

import os
from pathlib import Path

import pandas as pd

from analysis import size, stats
from analysis.load import Analysed, kernel_of, profile_of
from analysis.pages.clang import clang_section
from analysis.pages.dense import density_section
from analysis.pages.driver import arguments_section
from analysis.pages.guest import headline, sources, verdict_table
from analysis.pages.mainline import MAINLINE_SERIES, kernels_section, series_for_mainline
from analysis.pages.method import method_lines
from analysis.pages.native import native_section, process_table, thunk_section
from analysis.pages.paths import explained
from analysis.pages.profiles import profiles_section
from analysis.pages.recording import record_check, record_words, recording_section
from analysis.pages.size import size_section
from analysis.stats import fmt
from analysis.words import PAGES_DIR, PAGE_TO_RUN, STATE_ORDER, profile_words, span
from common import matrix, rundir


def page_head(title: str, context: dict, repo_root: Path, run: Path) -> list[str]:
    """A detail page's first lines: what it is, of which run, and the way back."""
    back = Path(os.path.relpath(repo_root / "REPORT.md", run / PAGES_DIR))
    incomplete = ([f"> **INCOMPLETE RUN**: {context.get('incomplete_reason')}. Every figure "
                   "below covers only what the run recorded.", ""]
                  if not context.get("complete") else [])
    return [f"# {title}", "", *incomplete,
            f"Run `{context['run_id']}`, {profile_words(context)}. Part of the "
            f"[report]({back}); the run's raw samples are "
            f"[`samples.csv`]({PAGE_TO_RUN}/samples.csv), its context "
            f"[`context.json`]({PAGE_TO_RUN}/context.json).", ""]


# The detail pages, in the order the report lists them: file name, title.
PAGES = (("guest", "Inside the guest: every variant in every state"),
         ("mainline", "Mainline, with and without the series for it"),
         ("binder", "Binder: a real driver's round trip, Rust and C"),
         ("profiles", "Build profiles side by side"),
         ("clang", "Built by clang as Android builds"),
         ("native", "Native: the module's own code on the host CPU"),
         ("driver", "Arguments read from a driver's structure"),
         ("dense", "Many sites in one function"),
         ("recording", "Recording into the ring buffer"),
         ("size", "Code size: bytes per site and per event"),
         ("paths", "What each disabled path runs"),
         ("codegen", "Generated code and its checks"),
         ("method", "Method, provenance, reproduction"))


def pages(run: Path, everything: pd.DataFrame, context: dict, checks: dict[str, str],
          repo_root: Path, paths=None, sizes=None, others=(), processes=None,
          thunks=None, table=None, facts=None, binder=None) -> dict[str, str]:
    """The detail pages of a run (<run>/report/<name>.md), by name; a page with nothing to
    say for this run is left out. `others` are its further build profiles and kernels
    (Analysed); `thunks` its native costs per return thunk (analysis.verdict.thunk_costs);
    `table` its verdict rows, `facts` what analysis.hardening read from the modules the clang
    page weighs; `binder` the Binder page's body (analysis.binder.page), if the run has
    that part."""
    summary = stats.guest(everything)
    accel = sorted({c["accel"] for c in context["configs"].values()})
    main = Analysed(run, context, everything, paths or {})
    profiles = [o for o in others if kernel_of(o.context) == kernel_of(context)]
    # Other kernels in this profile; one in a further profile (clang/mainline) has its page.
    kernels = [o for o in others if kernel_of(o.context) != kernel_of(context)
               and o.profile == profile_of(context)]
    rel = PAGE_TO_RUN
    body: dict[str, list[str]] = {}

    guest = [
        "Per call, under the run's accelerator. \"net of baseline\" is the variant minus its "
        "loop without the site (`c_base`/`rust_base`, `c_txn_base`/`rust_txn_base`; the "
        "empty loop in older runs); \"site cost vs C\" is that minus the C site's of the same "
        "event (`c_trace`, `c_txn`). Under TCG -icount every repetition gives the same "
        "count, so a value marked exact is one; the verdict calls a difference real only "
        "when its whole 95% interval lies beyond the noise threshold "
        f"({', '.join(f'{a}: {stats.NOISE.get(a, 0.5):g} {stats.UNITS.get(a)}' for a in accel)}"
        " per call).", "",
        "## The disabled site, per call", "",
        *headline(summary, context, paths or {}),
        "## Every variant", "",
        verdict_table(summary), "",
        "## Figures", "",
        "Per-call cost of every variant, disabled and with a probe attached; then the cost of "
        "a timed loop against its length N in each state (the fastest repetition at each N, "
        "which the per-call slope is fitted through).", ""]
    for arch, config in stats.panels(summary):
        tag = f"{arch}-{config}"
        guest += [f"![per-call cost, {arch} {config}]({rel}/plots/percall-{tag}.png)", ""]
        states = set(stats.rows(summary, arch=arch, config=config).state)
        guest += [f"![scaling, {arch} {config}, {state}]({rel}/plots/scaling-{tag}-{state}.png)"
                  for state in STATE_ORDER if state in states] + [""]
    body["guest"] = guest + sources(everything, context)
    body["mainline"] = ((series_for_mainline(table, [main, *kernels], profile_of(context))
                         if table is not None else [])
                        + kernels_section(main, [k for k in kernels
                                                 if kernel_of(k.context) != MAINLINE_SERIES]))
    body["binder"] = binder or []
    body["profiles"] = [line for other in profiles for line in profiles_section(main, other)]
    if table is not None:
        body["clang"] = clang_section(table, facts or {}, [main, *others])
    body["native"] = native_section(run, everything, context)
    if body["native"]:
        body["native"] += process_table(processes, stats.NATIVE_UNIT)
    if thunks is not None and not thunks.empty:
        body["native"] = (body["native"] or ["## Native: the module's own code on the host CPU",
                                             ""]) + thunk_section(thunks)
    body["driver"] = arguments_section(run, summary, paths or {}, rel)
    body["dense"] = density_section(summary, paths or {}, profile_of(context))
    records_checked = record_words(record_check(run, context))
    body["recording"] = recording_section(summary, records_checked)
    if sizes is None:
        sizes = size.run_sizes(run, stats.panels(summary))
    body["size"] = size_section(run, sizes, rel)
    body["paths"] = explained(paths or {}, summary)
    # An opening line, so that the first architecture keeps its heading (a page's first
    # heading becomes its title).
    codegen_lines = ["A section per architecture and config, x86_64 first: the listing of "
                     "its loops and the checks made on them.", ""] if checks else []
    listings = {f"{a}-{c}": p.name for (a, c), p in rundir.guest_files(run, "listing").items()}
    for tag in sorted(checks, key=lambda t: (not t.startswith("x86_64"), t)):
        listing = listings.get(tag)
        codegen_lines += [f"## {tag}", "",
                          (f"Loop bodies as objdump shows them: [`{listing}`]({rel}/{listing}) "
                           "(`*` marks the instructions of one iteration with the tracepoint "
                           "off, `SITE` the patched NOP). " if listing else "")
                          + "Checks:", "", "```", checks[tag].rstrip(), "```", ""]
    body["codegen"] = codegen_lines
    body["method"] = method_lines(run, context, profiles, kernels, others, repo_root,
                                  records_checked)
    out = {}
    for name, title in PAGES:
        lines = body.get(name) or []
        if not lines:
            continue
        # A section function's own first heading is the page's title.
        if lines[0].startswith("## "):
            lines = lines[2:] if len(lines) > 1 and not lines[1] else lines[1:]
        out[name] = "\n".join(page_head(title, context, repo_root, run) + lines).rstrip() + "\n"
    return out


# The sites a Rust driver writes, each with the C site it is weighed against.
RUST_AGAINST_C = (("rust_trace", "c_trace"), ("rust_txn", "c_txn"), ("rust_txn_lazy", "c_txn"))


def nets(a: "Analysed") -> dict:
    """(arch, config, state, variant) -> instructions net of baseline, of one analysed run."""
    return {(r.arch, r.config, r.state, r.variant): r.net
            for r in stats.guest(a.summary).itertuples() if pd.notna(r.net)}


def dense_words(runs) -> str:
    """Per kernel and build, what each of 16 sites in a row costs with jump labels, in C and
    in Rust: "1 to 1.06 instructions (series distro), in C as in Rust; ..."."""
    parts = []
    for a in runs:
        net = nets(a)
        each = {v: [net[(arch, "jump_label", "disabled", v)] / matrix.BY_NAME[v].sites
                    for arch, _ in stats.panels(stats.guest(a.summary))
                    if (arch, "jump_label", "disabled", v) in net]
                for v in ("c_dense", "rust_dense")}
        if not each["c_dense"] or not each["rust_dense"]:
            continue
        where = f"{kernel_of(a.context)} {a.profile}"
        c, rust = span(each["c_dense"]), span(each["rust_dense"])
        parts.append(f"{c} in C as in Rust ({where})" if c == rust else
                     f"{c} in C and {rust} in Rust ({where})")
    return "; ".join(parts)


def findings(main: Analysed, sizes: dict, others=()) -> dict[str, str]:
    """One sentence per detail page: what a reader finds there, from the same numbers, over
    every kernel, build and site kind the page shows."""
    out = {}
    runs = [main, *others]
    dense = dense_words(runs)
    if dense:
        out["dense"] = (f"with jump labels each of 16 sites in a row costs, in instructions, "
                        f"{dense}.")
    enabled, shares = [], []
    for a in runs:
        net = nets(a)
        for arch, config in stats.panels(stats.guest(a.summary)):
            for rust, c in RUST_AGAINST_C:
                keys = [(arch, config, state, v) for state in ("enabled", "recording")
                        for v in (rust, c)]
                if keys[0] in net and keys[1] in net:
                    enabled.append(net[keys[0]] - net[keys[1]])
                if keys[2] in net and keys[3] in net:
                    shares.append(100 * (net[keys[2]] - net[keys[3]]) / net[keys[3]])
    scope = "over every site kind, kernel and build"
    if enabled:
        lo, hi = min(enabled), max(enabled)
        how = (f"{fmt(hi)} more" if lo == hi and lo >= 0 else
               f"{fmt(lo)} to {fmt(hi)} more" if lo >= 0 else
               f"from {fmt(-lo)} fewer to {fmt(hi)} more")
        out["guest"] = (f"with a probe attached, a Rust site runs {how} instructions per "
                        f"event than its C counterpart ({scope}), around the call into "
                        "`rust_do_trace_<event>()`.")
    if shares:
        check = record_check(main.run, main.context)
        records = ("" if not check["checked"] else
                   "; **the record check failed**" if check["problems"] else
                   "; the records read back carry the values passed, from both languages")
        out["recording"] = (f"while recording, Rust minus C is {min(shares):+.1f}% to "
                            f"{max(shares):+.1f}% of a record's cost ({scope}){records}.")
    per_site = {lang: [r["site_text"] + r["jump_entry"] for (a, c), rows in sizes.items()
                       if c == "jump_label" for r in rows if r["variant"] in vs]
                for lang, vs in (("C", ("c_trace", "c_txn")),
                                 ("Rust", ("rust_trace", "rust_txn", "rust_txn_lazy")))}
    if per_site["C"] and per_site["Rust"]:
        out["size"] = (f"with jump labels a site adds {span(per_site['C'], 'bytes')} in C, "
                       f"{span(per_site['Rust'], 'bytes')} in Rust, its `__jump_table` "
                       f"entry included (one-argument and driver-like sites, "
                       f"{kernel_of(main.context)} {main.profile}).")
    # The finding is about GCC's layout for size: the tiny profile's, not any other's (clang).
    tiny = [o for o in others if kernel_of(o.context) == kernel_of(main.context)
            and o.profile == "tiny" != main.profile]
    for other in tiny[:1]:
        theirs = stats.guest(other.summary)
        c = [r.net for r in theirs.itertuples() if r.variant == "c_trace"
             and r.state == "disabled" and r.config == "jump_label" and pd.notna(r.net)]
        rust = [r.net for r in theirs.itertuples() if r.variant == "rust_trace"
                and r.state == "disabled" and r.config == "jump_label" and pd.notna(r.net)]
        if c and rust:
            out["profiles"] = (f"built {other.profile}, with jump labels C's site costs "
                               f"{span(c)} instructions and Rust's {span(rust)}: GCC's layout "
                               "for size, not C against Rust.")
    return out
