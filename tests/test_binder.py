"""The Binder workload's results channel (common/binder.py), on a real capture: Rust Binder
in mainline 7.3.4, x86_64 with jump labels, under TCG -icount (runner binder, issue 36)."""

from common import binder
from runner import config as cfg
from tests.conftest import FIXTURES

RESULTS = (FIXTURES / "binder-results-rust-x86_64-jump_label.txt").read_text().splitlines()


def test_a_real_run_has_every_state_and_no_problem():
    parsed = binder.parse(RESULTS)
    assert parsed.problems == []
    # 2 payloads x 3 repetitions x 2 counts, in each timed state.
    assert [s["state"] for s in parsed.samples].count("disabled") == 12
    assert [s["state"] for s in parsed.samples].count("recording") == 12
    first = parsed.samples[0]
    assert first == dict(state="disabled", payload=16, n=10, rep=0, ticks=218900)


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
        "state disabled never finished", "state recording never finished",
        "state count never finished"]


def test_records_without_their_markers_count_nothing():
    lines = [line for line in RESULTS if "tpbench-binder-count" not in line]
    parsed = binder.parse(lines)
    assert parsed.events_per_trip == {}
    assert parsed.problems == [
        "the counting pass's records lack their markers or its trip count"]


def test_every_binder_kernel_names_its_drivers_events():
    assert set(cfg.BINDER_EVENTS) == set(cfg.BINDER_KERNELS) <= set(cfg.KERNELS)
    for name, kernel in cfg.BINDER_KERNELS.items():
        assert cfg.BINDER_EVENTS[name] == ("binder" if "-c" in name else "rust_binder")
        assert kernel.configured_as == "mainline" and kernel.root == cfg.KERNELS["mainline"].root
        assert all((cfg.CONFIGS / f).exists() for f in kernel.fragments)
        assert (kernel.patches / "series").exists()


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
    trips at their fewest ticks give 21894.3 instructions each (16 bytes); the first of three
    repetitions of 100 ran 2.5 more instructions per round trip than the fewest."""
    table = binder.per_round_trip(binder.parse(RESULTS).samples).set_index(["state", "payload"])
    assert table.per_round_trip[("disabled", 16)] == (2189387 - 218900) / 90
    assert round(table.spread_per_round_trip[("disabled", 16)], 1) == round(
        (2440573 - 2189387) / 100, 1)
    assert table.per_round_trip[("recording", 16)] > 1.7 * table.per_round_trip[("disabled", 16)]
