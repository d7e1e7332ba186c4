"""REPORT.md from one run directory; every number in it comes from that run's files."""

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis import codegen, sites, size, stats, validate
from analysis.plots import ordered
from kelf.rewrites import THUNKS, no_return_thunk
from common import console, matrix, records, rundir
from common.rundir import runner_gone

STATE_ORDER = matrix.STATES
# The detail pages live in <run>/report/: their links to the run's files go one level up.
PAGES_DIR = "report"
PAGE_TO_RUN = Path("..")


@dataclass(frozen=True)
class Analysed:
    """One build profile's run directory, read and summarised."""
    run: Path
    context: dict
    summary: pd.DataFrame
    paths: dict          # "<arch>-<config>" -> [variant, count, instructions] rows

    @property
    def profile(self) -> str:
        return profile_of(self.context)


def profile_of(context: dict) -> str:
    """The run's build profile; every run before profiles existed was tinyconfig's -Os."""
    return context.get("profile", "tiny")


def kernel_of(context: dict) -> str:
    """The run's kernel; every run before kernels existed was the series'."""
    return context.get("kernel", "series")


def profile_words(context: dict) -> str:
    what = context.get("profile_what") or "tinyconfig's -Os, no function tracer"
    kernel = kernel_of(context)
    return ("" if kernel == "series" else f"kernel **{kernel}** ({context['kernel_what']}), "
            ) + f"build profile **{profile_of(context)}** ({what})"


def build_words(context: dict) -> str:
    """What a heading says of how the numbers under it were built: the profile (and the
    kernel, when it is not the series' 6.12)."""
    kernel = kernel_of(context)
    return ("" if kernel == "series" else f"{kernel}, ") + f"build profile {profile_of(context)}"


# The site kinds the profiles are compared on: C's and Rust's site of each, and the helper.
SITE_KINDS = (("one argument", ("c_trace", "rust_trace", "rust_helper")),
              ("driver-like, three fields", ("c_txn", "rust_txn", "rust_txn_lazy")),
              ("16 sites in a row", ("c_dense", "rust_dense")))


def counted_words(words: list[str]) -> str:
    """`mov`, `mov`, `call` as "2 x `mov`, `call`", first-seen order."""
    counts = Counter(words)
    return ", ".join(w if counts[w] == 1 else f"{counts[w]} x {w}" for w in counts)


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


def possessive(name: str) -> str:
    return name + ("'" if name.endswith("s") else "'s")


def signed(x: float) -> str:
    # To the 2 decimals the tables print: a reader subtracting 597.24 from 608.24 gets 11,
    # whatever the residue below them (11.0038 from the unrounded slopes).
    x = round(x, 2)
    return ("+" if x > 0 else "") + fmt(x)


def tool_words(key: str, text: str) -> str:
    """"GCC 12.2.0", "clang 14.0.6", "rustc 1.96.0" from a tool's --version line: the version
    outside the parentheses ("gcc (Debian 12.2.0-14+deb12u1) 12.2.0"); the C compiler named
    by what it says it is (riscv64's "gcc" is clang)."""
    version = re.search(r"\d+\.\d+\.\d+", re.sub(r"\([^)]*\)", "", text))
    name = {"gcc": "clang" if "clang" in text else "GCC"}.get(key, key)
    return f"{name} {version.group(0)}" if version else ""


def toolchain_words(context: dict, arch: str) -> str:
    """"GCC 12.2.0, rustc 1.96.0, bindgen 0.60.1" from the versions context.json records."""
    tools = context.get("toolchain", {}).get(arch, {})
    return ", ".join(w for w in (tool_words(key, tools.get(key, ""))
                                 for key in ("gcc", "rustc", "bindgen")) if w)


