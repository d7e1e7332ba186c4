"""REPORT.md rendering, from a small run captured from a real short matrix."""

import json
import re
import shutil
import subprocess

import pandas as pd
import pytest

from analysis import load
from analysis.pages import driver as driver_page
from analysis.pages import mainline as mainline_page
from analysis.pages import method as method_page
from analysis.pages import recording as recording_page
from analysis import __main__ as cli
from analysis import report, stats
from common import rundir
from runner import config as cfg
from tests.conftest import FIXTURE_VARIANTS, FIXTURES

RUN = FIXTURES / "run-short"


@pytest.fixture
def run(tmp_path):
    dst = tmp_path / "data" / "run-short"
    shutil.copytree(RUN, dst)
    return dst


def render(run, context=None):
    """The run's detail pages, joined: what REPORT.md's links lead to."""
    ctx, samples = load.load_run(run, allow_incomplete=True)
    if context is not None:
        ctx, _ = load.normalize(context, samples)
    summary = stats.summarize(samples)
    checks = {f"{a}-{c}": p.read_text() for (a, c), p in rundir.guest_files(run, "checks").items()}
    pages = report.pages(run, summary, ctx, checks, run.parent.parent)
    return "\n".join(pages.values()), summary


def test_report_carries_the_numbers_of_the_run(run):
    text, _ = render(run)
    assert "1 instruction (exact)" in text
    # Known from the fixture's samples (4 instructions a call, 1 more than rust_empty's 3),
    # not from the summary the report was made of.
    assert "| x86_64 | jump_label | disabled | `rust_trace` | 4 | instructions | exact | 1 |" in text
    assert "| x86_64 | jump_label | Rust declare_trace! | 1 instruction (exact) |" in text
    assert "| x86_64 | jump_label | C trace_<name>() | 2 instructions (exact) |" in text
    assert "| `rust_trace` | 4 | instructions | exact | 1 | -1 | costs 1 instruction less" in text
    assert "no native measurement" in text and "plots/percall-x86_64-jump_label.png" in text
    assert "(../samples.csv)" in text and "## Provenance" in text
    assert "(../codegen-jump_label.txt)" in text    # the codegen listing is linked
    assert "<tpbench_c_trace>:" not in text                # not pasted
    assert "INCOMPLETE" not in text


def test_report_is_deterministic(run):
    assert render(run)[0] == render(run)[0]


def test_incomplete_run_is_refused_unless_asked(run):
    ctx = json.loads((run / "context.json").read_text())
    ctx["complete"], ctx["incomplete_reason"] = False, "guest timed out"
    (run / "context.json").write_text(json.dumps(ctx))
    with pytest.raises(SystemExit, match="incomplete.*ALLOW_INCOMPLETE=1"):
        load.load_run(run, allow_incomplete=False)
    text, _ = render(run, ctx)
    assert "**INCOMPLETE RUN**: guest timed out" in text


def test_cli_report_writes_plots_and_summary(run, monkeypatch):
    monkeypatch.setattr(cli, "REPO", run.parent.parent)
    (run / "plots").mkdir()
    (run / "plots" / "box-x86_64-jump_label-disabled.svg").write_text("from an older analysis")
    assert cli.cmd_report(run, allow_incomplete=False) == 0
    assert (run.parent.parent / "REPORT.md").exists()
    for name in ("percall-x86_64-jump_label.png", "scaling-x86_64-no_jump_label-enabled.png",
                 "headline.png"):
        assert (run / "plots" / name).stat().st_size > 1000, name
    # Each PNG with the script that draws it again (its .gp, and the .dat files it reads);
    # no figure of an earlier analysis stays behind.
    assert {p.suffix for p in (run / "plots").iterdir()} == {".png", ".gp", ".dat"}
    for png in (run / "plots").glob("*.png"):
        assert png.with_suffix(".gp").exists() or png.name.startswith(("percall-", "scaling-"))
    assert (run / "plots" / "plots.gp").exists() and (run / "plots" / "percall-x86_64-jump_label.dat").exists()
    assert not list((run / "plots").glob("box-*"))
    assert "verdict" in (run / "summary.csv").read_text().splitlines()[0]
    assert (run / "report" / "guest.md").exists() and (run / "report" / "method.md").exists()


def test_cover_letter_is_measured_from_the_committed_run():
    """The letter's measured region is what the analysis makes of the run it names, byte for
    byte (issue 32): its table, its sentences, its native spread and patch 8's figures; and
    it names the run REPORT.md names, the series of that run being the one in patches/."""
    import json
    from analysis import cover
    text = (cfg.PATCHES / "0000-cover-letter.patch").read_text()
    run_id = re.search(r"^Measured by tpbench run (\S+) ", text, re.M).group(1)
    assert run_id == committed_run_id()
    run = cfg.REPO / "data" / run_id
    context = json.loads((run / "context.json").read_text())
    # The run measured the series in patches/ or its first patches (the letter then says
    # which of them no figure covers).
    series = [p.name for p in cfg.series_files()]
    assert context["series"] == series[:len(context["series"])]
    if len(context["series"]) < len(series):
        assert f"That run measured patches 1 to {len(context['series'])};" in text.replace(
            "\n", " ")
    assert cover.region_of(text) == cli.cover_region_of_run(run)
    assert "(patch 8)" in cover.region_of(text)


def committed_run_id() -> str:
    """The run REPORT.md names."""
    return re.search(r"^Run `([^`]+)`", committed_report(), re.M).group(1)


def committed_page(name: str) -> str:
    """A detail page of the committed run."""
    return (cfg.REPO / "data" / committed_run_id() / "report" / f"{name}.md").read_text()


def committed_report() -> str:
    """REPORT.md as committed, whatever a local `make bench` has since written over it: the
    tests about the committed run read the committed run and its report."""
    proc = subprocess.run(["git", "-C", str(cfg.REPO), "show", "HEAD:REPORT.md"],
                          capture_output=True, text=True)
    if proc.returncode != 0:    # not a git checkout (an unpacked tarball): the file is it
        return (cfg.REPO / "REPORT.md").read_text()
    return proc.stdout


