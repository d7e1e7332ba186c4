"""Codegen comparison: the loop function of every variant, disassembled from the
built module, with its tracepoint sites and their __jump_table entries.

The parser and the path walk are pure functions over `objdump -dr` text, so
they are tested on fixture listings; `objdump` itself runs in `disassemble`.
"""

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from analysis.jump_table import NOPS, read_jump_table

_FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
# x86 objdump shows the bytes ("66 90 "), arm64 the 32-bit word ("d503201f ").
_INSN = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+|[0-9a-f]{8} )\s*\t(\S+)\s*(.*)$")
_RELOC = re.compile(r"^\s*([0-9a-f]+): (R_\w+)\t(\S+)$")
_TARGET = re.compile(r"(?:^|[ ,])([0-9a-f]+) <")

# Branch classes of x86_64 and arm64 mnemonics.
UNCONDITIONAL = {"jmp", "b"}
CALLS = {"call", "bl"}
ARM64_CONDITIONAL = {"cbz", "cbnz", "tbz", "tbnz"}


def is_jump(m: str) -> bool:
    return m in UNCONDITIONAL


def is_conditional(m: str) -> bool:
    return (m.startswith("j") and m != "jmp") or m.startswith("b.") or m in ARM64_CONDITIONAL


def is_call(m: str) -> bool:
    return m in CALLS


def is_return(m: str) -> bool:
    return m.startswith("ret")

LOOP_PREFIX = "tpbench_"


@dataclass
class Insn:
    addr: int
    raw: bytes
    mnemonic: str
    operands: str
    reloc: str | None = None     # symbol a relocation in this instruction names

    @property
    def text(self) -> str:
        """The instruction, with a call's real target or the symbol a relocation names."""
        if self.reloc and is_call(self.mnemonic):
            return f"{self.mnemonic} {self.reloc}"
        # Drop objdump's comments: x86 "   # 4a5 <sym>", arm64 "  // b.any"; an arm64
        # immediate ("#0x1") is kept.
        ops = re.sub(r"(\s{2,}#|\s*//).*$", "", self.operands).strip()
        return f"{self.mnemonic} {ops}".strip() + (f"  [{self.reloc}]" if self.reloc else "")

    @property
    def target(self) -> int | None:
        m = _TARGET.search(self.operands)
        return int(m.group(1), 16) if m else None

    @property
    def end(self) -> int:
        return self.addr + len(self.raw)


@dataclass
class Function:
    name: str
    start: int
    insns: list[Insn] = field(default_factory=list)

    def at(self, addr: int) -> int:
        for i, insn in enumerate(self.insns):
            if insn.addr == addr:
                return i
        raise KeyError(f"{self.name}: no instruction at {addr:#x}")


def parse_objdump(text: str) -> dict[str, Function]:
    """Functions of `objdump -dr --insn-width=16` output, relocations attached."""
    funcs: dict[str, Function] = {}
    current = None
    for line in text.splitlines():
        m = _FUNC.match(line)
        if m:
            current = Function(m.group(2), int(m.group(1), 16))
            funcs[current.name] = current
            continue
        if current is None:
            continue
        m = _INSN.match(line)
        if m:
            hexes = m.group(2).strip()
            raw = bytes.fromhex(hexes.replace(" ", ""))
            if " " not in hexes and len(hexes) == 8:
                raw = raw[::-1]      # an arm64 word: memory order is little-endian
            current.insns.append(Insn(int(m.group(1), 16), raw, m.group(3), m.group(4).strip()))
            continue
        m = _RELOC.match(line)
        if m and current.insns:
            sym = re.sub(r"[-+]0x[0-9a-f]+$", "", m.group(3))
            current.insns[-1].reloc = sym
    return funcs


class WalkError(Exception):
    pass


def disabled_path(funcs: dict[str, Function], loop: str, sites: set[int]) -> list[tuple[str, Insn]]:
    """The instructions one iteration of `loop` executes with its tracepoint off.

    The walk starts at the loop head (the target of the loop's backward branch)
    and ends when it returns there. A tracepoint site (`sites`) is a NOP; a
    forward branch that leaves the loop is not taken (N is large); any other
    forward conditional branch inside the loop skips the enabled block, so it
    is taken; calls are followed into functions of the same object.
    """
    f = funcs[loop]
    back = [i for i in f.insns if (is_jump(i.mnemonic) or is_conditional(i.mnemonic))
            and i.target is not None and i.target < i.addr]
    if not back:
        raise WalkError(f"{loop}: no backward branch, no loop")
    head = min(i.target for i in back)
    loop_end = max(i.addr for i in back)
    path: list[tuple[str, Insn]] = []
    pc = head
    for _ in range(1000):
        insn = f.insns[f.at(pc)]
        path.append((loop, insn))
        if insn.addr in sites:
            pc = insn.end
        elif is_call(insn.mnemonic):
            path += callee_path(funcs, insn, sites)
            pc = insn.end
        elif is_jump(insn.mnemonic):
            pc = insn.target
        elif is_conditional(insn.mnemonic):
            t = insn.target
            if t == head or (t < insn.addr):
                pc = t                       # the loop goes round
            elif t > loop_end:
                pc = insn.end                # leaving the loop: not while N is large
            else:
                pc = t                       # skipping the enabled block
        elif is_return(insn.mnemonic):
            raise WalkError(f"{loop}: returned inside the loop at {insn.addr:#x}")
        else:
            pc = insn.end
        if pc == head:
            return path
    raise WalkError(f"{loop}: the walk did not come back to the loop head")


