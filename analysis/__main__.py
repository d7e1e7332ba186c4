"""python3 -m analysis {codegen,report,latest} --run data/<run-id>"""

import argparse
import sys
from pathlib import Path

import pandas as pd

from analysis import codegen, plots, report, stats
from analysis.jump_table import function_aliases

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"


def latest_run() -> Path:
    runs = sorted(p for p in DATA.iterdir() if (p / "context.json").exists()) if DATA.exists() else []
    if not runs:
        raise SystemExit("no run under data/; run `make bench` first")
    return runs[-1]


def measured_per_call(summary: pd.DataFrame, config: str) -> dict[str, float] | None:
    """Disabled-state per-call costs of a TCG run, to compare with the static count."""
    part = summary[(summary.config == config) & (summary.state == "disabled")]
    if part.empty or set(part.accel) != {"tcg"}:
        return None
    return dict(zip(part.variant, part.per_call))


def cmd_codegen(run: Path, allow_incomplete: bool) -> int:
    context, samples = report.load_run(run, allow_incomplete)
    summary = stats.summarize(samples, context["unit"])
    failed = False
    for ko in sorted(run.glob("tpbench-*.ko")):
        config = ko.stem.removeprefix("tpbench-")
        funcs = codegen.parse_objdump(codegen.disassemble(ko))
        codegen.add_aliases(funcs, function_aliases(ko))
        sites = codegen.sites_by_function(ko)
        variants = plots.ordered(samples[samples.config == config].variant.unique())
        fragments = "".join(context["configs"].get(config, {}).get("fragments", {}).values())
        jump_label = "CONFIG_JUMP_LABEL=y" in fragments
        failures = codegen.check_codegen(funcs, sites, measured_per_call(summary, config),
                                         variants, jump_label)
        lengths = {f"{s.function}": f"{s.kind} ({s.raw[:14]})" for ss in sites.values() for s in ss
                   if s.function in ("tpbench_c_trace", "tpbench_rust_trace")}
        text = [f"site {fn}: {kind}" for fn, kind in sorted(lengths.items())]
        sites_text = ("one NOP site with one __jump_table entry each in c_trace and rust_trace"
                      if jump_label else "no __jump_table entries (CONFIG_JUMP_LABEL=n)")
        text += [f"FAIL {f}" for f in failures] or [
            f"all codegen checks pass: {sites_text}, no call on the disabled paths of c_trace "
            "and rust_trace, a call in rust_helper's, and the instructions counted per "
            "iteration equal the per-call cost measured"]
        (run / f"codegen-checks-{config}.txt").write_text("\n".join(text) + "\n")
        (run / f"codegen-{config}.txt").write_text(codegen.listing(funcs, sites, variants))
        (run / f"paths-{config}.tsv").write_text("".join(
            f"{v}\t{n}\t{text}\n" for v, n, text in codegen.path_summary(funcs, sites, variants)))
        print(f"{config}:\n  " + "\n  ".join(text))
        failed |= bool(failures)
    return 1 if failed else 0


def cmd_report(run: Path, allow_incomplete: bool) -> int:
    context, samples = report.load_run(run, allow_incomplete)
    summary = stats.summarize(samples, context["unit"])
    summary.to_csv(run / "summary.csv", index=False, float_format="%.4f")
    accel = samples.accel.iloc[0]
    plots.render(samples, summary, run / "plots", accel, context["unit"])
    code = {p.stem.removeprefix("codegen-"): p.read_text()
            for p in sorted(run.glob("codegen-*.txt")) if "checks" not in p.name}
    checks = {p.stem.removeprefix("codegen-checks-"): p.read_text()
              for p in sorted(run.glob("codegen-checks-*.txt"))}
    paths = {p.stem.removeprefix("paths-"): [line.split("\t") for line in p.read_text().splitlines()]
             for p in sorted(run.glob("paths-*.tsv"))}
    text = report.render(run, summary, context, code, checks, REPO, paths)
    (REPO / "REPORT.md").write_text(text)
    cols = ["config", "state", "variant", "per_call", "net", "diff_c", "verdict"]
    with pd.option_context("display.width", 160, "display.max_rows", 200,
                           "display.float_format", "{:g}".format):
        print(summary[cols].to_string(index=False))
    print(f"\nreport: {REPO / 'REPORT.md'}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m analysis")
    parser.add_argument("command", choices=("codegen", "report", "latest"))
    parser.add_argument("--run", help="run directory (default: the newest under data/)")
    parser.add_argument("--allow-incomplete", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "latest":
        print(latest_run())
        return 0
    run = Path(args.run).resolve() if args.run else latest_run()
    if not (run / "context.json").exists():
        raise SystemExit(f"{run}: not a run directory (no context.json)")
    return {"codegen": cmd_codegen, "report": cmd_report}[args.command](run, args.allow_incomplete)


if __name__ == "__main__":
    sys.exit(main())
