"""The mainline page: mainline's implementation beside the series, cause by cause."""

import pandas as pd

from analysis import codegen, sites, stats
from analysis.load import Analysed, kernel_of, profile_of
from analysis.pages.profiles import SITE_KINDS
from analysis.stats import fmt
from analysis.verdict import cell
from analysis.words import (PAGE_TO_RUN, counted_words, native_of, possessive, signed,
                            toolchain_words)


# The series' tree built by mainline's compilers: beside the series and mainline it splits
# each difference into the compiler's part and the kernel's.
COMPILER_PROBE = "series-gcc14"


STATES_COMPARED = (("disabled", "off"), ("enabled", "probe attached"),
                   ("recording", "recording"))


def cause(series: float, middle: float | None, other: float) -> str:
    """Whose doing a difference between the series and the other kernel is, from the series'
    tree built by the other kernel's compilers (`middle`): what changes with the compiler
    alone is the compiler's, what changes after it the kernel's."""
    if abs(series - other) < 1e-6:
        return "-"
    if middle is None:
        return f"compiler or kernel {signed(other - series)}"
    parts = [f"compiler {signed(middle - series)}" if abs(middle - series) >= 1e-6 else "",
             f"kernel {signed(other - middle)}" if abs(other - middle) >= 1e-6 else ""]
    return ", ".join(p for p in parts if p)


def kernels_intro(main: "Analysed", other: "Analysed", probe: "Analysed | None") -> list[str]:
    """The heading and the paragraphs above one kernel's table: what it is, its compilers,
    whether the compiler's part can be told from the kernel's, what the states mean."""
    rel = PAGE_TO_RUN / other.run.relative_to(main.run)
    a, b = kernel_of(main.context), kernel_of(other.context)
    archs = [arch for arch, _ in stats.panels(other.summary)]
    out = [f"## {b.capitalize()} beside the {a}", "",
           f"The same module source on {b}: {other.context.get('kernel_what', b)} "
           f"(its run directory: [`{rel}`]({rel}/context.json)). Per call, net of each "
           "loop's baseline, in each state. Compilers: "
           + "; ".join(f"{arch}: {a} {toolchain_words(main.context, arch)}, {b} "
                       f"{toolchain_words(other.context, arch)}"
                       for arch in dict.fromkeys(archs)) + "."]
    if probe is not None:
        out += ["", f"`{COMPILER_PROBE}` is the {possessive(a)} very tree built by "
                f"{possessive(b)} compilers "
                f"({probe.context.get('kernel_what', '')}): what changes from {a} to it "
                f"is the compiler's doing, what changes from it to {b} the kernel's (its "
                "tracepoint code, and the Rust implementation). The last column gives "
                f"each part of the {b} - {a} difference."]
    else:
        out += ["", f"This run has no `{COMPILER_PROBE}` beside {a} and {b} (the "
                f"{possessive(a)} tree "
                f"built by {possessive(b)} compilers), so a difference is not split into the "
                "compiler's part and the kernel's: `COMPARE_KERNELS=\"mainline "
                f"{COMPILER_PROBE}\"` does."]
    out += ["", "With the event on (probe attached, recording) both languages leave the "
            "site for the kernel's C code: C's `__DO_TRACE`, Rust's call into "
            "`rust_do_trace_<event>()`, then the probe or the ring buffer. That code is "
            "the kernel's, and it changed between the two; the series adds nothing to it "
            "but that one function. With the event off, the site is the "
            "implementation's, and the notes under the table name what each kernel's "
            "disassembly runs that the other's does not."]
    head = [f"{state} ({a} / {COMPILER_PROBE} / {b})" if probe else f"{state} ({a} / {b})"
            for _, state in STATES_COMPARED]
    return out + ["", "| arch | config | variant | " + " | ".join(head) + " | whose |",
                  "|---|---|---|" + "---:|" * len(head) + "---|"]


def unmeasured_note(other: "Analysed", arch: str, config: str) -> list[str]:
    """Why the other kernel has nothing for a panel: not built (and why), or a panel that
    kernel cannot have (the run knows why even when it did not ask for it)."""
    b = kernel_of(other.context)
    why = other.context.get("not_built", {}).get(f"{arch}/{config}")
    known = other.context.get("kernels_impossible", {}).get(f"{arch}/{config}")
    if why:
        return [f"- {arch} {config}: nothing measured on {b}, {why}."]
    if known:
        return [f"- {arch} {config}: nothing measured on {b} (not asked for; it cannot be, "
                f"{known})."]
    return []


