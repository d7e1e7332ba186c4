"""python3 -m analysis {codegen,report,latest,profile-runs,compare} --run data/<run-id>"""

import argparse
import shutil
import sys
from pathlib import Path

import pandas as pd

from analysis import load
from analysis import words
from analysis import (answer, binder, codegen, compare, cover, figures, hardening, plots,
                      report, size, stats, validate, verdict)
from common import disk, rundir, series
from analysis.pages import mainline
from common.messages import Failure
from kelf.jump_table import function_aliases, tracepoint_anchor_relocations
from kelf.rewrites import no_return_thunk, patchable_entries

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"


def latest_run() -> Path:
    runs = sorted(p for p in DATA.iterdir() if (p / "context.json").exists()) if DATA.exists() else []
    if not runs:
        raise SystemExit("no run under data/; run `make bench` first")
    return runs[-1]


def profile_runs(run: Path) -> list[Path]:
    """The run directory, then the run directory of each further build profile and kernel
    inside it."""
    try:
        return rundir.parts(run)
    except rundir.Damaged as e:
        raise validate.BadRun(str(e)) from None


def option_set(fragments: str, option: str = "CONFIG_JUMP_LABEL") -> bool:
    """Whether the Kconfig fragments, in the order merge_config applied them, leave `option`
    set: the last line that sets or unsets it (a comment that names the option, as
    configs/clang.config's does, is neither)."""
    value = False
    for line in fragments.splitlines():
        line = line.strip()
        if line == f"{option}=y":
            value = True
        elif line in (f"{option}=n", f"# {option} is not set"):
            value = False
    return value


def measured_per_call(summary: pd.DataFrame, arch: str, config: str):
    """Disabled-state per-call costs of a TCG run, to compare with the static count, or None
    and why there is none."""
    part = stats.guest(summary)
    part = stats.rows(part, arch=arch, config=config, state="disabled")
    if part.empty:
        return None, "no disabled-state samples from a guest"
    if set(part.accel) != {"tcg"}:
        return None, (f"the guest ran under {', '.join(sorted(set(part.accel)))}, whose counts "
                      "are cycles, not instructions")
    part = part[part.per_call.notna()]
    return dict(zip(part.variant, part.per_call)), ""


def module_code(run: Path, context: dict, arch: str, config: str):
    """A run's module of `arch` and `config` as the kernel runs it once loaded: its functions
    (objdump's, with the kernel helpers it calls) and its sites by function."""
    ko = rundir.guest_file(run, "module", arch, config)
    try:
        funcs = codegen.parse_objdump(rundir.read_objdump(run, arch, config))
    except rundir.Damaged as e:
        raise validate.BadRun(str(e)) from None
    codegen.add_aliases(funcs, function_aliases(ko))
    codegen.name_tracepoint_anchors(funcs, tracepoint_anchor_relocations(ko))
    helpers = rundir.guest_file(run, "helpers", arch, config)
    if helpers.exists():
        for name, f in codegen.kernel_functions(helpers.read_text()).items():
            funcs.setdefault(name, f)
    guest = context["configs"].get(f"{arch}/{config}", {})
    codegen.as_loaded(funcs, return_thunk=not no_return_thunk(guest.get("vulnerabilities", {})),
                      ftrace_entries=patchable_entries(ko))
    return funcs, codegen.sites_by_function(ko)


def hardening_facts(runs: list[load.Analysed]) -> dict:
    """(kernel, profile, arch, config) -> analysis.hardening.facts, for each module of a
    clang build and of the GCC build its page sets beside it."""
    clang = {(load.kernel_of(a.context), arch) for a in runs if a.profile == "clang"
             for arch, _ in rundir.guest_files(a.run, "module")}
    out = {}
    for a in runs:
        kernel = load.kernel_of(a.context)
        for arch, config in rundir.guest_files(a.run, "module"):
            if (kernel, arch) in clang and a.profile in ("clang", "distro"):
                funcs, sites = module_code(a.run, a.context, arch, config)
                out[(kernel, a.profile, arch, config)] = hardening.facts(funcs, sites)
    return out


