"""REPORT.md rendering, from a small run captured from a real short matrix."""

import json
import shutil

import pytest

from analysis import __main__ as cli
from analysis import report, stats
from tests.conftest import FIXTURES

RUN = FIXTURES / "run-short"


@pytest.fixture
def run(tmp_path):
    dst = tmp_path / "data" / "run-short"
    shutil.copytree(RUN, dst)
    return dst


def render(run, context=None):
    ctx, samples = report.load_run(run, allow_incomplete=True)
    ctx = context or ctx
    summary = stats.summarize(samples, ctx["unit"])
    code = {p.stem.removeprefix("codegen-"): p.read_text()
            for p in run.glob("codegen-*.txt") if "checks" not in p.name}
    checks = {p.stem.removeprefix("codegen-checks-"): p.read_text()
              for p in run.glob("codegen-checks-*.txt")}
    return report.render(run, summary, ctx, code, checks, run.parent.parent), summary


def test_report_carries_the_numbers_of_the_run(run):
    text, summary = render(run)
    assert "unit: **instructions** per call" in text
    row = summary[(summary.config == "jump_label") & (summary.state == "disabled")
                  & (summary.variant == "rust_trace")].iloc[0]
    assert f"| jump_label | disabled | `rust_trace` | {row.per_call:g} | exact | {row.net:g} |" in text
    assert "Rust costs 1 instruction less per call** than C" in text
    assert "run-short/samples.csv" in text and "## Provenance" in text
    assert "<tpbench_c_trace>:" in text      # the codegen listing is in
    assert "INCOMPLETE" not in text


def test_report_is_deterministic(run):
    assert render(run)[0] == render(run)[0]


def test_incomplete_run_is_refused_unless_asked(run):
    ctx = json.loads((run / "context.json").read_text())
    ctx["complete"], ctx["incomplete_reason"] = False, "guest timed out"
    (run / "context.json").write_text(json.dumps(ctx))
    with pytest.raises(SystemExit, match="incomplete.*ALLOW_INCOMPLETE=1"):
        report.load_run(run, allow_incomplete=False)
    text, _ = render(run, ctx)
    assert "**INCOMPLETE RUN**: guest timed out" in text


def test_cli_report_writes_plots_and_summary(run, monkeypatch):
    monkeypatch.setattr(cli, "REPO", run.parent.parent)
    assert cli.cmd_report(run, allow_incomplete=False) == 0
    assert (run.parent.parent / "REPORT.md").exists()
    for name in ("percall-jump_label.png", "percall-jump_label.svg",
                 "scaling-no_jump_label-enabled.png", "box-jump_label-disabled.svg"):
        assert (run / "plots" / name).stat().st_size > 1000, name
    assert "verdict" in (run / "summary.csv").read_text().splitlines()[0]


def test_cover_letter_numbers_come_from_the_committed_run():
    """The cover letter quotes a run; its table must be that run's per-call costs."""
    import re
    from runner import config as cfg
    text = (cfg.PATCHES / "0000-cover-letter.patch").read_text()
    run_id = re.search(r"tpbench run (\S+):", text).group(1)
    run = cfg.REPO / "data" / run_id
    ctx, samples = report.load_run(run, allow_incomplete=False)
    s = stats.summarize(samples, ctx["unit"]).set_index(["config", "state", "variant"])

    def cost(config, variant):
        return f"{s.loc[(config, 'disabled', variant), 'per_call']:g}"

    rows = {
        "empty loop, C / Rust": [f"{cost(c, 'c_empty')} / {cost(c, 'rust_empty')}"
                                 for c in ("jump_label", "no_jump_label")],
        "C trace_<name>()": [cost(c, "c_trace") for c in ("jump_label", "no_jump_label")],
        "Rust declare_trace!": [cost(c, "rust_trace") for c in ("jump_label", "no_jump_label")],
        "Rust -> C helper -> trace": [cost(c, "rust_helper") for c in ("jump_label", "no_jump_label")],
    }
    for label, (y, n) in rows.items():
        assert re.search(rf"^  {re.escape(label)}\s+{re.escape(y)}\s+{re.escape(n)}\b", text, re.M), label
    assert f"({cost('no_jump_label', 'rust_count_call')} for the code" in text


def test_committed_report_regenerates_byte_for_byte(tmp_path, monkeypatch):
    """REPORT.md is exactly what the analysis makes of the committed run it names."""
    import re
    from runner import config as cfg
    committed = (cfg.REPO / "REPORT.md").read_text()
    run_id = re.search(r"^Run `([^`]+)`", committed, re.M).group(1)
    copy = tmp_path / "data" / run_id
    shutil.copytree(cfg.REPO / "data" / run_id, copy, ignore=shutil.ignore_patterns("plots"))
    monkeypatch.setattr(cli, "REPO", tmp_path)
    assert cli.cmd_report(copy, allow_incomplete=False) == 0
    assert (tmp_path / "REPORT.md").read_text() == committed
