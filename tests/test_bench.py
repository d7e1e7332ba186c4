"""The benchmark: parameter checks, the KTAP parser on captured guest output,
and a short real matrix under TCG with -icount, whose per-call costs are exact."""

import csv
import re
import json

import pytest

from common import console, matrix, messages, rundir
from runner import bench
from runner import config as cfg
from tests import expected_counts
from tests.conftest import (FIXTURE_VARIANTS, FIXTURES, KERNELS, OUT, RUST_ARCHS, TEST_ARCHS,
                            TEST_PROFILE)


def read(name):
    return (FIXTURES / name).read_text().splitlines()


@pytest.mark.parametrize("arch, variants, words", [
    ("mips", bench.VARIANTS, "unknown architecture 'mips'; supported: x86_64, arm64, arm, riscv64, loongarch64"),
    ("arm", ("rust_trace",), "arm: 6.12 has no Rust there, and VARIANTS names no C variant"),
])
def test_a_matrix_an_architecture_cannot_run_is_refused_before_anything_runs(
        tmp_path, arch, variants, words):
    with pytest.raises(messages.Failure, match=re.escape(words)):
        bench.run_matrix(["jump_label"], "tcg", bench.BenchParams(variants=variants), tmp_path,
                         [arch])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("profiles, words", [
    (("fast",), "unknown build profile 'fast'; valid: distro, tiny"),
    (("distro", "distro"), "name each build profile once, not distro distro"),
])
def test_a_bad_build_profile_is_refused_before_anything_runs(tmp_path, profiles, words):
    with pytest.raises(messages.Failure, match=re.escape(words)):
        bench.run_matrix(["jump_label"], "tcg", bench.BenchParams(), tmp_path, ["x86_64"],
                         profile_names=profiles)
    assert list(tmp_path.iterdir()) == []


def test_the_further_profiles_run_on_the_runs_architectures(tmp_path):
    with pytest.raises(messages.Failure, match="a further run's architecture 'riscv64' is "
                                            "not among the run's"):
        bench.run_matrix(["jump_label"], "tcg", bench.BenchParams(), tmp_path, ["x86_64"],
                         profile_names=("distro", "tiny"), compare_archs=("riscv64",))
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_kernel_is_refused_before_anything_runs(tmp_path, capsys):
    with pytest.raises(messages.Failure, match=re.escape("unknown kernel '6.13'; valid: series, "
                                                      "mainline, mainline-series, series-gcc14")):
        bench.run_matrix(["jump_label"], "tcg", bench.BenchParams(), tmp_path, ["x86_64"],
                         kernel_name="6.13")
    from runner import __main__ as cli
    with pytest.raises(SystemExit):
        cli.main(["bench", "--data", str(tmp_path), "--kernel", "6.13"])
    assert "invalid choice: '6.13'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("compare, words", [
    (("6.13",), "unknown kernel '6.13'; valid: series, mainline, mainline-series, series-gcc14"),
    (("series",), "name each kernel once, not series series"),
    (("mainline", "mainline"), "name each kernel once, not series mainline mainline"),
    (("clang/mainline",), "COMPARE_KERNELS names clang/mainline, but 'clang' is no further "
                          "build profile of PROFILES (distro)"),
    (("clang/series",), "name each kernel once"),
])
def test_a_bad_kernel_to_compare_is_refused_before_anything_runs(tmp_path, compare, words):
    with pytest.raises(messages.Failure, match=re.escape(words)):
        bench.run_matrix(["jump_label"], "tcg", bench.BenchParams(), tmp_path, ["x86_64"],
                         compare_kernels=compare)
    assert list(tmp_path.iterdir()) == []


def test_a_bad_build_profile_is_a_usage_error(tmp_path, capsys):
    from runner import __main__ as cli
    assert cli.main(["bench", "--data", str(tmp_path), "--profiles", "distro,fast"]) == 2
    assert cli.main(["kernels", "--profiles", "fast"]) == 2
    err = capsys.readouterr().err
    assert err.count("unknown build profile 'fast'") == 2 and "Traceback" not in err