def cmd_codegen(run: Path, allow_incomplete: bool) -> int:
    context, samples = load.load_run(run, allow_incomplete)
    summary = stats.summarize(samples, units=context.get("units"))
    failed = False
    for (arch, config), ko in rundir.guest_files(run, "module").items():
        funcs, sites = module_code(run, context, arch, config)
        mine = stats.guest(samples)
        mine = stats.rows(mine, arch=arch, config=config)
        variants = plots.ordered(mine.variant.unique())
        fragments = "\n".join(context["configs"].get(f"{arch}/{config}", {})
                              .get("fragments", {}).values())
        jump_label = option_set(fragments)
        measured, why = measured_per_call(summary, arch, config)
        # Mainline reads the key's count through a kernel function without jump labels, unless
        # its helpers are inlined into Rust's code (CONFIG_RUST_INLINE_HELPERS).
        count_helper = (codegen.MAINLINE_COUNT_HELPER
                        if context.get("kernel") == "mainline" and not jump_label
                        and not option_set(fragments, "CONFIG_RUST_INLINE_HELPERS") else None)
        failures = codegen.check_codegen(funcs, sites, measured, variants, jump_label,
                                         count_helper)
        ran, skipped = codegen.checks_made(measured, variants, jump_label, why, count_helper)
        lengths = {f"{s.function}": f"{s.kind} ({s.raw[:14]})" for ss in sites.values() for s in ss
                   if s.function in ("tpbench_c_trace", "tpbench_rust_trace")}
        text = [f"site {fn}: {kind}" for fn, kind in sorted(lengths.items())]
        text += [f"checked: {c}" for c in ran] + [f"skipped: {c}" for c in skipped]
        text += [f"FAIL {f}" for f in failures] or [
            f"all {len(ran)} codegen checks that ran pass"
            + (f"; {len(skipped)} skipped (above)" if skipped else "")]
        disk.write_atomically(rundir.guest_file(run, "checks", arch, config),
                              "\n".join(text) + "\n")
        disk.write_atomically(rundir.guest_file(run, "listing", arch, config),
                              codegen.listing(funcs, sites, variants))
        disk.write_atomically(rundir.guest_file(run, "paths", arch, config), "".join(
            f"{v}\t{n}\t{text}\n" for v, n, text in codegen.path_summary(funcs, sites, variants)))
        print(f"{arch} {config}:\n  " + "\n  ".join(text))
        failed |= bool(failures)
    return 1 if failed else 0


def tagged(run: Path, kind: str) -> dict[str, str]:
    """The text of each file of `kind` (rundir.GUEST_FILES) by "<arch>-<config>"."""
    return {f"{arch}-{config}": p.read_text()
            for (arch, config), p in rundir.guest_files(run, kind).items()}


def analysed(run: Path, allow_incomplete: bool) -> tuple[load.Analysed, pd.DataFrame]:
    """One profile's run directory read and summarised (summary.csv written beside it), and
    its samples."""
    main, samples = read_analysed(run, allow_incomplete)
    disk.write_atomically(run / "summary.csv",
                          main.summary.to_csv(index=False, float_format="%.4f"))
    return main, samples


def read_analysed(run: Path, allow_incomplete: bool) -> tuple[load.Analysed, pd.DataFrame]:
    """One profile's run directory read and summarised, nothing written into it."""
    context, samples = load.load_run(run, allow_incomplete)
    summary = stats.summarize(samples, units=context.get("units"))
    paths = {k: [line.split("\t") for line in v.splitlines()]
             for k, v in tagged(run, "paths").items()}
    return load.Analysed(run, context, summary, paths), samples


def verdict_rows(a: load.Analysed, samples: pd.DataFrame) -> pd.DataFrame:
    """The verdict rows of one analysed run directory (one profile, one kernel)."""
    return verdict.verdict(a.summary, samples, a.paths, verdict.native_reps(a.context),
                           load.profile_of(a.context), load.kernel_of(a.context),
                           verdict.host_thunk(a.context))


def host_return_words(context: dict) -> str:
    """The host kernel's return, for a figure's title: "plain ret" or the thunk's symbol."""
    return words.thunk_label(verdict.host_thunk(context)).replace("`", "")