def kernels_section(main: "Analysed", kernels: list["Analysed"]) -> list[str]:
    """Each site kind, in each state, on the run's kernel and on the other kernels beside it;
    each difference split into the compiler's part and the kernel's (when the series' tree
    built by mainline's compilers is among them), with the instructions that differ."""
    probe = next((k for k in kernels if kernel_of(k.context) == COMPILER_PROBE), None)
    out = []
    for other in [k for k in kernels if k is not probe]:
        rel = PAGE_TO_RUN / other.run.relative_to(main.run)
        a, b = kernel_of(main.context), kernel_of(other.context)
        archs = [arch for arch, _ in stats.panels(other.summary)]
        out += [f"## {b.capitalize()} beside the {a}", "",
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
        out += ["", "| arch | config | variant | " + " | ".join(head) + " | whose |",
                "|---|---|---|" + "---:|" * len(head) + "---|"]
        notes = []
        not_built = other.context.get("not_built", {})
        for arch, config in stats.panels(pd.concat([main.summary, other.summary])):
            theirs = stats.rows(other.summary, arch=arch, config=config)
            if theirs.empty:
                why = not_built.get(f"{arch}/{config}")
                known = other.context.get("kernels_impossible", {}).get(f"{arch}/{config}")
                if why:
                    notes.append(f"- {arch} {config}: nothing measured on {b}, {why}.")
                elif known:
                    # A run that did not ask for it records nothing of it: the run knows why
                    # it could not have been measured.
                    notes.append(f"- {arch} {config}: nothing measured on {b} (not asked for; "
                                 f"it cannot be, {known}).")
                continue
            mine = stats.rows(main.summary, arch=arch, config=config)
            middle = (stats.rows(probe.summary, arch=arch, config=config)
                      if probe is not None else None)
            paths_a = sites.path_words(main.paths.get(f"{arch}-{config}", []))
            paths_b = sites.path_words(other.paths.get(f"{arch}-{config}", []))
            for _, variants in SITE_KINDS:
                for v in variants:
                    cells, whose, off = [], [], None
                    for state, words in STATES_COMPARED:
                        values = [frame[(frame.variant == v) & (frame.state == state)]
                                  for frame in (mine, middle, theirs) if frame is not None]
                        if values[-1].empty:
                            cells.append("")
                            continue
                        # A variant only the other kernel has (Rust where 6.12 has none): "-".
                        nets = [x.net.iloc[0] if not x.empty else None for x in values]
                        cells.append(" / ".join("-" if n is None else fmt(n) for n in nets))
                        three = (nets[0], nets[1] if probe is not None else None, nets[-1])
                        if three[0] is None:
                            whose.append(f"{words}: {b} alone")
                        else:   # unsplit where the probe has no row
                            part = cause(*three)
                            if part != "-":
                                whose.append(f"{words}: {part}")
                        if state == "disabled":
                            off = three
                    if off is None:
                        continue
                    out.append(f"| {arch} | {config} | `{v}` | " + " | ".join(cells)
                               + f" | {'; '.join(whose) or '-'} |")
                    if (off[0] is not None and abs(off[0] - off[2]) >= 1e-6
                            and v in paths_a and v in paths_b):
                        only_a = counted_words([f"`{w}`" for w in
                                                sites.extra_words(paths_a[v], paths_b[v])])
                        only_b = counted_words([f"`{w}`" for w in
                                                sites.extra_words(paths_b[v], paths_a[v])])
                        helper = next((k for k, words in ((a, only_a), (b, only_b))
                                       if f"call {codegen.MAINLINE_COUNT_HELPER}" in words), None)
                        notes.append(f"- {arch} {config} `{v}`, off: {fmt(off[0])} on {a}, "
                                     f"{fmt(off[2])} on {b}; only {a} runs "
                                     f"{only_a or 'nothing more'}, only {b} "
                                     f"{only_b or 'nothing more'}."
                                     + (f" The implementation: {helper}'s "
                                        "`static_branch_unlikely!` reads the key's count "
                                        f"through the C helper `{codegen.MAINLINE_COUNT_HELPER}()` "
                                        "without jump labels, a call per site; the series reads "
                                        "it inline (its patch 7)." if helper else ""))
        out += ["", *notes, ""]
    return out


fmt = stats.fmt


def ci(lo: float, hi: float) -> str:
    if pd.isna(lo):
        return ""
    return "exact" if abs(hi - lo) < 1e-9 else f"{lo:.2f}..{hi:.2f}"


def verdict_table(summary: pd.DataFrame) -> str:
    head = ("| arch | config | state | variant | per call | unit | 95% CI | net of baseline | "
            "site cost vs C | verdict |\n|---|---|---|---|---:|---|---|---:|---:|---|\n")
    rows = []
    for arch, config in stats.panels(summary):
        for state in STATE_ORDER:
            part = stats.rows(summary, arch=arch, config=config, state=state)
            for variant in ordered(part.variant):
                r = part[part.variant == variant].iloc[0]
                rows.append(f"| {arch} | {config} | {state} | `{variant}` | {fmt(r.per_call)} | "
                            f"{r.unit} | {ci(r.ci_lo, r.ci_hi)} | {fmt(r.net)} | "
                            f"{fmt(r.diff_c)} | {r.verdict} |")
    return head + "\n".join(rows) + "\n"


def outlier_notes(summary: pd.DataFrame) -> str:
    mild, severe = int(summary.mild_outliers.sum()), int(summary.severe_outliers.sum())
    first = summary[summary.first_rep_outlier]
    text = (f"Tukey outliers among the per-call samples at the largest N: {mild} mild "
            f"(beyond 1.5 IQR), {severe} severe (beyond 3 IQR).")
    if len(first):
        names = ", ".join(f"{r.arch}/{r.config}/{r.state}/{r.variant}" for r in first.itertuples())
        text += f" Warning: the first repetition is an outlier in {names}."
    else:
        text += " The first repetition is not an outlier anywhere."
    return text


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
              "tpbench_txn(...) }` (the series' patch 8; on mainline the module writes the same "
              "key test itself): its arguments are inside the `if`, so no compiler may read "
              "them first. " if guest.variant.eq("rust_txn_lazy").any() else "")
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


# The sites whose recording cost is compared: C's, Rust's, and the driver-like event's.
RECORDING_PAIRS = (("tpbench_hit", "c_trace", "rust_trace"), ("tpbench_txn", "c_txn", "rust_txn"),
                   ("tpbench_txn", "c_txn", "rust_txn_lazy"))


def recording_section(summary: pd.DataFrame, records_checked: str) -> list[str]:
    """What a call costs while its event records into the ring buffer, C against Rust."""
    guest = stats.rows(stats.guest(summary), state="recording")
    rows, shares = [], []
    for arch, config in stats.panels(guest):
        mine = stats.rows(guest, arch=arch, config=config)
        for event, c, rust in RECORDING_PAIRS:
            rc, rr = (stats.rows(mine, variant=v) for v in (c, rust))
            if rc.empty or rr.empty or pd.isna(rc.net.iloc[0]) or pd.isna(rr.net.iloc[0]):
                continue
            cn, rn = rc.net.iloc[0], rr.net.iloc[0]
            extra = round(rn - cn, 1) + 0.0          # + 0.0: no "-0.0"
            shares.append(round(100 * extra / cn, 1) + 0.0)
            rows.append(f"| {arch} | {config} | `{event}` | `{rust}` | {cn:.1f} | {rn:.1f} | "
                        f"{extra:+.1f} | {shares[-1]:+.1f}% | {rc.unit.iloc[0]} |")
    if not rows:
        return []
    return ["## Recording into the ring buffer", "",
            "State `recording`: the guest's init writes 1 to tracefs' "
            "`events/tpbench/enable`, as a user turns tracing on, and then has the module "
            "time its loops (`tpbench/control` in debugfs), so each call writes one record. "
            "Per call, net of "
            "the loop without the site; under icount the cost includes the ring buffer's "
            "page changes, spread over the calls, so it is not a whole number:", "",
            "| arch | config | event | Rust site | C | Rust | Rust minus C | as a share of C's "
            "| unit |",
            "|---|---|---|---|---:|---:|---:|---:|---|", *rows, "",
            f"Rust minus C is {min(shares):+.1f}% to {max(shares):+.1f}% of C's cost per "
            "record" + (", of both signs" if min(shares) < 0 < max(shares) else "") + ": where "
            "Rust's site costs more, the extra is the call into `rust_do_trace_<event>` that "
            "the enabled state shows too, small next to writing the record.", "",
            records_checked, ""]


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


