"""The Binder workload's results channel (common/binder.py), on a real capture: Rust Binder
in mainline 7.3.4, x86_64 with jump labels, under TCG -icount (runner binder, issue 36)."""

import pytest

from common import binder
from runner import config as cfg
from runner import kernel, qemu
from tests.conftest import BINDER_KERNELS, BINDER_PROFILE, FIXTURES

RESULTS = (FIXTURES / "binder-results-rust-x86_64-jump_label.txt").read_text().splitlines()


def test_a_real_run_has_every_state_and_no_problem():
    parsed = binder.parse(RESULTS)
    assert parsed.problems == []
    # 2 payloads x 5 repetitions x 2 counts, in each timed state.
    for state in ("disabled", "attached", "recording"):
        assert [s["state"] for s in parsed.samples].count(state) == 20
    first = parsed.samples[0]
    assert first == dict(state="disabled", payload=16, n=10, rep=0, ticks=191120)


def test_the_counting_pass_gives_each_event_per_round_trip():
    """Rust Binder's 9 events that one two-way transaction runs, 29 records per round trip,
    as the capture's 290 records between the markers over its 10 round trips say."""
    parsed = binder.parse(RESULTS)
    assert parsed.trips_counted == 10
    assert parsed.events_per_trip == {
        "binder_command": 4, "binder_ioctl": 3, "binder_ioctl_done": 3, "binder_read_done": 3,
        "binder_return": 7, "binder_transaction": 2, "binder_transaction_received": 2,
        "binder_wait_for_work": 3, "binder_write_done": 2}
    assert sum(parsed.events_per_trip.values()) == 29


def test_a_workload_that_failed_is_named_with_its_state():
    lines = [line for line in RESULTS if not line.startswith("tpbench-binder payload=")]
    at = lines.index("tpbench-binder state=recording begin") + 1
    lines[at:at] = ["tpbench-binder error: open /dev/binderfs/binder failed (errno 2)"]
    end = lines.index("tpbench-binder state=recording end status=0")
    lines[end] = "tpbench-binder state=recording end status=256"
    assert binder.parse(lines).problems == [
        "state recording: the workload failed: open /dev/binderfs/binder failed (errno 2)",
        "state recording: the workload ended with wait status 256"]


def test_a_hung_workload_and_a_cut_channel_are_problems():
    hung = [line.replace("state=count end status=0", "state=count end status=hung")
            for line in RESULTS]
    assert binder.parse(hung).problems == ["state count: the workload hung and was killed"]
    cut = RESULTS[:RESULTS.index(binder.RECORDS_BEGIN) + 20]
    assert binder.parse(cut).problems == [
        f"the records were cut short (no {binder.RECORDS_END!r})"]
    early = RESULTS[:5]
    assert binder.parse(early).problems == [
        "state disabled never finished", "state attached never finished",
        "state recording never finished", "state count never finished"]


def test_records_without_their_markers_count_nothing():
    lines = [line for line in RESULTS if "tpbench-binder-count" not in line]
    parsed = binder.parse(lines)
    assert parsed.events_per_trip == {}
    assert parsed.problems == [
        "the counting pass's records lack their markers or its trip count"]


def test_every_binder_kernel_names_its_drivers_events():
    assert set(cfg.BINDER_EVENTS) == set(cfg.BINDER_KERNELS) <= set(cfg.KERNELS)
    for name, binder_kernel in cfg.BINDER_KERNELS.items():
        assert cfg.BINDER_EVENTS[name] == ("binder" if "-c" in name else "rust_binder")
        assert binder_kernel.configured_as == "mainline"
        assert binder_kernel.root == cfg.KERNELS["mainline"].root
        assert all((cfg.CONFIGS / f).exists() for f in binder_kernel.fragments)
        assert (binder_kernel.patches / "series").exists()


def test_c_binder_records_more_events_per_round_trip_than_rust_binder():
    """The same workload on C Binder: 17 of its events run, 46 records per round trip (its
    allocator's LRU and page-range events among them), against Rust Binder's 29."""
    c = binder.parse((FIXTURES / "binder-results-c-x86_64-jump_label.txt").read_text()
                     .splitlines())
    assert c.problems == []
    assert len(c.events_per_trip) == 17 and sum(c.events_per_trip.values()) == 46
    assert c.events_per_trip["binder_update_page_range"] == 6