def thunk_rows(a: load.Analysed, samples: pd.DataFrame) -> pd.DataFrame:
    """Each site's native cost under each return thunk, of one analysed run directory."""
    return verdict.thunk_costs(samples, load.load_thunk_samples(a.run),
                               verdict.host_thunk(a.context), verdict.native_reps(a.context),
                               a.context.get("units", {}).get("native", stats.NATIVE_UNIT),
                               load.profile_of(a.context),
                               load.kernel_of(a.context))


def cmd_report(run: Path, allow_incomplete: bool) -> int:
    (main, samples), *rest = [analysed(r, allow_incomplete) for r in profile_runs(run)]
    others = [other for other, _ in rest]
    context, summary, paths = main.context, main.summary, main.paths
    sizes = size.run_sizes(run, stats.panels(stats.guest(summary)))
    # The size figure: bytes against sites, of the modules with jump labels.
    growth = {key: size.bytes_for_sites(rows) for key, rows in sizes.items()
              if key[1] == "jump_label"}
    # Figures are made anew: none of an earlier analysis may stay behind.
    shutil.rmtree(run / "plots", ignore_errors=True)
    plots.render(samples, summary, run / "plots", load.profile_of(context))
    # One row per site, profile and kernel, for a reader and for comparing two runs.
    reps = verdict.native_reps(context)
    rows = [verdict_rows(a, s) for a, s in [(main, samples), *rest]]
    table = pd.concat(rows, ignore_index=True)
    disk.write_atomically(run / "verdict.csv", table.to_csv(index=False, float_format="%.4f",
                                                            lineterminator="\n"))
    thunk_table = pd.concat([thunk_rows(a, s) for a, s in [(main, samples), *rest]],
                            ignore_index=True)
    disk.write_atomically(run / "thunks.csv", thunk_table.to_csv(
        index=False, float_format="%.4f", lineterminator="\n"))
    # Every figure below as the files give it (to 4 decimals), as the cover letter and a
    # reader of verdict.csv get it: a median of 0.50499 is 0.5050 there, so 0.51 everywhere.
    table, thunk_table = verdict_of(run), thunks_of(run)
    profile = load.profile_of(context)
    def title(build: str) -> str:
        return (f"Extra instructions per disabled site, build profile {build}, QEMU TCG -icount "
                f"(run {context['run_id']})")
    figures.headline(table, profile, title(profile), run / "plots" / "headline.png")
    if profile != "clang" and (table.profile == "clang").any():
        figures.headline(table, "clang", title("clang (full LTO, kCFI)"),
                         run / "plots" / "clang.png")
    mine = table[(table.profile == profile) & (table.kernel == load.kernel_of(context))]
    figures.driver(mine, f"Disabled sites as drivers write them, build profile {profile}, "
                   "QEMU TCG -icount", run / "plots" / "driver.png")
    figures.size({k: g for k, g in growth.items() if g},
                 f"Bytes a module gains for k sites of one event, build profile {profile}\n"
                 "(symbol sizes of the measured modules, CONFIG_JUMP_LABEL=y)",
                 run / "plots" / "size.png")
    processes = verdict.process_costs(stats.rows(samples, state="disabled"), reps)
    if not processes.empty:
        noise = verdict.aa_noise(stats.rows(samples, state="disabled"), reps)
        figures.native(processes[processes.variant.isin([v for v, _, _ in figures.WRITERS])],
                       noise, stats.NATIVE_UNIT,
                       f"x86_64 modules' loop code on the host CPU, build profile {profile}, "
                       f"returns as its kernel sends them ({host_return_words(context)}):\n"
                       "a point per process and placement, the median a bar",
                       run / "plots" / "native.png")
    # The detail pages, made anew beside the run.
    pages_dir = run / words.PAGES_DIR
    shutil.rmtree(pages_dir, ignore_errors=True)
    with disk.writing(pages_dir):
        pages_dir.mkdir()
    checks = tagged(run, "checks")
    # The Binder part (make bench BINDER=1): its page and figure, and the Answer's last line.
    found_binder = binder.load(run)
    binder_page, binder_costs = None, None
    if found_binder is not None:
        binder_context, binder_samples, binder_events = found_binder
        trips = binder.per_trip(binder_context, binder_samples)
        binder_costs = binder.costs(trips, binder_events)
        binder.figure(binder_costs, run / "plots" / "binder.png")
        binder_locks = binder.extra_locks(run, binder_costs)
        binder_page = binder.page(binder_costs, trips, binder_context, words.PAGE_TO_RUN,
                                  binder.inlining(run, binder_costs),
                                  binder.where_it_goes(run, binder_costs, binder_locks),
                                  binder_locks)
    binder_line = binder.sentence(binder_costs, found_binder and found_binder[0])
    pages = report.pages(run, summary, context, checks, REPO, paths, sizes, others, processes,
                         thunk_table[(thunk_table.profile == profile)
                                     & (thunk_table.kernel == load.kernel_of(context))],
                         table, hardening_facts([main, *others]), binder_page)
    for name, text in pages.items():
        disk.write_atomically(pages_dir / f"{name}.md", text)
    found = report.findings(main, sizes, others)
    if binder_costs is not None:
        found["binder"] = binder.finding(binder_costs, binder_locks)
    text = answer.render(table, context, [o.context for o in others], run, REPO, list(pages),
                         "plots/headline.png", found, thunk_table, binder_line)
    disk.write_atomically(REPO / "REPORT.md", text)
    # From the files just written, as a test regenerates it from the committed ones.
    write_cover_letter(context, cover_region(verdict_of(run), main, others, thunks_of(run),
                                             sizes))
    write_mainline_cover_letter([main.context, *[o.context for o in others]],
                                mainline_cover_region(verdict_of(run), main, others))
    cols = ["arch", "config", "state", "variant", "per_call", "unit", "net", "diff_c", "verdict"]
    with pd.option_context("display.width", 180, "display.max_rows", 300,
                           "display.float_format", "{:g}".format):
        print(summary[cols].to_string(index=False))
    print(f"\nreport: {REPO / 'REPORT.md'}, details in {pages_dir}")
    return 0