def test_committed_report_regenerates_byte_for_byte(tmp_path, monkeypatch):
    """REPORT.md is exactly what the analysis makes of the committed run it names, and so
    are the run's codegen outputs, made again from its committed modules: a change to the
    walker or the checks cannot leave either stale."""
    committed = committed_report()
    run_id = committed_run_id()
    original = cfg.REPO / "data" / run_id
    copy = tmp_path / "data" / run_id
    made = ("codegen-*.txt", "paths-*.tsv")
    shutil.copytree(original, copy, ignore=shutil.ignore_patterns("plots", "report", *made))
    monkeypatch.setattr(cli, "REPO", tmp_path)
    # The run's own build profile, then each further one in its directory inside it.
    for made_run in cli.profile_runs(copy):
        assert cli.cmd_codegen(made_run, allow_incomplete=False) == 0
        source = original / made_run.relative_to(copy)
        names = sorted(p.name for pattern in made for p in source.glob(pattern))
        assert names and names == sorted(p.name for pattern in made for p in made_run.glob(pattern))
        for name in names:
            assert (made_run / name).read_text() == (source / name).read_text(), name
    assert cli.cmd_report(copy, allow_incomplete=False) == 0
    assert (tmp_path / "REPORT.md").read_text() == committed
    assert (copy / "verdict.csv").read_text() == (original / "verdict.csv").read_text()
    pages = sorted(p.name for p in (original / "report").glob("*.md"))
    assert pages and pages == sorted(p.name for p in (copy / "report").glob("*.md"))
    for name in pages:
        assert (copy / "report" / name).read_text() == (original / "report" / name).read_text(), name
    assert (sorted(p.name for p in (copy / "plots").iterdir())
            == sorted(p.name for p in (original / "plots").iterdir()))


def test_schema_1_run_is_still_read():
    """The first committed run predates the arch column; it reads as x86_64."""
    old = FIXTURES / "runs" / "schema-1"
    ctx, samples = load.load_run(old, allow_incomplete=False)
    assert ctx["schema_version"] == 1 and set(samples.arch) == {"x86_64"}
    assert set(ctx["configs"]) == {"x86_64/jump_label", "x86_64/no_jump_label"}
    s = stats.guest(stats.summarize(samples)).set_index(["arch", "config", "state", "variant"])
    assert s.loc[("x86_64", "jump_label", "disabled", "rust_trace"), "per_call"] == 4


@pytest.fixture
def native_run(tmp_path):
    """A real run with native samples, trimmed (x86_64, five repetitions, three N)."""
    dst = tmp_path / "data" / "run-native"
    shutil.copytree(FIXTURES / "run-native", dst)
    return dst


def test_report_puts_native_time_beside_instructions(native_run, monkeypatch):
    monkeypatch.setattr(cli, "REPO", native_run.parent.parent)
    assert cli.cmd_report(native_run, allow_incomplete=False) == 0
    front = (native_run.parent.parent / "REPORT.md").read_text()
    assert ("## Native time per site (x86_64, TSC ticks per call, returns as this host's "
            "kernel sends them: plain `ret`)") in front
    assert "not resolved" in front and "| x86_64 | JL=y |" in front
    text = "\n".join((native_run / "report" / f"{p}.md").read_text() for p in ("guest", "native"))
    summary = pd.read_csv(native_run / "summary.csv")
    # The headline: each site in instructions and in native ticks, over the placements.
    assert "| x86_64 | jump_label | Rust declare_trace! | 1 instruction (exact) |" in text
    assert "In the disassembly, C's site runs `jmp (taken)` more than Rust's." in text
    # The native section: a column per placement, the A/A noise and the alignment finding.
    assert "# Native: the module's own code on the host CPU" in text
    assert "native+48 (.text +48 B)" in text and "any one process): native ±" in text
    assert "Alignment: " in text and "MHz (the host kernel)" in text
    row = summary[(summary.config == "jump_label") & (summary.accel == "native")
                  & (summary.variant == "rust_helper")].iloc[0]
    assert row.unit == "TSC ticks"
    # The fixture's fastest samples at the kernel's placement: 78 ticks at N=1, 416 at N=100,
    # 35204 at N=10000: a slope of 3.51 ticks a call.
    assert "| `rust_helper` | 9 instructions | 3.51 (3.51..3.52) |" in text
    assert (native_run / "plots" / "native.png").stat().st_size > 1000


def refuse_every_variant(run, why: str) -> None:
    """The fixture run as a host whose return thunk the loader does not know leaves it: no
    native sample as that host's kernel runs the code, every variant refused with `why`,
    and its native samples standing in as the plain `ret` thunk's (native-thunks.csv.gz)."""
    ctx = json.loads((run / "context.json").read_text())
    samples = pd.read_csv(run / "samples.csv")
    native = samples.accel.str.startswith("native")
    samples[~native].to_csv(run / "samples.csv", index=False, lineterminator="\n")
    forced = samples[native].assign(thunk="ret")
    forced[["arch", "config", "thunk", "accel", "variant", "state", "n", "rep", "cycles"]].to_csv(
        run / "native-thunks.csv.gz", index=False, lineterminator="\n")
    about = ctx["native_about"]
    about["host_thunk"] = {"name": None, "why": why}
    about["thunks"] = {"ret": {"symbol": "ret", "who": "", "timed": "native-thunks.csv.gz"}}
    about["refused"] = {f"x86_64/{c}": {v: f"the host's kernel returns through a thunk this "
                                          f"loader does not know ({why})"
                                       for v in about["matrix"]["variants"]}
                        for c in ("jump_label", "no_jump_label")}
    (run / "context.json").write_text(json.dumps(ctx, indent=2) + "\n")