def site_offsets(sites_map: dict[str, list["Site"]]) -> set[int]:
    return {s.offset for ss in sites_map.values() for s in ss}


def walk_all(funcs, sites: set[int], variants) -> dict[str, list[tuple[str, Insn]] | str]:
    """The disabled path of each variant's loop, or why it could not be walked."""
    walks = {}
    for v in variants:
        try:
            walks[v] = disabled_path(funcs, LOOP_PREFIX + v, sites)
        except (WalkError, KeyError) as e:
            walks[v] = str(e)
    return walks


def callee_path(funcs, call: Insn, sites: set[int]) -> list[tuple[str, Insn]]:
    name = call.reloc
    if name not in funcs:
        return []    # outside this object (the kernel): the call itself is on the path
    f = funcs[name]
    path = []
    i = 0
    for _ in range(1000):
        insn = f.insns[i]
        path.append((name, insn))
        if is_return(insn.mnemonic):
            return path
        if insn.addr in sites:
            i += 1
        elif is_jump(insn.mnemonic):
            i = f.at(insn.target)
        elif is_conditional(insn.mnemonic):
            # In a helper, a conditional branch on the key count skips the enabled block.
            i = f.at(insn.target)
        elif is_call(insn.mnemonic):
            raise WalkError(f"{name}: nested call on the disabled path")
        else:
            i += 1
    raise WalkError(f"{name}: no return")


def add_aliases(funcs: dict[str, Function], aliases: dict[str, list[str]]) -> None:
    """objdump labels one of several names at an address; make every name find the code."""
    for name, names in aliases.items():
        if name not in funcs:
            known = next((n for n in names if n in funcs), None)
            if known:
                funcs[name] = funcs[known]


OBJDUMP = {"x86_64": "objdump", "arm64": "aarch64-linux-gnu-objdump"}


def disassemble(ko: Path, arch: str = "x86_64") -> str:
    return subprocess.run([OBJDUMP[arch], "-dr", "--insn-width=16", str(ko)], text=True,
                          capture_output=True, check=True).stdout


@dataclass
class Site:
    function: str
    offset: int
    kind: str       # nop2 / nop5 / jmp2 / ...
    raw: str


def sites_by_function(ko: Path) -> dict[str, list[Site]]:
    out: dict[str, list[Site]] = {}
    for e in read_jump_table(ko):
        if e.function:
            out.setdefault(e.function, []).append(
                Site(e.function, e.code_offset, e.site_kind, e.site_bytes.hex(" ")))
    return out


def check_codegen(funcs: dict[str, Function], sites: dict[str, list[Site]],
                  measured: dict[str, float] | None, variants, jump_label: bool) -> list[str]:
    """Every check of the codegen comparison; returns the failures (empty when all pass).

    With CONFIG_JUMP_LABEL the trace loops have one NOP site each; without it, none.
    """
    failures = []
    walks = walk_all(funcs, site_offsets(sites), variants)
    for variant in [v for v in ("c_trace", "rust_trace") if v in variants]:
        fn = LOOP_PREFIX + variant
        mine = sites.get(fn, [])
        want = 1 if jump_label else 0
        if len(mine) != want:
            failures.append(f"{fn}: {len(mine)} __jump_table entries, expected {want}")
        for s in mine:
            if s.kind not in NOPS.values():
                failures.append(f"{fn}: site at {s.offset:#x} holds {s.kind} ({s.raw}), not a NOP")
    for variant in variants:
        fn = LOOP_PREFIX + variant
        path = walks[variant]
        if isinstance(path, str):
            failures.append(f"{fn}: cannot walk the disabled path: {path}")
            continue
        calls = [i for _, i in path if is_call(i.mnemonic)]
        if variant in ("c_trace", "rust_trace") and calls:
            failures.append(f"{fn}: the disabled path calls {calls[0].reloc or calls[0].text}")
        if variant == "rust_helper" and not calls:
            failures.append(f"{fn}: the helper variant's loop has no call")
        # Measured slopes are exact under icount, up to floating-point rounding in the fit.
        if measured is not None and variant in measured and abs(len(path) - measured[variant]) > 1e-6:
            failures.append(f"{fn}: {len(path)} instructions per iteration in the disassembly, "
                            f"{measured[variant]:g} measured")
    return failures