def test_an_architecture_without_rust_runs_the_c_variants():
    params = bench.BenchParams().for_arch(cfg.ARCHS["arm"])
    assert params.variants == ("c_empty", "c_base", "c_trace", "c_txn_base", "c_txn", "c_dense")
    assert "variants=c_empty,c_base,c_trace,c_txn_base,c_txn,c_dense" in params.module_args()
    assert bench.BenchParams().for_arch(cfg.ARCHS["x86_64"]).variants == bench.VARIANTS


# --- KUnit doctests at boot ------------------------------------------------

def test_doctest_summary_keeps_counts_and_the_series_examples():
    suite = console.parse_kunit_suite(read("console-kunit-doctests-x86_64.log"),
                                      "rust_doctests_kernel")
    summary = bench.doctest_summary(suite)
    assert (summary["passed"], summary["failed"], summary["skipped"]) == (117, 0, 0)
    assert [t["location"] for t in summary["series"]] == [
        "rust/kernel/jump_label.rs:129", "rust/kernel/jump_label.rs:28",
        "rust/kernel/tracepoint.rs:30"]
    assert summary["problems"] == []


# --- parameters -----------------------------------------------------------

def test_default_params_are_valid():
    assert bench.BenchParams().problems() == []


@pytest.mark.parametrize("params, words", [
    (bench.BenchParams(variants=("c_trace", "go_trace")), "unknown variant 'go_trace'"),
    (bench.BenchParams(states=("paused",)), "unknown state 'paused'"),
    (bench.BenchParams(ns=(10, -1)), "N=-1 is outside"),
    (bench.BenchParams(ns=(10**9,)), "N=1000000000 is outside"),
    (bench.BenchParams(ns=tuple(range(17))), "between 1 and 16 values of N"),
    (bench.BenchParams(reps=0), "reps=0 is outside"),
    (bench.BenchParams(variants=()), "at least one value"),
])
def test_bad_params_are_named(params, words):
    assert any(words in p for p in params.problems()), params.problems()


def test_bad_params_fail_before_any_boot(tmp_path, capsys):
    from runner import __main__ as cli
    assert cli.main(["bench", "--reps", "0", "--data", str(tmp_path)]) == 2
    assert "reps=0 is outside 1..1000" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []   # no run directory was even made


def test_module_args_round_trip():
    p = bench.BenchParams(variants=("c_trace",), ns=(1, 10), reps=5, warmup=0)
    assert p.module_args() == ["variants=c_trace", "states=disabled,enabled,recording", "ns=1,10",
                               "reps=5", "warmup=0"]


# --- KTAP from real guests ---------------------------------------------------

def test_clean_ktap():
    k = console.parse_ktap(read("ktap-bench-jump_label.txt"))
    assert k.ok and k.plan == 5 and len(k.tests) == 5
    assert [name for _, name, _ in k.tests][:3] == [
        "rust_static_branch_follows_key", "key_off_no_hits", "probe_sees_every_call"]
    assert "key off, probe attached: variant=rust_trace n=1000 hits=0 ok" in k.diagnostics
    assert {s["variant"] for s in k.samples} == set(FIXTURE_VARIANTS)
    assert "key before=0 during=1 after=0 register=0" in k.diagnostics
    # The txn probe checks each call's arguments against its transaction's fields; 1000
    # calls walk the 16 transactions (ids 1000..1015) 62.5 times.
    assert "hits variant=rust_txn n=1000 hits=1000 sum=1007468 last=7 bad=0 ok" in k.diagnostics
    assert "hits variant=c_dense n=1000 hits=16000 sum=7992000 last=999 bad=0 ok" in k.diagnostics


def test_truncated_ktap_counts_missing_tests_as_crashed():
    lines = read("ktap-bench-jump_label.txt")
    cut = lines[:next(i for i, l in enumerate(lines) if "state=disabled" in l) + 5]
    k = console.parse_ktap(cut)
    assert not k.ok
    assert any("[4, 5] announced by the plan but never reported" in p for p in k.problems)


def test_refused_insmod_has_no_ktap():
    k = console.parse_ktap(read("ktap-bench-insmod-refused.txt"))
    assert not k.ok and k.samples == ()
    assert "no 'KTAP version 1' header" in k.problems[0]
    log = read("console-bench-insmod-refused.log")
    assert any("tpbench: parameter variants: unknown value 'go_trace'" in l for l in log)