def test_instructions_per_round_trip_are_the_slope_of_the_fewest_ticks():
    """Rust Binder, x86_64 (a TSC tick is an instruction under -icount): 10 and 100 round
    trips at their fewest ticks give 19112.4 instructions each (16 bytes); two of five
    repetitions of 100 had the timer's interrupt in them, 1,873 instructions more."""
    table = binder.per_round_trip(binder.parse(RESULTS).samples).set_index(["state", "payload"])
    assert table.per_round_trip[("disabled", 16)] == (1911240 - 191120) / 90
    assert round(table.spread_per_round_trip[("disabled", 16)], 2) == round(
        (1913113 - 1911240) / 100, 2)
    assert table.per_round_trip[("recording", 16)] > 2 * table.per_round_trip[("disabled", 16)]



def test_arm64s_counter_gives_its_rate_and_ticks_agree_to_the_tick():
    """Rust Binder, arm64 with jump labels (a real capture): CNTFRQ says 62.5 MHz, a tick per
    16 instructions under -icount shift=0; three of five repetitions of 100 round trips
    took 139,787 ticks exactly, so 22,366 instructions a round trip (16 bytes)."""
    parsed = binder.parse((FIXTURES / "binder-results-rust-arm64-jump_label.txt")
                          .read_text().splitlines())
    assert parsed.problems == []
    assert parsed.counter_hz == 62_500_000
    assert sum(parsed.events_per_trip.values()) == 29     # the same sites as on x86_64
    table = binder.per_round_trip(parsed.samples).set_index(["state", "payload"])
    assert table.per_round_trip[("disabled", 16)] == (139787 - 13978) / 90
    assert round(table.per_round_trip[("disabled", 16)] * 16) == 22366


def test_a_counter_whose_rate_changes_is_a_problem():
    lines = ["tpbench-binder counter_hz=62500000", "tpbench-binder counter_hz=1000000"]
    assert "the counter's frequency changed: 62500000 Hz, then 1000000" in (
        binder.parse(lines).problems)

# The Binder part of a run (analysis/binder.py), on a real one: the five Binder kernels of
# x86_64 with jump labels, as runner.binder.run_part() wrote them.
PART = FIXTURES / "binder-part"


def part_copy(tmp_path, **replace: str):
    """A run directory holding a copy of the real Binder part, with files replaced."""
    part = tmp_path / "run" / "binder"
    part.mkdir(parents=True)
    for f in PART.iterdir():
        (part / f.name).write_text(replace.get(f.name, f.read_text()))
    return tmp_path / "run"


def test_the_sites_cost_is_shipped_minus_floor_and_the_answer_says_it(tmp_path):
    from analysis import binder as report
    context, samples, events = report.load(part_copy(tmp_path))
    table = report.costs(report.per_trip(context, samples), events).set_index(
        ["driver", "payload"])
    rust, c = table.loc[("rust", 16)], table.loc[("c", 16)]
    assert (rust.sites, rust.disabled_cost, rust.helper_cost) == (29, 48, 195)
    assert (c.sites, c.disabled_cost) == (46, 441) and c.helper_cost != c.helper_cost  # NaN
    assert table.loc[("rust", 4096)].disabled_cost == 48
    line = report.sentence(table.reset_index(), context)
    assert "C Binder's 46 sites cost 441 of 18,915 (2.33%)" in line
    assert "Rust Binder's 29 sites cost 48 of 19,112 (0.25%), as out-of-line C helpers 195" in line
    assert "incomplete" not in line
    # With jump labels Rust Binder's sites cost less than the helper world's: no such clause.
    assert report.finding(table.reset_index()) == (
        "C Binder's disabled sites take 2.33% of a round trip; Rust Binder's disabled sites "
        "take 0.25% of a round trip (16 bytes, every config measured).")


def test_a_run_without_the_binder_part_says_so_where_its_line_would_be(tmp_path):
    from analysis import binder as report
    assert report.load(tmp_path) is None
    assert "not measured in this run (`make bench BINDER=1`" in report.sentence(None, None)


def test_an_incomplete_binder_part_is_named_in_its_answer(tmp_path):
    import json
    from analysis import binder as report
    context = json.loads((PART / "binder.json").read_text())
    context.update(complete=False, incomplete_reason="binder-c/x86_64/jump_label: guest "
                                                     "timed out")
    run = part_copy(tmp_path, **{"binder.json": json.dumps(context)})
    context, samples, events = report.load(run)
    line = report.sentence(report.costs(report.per_trip(context, samples), events), context)
    assert "(**incomplete**: binder-c/x86_64/jump_label: guest timed out)" in line


