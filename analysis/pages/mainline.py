"""The mainline page: mainline's implementation beside the series, cause by cause."""

import pandas as pd

from analysis import codegen, sites, stats
from analysis.load import Analysed, kernel_of
from analysis.pages.profiles import SITE_KINDS
from analysis.stats import fmt
from analysis.words import PAGE_TO_RUN, counted_words, possessive, signed, toolchain_words


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