def test_failed_test_is_reported():
    lines = [l.replace("ok 2 key_off_no_hits", "not ok 2 key_off_no_hits")
             for l in read("ktap-bench-jump_label.txt")]
    k = console.parse_ktap(lines)
    assert not k.ok and "test 2 key_off_no_hits failed" in k.problems


def test_a_results_line_cut_short_is_not_used():
    text = (FIXTURES / "ktap-bench-jump_label.txt").read_text()
    cut = text[:text.index("cycles=", text.index("# sample")) + len("cycles=1")]
    lines, problems = console.whole_lines(cut)
    assert problems and "cut short" in problems[0] and "cycles=1'" in problems[0]
    assert not any(l.endswith("cycles=1") for l in lines)
    assert console.whole_lines(text) == (text.splitlines(), [])


def test_one_value_of_n_is_refused_before_boot():
    problems = bench.BenchParams(ns=(0, 100)).problems()
    assert any("at least two values of N above 0" in p for p in problems)


def test_samples_csv_columns():
    rows = [dict(arch="x86_64", config="jump_label", accel="tcg", variant="c_trace",
                 state="disabled", n=10, rep=0, cycles=76)]
    text = bench.samples_csv(rows)
    assert text.splitlines()[0] == "arch,config,accel,variant,state,n,rep,cycles"
    assert list(csv.DictReader(text.splitlines()))[0]["cycles"] == "76"


# --- the real matrix ---------------------------------------------------------

SHORT = bench.BenchParams(ns=(1, 10, 100), reps=3, warmup=1)

# Instructions per loop iteration under TCG -icount, per build profile, each explained from
# the disassembly: tests/expected_counts.py.
EXPECTED = expected_counts.EXPECTED[TEST_PROFILE]


def variants_of(arch):
    """The variants a guest of `arch` runs: the C ones alone where there is no Rust."""
    return bench.BenchParams().for_arch(cfg.ARCHS[arch]).variants


def per_call(run, arch, config, state):
    """Exact per-call cost: the difference between N=100 and N=10 over 90 calls, where the
    counter ticks once per instruction (every repetition then gives the same sample); else
    (loongarch64's ticks once per 10) the analysis's slope, which identifies the count."""
    if cfg.ARCHS[arch].counter_period > 1:
        from analysis import stats
        from analysis.load import load_run
        summary = stats.summarize(*load_run(run, allow_incomplete=False)[1:])
        mine = summary[(summary.arch == arch) & (summary.config == config)
                       & (summary.state == state)]
        return {r.variant: r.per_call for r in mine.itertuples()}
    samples = load(run)
    got = {}
    for variant in variants_of(arch):
        def at(n):
            values = {int(r["cycles"]) for r in samples if r["arch"] == arch
                      and not r["accel"].startswith("native") and r["config"] == config and r["state"] == state
                      and r["variant"] == variant and int(r["n"]) == n}
            assert len(values) == 1, f"{arch}/{config}/{state}/{variant} N={n} varies: {values}"
            return values.pop()
        got[variant] = (at(100) - at(10)) / 90
    return got


@pytest.fixture(scope="module")
def two_runs(kernels):
    data = OUT / "data"
    configs = list(dict.fromkeys(c for _, c in kernels))
    return [bench.run_matrix(configs, "tcg", SHORT, data, TEST_ARCHS, only=set(kernels),
                             profile_names=(TEST_PROFILE,))
            for _ in range(2)]


def load(run):
    return list(csv.DictReader((run / "samples.csv").read_text().splitlines()))


def test_run_directory_is_complete(two_runs):
    run = two_runs[0]
    ctx = json.loads((run / "context.json").read_text())
    assert ctx["complete"] is True
    assert ctx["schema_version"] == bench.SCHEMA_VERSION
    assert set(ctx["configs"]) == {f"{arch}/{name}" for arch, name in KERNELS}
    for arch, name in KERNELS:
        assert (run / f"console-{arch}-{name}.log").exists()
        entry = ctx["configs"][f"{arch}/{name}"]
        assert entry["accel"] == "tcg" and entry["unit"] == "instructions"
        assert "-icount" in entry["qemu_command"]
        # The record check: every variant fired, its records as its sites write them.
        recs = entry["records"]
        assert set(recs["on"]) == set(recs["off"]) == set(variants_of(arch))
        assert all(r["records"] == 0 for r in recs["off"].values())
        for variant, r in recs["on"].items():
            v = matrix.BY_NAME[variant]
            assert r["fields_ok"] and r["records"] == r["calls"] * v.sites, (arch, name, variant)
    rows = load(run)
    assert len(rows) == sum(len(variants_of(a)) for a, _ in KERNELS) * len(bench.STATES) * 3 * 3
    assert {r["arch"] for r in rows} == set(TEST_ARCHS)
    assert two_runs[0].name != two_runs[1].name