def size_section(run: Path, sizes: dict, rel: Path) -> list[str]:
    """Bytes per site and per event, from the symbol sizes of the modules the guests ran
    (`sizes`: size.run_sizes)."""
    out = []
    for (arch, config), rows in sizes.items():
        for r in rows:
            out.append(f"| {arch} | {config} | `{r['variant']}` | {r['sites']} | "
                       f"{fmt(r['site_text'])} | {fmt(r['jump_entry'])} | "
                       f"**{fmt(r['site_text'] + r['jump_entry'])}** | "
                       f"{r['event_c_text']} | {r['kind_text'] or ''} |")
    if not out:
        return []
    return ["## Code size: what each site and each event costs in bytes", "",
            "From the symbol sizes of the modules measured above. *Text per site* is the loop "
            "function with the site minus its baseline loop: the disabled-path instructions, "
            "the enabled block (inline after the site in C, a cold block of the same function "
            "in Rust) and what the compiler arranged around them. An inline site also has one "
            "`__jump_table` entry with CONFIG_JUMP_LABEL. *Once per event*: the functions "
            "`TRACE_EVENT()` generates in C (`__traceiter_`, `__probestub_`, "
            "`trace_event_raw_event_`, `perf_trace_`, `trace_raw_output_`), which C and Rust "
            "sites share, and what the kind of site adds once: for Rust "
            "`rust_do_trace_<event>` (with the helper, also the C helper function; with the "
            "count call, the count reader), for C in a file with many sites the out-of-line "
            "copy of `trace_<event>()` when GCC made one. A loop with 16 sites shares its "
            "growth among them. A driver with k sites of one event pays the once columns "
            "plus k times the per-site total.", "",
            *([f"![bytes against sites]({rel}/plots/size.png)", ""]
              if (run / "plots" / "size.png").exists() else []),
            "| arch | config | loop | sites | text per site (B) | `__jump_table` per site (B) | "
            "per site in all (B) | once per event, C (B) | once, this kind of site adds (B) |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|", *out, ""]


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


def headline(summary: pd.DataFrame, context: dict, paths: dict) -> list[str]:
    """The disabled site's cost per call inside the guest, C against Rust against the helper,
    with what the disassembly says each runs. (Native time is the native page's, as a spread
    over processes.)"""
    costs = sites.site_costs(stats.guest(summary))
    if costs.empty:
        return []
    out = ["| arch | config | site | per call |", "|---|---|---|---|"]
    spread = sites.over_placements(costs)
    for arch, config in stats.panels(costs):
        for label, variant in sites.SITES:
            guest = stats.rows(costs, arch=arch, config=config, variant=variant)
            if guest.empty:
                continue
            g = sites.cost_text(guest.cost.iloc[0], guest.lo.iloc[0], guest.hi.iloc[0],
                                guest.unit.iloc[0])
            out.append(f"| {arch} | {config} | {label} | {g} |")
    out.append("")
    for arch, config in stats.panels(summary):
        sentence = explain_pair(costs, spread, arch, config, paths.get(f"{arch}-{config}"))
        if sentence:
            out.append(f"- **{arch} {config}**: {sentence}")
    out += ["", "A site's cost is its trace loop minus the same loop without the site "
            "(`c_base`, `rust_base`), so it is the site's own, NOP included; the helper is "
            "measured against `rust_base`. Each language has its own baseline because the two "
            "compilers shape the same loop differently (see the paths below). Runs made before those loops existed use the empty "
            "loops instead.", ""]
    return out


def instruction_check(run: Path, summary: pd.DataFrame, context: dict) -> list[str]:
    """With hardware counters, the native stage also counted retired instructions: each
    variant's per-call count must equal the guest's icount (and so the disassembly's)."""
    files = sorted(run.glob("native-instructions-*.csv"))
    if not files:
        reasons = sorted({i.get("perf", "") for v in context.get("native", {}).values()
                          for i in v.values()})
        return [f"Retired instructions were not counted natively: no hardware counters "
                f"({'; '.join(reasons)}); the instruction counts above are icount's.", ""]
    guest = stats.rows(summary, accel="tcg", state="disabled")
    lines = []
    for f in files:
        tag = f.stem.removeprefix("native-instructions-")
        counts = pd.read_csv(f).rename(columns={"instructions": "cycles"})
        for variant, g in counts.groupby("variant"):
            want = guest[(guest.variant == variant) & [tag.startswith(f"{a}-{c}-") for a, c in
                                                       zip(guest.arch, guest.config)]]
            got = stats.floor_slope(g[g.n > 0])
            if len(want) and abs(got - want.per_call.iloc[0]) > 0.01:
                lines.append(f"`{variant}` ({tag}): {got:.2f} retired instructions per call "
                             f"natively, {fmt(want.per_call.iloc[0])} under icount")
    if lines:
        return ["**Instruction counts differ** between the host's counters and icount: "
                + "; ".join(lines) + ".", ""]
    return ["Retired instructions per call, counted by the host's hardware counters, equal "
            "the icount per-call counts for every variant and placement.", ""]


