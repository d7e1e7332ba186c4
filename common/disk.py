"""The file system as a long run meets it: writes that fail with one message, and the free
space an expensive step needs, checked before it starts.

A full disk, a read-only one or a missing permission is the environment's fault, not a bug:
it gets one line naming the file, the cause, the space found and what to do, never a
traceback, and no temporary file is left behind.
"""

import contextlib
import errno
import os
from pathlib import Path

from common.messages import Failure

NO_SPACE = {errno.ENOSPC, errno.EDQUOT}
FAULTS = NO_SPACE | {errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}

# What the expensive steps need, measured here (2026-12-05, 6.12 and 7.3 trees): an extracted
# and patched tree 2.1 GB, a kernel build 0.3 GB (its objects and a copy of the module
# tree), a Debian 13 root with its cross compilers and 7.3's source 3.1 GB; a run's
# directory with every architecture and both profiles 60 MB. Each with room to spare.
GIB = 1 << 30
NEEDS = {"tree": 3 * GIB, "kernel": GIB, "root": 4 * GIB, "run": 256 << 20}


class DiskFault(Failure):
    """The file system refused a write, or has too little room for the next step."""


def existing(path: Path) -> Path:
    """The nearest existing directory at or above `path`."""
    path = Path(path).absolute()
    while not path.exists():
        path = path.parent
    return path if path.is_dir() else path.parent


def free_and_total(path: Path) -> tuple[int, int]:
    st = os.statvfs(existing(path))
    return st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize


def size_words(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def where_words(path: Path) -> str:
    """The free space of the file system `path` is on, links followed, named as found."""
    free, total = free_and_total(path)
    place = existing(path)
    real = place.resolve()
    where = place if real == place else f"{place} (on {real})"
    return f"{where} has {size_words(free)} free of {size_words(total)}"


def explain(e: OSError, path: Path) -> str:
    """One message for an OS error on `path`: the file, the cause, and what to do."""
    path = Path(e.filename) if getattr(e, "filename", None) else Path(path)
    cause = e.strerror or errno.errorcode.get(e.errno, str(e))
    if e.errno in NO_SPACE:
        todo = (f"{where_words(path)}; free space there (old runs under data/, or trees and "
                "builds under TPBENCH_CACHE) or point --data or TPBENCH_CACHE elsewhere")
    elif e.errno == errno.EROFS:
        todo = "the file system is mounted read-only; point --data or TPBENCH_CACHE elsewhere"
    elif e.errno in (errno.EACCES, errno.EPERM):
        todo = "run as a user who may write there, or point --data or TPBENCH_CACHE elsewhere"
    else:
        todo = "check the disk"
    return f"cannot write {path}: {cause}; {todo}"


@contextlib.contextmanager
def writing(path: Path):
    """Turns an OS error of the file system inside the block into a DiskFault about `path`."""
    try:
        yield
    except OSError as e:
        if e.errno not in FAULTS:
            raise
        raise DiskFault(explain(e, path)) from None


def write_atomically(path: Path, data: str | bytes) -> None:
    """`path` gets `data` whole or not at all; on a fault the temporary file is removed and
    the DiskFault names `path`."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with writing(path):
            if isinstance(data, bytes):
                tmp.write_bytes(data)
            else:
                tmp.write_text(data)
            tmp.rename(path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def write_last_words(path: Path, data: str) -> bool:
    """After a fault, one last try to leave `path` saying why: written in place, since
    truncating it first frees the blocks it held. False when even that failed."""
    try:
        Path(path).write_text(data)
        return True
    except OSError:
        return False


def require_space(path: Path, need: str, what: str) -> None:
    """Refuses, before it starts, a step that needs more room than `path`'s file system has."""
    free, _ = free_and_total(path)
    if free < NEEDS[need]:
        raise DiskFault(f"{what} needs about {size_words(NEEDS[need])} free, and "
                        f"{where_words(path)}: free space there (old runs under data/, or "
                        "trees and builds under TPBENCH_CACHE) or point --data or "
                        "TPBENCH_CACHE elsewhere")
