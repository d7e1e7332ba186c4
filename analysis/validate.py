"""Checks a run directory's files against their schema before any statistics.

Every problem names the file, the line and what is wrong; analysis refuses a
run with any, so a damaged samples.csv never becomes a report with silently
wrong verdicts. Pure functions over text, so they are tested on damaged
copies of real files.
"""

import csv
import gzip
from pathlib import Path

from analysis import stats
from kelf.rewrites import THUNKS
from common import arches, matrix, rundir
from common.rundir import runner_gone

COLUMNS_V2 = ["arch", "config", "accel", "variant", "state", "n", "rep", "cycles"]
COLUMNS_V1 = COLUMNS_V2[1:]       # schema 1 runs are x86_64 only and lack `arch`
# native-thunks.csv.gz: the native samples of the return thunks other than the host's own.
COLUMNS_THUNKS = ["arch", "config", "thunk", "accel", "variant", "state", "n", "rep", "cycles"]
CONFIGS = ("jump_label", "no_jump_label")
STATES = matrix.STATES
VARIANTS = matrix.VARIANTS + (stats.AA_TWIN,)
INTEGERS = ("n", "rep", "cycles")
SHOWN = 5   # problems quoted in the message; the rest are counted


class BadRun(SystemExit):
    """A run that analysis cannot read; the message says which file, where and what."""


def accel_known(accel: str) -> bool:
    return accel in stats.UNITS or stats.is_native(accel) and (
        accel == "native" or accel.removeprefix("native+").isdigit())


def samples_problems(text: str, name: str = "samples.csv",
                     headers=(COLUMNS_V2, COLUMNS_V1)) -> list[str]:
    """Every problem of a samples.csv (or, with `headers` COLUMNS_THUNKS, of a
    native-thunks.csv.gz, unpacked), as "<name> line <k>: <what>" (pure)."""
    lines = text.splitlines()
    if not lines:
        return [f"{name}: empty (no header, no samples)"]
    header = lines[0].split(",")
    if header not in headers:
        return [f"{name} line 1: header {','.join(header)!r}, expected "
                f"{','.join(headers[0])!r}"]
    if not text.endswith("\n"):
        return [f"{name} line {len(lines)}: the last line has no newline: the file was cut "
                "short while being written"]
    problems, seen = [], {}
    for k, row in enumerate(csv.reader(lines[1:]), start=2):
        if len(row) != len(header):
            problems.append(f"{name} line {k}: {len(row)} fields, expected {len(header)}")
            continue
        r = dict(zip(header, row))
        bad = [c for c in INTEGERS if not r[c].isdigit()]
        if bad:
            problems.append(f"{name} line {k}: {', '.join(f'{c}={r[c]!r}' for c in bad)} "
                            "is not a non-negative integer")
        if "arch" in r and r["arch"] not in arches.NAMES:
            problems.append(f"{name} line {k}: unknown arch {r['arch']!r}")
        if r["config"] not in CONFIGS:
            problems.append(f"{name} line {k}: unknown config {r['config']!r}")
        if not accel_known(r["accel"]):
            problems.append(f"{name} line {k}: unknown accelerator {r['accel']!r}")
        if r["state"] not in STATES:
            problems.append(f"{name} line {k}: unknown state {r['state']!r}")
        if "thunk" in r and r["thunk"] not in THUNKS:
            problems.append(f"{name} line {k}: unknown return thunk {r['thunk']!r}")
        if r["variant"] not in VARIANTS:
            problems.append(f"{name} line {k}: unknown variant {r['variant']!r}")
        key = tuple(r[c] for c in header if c != "cycles")
        if key in seen:
            problems.append(f"{name} line {k}: the same sample as line {seen[key]} "
                            f"({', '.join(f'{c}={v}' for c, v in zip(header, key))})")
        else:
            seen[key] = k
    if not problems and len(lines) == 1:
        problems.append(f"{name}: a header and no samples")
    return problems


def check_context(run: Path) -> dict:
    """The run's context (context.json, and native.json over it), or BadRun saying why there
    is none to read."""
    try:
        return rundir.context(run)
    except rundir.Damaged as e:
        raise BadRun(str(e)) from None


def check_run(run: Path) -> dict:
    """The run's context, once context.json and samples.csv are known to be sound;
    raises BadRun with one message naming every problem found (the first few quoted)."""
    samples_path = run / "samples.csv"
    context = check_context(run)
    if not samples_path.exists():
        reason = runner_gone(context) or context.get("incomplete_reason")
        raise BadRun(f"{samples_path}: missing; the run recorded no samples "
                     f"({reason or 'no reason recorded'})")
    problems = samples_problems(samples_path.read_text(errors="replace"), str(samples_path))
    native_path = run / rundir.NATIVE_SAMPLES
    if native_path.exists():
        problems += samples_problems(native_path.read_text(errors="replace"), str(native_path))
    thunks_path = run / rundir.THUNK_SAMPLES
    if thunks_path.exists():
        try:
            text = gzip.decompress(thunks_path.read_bytes()).decode(errors="replace")
        except (OSError, EOFError) as e:
            problems.append(f"{thunks_path}: not a whole gzip file ({e}): it was cut short "
                            "or damaged")
        else:
            problems += samples_problems(text, str(thunks_path), (COLUMNS_THUNKS,))
    if problems:
        more = len(problems) - SHOWN
        raise BadRun("refusing to analyse a damaged run:\n  " + "\n  ".join(problems[:SHOWN])
                     + (f"\n  ... and {more} more" if more > 0 else "")
                     + "\nrun make bench again for a new run; committed runs are never edited")
    return context
