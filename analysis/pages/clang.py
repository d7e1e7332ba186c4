"""The clang page: the kernels Android ships Rust drivers in (clang, full LTO, kCFI, arm64's
shadow call stack, mainline's inline helpers), beside the GCC-built distro ones of the run.

Pure functions of the verdict table, the runs' summaries and disassembly paths, and the
facts analysis.hardening read from each module's code (`facts`: (kernel, profile, arch,
config) -> hardening.facts)."""

import pandas as pd

from analysis import sites, stats
from analysis.load import Analysed, kernel_of
from analysis.stats import fmt
from analysis.verdict import SITES, cell
from analysis.words import PAGE_TO_RUN, SHORT, counted_words

PROFILE = "clang"
GCC = "distro"


def site_words(rows: pd.DataFrame, variant: str) -> str:
    """One site's disabled cost as the tables give it: instructions, then the branches it
    takes, the driver's fields it loads and the functions it calls, where it does."""
    n = cell(rows, variant=variant)
    if n is None:
        return "-"
    taken = cell(rows, "taken_per_site", variant=variant)
    loads = cell(rows, "argument_loads", variant=variant)
    calls = cell(rows, "calls_while_off", variant=variant)
    return ", ".join([fmt(n)] + ([f"{fmt(taken)} taken"] if taken else [])
                     + ([f"{fmt(loads)} loads"] if loads else [])
                     + ([f"calls `{calls.replace(';', '()`, `')}()`"] if calls else []))


