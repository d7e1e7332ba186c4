"""Codegen comparison: the loop function of every variant, disassembled from the
built module, with its tracepoint sites and their __jump_table entries.

The parser and the path walk are pure functions over `objdump -dr` text, so
they are tested on fixture listings; the runner runs `objdump` (each run's
objdump-<arch>-<config>.txt.gz).
"""

import re
from dataclasses import dataclass
from pathlib import Path

from common.objdump import (CALLS, Function, Insn, is_call, parse_objdump,  # noqa: F401
                            strip_comment)
from kelf.jump_table import NOPS, read_jump_table

# Branch classes of x86_64, arm64, riscv64, arm and loongarch64 mnemonics; older binutils
# print the x86 ones with a `q` suffix (callq, jmpq, retq).
UNCONDITIONAL = {"jmp", "jmpq", "b", "j"}
INDIRECT_JUMPS = {"br", "jr"}        # arm64, riscv64, loongarch64; x86 writes `jmp *%reg`
# Calls are common.objdump's CALLS (Insn.text names a call's target).
ARM64_CONDITIONAL = {"cbz", "cbnz", "tbz", "tbnz"}
# riscv64 compares registers in the branch itself; the ones against zero decide on the
# key's count of 0.
RISCV_ZERO_BRANCHES = {"beqz": True, "blez": True, "bgez": True,
                       "bnez": False, "bltz": False, "bgtz": False}
RISCV_CONDITIONAL = {"beq", "bne", "blt", "bge", "bltu", "bgeu", "bgt", "ble", "bgtu", "bleu",
                     *RISCV_ZERO_BRANCHES}
# riscv64 and loongarch64 also compare two registers; with both 0 (the count, or the zero
# register) the branch is decided too.
TWO_ZEROS_TAKEN = {"beq": True, "bne": False, "blt": False, "bge": True, "bltu": False,
                   "bgeu": True, "bgt": False, "ble": True, "bgtu": False, "bleu": True}
ZERO_REGISTERS = {"zero", "$zero", "x0", "$r0"}
RISCV_LOADS = {"lb", "lbu", "lh", "lhu", "lw", "lwu", "ld"}
RISCV_STORES = {"sb", "sh", "sw", "sd"}
# loongarch64 loads ("ld.w $a1, $a0, 8"): the base register is the second operand.
LOONGARCH_LOADS = {"ld.b", "ld.bu", "ld.h", "ld.hu", "ld.w", "ld.wu", "ld.d", "ldptr.w",
                   "ldptr.d"}


def is_jump(m: str) -> bool:
    return m in UNCONDITIONAL


def is_conditional(m: str) -> bool:
    return ((m.startswith("j") and m not in UNCONDITIONAL | INDIRECT_JUMPS | CALLS)
            or m.startswith("b.") or m in ARM64_CONDITIONAL or m in RISCV_CONDITIONAL
            or arm_condition(m) is not None)


def arm_condition(m: str) -> str | None:
    """The condition of a 32-bit arm conditional branch (`bne` -> "ne"), else None."""
    return m[1:] if m.startswith("b") and m[1:] in ARM64_CONDITIONS else None


def arm_conditional_return(m: str, ops: str) -> str | None:
    """The condition of a 32-bit arm conditional return (`bxle lr`, `popeq {..., pc}`)."""
    for prefix in ("bx", "pop", "ldm"):
        cond = m[len(prefix):]
        if m.startswith(prefix) and cond in ARM64_CONDITIONS and (
                ops.strip() == "lr" if prefix == "bx" else "pc}" in ops):
            return cond
    return None


def is_return(m: str, ops: str = "") -> bool:
    """x86's and arm64's ret; arm's `bx lr`, or a pop that loads pc."""
    return m.startswith("ret") or (m == "bx" and ops.strip() == "lr") or (
        m in ("pop", "ldm", "ldmfd", "ldmia") and "pc}" in ops)

def loads_data(insn: "Insn") -> bool:
    """Whether the instruction reads data from memory: a load, or an x86 instruction with a
    memory source. Not a store, an address computation (lea), a NOP's operand, or the stack
    reads of pop and ret."""
    m, ops = insn.mnemonic, operands(insn)
    if m in RISCV_LOADS or m in LOONGARCH_LOADS or m.startswith("ldx."):
        return True
    if m.startswith("ld"):                      # arm and arm64: ldr, ldrb, ldp, ldur, ...
        return any("[" in o for o in ops)
    if "%" not in insn.operands:                # not x86 (AT&T): riscv's stores, ...
        return False
    memory = [k for k, o in enumerate(ops) if "(" in o or re.match(r"%[fg]s:", o)]
    if not memory or m == "lea" or m.startswith("nop"):
        return False
    return not (m.startswith("mov") and memory == [len(ops) - 1])   # a store