def native_section(run: Path, summary: pd.DataFrame, context: dict) -> list[str]:
    """Instructions (guest) beside native time for every variant with a native measurement,
    at each placement of .text, with the noise threshold and the alignment finding."""
    native = stats.native(summary)
    if native.empty:
        return []
    about = context.get("native_about", {})
    hz = native_hz(context)
    accels = sorted(set(native.accel), key=lambda a: int(a.partition("+")[2] or 0))
    unit = native.unit.iloc[0]
    infos = [i for v in context.get("native", {}).values() for i in v.values()]
    counters = sorted({i["counter"] for i in infos})
    perf = sorted({i.get("perf", "") for i in infos})
    matrix = about.get("matrix", {})
    out = ["## Native: the module's own code on the host CPU", "",
           "The `.text` of each measured x86_64 module, loaded into a host process with its "
           "relocations applied (every key reads disabled; every call out of the module is a "
           "trap, and none was reached)"
           + (" and what the host's kernel writes at load time (the Mitigations list of "
              "[the guest page](guest.md))"
              if about.get("rewrites") else "")
           + f", timed with the same matrix as the guest (N = "
           f"{', '.join(map(str, matrix.get('ns', [])))}; {matrix.get('reps')} repetitions "
           f"after {matrix.get('warmup')} warm-up)"
           + (f", {about['rounds']} times over, in rounds through every module and placement, "
              "with the repetitions of all rounds pooled" if about.get("rounds", 1) > 1 else "")
           + ", pinned to one CPU, between "
           f"`lfence`-ordered TSC reads. Host CPU: {about.get('host_cpu')}; counters: "
           f"{', '.join(counters)} (perf_event_open: {'; '.join(perf)}); unit: **{unit}**"
           + (f", {hz / 1e6:.2f} MHz ({'the host kernel' if about.get('tsc_hz_kernel') else 'calibrated'})"
              if hz else "") + ". "
           "The per-call cost is the slope through the fastest repetition at each N; the noise "
           f"threshold of each placement is the 95% interval of an A/A comparison (`{stats.AA_TWIN}` "
           f"is `{stats.REFERENCE}` timed a second time in the same run).", ""]
    out += instruction_check(run, summary, context)
    if (run / "plots" / "native.png").exists():
        out += [f"![each site per process and placement]({PAGE_TO_RUN}/plots/native.png)", ""]
    for arch, config in stats.panels(native):
        mine = stats.rows(native, arch=arch, config=config, state="disabled")
        guest = stats.rows(stats.guest(summary), arch=arch, config=config, state="disabled")
        head = " | ".join(f"{a} ({'kernel placement' if a == 'native' else '.text ' + a[6:] + ' B'})"
                          for a in accels)
        out += [f"### {arch} {config}, returns as this host's kernel sends them: "
                f"{thunk_words(context, why=False)}", "",
                f"| variant | guest | {head} | spread over placements |",
                "|---|---|" + "---|" * len(accels) + "---|"]
        for variant in ordered(mine.variant):
            g = guest[guest.variant == variant]
            cells = []
            values = []
            for a in accels:
                r = mine[(mine.variant == variant) & (mine.accel == a)]
                if r.empty:
                    cells.append("")
                    continue
                values.append(r.per_call.iloc[0])
                cells.append(f"{r.per_call.iloc[0]:.2f} ({ci(r.ci_lo.iloc[0], r.ci_hi.iloc[0])})")
            gtext = "" if g.empty else f"{fmt(g.per_call.iloc[0])} {g.unit.iloc[0]}"
            spread = f"{max(values) - min(values):.2f}" if values else ""
            out.append(f"| `{variant}` | {gtext} | {' | '.join(cells)} | {spread} |")
        noise = {a: mine[mine.accel == a].noise.iloc[0] for a in accels if (mine.accel == a).any()}
        out += ["", "A/A interval (the 95% interval of the twins' difference, pooled over "
                "processes, per placement; REPORT.md's A/A noise is instead the largest gap "
                "between the twins in any one process): "
                + ", ".join(f"{a} ±{v:.3f}" for a, v in noise.items())
                + f" {unit} per call.", ""]
        out += alignment_finding(mine, noise, unit)
    return out


def thunk_label(name: str | None) -> str:
    """How a return thunk is named beside a figure."""
    if name is None:
        return "a return thunk not reproduced here"
    return "plain `ret`" if name == "ret" else f"`{THUNKS[name][0]}`"


def thunk_words(context: dict, why: bool = True) -> str:
    """The return the native figures of samples.csv ran through: the host kernel's choice
    (and why, from its vulnerabilities lines)."""
    chosen = context.get("native_about", {}).get("host_thunk")
    if chosen is None:
        return "plain `ret` (the run predates recording the choice)"
    return thunk_label(chosen["name"]) + (f" ({chosen['why']})" if why else "")


def alignment_finding(mine: pd.DataFrame, noise: dict, unit: str) -> list[str]:
    """Which variants' per-call cost moves with the placement of .text beyond the noise,
    and whether any site verdict changes with it."""
    moved = []
    for variant in ordered(mine.variant):
        rows = mine[mine.variant == variant]
        if len(rows) < 2:
            continue
        spread = rows.per_call.max() - rows.per_call.min()
        if spread > 2 * max(noise.values()):
            lo, hi = rows.loc[rows.per_call.idxmin()], rows.loc[rows.per_call.idxmax()]
            moved.append(f"`{variant}` by {spread:.2f} ({lo.accel} {lo.per_call:.2f}, "
                         f"{hi.accel} {hi.per_call:.2f})")
    verdicts = {}
    for r in mine[mine.variant.isin(["rust_trace", "rust_helper"])].itertuples():
        kind = next((k for k in ("more", "less", "matches", "within noise") if k in r.verdict),
                    r.verdict)
        verdicts.setdefault(r.variant, set()).add(
            {"more": "costs more", "less": "costs less", "matches": "matches C"}.get(kind, kind))
    text = ("Alignment: " + ("the per-call cost depends on where `.text` sits in its page, "
                             "beyond twice the largest noise threshold, for " + "; ".join(moved)
                             if moved else "no variant's per-call cost moves with the placement "
                             "of `.text` beyond twice the largest noise threshold") + ". ")
    for variant, seen in sorted(verdicts.items()):
        text += (f"`{variant}` against C: {' / '.join(sorted(seen))} across placements. ")
    return [text.strip(), ""]


