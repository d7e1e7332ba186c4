"""The record check on the trace dumps of a real guest (x86_64, jump labels), and on
copies of them damaged the ways a run can go wrong."""

import re

import pytest

from common import records
from tests.conftest import FIXTURE_VARIANTS, FIXTURES

REPO = FIXTURES.parent.parent
VARIANTS = FIXTURE_VARIANTS


@pytest.fixture
def dumps():
    return (FIXTURES / "records-x86_64-jump_label.txt").read_text().splitlines()


def replace_first(lines, old, new):
    k = next(i for i, line in enumerate(lines) if old in line)
    return lines[:k] + ([line.replace(old, new) for line in [lines[k]]] if new is not None
                        else []) + lines[k + 1:]


def test_a_real_guest_left_every_record_and_none_with_the_events_off(dumps):
    summary, problems = records.check(dumps, VARIANTS)
    assert problems == []
    assert set(summary["off"]) == set(summary["on"]) == set(VARIANTS)
    assert all(v["records"] == 0 for v in summary["off"].values())
    on = summary["on"]
    assert on["c_trace"] == on["rust_trace"] == {"calls": 20, "records": 20, "expected": 20,
                                                "fields_ok": True}
    assert on["c_dense"]["records"] == on["rust_dense"]["records"] == 16 * 20
    assert on["rust_txn"]["records"] == 20 and on["c_base"]["records"] == 0


def test_the_expected_records_follow_the_call_order():
    assert records.expected("c_dense", 2, True) == [("hit", 0)] * 16 + [("hit", 1)] * 16
    assert records.expected("rust_txn", 17, True)[16] == ("txn", 1000, 1, 0)
    assert records.expected("c_txn", 3, False) == []
    assert records.expected("c_txn_base", 3, True) == []


def test_a_lost_record_names_the_variant_and_the_counts(dumps):
    damaged = replace_first(dumps, "tpbench_txn: t=ffffffffa0005390 id=1002", None)
    _, problems = records.check(damaged, VARIANTS)
    assert problems == ["events on: c_txn's 20 calls left 19 records, expected 20"]


def test_a_wrong_field_is_found(dumps):
    damaged = replace_first(dumps, "id=1002 flags=0x4", "id=1002 flags=0x8")
    _, problems = records.check(damaged, VARIANTS)
    assert problems == ["events on: c_txn's 20 calls left 20 records, expected 20; their "
                        "fields or order differ: first ('txn', 1002, 8, 128)"]


def test_records_out_of_order_are_found(dumps):
    k = next(i for i, line in enumerate(dumps) if line.endswith("tpbench_hit: i=3"))
    swapped = dumps[:k] + [dumps[k + 1], dumps[k]] + dumps[k + 2:]
    _, problems = records.check(swapped, VARIANTS)
    assert len(problems) == 1 and "fields or order differ: first ('hit', 4)" in problems[0]


def test_a_record_with_the_events_off_is_found(dumps):
    k = dumps.index(records.END)    # the end of the events-off dump
    hit = next(line for line in dumps if line.endswith("tpbench_hit: i=0"))
    _, problems = records.check(dumps[:k] + [hit] + dumps[k:], VARIANTS)
    assert problems == ["events off: rust_dense's 20 calls left 1 records, expected 0"]


def test_records_lost_in_the_ring_buffer_are_named(dumps):
    damaged = replace_first(dumps, "entries-written: 795/795", "entries-written: 700/795")
    _, problems = records.check(damaged, VARIANTS)
    assert problems == ["events on: the ring buffer holds 700 of the 795 entries written: "
                        "records were lost"]


def test_hashed_pointers_cannot_pass_as_checked(dumps):
    hashed = [re.sub(r"t=[0-9a-f]+ ", "t=(____ptrval____) ", line) for line in dumps]
    _, problems = records.check(hashed, VARIANTS)
    assert len(problems) == 1 and "options/hash-ptr must be 0" in problems[0]


def test_a_transaction_at_two_addresses_is_found(dumps):
    damaged = replace_first(dumps, "t=ffffffffa0005390 id=1002", "t=ffffffffa0005398 id=1002")
    _, problems = records.check(damaged, VARIANTS)
    assert problems == ["events on: transaction 2 was recorded with 2 different addresses: "
                        "ffffffffa0005390, ffffffffa0005398"]


def test_a_cut_dump_and_a_missing_variant_are_named(dumps):
    cut = dumps[:-3]
    _, problems = records.check(cut, VARIANTS)
    assert problems == ["no complete trace dump with the events on ('tpbench: records "
                        "events=1 begin' ... 'tpbench: records end')"]
    no_marker = replace_first(dumps, "tpbench-fire variant=c_empty n=20", None)
    _, problems = records.check(no_marker, VARIANTS)
    assert problems == ["events off: variant c_empty was fired 0 times, not once"]


def test_a_foreign_line_is_not_taken_for_a_record(dumps):
    k = dumps.index(records.END)
    _, problems = records.check(dumps[:k] + ["garbage"] + dumps[k:], VARIANTS)
    assert problems == ["events off: a line that is neither a marker nor a tpbench record: "
                        "'garbage'"]


def test_the_ktap_and_the_dumps_are_split_at_the_first_dump():
    ktap = ["KTAP version 1", "1..1", "ok 1 x", "# tpbench: all passed"]
    assert records.split_results(ktap + ["tpbench: records events=0 begin", "#"]) == (
        ktap, ["tpbench: records events=0 begin", "#"])
    assert records.split_results(ktap) == (ktap, [])


def test_the_transactions_are_the_modules():
    """records.txn_fields and TXNS restate the module's TPBENCH_TXN(k) and TPBENCH_TXNS."""
    header = (REPO / "bench-module/tpbench.h").read_text()
    source = (REPO / "bench-module/tpbench_main.c").read_text()
    assert re.search(r"#define TPBENCH_TXNS\s+(\d+)", header).group(1) == str(records.TXNS)
    m = re.search(r"#define TPBENCH_TXN\(k\)\s+\{ \.id = (\d+) \+ \(k\), \.flags = 1U << \(k\), "
                  r"\.code = \(k\), \.size = (\d+) \* \(k\) \}", source)
    assert m, "TPBENCH_TXN(k) changed: update common/records.py's txn_fields"
    assert records.txn_fields(5) == (int(m.group(1)) + 5, 1 << 5, int(m.group(2)) * 5)