@pytest.mark.parametrize("arch, config, state", [k for k in EXPECTED if k[:2] in KERNELS])
def test_exact_per_call_cost(two_runs, arch, config, state):
    assert per_call(two_runs[0], arch, config, state) == EXPECTED[(arch, config, state)]


@pytest.mark.parametrize("arch, config", KERNELS)
def test_two_runs_give_identical_costs(two_runs, arch, config):
    for state in ("disabled", "enabled"):
        assert (per_call(two_runs[0], arch, config, state)
                == per_call(two_runs[1], arch, config, state))


def test_a_run_reusing_an_earlier_one_boots_nothing_and_has_its_samples(two_runs, kernels,
                                                                        monkeypatch):
    def boot(*args, **kwargs):
        raise AssertionError("a guest the earlier run holds was booted again")
    monkeypatch.setattr(bench.qemu, "boot", boot)
    configs = list(dict.fromkeys(c for _, c in kernels))
    run = bench.run_matrix(configs, "tcg", SHORT, OUT / "data", TEST_ARCHS, only=set(kernels),
                           profile_names=(TEST_PROFILE,), reuse=two_runs[0])
    assert load(run) == load(two_runs[0])
    ctx = rundir.guest_context(run)
    assert ctx["complete"] is True
    assert {e["reused_from"]["run"] for e in ctx["configs"].values()} == {two_runs[0].name}


def test_rust_disabled_site_is_no_dearer_than_c(two_runs):
    """The point of the series: against the same loop without the site, Rust's disabled
    site costs at most what C's does, and less than the out-of-line helper."""
    for arch, config in KERNELS:
        if arch in RUST_ARCHS:
            c = per_call(two_runs[0], arch, config, "disabled")
            assert c["rust_trace"] - c["rust_base"] <= c["c_trace"] - c["c_base"], (arch, config)
            assert c["rust_helper"] > c["rust_trace"]


def test_full_results_buffer_is_marked_and_never_cuts_a_sample(kernels):
    """A results buffer too small for the matrix (the module's results_kib): the module
    stops at a whole line, says so, fails its timing test, and every sample stored is
    whole; the run is kept, marked incomplete."""
    data = OUT / "data-full"
    params = bench.BenchParams(ns=(1, 10, 100, 1000), reps=20, warmup=0, results_kib=8)
    with pytest.raises(messages.Failure, match="timing_disabled failed"):
        bench.run_matrix(["jump_label"], "tcg", params, data, ["x86_64"])
    run = sorted(data.iterdir())[-1]
    results = (run / "results-x86_64-jump_label.txt").read_text()
    assert "# results buffer full: samples after this point were dropped" in results
    rows = load(run)
    assert 0 < len(rows) < len(bench.VARIANTS) * 4 * 20 * 2
    assert all(r["cycles"].isdigit() for r in rows)
    assert json.loads((run / "context.json").read_text())["complete"] is False


def test_guest_that_panics_mid_run_keeps_the_samples_that_arrived(kernels):
    """The module's test parameter panic_after: the guest panics after 10 samples, the run
    fails with the panic named, and the 10 samples it printed are kept, marked incomplete."""
    data = OUT / "data-panic"
    params = bench.BenchParams(ns=(1, 10, 100), reps=3, warmup=0, panic_after=10)
    with pytest.raises(messages.Failure, match="Kernel panic - not syncing: tpbench: panic_after=10"):
        bench.run_matrix(["jump_label"], "tcg", params, data, ["x86_64"])
    run = sorted(data.iterdir())[-1]
    rows = load(run)
    assert len(rows) == 10 and all(r["cycles"].isdigit() for r in rows)
    assert [(r["variant"], r["n"], r["rep"]) for r in rows[:4]] == [
        ("c_empty", "1", "0"), ("c_empty", "1", "1"), ("c_empty", "1", "2"), ("c_empty", "10", "0")]
    ctx = json.loads((run / "context.json").read_text())
    assert ctx["complete"] is False and "Kernel panic" in ctx["incomplete_reason"]


