"""Decodes __jump_table entries of a relocatable object (.o or .ko): x86_64, arm64, riscv64,
arm, loongarch64.

An entry is three fields, `code`, `target` and `key`, each resolved through a
relocation in a relocatable file: PC-relative (s32, s32, s64) everywhere but
on 32-bit arm, whose entries are three absolute words with the addends in the
section itself (REL). The key's addend carries the field offset inside the
key's containing object plus two flag bits: 1 for "branch defaults to on", 2
for objtool's "NOP this jmp".
"""

from dataclasses import dataclass

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from common.arches import MACHINES

ENTRY_SIZE = 16          # s32 code, s32 target, s64 key (on each of them)
ABSOLUTE_ENTRY_SIZE = 12  # arm: u32 code, u32 target, u32 key
NOPS = {bytes.fromhex("6690"): "nop2", bytes.fromhex("0f1f440000"): "nop5",
        bytes.fromhex("1f2003d5"): "nop4",           # arm64 `nop`, little-endian
        bytes.fromhex("13000000"): "nop4",           # riscv `nop` (addi x0, x0, 0)
        bytes.fromhex("00f020e3"): "nop4",           # arm (A32) `nop`, little-endian
        # arm `mov r0, r0`: the assembler's `nop` before ARMv6K. 7.3 builds Rust for
        # arm-unknown-linux-gnueabi (ARMv6), so mainline's Rust sites on arm hold this one.
        bytes.fromhex("0000a0e1"): "nop4",
        bytes.fromhex("00004003"): "nop4"}           # loongarch `nop` (andi $zero, $zero, 0)
JMPS = {0xEB: 2, 0xE9: 5}
# riscv writes "a - ." as a pair at one offset: R_RISCV_ADD32/64 (a) and R_RISCV_SUB32/64 (.);
# the site is the ADD's symbol + addend, as it is the PC32's on x86_64. Older LoongArch
# assemblers do the same with R_LARCH_ADD32/64 and R_LARCH_SUB32/64.
SUB_RELOCATIONS = {"riscv64": {39, 40}, "loongarch64": {55, 56}}


@dataclass(frozen=True)
class JumpEntry:
    code_section: str
    code_offset: int         # site, as an offset in code_section
    target_offset: int
    key_symbol: str
    key_addend: int
    function: str | None     # the function whose body holds the site
    function_offset: int | None
    site_bytes: bytes        # the first five bytes at the site
    machine: str = "x86_64"

    @property
    def branch_default(self) -> bool:
        return bool(self.key_addend & 1)

    @property
    def objtool_nop(self) -> bool:
        return bool(self.key_addend & 2)

    @property
    def site_size(self) -> int:
        """The site's length in bytes: a NOP's own, 4 for any instruction of arm64 or
        riscv64, an x86 jmp's, or 5 (call and anything else on x86)."""
        kind = self.site_kind
        if self.machine != "x86_64" or kind == "nop4":
            return 4
        return {"nop2": 2, "jmp2": 2}.get(kind, 5)

    @property
    def site_kind(self) -> str:
        """'nop2', 'nop5', 'nop4' (arm64), 'jmp2', 'jmp5', 'b' / 'bl' (arm64), 'call' or
        'other': what the site holds now."""
        for nop, name in NOPS.items():
            if self.site_bytes.startswith(nop):
                return name
        word = int.from_bytes(self.site_bytes[:4], "little")
        if self.machine == "arm64":
            return {0b000101: "b", 0b100101: "bl"}.get(word >> 26, "other")
        if self.machine == "riscv64":
            return "j" if word & 0x7F == 0x6F else "other"
        if self.machine == "arm":
            return {0xEA: "b", 0xEB: "bl"}.get(word >> 24, "other")
        if self.machine == "loongarch64":
            return {0b010100: "b", 0b010101: "bl"}.get(word >> 26, "other")
        first = self.site_bytes[:1]
        if first and first[0] in JMPS:
            return f"jmp{JMPS[first[0]]}"
        if first == b"\xe8":
            return "call"
        return "other"


def functions_by_section(elf):
    funcs = {}
    symtab = elf.get_section_by_name(".symtab")
    for sym in symtab.iter_symbols():
        if sym["st_info"]["type"] == "STT_FUNC" and isinstance(sym["st_shndx"], int):
            funcs.setdefault(sym["st_shndx"], []).append(
                (sym["st_value"], sym["st_size"], sym.name))
    return funcs