SERIES = REPO / "patches"


def cover_region(table, main, others, thunks, sizes) -> str:
    """The cover letter's measured region, from an analysed run."""
    return cover.measured(table, main.summary, main.context, [o.context for o in others],
                          thunks, report.findings(main, sizes, others),
                          series.series_files(SERIES), "tpbench developers")


def cover_region_of_run(run: Path) -> str:
    """The same, from a run's committed files (its verdict.csv and thunks.csv)."""
    (main, _), *rest = [read_analysed(r, allow_incomplete=False) for r in profile_runs(run)]
    others = [other for other, _ in rest]
    sizes = size.run_sizes(run, stats.panels(stats.guest(main.summary)))
    return cover_region(verdict_of(run), main, others, thunks_of(run), sizes)


def write_cover_letter(context: dict, region: str) -> None:
    """Writes the region into the cover letter when the run measured the series as patches/
    holds it now (another revision's run would quote other code)."""
    names = [p.name for p in series.series_files(SERIES)]
    measured = context.get("series", [])
    if load.kernel_of(context) != "series" or measured != names[:len(measured)]:
        print(f"cover letter: left as it is (run {context['run_id']} measured another "
              "revision of the series)")
        return
    path = SERIES / "0000-cover-letter.patch"
    disk.write_atomically(path, cover.fill(path.read_text(), region))
    print(f"cover letter: {path}, measured from run {context['run_id']}")


MAINLINE_SERIES = REPO / "patches-mainline-series"


def mainline_cover_region(table, main, others) -> str:
    """The series for mainline's letter's measured region, from an analysed run; "" when the
    run did not measure mainline with it beside mainline."""
    # The run's own profile alone: clang/mainline is mainline too, built otherwise.
    runs = [a for a in [main, *others] if a.profile == main.profile]
    kernels = {load.kernel_of(a.context) for a in runs}
    if not {"mainline", mainline.MAINLINE_SERIES} <= kernels:
        return ""
    lazy = []
    ours = table[(table.kernel == mainline.MAINLINE_SERIES) & (table.profile == main.profile)]
    for arch, config in dict.fromkeys(zip(ours.arch, ours.config)):
        where = dict(arch=arch, config=config, variant="rust_txn_lazy")
        nets = [mainline.enabled_net(runs, k, **where)
                for k in ("mainline", mainline.MAINLINE_SERIES)]
        if None not in nets:
            lazy.append(f"{arch} {words.SHORT[config]} {stats.fmt(nets[0])} -> "
                        f"{stats.fmt(nets[1])}")
    contexts = [a.context for a in runs]
    return cover.mainline_measured(table, contexts, lazy,
                                   series.own_patches(MAINLINE_SERIES), "tpbench developers")