def damaged(text: str) -> dict[str, str]:
    lines = text.splitlines(keepends=True)
    return {"cut short": "".join(lines)[:-7],
            "bad header": "".join(["kernel,arch,config\n", *lines[1:]]),
            "not a number": "".join([lines[0], lines[1].rsplit(",", 1)[0] + ",lots\n",
                                     *lines[2:]]),
            "unknown kernel": "".join([lines[0], lines[1].replace("binder-c", "binder-go", 1),
                                       *lines[2:]])}


def test_damaged_binder_samples_are_one_message_naming_the_file(tmp_path):
    import pytest
    from analysis import binder as report
    from analysis.validate import BadRun
    text = (PART / "binder-samples.csv").read_text()
    words = {"cut short": "cut short", "bad header": "header",
             "not a number": "line 2: ticks='lots'", "unknown kernel": "no Binder kernel"}
    for i, (how, broken) in enumerate(damaged(text).items()):
        run = part_copy(tmp_path / str(i), **{"binder-samples.csv": broken})
        with pytest.raises(BadRun) as e:
            report.load(run)
        assert "binder-samples.csv" in str(e.value) and words[how] in str(e.value), how


def test_the_binder_figure_is_drawn_with_its_data_beside_it(tmp_path):
    from analysis import binder as report
    context, samples, events = report.load(part_copy(tmp_path))
    out = tmp_path / "plots" / "binder.png"
    report.figure(report.costs(report.per_trip(context, samples), events), out)
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert '"Rust Binder\\n29 sites\\nx86_64 JL=y" 48.0 NaN 195.0' in (
        out.with_suffix(".dat").read_text())
    # The run has no binder-rust-series: its bars are left out, not drawn empty.
    assert 'using 3 ' not in out.with_suffix(".gp").read_text()


def test_each_bar_of_a_cluster_gets_its_own_label():
    from analysis import binder as report
    command = report.plot_command("b.dat", [2, 3, 4])
    assert '"b.dat" using 2:xtic(1) title "as shipped"' in command
    assert all(f"($0{x}):{c}:" in command for x, c in (("-0.250", 2), ("+0.000", 3),
                                                       ("+0.250", 4)))


# Records per round trip of the shipped drivers, as the fixtures' real captures have them.
RECORDS_PER_TRIP = {"binder-rust": 29, "binder-c": 46}


@pytest.mark.parametrize("name", BINDER_KERNELS)
def test_a_binder_kernel_completes_its_round_trips_and_they_agree(binder_boot, name):
    """The Binder kernel boots, its workload completes every state, the fastest repetitions
    give one round trip's instructions (under -icount the others differ only by an
    interrupt: a timer tick is about 1,900 instructions, under 20 per round trip of 100), and
    a round trip records what the captured run recorded."""
    result, parsed = binder_boot(name)
    assert qemu.boot_failure(result, parsed.problems) is None
    table = binder.per_round_trip(parsed.samples).set_index(["state", "payload"])
    assert set(table.index) == {(s, p) for s in ("disabled", "attached", "recording")
                                for p in (16, 4096)}
    if result.accel == "tcg":
        assert (table.spread_per_round_trip.loc["disabled"] < 50).all(), table
    assert (table.per_round_trip.loc["attached"] > table.per_round_trip.loc["disabled"]).all()
    if name in RECORDS_PER_TRIP:
        assert sum(parsed.events_per_trip.values()) == RECORDS_PER_TRIP[name], (
            f"{name} built {BINDER_PROFILE}: {parsed.events_per_trip}")


def test_the_page_names_the_functions_the_sites_keep_out_of_line(tmp_path):
    """C Binder's sites leave binder_thread_write() out of line, which the floor inlines into
    binder_ioctl(); Rust Binder's change no inlining decision (the real kernels' nm)."""
    from analysis import binder as report
    run = part_copy(tmp_path)
    context, samples, events = report.load(run)
    lines = report.inlining(run, report.costs(report.per_trip(context, samples), events))
    c, rust = lines
    assert c.startswith("- C Binder, x86_64 JL=y: out of line only as shipped, inlined in the "
                        "floor: `binder_stat_br()` (144 bytes), `binder_thread_write()`")
    assert rust == ("- Rust Binder, x86_64 JL=y: the same 302 functions out of line in both; "
                    "the sites change no inlining decision.")
    (run / "binder" / "symbols-binder-c-floor-x86_64-jump_label.txt").unlink()
    assert report.inlining(run, report.costs(report.per_trip(context, samples), events))[0] == (
        "- C Binder, x86_64 JL=y: the run kept no symbol list of both kernels.")


