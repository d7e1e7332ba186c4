"""The Binder workload's results channel (runner/guest/binder.c, run by the init's binder
mode): its timed round trips per state, and the events one round trip records. Pure
functions over the channel's lines, tested on real captured results."""

import re
from collections import Counter
from dataclasses import dataclass, field

_STATE = re.compile(r"^tpbench-binder state=(\w+) (begin|end)(?: status=(\S+))?$")
_SAMPLE = re.compile(r"^tpbench-binder payload=(\d+) n=(\d+) rep=(\d+) ticks=(\d+)$")
_HZ = re.compile(r"^tpbench-binder counter_hz=(\d+)$")
_COUNT = re.compile(r"^tpbench-binder count trips=(\d+)$")
_ERROR = re.compile(r"^tpbench-binder error: (.*)$")
RECORDS_BEGIN = "tpbench: records begin"
RECORDS_END = "tpbench: records end"
_ENTRIES = re.compile(r"^# entries-in-buffer/entries-written: (\d+)/(\d+)")
_MARK = re.compile(r": tpbench-binder-count (begin|end)$")
# A record line of tracefs' trace: "<task>-<pid> [cpu] <flags> <time>: <event>: <fields>".
_RECORD = re.compile(r"^\s*\S.*?\[\d+\]\s+\S+\s+[\d.]+: (\w+):")
STATES = ("disabled", "attached", "recording", "count")
# Where the Binder part single-steps a round trip (runner.binder.step_round_trip), with the
# ioctl entry whose calls delimit it: Debian's gdb debugs the host's architecture only.
STEP_ENTRY = {"x86_64": "__x64_sys_ioctl"}


@dataclass
class BinderResults:
    samples: list[dict] = field(default_factory=list)   # state, payload, n, rep, ticks
    events_per_trip: dict[str, float] = field(default_factory=dict)
    trips_counted: int = 0
    counter_hz: int = 0     # the user counter's frequency, where the guest can read it
    problems: list[str] = field(default_factory=list)


def parse(lines: list[str]) -> BinderResults:
    """The samples of each state, the events of the counting pass per round trip, and every
    problem: a state that did not end well (its status, or the workload's own error line),
    a state that never began, records without both markers."""
    out = BinderResults()
    state, ended, records = None, {}, None
    for line in lines:
        if records is not None:
            if line == RECORDS_END:
                out.events_per_trip = events_between_marks(records, out.trips_counted,
                                                           out.problems)
                records = None
            else:
                records.append(line)
            continue
        if line == RECORDS_BEGIN:
            records = []
        elif m := _STATE.match(line):
            if m[2] == "begin":
                state = m[1]
            else:
                ended[m[1]] = m[3]
                state = None
        elif m := _SAMPLE.match(line):
            if state is None:
                out.problems.append(f"a sample outside any state: {line!r}")
            else:
                out.samples.append(dict(state=state, payload=int(m[1]), n=int(m[2]),
                                        rep=int(m[3]), ticks=int(m[4])))
        elif m := _HZ.match(line):
            if out.counter_hz not in (0, int(m[1])):
                out.problems.append(f"the counter's frequency changed: {out.counter_hz} Hz, "
                                    f"then {m[1]}")
            out.counter_hz = int(m[1])
        elif m := _COUNT.match(line):
            out.trips_counted = int(m[1])
        elif m := _ERROR.match(line):
            out.problems.append(f"state {state or '?'}: the workload failed: {m[1]}")
    if records is not None:
        out.problems.append(f"the records were cut short (no {RECORDS_END!r})")
    for name in STATES:
        if name not in ended:
            out.problems.append(f"state {name} never finished")
        elif ended[name] == "hung":
            out.problems.append(f"state {name}: the workload hung and was killed")
        elif ended[name] != "0":
            out.problems.append(f"state {name}: the workload ended with wait status {ended[name]}")
    return out


def events_between_marks(lines: list[str], trips: int, problems: list[str]) -> dict[str, float]:
    """Records per round trip by event name, between the counting pass's two markers."""
    marks = [i for i, line in enumerate(lines) if _MARK.search(line)]
    if len(marks) != 2 or not trips:
        problems.append("the counting pass's records lack their markers or its trip count")
        return {}
    for line in lines[:marks[0]]:
        if (m := _ENTRIES.match(line)) and m[1] != m[2]:
            problems.append(f"the ring buffer lost records of the counting pass ({line[2:]})")
    counts = Counter(m[1] for line in lines[marks[0] + 1:marks[1]] if (m := _RECORD.match(line)))
    return {name: n / trips for name, n in sorted(counts.items())}


def per_round_trip(samples: list[dict], per_tick: int = 1):
    """Instructions per round trip, a counter tick being `per_tick` of them (runner.binder.unit),
    for each state and payload: the slope between the two
    counts of round trips, each taken at its fewest ticks over the repetitions (those no
    interrupt or first-time fault reached), and how far the repetitions spread per round
    trip (0 when every repetition ran alike): a DataFrame."""
    import pandas as pd     # the runner's config names the kernels before pandas is installed
    frame = pd.DataFrame(samples, columns=["state", "payload", "n", "rep", "ticks"])
    frame["instructions"] = frame.ticks * per_tick
    rows = []
    for (state, payload), group in frame.groupby(["state", "payload"], sort=False):
        by_n = group.groupby("n").instructions
        low, high = by_n.min(), by_n.max()
        if len(low) != 2:
            raise ValueError(f"state {state} payload {payload}: want two counts of round "
                             f"trips, got {sorted(low.index)}")
        (n1, n2) = low.index
        rows.append(dict(state=state, payload=payload,
                         per_round_trip=(low[n2] - low[n1]) / (n2 - n1),
                         spread_per_round_trip=max((high - low) / low.index)))
    return pd.DataFrame(rows)


# The Binder kernels' names: "binder-<driver>[-<world>]", the driver "c" or "rust", the world
# "" (as shipped), "floor" (every tracepoint call compiled to nothing), "helper" (Rust's
# events through out-of-line C functions, as before the design) or "series" (mainline with
# the series for it, patches-mainline-series/).
DRIVERS = {"c": "C Binder", "rust": "Rust Binder"}
WORLDS = ("", "floor", "helper", "series")


def kernel_name(driver: str, world: str = "") -> str:
    return "-".join(filter(None, ("binder", driver, world)))


def kernel_parts(name: str) -> tuple[str, str]:
    """(driver, world) of a Binder kernel's name; ValueError for another name."""
    for driver in DRIVERS:
        for world in WORLDS:
            if kernel_name(driver, world) == name:
                return driver, world
    raise ValueError(f"{name!r} is no Binder kernel (binder-<c|rust>[-floor|-helper|-series])")