def read_jump_table(path) -> list[JumpEntry]:
    """Every __jump_table entry of a relocatable ELF file of a machine in MACHINES."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        machine = MACHINES.get(elf["e_machine"])
        if machine is None or elf["e_type"] != "ET_REL":
            raise ValueError(f"{path}: not a relocatable object of "
                             f"{', '.join(MACHINES.values())}")
        table = elf.get_section_by_name("__jump_table")
        if table is None:
            return []
        rela = next((s for s in elf.iter_sections()
                     if isinstance(s, RelocationSection)
                     and s["sh_info"] == elf.get_section_index("__jump_table")), None)
        if rela is None:
            raise ValueError(f"{path}: __jump_table has no relocations")
        symtab = elf.get_section(rela["sh_link"])
        words = table.data()
        by_offset = {}
        for r in rela.iter_relocations():
            if r["r_info_type"] in SUB_RELOCATIONS.get(machine, ()):
                continue
            sym = symtab.get_symbol(r["r_info_sym"])
            off = r["r_offset"]
            addend = r["r_addend"] if r.is_RELA() else int.from_bytes(words[off:off + 4], "little")
            by_offset[off] = (sym, addend)
        funcs = functions_by_section(elf)
        entries = []
        size = ABSOLUTE_ENTRY_SIZE if machine == "arm" else ENTRY_SIZE
        for base in range(0, table["sh_size"], size):
            code_sym, code_add = by_offset[base]
            target_sym, target_add = by_offset[base + 4]
            key_sym, key_add = by_offset[base + 8]
            shndx = code_sym["st_shndx"]
            section = elf.get_section(shndx)
            # PC32 "1b - ." relocations (or arm's absolute ones): the site is symbol + addend.
            site = code_sym["st_value"] + code_add
            target = target_sym["st_value"] + target_add
            data = section.data()
            function = function_offset = None
            for start, size, name in funcs.get(shndx, []):
                if start <= site < start + size:
                    function, function_offset = name, site - start
                    break
            key_name = key_sym.name or elf.get_section(key_sym["st_shndx"]).name
            entries.append(JumpEntry(section.name, site, target, key_name, key_add,
                                     function, function_offset, bytes(data[site:site + 5]),
                                     machine))
        return entries


def site_problems(entries, function_part: str, key_symbol: str) -> list[str]:
    """Why the static branch of `key_symbol` in the function whose name contains
    `function_part` is not a single patched-out NOP; [] when it is."""
    mine = [e for e in entries
            if e.function and function_part in e.function and e.key_symbol == key_symbol]
    if len(mine) != 1:
        return [f"expected exactly one __jump_table entry for {key_symbol} in a function "
                f"matching {function_part!r}, found {len(mine)}"]
    entry = mine[0]
    problems = []
    if entry.site_kind not in NOPS.values():
        problems.append(f"site {entry.function}+{entry.function_offset:#x} holds "
                        f"{entry.site_kind} ({entry.site_bytes.hex(' ')}), not a NOP")
    if entry.branch_default:
        problems.append("the entry's branch bit is set: the key would default to on")
    return problems


def function_aliases(path) -> dict[str, list[str]]:
    """Function names that share their address with another (identical code merged by the
    compiler): name -> every name at that address, sorted."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        by_place = {}
        for shndx, entries in functions_by_section(elf).items():
            for start, _, name in entries:
                by_place.setdefault((shndx, start), []).append(name)
    return {n: sorted(names) for names in by_place.values() if len(names) > 1 for n in names}


def tracepoint_anchor_relocations(path) -> set[tuple[str, int]]:
    """(section, offset) of each code relocation that names a local label in __tracepoints.

    GCC for LoongArch addresses a tracepoint its own object defines through a section
    anchor (`.LANCHOR0`), which its assembler keeps as a local symbol; objdump prints the
    label's name, which several objects of one module share, so only the symbol table says
    which labels are in __tracepoints."""
    found = set()
    with open(path, "rb") as f:
        elf = ELFFile(f)
        for rela in elf.iter_sections():
            if not isinstance(rela, RelocationSection) or not rela["sh_info"]:
                continue
            target = elf.get_section(rela["sh_info"])
            if not target.name.startswith(".text") and target.name != ".init.text":
                continue
            symtab = elf.get_section(rela["sh_link"])
            for r in rela.iter_relocations():
                sym = symtab.get_symbol(r["r_info_sym"])
                shndx = sym["st_shndx"]
                if (sym.name.startswith(".L") and isinstance(shndx, int)
                        and elf.get_section(shndx).name == "__tracepoints"):
                    found.add((target.name, r["r_offset"]))
    return found
