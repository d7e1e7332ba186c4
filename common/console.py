"""Pure functions over console and results-channel lines. No I/O here."""

import re
from dataclasses import dataclass

# printk timestamps ("[    1.234567] ") are optional in what we parse.
_TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
_PANIC = re.compile(r"Kernel panic - not syncing|BUG: kernel NULL pointer|Oops:|general protection fault")
# What the kernel prints when something went wrong but it carried on: a run during which
# any of these appeared cannot be trusted (its timings may include the report itself).
_TROUBLE = re.compile(r"WARNING:|BUG:|rcu: INFO: rcu_\w+ detected stalls|rcu_\w+ self-detected stall"
                      r"|soft lockup|hard LOCKUP|INFO: task .* blocked for more than")


def strip_timestamp(line: str) -> str:
    return _TIMESTAMP.sub("", line)


@dataclass(frozen=True)
class BootVerdict:
    reached_init: bool
    finished: bool          # init said it was done
    panic: str | None       # the first panic/oops line, if any
    rebooted: bool          # a "reboot:" line was printed
    trouble: tuple[str, ...] = ()   # warnings, BUGs, stalls and lockups the kernel reported

    @property
    def ok(self) -> bool:
        return self.reached_init and self.finished and self.panic is None and not self.trouble


def judge_console(lines, init_marker="tpbench-init: started", done_marker="tpbench-init: done"):
    """What a boot's console says happened. Parsing stops at a panic or a reboot line."""
    reached = finished = rebooted = False
    panic = None
    trouble = []
    for raw in lines:
        line = strip_timestamp(raw)
        if _TROUBLE.search(line) and not _PANIC.search(line):
            trouble.append(line.strip())
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
    return BootVerdict(reached, finished, panic, rebooted, tuple(trouble))


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


# ---------------------------------------------------------------------------
# KTAP from the benchmark module (results channel)

SAMPLE_FIELDS = ("variant", "state", "n", "rep", "cycles")
_SAMPLE = re.compile(r"^# sample variant=(\w+) state=(\w+) n=(\d+) rep=(\d+) cycles=(\d+)$")
_RESULT = re.compile(r"^(ok|not ok) (\d+) ([^#]+?)(?:\s+#\s*(.*))?$")
_PLAN = re.compile(r"^1\.\.(\d+)$")


@dataclass(frozen=True)
class KtapResult:
    plan: int | None
    tests: tuple[tuple[int, str, str], ...]   # (number, name, "ok" | "not ok" | "skip")
    samples: tuple[dict, ...]
    diagnostics: tuple[str, ...]
    problems: tuple[str, ...]                 # why this run cannot be trusted, if anything

    @property
    def ok(self) -> bool:
        return not self.problems


_CONSOLE_SAMPLE = re.compile(r"tpbench-sample: variant=(\w+) state=(\w+) n=(\d+) rep=(\d+) "
                             r"cycles=(\d+)$")


def console_samples(lines) -> tuple[dict, ...]:
    """Samples the module printed on the console as it took them (its test parameter
    panic_after), for a guest that died before its results could be collected."""
    out = []
    for raw in lines:
        m = _CONSOLE_SAMPLE.search(strip_timestamp(raw).rstrip())
        if m:
            out.append({"variant": m.group(1), "state": m.group(2), "n": int(m.group(3)),
                        "rep": int(m.group(4)), "cycles": int(m.group(5))})
    return tuple(out)


def whole_lines(text: str) -> tuple[list[str], list[str]]:
    """The lines of the results channel, without a last line that was cut short (no newline:
    the guest died or the file was cut while it was written), and the problem if one was."""
    lines = text.splitlines()
    if text and not text.endswith("\n") and lines:
        return lines[:-1], [f"the last line of the results was cut short and is not used: "
                            f"{lines[-1][:80]!r}"]
    return lines, []


def _result(line: str) -> tuple[int, str, str] | None:
    """(number, name, "ok" | "not ok" | "skip") of a KTAP result line, else None."""
    m = _RESULT.match(line)
    if not m:
        return None
    status = "skip" if (m.group(4) or "").upper().startswith("SKIP") else m.group(1)
    return int(m.group(2)), m.group(3).strip(), status