def variant_cells(v: str, frames: list, split: bool, b: str) -> tuple[list, list, tuple | None]:
    """One variant's cells per state over `frames` (the run's kernel, the compiler probe
    when `split`, the other kernel), the parts of each difference, and its disabled nets
    (run's, probe's or None, other's); None for that when the state was not measured."""
    cells, whose, off = [], [], None
    for state, words in STATES_COMPARED:
        values = [frame[(frame.variant == v) & (frame.state == state)] for frame in frames]
        if values[-1].empty:
            cells.append("")
            continue
        # A variant only the other kernel has (Rust where 6.12 has none): "-".
        nets = [x.net.iloc[0] if not x.empty else None for x in values]
        cells.append(" / ".join("-" if n is None else fmt(n) for n in nets))
        three = (nets[0], nets[1] if split else None, nets[-1])
        if three[0] is None:
            whose.append(f"{words}: {b} alone")
        else:   # unsplit where the probe has no row
            part = cause(*three)
            if part != "-":
                whose.append(f"{words}: {part}")
        if state == "disabled":
            off = three
    return cells, whose, off


def off_note(arch: str, config: str, v: str, off: tuple, a: str, b: str, paths_a: dict,
             paths_b: dict) -> list[str]:
    """What each kernel's disabled path runs that the other's does not, where their counts
    differ; the count helper's call named as the implementation's."""
    if off[0] is None or abs(off[0] - off[2]) < 1e-6 or v not in paths_a or v not in paths_b:
        return []
    only_a = counted_words([f"`{w}`" for w in sites.extra_words(paths_a[v], paths_b[v])])
    only_b = counted_words([f"`{w}`" for w in sites.extra_words(paths_b[v], paths_a[v])])
    helper = next((k for k, words in ((a, only_a), (b, only_b))
                   if f"call {codegen.MAINLINE_COUNT_HELPER}" in words), None)
    return [f"- {arch} {config} `{v}`, off: {fmt(off[0])} on {a}, {fmt(off[2])} on {b}; "
            f"only {a} runs {only_a or 'nothing more'}, only {b} {only_b or 'nothing more'}."
            + (f" The implementation: {helper}'s `static_branch_unlikely!` reads the key's "
               f"count through the C helper `{codegen.MAINLINE_COUNT_HELPER}()` without jump "
               "labels, a call per site; the series reads it inline (its patch 7)."
               if helper else "")]


def kernels_section(main: "Analysed", kernels: list["Analysed"]) -> list[str]:
    """Each site kind, in each state, on the run's kernel and on the other kernels beside it;
    each difference split into the compiler's part and the kernel's (when the series' tree
    built by mainline's compilers is among them), with the instructions that differ."""
    probe = next((k for k in kernels if kernel_of(k.context) == COMPILER_PROBE), None)
    out = []
    for other in [k for k in kernels if k is not probe]:
        a, b = kernel_of(main.context), kernel_of(other.context)
        out += kernels_intro(main, other, probe)
        notes = []
        for arch, config in stats.panels(pd.concat([main.summary, other.summary])):
            theirs = stats.rows(other.summary, arch=arch, config=config)
            if theirs.empty:
                notes += unmeasured_note(other, arch, config)
                continue
            frames = [stats.rows(k.summary, arch=arch, config=config)
                      for k in (main, probe, other) if k is not None]
            paths_a = sites.path_words(main.paths.get(f"{arch}-{config}", []))
            paths_b = sites.path_words(other.paths.get(f"{arch}-{config}", []))
            for _, variants in SITE_KINDS:
                for v in variants:
                    cells, whose, off = variant_cells(v, frames, probe is not None, b)
                    if off is None:
                        continue
                    out.append(f"| {arch} | {config} | `{v}` | " + " | ".join(cells)
                               + f" | {'; '.join(whose) or '-'} |")
                    notes += off_note(arch, config, v, off, a, b, paths_a, paths_b)
        out += ["", *notes, ""]
    return out


# The kernel with patches-mainline-series/ applied to mainline (issue 35).
MAINLINE_SERIES = "mainline-series"
# The rows of its table: the site, C's variant, Rust's.
SERIES_ROWS = (("one argument", "c_trace", "rust_trace"), ("driver-like", "c_txn", "rust_txn"),
               ("driver-like, if enabled", "c_txn", "rust_txn_lazy"),
               ("16 in a row, per site", "c_dense", "rust_dense"))
SERIES_KERNELS = ("series", "mainline", MAINLINE_SERIES)


def site_words(table: pd.DataFrame, **equal) -> str:
    """A disabled site as a verdict row gives it: its instructions per site, then the
    branches it takes and the functions it calls while off, where there are any."""
    instructions = cell(table, **equal)
    if instructions is None:
        return "-"
    taken = cell(table, "taken_per_site", **equal)
    calls = cell(table, "calls_while_off", **equal)
    return (fmt(instructions) + (f", {fmt(taken)} taken" if taken else "")
            + (f", calls `{calls}`" if calls else ""))