def sources(summary: pd.DataFrame, context: dict) -> list[str]:
    """Where this run's numbers come from, and which sources it lacks and why."""
    out = ["Sources in this run:", ""]
    for name, c in context["configs"].items():
        unit = stats.unit_of(c["accel"])
        out.append(f"- {name}: guest under {c['accel'].upper()} ({unit}); {c['accel_reason']}")
    native = stats.native(summary)
    done = {f"{a}/{c}" for a, c in stats.panels(native)} if not native.empty else set()
    for name in context["configs"]:
        if name in done:
            out.append(f"- {name}: native on the host CPU ({native.unit.iloc[0]}), at the "
                       f"kernel's placement and {len(set(native.accel)) - 1} shifted ones")
        else:
            out.append(f"- {name}: no native measurement (the native stage runs modules of "
                       "the host's architecture, x86_64, only)")
    return out + [""] + mitigations(context)


# The vulnerabilities files whose choice decides what a call, a return or an indirect call
# costs in a module's code.
CALL_PATH_VULNERABILITIES = ("spectre_v2", "retbleed", "spec_rstack_overflow",
                             "indirect_target_selection")


def call_path_words(vulns: dict[str, str]) -> str:
    return "; ".join(f"{k}: {vulns[k]}" for k in CALL_PATH_VULNERABILITIES if k in vulns)


def mitigations(context: dict) -> list[str]:
    """What each guest's kernel, and the host's for the native stage, chose against the CPU
    vulnerabilities that touch a call's path, and what that means for the helper's call/ret."""
    out = []
    for name, c in context["configs"].items():
        vulns = c.get("vulnerabilities")
        if not vulns or not name.startswith("x86_64/"):
            continue
        said = call_path_words(vulns)
        ret = ("so it patched every `jmp __x86_return_thunk` back to `ret`: the helper's "
               "call and return are a plain `call` and `ret`"
               if no_return_thunk(vulns) else
               "so every return goes through a return thunk: the helper's `ret` is a jump "
               "to it and its own return (the codegen walk counts `ret`, and would fail)")
        out.append(f"- {name} guest kernel, for QEMU's CPU model: {said}; {ret}. Retpolines "
                   "change indirect calls alone.")
    about = context.get("native_about", {})
    if about.get("rewrites"):
        said = call_path_words(about.get("host_vulnerabilities", {}))
        applied = [f"{section} ({r['action']})" for section, r in about["rewrites"].items()
                   if r["action"] not in ("refuse", "keep")]
        refused = [f"{where} {v}: {why}" for where, vs in about.get("refused", {}).items()
                   for v, why in vs.items()]
        out.append(f"- native: the host's kernel says {said}; its returns: "
                   f"{thunk_words(context)}. The loader wrote what that "
                   f"kernel writes at load time: {', '.join(applied) or 'nothing'}; "
                   + (f"refused: {'; '.join(refused)}." if refused else
                      "no variant reached a site it does not reproduce."))
    return (["Mitigations (the kernels' choices at boot, from "
             "/sys/devices/system/cpu/vulnerabilities):", "", *out, ""] if out else [])


# What each of the module's KTAP tests checks, by name; a run's report lists the tests its
# results files report, so it never describes a check that run did not make.
KTAP_TESTS = {
    "rust_static_branch_follows_key": "the Rust static branch follows the key (off, on with a "
                                      "probe registered, off again)",
    "key_off_no_hits": "with a probe attached and the key forced off, no variant's site calls it",
    "no_probe_no_hits": "with no probe attached, the probe counts no hits (a check that cannot "
                        "fail: nothing counts without a probe; later runs replace it)",
    "probe_sees_every_call": "with the probe attached, every firing variant delivers exactly N "
                             "hits with the right arguments",
    "timing_disabled": "the timing with the tracepoint disabled completed and fit the buffer",
    "timing_enabled": "the timing with the tracepoint enabled completed and fit the buffer",
    "timing_recording": "the module's events were on (enabled in tracefs by the guest's "
                        "init) when it was asked to time them recording, and the timing "
                        "completed and fit the buffer",
}


def module_checks(run: Path) -> list[str]:
    """The module's own KTAP tests as this run's results files report them."""
    seen: dict[str, list[str]] = {}
    files = list(rundir.guest_files(run, "results").values())
    for f in files:
        for _, name, status in console.parse_ktap(f.read_text(errors="replace").splitlines()).tests:
            seen.setdefault(name, []).append(status)
    if not seen:
        return ["- The run's results files report no KTAP tests of the module."]
    out = [f"- The module's own KTAP tests, as the {len(files)} results files of this run "
           "report them:"]
    for name, statuses in seen.items():
        where = ("every config" if len(statuses) == len(files) else
                 f"the {len(statuses)} configs that ran it (a module without Rust has no such "
                 "test)")
        verdict = f"ok in {where}" if set(statuses) == {"ok"} else "**failed** in some config"
        out.append(f"  - `{name}`: {KTAP_TESTS.get(name, 'no description')}; {verdict}.")
    return out


def record_check(run: Path, context: dict) -> dict:
    """The record check (common/records.py) made again on each guest's results file: the
    trace dumps in it, against the variants that guest ran."""
    out = {"guests": 0, "checked": 0, "on": 0, "off": 0, "calls": set(), "problems": []}
    for name, c in context["configs"].items():
        out["guests"] += 1
        path = rundir.guest_file(run, "results", *name.split("/"))
        lines, _ = console.whole_lines(path.read_text(errors="replace") if path.exists() else "")
        _, dumps = records.split_results(lines)
        if not dumps:
            continue
        variants = next((a.split("=", 1)[1].split(",") for a in c.get("module_params", [])
                         if a.startswith("variants=")), matrix.VARIANTS)
        summary, problems = records.check(dumps, variants)
        out["checked"] += 1
        out["problems"] += [f"{name}: {p}" for p in problems]
        for state in ("on", "off"):
            out[state] += sum(v["records"] for v in summary.get(state, {}).values())
            out["calls"] |= {v["calls"] for v in summary.get(state, {}).values()}
    return out