def test_a_kernel_without_binder_fails_in_one_message_that_names_why(built, accel):
    """Mainline's own x86_64 kernel (make test builds it) has no Binder: booted with the
    Binder workload, its failure says the mount of binderfs failed, not a traceback."""
    import dataclasses
    from runner import binder as runner_binder
    from tests.conftest import MAINLINE_ARCHS, OUT
    if "x86_64" not in MAINLINE_ARCHS or not BINDER_KERNELS:
        pytest.skip("this make test builds no mainline x86_64 kernel")
    kb = built("mainline", "x86_64", "jump_label")
    # Booted as if it were a Binder kernel: the runner asks for Rust Binder's events.
    result, parsed = runner_binder.boot_binder(
        dataclasses.replace(kb, kernel=cfg.KERNELS["binder-rust"]), accel, OUT,
        "binder-none", timeout=300)
    failure = qemu.boot_failure(result, parsed.problems)
    assert "state disabled: the workload failed: mount -t binder (no binderfs in this " \
           "kernel?)" in failure
    assert parsed.samples == []


def test_an_unknown_binder_kernel_or_arch_is_refused_before_anything_runs(capsys, tmp_path):
    from runner import __main__ as runner_main
    status = runner_main.main(["bench", "--binder-kernels", "binder-go binder-rust",
                               "--binder-archs", "x86_65", "--data", str(tmp_path)])
    assert status == 2
    err = capsys.readouterr()
    said = err.out + err.err
    assert "unknown Binder kernel 'binder-go'; valid: binder-c, binder-c-floor" in said
    assert "unknown Binder architecture 'x86_65'" in said
    assert list(tmp_path.iterdir()) == []


def test_the_command_again_asks_for_the_binder_part_the_run_had():
    from analysis.pages.method import binder_words
    assert binder_words(None) == ""
    assert binder_words({"kernels": ["binder-c", "binder-rust"], "archs": ["x86_64"]}) == (
        ' BINDER=1 BINDER_KERNELS="binder-c binder-rust"')
    assert binder_words({"kernels": ["binder-c"], "archs": ["x86_64", "arm64"]}).endswith(
        ' BINDER_ARCHS="x86_64 arm64"')


def test_a_tick_is_instructions_where_the_counters_rate_is_known():
    """Under -icount shift=0 a guest nanosecond is an instruction: x86_64's TSC counts them;
    arm64's CNTVCT ticks at the rate CNTFRQ gives (QEMU 7.2 virt: 62.5 MHz, a tick per 16
    instructions; a real boot gave 1,398 ticks per round trip against x86_64's 19,112
    instructions); a counter whose rate the guest cannot read stays counter ticks."""
    from runner import binder as runner_binder
    assert runner_binder.unit("tcg", "x86_64", 0) == ("instructions", 1)
    assert runner_binder.unit("tcg", "arm64", 62_500_000) == ("instructions", 16)
    assert runner_binder.unit("tcg", "riscv64", 0) == ("counter ticks", 1)
    assert runner_binder.unit("tcg", "arm64", 3_000_000) == ("counter ticks", 1)
    assert runner_binder.unit("kvm", "x86_64", 0) == ("counter ticks", 1)


def test_arm64s_ticks_become_instructions_and_mixed_units_are_named_per_arch():
    """binder.json's per_tick (runner.binder.unit) scales arm64's samples to instructions;
    a table whose guests counted in different units names each with its architectures."""
    import pandas as pd

    from analysis import binder as analysis_binder
    parsed = binder.parse((FIXTURES / "binder-results-rust-arm64-jump_label.txt")
                          .read_text().splitlines())
    samples = pd.DataFrame([dict(kernel="binder-rust", arch="arm64", config="jump_label", **s)
                            for s in parsed.samples])
    context = {"guests": {"binder-rust/arm64/jump_label": {"unit": "instructions",
                                                           "per_tick": 16}}}
    trips = analysis_binder.per_trip(context, samples).set_index(["state", "payload"])
    assert round(trips.per_round_trip[("disabled", 16)]) == 22366
    assert set(trips.unit) == {"instructions"}
    mixed = pd.DataFrame(dict(arch=["x86_64", "arm64", "riscv64"],
                              unit=["instructions", "instructions", "counter ticks"]))
    assert analysis_binder.unit_words(mixed) == (
        "instructions (x86_64, arm64), counter ticks (riscv64)")
    assert analysis_binder.unit_words(mixed[:2]) == "instructions"


def test_a_stepped_round_trip_is_counted_in_the_function_that_holds_each_instruction():
    from runner import binder as runner_binder
    symbols = [(0x1000, "f"), (0x1010, "g")]
    text = runner_binder.by_function([0x400, 0x1000, 0x1004, 0x1010, 0x1000, 0x1012], symbols)
    assert text == ("function,instructions,entries\nf,3,2\ng,2,1\n(user space),1,0\n")


