"""What tpbench measures, read from the one list the module's tables expand:
bench-module/tpbench_variants.h. The runner, the analysis and the tests take
their variants and states from here, so none of them repeats the list."""
import re
from dataclasses import dataclass
from pathlib import Path

MODULE = Path(__file__).resolve().parent.parent / "bench-module"
LIST = MODULE / "tpbench_variants.h"
TESTS = MODULE / "ktap-tests.tsv"


class TableError(Exception):
    """The list cannot be read; the message names the file and the entry."""


@dataclass(frozen=True)
class Variant:
    name: str
    language: str        # "C" or "RUST"
    event: str | None    # the trace event it fires when on; None: a loop without a site
    sites: int           # sites of the event one iteration runs
    baseline: str | None  # the loop without the site; None for a baseline
    what: str            # one Markdown sentence for the report

    @property
    def fires(self) -> bool:
        return self.event is not None


@dataclass(frozen=True)
class State:
    name: str
    what: str


_COMMENT = re.compile(r"/\*.*?\*/", re.S)
# An entry's arguments: string literals (which may hold parentheses) and anything but quotes
# and parentheses.
_ENTRY = re.compile(r'\b(TPBENCH_VARIANT|TPBENCH_STATE)\s*\(((?:"[^"\\]*"|[^()"])*)\)')
_NAME = r"\s*([a-z][a-z0-9_]*)\s*"
_VARIANT = re.compile(rf'{_NAME},\s*(C|RUST)\s*,{_NAME},\s*(\d+)\s*,{_NAME},\s*((?:"[^"\\]*"\s*)+)$')
_STATE = re.compile(r'\s*([a-z][a-z0-9_]*)\s*,\s*((?:"[^"\\]*"\s*)+)$')


def _string(literals: str) -> str:
    """Adjacent C string literals, joined as the compiler joins them."""
    return "".join(re.findall(r'"([^"\\]*)"', literals))


def _some(name: str) -> str | None:
    return None if name == "none" else name


def parse(text: str, origin: str = str(LIST)) -> tuple[tuple[Variant, ...], tuple[State, ...]]:
    body = _COMMENT.sub(" ", text).strip()
    variants, states = [], []
    consumed = 0
    for m in _ENTRY.finditer(body):
        if body[consumed:m.start()].strip():
            raise TableError(f"{origin}: not an entry: {body[consumed:m.start()].strip()[:60]!r}")
        consumed = m.end()
        kind, args = m.groups()
        if kind == "TPBENCH_VARIANT":
            v = _VARIANT.match(args)
            if not v:
                raise TableError(f"{origin}: TPBENCH_VARIANT({args.strip()[:60]}...) is not "
                                 "(name, C|RUST, event|none, sites, baseline|none, \"what\")")
            variants.append(Variant(v[1], v[2], _some(v[3]), int(v[4]), _some(v[5]),
                                    _string(v[6])))
        else:
            s = _STATE.match(args)
            if not s:
                raise TableError(f"{origin}: TPBENCH_STATE({args.strip()[:60]}...) is not "
                                 "(name, \"what\")")
            states.append(State(s[1], _string(s[2])))
    if body[consumed:].strip():
        raise TableError(f"{origin}: not an entry: {body[consumed:].strip()[:60]!r}")
    names = [v.name for v in variants] + [s.name for s in states]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise TableError(f"{origin}: named more than once: {', '.join(twice)}")
    known = {v.name: v for v in variants}
    for v in variants:
        if v.baseline is not None and (v.baseline not in known or known[v.baseline].fires):
            raise TableError(f"{origin}: {v.name}'s baseline {v.baseline} is not a variant "
                             "without a site")
        if not (v.event is None) == (v.baseline is None) == (v.sites == 0):
            raise TableError(f"{origin}: {v.name}: a variant with sites has an event and a "
                             "baseline, one without has none")
    if not variants or not states:
        raise TableError(f"{origin}: needs at least one TPBENCH_VARIANT and one TPBENCH_STATE")
    return tuple(variants), tuple(states)


VARIANT_TABLE, STATE_TABLE = parse(LIST.read_text())
VARIANTS = tuple(v.name for v in VARIANT_TABLE)
STATES = tuple(s.name for s in STATE_TABLE)
BY_NAME = {v.name: v for v in VARIANT_TABLE}


def reference_of(variant: str) -> str | None:
    """The C loop a loop with sites is compared with: the first C variant with as many
    sites of the same event."""
    me = BY_NAME.get(variant)
    if me is None or me.event is None:
        return None
    return next((v.name for v in VARIANT_TABLE if v.language == "C" and v.event == me.event
                 and v.sites == me.sites), None)


def parse_tests(text: str, origin: str = str(TESTS)) -> dict[str, str]:
    """The module's KTAP tests, name -> what it checks, from ktap-tests.tsv's lines."""
    tests = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, tab, what = line.partition("\t")
        if not tab or not re.fullmatch(r"[a-z][a-z0-9_]*", name) or not what.strip():
            raise TableError(f"{origin} line {number}: expected a test name, a tab and what it "
                             f"checks, not {line!r}")
        if name in tests:
            raise TableError(f"{origin} line {number}: {name} is listed twice")
        tests[name] = what.strip()
    return tests


def module_tests() -> dict[str, str]:
    return parse_tests(TESTS.read_text())