def checks_made(measured: dict[str, float] | None, variants, jump_label: bool,
                why_unmeasured: str) -> tuple[list[str], list[str]]:
    """What check_codegen checks for these inputs, and what it skips and why: the report
    names exactly these, never a check that did not run."""
    ran, skipped = [], []
    traces = [v for v in ("c_trace", "rust_trace") if v in variants]
    absent = [v for v in ("c_trace", "rust_trace", "rust_helper") if v not in variants]
    if traces:
        ran.append(("one NOP site with one __jump_table entry" if jump_label else
                    "no __jump_table entry (CONFIG_JUMP_LABEL=n)") + " in " + " and ".join(traces))
        ran.append("no call on the disabled path of " + " and ".join(traces))
    if "rust_helper" in variants:
        ran.append("a call on rust_helper's disabled path")
    ran.append(f"the disabled path of each of the {len(list(variants))} variants can be walked")
    if absent:
        skipped.append(f"the checks of {', '.join(absent)}: not in this run")
    if measured is None:
        skipped.append(f"instructions counted against instructions measured: {why_unmeasured}")
    else:
        counted = [v for v in variants if v in measured]
        ran.append(f"the instructions counted per iteration equal the per-call cost measured "
                   f"under icount, for {len(counted)} variants")
        if len(counted) < len(list(variants)):
            skipped.append("the count check of " + ", ".join(v for v in variants
                                                             if v not in measured)
                           + ": no measurement")
    return ran, skipped


PAIRS = (("c_empty", "rust_empty"), ("c_base", "rust_base"), ("c_trace", "rust_trace"))


def function_listing(funcs, fn: str, sites: set[int], path_addrs: set[tuple[str, int]]) -> list[str]:
    out = [f"<{fn}>:"]
    for insn in funcs[fn].insns:
        mark = "*" if (fn, insn.addr) in path_addrs else " "
        site = "  SITE" if insn.addr in sites else ""
        out.append(f"{mark} {insn.addr:4x}: {insn.text[:52]}{site}")
    return out


def listing(funcs, sites_map: dict[str, list[Site]], variants) -> str:
    """The loop functions, C beside Rust for the empty loops and the trace sites; one
    iteration's disabled path marked with '*', with its instruction count."""
    sites = site_offsets(sites_map)
    blocks = {}
    for v, path in walk_all(funcs, sites, variants).items():
        fn = LOOP_PREFIX + v
        if isinstance(path, str):
            blocks[v] = [f"<{fn}>: {path}"]
            continue
        addrs = {(f, i.addr) for f, i in path}
        body = function_listing(funcs, fn, sites, addrs)
        if funcs[fn].name != fn:
            body[0] = f"<{fn}>: the same code as <{funcs[fn].name}> (merged by the compiler):"
            addrs = {(funcs[fn].name, a) for _, a in addrs}
            body = [body[0]] + function_listing(funcs, funcs[fn].name, sites, addrs)[1:]
        callees = sorted({f for f, _ in path if f != fn})
        for callee in callees:
            body += [""] + function_listing(funcs, callee, sites, addrs)
        blocks[v] = body + [f"disabled path: {len(path)} instructions per iteration"]
    out = []
    done = set()
    for left, right in PAIRS:
        if left in blocks and right in blocks:
            a, b = blocks[left], blocks[right]
            width = max(len(x) for x in a) + 4
            for i in range(max(len(a), len(b))):
                x = a[i] if i < len(a) else ""
                y = b[i] if i < len(b) else ""
                out.append(f"{x:<{width}}{y}".rstrip())
            out.append("")
            done |= {left, right}
    for v in variants:
        if v in blocks and v not in done:
            out += blocks[v] + [""]
    return "\n".join(out)


def path_summary(funcs, sites_map: dict[str, list[Site]], variants) -> list[tuple[str, int, str]]:
    """(variant, instructions per iteration, the instructions) of each disabled path; a
    branch the path takes is marked "(taken)"."""
    sites = site_offsets(sites_map)
    out = []
    for v, path in walk_all(funcs, sites, variants).items():
        if isinstance(path, str):
            continue
        words = []
        for k, (fn, i) in enumerate(path):
            nxt_fn, nxt = path[(k + 1) % len(path)]
            branch = is_jump(i.mnemonic) or is_conditional(i.mnemonic)
            taken = branch and i.addr not in sites and (nxt_fn, nxt.addr) != (fn, i.end)
            words.append(f"{i.mnemonic}{' (NOP site)' if i.addr in sites else ''}"
                         + (f" {i.reloc}" if is_call(i.mnemonic) and i.reloc else "")
                         + (" (taken)" if taken else ""))
        out.append((v, len(path), "; ".join(words)))
    return out