def test_the_stepped_difference_finds_c_binders_lock_for_a_disabled_site(tmp_path):
    """C Binder x86_64 JL=y, single-stepped (real traces): shipped runs 441 instructions more
    than its floor, as the slopes say; 3 more spinlocks, 6 more binder_debug() calls (one
    trace_binder_wait_for_work() argument per event) and binder_thread_write() out of line.
    Rust Binder, with no steps in the fixture, says so."""
    from analysis import binder as report
    run = part_copy(tmp_path)
    context, samples, events = report.load(run)
    table = report.costs(report.per_trip(context, samples), events)
    locks = report.extra_locks(run, table)
    text = "\n".join(report.where_it_goes(run, table, locks))
    assert ("**C Binder, x86_64 JL=y**: 18,979 instructions stepped as shipped, 18,538 in the "
            "floor: +441, where the slopes differ by 441") in text
    assert "| `binder_thread_write` | 341 | 0 | +341 | +2 |" in text
    assert "| `_raw_spin_lock` | 520 | 496 | +24 | +3 |" in text
    assert "takes a spinlock 3 more times per round trip" in text
    assert ("**Rust Binder, x86_64 JL=y**: not single-stepped in this run") in text
    assert locks == [("x86_64", "jump_label", 3)]
    assert ("; single-stepped, C Binder as shipped takes a spinlock 3 more times per round "
            "trip (x86_64 JL=y) than without its sites: ") in report.finding(table, locks)
    (run / "binder" / "steps-binder-c-x86_64-jump_label.csv").write_text(
        "function,instructions,entries\nbinder_ioctl,x,3\n")
    with pytest.raises(report.BadRun, match="steps-binder-c-x86_64-jump_label.csv line 2: "
                       "instructions='x'"):
        report.extra_locks(run, table)


def test_a_stepped_round_trip_agrees_with_the_slope(binder_boot):
    """A real single-stepped round trip (gdb on QEMU's stub, the tiny binder-rust kernel of
    make test) runs about as many instructions as the timed slope, the mean of 90: one round
    trip is not the mean (the distro kernels' ran 64 more, tiny binder-rust's 104)."""
    from runner import binder as runner_binder
    from tests.conftest import OUT
    if "binder-rust" not in BINDER_KERNELS:
        pytest.skip("this make test builds no binder-rust kernel")
    result, parsed = binder_boot("binder-rust")
    if result.accel != "tcg":
        pytest.skip("single-stepping is exact under TCG, the slope too")
    slope = binder.per_round_trip(parsed.samples).set_index(["state", "payload"]) \
        .per_round_trip[("disabled", 16)]
    source = kernel.prepare_source(cfg.KERNELS["binder-rust"])
    kb = kernel.build_kernel(source, cfg.ARCHS["x86_64"], cfg.KERNEL_CONFIGS["jump_label"],
                             cfg.PROFILES[BINDER_PROFILE])
    symbols = runner_binder.text_symbols(kb)
    pcs = runner_binder.step_round_trip(kb, symbols, OUT, "binder-rust-steps")
    assert abs(len(pcs) - slope) < slope / 100, (len(pcs), slope)
    csv = runner_binder.by_function(pcs, symbols)
    assert "rust_binder::rust_binder_ioctl," in csv


def test_a_round_trip_that_cannot_be_stepped_fails_its_guest_in_one_message(monkeypatch,
                                                                              tmp_path):
    """Without gdb: one message saying how to get it; step_into() names the guest as failed
    in binder.json's context (the part is then incomplete), with nothing written."""
    from common.messages import Failure
    from runner import binder as runner_binder
    monkeypatch.setattr(runner_binder.shutil, "which", lambda name: None)
    monkeypatch.setattr(runner_binder, "text_symbols", lambda kb: [])
    with pytest.raises(Failure, match=r"gdb is not installed: `make deps`"):
        runner_binder.step_round_trip(None, [], tmp_path, "binder-c-x86_64-jump_label")
    context, entry = {"failed": {}}, {}
    runner_binder.step_into(tmp_path, None, "binder-c/x86_64/jump_label", entry, context)
    assert context["failed"] == {"binder-c/x86_64/jump_label": "single-stepping a round trip: "
                                 "gdb is not installed: `make deps` installs it (Debian's gdb)"}
    assert entry == {} and not list((tmp_path / "binder").glob("steps-*"))