LOOP_PREFIX = "tpbench_"


def kernel_functions(text: str) -> dict[str, Function]:
    """Functions of `objdump -d` of a vmlinux (runner.kernel.kernel_helpers_code). The code is
    linked, so a call or jump names its target in its operands, not in a relocation; that
    name is taken as the relocation, so that as_loaded() sees the kernel's code as it sees
    a module's."""
    funcs = parse_objdump(text)
    for f in funcs.values():
        f.section = "vmlinux"
        for insn in f.insns:
            target = re.search(r"<([\w.]+)>\s*$", insn.operands)
            if target and insn.reloc is None and (is_call(insn.mnemonic) or is_jump(insn.mnemonic)):
                # objdump may name a symbol by its alias for early boot code, __pi_<name>.
                insn.reloc = target.group(1).removeprefix("__pi_")
    return funcs


# Mainline's static_branch_unlikely! reads the key's count through this C helper of the
# kernel crate without CONFIG_JUMP_LABEL (the series reads it inline, its patch 7): a call on
# Rust's disabled path, by design.
MAINLINE_COUNT_HELPER = "rust_helper_static_key_count"


class WalkError(Exception):
    pass


FTRACE_LOADED = "ftrace's NOP once loaded"
FTRACE_NOTE = f"# call __fentry__ in the file: {FTRACE_LOADED}"


# riscv64 with compressed instructions leaves ftrace four 2-byte c.nop at a function's entry;
# ftrace_make_nop() writes two 4-byte nop there when the module loads. 7.x's call ops put
# four more before the function (-fpatchable-function-entry=8,4), so its entry in
# __patchable_function_entries is 8 bytes before the symbol.
RISCV_FTRACE_NOPS = (4, 2)
RISCV_CALL_OPS_PREFIX = 8
# arm's mcount call, `push {lr}; bl __gnu_mcount_nc`: ftrace writes `add sp, sp, #4` over the
# bl when the module loads, which drops the pushed lr (arch/arm/kernel/ftrace.c, NOP).
ARM_MCOUNT = "__gnu_mcount_nc"


# loongarch64 loads modules far from the kernel (the kernel runs in a direct-mapped window,
# modules in the vmalloc range), beyond the +-128M of `bl`: the module loader sends each such
# call through a PLT entry it writes, four instructions that build the target's address in
# $t1 and jump there (arch/loongarch/kernel/module.c, apply_r_larch_b26(); asm/module.h,
# emit_plt_entry()).
LOONGARCH_PLT = "@plt"


def loongarch_plt(target: str) -> Function:
    """The PLT entry the loader writes for a call to the kernel's `target`."""
    parts = [("lu12i.w", f"$t1, %abs_hi20({target})"),
             ("lu32i.d", f"$t1, %abs64_lo20({target})"),
             ("lu52i.d", f"$t1, $t1, %abs64_hi12({target})"),
             ("jr", f"$t1 # jirl $zero, $t1, %abs_lo12({target})")]
    return Function(target + LOONGARCH_PLT, 0,
                    [Insn(4 * k, bytes(4), m, ops) for k, (m, ops) in enumerate(parts)],
                    section="module PLT")


def far_call(funcs: dict[str, Function], call: Insn) -> bool:
    """A loongarch64 `bl` from the module to a function of the kernel."""
    return (call.reloc_type == "R_LARCH_B26" and call.reloc in funcs
            and funcs[call.reloc].section == "vmlinux")


def as_loaded(funcs: dict[str, Function], return_thunk: bool,
              ftrace_entries: set[tuple[str, int]] = frozenset()) -> None:
    """The code as the kernel runs it once it loaded the module (kelf.rewrites): on x86_64
    each `call __fentry__` is ftrace's NOP, and, when the kernel uses no return thunk, each
    `jmp __x86_return_thunk` is `ret`; on riscv64 the four c.nop of each entry in
    `ftrace_entries` are two nop; on arm each `bl __gnu_mcount_nc` is `add sp, sp, #4`; on
    loongarch64 a call into the kernel goes through its PLT entry (<name>@plt). The
    operands say what the file holds."""
    ftrace_entries = set(ftrace_entries)
    far = {i.reloc for f in funcs.values() for i in f.insns
           if is_call(i.mnemonic) and far_call(funcs, i)}
    for name in far:
        funcs[name + LOONGARCH_PLT] = loongarch_plt(name)
    for f in funcs.values():
        entry = {(f.section, f.start), (f.section, f.start - RISCV_CALL_OPS_PREFIX)}
        if entry & ftrace_entries and [
                (i.mnemonic, len(i.raw)) for i in f.insns[:RISCV_FTRACE_NOPS[0]]] == [
                ("nop", 2)] * RISCV_FTRACE_NOPS[0]:
            first = f.insns[0]
            f.insns[:RISCV_FTRACE_NOPS[0]] = [
                Insn(first.addr + 4 * k, bytes.fromhex("13000000"), "nop", FTRACE_NOTE)
                for k in range(RISCV_FTRACE_NOPS[1])]
        for insn in f.insns:
            if insn.reloc == "__fentry__" and is_call(insn.mnemonic):
                insn.mnemonic, insn.reloc = "nop", None
                insn.operands = FTRACE_NOTE
            elif insn.reloc == ARM_MCOUNT and is_call(insn.mnemonic):
                insn.mnemonic, insn.reloc = "add", None
                insn.operands = f"sp, sp, #4 # bl __gnu_mcount_nc in the file: {FTRACE_LOADED}"
            elif insn.reloc == "__x86_return_thunk" and is_jump(insn.mnemonic) and not return_thunk:
                insn.mnemonic, insn.reloc = "ret", None
                insn.operands = "# jmp __x86_return_thunk in the file: apply_returns() writes ret"