def test_a_native_stage_that_refused_everything_says_so_where_its_figures_would_be(
        native_run, monkeypatch):
    """REPORT.md keeps its native section, says there why nothing was timed as the host's
    kernel runs it, says so in the scope table, and gives the thunks timed beside."""
    refuse_every_variant(native_run, "retbleed: Mitigation: Something New")
    monkeypatch.setattr(cli, "REPO", native_run.parent.parent)
    assert cli.cmd_report(native_run, allow_incomplete=False) == 0
    front = (native_run.parent.parent / "REPORT.md").read_text()
    native = front[front.index("## Native time per site"):]
    assert "**No native figure as this host's kernel runs the code**: every variant " \
           "refused: the host's kernel returns through a thunk this loader does not know " \
           "(retbleed: Mitigation: Something New)" in native
    scope = next(line for line in front.splitlines() if line.startswith("| native |"))
    assert "**not as this host's kernel runs it**" in scope and "Something New" in scope
    assert "## What the helper costs under each return thunk" in front
    assert "| JL=y | plain `ret` |" in front and "(this host's kernel)" not in front


def test_a_run_without_a_native_stage_says_so(native_run, monkeypatch):
    ctx = json.loads((native_run / "context.json").read_text())
    del ctx["native_about"]
    (native_run / "context.json").write_text(json.dumps(ctx, indent=2) + "\n")
    samples = pd.read_csv(native_run / "samples.csv")
    samples[~samples.accel.str.startswith("native")].to_csv(
        native_run / "samples.csv", index=False, lineterminator="\n")
    monkeypatch.setattr(cli, "REPO", native_run.parent.parent)
    assert cli.cmd_report(native_run, allow_incomplete=False) == 0
    front = (native_run.parent.parent / "REPORT.md").read_text()
    assert "| native | **not measured**: the native stage did not run" in front
    assert "**No native figure as this host's kernel runs the code**: the native stage " \
           "did not run" in front


def test_native_rows_stay_out_of_the_guest_tables(native_run):
    ctx, samples = load.load_run(native_run, allow_incomplete=False)
    summary = stats.summarize(samples, units=ctx["units"])
    text = report.pages(native_run, summary, ctx, {}, native_run.parent.parent)["guest"]
    guest_part = text[text.index("## Every variant"):text.index("## Figures")]
    assert "TSC ticks" not in guest_part and "aa_c_trace" not in guest_part


def test_doctest_checks_say_what_each_config_ran():
    context = {"configs": {
        "x86_64/jump_label": {"doctests": {
            "suite": "rust_doctests_kernel", "passed": 117, "failed": 0, "skipped": 0,
            "series": [{"name": "rust_doctest_kernel_tracepoint_rs_0",
                        "location": "rust/kernel/tracepoint.rs:30", "status": "ok"}],
            "problems": []}},
        "arm64/jump_label": {},
        "arm/jump_label": {"fragments": {"arm-base.config": "CONFIG_MMU=y\n"}},
    }}
    assert method_page.doctest_checks(context) == [
        "- x86_64/jump_label: the kernel crate's doctests (KUnit at boot): 117 passed, 0 failed, "
        "0 skipped; the series' examples: `rust/kernel/tracepoint.rs:30` ok.",
        "- arm64/jump_label: this run did not record the kernel crate's doctests.",
        "- arm/jump_label: a kernel without Rust (none in 6.12 for this architecture), so no "
        "doctests.",
    ]


def test_counter_ticks_become_instructions_by_the_period_the_run_recorded():
    """loongarch64's counter ticks once per 10 instructions under -icount: its TCG samples
    are multiplied by the period its context gives, the others' (and native) are not."""
    ctx = {"configs": {"loongarch64/jump_label": {"arch": "loongarch64", "config": "jump_label",
                                                  "counter_period": 10},
                       "x86_64/jump_label": {"arch": "x86_64", "config": "jump_label"}}}
    samples = pd.DataFrame({"arch": ["loongarch64", "x86_64", "x86_64"],
                            "config": ["jump_label"] * 3, "accel": ["tcg", "tcg", "native"],
                            "cycles": [7, 7, 7]})
    assert list(load.in_instructions(ctx, samples).cycles) == [70, 7, 7]
    assert list(samples.cycles) == [7, 7, 7]       # the input is left as it was


def report_archs() -> list[str]:
    """The architectures of the committed run's own kernel and profile, from its verdict."""
    table = pd.read_csv(cfg.REPO / "data" / committed_run_id() / "verdict.csv")
    return list(dict.fromkeys(table[(table.kernel == "series")
                                    & (table.profile == "distro")].arch))


def header_index(table: pd.DataFrame, column: str) -> int:
    return list(table.columns).index(column)


