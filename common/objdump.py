"""`objdump -dr --insn-width=16` output read once, for the codegen walk and the native
stage alike: functions, their instructions and the relocations on them."""

import re
from dataclasses import dataclass, field

_FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
# x86 objdump shows the bytes ("66 90 "), arm64 and riscv64 the instruction as a number
# ("d503201f ", and "c509 " for a 16-bit compressed riscv instruction).
_INSN = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+|[0-9a-f]{8} |[0-9a-f]{4} )\s*\t(\S+)\s*(.*)$")
_RELOC = re.compile(r"^\s*([0-9a-f]+): (R_\w+)\t(\S+)$")
_TARGET = re.compile(r"(?:^|[ ,])([0-9a-f]+) <")
_SECTION = re.compile(r"^Disassembly of section (\S+):$")

# Calls of x86_64, arm64, riscv64, arm and loongarch64. loongarch64's objdump writes its
# returns `ret` and other register jumps `jr`: a `jirl` left is a call (pcaddu18i + jirl, as
# riscv's auipc + jalr).
CALLS = {"call", "callq", "bl", "blr", "jal", "jalr", "blx", "jirl"}


def is_call(m: str) -> bool:
    return m in CALLS


def strip_comment(ops: str) -> str:
    """Operands without objdump's comment: x86 "   # 4a5 <sym>", riscv64 " # 4a5 <sym>",
    arm64 "  // b.any", arm "	@ 0x4"; an arm64 immediate ("#0x1") is kept."""
    return re.sub(r"(\s+[#@]\s|\s*//).*$", "", ops).strip()


@dataclass
class Insn:
    addr: int
    raw: bytes
    mnemonic: str
    operands: str
    reloc: str | None = None     # symbol a relocation in this instruction names
    call_reloc: bool = False     # that relocation is riscv64's call to the symbol
    reloc_type: str = ""         # the relocation's type (R_LARCH_GOT_PC_LO12, ...)
    reloc_addend: int = 0        # its addend: where in a section (".text+0x1df0") it points

    @property
    def text(self) -> str:
        """The instruction, with a call's real target or the symbol a relocation names."""
        if self.reloc and is_call(self.mnemonic):
            return f"{self.mnemonic} {self.reloc}"
        ops = strip_comment(self.operands)
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
    section: str = ".text"

    def at(self, addr: int) -> int:
        for i, insn in enumerate(self.insns):
            if insn.addr == addr:
                return i
        raise KeyError(f"{self.name}: no instruction at {addr:#x}")


# x86 prefixes objdump prints as a word of their own before a jump or call they pad (other
# instructions, such as `cs nopw`, keep them).
X86_PREFIXES = {"cs", "ds"}


def parse_objdump(text: str) -> dict[str, Function]:
    """Functions of `objdump -dr --insn-width=16` output, relocations attached."""
    funcs: dict[str, Function] = {}
    current = None
    section = ".text"
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            section, current = m.group(1), None
            continue
        m = _FUNC.match(line)
        if m and m.group(2).startswith(".L"):
            continue     # riscv64 objdump labels the local labels inside a function
        if m:
            current = Function(m.group(2), int(m.group(1), 16), section=section)
            funcs[current.name] = current
            continue
        if current is None:
            continue
        m = _INSN.match(line)
        if m:
            hexes = m.group(2).strip()
            raw = bytes.fromhex(hexes.replace(" ", ""))
            if " " not in hexes:
                raw = raw[::-1]      # a number: memory order is little-endian
            mnemonic, ops = m.group(3), m.group(4).strip()
            if mnemonic in X86_PREFIXES and ops.split(" ")[0] in ("jmp", "call"):
                # clang's `cs jmp __x86_return_thunk` (a prefix pads the jump for the thunk's
                # rewrite): the instruction is the jump.
                mnemonic, _, ops = ops.partition(" ")
                ops = ops.strip()
            insn = Insn(int(m.group(1), 16), raw, mnemonic, ops)
            # riscv64 calls with auipc (which has the relocation) and jalr: the call is
            # the jalr, and its target the auipc's symbol.
            if insn.mnemonic in ("jalr", "jirl") and current.insns and current.insns[-1].call_reloc:
                insn.reloc = current.insns[-1].reloc
            current.insns.append(insn)
            continue
        m = _RELOC.match(line)
        if m and current.insns:
            addend = re.search(r"[-+]0x[0-9a-f]+$", m.group(3))
            sym = m.group(3)[:addend.start()] if addend else m.group(3)
            offset = int(m.group(1), 16)
            if m.group(2) == "R_ARM_ABS32" and offset >= current.insns[-1].end:
                # objdump prints zero literal words after the code as "..." and only
                # their relocations: a word that holds the symbol's address.
                current.insns.append(Insn(offset, bytes(4), ".word", "0x00000000"))
            current.insns[-1].reloc = sym
            current.insns[-1].reloc_type = m.group(2)
            current.insns[-1].reloc_addend = int(addend.group(0), 16) if addend else 0
            current.insns[-1].call_reloc = m.group(2).startswith(("R_RISCV_CALL",
                                                                 "R_LARCH_CALL36"))
    return funcs
