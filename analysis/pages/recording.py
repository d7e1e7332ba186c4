"""The recording page: the cost of each record, and the records read back."""

from pathlib import Path

import pandas as pd

from analysis import stats
from common import console, matrix, records, rundir


# The sites whose recording cost is compared: C's, Rust's, and the driver-like event's.
RECORDING_PAIRS = (("tpbench_hit", "c_trace", "rust_trace"), ("tpbench_txn", "c_txn", "rust_txn"),
                   ("tpbench_txn", "c_txn", "rust_txn_lazy"))


def recording_section(summary: pd.DataFrame, records_checked: str) -> list[str]:
    """What a call costs while its event records into the ring buffer, C against Rust."""
    guest = stats.rows(stats.guest(summary), state="recording")
    rows, shares = [], []
    for arch, config in stats.panels(guest):
        mine = stats.rows(guest, arch=arch, config=config)
        for event, c, rust in RECORDING_PAIRS:
            rc, rr = (stats.rows(mine, variant=v) for v in (c, rust))
            if rc.empty or rr.empty or pd.isna(rc.net.iloc[0]) or pd.isna(rr.net.iloc[0]):
                continue
            cn, rn = rc.net.iloc[0], rr.net.iloc[0]
            extra = round(rn - cn, 1) + 0.0          # + 0.0: no "-0.0"
            shares.append(round(100 * extra / cn, 1) + 0.0)
            rows.append(f"| {arch} | {config} | `{event}` | `{rust}` | {cn:.1f} | {rn:.1f} | "
                        f"{extra:+.1f} | {shares[-1]:+.1f}% | {rc.unit.iloc[0]} |")
    if not rows:
        return []
    return ["## Recording into the ring buffer", "",
            "State `recording`: the guest's init writes 1 to tracefs' "
            "`events/tpbench/enable`, as a user turns tracing on, and then has the module "
            "time its loops (`tpbench/control` in debugfs), so each call writes one record. "
            "Per call, net of "
            "the loop without the site; under icount the cost includes the ring buffer's "
            "page changes, spread over the calls, so it is not a whole number:", "",
            "| arch | config | event | Rust site | C | Rust | Rust minus C | as a share of C's "
            "| unit |",
            "|---|---|---|---|---:|---:|---:|---:|---|", *rows, "",
            f"Rust minus C is {min(shares):+.1f}% to {max(shares):+.1f}% of C's cost per "
            "record" + (", of both signs" if min(shares) < 0 < max(shares) else "") + ": where "
            "Rust's site costs more, the extra is the call into `rust_do_trace_<event>` that "
            "the enabled state shows too, small next to writing the record.", "",
            records_checked, ""]


def record_check(run: Path, context: dict) -> dict:
    """The record check (common/records.py) made again on each guest's results file: the
    trace dumps in it, against the variants that guest ran."""
    out = {"guests": 0, "checked": 0, "on": 0, "off": 0, "calls": set(), "problems": []}
    for name, c in context["configs"].items():
        out["guests"] += 1
        path = rundir.guest_file(run, "results", *name.split("/"))
        lines, _ = console.whole_lines(path.read_text(errors="replace") if path.exists() else "")
        _, dumps = records.split_results(lines)
        if not dumps:
            continue
        variants = next((a.split("=", 1)[1].split(",") for a in c.get("module_params", [])
                         if a.startswith("variants=")), matrix.VARIANTS)
        summary, problems = records.check(dumps, variants)
        out["checked"] += 1
        out["problems"] += [f"{name}: {p}" for p in problems]
        for state in ("on", "off"):
            out[state] += sum(v["records"] for v in summary.get(state, {}).values())
            out["calls"] |= {v["calls"] for v in summary.get(state, {}).values()}
    return out


def record_words(check: dict) -> str:
    """One sentence on what the record check found; the report says nothing it did not."""
    if not check["checked"]:
        return ("The records were not read back in this run (its guests predate the record "
                "check).")
    if check["problems"]:
        return (f"The record check **failed**: {len(check['problems'])} problems, the first: "
                f"{check['problems'][0]}.")
    calls = " or ".join(map(str, sorted(check["calls"])))
    return ("The records were read back from the ring buffer (each guest copies tracefs' "
            "`trace` into its results file; `common/records.py` checks it): in "
            + (f"each of the {check['guests']} guests" if check["checked"] == check["guests"]
               else f"{check['checked']} of the {check['guests']} guests (the others predate "
               "the check)")
            + f", each variant's {calls} calls left exactly the records "
            "its sites write, in call order, with the values passed (`tpbench_hit`'s index; "
            "`tpbench_txn`'s id, flags and size, and one address per transaction, the same "
            "from C and from Rust, spaced as in the array), "
            f"{check['on']} records in all with the events on, {check['off']} with them off.")