def write_mainline_cover_letter(contexts: list[dict], region: str) -> None:
    """Writes the region into the series for mainline's letter when the run measured that
    series as patches-mainline-series/ holds it now."""
    path = MAINLINE_SERIES / "0000-cover-letter.patch"
    listed = [p.name for p in series.series_files(MAINLINE_SERIES)]
    measured = next((c.get("series", []) for c in contexts
                     if load.kernel_of(c) == mainline.MAINLINE_SERIES), None)
    if not region or measured != listed:
        print(f"cover letter: {path.parent.name}/{path.name} left as it is (the run did not "
              "measure the series for mainline as it is now)")
        return
    disk.write_atomically(path, cover.fill(path.read_text(), region))
    print(f"cover letter: {path}, measured from run {contexts[0]['run_id']}")


def verdict_of(run: Path) -> pd.DataFrame:
    """A run's verdict table: its verdict.csv, or, for a run made before verdict.csv existed,
    the same rows computed from it without writing anything into it."""
    if (run / "verdict.csv").exists():
        return pd.read_csv(run / "verdict.csv", keep_default_na=False, na_values=[""])
    return pd.concat([verdict_rows(*read_analysed(r, allow_incomplete=True))
                      for r in profile_runs(run)], ignore_index=True)


def thunks_of(run: Path) -> pd.DataFrame:
    """A run's native figures per return thunk (thunks.csv); for a run made before, its
    verdict's native figures, under the host's thunk (plain `ret`, the only one it ran)."""
    path = run / "thunks.csv"
    if path.exists():
        return pd.read_csv(path, keep_default_na=False, na_values=[""])
    table = verdict_of(run)
    table = table[table.native_median.notna()]
    return table.assign(thunk=table.get("native_thunk", "ret"), host=True)[
        verdict.THUNK_COLUMNS]


def cmd_compare(run: Path, against: Path) -> int:
    lines = (compare.changes(verdict_of(run), verdict_of(against))
             + compare.thunk_changes(thunks_of(run), thunks_of(against)))
    print(f"{run.name} against {against.name}: "
          + (f"{len(lines)} changes" if lines else "no change in any verdict"))
    print("\n".join(f"  {line}" for line in lines))
    return 0


def main(argv=None) -> int:
    try:
        return run_command(argv)
    except OSError as e:
        # The file system's fault (full, read-only, not ours): one line, no traceback.
        if e.errno not in disk.FAULTS:
            raise
        # Every write names its file (disk.writing); one that did not is a bug to mend.
        print(f"analysis: {disk.explain(e, Path(e.filename or 'a file the analysis did not name'))}",
              file=sys.stderr)
        return 2
    except Failure as e:
        # A full disk, gnuplot's refusal: one message, no traceback.
        print(f"analysis: {e}", file=sys.stderr)
        return 2


def run_command(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m analysis")
    parser.add_argument("command", choices=("codegen", "report", "latest", "profile-runs",
                                            "compare"))
    parser.add_argument("--run", help="run directory (default: the newest under data/)")
    parser.add_argument("--allow-incomplete", action="store_true")
    parser.add_argument("--against", help="compare: the earlier run directory")
    args = parser.parse_args(argv)
    if args.command == "latest":
        print(latest_run())
        return 0
    run = Path(args.run).resolve() if args.run else latest_run()
    if args.command == "compare":
        if not args.against:
            raise SystemExit("compare needs the earlier run: --against data/<run-id>")
        return cmd_compare(run, Path(args.against).resolve())
    if args.command == "profile-runs":
        print("\n".join(map(str, profile_runs(run))))
        return 0
    return {"codegen": cmd_codegen, "report": cmd_report}[args.command](run, args.allow_incomplete)


if __name__ == "__main__":
    sys.exit(main())