def is_key_symbol(name: str | None) -> bool:
    """A relocation that names a tracepoint's key: the tracepoint (the key is one of its
    fields), or the __tracepoints section where the module defines its own."""
    return bool(name) and (name.startswith("__tracepoint_") or name == "__tracepoints"
                           or "static_key" in name)


def reg(name: str) -> str:
    """One name for every width of a register: %eax/%rax/%ax -> ax, %r8d -> r8, w8/x8 -> 8."""
    r = name.strip().lstrip("%").lower()
    if re.fullmatch(r"[wx]\d+", r):
        return r[1:]
    m = re.fullmatch(r"r(\d+)[dwb]?", r)
    if m:
        return "r" + m.group(1)
    m = re.fullmatch(r"[re]?([abcd]x|si|di|bp|sp)", r)
    return m.group(1) if m else r


def operands(insn: Insn) -> list[str]:
    """The operands split at top-level commas, without objdump's trailing comment."""
    text = strip_comment(insn.operands)
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def base_register(op: str) -> str | None:
    """The base register of an arm64 ("[x1, #8]"), arm ("[r3, #4]") or riscv64 ("8(s0)")
    memory operand."""
    m = re.search(r"\[(\w+)", op) or re.fullmatch(r"-?\w*\((\w+)\)", op.strip())
    return reg(m.group(1)) if m else None


def immediate(op: str) -> int | None:
    m = re.fullmatch(r"[$#](-?(?:0x[0-9a-f]+|\d+))", op.strip())
    return int(m.group(1), 0) if m else None


# Whether a conditional branch is taken, from the flags of (count - imm) with count 0 (the
# key is off); x86 condition codes by suffix, arm64 by their names. "c" is a borrow, as
# x86's CF; arm64's C flag is its inverse, which its table below accounts for.
def _flags_of_zero_minus(imm: int) -> dict[str, bool]:
    return {"z": imm == 0, "s": imm > 0, "c": imm != 0, "o": False}


X86_CONDITIONS = {
    "e": lambda f: f["z"], "z": lambda f: f["z"], "ne": lambda f: not f["z"],
    "nz": lambda f: not f["z"], "g": lambda f: not f["z"] and f["s"] == f["o"],
    "nle": lambda f: not f["z"] and f["s"] == f["o"], "ge": lambda f: f["s"] == f["o"],
    "nl": lambda f: f["s"] == f["o"], "l": lambda f: f["s"] != f["o"],
    "nge": lambda f: f["s"] != f["o"], "le": lambda f: f["z"] or f["s"] != f["o"],
    "ng": lambda f: f["z"] or f["s"] != f["o"], "a": lambda f: not f["c"] and not f["z"],
    "nbe": lambda f: not f["c"] and not f["z"], "ae": lambda f: not f["c"],
    "nb": lambda f: not f["c"], "nc": lambda f: not f["c"], "b": lambda f: f["c"],
    "nae": lambda f: f["c"], "c": lambda f: f["c"], "be": lambda f: f["c"] or f["z"],
    "na": lambda f: f["c"] or f["z"], "s": lambda f: f["s"], "ns": lambda f: not f["s"],
}
# arm64's carry is "no borrow": the inverse of x86's for a subtraction.
ARM64_CONDITIONS = {
    "eq": lambda f: f["z"], "ne": lambda f: not f["z"], "ge": lambda f: f["s"] == f["o"],
    "lt": lambda f: f["s"] != f["o"], "gt": lambda f: not f["z"] and f["s"] == f["o"],
    "le": lambda f: f["z"] or f["s"] != f["o"], "hi": lambda f: not f["c"] and not f["z"],
    "ls": lambda f: f["c"] or f["z"], "hs": lambda f: not f["c"], "cs": lambda f: not f["c"],
    "lo": lambda f: f["c"], "cc": lambda f: f["c"], "mi": lambda f: f["s"],
    "pl": lambda f: not f["s"],
}
FLAG_SETTERS = ("cmp", "test", "add", "sub", "inc", "dec", "and", "or", "xor", "neg",
                "cmn", "tst", "subs", "adds", "ands")


