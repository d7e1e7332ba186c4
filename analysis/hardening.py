"""What clang's hardening adds to a site's paths, read from the module's disassembly: kCFI's
check before an indirect call on the way from a site to its probe, and the shadow call
stack's push and pop of the return address (arm64's x18) on a disabled path."""

import re

from analysis import codegen
from common.objdump import Function, Insn, is_call

# The functions whose enabled paths are compared: C's loop (its site inlines __DO_TRACE),
# the C function Rust's site calls once its key is on, and the helper-calling driver's helper.
ENABLED_PATHS = (("C", "tpbench_c_trace"), ("Rust", "rust_do_trace_tpbench_hit"),
                 ("Rust via a C helper", "tpbench_trace_helper"))
ITERATOR = "__traceiter_tpbench_hit"

# The trap a failed kCFI check runs: x86_64 `ud2`, arm64 `brk #0x8...` (0x8000 plus the
# registers' numbers, arch/arm64/include/asm/insn.h's KCFI BRK immediate).
_ARM64_KCFI_BRK = re.compile(r"^#0x8[0-9a-f]{3}\b")


def _check_start(insn: Insn) -> bool:
    """The first instruction of a kCFI check: the expected hash into %r10d (x86_64), the
    target's hash from the word before it into w16 (arm64)."""
    ops = insn.operands.replace(" ", "")
    return ((insn.mnemonic == "mov" and ops.startswith("$") and ops.endswith(",%r10d"))
            or (insn.mnemonic == "ldur" and ops.startswith("w16,[") and ops.endswith("#-4]")))


def _is_trap(insn: Insn) -> bool:
    return insn.mnemonic == "ud2" or (insn.mnemonic == "brk"
                                      and bool(_ARM64_KCFI_BRK.match(insn.operands)))


def kcfi_checks(f: Function) -> list[list[Insn]]:
    """Each kCFI check in `f`, as the instructions a passing check runs: from the hash load
    to the branch over the trap (x86_64: mov, add, je; arm64: ldur, movk, movk, cmp, b.eq)."""
    out = []
    for i, insn in enumerate(f.insns):
        if not _is_trap(insn) or i < 2 or f.insns[i - 1].mnemonic not in ("je", "b.eq"):
            continue
        start = next((j for j in range(i - 1, max(i - 7, -1), -1)
                      if _check_start(f.insns[j])), None)
        if start is not None:
            out.append(f.insns[start:i])
    return out


def reached(funcs: dict[str, Function], start: str) -> list[str]:
    """`start` and every module function it reaches by direct calls and tail calls (a jump,
    as clang's `jg __do_trace_<event>` on 7.3, into another function), in the order found."""
    seen, todo = [], [start]
    while todo:
        name = todo.pop(0)
        if name in seen or name not in funcs:
            continue
        seen.append(name)
        todo += [c for insn in funcs[name].insns
                 if (is_call(insn.mnemonic) or codegen.is_jump(insn.mnemonic)
                     or codegen.is_conditional(insn.mnemonic))
                 and (c := codegen.callee(funcs, insn)) and c != name]
    return seen


def checks_on_the_way(funcs: dict[str, Function], loop: str) -> dict[str, list[list[Insn]]]:
    """The kCFI checks of the functions a loop reaches by direct calls, by function: where
    its site, once enabled, may pass one on the way to its probe (a check is on the path
    only where an indirect call is: `__traceiter_<event>()`'s call of each probe, not a
    static call's direct one)."""
    out = {}
    for name in reached(funcs, loop):
        checks = kcfi_checks(funcs[name])
        if checks:
            out[name] = checks
    return out


def shadow_stack(insn: Insn) -> bool:
    """An arm64 push or pop of the return address on the shadow call stack (x18)."""
    return bool(re.search(r"\[x18\b", insn.operands))


def shadow_stack_per_event(funcs: dict[str, Function], sites: dict) -> list[str] | None:
    """The shadow call stack instructions the helper-calling loop runs per event with its
    tracepoint off (each once per iteration), or None when its walk cannot be made."""
    try:
        path = codegen.disabled_path(funcs, codegen.LOOP_PREFIX + "rust_helper",
                                     codegen.site_offsets(sites))
    except (codegen.WalkError, KeyError):
        return None
    trips = codegen.iterations_per_trip(path)
    words = [f"{i.mnemonic} {i.operands}" for _, i in path if shadow_stack(i)]
    return words[:len(words) // trips] if trips > 1 else words


def facts(funcs: dict[str, Function], sites: dict) -> dict:
    """What the module's code says about kCFI, LTO and the shadow call stack: per enabled
    path (ENABLED_PATHS), the kCFI checks it passes on the way to one probe, whether it
    reaches the probe through a static call, whether it calls the event's iterator or has it
    inlined; the iterator's own checks (each probe's, when it runs); whether C's
    `trace_<event>()` is out of line; the helper's shadow call stack instructions."""
    paths = {}
    for who, start in ENABLED_PATHS:
        if start not in funcs:
            continue
        names = reached(funcs, start)
        paths[who] = dict(
            function=start,
            checks=[len(c) for name in names if not name.startswith(ITERATOR)
                    for c in kcfi_checks(funcs[name])],
            static_call=any(n.startswith("__SCT__") for n in names),
            calls_iterator=ITERATOR in names)
    return dict(paths=paths,
                iterator_checks=[len(c) for c in kcfi_checks(funcs[ITERATOR])]
                if ITERATOR in funcs else [],
                out_of_line_trace="trace_tpbench_hit" in funcs,
                shadow_stack=shadow_stack_per_event(funcs, sites))
