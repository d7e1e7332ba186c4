"""The record check: what each variant's calls left in the ring buffer.

The guest init (runner/guest/init.c) fires every variant with the module's
events off and then on, after a trace_marker line that names it, and copies
tracefs' `trace` to the results channel. With the events on, a variant's n
calls must leave exactly the records its sites write, in call order, with the
field values the site passed; with them off, none. Pure functions over the
results channel's lines, so they are tested on real captured results.
"""

import re
from collections import Counter
from dataclasses import dataclass

from common import matrix

BEGIN = "tpbench: records events={on} begin"
END = "tpbench: records end"
_MARKER = re.compile(r": tpbench-fire variant=(\w+) n=(\d+)$")
_ENTRIES = re.compile(r"^# entries-in-buffer/entries-written: (\d+)/(\d+)")
_HIT = re.compile(r"\stpbench_hit: i=(\d+)$")
_TXN = re.compile(r"\stpbench_txn: t=(\S+) id=(\d+) flags=0x([0-9a-f]+) size=(\d+)$")

# The transactions the txn loops walk: TPBENCH_TXNS and TPBENCH_TXN(k) in bench-module/
# (tpbench.h, tpbench_main.c); a unit test reads both from there.
TXNS = 16


def txn_fields(k: int) -> tuple[int, int, int]:
    """(id, flags, size) of transaction k."""
    return 1000 + k, 1 << k, 64 * k


@dataclass(frozen=True)
class Fired:
    variant: str
    calls: int
    records: tuple[tuple, ...]   # ("hit", i) or ("txn", t, id, flags, size), in trace order


def split_results(lines) -> tuple[list[str], list[str]]:
    """The module's KTAP and what follows it (the record dumps), at the first dump."""
    lines = list(lines)
    for k, line in enumerate(lines):
        if line.startswith("tpbench: records "):
            return lines[:k], lines[k:]
    return lines, []


def parse_dump(lines) -> tuple[list[Fired], list[str]]:
    """The variants fired in one trace dump, each with the records that followed its marker,
    and the dump's problems (records lost, records before any marker, foreign lines)."""
    fired: list[Fired] = []
    problems = []
    current = None
    for line in lines:
        m = _ENTRIES.match(line)
        if m and m.group(1) != m.group(2):
            problems.append(f"the ring buffer holds {m.group(1)} of the {m.group(2)} entries "
                            "written: records were lost")
        if line.startswith("#") or not line.strip():
            continue
        record = None
        if (m := _MARKER.search(line)):
            if current:
                fired.append(Fired(current[0], current[1], tuple(current[2])))
            current = (m.group(1), int(m.group(2)), [])
            continue
        if (m := _HIT.search(line)):
            record = ("hit", int(m.group(1)))
        elif (m := _TXN.search(line)):
            record = ("txn", m.group(1), int(m.group(2)), int(m.group(3), 16), int(m.group(4)))
        if record is None:
            problems.append(f"a line that is neither a marker nor a tpbench record: "
                            f"{line.strip()[:100]!r}")
        elif current is None:
            problems.append(f"a record before the first marker: {line.strip()[:100]!r}")
        else:
            current[2].append(record)
    if current:
        fired.append(Fired(current[0], current[1], tuple(current[2])))
    return fired, problems


def expected(variant: str, calls: int, events_on: bool) -> list[tuple]:
    """The records (pointer left out) that `calls` calls of a variant's loop write."""
    v = matrix.BY_NAME[variant]
    if not events_on or v.event == "none":
        return []
    if v.event == "hit":
        return [("hit", i) for i in range(calls) for _ in range(v.sites)]
    return [("txn", *txn_fields(i % TXNS)) for i in range(calls) for _ in range(v.sites)]


def _without_pointer(record: tuple) -> tuple:
    return record if record[0] == "hit" else (record[0], *record[2:])


def pointer_problems(fired: list[Fired]) -> list[str]:
    """The txn records' `t`: one address per transaction, the same from every variant (C and
    Rust), and the addresses of an array: evenly spaced, increasing with k."""
    seen: dict[int, set[str]] = {}
    for f in fired:
        for r in f.records:
            if r[0] == "txn" and r[2] - 1000 in range(TXNS):
                seen.setdefault(r[2] - 1000, set()).add(r[1])
    if not seen:
        return []
    problems = [f"transaction {k} was recorded with {len(ts)} different addresses: "
                f"{', '.join(sorted(ts))}" for k, ts in sorted(seen.items()) if len(ts) > 1]
    try:
        address = {k: int(min(ts), 16) for k, ts in seen.items()}
    except ValueError:
        return problems + [f"the pointer argument is printed as {min(seen[min(seen)])!r}, not "
                           "an address: tracefs' options/hash-ptr must be 0"]
    if len(address) > 1:
        k0, k1 = sorted(address)[:2]
        stride = (address[k1] - address[k0]) // (k1 - k0)
        if stride <= 0 or any(address[k] != address[k0] + (k - k0) * stride for k in address):
            problems.append("the transactions' addresses are not those of one array: "
                            + ", ".join(f"{k}: {address[k]:#x}" for k in sorted(address)))
    return problems


def check(lines, variants) -> tuple[dict, list[str]]:
    """Checks both dumps of a results channel for the fired `variants`. Returns a summary for
    context.json (records per variant with the events off and on) and the problems."""
    problems, summary = [], {}
    for on in (False, True):
        begin = BEGIN.format(on=int(on))
        label = f"events {'on' if on else 'off'}"
        try:
            i = lines.index(begin)
            dump = lines[i + 1:lines.index(END, i + 1)]
        except ValueError:
            problems.append(f"no complete trace dump with the {label} ('{begin}' ... '{END}')")
            continue
        fired, dump_problems = parse_dump(dump)
        problems += [f"{label}: {p}" for p in dump_problems + pointer_problems(fired)]
        counts = Counter(f.variant for f in fired)
        for name in variants:
            if counts[name] != 1:
                problems.append(f"{label}: variant {name} was fired {counts[name]} times, "
                                "not once")
        per_variant = {}
        for f in fired:
            if f.variant not in matrix.BY_NAME:
                problems.append(f"{label}: unknown variant {f.variant!r} in a marker")
                continue
            want = expected(f.variant, f.calls, on)
            got = [_without_pointer(r) for r in f.records]
            per_variant[f.variant] = {"calls": f.calls, "records": len(got),
                                      "expected": len(want), "fields_ok": got == want}
            if got != want:
                problems.append(f"{label}: {f.variant}'s {f.calls} calls left {len(got)} "
                                f"records, expected {len(want)}"
                                + ("" if len(got) != len(want) else
                                   "; their fields or order differ: first "
                                   f"{next(g for g, w in zip(got, want) if g != w)}"))
        summary["on" if on else "off"] = per_variant
    return summary, problems