def keeps_value(m: str, ops: list[str]) -> bool:
    """A copy that keeps a count of 0 what it was: a move, or loongarch64's and riscv64's
    sign extension of a 32-bit value (`slli.w rd, rj, 0`, `addi.w rd, rj, 0`, `sext.w`)."""
    if m in ("move", "mv", "sext.w") and len(ops) == 2:
        return True
    return m in ("slli.w", "addi.w", "addiw") and len(ops) == 3 and ops[2] in ("0", "0x0")


def got_load(insn: Insn) -> bool:
    """loongarch64 modules take a symbol's address from the GOT: pcalau12i finds the entry's
    page and `ld.d` with R_LARCH_GOT_PC_LO12 loads the address itself."""
    return insn.reloc_type == "R_LARCH_GOT_PC_LO12" and is_key_symbol(insn.reloc)


# arm64's load-acquires: under LTO, arch/arm64/include/asm/rwonce.h turns READ_ONCE() into
# one (a compiler that sees across files could break a dependency's ordering), so the key's
# count is read with ldar (or ldapr with RCpc) in a clang LTO kernel.
ARM64_ACQUIRE_LOADS = {"ldar", "ldapr", "ldapur"}


class KeyState:
    """What the walk knows of the key while it is off: the registers holding the key's
    address or its count (0), and the flags of the last comparison of that count."""

    def __init__(self, f: Function):
        # Addresses of the key set up outside the loop (arm64: adrp/add with the key's reloc;
        # riscv64: auipc).
        self.base = {reg(operands(i)[0]) for i in f.insns if is_key_symbol(i.reloc)
                     and (i.mnemonic in ("adrp", "add", "auipc", "movw", "movt")
                          or "PCALA" in i.reloc_type or got_load(i)) and operands(i)}
        # arm: `ldr rN, [pc, #k]` from a literal word that holds the key's address.
        words = {i.addr: i for i in f.insns if i.mnemonic == ".word"}
        self.base |= {reg(operands(i)[0]) for i in f.insns
                      if literal_load(i) and i.target in words
                      and is_key_symbol(words[i.target].reloc)}
        self.count: set[str] = set()
        self.flags: dict[str, bool] | None = None

    def step(self, insn: Insn) -> None:
        m, ops = insn.mnemonic, operands(insn)
        if is_call(m):
            # A call clobbers the flags; a call to a reader of the key's count (such as
            # rust_helper_static_key_count) returns the count: 0.
            self.flags = None
            if insn.reloc and "key_count" in insn.reloc:
                self.count |= {"ax", "0", "a0", "$a0", "r0"}
            return
        if got_load(insn):
            return       # the key's address, which __init__ counted as a base
        reads_key = is_key_symbol(insn.reloc) or any(
            base_register(o) in self.base for o in ops) or (
            m in LOONGARCH_LOADS and len(ops) > 1 and reg(ops[1]) in self.base)
        if (m.startswith(("mov", "ldr")) or m in ARM64_ACQUIRE_LOADS
                or m in RISCV_LOADS | LOONGARCH_LOADS) and reads_key and ops:
            dest = ops[-1] if m.startswith("mov") else ops[0]
            self.count.add(reg(dest))
            return
        if m.startswith(("test", "tst")) and len(ops) == 2 and all(
                reg(o) in self.count for o in ops):
            self.flags = {"z": True, "s": False, "c": False, "o": False}
            return
        if m.startswith("cmp") and len(ops) == 2:
            # x86 (AT&T): cmp $imm, src; arm64: cmp src, #imm. A memory operand with the
            # key's relocation is the count itself.
            imm, src = (immediate(ops[0]), ops[1]) if immediate(ops[0]) is not None else \
                (immediate(ops[1]), ops[0])
            if imm is not None and (reg(src) in self.count or is_key_symbol(insn.reloc)):
                self.flags = _flags_of_zero_minus(imm)
                return
        if keeps_value(m, ops) and reg(ops[1]) in self.count:
            self.count.add(reg(ops[0]))
            return
        if m.startswith(FLAG_SETTERS):
            self.flags = None
        if ops and not m.startswith(("cmp", "test", "tst", "st", "push", "j", "b")) \
                and m not in RISCV_STORES:
            self.count.discard(reg(ops[-1] if "%" in insn.operands else ops[0]))

    def decide(self, insn: Insn) -> bool | None:
        """Whether this conditional branch is taken with the key off; None if unknown."""
        m, ops = insn.mnemonic, operands(insn)
        if m in ("cbz", "cbnz") and ops and reg(ops[0]) in self.count:
            return m == "cbz"
        if m in RISCV_ZERO_BRANCHES and ops and reg(ops[0]) in self.count:
            return RISCV_ZERO_BRANCHES[m]
        if m in TWO_ZEROS_TAKEN and len(ops) == 3 and any(reg(o) in self.count for o in ops[:2]) \
                and all(reg(o) in self.count | ZERO_REGISTERS for o in ops[:2]):
            return TWO_ZEROS_TAKEN[m]
        if self.flags is None:
            return None
        if m.startswith("b."):
            test = ARM64_CONDITIONS.get(m[2:])
        elif cond := arm_condition(m):
            test = ARM64_CONDITIONS[cond]
        elif m.startswith("j"):
            test = X86_CONDITIONS.get(m[1:])
        else:
            test = None
        return test(self.flags) if test else None