def record_words(check: dict) -> str:
    """One sentence on what the record check found; the report says nothing it did not."""
    if not check["checked"]:
        return ("The records were not read back in this run (its guests predate the record "
                "check).")
    if check["problems"]:
        return (f"The record check **failed**: {len(check['problems'])} problems, the first: "
                f"{check['problems'][0]}.")
    calls = " or ".join(map(str, sorted(check["calls"])))
    return ("The records were read back from the ring buffer (each guest copies tracefs' "
            "`trace` into its results file; `common/records.py` checks it): in "
            + (f"each of the {check['guests']} guests" if check["checked"] == check["guests"]
               else f"{check['checked']} of the {check['guests']} guests (the others predate "
               "the check)")
            + f", each variant's {calls} calls left exactly the records "
            "its sites write, in call order, with the values passed (`tpbench_hit`'s index; "
            "`tpbench_txn`'s id, flags and size, and one address per transaction, the same "
            "from C and from Rust, spaced as in the array), "
            f"{check['on']} records in all with the events on, {check['off']} with them off.")


def doctest_checks(context: dict) -> list[str]:
    """The kernel crate's doctests, which KUnit ran at each guest's boot, as context.json
    records them; the series' macro examples named one by one."""
    if not any("doctests" in c for c in context["configs"].values()):
        return ["- This run did not record the kernel crate's doctests (runs before they "
                "were enabled)."]
    out = []
    for name, c in context["configs"].items():
        d = c.get("doctests")
        fragments = "".join(c.get("fragments", {}).values())
        if d is None and fragments and "CONFIG_RUST=y" not in fragments:
            out.append(f"- {name}: a kernel without Rust (none in 6.12 for this "
                       "architecture), so no doctests.")
            continue
        if d is None:
            out.append(f"- {name}: this run did not record the kernel crate's doctests.")
            continue
        ours = ", ".join(f"`{t['location']}` {t['status']}" for t in d["series"]) or "none ran"
        out.append(f"- {name}: the kernel crate's doctests (KUnit at boot): {d['passed']} "
                   f"passed, {d['failed']} failed, {d['skipped']} skipped; the series' "
                   f"examples: {ours}.")
    return out


def native_hz(context: dict) -> float | None:
    """The TSC frequency for converting native ticks: the host kernel's own value where it
    was readable, the harness's calibration otherwise."""
    about = context.get("native_about") or {}
    if about.get("tsc_hz_kernel"):
        return float(about["tsc_hz_kernel"])
    for per_shift in (context.get("native") or {}).values():
        for info in per_shift.values():
            return float(info["tsc_hz_calibrated"])
    return None


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
         ("mainline", "Mainline beside the series"),
         ("profiles", "Build profiles side by side"),
         ("native", "Native: the module's own code on the host CPU"),
         ("driver", "Arguments read from a driver's structure"),
         ("dense", "Many sites in one function"),
         ("recording", "Recording into the ring buffer"),
         ("size", "Code size: bytes per site and per event"),
         ("paths", "What each disabled path runs"),
         ("codegen", "Generated code and its checks"),
         ("method", "Method, provenance, reproduction"))


def thunk_section(thunks: pd.DataFrame) -> list[str]:
    """Every variant's native cost under each return thunk: median (min..max) over processes
    and placements, a column per thunk."""
    out = ["## Under each return thunk", "",
           "Every return of the module sent where a kernel with that mitigation sends it, on "
           "this host's CPU (the thunks' own code: `runner/thunks.py`); the host kernel's own "
           "marked with *. Per call, the site's loop minus its baseline: median (min..max) over "
           "processes and placements; the A/A noise of each thunk's processes last.", ""]
    for (arch, config), mine in thunks.groupby(["arch", "config"], sort=False):
        names = list(dict.fromkeys(mine.thunk))
        host = set(mine[mine.host.astype(str) == "True"].thunk)
        out += [f"### {arch} {config}", "",
                "| variant | " + " | ".join(f"{t}{' *' if t in host else ''}" for t in names)
                + " |", "|---|" + "---:|" * len(names)]
        for variant in ordered(mine.variant.unique()):
            cells = []
            for t in names:
                r = mine[(mine.variant == variant) & (mine.thunk == t)]
                cells.append("" if r.empty else f"{r.native_median.iloc[0]:.2f} "
                             f"({r.native_min.iloc[0]:.2f}..{r.native_max.iloc[0]:.2f})")
            out.append(f"| `{variant}` | " + " | ".join(cells) + " |")
        noise = [mine[mine.thunk == t].native_noise.iloc[0] for t in names]
        out.append("| A/A noise | " + " | ".join("" if pd.isna(n) else f"{n:.2f}" for n in noise)
                   + " |")
        out.append("")
    return out


def process_table(processes: pd.DataFrame, unit: str) -> list[str]:
    """Each native process's cost of each site (the median over its placements of .text):
    the spread a reader's own run may land anywhere in."""
    if processes is None or processes.empty:
        return []
    out = ["## Between processes", "",
           "Each round of the native stage is a new process. Per process, the site's cost "
           f"(its loop minus its baseline, {unit} per call), the median over the placements of "
           "`.text`; then the median and range over every process and placement, as REPORT.md "
           "gives them.", ""]
    rounds = sorted(processes["round"].unique())
    for (arch, config), mine in processes.groupby(["arch", "config"], sort=False):
        out += [f"### {arch} {config}", "",
                "| variant | " + " | ".join(f"process {r + 1}" for r in rounds)
                + " | median | range |", "|---|" + "---:|" * (len(rounds) + 2)]
        for variant in ordered(mine.variant.unique()):
            g = mine[mine.variant == variant]
            per = g.groupby("round").cost.median()
            out.append(f"| `{variant}` | " + " | ".join(
                f"{round(per[r], 2) + 0.0:.2f}" if r in per else "" for r in rounds)
                + f" | {round(g.cost.median(), 2) + 0.0:.2f} | {g.cost.min():.2f}.."
                f"{g.cost.max():.2f} |")
        out.append("")
    return out


