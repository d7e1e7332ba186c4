"""The run directory: who is writing it, and whether a run that says it runs still does."""

import os
from pathlib import Path

RUNNING = "running"


def runner_identity() -> dict:
    return {"pid": os.getpid(), "boot_id": boot_id()}


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def runner_gone(context: dict) -> str | None:
    """Why a run that says it is running is not: its runner's process is gone (or the
    machine restarted since). None while the runner lives, or for a closed run."""
    if context.get("incomplete_reason") != RUNNING or context.get("complete"):
        return None
    who = context.get("runner")
    if not who:
        return "interrupted: its runner is gone (the run predates recording the runner)"
    if who.get("boot_id") != boot_id():
        return f"interrupted: the machine restarted while its runner (pid {who['pid']}) ran"
    try:
        os.kill(int(who["pid"]), 0)
    except ProcessLookupError:
        return (f"interrupted: its runner (pid {who['pid']}) ended without closing the run, "
                "killed or crashed")
    except PermissionError:
        pass
    return None