def leaves(f: Function, addr: int, head: int) -> bool:
    """True when straight-line code from `addr` (following unconditional jumps) returns
    without coming back to the loop head: that successor of a branch ends the loop."""
    seen = set()
    while addr not in seen and len(seen) < 64:
        seen.add(addr)
        if addr == head:
            return False
        try:
            insn = f.insns[f.at(addr)]
        except KeyError:
            return True              # out of the function: a tail call
        if is_return(insn.mnemonic, insn.operands):
            return True
        if is_conditional(insn.mnemonic) or is_call(insn.mnemonic):
            return False
        addr = insn.target if is_jump(insn.mnemonic) and insn.target is not None else insn.end
    return False


def is_site(f: Function, insn: Insn, sites: set) -> bool:
    return (f.section, insn.addr) in sites


def disabled_path(funcs: dict[str, Function], loop: str, sites: set) -> list[tuple[str, Insn]]:
    """The instructions one iteration of `loop` executes with its tracepoint off.

    The walk starts at the loop head (the target of the loop's backward branch) and
    ends when it returns there. Each branch is decided from what "off" means: a site
    (`sites`: (section, offset) pairs from __jump_table) is a NOP and falls through; a
    comparison of the key's count takes the side of a count of 0; any other conditional
    branch is the loop's own and takes the successor that stays in the loop (N is
    large). A branch it cannot decide, or an indirect jump, stops the walk with the
    reason. Calls are followed into functions of the same object.

    The head is the lowest target of a backward branch; where the walk from there cannot
    be made, the next one up. clang rotates loops and may put the enabled path's tail (a
    preempt_enable()) above the loop's own head, reached backward from the enabled path
    alone.
    """
    f = funcs[loop]
    back = [i for i in f.insns if (is_jump(i.mnemonic) or is_conditional(i.mnemonic))
            and i.target is not None and i.target < i.addr]
    if not back:
        raise WalkError(f"{loop}: no backward branch, no loop")
    first = None
    for head in sorted({i.target for i in back}):
        try:
            return walk_from(funcs, loop, head, sites)
        except WalkError as e:
            first = first or e
    raise first


def walk_from(funcs: dict[str, Function], loop: str, head: int,
              sites: set) -> list[tuple[str, Insn]]:
    """One iteration of the loop `loop` from `head` back to it (see disabled_path); the path
    names the loop as asked, an alias of merged code included."""
    f = funcs[loop]
    key = KeyState(f)
    path: list[tuple[str, Insn]] = []
    pc = head
    for _ in range(1000):
        insn = f.insns[f.at(pc)]
        path.append((loop, insn))
        pc = next_pc(f, insn, sites, key, head)
        if is_call(insn.mnemonic):
            path += callee_path(funcs, insn, sites)
        if pc == head:
            return path
    raise WalkError(f"{loop}: the walk did not come back to the loop head")


def next_pc(f: Function, insn: Insn, sites: set, key: KeyState, head: int | None) -> int:
    """Where the disabled path goes after `insn` (see disabled_path)."""
    m = insn.mnemonic
    if is_site(f, insn, sites):
        return insn.end
    if is_return(m, insn.operands):
        raise WalkError(f"{f.name}: returned inside the loop at {insn.addr:#x}")
    if m in INDIRECT_JUMPS or (is_jump(m) and insn.target is None):
        raise WalkError(f"{f.name}: an indirect jump at {insn.addr:#x} cannot be followed")
    key.step(insn)
    if is_call(m):
        return insn.end
    if is_jump(m):
        return insn.target
    if not is_conditional(m):
        return insn.end
    taken = key.decide(insn)
    if taken is None and head is not None:
        stays = [insn.target if not leaves(f, insn.target, head) else None,
                 insn.end if not leaves(f, insn.end, head) else None]
        if insn.target == head:
            taken = True
        elif stays[0] is not None and stays[1] is None:
            taken = True
        elif stays[1] is not None and stays[0] is None:
            taken = False
    if taken is None:
        raise WalkError(f"{f.name}: cannot decide the branch at {insn.addr:#x} ({insn.text}): "
                        "not a site, not a test of the key, not the loop's own")
    return insn.target if taken else insn.end


