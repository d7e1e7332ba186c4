"""What tpbench measures, read from the one list the module's tables expand:
bench-module/tpbench_variants.h. The runner, the analysis and the tests take
their variants and states from here, so none of them repeats the list."""
import re
from dataclasses import dataclass
from pathlib import Path

LIST = Path(__file__).resolve().parent.parent / "bench-module" / "tpbench_variants.h"


class TableError(Exception):
    """The list cannot be read; the message names the file and the entry."""


@dataclass(frozen=True)
class Variant:
    name: str
    language: str   # "C" or "RUST"
    fires: bool     # calls the tracepoint when it is on
    what: str       # one Markdown sentence for the report


@dataclass(frozen=True)
class State:
    name: str
    what: str


_COMMENT = re.compile(r"/\*.*?\*/", re.S)
# An entry's arguments: string literals (which may hold parentheses) and anything but quotes
# and parentheses.
_ENTRY = re.compile(r'\b(TPBENCH_VARIANT|TPBENCH_STATE)\s*\(((?:"[^"\\]*"|[^()"])*)\)')
_VARIANT = re.compile(r'\s*([a-z][a-z0-9_]*)\s*,\s*(C|RUST)\s*,\s*(true|false)\s*,\s*((?:"[^"\\]*"\s*)+)$')
_STATE = re.compile(r'\s*([a-z][a-z0-9_]*)\s*,\s*((?:"[^"\\]*"\s*)+)$')


def _string(literals: str) -> str:
    """Adjacent C string literals, joined as the compiler joins them."""
    return "".join(re.findall(r'"([^"\\]*)"', literals))


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
                                 "(name, C|RUST, true|false, \"what\")")
            variants.append(Variant(v[1], v[2], v[3] == "true", _string(v[4])))
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
    if not variants or not states:
        raise TableError(f"{origin}: needs at least one TPBENCH_VARIANT and one TPBENCH_STATE")
    return tuple(variants), tuple(states)


VARIANT_TABLE, STATE_TABLE = parse(LIST.read_text())
VARIANTS = tuple(v.name for v in VARIANT_TABLE)
STATES = tuple(s.name for s in STATE_TABLE)
BY_NAME = {v.name: v for v in VARIANT_TABLE}
