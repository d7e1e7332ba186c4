"""The Binder part of a run (<run>/binder/, issue 36): instructions per round trip of each
Binder kernel in each state, and what the drivers' tracepoints cost there: as shipped minus
the floor (every tracepoint call compiled to nothing), the helper world minus the floor, a
probe attached and recording minus shipped. Pure functions over the part's files."""

import io
import subprocess
from pathlib import Path

import pandas as pd

from analysis.stats import fmt
from analysis.validate import BadRun
from common import binder, disk, rundir
from common.messages import Failure

SAMPLE_COLUMNS = ["kernel", "arch", "config", "state", "payload", "n", "rep", "ticks"]
EVENT_COLUMNS = ["kernel", "arch", "config", "event", "per_trip"]
SHORT = {"jump_label": "JL=y", "no_jump_label": "JL=n"}
# The payload the answer quotes: the smallest, where the driver's fixed costs weigh most.
ANSWER_PAYLOAD = 16


def read_csv(path: Path, columns: list[str], numeric: list[str]) -> pd.DataFrame:
    """A CSV of the Binder part, or BadRun naming the file and what is wrong with it."""
    if not path.exists():
        raise BadRun(f"{path}: missing; the Binder part writes it (make bench BINDER=1)")
    text = path.read_text(errors="replace")
    if text and not text.endswith("\n"):
        raise BadRun(f"{path}: the last line has no newline: the file was cut short")
    try:
        frame = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise BadRun(f"{path}: not a CSV file ({str(e).strip()})") from None
    if list(frame.columns) != columns:
        raise BadRun(f"{path}: header {','.join(map(str, frame.columns))!r}, expected "
                     f"{','.join(columns)!r}")
    for column in numeric:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = frame[values.isna() | (values < 0)]
        if not bad.empty:
            line = int(bad.index[0]) + 2
            raise BadRun(f"{path} line {line}: {column}={bad[column].iloc[0]!r} is not a "
                         "non-negative number")
        frame[column] = values
    for name in frame.get("kernel", pd.Series(dtype=str)).unique():
        try:
            binder.kernel_parts(str(name))
        except ValueError as e:
            raise BadRun(f"{path}: {e}") from None
    return frame


def load(run: Path) -> tuple[dict, pd.DataFrame, pd.DataFrame] | None:
    """(binder.json, samples, events) of the run's Binder part; None for a run without."""
    try:
        context = rundir.binder_context(run)
    except rundir.Damaged as e:
        raise BadRun(str(e)) from None
    if context is None:
        return None
    part = rundir.binder_dir(run)
    samples = read_csv(part / rundir.BINDER_SAMPLES, SAMPLE_COLUMNS,
                       ["payload", "n", "rep", "ticks"])
    events = read_csv(part / rundir.BINDER_EVENTS, EVENT_COLUMNS, ["per_trip"])
    return context, samples, events


def per_trip(context: dict, samples: pd.DataFrame) -> pd.DataFrame:
    """Instructions (the guest's unit) per round trip, by kernel, arch, config, state and
    payload, with the repetitions' spread per round trip."""
    rows = []
    for (kernel, arch, config), group in samples.groupby(["kernel", "arch", "config"],
                                                          sort=False):
        guest = context.get("guests", {}).get(rundir.binder_guest(kernel, arch, config), {})
        try:
            # A tick of a coarser counter is `per_tick` instructions (runner.binder.unit).
            fitted = binder.per_round_trip(group.to_dict("records"),
                                           guest.get("per_tick", 1))
        except ValueError as e:
            raise BadRun(f"{rundir.BINDER_DIR}/{rundir.BINDER_SAMPLES}: "
                         f"{kernel} {arch} {config}: {e}") from None
        fitted.insert(0, "config", config)
        fitted.insert(0, "arch", arch)
        fitted.insert(0, "kernel", kernel)
        fitted["unit"] = guest.get("unit", "instructions")
        rows.append(fitted)
    columns = ["kernel", "arch", "config", "state", "payload", "per_round_trip",
               "spread_per_round_trip", "unit"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns)


