"""The method page: how the run was made, what it checked, how to make it again."""

from pathlib import Path

from analysis.load import kernel_of, profile_of
from analysis.words import PAGE_TO_RUN
from common import console, matrix, rundir


def module_checks(run: Path) -> list[str]:
    """The module's own KTAP tests as this run's results files report them."""
    seen: dict[str, list[str]] = {}
    files = list(rundir.guest_files(run, "results").values())
    for f in files:
        for _, name, status in console.parse_ktap(f.read_text(errors="replace").splitlines()).tests:
            seen.setdefault(name, []).append(status)
    if not seen:
        return ["- The run's results files report no KTAP tests of the module."]
    # Described from bench-module/ktap-tests.tsv; only the tests the run reported are listed.
    tests = matrix.module_tests()
    out = [f"- The module's own KTAP tests, as the {len(files)} results files of this run "
           "report them:"]
    for name, statuses in seen.items():
        where = ("every config" if len(statuses) == len(files) else
                 f"the {len(statuses)} configs that ran it (a module without Rust has no such "
                 "test)")
        verdict = f"ok in {where}" if set(statuses) == {"ok"} else "**failed** in some config"
        out.append(f"  - `{name}`: {tests.get(name, 'no description')}; {verdict}.")
    return out


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
                else f"kernel {kernel_of(other.context)}" if other in kernels
                else f"kernel {kernel_of(other.context)} in build profile {other.profile}")
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
        (further_name(context, o), o.get("archs", [])) for o in others])
    return (f"make bench ARCHS=\"{' '.join(context.get('archs', ['x86_64']))}\""
            + ("" if kernel_of(context) == "series" else f" KERNEL={kernel_of(context)}")
            + (f" PROFILES=\"{' '.join([profile_of(context), *map(profile_of, profiles)])}\""
               if profiles else "")
            + (f" COMPARE_ARCHS=\"{compared}\"" if compared else "")
            + (f" COMPARE_KERNELS=\"{' '.join(further_name(context, o) for o in kernels)}\""
               if kernels else " COMPARE_KERNELS=")
            + binder_words(context.get("binder_part")))


def binder_words(part: dict | None) -> str:
    """make bench's Binder variables for a run with a Binder part (make bench BINDER=1)."""
    if not part:
        return ""
    archs = "" if part["archs"] == ["x86_64"] else f" BINDER_ARCHS=\"{' '.join(part['archs'])}\""
    return f" BINDER=1 BINDER_KERNELS=\"{' '.join(part['kernels'])}\"{archs}"


def further_name(context: dict, other: dict) -> str:
    """How make bench names a further run: its profile, its kernel, or both as
    <profile>/<kernel> for a kernel built in a further profile."""
    if kernel_of(other) == kernel_of(context):
        return profile_of(other)
    if profile_of(other) == profile_of(context):
        return kernel_of(other)
    return f"{profile_of(other)}/{kernel_of(other)}"


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