COMPARES = {"cmp", "cmpq", "cmn", "test", "testq", "tst"}
# Adding a constant to the loop's counter: x86 "add $0x2,%rax", arm64 and arm
# "add x1, x1, #0x2", riscv64 "addi a5,a5,2", loongarch64 "addi.d $a1, $a1, 2" (or sub).
STEPS = {"add", "addq", "sub", "subq", "addi", "addiw", "addi.d", "addi.w"}
_NUMBER = re.compile(r"[$#]?-?(0x[0-9a-f]+|\d+)")
_REGISTER = re.compile(r"[%$]?[a-z]\w*")


def _numbers(ops: list[str]) -> list[int]:
    return [int(o.lstrip("$#"), 0) for o in ops if _NUMBER.fullmatch(o)]


def _registers(ops: list[str]) -> list[str]:
    return [reg(o) for o in ops if _REGISTER.fullmatch(o)]


def iterations_per_trip(path: list[tuple[str, "Insn"]]) -> int:
    """How many of the source loop's iterations one trip around the loop runs: k when the
    compiler unrolled the loop k times, seen as the step of the counter that the closing
    branch tests (every bench loop counts by one); 1 when nothing says otherwise."""
    loop = path[0][0]
    own = [i for f, i in path if f == loop]
    # riscv64 and loongarch64 compare in the branch; the others in the last compare.
    tested = set(_registers(operands(own[-1])))
    if not tested:
        compares = [i for i in own if i.mnemonic in COMPARES]
        tested = set(_registers(operands(compares[-1]))) if compares else set()
    steps = []
    for insn in own:
        ops = operands(insn)
        regs, numbers = _registers(ops), _numbers(ops)
        if (insn.mnemonic in STEPS and len(numbers) == 1 and regs
                and set(regs) == {regs[0]} and regs[0] in tested):
            steps.append(abs(numbers[0]))
        elif insn.mnemonic.rstrip("q") in ("inc", "dec") and set(regs) & tested:
            steps.append(1)
    return steps[0] if len(steps) == 1 and steps[0] > 0 else 1


# An unrolled loop runs its remainder apart (peeled, or a trip cut short) when N is not a
# multiple of the unroll factor, so the slope fitted over N lies near the count, not on it.
UNROLLED_TOLERANCE = 0.05


def per_iteration(path: list[tuple[str, "Insn"]]) -> float:
    """Instructions per iteration of the source loop: per trip, over the unroll factor."""
    return len(path) / iterations_per_trip(path)


def trip_words(path: list[tuple[str, "Insn"]]) -> str:
    k = iterations_per_trip(path)
    return (f"{len(path)} instructions per trip, unrolled {k} times: {per_iteration(path):g} "
            "per iteration") if k > 1 else f"{len(path)} instructions per iteration"


def site_offsets(sites_map: dict[str, list["Site"]]) -> set[tuple[str, int]]:
    return {(s.section, s.offset) for ss in sites_map.values() for s in ss}


def walk_all(funcs, sites: set, variants) -> dict[str, list[tuple[str, Insn]] | str]:
    """The disabled path of each variant's loop, or why it could not be walked."""
    walks = {}
    for v in variants:
        try:
            walks[v] = disabled_path(funcs, LOOP_PREFIX + v, sites)
        except (WalkError, KeyError) as e:
            walks[v] = str(e)
    return walks


def callee(funcs: dict[str, Function], call: Insn) -> str | None:
    """The function of this object a direct call reaches, or None (the kernel's, or an
    indirect call). A call within one section has no relocation: objdump names the target
    itself, in the operands (x86: "5e5 <name>") or in its comment (loongarch64: "-132 # 210
    <name>"). A relocation names a function, its section (".text.<name>": clang's function
    sections), or a place in a section (".text+0x182c": a static function, as mainline's
    out-of-line trace_<event>(); x86's PC-relative ones point 4 bytes before it)."""
    local = re.search(r"<([\w.]+)>\s*$", call.operands)
    name = call.reloc or (local.group(1) if local else None)
    for candidate in (name, (name or "").removeprefix(".text.")):
        if candidate in funcs:
            return candidate
    if call.reloc and call.reloc.startswith("."):
        return next((f.name for f in funcs.values() if f.section == call.reloc
                     and f.start in (call.reloc_addend, call.reloc_addend + 4)), None)
    return None