def test_timed_out_run_is_kept_and_marked_incomplete(kernels):
    data = OUT / "data-timeout"
    # 10 s: long enough for QEMU to print its first line on a loaded machine, and well short
    # of this matrix: 18 (variant, state) pairs * 1000 reps * 10^6 calls of at least 3
    # instructions are over 5*10^10 guest instructions, minutes even at the 0.5*10^9 per
    # second TCG ran here (with 20 reps the whole matrix once finished in 8.5 s).
    long_matrix = bench.BenchParams(ns=(1, 1_000_000), reps=1000, warmup=0)
    with pytest.raises(messages.Failure, match="timed out"):
        bench.run_matrix(["jump_label"], "tcg", long_matrix, data, ["x86_64"], timeout=10)
    (run,) = sorted(data.iterdir())[-1:]
    ctx = json.loads((run / "context.json").read_text())
    assert ctx["complete"] is False and "timed out" in ctx["incomplete_reason"]
    assert (run / "console-x86_64-jump_label.log").read_text().startswith("Linux version")


def test_codegen_checks_pass_on_the_fresh_modules(two_runs, capsys):
    """objdump of the modules just measured: NOP sites, no call when off, and the
    instructions counted per iteration equal the per-call cost measured."""
    from analysis import __main__ as analysis_cli
    assert analysis_cli.cmd_codegen(two_runs[0], allow_incomplete=False) == 0
    for arch, config in KERNELS:
        checks = (two_runs[0] / f"codegen-checks-{arch}-{config}.txt").read_text()
        assert "codegen checks that ran pass" in checks and "FAIL" not in checks, checks
        # Under icount the count check runs, for every variant.
        assert (f"instructions counted per iteration equal the per-call cost measured "
                f"under icount, for {len(variants_of(arch))} variants") in checks, checks
        skipped = [line for line in checks.splitlines() if line.startswith("skipped")]
        assert skipped == ([] if arch in RUST_ARCHS else [
            "skipped: the checks of rust_trace, rust_helper: not in this run"]), checks
    nop = {"x86_64": "nop2", "arm64": "nop4", "riscv64": "nop4", "arm": "nop4", "loongarch64": "nop4"}
    for arch in TEST_ARCHS:
        text = (two_runs[0] / f"codegen-checks-{arch}-jump_label.txt").read_text()
        assert f"site tpbench_c_trace: {nop[arch]}" in text
        if arch in RUST_ARCHS:
            assert f"site tpbench_rust_trace: {nop[arch]}" in text


@pytest.mark.skipif("x86_64" not in RUST_ARCHS, reason="no x86_64 module in this test run")
def test_native_stage_on_the_fresh_modules(two_runs):
    """The modules just measured in the guest, run on this host's CPU with a short matrix,
    through the host kernel's own return thunk and through every other one. What holds on
    any x86_64 host, however noisy: no variant reaches a trap (measure_run would raise),
    every per-call cost is finite and positive, and the helper loop costs more than the
    Rust trace loop under every thunk. Timing values themselves are not asserted."""
    import math
    from analysis import stats
    from runner import native
    if native.host_arch() != "x86_64":
        pytest.skip("the native stage runs x86_64 modules on x86_64 hosts")
    run = two_runs[1]
    host, _ = native.host_thunk()
    rows = native.measure_run(run, shifts=(0, 16))
    # The native stage keeps its own files (native.json, native-samples.csv); rundir reads
    # them together with the guests'.
    ctx = rundir.context(run)
    assert ctx["complete"] is True and ctx["units"]["native"] in ("TSC ticks", "cycles")
    assert ctx["native_about"]["host_thunk"]["name"] == host
    samples = stats.native(rundir.samples(run)).assign(thunk=host)
    if host is None:
        # A host whose thunk this loader does not know: every variant is refused, by name.
        assert rows == [] and samples.empty
        assert set(ctx["native_about"]["refused"]["x86_64/jump_label"]) == set(
            ctx["native_about"]["matrix"]["variants"])
    else:
        assert {(r["arch"], r["accel"]) for r in rows} == {("x86_64", "native"),
                                                           ("x86_64", "native+16")}
    forced = stats.pd.read_csv(run / rundir.THUNK_SAMPLES)
    everything = stats.pd.concat([samples, forced], ignore_index=True)
    assert set(everything.thunk) == set(native.THUNKS)
    for thunk, mine in everything.groupby("thunk"):
        summary = stats.summarize(mine.drop(columns="thunk"), units=ctx["units"]).set_index(
            ["config", "accel", "variant"])
        for key, r in summary.iterrows():
            assert math.isfinite(r.per_call) and r.per_call > 0, (thunk, key)
        for config in [c for a, c in KERNELS if a == "x86_64"]:
            for accel in ("native", "native+16"):
                assert (summary.loc[(config, accel, "rust_helper"), "per_call"]
                        > summary.loc[(config, accel, "rust_trace"), "per_call"]), (
                            thunk, config, accel)


