"""python3 -m tpbench {bench,run,native,codegen,report}: the whole benchmark in one command,
each step also its own, as KUnit's `kunit.py run` is `build`, `exec` and `parse`.

  run      kernels built (cached), the module booted in each guest: a new data/<run-id>/
  native   the run's x86_64 modules timed on this host's CPU (each build profile and kernel)
  codegen  each module's disabled paths walked and checked (each build profile and kernel)
  report   verdict.csv, REPORT.md, the pages, the figures and the cover letter
  bench    run, native, codegen, report

The steps are the runner's and the analysis' own; this module only chains them, so it alone
imports both.
"""

import argparse
import sys
import time
from pathlib import Path

from analysis import __main__ as analysis
from common import messages
from runner import __main__ as runner


def runs_of(run: Path) -> list[Path]:
    """The run directory and that of each further build profile and kernel inside it."""
    return analysis.profile_runs(run)


def native(run: Path) -> int:
    for part in runs_of(run):
        runner.cmd_native(argparse.Namespace(run=str(part)))
    return 0


def codegen(run: Path, allow_incomplete: bool) -> int:
    failed = 0
    for part in runs_of(run):
        messages.say(f"[tpbench] analysis of {part} ...")
        failed |= analysis.cmd_codegen(part, allow_incomplete)
    return failed


def bench(args) -> int:
    start = time.monotonic()
    run = runner.guests(args)
    status = native(run) or codegen(run, allow_incomplete=False)
    status = status or analysis.cmd_report(run, allow_incomplete=False)
    messages.say(f"[tpbench] bench: done in {time.monotonic() - start:.0f} s; run {run.name}")
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tpbench", description="the whole "
                                     "benchmark in one command, each step also its own")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, what in (("bench", "the whole benchmark: run, native, codegen, report"),
                       ("run", "the guests alone, into a new data/<run-id>/")):
        runner.add_matrix_arguments(sub.add_parser(name, help=what))
    for name, what in (("native", "time a run's x86_64 modules on this host"),
                       ("codegen", "walk and check a run's modules' disabled paths"),
                       ("report", "REPORT.md, pages, figures, cover letter from a run")):
        p = sub.add_parser(name, help=what)
        p.add_argument("--run", help="the run directory (default: the newest under data/)")
        p.add_argument("--allow-incomplete", action="store_true")
    args = parser.parse_args(argv)
    if args.command in ("bench", "run"):
        step = {"bench": lambda: bench(args), "run": lambda: runner.cmd_bench(args)}
        return runner.guarded(step[args.command], args)
    run = Path(args.run).resolve() if args.run else analysis.latest_run()
    if args.command == "native":
        return runner.guarded(lambda: native(run), args)
    if args.command == "codegen":
        return codegen(run, args.allow_incomplete)
    return analysis.main(["report", "--run", str(run)]
                         + (["--allow-incomplete"] if args.allow_incomplete else []))


if __name__ == "__main__":
    sys.exit(main())