def costs(trips: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """One row per driver, arch, config and payload: the round trip as shipped with its
    events off; the floor's; the sites one round trip runs (records per round trip of the
    shipped kernel's counting pass); what they cost disabled (shipped minus floor), per site
    and as a share of the round trip; the helper world and the series for mainline, each
    minus the floor (Rust); with a probe
    attached and recording, shipped minus the floor in the same state. NaN where the run
    lacks a kernel."""
    def value(kernel, arch, config, state, payload, column="per_round_trip"):
        r = trips[(trips.kernel == kernel) & (trips.arch == arch) & (trips.config == config)
                  & (trips.state == state) & (trips.payload == payload)]
        return float(r[column].iloc[0]) if not r.empty else float("nan")

    rows = []
    shipped = trips[trips.kernel.isin([binder.kernel_name(d) for d in binder.DRIVERS])]
    for (kernel, arch, config, payload), _ in shipped.groupby(
            ["kernel", "arch", "config", "payload"], sort=False):
        driver, _ = binder.kernel_parts(kernel)
        trip = value(kernel, arch, config, "disabled", payload)
        floor_name = binder.kernel_name(driver, "floor")
        floor = value(floor_name, arch, config, "disabled", payload)
        helper = value(binder.kernel_name(driver, "helper"), arch, config, "disabled", payload)
        series = value(binder.kernel_name(driver, "series"), arch, config, "disabled", payload)
        mine = events[(events.kernel == kernel) & (events.arch == arch)
                      & (events.config == config)]
        sites = float(mine.per_trip.sum()) if not mine.empty else float("nan")
        cost = trip - floor
        rows.append(dict(
            driver=driver, arch=arch, config=config, payload=payload,
            unit=shipped[shipped.kernel == kernel].unit.iloc[0],
            round_trip=trip, spread=value(kernel, arch, config, "disabled", payload,
                                          "spread_per_round_trip"),
            floor=floor, sites=sites, events=len(mine), disabled_cost=cost,
            disabled_share=100 * cost / trip, per_site=cost / sites,
            helper_cost=helper - floor, helper_share=100 * (helper - floor) / trip,
            series_cost=series - floor, series_share=100 * (series - floor) / trip,
            # Against the floor in the same state: enabling any event also hooks the
            # scheduler's switches to record task names, which the floor pays too.
            attached_cost=(value(kernel, arch, config, "attached", payload)
                           - value(floor_name, arch, config, "attached", payload)),
            recording_cost=(value(kernel, arch, config, "recording", payload)
                            - value(floor_name, arch, config, "recording", payload)),
            recording_spread=value(kernel, arch, config, "recording", payload,
                                   "spread_per_round_trip")))
    return pd.DataFrame(rows)


# The events' own functions, which the floor keeps too (its events still exist for tracefs).
EVENT_CODE = ("trace_", "perf_trace_", "__bpf_trace_", "__traceiter_", "__probestub_",
              "__pfx_")


def symbols(path: Path) -> dict[str, int] | None:
    """A guest's driver functions by name, with their bytes; None where the run has none."""
    if not path.exists():
        return None
    out = {}
    for k, line in enumerate(path.read_text().splitlines(), start=1):
        size, _, name = line.partition(" ")
        if not size.isdigit() or not name:
            raise BadRun(f"{path} line {k}: {line!r} is not \"<bytes> <function>\"")
        out[name] = int(size)
    return out


def inlining(run: Path, table: pd.DataFrame) -> list[str]:
    """Per driver, arch and config: the functions the compiler kept out of line in the
    shipped driver and not in its floor, and the other way round, with their bytes."""
    lines = []
    for (driver, arch, config), _ in table.groupby(["driver", "arch", "config"], sort=False):
        shipped, floor = (symbols(rundir.binder_file(
            run, "symbols", rundir.binder_guest(binder.kernel_name(driver, world), arch,
                                                config))) for world in ("", "floor"))
        where = f"{binder.DRIVERS[driver]}, {arch} {SHORT.get(config, config)}"
        if shipped is None or floor is None:
            lines.append(f"- {where}: the run kept no symbol list of both kernels.")
            continue
        def own(names):
            return sorted(n for n in names if not n.startswith(EVENT_CODE))
        only_shipped = own(set(shipped) - set(floor))
        only_floor = own(set(floor) - set(shipped))
        if not only_shipped and not only_floor:
            lines.append(f"- {where}: the same {len(own(shipped))} functions out of line in "
                         "both; the sites change no inlining decision.")
            continue
        said = ["out of line only as shipped, inlined in the floor: " + ", ".join(
            f"`{n}()` ({shipped[n]} bytes)" for n in only_shipped)] if only_shipped else []
        said += ["out of line only in the floor: " + ", ".join(
            f"`{n}()` ({floor[n]} bytes)" for n in only_floor)] if only_floor else []
        lines.append(f"- {where}: " + "; ".join(said) + ".")
    return lines


STEP_COLUMNS = ["function", "instructions", "entries"]
# Rows of a driver's stepped difference the page shows, the largest first.
STEP_ROWS = 12


def steps(run: Path, guest: str) -> pd.DataFrame | None:
    """A guest's single-stepped round trip by function (runner.binder.by_function), or
    None where the run has none."""
    path = rundir.binder_file(run, "steps", guest)
    if not path.exists():
        return None
    return read_csv(path, STEP_COLUMNS, ["instructions", "entries"]).set_index("function")


def step_difference(shipped: pd.DataFrame, floor: pd.DataFrame) -> pd.DataFrame:
    """Per function, shipped minus floor: instructions and entries, the functions that
    differ, the largest difference first."""
    both = shipped.join(floor, how="outer", lsuffix="_shipped", rsuffix="_floor").fillna(0)
    both["instructions"] = both.instructions_shipped - both.instructions_floor
    both["entries"] = both.entries_shipped - both.entries_floor
    both = both[(both.instructions != 0) | (both.entries != 0)]
    return both.reindex(both.instructions.abs().sort_values(ascending=False, kind="stable")
                        .index).astype(int)


def stepped(run: Path, driver: str, arch: str, config: str):
    """(shipped, floor): the driver's stepped round trips by function, each None if absent."""
    return tuple(steps(run, rundir.binder_guest(binder.kernel_name(driver, world), arch,
                                                config)) for world in ("", "floor"))


def extra_locks(run: Path, table: pd.DataFrame) -> list[tuple[str, str, int]]:
    """(arch, config, n) wherever C Binder as shipped, single-stepped, takes a spinlock n > 0
    more times per round trip than its floor."""
    out = []
    for (arch, config), _ in table[table.driver == "c"].groupby(["arch", "config"],
                                                                 sort=False):
        shipped, floor = stepped(run, "c", arch, config)
        if shipped is not None and floor is not None:
            n = int(step_difference(shipped, floor).entries.get("_raw_spin_lock", 0))
            if n > 0:
                out.append((arch, config, n))
    return out


def where_it_goes(run: Path, table: pd.DataFrame, locks) -> list[str]:
    """The page's account of the disabled sites' cost from single-stepped round trips: per
    driver, arch and config that has both, the functions whose instructions differ, and
    C Binder's `locks` (extra_locks())."""
    locks_at = {(arch, config): n for arch, config, n in locks}
    lines = []
    for (driver, arch, config), group in table.groupby(["driver", "arch", "config"],
                                                       sort=False):
        where = f"{binder.DRIVERS[driver]}, {arch} {SHORT.get(config, config)}"
        shipped, floor = stepped(run, driver, arch, config)
        if shipped is None or floor is None:
            why = ("runs made before the Binder part stepped did not" if arch in
                   binder.STEP_ENTRY else "the host's gdb steps "
                   + ", ".join(binder.STEP_ENTRY) + " guests only")
            lines += [f"**{where}**: not single-stepped in this run ({why}).", ""]
            continue
        total = int(shipped.instructions.sum() - floor.instructions.sum())
        r = group[group.payload == ANSWER_PAYLOAD].iloc[0]
        diff = step_difference(shipped, floor)
        lines += [f"**{where}**: {whole(shipped.instructions.sum())} instructions stepped as "
                  f"shipped, {whole(floor.instructions.sum())} in the floor: {total:+,d}, "
                  f"where the slopes differ by {whole(r.disabled_cost)} (each stepped round "
                  f"trip runs {shipped.instructions.sum() - r.round_trip:+,.0f} and "
                  f"{floor.instructions.sum() - r.floor:+,.0f} instructions against its "
                  "slope).",
                  "", "| function | as shipped | floor | difference | entries |",
                  "|---|---:|---:|---:|---:|"]
        for name, r in diff.head(STEP_ROWS).iterrows():
            lines.append(f"| `{name}` | {r.instructions_shipped:,d} | {r.instructions_floor:,d} "
                         f"| {r.instructions:+,d} | {r.entries:+d} |")
        if len(diff) > STEP_ROWS:
            rest = diff.instructions.iloc[STEP_ROWS:]
            lines.append(f"| {len(rest)} more | | | {int(rest.sum()):+,d} | |")
        lines.append("")
        if driver == "c" and (arch, config) in locks_at:
            # binder.c (mainline 7.3.4), binder_thread_read(): the site's third argument.
            lines += [f"C Binder as shipped takes a spinlock {locks_at[(arch, config)]} more "
                      "times per round trip than its floor, one per `binder_wait_for_work` event: that site's "
                      "argument `!binder_worklist_empty(proc, &thread->todo)` takes and drops "
                      "`proc->inner_lock` (with a `binder_debug()` call on each side) before "
                      "the static branch, whether or not the event is on. Rust Binder's "
                      "`trace_wait_for_work()` gets the same value from a lock the driver "
                      "holds anyway.", ""]
    return lines


def whole(x: float) -> str:
    return "-" if pd.isna(x) else f"{x:,.0f}"


def share(x: float) -> str:
    return "-" if pd.isna(x) else f"{x:.2f}%"


def unit_words(frame: pd.DataFrame) -> str:
    """The unit of a table's figures; where guests counted in different units, each with
    the architectures that did."""
    if frame.empty:
        return "instructions"
    by_unit = frame.groupby("unit", sort=False).arch.unique()
    if len(by_unit) == 1:
        return by_unit.index[0]
    return ", ".join(f"{unit} ({', '.join(archs)})" for unit, archs in by_unit.items())


def sentence(table: pd.DataFrame | None, context: dict | None) -> str:
    """The Answer's line: per architecture and config, each driver's disabled sites per round
    trip and their cost, the helper world's, with the smallest payload; or why the run has
    none."""
    head = "**A real driver, Binder** (mainline 7.3.4, one two-way transaction"
    if table is None or table.empty:
        return (f"{head}): not measured in this run (`make bench BINDER=1` boots mainline "
                "with C and with Rust Binder, shipped, floor and helper world).")
    parts = []
    mine = table[table.payload == ANSWER_PAYLOAD]
    for (arch, config), group in mine.groupby(["arch", "config"], sort=False):
        said = []
        for r in group.itertuples():
            words = (f"{binder.DRIVERS[r.driver]}'s {fmt(r.sites)} sites cost "
                     f"{whole(r.disabled_cost)} of {whole(r.round_trip)} "
                     f"({share(r.disabled_share)})")
            if pd.notna(r.series_cost):
                words += (f", with the series for mainline {whole(r.series_cost)} "
                          f"({share(r.series_share)})")
            if pd.notna(r.helper_cost):
                words += (f", as out-of-line C helpers {whole(r.helper_cost)} "
                          f"({share(r.helper_share)})")
            said.append(words)
        parts.append(f"{arch} {SHORT.get(config, config)}: " + "; ".join(said))
    unit = unit_words(mine)
    complete = "" if (context or {}).get("complete") else " (**incomplete**: " + str(
        (context or {}).get("incomplete_reason")) + ")"
    return (f"{head} of {ANSWER_PAYLOAD} bytes and its reply, {unit} per round trip, "
            f"disabled sites as shipped minus the same tree with them compiled out): "
            + "; ".join(parts) + complete + ".")


def finding(table: pd.DataFrame, locks=()) -> str:
    """The page's finding in a line (the report's further questions): each driver's share of
    the round trip, where Rust Binder's sites as shipped cost more than the helper
    world's, which the series for mainline changes, and C Binder's `locks` (extra_locks())."""
    mine = table[table.payload == ANSWER_PAYLOAD]
    shares = [f"{binder.DRIVERS[d]}'s disabled sites take {span_of(g.disabled_share)} of a "
              "round trip" for d, g in mine.groupby("driver", sort=False)]
    dearer = mine[(mine.driver == "rust") & (mine.disabled_cost > mine.helper_cost)]
    out = "; ".join(shares) + f" ({ANSWER_PAYLOAD} bytes, every config measured)"
    for r in dearer.itertuples():
        out += (f"; {r.arch} {SHORT.get(r.config, r.config)}: Rust Binder's sites as shipped "
                f"cost more than through out-of-line C helpers ({whole(r.disabled_cost)} "
                f"against {whole(r.helper_cost)})"
                + ("" if pd.isna(r.series_cost) else
                   f", the series for mainline {whole(r.series_cost)}"))
    if locks:
        by_count: dict[int, list[str]] = {}
        for arch, config, n in locks:
            by_count.setdefault(n, []).append(f"{arch} {SHORT.get(config, config)}")
        out += ("; single-stepped, C Binder as shipped takes a spinlock " + ", ".join(
                    f"{n} more times per round trip ({', '.join(where)})"
                    for n, where in by_count.items())
                + " than without its sites: `trace_binder_wait_for_work()`'s argument "
                "`!binder_worklist_empty()` takes `proc->inner_lock` with the event off")
    return out + "."


def span_of(values: pd.Series) -> str:
    lo, hi = share(values.min()), share(values.max())
    return lo if lo == hi else f"{lo} to {hi}"


def page(table: pd.DataFrame, trips: pd.DataFrame, context: dict, rel: str,
         inlined: list[str] = (), stepped_lines: list[str] = (), locks=()) -> list[str]:
    """The Binder page's body; `inlined` its inlining lines (inlining()), `stepped_lines` its
    account of single-stepped round trips (where_it_goes()), `locks` extra_locks()."""
    lines = [
        "## Rust Binder and C Binder: tracepoints per round trip", "",
        "Mainline 7.3.4 (Debian 13 backports' source, distro build, built in the Debian 13 "
        "root) with one Binder driver built in, booted under QEMU TCG `-icount` with the "
        "guest's Binder workload (`runner/guest/binder.c`): one process is the context "
        "manager, another sends it N two-way transactions (`BC_TRANSACTION` through "
        "`BINDER_WRITE_READ`, waiting for each `BR_REPLY`). After 100 untimed round trips it "
        "times N = 10 and 100 with the user counter, five times each; the slope between the "
        "fastest repetitions is one round trip. Under `-icount shift=0` a guest nanosecond "
        "is one instruction: x86_64's TSC counts them, arm64's CNTVCT ticks every "
        "10^9/CNTFRQ of them (the workload reads CNTFRQ: 16 on QEMU 7.2's virt machine), "
        "and the figures here are its ticks times that. Both processes run `SCHED_FIFO` at one "
        "priority, so that a wakeup never preempts the waker and every round trip takes one "
        "path through the scheduler (under the fair class a repetition took one of two paths "
        "some 2,800 instructions apart, by the tasks' history, which would hide the sites' "
        "cost; the sites are the same either way).", "",
        "Each kernel in three states: its events off (disabled); a probe on every event of "
        "the driver with the ring buffer off (`tracing_on` 0: each site calls its probe, which "
        "finds nothing to record into; attached); recording. Beside it the **floor**, the "
        "same tree with every tracepoint call compiled to nothing (`patches-binder-floor/`), "
        "and for Rust the **helper world**, each event reached through an out-of-line C "
        "function as before the design (`patches-binder-helper/`), and Rust Binder on "
        "mainline **with the series for mainline** (`patches-mainline-series/`), weighed "
        "against the same floor.", "",
        "The disabled sites' cost is the shipped kernel's round trip minus the floor's: "
        "everything the sites change in the compiled driver, their NOPs, the arguments "
        "computed for them and what they do to register allocation and inlining. Attached "
        "and recording are against the floor in the same state: enabling any event also "
        "hooks the scheduler's switches to keep task names for the trace, which costs the "
        "floor about 100 instructions per round trip too. Sites per round trip: the records "
        "one round trip writes (the counting pass: 10 round trips between two "
        "`trace_marker` lines).", "",
        "| driver | arch | config | payload | round trip | floor | sites | disabled sites "
        "cost | share | per site | with the series for mainline | helper world | attached | "
        "recording |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in table.itertuples():
        helper = ("-" if pd.isna(r.helper_cost) else
                  f"{whole(r.helper_cost)} ({share(r.helper_share)})")
        series = ("-" if pd.isna(r.series_cost) else
                  f"{whole(r.series_cost)} ({share(r.series_share)})")
        lines.append(
            f"| {binder.DRIVERS[r.driver]} | {r.arch} | {SHORT.get(r.config, r.config)} | "
            f"{r.payload} | {whole(r.round_trip)} | {whole(r.floor)} | {fmt(r.sites)} | "
            f"{whole(r.disabled_cost)} | {share(r.disabled_share)} | "
            f"{'-' if pd.isna(r.per_site) else f'{r.per_site:.1f}'} | {series} | {helper} | "
            f"+{whole(r.attached_cost)} | +{whole(r.recording_cost)} |")
    unit = unit_words(table)
    found = finding(table, locks)
    lines += ["", found[0].upper() + found[1:]]
    if (table.driver == "rust").any() and (table.config == "no_jump_label").any():
        lines += ["", "Without jump labels each of mainline's Rust sites reads its key through "
                  "`rust_helper_static_key_count()`, a call (the benchmark module's mainline "
                  "JL=n site does the same: see the mainline page); the helper world's C "
                  "function tests its key inline; the series for mainline reads it inline "
                  "in Rust."]
    lines += ["", f"In {unit} per round trip. Under `-icount` a repetition's count is "
              "exact; repetitions differ only where an interrupt (the timer's: about 1,900 "
              "instructions on x86_64, 3,400 on arm64) fell inside one, which the fastest repetition leaves out: the "
              "spread column below is the largest such difference per round trip.", "",
              f"![Binder, disabled sites per round trip]({rel}/plots/binder.png)", "",
              "## What the sites change in the compiled driver", "",
              "A tracepoint site's disabled path is one NOP, but its out-of-line part (the "
              "call with its arguments) still counts in the compiler's inlining budget of the "
              "function it sits in. The driver's functions, from `nm` of its objects "
              "(`binder/symbols-<kernel>-<arch>-<config>.txt`), the events' own left out:", "",
              *inlined, "",
              "## Where the disabled sites' instructions go", "",
              "One round trip of the disabled state, single-stepped: the guest boots stopped "
              "under QEMU's gdb stub (TCG, `-icount`), gdb lets it run 1,000 ioctl calls "
              "into the 16-byte timed loops and steps three (`runner/gdb_round_trip.py`), "
              "with interrupts masked; each instruction is counted in the function that holds "
              "it (`binder/steps-<kernel>-<arch>-<config>.csv`). One round trip, where the "
              "slope is the mean of 90: the two need not agree to the instruction. The functions where the "
              "shipped driver and its floor differ, per round trip (entries: how many more "
              "times the function was entered at its start):", "",
              *stepped_lines,
              "## Every kernel and state", "",
              "| kernel | arch | config | state | payload | per round trip | spread of the "
              "repetitions per round trip |",
              "|---|---|---|---|---:|---:|---:|"]
    for r in trips.itertuples():
        lines.append(f"| {r.kernel} | {r.arch} | {SHORT.get(r.config, r.config)} | {r.state} "
                     f"| {r.payload} | {r.per_round_trip:,.1f} | "
                     f"{r.spread_per_round_trip:,.1f} |")
    lines += ["", "## Where the numbers are", "",
              f"Samples: [`binder/{rundir.BINDER_SAMPLES}`]({rel}/binder/"
              f"{rundir.BINDER_SAMPLES}); records per round trip by event: "
              f"[`binder/{rundir.BINDER_EVENTS}`]({rel}/binder/{rundir.BINDER_EVENTS}); each "
              f"guest's kernel build, accelerator and times: [`binder/{rundir.BINDER_CONTEXT}`]"
              f"({rel}/binder/{rundir.BINDER_CONTEXT}); consoles and results channels beside "
              "them.", ""]
    if not context.get("complete"):
        lines += [f"**The Binder part is incomplete**: {context.get('incomplete_reason')}.", ""]
    missing = context.get("not_built", {})
    if missing:
        lines += ["Not measured: " + "; ".join(f"{g} ({why})" for g, why in missing.items())
                  + ".", ""]
    return lines


BARS = {2: ("as shipped", "#1f77b4"), 3: ("Rust, with the series for mainline", "#1b9e77"),
        4: ("Rust events through out-of-line C helpers", "#d95f02")}


def plot_command(data: str, columns: list[int]) -> str:
    """A clustered bar per column of `data` that has a value (gnuplot refuses a histogram
    of none), each labelled with its value over its own bar."""
    bars = [f'"{data}" using {c}:xtic(1) title "{BARS[c][0]}" lc rgb "{BARS[c][1]}"'
            if i == 0 else f'"" using {c} title "{BARS[c][0]}" lc rgb "{BARS[c][1]}"'
            for i, c in enumerate(columns)]
    # A cluster of k bars, each 1/(k+1) of a unit wide, centred on its x.
    width = 1 / (len(columns) + 1)
    labels = [f'"" using ($0{(i - (len(columns) - 1) / 2) * width:+.3f}):{c}:'
              f'(sprintf("%.0f", ${c})) with labels offset 0,0.7 notitle'
              for i, c in enumerate(columns)]
    return "plot " + ", ".join(bars + labels)


def figure(table: pd.DataFrame, out: Path) -> None:
    """Bars per driver, arch and config (smallest payload): the disabled sites' cost per
    round trip as shipped and, for Rust, in the helper world. gnuplot, its data and script
    beside the PNG."""
    mine = table[table.payload == ANSWER_PAYLOAD]
    out.parent.mkdir(parents=True, exist_ok=True)
    stem = out.with_suffix("")
    data = ["# label shipped series helper"]
    for r in mine.itertuples():
        label = (f"{binder.DRIVERS[r.driver]}\\n{fmt(r.sites)} sites\\n{r.arch} "
                 f"{SHORT.get(r.config, r.config)}")
        helper, series = ("NaN" if pd.isna(x) else f"{x:.1f}"
                          for x in (r.helper_cost, r.series_cost))
        data.append(f'"{label}" {r.disabled_cost:.1f} {series} {helper}')
    disk.write_atomically(stem.with_suffix(".dat"), "\n".join(data) + "\n")
    unit = unit_words(mine)
    script = "\n".join([
        # Room for each cluster's three-line label.
        f"set terminal pngcairo size {max(900, 160 * len(mine))},540 font 'sans,10' "
        "noenhanced",
        f'set output "{out.name}"',
        f'set title "Binder (mainline 7.3.4): disabled tracepoint sites\' cost per round trip '
        f'({ANSWER_PAYLOAD}-byte transaction and reply, QEMU TCG -icount)"',
        f'set ylabel "{unit} per round trip, minus the floor"',
        "set style data histograms", "set style histogram clustered gap 1",
        "set style fill solid 0.6 border -1", "set boxwidth 0.9", "set grid ytics",
        "set yrange [0:*]", "set offsets 0, 0, graph 0.12, 0", "set bmargin 5",
        "set key top right",
        plot_command(stem.name + ".dat", [column for column, values in
                                           ((2, mine.disabled_cost), (3, mine.series_cost),
                                            (4, mine.helper_cost)) if values.notna().any()]),
        ""])
    disk.write_atomically(stem.with_suffix(".gp"), script)
    proc = subprocess.run(["gnuplot", stem.with_suffix(".gp").name], cwd=out.parent,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise Failure(f"gnuplot could not draw {out}: {proc.stderr.strip()}")
