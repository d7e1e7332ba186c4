"""Running a command with its output kept in a log and its tail quoted when it fails; a
directory made whole or not at all; a lock two processes take turns at."""

import contextlib
import fcntl
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from common.messages import Failure, say


def run(cmd, *, cwd=None, env=None, log: Path | None = None, check=True) -> subprocess.CompletedProcess:
    """Runs a command; with `log`, its output goes there and the tail is shown on failure."""
    full_env = dict(os.environ, **(env or {}))
    if log is None:
        proc = subprocess.run(cmd, cwd=cwd, env=full_env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output = proc.stdout
    else:
        with open(log, "a") as f:
            f.write(f"$ {shlex.join(map(str, cmd))}\n")
            f.flush()
            proc = subprocess.run(cmd, cwd=cwd, env=full_env, text=True,
                                  stdout=f, stderr=subprocess.STDOUT)
        output = Path(log).read_text(errors="replace")
    if check and proc.returncode != 0:
        tail = "\n".join(output.splitlines()[-25:])
        where = f" (full log: {log})" if log else ""
        raise Failure(f"command failed with status {proc.returncode}{where}:\n"
                      f"  {shlex.join(map(str, cmd))}\n{tail}")
    proc.stdout = output
    return proc


@contextlib.contextmanager
def staged(final: Path):
    """A fresh directory beside `final` that becomes `final` only if the block succeeds, so a
    failed or interrupted attempt leaves nothing a later run could take for a good result."""
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{final.name}.tmp-", dir=final.parent))
    try:
        yield work
        if final.exists():
            shutil.rmtree(final)
        work.rename(final)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def locked(path: Path):
    """Holds an exclusive lock on `path` (made if missing): two processes that build the same
    kernel take turns, and the second finds the first's build."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"[tpbench] waiting for another tpbench process to finish {path.stem}")
            fcntl.flock(f, fcntl.LOCK_EX)
        yield


def output_of(cmd) -> str:
    try:
        return subprocess.run(cmd, text=True, capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unavailable"