def parse_ktap(lines) -> KtapResult:
    """Parses the module's KTAP. Tests the plan announced but never reported count as crashed."""
    plan = None
    tests, samples, diags, problems = [], [], [], []
    seen_version = False
    for raw in lines:
        line = raw.rstrip("\r\n")
        if line == "KTAP version 1":
            seen_version = True
            continue
        m = _PLAN.match(line)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = _SAMPLE.match(line)
        if m:
            samples.append({"variant": m.group(1), "state": m.group(2), "n": int(m.group(3)),
                            "rep": int(m.group(4)), "cycles": int(m.group(5))})
            continue
        result = _result(line)
        if result:
            tests.append(result)
            continue
        if line.startswith("#"):
            diags.append(line[1:].strip())
    if not seen_version:
        problems.append("no 'KTAP version 1' header: the module produced no results")
    if plan is None:
        problems.append("no KTAP plan line")
    else:
        reported = {num for num, _, _ in tests}
        crashed = [n for n in range(1, plan + 1) if n not in reported]
        if crashed:
            problems.append(f"tests {crashed} announced by the plan but never reported (crashed)")
    for num, name, status in tests:
        if status == "not ok":
            problems.append(f"test {num} {name} failed")
    return KtapResult(plan, tuple(tests), tuple(samples), tuple(diags), tuple(problems))


# ---------------------------------------------------------------------------
# KTAP from KUnit at boot (console): the kernel crate's doctests

_KUNIT_SUBTEST = re.compile(r"^(\s*)# Subtest: (\S+)$")
_KUNIT_LOCATION = re.compile(r"^# (\S+)\.location: (\S+)$")


@dataclass(frozen=True)
class KunitTest:
    name: str
    status: str          # "ok" | "not ok" | "skip"
    location: str        # "rust/kernel/jump_label.rs:42" for a doctest, else ""


@dataclass(frozen=True)
class KunitSuite:
    name: str
    tests: tuple[KunitTest, ...]
    problems: tuple[str, ...]   # why its result cannot be taken as a pass

    def in_file(self, path: str) -> tuple[KunitTest, ...]:
        return tuple(t for t in self.tests if t.location.startswith(path + ":"))


def parse_kunit_suite(lines, suite: str) -> KunitSuite:
    """One KUnit suite's results from a boot console. Tests its plan announced but never
    reported count as crashed; a missing suite or end line is a problem, not a pass."""
    lines = [strip_timestamp(raw).rstrip("\r\n") for raw in lines]
    start = indent = None
    for i, line in enumerate(lines):
        m = _KUNIT_SUBTEST.match(line)
        if m and m.group(2) == suite:
            start, indent = i + 1, m.group(1)
            break
    if start is None:
        return KunitSuite(suite, (), (f"KUnit suite {suite} did not run (no '# Subtest: {suite}' "
                                      f"on the console; is CONFIG_KUNIT=y in the kernel?)",))
    # The suite's own result line is one level up; the suite's lines are those before it.
    outer = indent[:-4] if len(indent) >= 4 else ""
    end = re.compile(rf"{re.escape(outer)}(ok|not ok) \d+ {re.escape(suite)}")
    plan, tests, locations, ended, problems = None, [], {}, False, []
    for line in lines[start:]:
        if end.fullmatch(line):
            ended = True
            break
        if not line.startswith(indent) or line[len(indent):len(indent) + 1].isspace():
            continue   # deeper subtests or console noise
        body = line[len(indent):]
        m = _PLAN.match(body)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = _KUNIT_LOCATION.match(body)
        if m:
            locations[m.group(1)] = m.group(2)
            continue
        result = _result(body)
        if result:
            tests.append(result)
    if plan is None:
        problems.append(f"KUnit suite {suite}: no plan line")
    else:
        crashed = sorted(set(range(1, plan + 1)) - {num for num, _, _ in tests})
        if crashed:
            problems.append(f"KUnit suite {suite}: tests {crashed} announced but never "
                            f"reported (crashed)")
    if not ended:
        problems.append(f"KUnit suite {suite}: no result line for the suite (cut short)")
    for num, name, status in tests:
        if status == "not ok":
            problems.append(f"KUnit suite {suite}: test {num} {name} "
                            f"({locations.get(name, 'no location')}) failed")
    return KunitSuite(suite, tuple(KunitTest(name, status, locations.get(name, ""))
                                   for _, name, status in tests), tuple(problems))


_INSMOD = re.compile(r"^insmod (\S+) (-?\d+)$")


def insmod_statuses(lines) -> dict[str, int]:
    """The guest init's "insmod <name> <errno>" lines: module name -> 0 when it loaded,
    else the errno of the refusal (a module_init() that fails returns its error)."""
    return {m.group(1): int(m.group(2)) for m in map(_INSMOD.match, lines) if m}


_VULNERABILITY = re.compile(r"tpbench-vulnerability (\w+): (.*)$")


def vulnerabilities(lines) -> dict[str, str]:
    """What the guest's kernel chose against each CPU vulnerability, as the guest's init
    printed /sys/devices/system/cpu/vulnerabilities: file name -> its line."""
    found = {}
    for line in lines:
        m = _VULNERABILITY.search(strip_timestamp(line))
        if m:
            found[m.group(1)] = m.group(2).strip()
    return found