@pytest.mark.parametrize("args, words", [
    (["--reps", "many"], "REPS must be integers, not 'many'"),
    (["--reps", "3 4"], "REPS must be one integer, not '3 4'"),
    (["--warmup", "1.5"], "WARMUP must be integers"),
    (["--ns", "1,ten"], "NS must be integers"),
])
def test_bad_numbers_are_usage_errors(tmp_path, capsys, args, words):
    from runner import __main__ as cli
    assert cli.main(["bench", "--data", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_runs_started_in_the_same_second_get_their_own_directories(tmp_path):
    runs = [bench.new_run_dir(tmp_path, SHORT) for _ in range(3)]
    assert len({r.name for r in runs}) == 3
    assert runs[1].name == runs[0].name + "-2" or runs[1].name[:16] != runs[0].name[:16]


def test_an_exception_without_a_message_still_gives_a_reason():
    assert bench.first_line(messages.Failure("")) == "Failure (no message)"
    assert bench.first_line(IndexError()) == "IndexError (no message)"
    assert bench.first_line(messages.Failure("boot failed\nlast lines")) == "boot failed"
    assert bench.first_line(KeyboardInterrupt()) == "interrupted (Ctrl-C)"


def test_context_names_the_checkout_and_the_module_sources():
    state = bench.project_state()
    assert len(state["project_commit"]) == 40 and isinstance(state["project_dirty"], bool)
    assert len(state["module_source_hash"]) == 12


@pytest.mark.parametrize("tokens, archs_of, problems", [
    ((), {"tiny": ("x86_64", "arm64"), "mainline": ("x86_64", "arm64")}, []),
    (("x86_64",), {"tiny": ("x86_64",), "mainline": ("x86_64",)}, []),
    (("tiny=arm64",), {"tiny": ("arm64",), "mainline": ("x86_64", "arm64")}, []),
    (("x86_64", "mainline=x86_64,arm64"), {"tiny": ("x86_64",), "mainline": ("x86_64", "arm64")},
     []),
    (("gcc=x86_64",), {"tiny": ("x86_64", "arm64"), "mainline": ("x86_64", "arm64")},
     ["COMPARE_ARCHS names 'gcc', which is no further profile or kernel of this run "
      "(tiny, mainline)"]),
    (("tiny=riscv64",), {"tiny": ("riscv64",), "mainline": ("x86_64", "arm64")},
     ["a further run's architecture 'riscv64' is not among the run's (x86_64, arm64)"]),
])
def test_each_further_run_has_its_architectures(tokens, archs_of, problems):
    assert bench.further_archs(tokens, ("x86_64", "arm64"), ["tiny", "mainline"]) == (
        archs_of, problems)


def test_a_kernel_token_names_the_profile_it_is_built_in():
    assert bench.split_kernel("mainline") == (None, "mainline")
    assert bench.split_kernel("clang/mainline") == ("clang", "mainline")


# --- guests reused from an earlier run (make bench REUSE=) --------------------

def test_reuse_needs_tcg_and_a_run_directory(tmp_path):
    with pytest.raises(messages.Failure) as e:
        bench.run_matrix(["jump_label"], "auto", SHORT, tmp_path, reuse=tmp_path / "nothing")
    assert "give ACCEL=tcg, not auto" in str(e.value)
    assert f"{tmp_path / 'nothing'} is no run directory" in str(e.value)
    assert not list(tmp_path.iterdir()), "a refused run leaves no directory"


def earlier_run(where, **changes):
    """A run directory that booted x86_64/jump_label: its context as the runner writes it."""
    where.mkdir()
    entry = {"build_key": "KEY", "accel": "tcg", "module_params": ["reps=3"]}
    ctx = {"run_id": where.name, "date": "2026-12-07T00:25:26+00:00", "complete": True,
           "module_source_hash": "MODULE", "toolchain": {"x86_64": {"qemu": "QEMU 7.2"}},
           "configs": {"x86_64/jump_label": entry}}
    for key, value in changes.items():
        (entry if key in entry else ctx)[key] = value
    rundir.write_context(where, ctx)
    (where / "samples.csv").write_text(bench.samples_csv([
        dict(arch="x86_64", config=c, accel="tcg", variant="c_trace", state="disabled", n=10,
             rep=0, cycles=70) for c in ("jump_label", "no_jump_label")]))
    for kind in ("module", "console", "results", "objdump"):
        rundir.guest_file(where, kind, "x86_64", "jump_label").write_text(kind)
    return where


def reusable(run):
    return bench.reusable_guest(run, "x86_64/jump_label", "KEY", ["reps=3"],
                                {"qemu": "QEMU 7.2"}, "MODULE")


@pytest.mark.parametrize("change, why", [
    ({}, ""),
    ({"complete": False}, "that run is incomplete"),
    ({"build_key": "OTHER"}, "its kernel was another build"),
    ({"accel": "kvm"}, "it was not counted under TCG"),
    ({"module_params": ["reps=31"]}, "its module parameters differ"),
    ({"module_source_hash": "OTHER"}, "its module sources differ"),
    ({"toolchain": {"x86_64": {"qemu": "QEMU 11.1"}}}, "its compilers or QEMU differ"),
])
def test_a_guest_is_reused_only_for_the_same_inputs(tmp_path, change, why):
    entry, why_not = reusable(earlier_run(tmp_path / "earlier", **change))
    assert why_not == why
    assert (entry is None) == bool(why)


def test_a_guest_is_found_in_whichever_part_of_the_earlier_run_ran_its_kernel(tmp_path):
    """A run of KERNEL=mainline takes its guests from the mainline/ part of a run that
    measured mainline beside the series: the build key says which kernel a guest ran."""
    run = earlier_run(tmp_path / "earlier", other_kernels=["mainline"])
    earlier_run(run / "mainline", build_key="MAINLINE")
    assert bench.part_with_guest(run, "x86_64/jump_label", "KEY") == run
    assert bench.part_with_guest(run, "x86_64/jump_label", "MAINLINE") == run / "mainline"
    assert bench.part_with_guest(run, "x86_64/jump_label", "OTHER") is None
    assert bench.part_with_guest(run, "arm64/jump_label", "KEY") is None


def test_a_guest_the_earlier_run_lacks_is_booted(tmp_path):
    run = earlier_run(tmp_path / "earlier")
    assert bench.reusable_guest(run, "arm64/jump_label", "KEY", ["reps=3"], {},
                                "MODULE") == (None, "earlier has no guest arm64/jump_label")


def test_a_reused_guest_brings_its_files_samples_and_origin(tmp_path):
    earlier = earlier_run(tmp_path / "earlier")
    entry, _ = reusable(earlier)
    run, context, rows = tmp_path / "new", {"configs": {}}, []
    run.mkdir()
    origin = {"run": "earlier", "date": "2026-12-07T00:25:26+00:00"}
    bench.reuse_guest(earlier, entry, origin, "x86_64", "jump_label", run, context, rows)
    assert [(r["config"], r["cycles"]) for r in rows] == [("jump_label", "70")]
    for kind in ("module", "console", "results", "objdump"):
        assert rundir.guest_file(run, kind, "x86_64", "jump_label").read_text() == kind
    assert context["configs"]["x86_64/jump_label"]["reused_from"] == origin
    assert json.loads((run / "context.json").read_text())["configs"]["x86_64/jump_label"][
        "reused_from"] == origin
    # Reused again, it still names the run that booted it.
    again, later = tmp_path / "again", {"configs": {}}
    again.mkdir()
    bench.reuse_guest(run, context["configs"]["x86_64/jump_label"], {"run": "new"}, "x86_64",
                      "jump_label", again, later, [])
    assert later["configs"]["x86_64/jump_label"]["reused_from"] == origin