def pages(run: Path, everything: pd.DataFrame, context: dict, checks: dict[str, str],
          repo_root: Path, paths=None, sizes=None, others=(), processes=None,
          thunks=None) -> dict[str, str]:
    """The detail pages of a run (<run>/report/<name>.md), by name; a page with nothing to
    say for this run is left out. `others` are its further build profiles and kernels
    (Analysed); `thunks` its native costs per return thunk (analysis.verdict.thunk_costs)."""
    summary = stats.guest(everything)
    accel = sorted({c["accel"] for c in context["configs"].values()})
    main = Analysed(run, context, everything, paths or {})
    profiles = [o for o in others if kernel_of(o.context) == kernel_of(context)]
    kernels = [o for o in others if kernel_of(o.context) != kernel_of(context)]
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
    body["mainline"] = kernels_section(main, kernels)
    body["profiles"] = [line for other in profiles for line in profiles_section(main, other)]
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


def method_lines(run: Path, context: dict, profiles, kernels, others, repo_root: Path,
                 records_checked: str) -> list[str]:
    """How the numbers were made, where every input came from, and the commands again."""
    lines = [
        "## Method",
        "",
        "- `bench-module/` is one module of C and Rust objects with its own trace event. Each "
        "variant is a `noinline` loop that calls its site N times with the loop index as "
        "argument (the list is `bench-module/tpbench_variants.h`): "
        + ", ".join(f"`{v.name}` ({v.what})" for v in matrix.VARIANT_TABLE) + ".",
        "- States: " + ", ".join(f"`{s.name}` ({s.what})" for s in matrix.STATE_TABLE) + ".",
        *profile_method(context, profiles),
        "- One sample is one call of a loop function, with interrupts off, between two ordered "
        "reads of the cycle counter (x86_64: `rdtsc_ordered()`; arm64: PMCCNTR_EL0 between "
        "`isb`s; arm: its 32-bit PMCCNTR, read with `mrc` between `isb`s; riscv64: the "
        "`cycle` CSR; loongarch64: the stable counter, `rdtime.d`).",
        "- The per-call cost is the least-squares slope, over N, of the fastest repetition at "
        "each N (N=0 left out: there the Rust loops return before entering the loop), so the "
        "call and timer overhead drops out. The fastest, because what else a machine does "
        "can only slow a repetition down; under TCG -icount every repetition is the same and "
        "this is the plain slope. Its 95% interval comes from 2000 bootstrap resamples of the "
        "repetitions at each N.",
        "- Under TCG with `-icount shift=0,sleep=off` QEMU's virtual clock advances 1 ns per "
        "guest instruction; the x86 TSC and the arm64 and arm cycle counters (1 GHz in QEMU) "
        "follow it, and riscv64's `cycle` CSR is QEMU's instruction count itself, so costs are "
        "instruction counts and repeat exactly; the codegen check compares them with the "
        "instructions counted in the disassembly. Under KVM they are cycles.",
        "- Recording is not a whole number of instructions per call: the ring buffer changes "
        "page every so many records, and that cost is spread over the calls. Its slope is "
        "still exact for the matrix it ran; a difference of less than one instruction per "
        "call between two such slopes is reported as no difference.",
        "- Natively, each round of the native stage is a new process, and a site's cost moves "
        "between processes: the report gives the median and the range over processes and "
        "placements, and calls a site's cost not resolved when some process put it within "
        "the A/A noise (`aa_c_trace`, the C site timed a second time in the same process).",
        *coarse_counters(context),
        *module_checks(run),
        f"- {records_checked}",
        *doctest_checks(context),
        "",
        "## Provenance",
        "",
        f"- run: `{context['run_id']}` ({context['date']}), complete: {context['complete']}",
        f"- host CPU: {context['host_cpu']}; host kernel {context['host_kernel']}",
        f"- kernel: {context['kernel_package']}, series hash `{context['series_hash']}` "
        f"({len(context['series'])} patches)",
    ]
    for arch, tools in context["toolchain"].items():
        lines.append(f"- toolchain ({arch}): {tools['rustc']}; {tools['bindgen']}; "
                     f"{tools['gcc']}; {tools['qemu']}")
    lines.append(f"- module parameters: `{' '.join(context['module_params'])}`")
    for name, c in context["configs"].items():
        own = c.get("module_params")
        lines.append(f"- {name}: kernel {c['kernel_release']}, fragments "
                     f"{', '.join(c['fragments'])} (hash `{c['fragment_hash']}`); "
                     f"{c['accel']}: {c['accel_reason']}"
                     + (f"; module parameters of this guest: `{' '.join(own)}`"
                        if own and own != context["module_params"] else ""))
    for other in others:
        rel_other = PAGE_TO_RUN / other.run.relative_to(run)
        what = (f"build profile {other.profile}" if other in profiles
                else f"kernel {kernel_of(other.context)}")
        lines.append(f"- {what}: its kernels, fragments and toolchain in "
                     f"[`{other.run.relative_to(run)}/context.json`]({rel_other}/context.json)")
    lines += ["", "## Reproduce", "", "```", reproduce_command(context, [o.context for o in others])
              + "   # a new run under data/, analysis, plots, codegen, REPORT.md",
              f"make report RUN={context['run_id']}   # this report again, from the committed "
              "files", "```"]
    return lines


def reproduce_command(context: dict, others: list[dict]) -> str:
    """The make bench command line that makes a run like this one (`others`: the contexts of
    its further profiles and kernels)."""
    profiles = [o for o in others if kernel_of(o) == kernel_of(context)]
    kernels = [o for o in others if kernel_of(o) != kernel_of(context)]
    compared = compare_archs_words(context.get("archs", ["x86_64"]), [
        (profile_of(o) if o in profiles else kernel_of(o), o.get("archs", [])) for o in others])
    return (f"make bench ARCHS=\"{' '.join(context.get('archs', ['x86_64']))}\""
            + ("" if kernel_of(context) == "series" else f" KERNEL={kernel_of(context)}")
            + (f" PROFILES=\"{' '.join([profile_of(context), *map(profile_of, profiles)])}\""
               if profiles else "")
            + (f" COMPARE_ARCHS=\"{compared}\"" if compared else "")
            + (f" COMPARE_KERNELS=\"{' '.join(map(kernel_of, kernels))}\""
               if kernels else " COMPARE_KERNELS="))


