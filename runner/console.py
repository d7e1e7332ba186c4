"""Pure functions over console and results-channel lines. No I/O here."""

import re
from dataclasses import dataclass

# printk timestamps ("[    1.234567] ") are optional in what we parse.
_TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
_PANIC = re.compile(r"Kernel panic - not syncing|BUG: kernel NULL pointer|Oops:|general protection fault")


def strip_timestamp(line: str) -> str:
    return _TIMESTAMP.sub("", line)


@dataclass(frozen=True)
class BootVerdict:
    reached_init: bool
    finished: bool          # init said it was done
    panic: str | None       # the first panic/oops line, if any
    rebooted: bool          # a "reboot:" line was printed

    @property
    def ok(self) -> bool:
        return self.reached_init and self.finished and self.panic is None


def judge_console(lines, init_marker="tpbench-init: started", done_marker="tpbench-init: done"):
    """What a boot's console says happened. Parsing stops at a panic or a reboot line."""
    reached = finished = rebooted = False
    panic = None
    for raw in lines:
        line = strip_timestamp(raw)
        if init_marker in line:
            reached = True
        elif done_marker in line:
            finished = True
        elif _PANIC.search(line):
            panic = line.strip()
            break
        elif line.startswith("reboot:"):
            rebooted = True
            break
    return BootVerdict(reached, finished, panic, rebooted)


def section(lines, begin: str, end: str) -> list[str] | None:
    """The lines strictly between `begin` and `end`; None when either is missing."""
    lines = list(lines)
    try:
        i = lines.index(begin)
        j = lines.index(end, i + 1)
    except ValueError:
        return None
    return lines[i + 1:j]


def trace_events(trace_lines, event: str) -> list[str]:
    """The records of one event in a tracefs `trace` dump (comment lines skipped)."""
    return [line for line in trace_lines
            if not line.startswith("#") and re.search(rf"\s{re.escape(event)}:\s", line)]


def key_values(lines) -> dict[str, str]:
    """`key=value` lines (results channel), first occurrence wins."""
    out = {}
    for line in lines:
        m = re.fullmatch(r"([A-Za-z_][\w.]*)=(.*)", line.strip())
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2)
    return out