def page_table(page: str, column: str) -> pd.DataFrame:
    """The table of a page whose header names `column`, as a frame keyed by its header:
    tests read cells by name, so a column added to a page moves no assertion."""
    lines = page.splitlines()
    (at,) = [k for k, line in enumerate(lines) if line.startswith("| ")
             and column in [c.strip() for c in line.strip("|").split("|")]]
    header = [c.strip() for c in lines[at].strip().strip("|").split("|")]
    rows = []
    for line in lines[at + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return pd.DataFrame(rows, columns=header)


def verdict_of(**where) -> pd.DataFrame:
    table = pd.read_csv(cfg.REPO / "data" / committed_run_id() / "verdict.csv")
    for column, value in where.items():
        table = table[table[column] == value]
    return table


# The driver page's rows, by the words of its language column.
DRIVER_SITES = {"C": "c_txn", "Rust": "rust_txn", "Rust, `if tpbench_txn_enabled()`": "rust_txn_lazy"}


def test_committed_report_answers_the_driver_questions():
    """The committed run's answers, from its verdict.csv (its pages agreeing row by row where
    a test reads them), build profile distro, for each architecture it has: LLVM loads the three fields of the transaction before Rust's site
    everywhere, and before C's on riscv64 with jump labels; GCC 12 does on x86_64 and not on
    arm64, arm or loongarch64. At -O2 every dense site is one NOP, in C as in Rust; built
    for size (profile tiny, when the run has it) C's site runs a branch more and GCC calls
    an out-of-line copy at each of the 16 sites."""
    text = committed_report()
    assert "built **distro**" in text.split("\n## ")[0]
    archs = report_archs()
    assert {"x86_64", "arm64"} <= set(archs), archs
    loads = verdict_of(profile="distro", kernel="series").set_index(
        ["arch", "config", "variant"]).argument_loads
    for arch in archs:
        for config in ("jump_label", "no_jump_label"):
            if arch != "arm":
                assert loads[(arch, config, "rust_txn")] == 3, (arch, config)
                assert loads[(arch, config, "rust_txn_lazy")] == 0, (arch, config)
            c_loads = 3 if arch == "x86_64" or (arch, config) == ("riscv64", "jump_label") else 0
            assert loads[(arch, config, "c_txn")] == c_loads, (arch, config)
    args = committed_page("driver")
    table = page_table(args, "argument loads on the disabled path")
    assert len(table) == len(loads.dropna())
    for row in table.itertuples(index=False):
        arch, config, language = row[:3]
        want = loads[(arch, config, DRIVER_SITES[language])]
        assert row[header_index(table, "argument loads on the disabled path")] == (
            f"**{want:g}**" if want else "none"), row
    dense = committed_page("dense")
    assert "| x86_64 | jump_label | Rust | 1 | 1 |" in dense
    assert "| x86_64 | jump_label | C | 1 | 1 | the NOP site" in dense
    assert "inlines `trace_tpbench_hit()` at all 16 sites" in dense
    assert "![bytes against sites](../plots/size.png)" in committed_page("size")
    assert "![disabled sites as drivers" in args
    # Built for size: C's site 2 against 1, and 16 calls of GCC's copy in the dense loop.
    tiny = verdict_of(profile="tiny", kernel="series", config="jump_label").set_index(
        ["arch", "variant"]).instructions_per_site
    tiny_archs = set(tiny.index.get_level_values("arch"))
    assert "x86_64" in tiny_archs, tiny_archs
    for arch in sorted(tiny_archs & {"x86_64", "arm64"}):
        assert (tiny[(arch, "c_trace")], tiny[(arch, "rust_trace")]) == (2, 1), arch
    assert tiny[("x86_64", "c_dense")] == 5                  # 80 for 16 sites
    assert "16 x `call`" in committed_page("profiles")
    # Recording: every architecture with Rust has a row per event.
    recorded = page_table(committed_page("recording"), "Rust minus C")
    for arch in [a for a in archs if a != "arm"]:
        for event, site in (("tpbench_hit", "rust_trace"), ("tpbench_txn", "rust_txn")):
            (row,) = recorded[(recorded.arch == arch) & (recorded.config == "jump_label")
                              & (recorded.event == f"`{event}`")
                              & (recorded["Rust site"] == f"`{site}`")].itertuples()
            assert 0 < float(row.C) and 0 < float(row.Rust), row


def test_committed_report_answers_the_mainline_questions():
    """Mainline 7.3.4 beside the series on x86_64, with the series' tree built by mainline's
    compilers between them: with jump labels every site costs the same on both kernels;
    without, mainline's Rust site calls rust_helper_static_key_count() (the kernel's part:
    its implementation), 2 -> 7 instructions, 16 calls in the dense loop; C's driver-like
    site loses its three loads to GCC 14 (the compiler's part)."""
    per_site = verdict_of(arch="x86_64", profile="distro").set_index(
        ["config", "variant", "kernel"]).instructions_per_site
    kernels = ("series", "series-gcc14", "mainline")

    def counts(config, variant):
        return [per_site[(config, variant, k)] for k in kernels]
    for v in ("c_trace", "rust_trace", "c_dense", "rust_dense"):
        assert counts("jump_label", v) == [1, 1, 1], v
    assert counts("no_jump_label", "rust_trace") == [2, 2, 7]
    assert counts("no_jump_label", "rust_dense") == [2, 2, 7]      # 32 / 32 / 112 for 16
    assert counts("jump_label", "c_txn") == [4, 2, 2]
    section = committed_page("mainline")
    table = page_table(section, "whose").set_index(["arch", "config", "variant"])
    assert table.loc[("x86_64", "no_jump_label", "`rust_trace`"), "whose"].startswith(
        "off: kernel +5")
    assert table.loc[("x86_64", "jump_label", "`c_txn`"), "whose"].startswith(
        "off: compiler -2")
    assert table.loc[("x86_64", "no_jump_label", "`rust_dense`")].iloc[0] == "32 / 32 / 112"
    assert "16 x `call rust_helper_static_key_count`" in section
    assert "reads it inline (its patch 7)" in section


# --- the record check, as the report states it ---------------------------------------------

def record_run(tmp_path, dumps):
    """A run directory with one guest's results: real KTAP and the real trace dumps."""
    ktap = (FIXTURES / "ktap-bench-jump_label.txt").read_text()
    (tmp_path / "results-x86_64-jump_label.txt").write_text(ktap + "\n".join(dumps) + "\n")
    return {"configs": {"x86_64/jump_label": {"module_params": ["variants=" + ",".join(
        FIXTURE_VARIANTS)]}}}


def test_the_report_states_the_record_check_it_made(tmp_path):
    dumps = (FIXTURES / "records-x86_64-jump_label.txt").read_text().splitlines()
    words = recording_page.record_words(recording_page.record_check(tmp_path, record_run(tmp_path, dumps)))
    assert "in each of the 1 guests, each variant's 20 calls left exactly the records" in words
    assert words.endswith("780 records in all with the events on, 0 with them off.")


def test_a_failed_record_check_is_reported_as_failed(tmp_path):
    dumps = (FIXTURES / "records-x86_64-jump_label.txt").read_text().splitlines()
    dumps.remove(next(line for line in dumps if line.endswith("tpbench_hit: i=7")))
    words = recording_page.record_words(recording_page.record_check(tmp_path, record_run(tmp_path, dumps)))
    assert words.startswith("The record check **failed**: 1 problems, the first: "
                            "x86_64/jump_label: events on: c_trace's 20 calls left 19 records")


def test_a_run_without_trace_dumps_says_the_records_were_not_read(tmp_path):
    words = recording_page.record_words(recording_page.record_check(tmp_path, record_run(tmp_path, [])))
    assert words.startswith("The records were not read back in this run")


@pytest.mark.parametrize("series, middle, other, words", [
    (4, 4, 4, "-"),
    (4, 2, 2, "compiler -2"),                    # GCC 14 sinks C's loads, mainline adds nothing
    (3, 3, 6, "kernel +3"),                      # mainline's count read is a call
    (19, 18, 20, "compiler -1, kernel +2"),
    (4, None, 2, "compiler or kernel -2"),
])
def test_a_difference_between_kernels_is_split_into_the_compilers_part_and_the_kernels(
        series, middle, other, words):
    assert mainline_page.cause(series, middle, other) == words


@pytest.mark.parametrize("others, words", [
    ([("tiny", ["x86_64", "arm64"]), ("mainline", ["x86_64", "arm64"])], ""),
    ([("tiny", ["x86_64"]), ("mainline", ["x86_64"])], "x86_64"),
    ([("tiny", ["x86_64"]), ("mainline", ["x86_64", "arm64"])], "tiny=x86_64"),
])
def test_reproduce_gives_each_further_run_its_architectures(others, words):
    assert method_page.compare_archs_words(["x86_64", "arm64"], others) == words


def test_the_arguments_advice_follows_the_loads_counted():
    """What a driver author is told to write comes from the argument loads each Rust form left
    on the disabled paths, and a lazy form that still loads is called out, not praised."""
    words = driver_page.advice_on_arguments({"rust_txn": [3, 3, 0], "rust_txn_lazy": [0, 0, 0]})
    assert words[0].startswith("What to write: `rust_txn` loads its arguments on the disabled "
                               "path in 2 of the 3 kernels measured, `rust_txn_lazy` in none.")
    bad = driver_page.advice_on_arguments({"rust_txn": [3], "rust_txn_lazy": [1]})
    assert bad[0].startswith("**`rust_txn_lazy` still loads arguments on 1 of 1")
    assert driver_page.advice_on_arguments({"rust_txn": [3]}) == []


def test_the_verdict_has_a_row_per_site_with_its_spread_between_processes():
    """verdict.csv of the committed run: instructions per site exact, the driver-like site's
    argument loads, and natively the median and range over the five processes (rounds), not
    the fastest alone."""
    run_id = committed_run_id()
    table = pd.read_csv(cfg.REPO / "data" / run_id / "verdict.csv")
    row = table.set_index(["arch", "config", "profile", "kernel", "variant"]).loc
    assert row[("x86_64", "jump_label", "distro", "series", "c_trace")].instructions_per_site == 1
    helper = row[("x86_64", "jump_label", "distro", "series", "rust_helper")]
    assert helper.instructions_per_site == 6 and helper.native_processes == 5
    assert helper.native_min < helper.native_median < helper.native_max
    assert helper.native_unit == "TSC ticks"
    assert row[("x86_64", "jump_label", "distro", "series", "rust_txn")].argument_loads == 3
    assert row[("x86_64", "no_jump_label", "distro", "mainline", "rust_trace")
               ].instructions_per_site == 7
    assert pd.isna(row[("arm64", "jump_label", "distro", "series", "rust_trace")].native_median)
    assert set(table.profile) == {"distro", "tiny", "clang"}
    assert {"series", "mainline"} <= set(table.kernel)


def test_committed_report_answers_first_on_a_few_screens():
    """REPORT.md: the question, a numbered answer from the verdict, the scope, the table of
    instructions per site, native time with its spread; under 170 lines (its two tables grow
    a row per kernel and build measured)."""
    text = committed_report()
    lines = text.splitlines()
    assert len(lines) < 170, len(lines)
    assert lines[0] == "# Does a disabled tracepoint cost the same from Rust as from C?"
    assert lines.index("## Answer") < 10
    answer = text.split("## Answer")[1].split("\n## ")[0]
    assert "1. **With jump labels**" in answer and "1 instruction each on x86_64" in answer
    assert "calling `rust_helper_static_key_count()`" in answer
    for heading in ("## Scope", "## Extra instructions per disabled site",
                    "## Native time per site (x86_64, TSC ticks per call, returns as this "
                    "host's kernel sends them: ",
                    "## What the helper costs under each return thunk",
                    "## Further questions"):
        assert heading in text, heading
    assert "| x86_64 | series | distro | 1 | 1 | 6 | 3 | 2 | 8 |" in text
    assert "not resolved" in text and "virtual" in text.split("## Scope")[1]


def links(text: str) -> list[str]:
    return [m for m in re.findall(r"\]\(([^)#]+)\)", text) if "://" not in m]


def test_every_relative_link_of_the_report_and_its_pages_resolves():
    run = cfg.REPO / "data" / committed_run_id()
    documents = [cfg.REPO / "REPORT.md", cfg.REPO / "README.md",
                 *(cfg.REPO / "docs").glob("*.md"), *(run / "report").glob("*.md")]
    missing = [(d.name, target) for d in documents for target in links(d.read_text())
               if not (d.parent / target).exists()]
    assert not missing, missing


def test_a_native_site_within_the_noise_is_not_resolved():
    from analysis import words
    row = pd.Series(dict(native_median=0.01, native_min=-0.27, native_max=0.28,
                         native_noise=0.04))
    assert words.native_words(row) == "< 0.28, not resolved"
    row = pd.Series(dict(native_median=3.19, native_min=2.24, native_max=3.98,
                         native_noise=0.08))
    assert words.native_words(row) == "3.19 (2.24..3.98)"
    table = pd.DataFrame([dict(variant="rust_dense", native_median=0.01, native_min=-0.27,
                               native_max=0.28, native_noise=0.04)])
    assert words.native_of(table, variant="rust_dense") == "< 0.28, not resolved"
    assert words.native_of(table, variant="c_dense") is None


def test_the_verdict_names_the_functions_a_disabled_site_calls():
    """mainline without jump labels reads the key's count through a call; the helper's site
    calls the helper; the series' sites call nothing."""
    table = pd.read_csv(cfg.REPO / "data" / committed_run_id() / "verdict.csv",
                        keep_default_na=False)
    row = table.set_index(["arch", "config", "profile", "kernel", "variant"]).loc
    assert row[("x86_64", "no_jump_label", "distro", "mainline", "rust_trace")
               ].calls_while_off == "rust_helper_static_key_count"
    assert row[("riscv64", "jump_label", "distro", "series", "rust_helper")
               ].calls_while_off == "tpbench_trace_helper"
    assert row[("x86_64", "no_jump_label", "distro", "series", "rust_trace")].calls_while_off == ""


def test_the_headline_figure_draws_what_the_verdict_holds():
    """Each bar of the headline figure is a verdict row of the headline profile; rows without
    a site (32-bit arm's Rust in 6.12) are named, not drawn as zero."""
    from analysis import figures
    table = pd.read_csv(cfg.REPO / "data" / committed_run_id() / "verdict.csv")
    rows = figures.headline_rows(table, "distro")
    assert rows[0] == ("x86_64", "series") and ("arm", "series") in rows
    assert ("x86_64", "tiny") not in rows and all(k != "tiny" for _, k in rows)


def test_compare_names_what_changed_between_two_verdicts():
    from analysis import compare
    old = pd.DataFrame([dict(arch="x86_64", config="no_jump_label", profile="distro",
                             kernel="series", variant="rust_trace", instructions_per_site=3,
                             argument_loads=None, calls_while_off="", native_min=0.0,
                             native_max=0.5, native_unit="TSC ticks"),
                        dict(arch="arm", config="jump_label", profile="distro", kernel="series",
                             variant="c_trace", instructions_per_site=1, argument_loads=None,
                             calls_while_off="", native_min=None, native_max=None,
                             native_unit=None)])
    new = old.iloc[:1].assign(instructions_per_site=7, native_min=2.0, native_max=3.0,
                              calls_while_off="rust_helper_static_key_count")
    assert compare.changes(new, old) == [
        "x86_64 no_jump_label distro series rust_trace: instructions per site 3 -> 7",
        "x86_64 no_jump_label distro series rust_trace: calls while off none -> "
        "rust_helper_static_key_count",
        "x86_64 no_jump_label distro series rust_trace: native 0.00..0.50 -> 2.00..3.00 TSC "
        "ticks (the ranges over processes no longer overlap)",
        "gone: arm jump_label distro series (c_trace)"]
    assert compare.changes(old, old) == []


def test_compare_names_every_native_figure_one_run_lacks():
    """A host that refused every variant leaves verdict rows without native figures; each
    is named, and so is each figure under a return thunk one run timed and the other not."""
    from analysis import compare
    row = dict(arch="x86_64", config="jump_label", profile="distro", kernel="series",
               variant="rust_helper", instructions_per_site=6, argument_loads=None,
               calls_while_off="tpbench_trace_helper", native_median=1.8, native_min=1.5,
               native_max=3.3, native_unit="TSC ticks")
    old = pd.DataFrame([row])
    new = old.assign(native_median=None, native_min=None, native_max=None, native_unit=None)
    assert compare.changes(new, old) == [
        "x86_64 jump_label distro series rust_helper: native figure gone (was 1.50..3.30 TSC "
        "ticks)"]
    thunk = dict(row, thunk="srso_alias", host=False, native_median=20.1, native_min=19.8,
                 native_max=21.0)
    host = dict(row, thunk="ret", host=True)
    assert compare.thunk_changes(pd.DataFrame([host, thunk]), pd.DataFrame([host])) == [
        "x86_64 jump_label distro series rust_helper (returns through srso_alias): native "
        "figure new (19.80..21.00 TSC ticks)"]
    assert compare.thunk_changes(pd.DataFrame([host]), pd.DataFrame([host, thunk])) == [
        "x86_64 jump_label distro series rust_helper (returns through srso_alias): native "
        "figure gone (was 19.80..21.00 TSC ticks)"]


def test_the_expected_counts_agree_with_the_committed_run():
    """tests/expected_counts.py, which make test holds fresh guests to, says what the committed
    run measured: every count of each profile the run has, for each panel it ran."""
    from tests import expected_counts
    run = cfg.REPO / "data" / committed_run_id()
    checked = 0
    for directory in cli.profile_runs(run):
        context = json.loads((directory / "context.json").read_text())
        if load.kernel_of(context) != "series":
            continue
        table = expected_counts.EXPECTED[load.profile_of(context)]
        summary = pd.read_csv(directory / "summary.csv")
        summary = summary[summary.accel == "tcg"].set_index(
            ["arch", "config", "state", "variant"]).per_call
        for (arch, config, state), counts in table.items():
            for variant, want in counts.items():
                key = (arch, config, state, variant)
                if key not in summary.index:
                    continue
                assert summary[key] == want, (directory.name, *key)
                checked += 1
    assert checked > 100, checked


def test_each_answer_holds_for_every_row_of_the_site_table():
    """The Answer's ranges and counts are over every kernel and build the tables show, not
    the run's own alone (issue 32): the helper's range, each site that costs otherwise than
    the series' distro build, the argument loads over every kernel."""
    text = committed_report()
    answer = text.split("## Answer")[1].split("\n## ")[0]
    lines = {line[:2]: line for line in answer.splitlines() if line[:1].isdigit()}
    table = pd.read_csv(cfg.REPO / "data" / committed_run_id() / "verdict.csv")
    helper = table[table.variant == "rust_helper"].instructions_per_site
    assert (f"{helper.min():g} to {helper.max():g} instructions per event, on every "
            "architecture, config, kernel and build measured") in answer_line(lines, "out-of-line C helper pays")
    sites = table[table.variant.isin(["c_trace", "rust_trace"])].pivot_table(
        index=["kernel", "profile", "arch", "config"], columns="variant",
        values="instructions_per_site").dropna()
    for (kernel, profile, arch, config), r in sites.iterrows():
        own = sites.loc[("series", "distro", arch, config)] \
            if ("series", "distro", arch, config) in sites.index else None
        if (kernel, profile) != ("series", "distro") and (own is None
                                                           or tuple(r) != tuple(own)):
            line = lines["1." if config == "jump_label" else "2."]
            assert f"C's runs {r.c_trace:g} and Rust's {r.rust_trace:g} on" in line, (
                kernel, profile, arch, config)
            assert arch in line.split(f"C's runs {r.c_trace:g} and Rust's {r.rust_trace:g}")[1]
    loads = table[(table.variant == "rust_txn") & table.argument_loads.notna()]
    assert (f"({(loads.argument_loads > 0).sum()} of {len(loads)} over every kernel and build)"
            in answer_line(lines, "Arguments read"))


def answer_line(lines: dict, words: str) -> str:
    (line,) = [line for line in lines.values() if words in line]
    return line


def test_the_layout_answer_names_every_row_of_16_sites_in_a_row_where_the_counts_tie():
    """Where counts tie the Answer says which side takes a branch (issue 32): every kernel,
    build and architecture whose C and Rust sites run as many instructions among 16 in a row
    is named beside its C and Rust figures of branches taken per site, read from
    verdict.csv; one whose counts differ is not named there."""
    answer = committed_report().split("## Answer")[1].split("\n## ")[0]
    line = next(x for x in answer.splitlines() if "Without jump labels, where the counts tie" in x)
    table = pd.read_csv(cfg.REPO / "data" / committed_run_id() / "verdict.csv")
    dense = table[(table.config == "no_jump_label") & table.variant.isin(["c_dense", "rust_dense"])]
    taken = dense.pivot_table(index=["kernel", "profile", "arch"], columns="variant",
                              values="taken_per_site").dropna()
    counts = dense.pivot_table(index=["kernel", "profile", "arch"], columns="variant",
                               values="instructions_per_site")
    tie = {k for k, r in counts.iterrows() if answer_fmt(r.c_dense) == answer_fmt(r.rust_dense)}
    assert len(tie) >= 4 and len(tie) < len(taken)
    for (kernel, profile, arch), r in taken.iterrows():
        # "series distro riscv64" is not "mainline-series distro riscv64".
        groups = [part for part in line.split("; ")
                  if re.search(rf"(?<![\w-]){kernel} {profile} {arch}\b", part)]
        if (kernel, profile, arch) not in tie:
            assert not groups, (kernel, profile, arch)
            continue
        assert f"C's {answer_fmt(r.c_dense)} and Rust's {answer_fmt(r.rust_dense)}" in groups[0], \
            (kernel, profile, arch, groups)


def test_the_layout_table_says_why_a_native_cell_is_empty():
    """Every native cell of the 16-sites table holds a figure, `-` (not x86_64), or why the
    native stage refused the site (mainline's Rust site without jump labels calls into the
    kernel)."""
    section = committed_report().split("## Instructions and branches taken per site")[1]
    rows = [r.split(" | ") for r in section.split("\n## ")[0].splitlines()
            if r.startswith("| ") and not r.startswith("| arch")]
    assert rows
    for r in rows:
        native = [c.strip(" |") for c in r[-2:]]
        assert all(native), r
        if r[0] != "| x86_64":
            assert native == ["-", "-"], r
    assert any("not timed: calls the kernel's rust_helper_static_key_count()" in c
               for r in rows for c in r), rows


def answer_fmt(x: float) -> str:
    from analysis.stats import fmt
    return fmt(x)


def test_the_pages_point_at_what_exists():
    """No page speaks of a figure or a section it does not have (issue 32): the native page
    links its figure and the guest page's Mitigations, dense.md no longer points at a
    figure above."""
    native = committed_page("native")
    assert "![each site per process and placement](../plots/native.png)" in native
    assert "[the guest page](guest.md)" in native and "Mitigations" in committed_page("guest")
    assert "figure above" not in committed_page("dense")
    # Rust minus C while recording has both signs: the page does not call it Rust's extra.
    assert "of both signs: where Rust's site costs more" in committed_page("recording")


def test_each_further_question_spans_every_row_its_page_shows():
    """The one-line findings range over every site kind, kernel and build (issue 32): the
    committed run's driver-like, tiny and mainline rows set the ends the issue measured, its
    clang arm64 rows the top of the probe's (26), and mainline-series' lazy site, which calls
    into C without a second key test, the bottom (16 fewer)."""
    text = committed_report()
    further = text.split("## Further questions")[1]
    assert "from 16 fewer to 26 more instructions per event than its C counterpart (over every " \
           "site kind, kernel and build)" in further
    assert "Rust minus C is -2.0% to +4.0% of a record's cost (over every site kind, kernel " \
           "and build)" in further
    assert "36 to 172 bytes in C, 43 to 112 bytes in Rust" in further
    assert "5 in C and 1 in Rust (series tiny)" in further


def test_the_scope_names_each_compiler_the_counter_and_what_is_missing():
    """What each number is (issue 32): riscv64's C is clang's and the scope says why;
    loongarch64's coarse counter is named beside "exact"; every architecture a further
    kernel or build lacks is named with its reason."""
    text = committed_report()
    scope = text.split("## Scope")[1].split("\n## ")[0]
    rows = {line.split(" | ")[0].strip("| "): line for line in scope.splitlines()}
    assert "clang 14.0.6 (riscv64)" in rows["compilers"] and "CC_IS_CLANG" in rows["compilers"]
    assert "loongarch64's counter ticks once per 10 instructions" in rows["guest"]
    import json
    run = cfg.REPO / "data" / committed_run_id()
    main = json.loads((run / "context.json").read_text())
    for sub in [p for p in run.iterdir() if (p / "context.json").exists()]:
        other = json.loads((sub / "context.json").read_text())
        for arch in set(main["archs"]) - set(other["archs"]):
            name = f"{other['kernel']} {other['profile']}"
            # A kernel and build may have two entries: what it could not have, what was not
            # asked for.
            part = " ".join(p.split(";")[0] for p in rows["not measured"].split(name + ":")[1:])
            assert arch in part, (name, arch)


def test_the_cover_letter_region_is_replaced_and_nothing_else():
    from analysis import cover
    letter = ("Subject: [PATCH 0/2] x\n\nHand-written.\n\nMeasured by tpbench run old (x)\n"
              "old figures\n\n a/b.c | 2 +-\n 1 file changed\n")
    new = cover.fill(letter, "Measured by tpbench run new (y)\nnew figures\n")
    assert new.startswith("Subject: [PATCH 0/2] x\n\nHand-written.\n\nMeasured by tpbench run new")
    assert new.endswith("new figures\n\n a/b.c | 2 +-\n 1 file changed\n")
    assert cover.region_of(new) == "Measured by tpbench run new (y)\nnew figures\n"
    with pytest.raises(ValueError, match="no region"):
        cover.fill("Subject: x\n\nno region here\n", "Measured by tpbench run z\n")


def test_reproduce_names_a_kernel_built_in_a_further_profile():
    run = {"archs": ["x86_64", "arm64"], "profile": "distro", "kernel": "series"}
    others = [{"archs": ["x86_64", "arm64"], "profile": "clang", "kernel": "series"},
              {"archs": ["x86_64"], "profile": "distro", "kernel": "mainline"},
              {"archs": ["x86_64"], "profile": "clang", "kernel": "mainline"}]
    command = method_page.reproduce_command(run, others)
    assert 'PROFILES="distro clang"' in command
    assert 'COMPARE_KERNELS="mainline clang/mainline"' in command
    assert 'COMPARE_ARCHS="mainline=x86_64 clang/mainline=x86_64"' in command


def test_the_series_for_mainline_meets_its_goals_in_the_committed_run():
    """Issue 35's goals, on every architecture and config the committed run measured
    mainline-series on: Rust's bare site costs at most C's and calls nothing; among 16 in a
    row, each costs at most C's and no branch is taken; the lazy site is one instruction (the
    NOP) with jump labels; with a probe attached the lazy site runs fewer instructions than
    on mainline (no second key test); and the series' doctests ran and passed."""
    run = cfg.REPO / "data" / committed_run_id()
    table = pd.read_csv(run / "verdict.csv", keep_default_na=False, na_values=[""])
    ours = table[(table.kernel == "mainline-series") & (table.profile == "distro")]
    assert not ours.empty

    def value(arch, config, variant, column="instructions_per_site", kernel="mainline-series"):
        return cli.verdict.cell(table[table.profile == "distro"], column, kernel=kernel,
                                arch=arch, config=config, variant=variant)
    summaries = {load.kernel_of(json.loads((d / "context.json").read_text())):
                 stats.guest(pd.read_csv(d / "summary.csv")) for d in cli.profile_runs(run)
                 if json.loads((d / "context.json").read_text()).get("profile") == "distro"}
    for arch, config in dict.fromkeys(zip(ours.arch, ours.config)):
        where = (arch, config)
        assert value(*where, "rust_trace") <= value(*where, "c_trace"), where
        assert not value(*where, "rust_trace", "calls_while_off"), where
        assert value(*where, "rust_dense") <= value(*where, "c_dense"), where
        assert value(*where, "rust_dense", "taken_per_site") == 0, where
        if config == "jump_label":
            assert value(*where, "rust_txn_lazy") == 1, where
        nets = [stats.rows(summaries[k], arch=arch, config=config, state="enabled",
                           variant="rust_txn_lazy").net.iloc[0]
                for k in ("mainline", "mainline-series")]
        assert nets[1] < nets[0], (where, nets)
    context = json.loads((run / "mainline-series" / "context.json").read_text())
    for name, c in context["configs"].items():
        doctests = c["doctests"]
        assert doctests["failed"] == 0 and len(doctests["series"]) == 2, name
        assert {t["status"] for t in doctests["series"]} == {"ok"}, name


def test_the_binder_answer_holds_for_every_row_of_the_committed_binder_part():
    """Issue 36: the committed run has its Binder part; the Answer's Binder line is what its
    files give, names each driver in each config the part measured, and the page's table has
    a row per driver, config and payload, and names the functions the sites keep out of
    line."""
    from analysis import binder
    from common import binder as names
    run = cfg.REPO / "data" / committed_run_id()
    context, samples, events = binder.load(run)
    table = binder.costs(binder.per_trip(context, samples), events)
    line = binder.sentence(table, context)
    assert line in committed_report()
    for r in table[table.payload == binder.ANSWER_PAYLOAD].itertuples():
        assert (f"{names.DRIVERS[r.driver]}'s {r.sites:g} sites cost "
                f"{binder.whole(r.disabled_cost)} of {binder.whole(r.round_trip)}") in line
    # x86_64 with and without jump labels, arm64 with (7.3's arm64 always has them).
    assert {(r.driver, r.arch, r.config) for r in table.itertuples()} == {
        (d, a, c) for d in ("c", "rust") for a, c in (("x86_64", "jump_label"),
                                                     ("x86_64", "no_jump_label"),
                                                     ("arm64", "jump_label"))}
    assert set(table.unit) == {"instructions"}     # arm64's ticks times 10^9/CNTFRQ
    page = committed_page("binder")
    rows = [row for row in page.splitlines() if row.startswith(("| C Binder |",
                                                                "| Rust Binder |"))]
    assert len(rows) == len(table) == 12
    assert "`binder_thread_write()`" in page
    # Single-stepped on x86_64: the stepped difference is the slopes', and C's extra lock.
    assert ("**C Binder, x86_64 JL=y**: 18,979 instructions stepped as shipped, 18,538 in the "
            "floor: +441, where the slopes differ by 441") in page
    assert "takes a spinlock 3 more times per round trip" in page
    assert ("C Binder as shipped takes a spinlock 3 more times per round trip (x86_64 JL=y, "
            "x86_64 JL=n) than without its sites") in committed_report()
    assert "**Rust Binder, arm64 JL=y**: not single-stepped in this run" in page
    # Without jump labels mainline's Rust sites call into C for the key: dearer than the
    # helper world, which the series for mainline undoes; the further question says so.
    assert ("x86_64 JL=n: Rust Binder's sites as shipped cost more than through out-of-line C "
            "helpers (323 against 254), the series for mainline 78; ") in committed_report()
    assert "![Binder, disabled sites per round trip](../plots/binder.png)" in page