def native_cell(table: pd.DataFrame, **equal) -> str:
    return native_of(table, **equal) or "not run"


def enabled_net(kernels: list["Analysed"], kernel: str, **equal) -> float | None:
    """A variant's net instructions per call with a probe attached, on one kernel."""
    for k in kernels:
        if kernel_of(k.context) == kernel:
            found = stats.rows(k.summary, state="enabled", **equal)
            return None if found.empty else found.net.iloc[0]
    return None


def series_for_mainline(table: pd.DataFrame, kernels: list["Analysed"], profile: str) -> list[str]:
    """What patches-mainline-series/ changes: the disabled site on the 6.12 series, mainline
    and mainline with the series, each architecture and config the run measured mainline-series
    on; taken branches and calls beside the counts; natively x86_64's; the lazy site's cost
    with a probe attached."""
    mine = table[table.profile == profile] if "profile" in table else table
    if mine[mine.kernel == MAINLINE_SERIES].empty:
        return ["## What the series for mainline changes", "",
                f"This run did not measure `{MAINLINE_SERIES}` (mainline 7.3.4 with "
                "[`patches-mainline-series/`](../../../patches-mainline-series)): "
                f"`COMPARE_KERNELS=\"mainline {MAINLINE_SERIES}\"` does.", ""]
    ours = mine[mine.kernel == MAINLINE_SERIES]
    panels = list(dict.fromkeys(zip(ours.arch, ours.config)))
    out = ["## What the series for mainline changes", "",
           f"`{MAINLINE_SERIES}` is mainline 7.3.4 with the three patches of "
           "[`patches-mainline-series/`](../../../patches-mainline-series): the key's count read "
           "inline without jump labels (1), `<name>_enabled()` and `call_<name>()`, a call "
           "without a second key test for use inside it (2), and the disabled path laid out "
           "as the fall-through (3). Instructions per disabled site, under TCG -icount (exact), "
           "with the branches the site takes and the functions it calls while off where there "
           "are any; the 6.12 series for reference. C's site is mainline's.", "",
           "| arch | config | site | C | Rust, 6.12 series | Rust, mainline | "
           f"Rust, {MAINLINE_SERIES} |", "|---|---|---|---|---|---|---|"]
    for arch, config in panels:
        for site, c, rust in SERIES_ROWS:
            where = dict(arch=arch, config=config)
            cells = [site_words(mine, kernel="mainline", variant=c, **where)]
            cells += [site_words(mine, kernel=k, variant=rust, **where) for k in SERIES_KERNELS]
            out.append(f"| {arch} | {config} | {site} | " + " | ".join(cells) + " |")
    native = ours[ours.native_median.notna()]
    if not native.empty:
        unit = native.native_unit.iloc[0]
        out += ["", f"Natively, on the host CPU ({unit} per site, median and range over "
                "processes; `not run` where the site calls a function outside the module, "
                "which the native stage does not run):", "",
                "| config | site | C | Rust, mainline | "
                f"Rust, {MAINLINE_SERIES} |", "|---|---|---|---|---|"]
        for config in dict.fromkeys(native.config):
            for site, c, rust in SERIES_ROWS:
                where = dict(arch="x86_64", config=config)
                cells = [native_cell(mine, kernel="mainline", variant=c, **where),
                         native_cell(mine, kernel="mainline", variant=rust, **where),
                         native_cell(mine, kernel=MAINLINE_SERIES, variant=rust, **where)]
                out.append(f"| {config} | {site} | " + " | ".join(cells) + " |")
    lazy = []
    for arch, config in panels:
        where = dict(arch=arch, config=config, variant="rust_txn_lazy")
        before, after = (enabled_net(kernels, k, **where) for k in ("mainline", MAINLINE_SERIES))
        # The 6.12 series' patch 8 makes the same call_<name>(): its figure in the same build.
        series = enabled_net([k for k in kernels if profile_of(k.context) == profile],
                             "series", **where)
        if before is not None and after is not None:
            lazy.append(f"{arch} {config} {fmt(before)} -> {fmt(after)}"
                        + ("" if series is None else f" (6.12 series {fmt(series)})"))
    if lazy:
        out += ["", "With a probe attached, the driver-like site inside its `if` tests the "
                "key twice on mainline (it can only call `<name>()` there, which tests it "
                "again, without jump labels through `rust_helper_static_key_count()`) and "
                "once on "
                f"{MAINLINE_SERIES} (`call_<name>()`): net instructions per event, mainline -> "
                f"{MAINLINE_SERIES}: " + "; ".join(lazy) + "."]
    return out + [""]