def clang_parts(table: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(kernel, arch, config) of every clang row, in the table's order."""
    rows = table[table.profile == PROFILE]
    return list(dict.fromkeys(zip(rows.kernel, rows.arch, rows.config)))


def beside_gcc(table: pd.DataFrame) -> list[str]:
    """Every site kind's disabled cost built by clang beside the same kernel built by GCC."""
    out = ["| kernel | arch | config | site | written by | GCC (distro) | clang |",
           "|---|---|---|---|---|---|---|"]
    for kernel, arch, config in clang_parts(table):
        mine = {p: table[(table.kernel == kernel) & (table.arch == arch)
                         & (table.config == config) & (table.profile == p)]
                for p in (GCC, PROFILE)}
        for kind, who, variant in SITES:
            out.append(f"| {kernel} | {arch} | {SHORT[config]} | {kind} | {who} | "
                       f"{site_words(mine[GCC], variant)} | {site_words(mine[PROFILE], variant)} |")
    return out


def inline_helpers(table: pd.DataFrame) -> list[tuple]:
    """(GCC's row, clang's row, C's count under clang) of mainline's Rust site, wherever its
    GCC build calls a C helper while off: what CONFIG_RUST_INLINE_HELPERS makes of it."""
    out = []
    ml = table[(table.kernel == "mainline") & (table.variant == "rust_trace")]
    for r in ml[(ml.profile == GCC) & ml.calls_while_off.notna()
                & (ml.calls_while_off != "")].itertuples():
        theirs = ml[(ml.profile == PROFILE) & (ml.arch == r.arch) & (ml.config == r.config)]
        if not theirs.empty:
            out.append((r, theirs.iloc[0], cell(table, kernel="mainline", profile=PROFILE,
                                                arch=r.arch, config=r.config,
                                                variant="c_trace")))
    return out


def inline_helper_lines(table: pd.DataFrame) -> list[str]:
    """Where mainline's GCC-built Rust site calls a C helper while off, what the clang build
    with CONFIG_RUST_INLINE_HELPERS runs instead, beside C's site."""
    out = []
    for r, t, c in inline_helpers(table):
        calls = (f"still calls `{t.calls_while_off}()`" if isinstance(t.calls_while_off, str)
                 and t.calls_while_off else "calls nothing")
        out.append(f"- **{r.arch} {SHORT[r.config]}**: Rust's site runs "
                   f"{fmt(r.instructions_per_site)} instructions built by GCC, calling "
                   f"`{r.calls_while_off}()`; built by clang with inline helpers "
                   f"{fmt(t.instructions_per_site)}, and {calls}"
                   + (f" (C's site: {fmt(c)})" if c is not None else "") + ".")
    return out


def check_words(path: dict) -> str:
    """The kCFI checks one enabled path passes on the way to a lone probe."""
    if path["checks"]:
        n = len(path["checks"])
        return (f"{n} check{'s' if n > 1 else ''}, {sum(path['checks'])} instructions "
                f"(in `{path['function']}()` or what it inlines)")
    if path["static_call"]:
        return "none: a static call, a direct call to a lone probe"
    return "none"


def enabled_nets(a: Analysed) -> dict:
    """(arch, config, variant) -> instructions per call net of baseline, probe attached."""
    part = stats.rows(stats.guest(a.summary), state="enabled")
    return {(r.arch, r.config, r.variant): r.net for r in part.itertuples() if pd.notna(r.net)}


def kcfi_table(facts: dict, runs: list[Analysed]) -> list[str]:
    """Per clang kernel, architecture and config: the kCFI checks each enabled path passes
    (from the disassembly), those `__traceiter_<event>()` passes per probe when it runs, and
    the instructions measured with a probe attached, GCC's build beside clang's."""
    nets = {(kernel_of(a.context), a.profile): enabled_nets(a) for a in runs}
    out = ["| kernel | arch | config | C | Rust (`rust_do_trace_<event>()`) | Rust via a C helper "
           "| `__traceiter_<event>()`, per probe | C, probe attached | Rust, probe attached |", "|---|---|---|---|---|---|---|---|---|"]
    for (kernel, profile, arch, config), f in facts.items():
        if profile != PROFILE:
            continue
        paths = [check_words(f["paths"][who]) if who in f["paths"] else "-"
                 for who in ("C", "Rust", "Rust via a C helper")]
        per_probe = (f"{len(f['iterator_checks'])} check, {sum(f['iterator_checks'])} "
                     "instructions" if f["iterator_checks"] else "none")
        measured = []
        for variant in ("c_trace", "rust_trace"):
            values = [nets.get((kernel, p), {}).get((arch, config, variant)) for p in (GCC, PROFILE)]
            measured.append(", ".join(f"{'-' if v is None else fmt(v)} ({who})"
                                      for v, who in zip(values, ("GCC", "clang"))))
        out.append(f"| {kernel} | {arch} | {SHORT[config]} | {' | '.join(paths)} | {per_probe} | "
                   f"{' | '.join(measured)} |")
    return out


def native_kcfi_lines(runs: list[Analysed]) -> list[str]:
    """What the native stage did with each clang x86_64 module's kCFI, as its context
    recorded it: kept as compiled, or refused (FineIBT, on a CPU that enforces IBT)."""
    out = []
    for a in runs:
        about = a.context.get("native_about", {})
        if a.profile != PROFILE or not about:
            continue
        cfi = about.get("rewrites", {}).get(".cfi_sites")
        out.append(f"Natively ({kernel_of(a.context)} x86_64): "
                   + (f"{'refused' if cfi['action'] == 'refuse' else cfi['action']}: "
                      f"{cfi['why']}." if cfi else
                      "the run predates recording what the native stage did with kCFI."))
    return out


def reach_words(path: dict) -> str:
    """How one enabled path reaches its probe."""
    return ("calls `__traceiter_tpbench_hit()`" if path["calls_iterator"] else
            "reaches it through a static call" if path["static_call"] else
            "has `__traceiter_tpbench_hit()` inlined")


def trace_words(f: dict) -> str:
    return "out of line, a function of its own" if f["out_of_line_trace"] else \
        "inlined at every site"


def gcc_words(mine: str, theirs) -> str:
    """GCC's build beside clang's: " (as in GCC's build)", or what GCC's does instead."""
    return "" if not theirs else " (as in GCC's build)" if theirs == mine else \
        f" (GCC's build: {theirs})"


def lto_lines(facts: dict, runs: list[Analysed]) -> list[str]:
    """What the disassembly shows of full LTO's reach across the module's files: the event's
    iterator inlined into each enabled path, C's `trace_<event>()` out of line or not, and
    arm64's key read as a load-acquire (rwonce.h's READ_ONCE() under LTO)."""
    out = []
    for (kernel, profile, arch, config), f in facts.items():
        if profile != PROFILE or config != "jump_label":
            continue
        gcc = facts.get((kernel, GCC, arch, config), {"paths": {}})
        how = []
        for who, path in f["paths"].items():
            theirs = gcc["paths"].get(who)
            how.append(f"{who}'s `{path['function']}()` {reach_words(path)}"
                       + gcc_words(reach_words(path), theirs and reach_words(theirs)))
        how.append("C's `trace_tpbench_hit()` is " + trace_words(f)
                   + gcc_words(trace_words(f), "out_of_line_trace" in gcc and trace_words(gcc)))
        out.append(f"- **{kernel} {arch}**: " + "; ".join(how) + ".")
    for a in runs:
        if a.profile != PROFILE:
            continue
        for key, rows in sorted(a.paths.items()):
            arch, config = key.split("-", 1)
            added = sites.site_instructions(rows, "c_trace", "c_base") or []
            acquire = [w for w in added if w.strip("`").startswith(("ldar", "ldapr"))]
            if arch == "arm64" and config == "no_jump_label" and acquire:
                out.append(f"- **{kernel_of(a.context)} arm64 JL=n**: the key's count is read "
                           f"with {counted_words(acquire)}, a load-acquire: under LTO "
                           "arm64's READ_ONCE() is one (arch/arm64/include/asm/rwonce.h).")
    return out


def shadow_stack_table(table: pd.DataFrame, facts: dict, runs: list[Analysed]) -> list[str]:
    """On arm64, the helper-calling site built by GCC and by clang, and the shadow call
    stack's instructions on its disabled path (per event)."""
    out = ["| kernel | config | helper, GCC (distro) | helper, clang | shadow call stack, per "
           "event | all that only clang's path runs |", "|---|---|---:|---:|---|---|"]
    for (kernel, profile, arch, config), f in facts.items():
        if profile != PROFILE or arch != "arm64":
            continue
        values = [cell(table, kernel=kernel, profile=p, arch=arch, config=config,
                       variant="rust_helper") for p in (GCC, PROFILE)]
        scs = f["shadow_stack"]
        words = ("(no walk of its path)" if scs is None else
                 f"{len(scs)}: " + ", ".join(f"`{w}`" for w in scs) if scs else
                 "none: the helper returns before its frame is made")
        only = extra_words(runs, kernel, arch, config, "rust_helper")
        out.append(f"| {kernel} | {SHORT[config]} | "
                   + " | ".join("-" if v is None else fmt(v) for v in values)
                   + f" | {words} | {only} |")
    return out if len(out) > 2 else []


def extra_words(runs: list[Analysed], kernel: str, arch: str, config: str, variant: str) -> str:
    """What the clang build's disabled path of `variant` runs and GCC's does not, counted."""
    paths = {a.profile: sites.path_words(a.paths.get(f"{arch}-{config}", []))
             for a in runs if kernel_of(a.context) == kernel and a.profile in (GCC, PROFILE)}
    mine, theirs = (paths.get(p, {}).get(variant) for p in (PROFILE, GCC))
    if mine is None or theirs is None:
        return "(no disassembly)"
    return counted_words([f"`{w}`" for w in sites.extra_words(mine, theirs)]) or "-"


def clang_section(table: pd.DataFrame, facts: dict, runs: list[Analysed]) -> list[str]:
    """The clang page, or nothing for a run without clang builds."""
    if table.empty or not (table.profile == PROFILE).any():
        return []
    clang = next((a for a in runs if a.profile == PROFILE), None)
    what = clang.context.get("profile_what", "") if clang else ""
    out = ["## Built by clang as Android builds", "",
           f"The clang profile ({what}) beside the same kernels built by GCC (distro) in the "
           "same run. Instructions per disabled site under TCG `-icount`, beyond the loop "
           "without it, from `verdict.csv`; \"taken\": branches taken beyond that loop; "
           "\"loads\": a driver's fields read while off; \"calls\": functions called while "
           "off. The checks and layouts named below are read from each module's "
           "disassembly (`objdump-<arch>-<config>.txt.gz` of each run directory).", "",
           *beside_gcc(table), "",
           f"![the clang builds' sites]({PAGE_TO_RUN}/plots/"
           f"{'headline' if runs and runs[0].profile == PROFILE else 'clang'}.png)", ""]
    helpers = inline_helper_lines(table)
    out += ["## Mainline's inline helpers", "",
            *(["Mainline 7.3 reads a key's count without jump labels through a C helper of "
               "the kernel crate; CONFIG_RUST_INLINE_HELPERS (clang and rustc on one LLVM) "
               "links the helpers' bitcode into Rust's, for LLVM to inline:", "", *helpers]
              if helpers else ["No mainline site calls a helper while off in this run, or "
                               "no mainline kernel was built by clang."]), ""]
    if facts:
        out += ["## kCFI on the enabled path", "",
                "kCFI checks the target's type hash before each indirect call. With one probe "
                "on the event (the benchmark's enabled state), the checks each path passes "
                "on the way to it; with two or more, the event's iterator calls each probe "
                "indirectly and passes its check per probe. Beside them the instructions "
                "measured with a probe attached, net of each loop's baseline.", "",
                *kcfi_table(facts, runs), "",
                *[line for text in native_kcfi_lines(runs) for line in (text, "")],
                "## What full LTO changed", "",
                "Each module's C files are linked as one LLVM module: what crosses a file may "
                "be inlined. The event's iterator is defined in `tpbench_events.c`, beside "
                "`rust_do_trace_<event>()` and the helper; C's sites are in "
                "`tpbench_loops.c`, so only LTO can inline the iterator into them. Rust's "
                "objects are not in that link: the helper stays a call.", "",
                *lto_lines(facts, runs), ""]
        scs = shadow_stack_table(table, facts, runs)
        if scs:
            out += ["## The shadow call stack (arm64)", "",
                    "Each function that saves its return address also pushes it on the "
                    "shadow call stack (x18) and pops it from there before returning.", "",
                    *scs, ""]
    return out