def callee_path(funcs, call: Insn, sites: set) -> list[tuple[str, Insn]]:
    """A called function of the same object, from entry to return, with the key off."""
    name = callee(funcs, call)
    if name is None:
        return []    # outside this object (the kernel): the call itself is on the path
    f = funcs[name]
    key = KeyState(f)
    plt = funcs.get(name + LOONGARCH_PLT) if far_call(funcs, call) else None
    path = [(plt.name, i) for i in plt.insns] if plt else []
    pc = f.insns[0].addr
    for _ in range(1000):
        insn = f.insns[f.at(pc)]
        path.append((name, insn))
        if is_return(insn.mnemonic, insn.operands):
            return path
        cond = arm_conditional_return(insn.mnemonic, insn.operands)
        if cond:
            # 32-bit arm returns early on the key's test (`bxle lr`).
            if key.flags is None:
                raise WalkError(f"{name}: cannot decide the return at {insn.addr:#x}")
            if ARM64_CONDITIONS[cond](key.flags):
                return path
            pc = insn.end
            continue
        if is_call(insn.mnemonic) and not is_site(f, insn, sites):
            raise WalkError(f"{name}: nested call on the disabled path")
        pc = next_pc(f, insn, sites, key, None)
    raise WalkError(f"{name}: no return")


def name_tracepoint_anchors(funcs: dict[str, Function], places: set[tuple[str, int]]) -> None:
    """Relocations against a label in __tracepoints name the section, as a key's do."""
    for f in funcs.values():
        for insn in f.insns:
            if (f.section, insn.addr) in places:
                insn.reloc = "__tracepoints"


def add_aliases(funcs: dict[str, Function], aliases: dict[str, list[str]]) -> None:
    """objdump labels one of several names at an address; make every name find the code."""
    for name, names in aliases.items():
        if name not in funcs:
            known = next((n for n in names if n in funcs), None)
            if known:
                funcs[name] = funcs[known]


@dataclass
class Site:
    function: str
    offset: int
    kind: str       # nop2 / nop5 / jmp2 / ...
    raw: str
    section: str = ".text"


def sites_by_function(ko: Path) -> dict[str, list[Site]]:
    out: dict[str, list[Site]] = {}
    for e in read_jump_table(ko):
        if e.function:
            out.setdefault(e.function, []).append(
                Site(e.function, e.code_offset, e.site_kind,
                     e.site_bytes[:e.site_size].hex(" "),
                     e.code_section))
    return out