def compare_archs_words(archs_run: list[str], others: list[tuple[str, list[str]]]) -> str:
    """COMPARE_ARCHS as make bench takes it for the further runs (name, archs): nothing when
    each has all of the run's, one list when they share it, else each its own."""
    if all(archs == archs_run for _, archs in others):
        return ""
    if len({tuple(archs) for _, archs in others}) == 1:
        return " ".join(others[0][1])
    return " ".join(f"{name}={','.join(archs)}" for name, archs in others if archs != archs_run)


def profile_method(context: dict, others) -> list[str]:
    """How the run's kernels were built: each build profile and where its options come from."""
    if profile_of(context) == "tiny" and "profile" not in context:
        return ["- The kernels start from `tinyconfig` plus the fragments named under "
                "Provenance, so they and the module are built with "
                "`CONFIG_CC_OPTIMIZE_FOR_SIZE` (`-Os`): this run predates build profiles "
                "(profile `tiny`); a distribution kernel uses `-O2`."]
    names = [profile_of(context), *(o.profile for o in others)]
    return [f"- Build profiles: {', '.join(f'`{n}`' for n in names)}. Every kernel starts "
            "from `tinyconfig` plus the fragments named under Provenance. `distro` adds "
            "`configs/distro.config` and `configs/distro-<arch>.config`: `-O2` "
            "(`CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE`, Rust `-Copt-level=2`), the CPU "
            "mitigations, stack protector, zeroed locals, FORTIFY_SOURCE, the function tracer "
            "and the preemption model of Debian's own 6.12 configs (each fragment names the "
            "Debian config it comes from). `tiny` keeps tinyconfig's `-Os` without a "
            "function tracer."]


def normalize(context: dict, samples: pd.DataFrame):
    """Reads schema 1 runs (x86_64 only, no arch column) as schema 2."""
    if context.get("schema_version", 1) >= 2:
        return context, samples
    arch = context.get("arch", "x86_64")
    if "arch" not in samples.columns:
        samples = samples.copy()
        samples.insert(0, "arch", arch)
    context = dict(context)
    context["configs"] = {f"{arch}/{k}": dict(v, arch=arch, config=k)
                          for k, v in context["configs"].items()}
    context["toolchain"] = {arch: context["toolchain"]}
    return context, samples


def coarse_counters(context: dict) -> list[str]:
    """How the run's counters of more than one instruction per tick became instructions."""
    coarse = sorted({(c["arch"], c["counter_period"]) for c in context["configs"].values()
                     if c.get("counter_period", 1) > 1 and c.get("accel") == "tcg"})
    return [f"- {arch}: the counter ticks once per {period} instructions under -icount "
            f"(loongarch64's stable counter runs at 100 MHz of QEMU's 1 GHz clock). The "
            f"analysis multiplies its samples by {period} (`counter_period` in context.json; "
            f"samples.csv keeps the ticks), so each is off by less than {period} "
            f"instructions, and a slope over N=1..10^4 is within 0.002 of the true count per "
            f"call (the bound is computed for each fit). Under -icount that count is an "
            f"integer: the slope is replaced by the one integer within the bound; a slope "
            f"with none stays as it is and fails the codegen check."
            for arch, period in coarse]


def load_run(run: Path, allow_incomplete: bool):
    context = validate.check_run(run)
    # A run still "running" whose runner is gone was interrupted: say so, not "running".
    gone = runner_gone(context)
    if gone:
        context = dict(context, incomplete_reason=gone)
    if not context.get("complete") and not allow_incomplete:
        raise SystemExit(f"{run}: the run is incomplete ({context.get('incomplete_reason')}); "
                         "pass ALLOW_INCOMPLETE=1 to analyse what it recorded anyway")
    samples = rundir.samples(run)
    if samples.empty:
        raise SystemExit(f"{run}: samples.csv has no samples")
    context, samples = normalize(context, samples)
    return context, in_instructions(context, samples)


def load_thunk_samples(run: Path) -> pd.DataFrame:
    """The native samples of the return thunks other than the host kernel's own
    (native-thunks.csv.gz, checked by validate.check_run with samples.csv); empty for a run
    made before they were timed."""
    path = run / rundir.THUNK_SAMPLES
    if not path.exists():
        return pd.DataFrame(columns=validate.COLUMNS_THUNKS)
    return pd.read_csv(path)


def in_instructions(context: dict, samples: pd.DataFrame) -> pd.DataFrame:
    """Guest samples in instructions: a counter that ticks once per `counter_period`
    instructions under -icount (loongarch64's, every 10) has its ticks multiplied by it.
    samples.csv keeps the ticks the guest reported."""
    periods = {(c["arch"], c["config"]): c.get("counter_period", 1)
               for c in context["configs"].values()}
    factor = [periods.get((a, c), 1) if accel == "tcg" else 1
              for a, c, accel in zip(samples.arch, samples.config, samples.accel)]
    if all(f == 1 for f in factor):
        return samples
    factor = pd.Series(factor, index=samples.index)
    return samples.assign(cycles=samples.cycles * factor, tick=factor)


def span(values, unit: str = "") -> str:
    """"3" or "-1 to 2" (with the unit after), for a one-line finding."""
    lo, hi = min(values), max(values)
    text = fmt(lo) if lo == hi else f"{fmt(lo)} to {fmt(hi)}"
    return f"{text} {unit}".strip()


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
    tiny = [o for o in others if kernel_of(o.context) == kernel_of(main.context)
            and o.profile != main.profile]
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
