"""What every stage tells its user: one error class whose message says which step failed
and what to do, and the progress lines on standard error."""

import sys
import time


class Failure(Exception):
    """A step failed; the message says which and what to do."""


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Stage:
    """Prints a stage's name when it starts and its elapsed time when it ends."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self.start = time.monotonic()
        say(f"[tpbench] {self.name} ...")
        return self

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def __exit__(self, exc_type, exc, tb):
        state = "done" if exc_type is None else "FAILED"
        say(f"[tpbench] {self.name}: {state} in {self.elapsed():.1f} s")
        return False
