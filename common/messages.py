"""What every stage tells its user: one error class whose message says which step failed
and what to do, and the progress lines on standard error (each step's start and end, and
what a long one has done so far)."""

import sys
import threading
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


class Progress:
    """While a long step runs, what it has done so far, so that work is not mistaken for a
    hang: on a terminal one line refreshed every few seconds, in a log or CI a line every
    half minute at most. `describe` says what is done ("1234 of about 5200 objects, in
    drivers/net"); the elapsed time is added to it."""

    def __init__(self, name: str, describe, tty: bool | None = None):
        self.name, self.describe = name, describe
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.every = 2.0 if self.tty else 30.0
        self.stop = threading.Event()

    def line(self) -> str:
        elapsed = int(time.monotonic() - self.start)
        return f"[tpbench] {self.name}: {self.describe()}, {elapsed // 60}:{elapsed % 60:02d}"

    def _tick(self) -> None:
        while not self.stop.wait(self.every):
            if self.tty:
                print(f"\r\033[K{self.line()}", end="", file=sys.stderr, flush=True)
            else:
                say(self.line())

    def __enter__(self):
        self.start = time.monotonic()
        self.thread = threading.Thread(target=self._tick, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        if self.tty:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
        return False