def check_codegen(funcs: dict[str, Function], sites: dict[str, list[Site]],
                  measured: dict[str, float] | None, variants, jump_label: bool,
                  count_helper: str | None = None) -> list[str]:
    """Every check of the codegen comparison; returns the failures (empty when all pass).

    With CONFIG_JUMP_LABEL the trace loops have one NOP site each; without it, none.
    `count_helper`: the kernel function Rust's site calls to read the key's count (mainline
    without CONFIG_JUMP_LABEL), the one call its disabled path makes.
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
        if variant == "rust_trace" and count_helper:
            if [i.reloc for i in calls] != [count_helper]:
                failures.append(f"{fn}: the disabled path calls "
                                f"{[i.reloc or i.text for i in calls]}, not {count_helper} alone")
        elif variant in ("c_trace", "rust_trace") and calls:
            failures.append(f"{fn}: the disabled path calls {calls[0].reloc or calls[0].text}")
        if variant == "rust_helper" and not calls:
            failures.append(f"{fn}: the helper variant's loop has no call")
        if variant == LAZY_SITE and not isinstance(walks.get(LAZY_BARE[0]), str):
            extra = lazy_loads(walks)
            if extra is not None and extra[0] > extra[1]:
                failures.append(f"{fn}: {extra[0]:g} loads on the disabled path beyond its "
                                f"baseline's, where the bare site has {extra[1]:g}: an argument "
                                "is read while the event is off")
        # Measured slopes are exact under icount, up to floating-point rounding in the fit.
        tolerance = 1e-6 if iterations_per_trip(path) == 1 else UNROLLED_TOLERANCE
        if (measured is not None and variant in measured
                and abs(per_iteration(path) - measured[variant]) > tolerance):
            failures.append(f"{fn}: {trip_words(path)} in the disassembly, "
                            f"{measured[variant]:g} measured")
    return failures


# The site written `if <event>_enabled() { <event>(args) }`, its baseline, and the bare site
# with its baseline: the lazy site may load no more beyond its baseline than the bare one does.
LAZY_SITE, LAZY_BASE = "rust_txn_lazy", "rust_txn_base"
LAZY_BARE = ("rust_trace", "rust_base")


def lazy_loads(walks: dict) -> tuple[float, float] | None:
    """Loads per iteration beyond the baseline: the lazy site's, then the bare site's (the key
    count without jump labels); None if a path is missing."""
    paths = [walks.get(v) for v in (LAZY_SITE, LAZY_BASE, *LAZY_BARE)]
    if any(p is None or isinstance(p, str) for p in paths):
        return None
    loads = [sum(loads_data(i) and not literal_load(i) for _, i in p) / iterations_per_trip(p)
             for p in paths]
    return loads[0] - loads[1], loads[2] - loads[3]


def literal_load(insn: Insn) -> bool:
    """arm's `ldr rN, [pc, #k]`: a word of the function's own literal pool, an address the
    linker wrote (arm64 builds it with adrp/add). Where a call in the loop clobbers the
    register that held it, the compiler reloads it each trip; it reads no argument."""
    return insn.mnemonic == "ldr" and "[pc" in insn.operands


def checks_made(measured: dict[str, float] | None, variants, jump_label: bool,
                why_unmeasured: str, count_helper: str | None = None) -> tuple[list[str], list[str]]:
    """What check_codegen checks for these inputs, and what it skips and why: the report
    names exactly these, never a check that did not run."""
    ran, skipped = [], []
    traces = [v for v in ("c_trace", "rust_trace") if v in variants]
    absent = [v for v in ("c_trace", "rust_trace", "rust_helper") if v not in variants]
    if traces:
        ran.append(("one NOP site with one __jump_table entry" if jump_label else
                    "no __jump_table entry (CONFIG_JUMP_LABEL=n)") + " in " + " and ".join(traces))
        if count_helper and "rust_trace" in traces:
            ran.append(f"one call, to the kernel's {count_helper}() (mainline without "
                       "CONFIG_JUMP_LABEL), on the disabled path of rust_trace, followed into "
                       "vmlinux")
            traces = [v for v in traces if v != "rust_trace"]
        if traces:
            ran.append("no call on the disabled path of " + " and ".join(traces))
    if "rust_helper" in variants:
        ran.append("a call on rust_helper's disabled path")
    if all(v in variants for v in (LAZY_SITE, LAZY_BASE, *LAZY_BARE)):
        ran.append(f"no argument load on {LAZY_SITE}'s disabled path (no more loads beyond "
                   f"{LAZY_BASE} than {LAZY_BARE[0]} has beyond {LAZY_BARE[1]})")
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


def function_listing(funcs, fn: str, sites: set, path_addrs: set[tuple[str, int]]) -> list[str]:
    out = [f"<{fn}>:"]
    for insn in funcs[fn].insns:
        mark = "*" if (fn, insn.addr) in path_addrs else " "
        site = "  SITE" if is_site(funcs[fn], insn, sites) else ""
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
        callees = dict.fromkeys(f for f, _ in path if f != fn)    # in the order called
        for callee in callees:
            body += [""] + function_listing(funcs, callee, sites, addrs)
        blocks[v] = body + [f"disabled path: {trip_words(path)}"]
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


def path_summary(funcs, sites_map: dict[str, list[Site]], variants) -> list[tuple[str, str, str]]:
    """(variant, instructions per iteration, the instructions) of each disabled path; a
    branch the path takes is marked "(taken)", an instruction that reads data "(load)", or
    "(literal load)" when it reads an address from arm's literal pool (literal_load)."""
    sites = site_offsets(sites_map)
    out = []
    for v, path in walk_all(funcs, sites, variants).items():
        if isinstance(path, str):
            continue
        words = []
        for k, (fn, i) in enumerate(path):
            nxt_fn, nxt = path[(k + 1) % len(path)]
            branch = is_jump(i.mnemonic) or is_conditional(i.mnemonic)
            site = is_site(funcs[fn], i, sites)
            taken = branch and not site and (nxt_fn, nxt.addr) != (fn, i.end)
            words.append(f"{i.mnemonic}{' (NOP site)' if site else ''}"
                         + (" (ftrace)" if FTRACE_LOADED in i.operands else "")
                         + (" (literal load)" if literal_load(i)
                            else " (load)" if loads_data(i) else "")
                         + (f" {callee(funcs, i) or i.reloc}" if is_call(i.mnemonic) and i.reloc
                            else "")
                         + (" (taken)" if taken else ""))
        k = iterations_per_trip(path)
        count = (f"{per_iteration(path):g} ({len(path)} per trip, unrolled {k} times)" if k > 1
                 else str(len(path)))
        out.append((v, count, "; ".join(words)))
    return out
