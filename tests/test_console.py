"""The console and results parsers, fed with console logs captured from real guest boots."""

from common import console
from tests.conftest import FIXTURES


def lines(name):
    return (FIXTURES / name).read_text().splitlines()


def test_clean_boot():
    v = console.judge_console(lines("console-clean-jump_label.log"))
    assert v.reached_init and v.finished and v.rebooted and v.panic is None and v.ok


def test_clean_boot_with_printk_timestamps():
    v = console.judge_console(lines("console-clean-printk-time.log"))
    assert v.ok and v.rebooted


def test_panic_before_init():
    v = console.judge_console(lines("console-panic-no-init.log"))
    assert not v.ok and not v.reached_init
    assert v.panic.startswith("Kernel panic - not syncing: No working init found")


def test_truncated_boot_is_not_ok():
    log = lines("console-clean-jump_label.log")
    cut = log[:next(i for i, l in enumerate(log) if "tpbench-init: started" in l) + 1]
    v = console.judge_console(cut)
    assert v.reached_init and not v.finished and not v.ok


def test_parsing_stops_at_reboot():
    log = lines("console-clean-jump_label.log") + ["Kernel panic - not syncing: after reboot"]
    assert console.judge_console(log).panic is None


def test_trace_dump_with_event_enabled():
    results = lines("results-sample-event-on.txt")
    assert console.key_values(results) == {"event_exists": "yes", "event_enable": "1"}
    trace = console.section(results, "tpbench: trace begin", "tpbench: trace end")
    records = console.trace_events(trace, "rust_sample_loaded")
    assert len(records) == 1 and records[0].endswith("rust_sample_loaded: magic=42")


def test_trace_dump_with_event_disabled():
    results = lines("results-sample-event-off.txt")
    assert console.key_values(results)["event_enable"] == "0"
    trace = console.section(results, "tpbench: trace begin", "tpbench: trace end")
    assert trace is not None and trace[0] == "# tracer: nop"
    assert console.trace_events(trace, "rust_sample_loaded") == []


def test_missing_section_is_none():
    assert console.section(["tpbench: trace begin", "x"], "tpbench: trace begin",
                           "tpbench: trace end") is None


# KUnit at boot: a real console of the x86_64 jump_label kernel, whose doctests all passed.
DOCTESTS = "console-kunit-doctests-x86_64.log"


def test_doctests_of_a_real_boot():
    suite = console.parse_kunit_suite(lines(DOCTESTS), "rust_doctests_kernel")
    assert suite.problems == ()
    assert len(suite.tests) == 117 and {t.status for t in suite.tests} == {"ok"}
    assert [(t.name, t.location) for t in suite.in_file("rust/kernel/jump_label.rs")] == [
        ("rust_doctest_kernel_jump_label_rs_0", "rust/kernel/jump_label.rs:129"),
        ("rust_doctest_kernel_jump_label_rs_1", "rust/kernel/jump_label.rs:28"),
    ]
    assert len(suite.in_file("rust/kernel/tracepoint.rs")) == 1


def test_doctest_failure_names_the_test_and_its_location():
    failed = [l.replace("    ok 49 rust_doctest_kernel_jump_label_rs_1",
                        "    not ok 49 rust_doctest_kernel_jump_label_rs_1") for l in lines(DOCTESTS)]
    suite = console.parse_kunit_suite(failed, "rust_doctests_kernel")
    assert suite.problems == ("KUnit suite rust_doctests_kernel: test 49 "
                              "rust_doctest_kernel_jump_label_rs_1 (rust/kernel/jump_label.rs:28) "
                              "failed",)


def test_doctests_cut_short_count_as_crashed():
    log = lines(DOCTESTS)
    cut = next(i for i, l in enumerate(log) if "ok 49 rust_doctest_kernel_jump_label_rs_1" in l)
    suite = console.parse_kunit_suite(log[:cut], "rust_doctests_kernel")
    assert len(suite.tests) == 48
    assert "tests [49, 50," in suite.problems[0] and "(crashed)" in suite.problems[0]
    assert "no result line for the suite" in suite.problems[1]


def test_doctests_that_never_ran_are_a_problem():
    suite = console.parse_kunit_suite(lines("console-clean-jump_label.log"), "rust_doctests_kernel")
    assert suite.tests == () and "did not run" in suite.problems[0]


def test_insmod_statuses_from_a_real_results_channel():
    """The init's insmod mode, from a real x86_64 boot: two loads that worked and one file
    that does not exist (ENOENT)."""
    assert console.insmod_statuses(lines("results-insmod-static-keys.txt")) == {
        "test_static_key_base": 0, "test_static_keys": 0, "no_such_module": 2}
    # A failing module_init() (test_static_keys returns -EINVAL) and noise around the lines.
    assert console.insmod_statuses(["tpbench: x", "insmod test_static_keys 22", "insmod y"]) == {
        "test_static_keys": 22}


def test_the_guests_mitigations_are_read_from_its_console():
    lines = ["[    2.1] tpbench-vulnerability retbleed: Not affected",
             "tpbench-vulnerability spectre_v2: Mitigation: Retpolines; STIBP: disabled",
             "tpbench-init: started"]
    assert console.vulnerabilities(lines) == {
        "retbleed": "Not affected", "spectre_v2": "Mitigation: Retpolines; STIBP: disabled"}
    assert console.vulnerabilities((FIXTURES / "console-clean-jump_label.log").read_text().splitlines()) == {}
