"""The native stage: a measured module's loop code, timed on the host CPU.

The disabled path of every variant touches nothing of the kernel but a key's
count (with CONFIG_JUMP_LABEL=y not even that), so its machine code runs
unchanged in an ordinary process. This module lays the `.text` of a
`tpbench-<arch>-<config>.ko` out for a fixed address below 2 GiB (the code is
`-mcmodel=kernel`: R_X86_64_32S relocations), applies its relocations and
the load-time rewrites the host's own kernel would apply for this CPU, and
hands the image to native/tpbench_native.c, which times the loops with TSC
reads. The NOPs at the tracepoint sites are those objtool left.

- the module's own functions resolve to their loaded addresses;
- every data symbol, and every section that is not .text, resolves to a
  zeroed area, so every static key reads disabled;
- every function outside .text resolves to a `ud2` trap of its own: a
  variant that reaches one stops the run, naming the variant and the symbol;
- the sites the kernel rewrites at load (kelf.rewrites: ftrace's entry calls,
  return thunks, retpolines, ...) get what the host's kernel writes there,
  as its /sys/devices/system/cpu/vulnerabilities files say it chose; a
  variant that reaches a site whose rewrite is not reproduced here is refused
  by name, with the reason, and never timed.

Loading is pure (bytes in, image out); running the harness is the only side
effect. Nothing here touches the host kernel.
"""

import gzip
import os
import platform
import re
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from common.arches import MACHINES
from kelf.jump_table import functions_by_section
from kelf.rewrites import (CFI_PREAMBLE, REWRITE_SECTIONS, THUNKS, indirect_branches,
                           return_thunk)
from common import messages, objdump, rundir
from runner import bench, proc, thunks
from runner import config as cfg

HARNESS_SOURCE = cfg.REPO / "native" / "tpbench_native.c"
BASE = 0x1000_0000          # below 2 GiB, for R_X86_64_32S
PAGE = 4096
TRAP_STRIDE = 16
DATA_SLOT_MIN = 64          # every zeroed object gets at least this, 64-byte aligned
UNDEFINED_DATA_SIZE = PAGE  # an external data symbol's size is unknown: a page each
# The kernel places a module's .text page-aligned; these shifts move it inside the page.
SHIFTS = (0, 16, 32, 48)
# The matrix is timed this many times over, each round through every module and placement,
# with the repetitions of all rounds pooled: a burst of load on a shared host (a neighbour,
# a frequency change) lasts through a round or two, and the fastest repetition at each N
# comes from a quiet one.
ROUNDS = 5
# Sections whose entries the kernel uses to rewrite .text at load time, on x86_64.
# (.static_call_sites is not among them: it rewrites the target of a call, and every
# call out of the module lands on a trap here anyway.)
PATCHED_AT_LOAD = tuple(REWRITE_SECTIONS)
NOP5 = bytes.fromhex("0f1f440000")        # x86_nops[5], what ftrace writes
RET_PADDED = bytes.fromhex("c3cccccccc")  # ret; int3 x 4, what apply_returns() writes
# What apply_seal_endbr() writes over a sealed endbr64 (f3 0f 1e fa): gen_endbr_poison(),
# `osp nopl (%rax)`, a 4-byte NOP unique to former ENDBR sites (arch/x86/include/asm/ibt.h).
ENDBR_POISON = bytes.fromhex("660f1f00")
# SKL_TMPL_SIZE: the bytes of the depth-counting template callthunks.c writes before a callee.
CALL_THUNK_SIZE = len(thunks.sarq_depth(0))
VULNERABILITIES = Path("/sys/devices/system/cpu/vulnerabilities")

# x86_64 relocation types (ELF x86-64 psABI).
R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32 = 1, 2, 4
# clang's -mnop-mcount marks its 5-byte NOP at a function's entry with a relocation of this
# type to __fentry__: the kernel's apply_relocate_add() writes nothing for it.
R_X86_64_NONE = 0
R_X86_64_32, R_X86_64_32S, R_X86_64_PC64 = 10, 11, 24
CALL_OPCODES = (0xE8, 0xE9)   # call rel32, jmp rel32
# The reference loop is timed twice, the second time under this name: the spread of the
# difference between the two copies is the run's noise (analysis.stats reads the name).
AA_TWIN, AA_OF = "aa_c_trace", "c_trace"
# The samples of the return thunks other than the host kernel's own, timed beside it.
# Gzipped: five thunks' samples are five times the host's.
# The variants timed through them: the bare sites, the two that call out of line while off
# (the helper and the count read by a call), and their baselines (the A/A twin joins c_trace).
THUNK_VARIANTS = ("c_base", "rust_base", "c_trace", "rust_trace", "rust_helper",
                  "rust_count_call")
THUNK_COLUMNS = ("arch", "config", "thunk", "accel", "variant", "state", "n", "rep", "cycles")


class ModuleError(messages.Failure):
    """A file that cannot be run natively; the message names it and says what to do."""


@dataclass(frozen=True)
class Rewrite:
    """What the kernel writes at each site of a section: `action` is "nop5", "ret", "thunk"
    (a `jmp` to the return thunk), "depth" (a call through the callee's depth-counting
    padding), "seal" or "keep" (the bytes stay), or None when this loader cannot reproduce
    it."""
    action: str | None
    why: str


def rewrites_for(thunk: str | None, why: str, cpu_flags: set[str],
                 indirect: tuple[str | None, str] = (None, "not asked")) -> dict[str, Rewrite]:
    """For each section of REWRITE_SECTIONS, what a kernel returning through `thunk` (a
    THUNKS name, or None when the host's choice is unknown: `why` says so) and making
    indirect branches as `indirect` says (kelf.rewrites.indirect_branches) writes at its
    sites on this CPU (pure)."""
    kind, indirect_why = indirect
    if kind == "retpoline" and thunk == "call_depth":
        kind, indirect_why = None, (f"{indirect_why}, with call depth tracking: its "
                                    "accounting retpolines are not reproduced here")
    if thunk is None:
        returns = Rewrite(None, why)
    elif thunk == "ret":
        returns = Rewrite("ret", f"{why}: `ret; int3` as apply_returns() writes")
    else:
        returns = Rewrite("thunk", f"{why}: `jmp {THUNKS[thunk][0]}` as apply_returns() "
                                   "writes, to that thunk's own code (runner/thunks.py)")
    return {
        "__mcount_loc": Rewrite("nop5", "ftrace's 5-byte NOP, as at every module load"),
        ".return_sites": returns,
        ".retpoline_sites": Rewrite(kind, {
            "retpoline": f"{indirect_why}: each call keeps going through "
                         "`__x86_indirect_thunk_<reg>`, that thunk's own code here",
            "plain": f"{indirect_why}: `call *%reg` padded with NOPs, as "
                     "apply_retpolines() writes"}.get(kind, indirect_why)),
        ".call_sites": Rewrite("depth", "call depth tracking: each call to a function padded "
                                        "with NOPs goes through `sarq $5` on the per-CPU depth "
                                        "counter written into the padding, as callthunks.c does")
        if thunk == "call_depth" else Rewrite("keep", "calls stay direct: no call depth "
                                                      "tracking"),
        ".altinstructions": Rewrite(None, "replaced per CPU feature; not reproduced here"),
        ".ibt_endbr_seal": Rewrite("seal", "this CPU enforces IBT: each endbr64 that no "
                                           "indirect call reaches becomes `osp nopl (%rax)`, "
                                           "as apply_seal_endbr() writes")
        if "ibt" in cpu_flags else
        Rewrite("keep", "endbr64 stays: this CPU does not enforce IBT"),
        ".cfi_sites": Rewrite(None, "FineIBT: on this IBT CPU the kernel rewrites the function's "
                                    "kCFI preamble into FineIBT's (apply_fineibt()), not "
                                    "reproduced here")
        if "ibt" in cpu_flags else
        Rewrite("keep", "kCFI stays as compiled: this CPU does not enforce IBT, so the kernel "
                        "only writes new hash values into the same instructions (cfi_rand), "
                        "and the timed code, called at its entry, runs no check"),
    }


def host_thunk() -> tuple[str | None, str]:
    """The return thunk this host's kernel chose, as kelf.rewrites.return_thunk reads it."""
    identity = host_cpu_identity()
    family = int(identity["family"]) if str(identity.get("family", "")).isdigit() else None
    return return_thunk(host_vulnerabilities(), identity.get("vendor"), family)


def host_kernel_version() -> tuple[int, int]:
    """(major, minor) of the host's running kernel, e.g. (6, 18) for 6.18.44-fc-v1272."""
    m = re.match(r"(\d+)\.(\d+)", platform.release())
    return (int(m.group(1)), int(m.group(2))) if m else (6, 12)


def host_vulnerabilities() -> dict[str, str]:
    """The host kernel's /sys/devices/system/cpu/vulnerabilities, file name -> its line."""
    if not VULNERABILITIES.is_dir():
        return {}
    return {p.name: p.read_text().strip() for p in sorted(VULNERABILITIES.iterdir())}


def host_cpu_identity() -> dict:
    """Vendor, family, model and stepping of the host CPU, and whether it is a virtual one
    (the CPUID hypervisor bit, which Linux shows as the `hypervisor` flag): the native
    figures hold for that CPU, and a VM's "host CPU" is a virtual CPU."""
    fields = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("vendor_id", "cpu family", "model", "stepping", "model name") \
                and key not in fields:
            fields[key] = value.strip()
    return {"vendor": fields.get("vendor_id"), "family": fields.get("cpu family"),
            "model": fields.get("model"), "stepping": fields.get("stepping"),
            "name": fields.get("model name"), "hypervisor": "hypervisor" in host_cpu_flags()}


def host_cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def accel_name(shift: int) -> str:
    """The accelerator label of native samples: 'native' at the kernel's placement,
    'native+16' with .text 16 bytes further into its page."""
    return "native" if shift == 0 else f"native+{shift}"


def host_arch() -> str:
    return {"x86_64": "x86_64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


@dataclass
class ModuleCode:
    """What the loader needs of a module: its text (.text and each .text.<name>, laid out as
    the kernel's loader places them), symbols and relocations."""
    path: Path
    arch: str
    text: bytes
    functions: dict[str, tuple[int, int]]      # name -> (offset in .text, size)
    # (offset, type, symbol name, symbol kind, symbol value, addend); kind is "text",
    # "section:<name>" (defined elsewhere in the module) or "undefined"
    relocs: list[tuple[int, int, str, str, int, int]]
    section_sizes: dict[str, int]
    patched_at_load: list[tuple[str, int]] = field(default_factory=list)   # (section, .text offset)
    # .text offsets of the branches and calls the assembler resolved itself (no relocation:
    # a static function of the same section), with their targets
    local_branches: list[tuple[int, int]] = field(default_factory=list)


def read_module(path: Path) -> ModuleCode:
    """Parses a .ko; raises ModuleError naming the file and the problem."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            return _read_elf(path, elf)
    except FileNotFoundError:
        raise ModuleError(f"{path}: no such file; give a tpbench-<arch>-<config>.ko from a run "
                          "directory (make bench writes them)") from None
    except (ELFError, struct.error) as e:
        raise ModuleError(f"{path}: not an ELF file ({e}); give a tpbench-<arch>-<config>.ko "
                          "from a run directory") from None


def text_sections(elf: ELFFile) -> dict[int, tuple[str, int]]:
    """The module's run-time code, as the kernel's loader places it: .text and every
    .text.<name> (clang's LTO builds with -ffunction-sections), in section order, each at
    its alignment. section index -> (name, offset in the laid-out text)."""
    out, offset = {}, 0
    for index, sec in enumerate(elf.iter_sections()):
        if (sec["sh_flags"] & 6) == 6 and (sec.name == ".text" or sec.name.startswith(".text.")):
            align = max(sec["sh_addralign"], 1)
            offset = (offset + align - 1) // align * align
            out[index] = (sec.name, offset)
            offset += sec["sh_size"]
    return out


def _read_elf(path: Path, elf: ELFFile) -> ModuleCode:
    if elf["e_type"] != "ET_REL" or elf.get_section_by_name(".modinfo") is None:
        raise ModuleError(f"{path}: not a kernel module (a relocatable ELF with .modinfo); "
                          "give a tpbench-<arch>-<config>.ko from a run directory")
    arch = MACHINES.get(elf["e_machine"], elf["e_machine"])
    symtab = elf.get_section_by_name(".symtab")
    texts = text_sections(elf)
    if not texts or symtab is None:
        raise ModuleError(f"{path}: a module without .text or .symtab; rebuild it with make bench")
    text = bytearray()
    for index, (_, offset) in texts.items():
        # Between sections, int3 as the kernel's alignment padding would never run.
        text += b"\xcc" * (offset - len(text)) + elf.get_section(index).data()
    sections = {i: s.name for i, s in enumerate(elf.iter_sections())}
    by_section = functions_by_section(elf)
    functions = {name: (texts[index][1] + value, size) for index in texts
                 for value, size, name in by_section.get(index, [])}
    relocs = []
    for index, (name, base) in texts.items():
        rela = elf.get_section_by_name(".rela" + name)
        for r in rela.iter_relocations() if rela is not None else ():
            sym = symtab.get_symbol(r["r_info_sym"])
            shndx = sym["st_shndx"]
            value = sym["st_value"]
            if shndx in texts:
                kind, value = "text", texts[shndx][1] + value
            elif shndx == "SHN_UNDEF":
                kind = "undefined"
            elif isinstance(shndx, int):
                kind = f"section:{sections[shndx]}"
            else:
                kind = f"section:{shndx}"
            relocs.append((base + r["r_offset"], r["r_info_type"],
                           sym.name or sections.get(shndx, str(shndx)), kind, value,
                           r["r_addend"]))
    patched = []
    for name in PATCHED_AT_LOAD:
        sec = elf.get_section_by_name(".rela" + name)
        for r in sec.iter_relocations() if sec is not None else ():
            sym = symtab.get_symbol(r["r_info_sym"])
            if sym["st_shndx"] in texts:
                patched.append((name, texts[sym["st_shndx"]][1] + sym["st_value"]
                                + r["r_addend"]))
    sizes = {s.name: s["sh_size"] for s in elf.iter_sections() if s["sh_flags"] & 2}  # SHF_ALLOC
    code = ModuleCode(path, arch, bytes(text), functions, relocs, sizes, patched)
    if arch == "x86_64":
        # A relocated branch: the relocation follows its opcode (and clang's cs prefix).
        relocated = {off - k for off, *_ in relocs for k in (1, 2)}
        bases = {name: base for name, base in texts.values()}
        code.local_branches = [(at, target) for at, target in direct_branches(path, bases)
                               if at not in relocated]
    return code


_DIRECT = re.compile(r"([0-9a-f]+) <")     # a direct target, first of the operands


def direct_branches(path: Path, bases: dict[str, int]) -> list[tuple[int, int]]:
    """(offset, target) of every direct call and jump in the laid-out text (`bases`: each
    text section's offset in it), from the host's objdump."""
    listing = subprocess.run(["objdump", "-d", "--insn-width=16",
                              *(f"-j{name}" for name in bases), str(path)],
                             capture_output=True, text=True).stdout
    return [(bases[f.section] + i.addr, bases[f.section] + int(m.group(1), 16))
            for f in objdump.parse_objdump(listing).values() for i in f.insns
            if (i.mnemonic.startswith("j") or objdump.is_call(i.mnemonic))
            and (m := _DIRECT.match(i.operands))]


def loop_symbol(variant: str) -> str:
    return f"tpbench_{AA_OF if variant == AA_TWIN else variant}"


def function_at(code: ModuleCode, offset: int) -> str | None:
    for name, (start, size) in code.functions.items():
        if start <= offset < start + max(size, 1):
            return name
    return None


def reachable(code: ModuleCode, root: str) -> set[str]:
    """The module functions `root` can reach through direct calls and jumps in .text."""
    seen, todo = set(), [root]
    while todo:
        fn = todo.pop()
        if fn in seen or fn not in code.functions:
            continue
        seen.add(fn)
        start, size = code.functions[fn]
        targets = [t for at, t in code.local_branches if start <= at < start + size]
        # A relocated call's target: symbol + addend + 4 (the addend counts from the next insn).
        targets += [value + addend + 4 for off, _, _, kind, value, addend in code.relocs
                    if start <= off < start + size and kind == "text" and is_branch(code, off)]
        todo += [f for f in map(lambda t: function_at(code, t), targets) if f and f != fn]
    return seen


def is_branch(code: ModuleCode, offset: int) -> bool:
    return offset > 0 and code.text[offset - 1] in CALL_OPCODES


def check_runnable(code: ModuleCode, variants) -> list[str]:
    """What makes the module unfit to run natively at all, each with what to do; empty when
    fit. (Which of its variants can run is `refusals`'s question.)"""
    problems = []
    if code.arch != "x86_64":
        problems.append(f"{code.path}: a {code.arch} module; the native stage loads x86_64 "
                        "modules only (arm64 relocations are not implemented)")
        return problems
    if code.arch != host_arch():
        problems.append(f"{code.path}: an {code.arch} module on an {host_arch()} host")
        return problems
    missing = [loop_symbol(v) for v in variants if loop_symbol(v) not in code.functions]
    if missing:
        problems.append(f"{code.path}: no function {', '.join(missing)} in .text; is it a "
                        "tpbench module of this checkout? Rebuild it with make bench")
    return problems


def refusals(code: ModuleCode, variants, rewrites: dict[str, Rewrite]) -> dict[str, str]:
    """variant -> why it cannot be timed: its loop reaches a site the kernel rewrites at
    load time in a way this loader does not reproduce, so its native timing would not be
    the kernel's code. The others run with every rewrite applied."""
    refused = {}
    for v in variants:
        for fn in sorted(reachable(code, loop_symbol(v))):
            start, size = code.functions[fn]
            # Mainline's Rust without jump labels reads a key's count through the kernel
            # crate's C helper: its code is the kernel's, not in the module, so not timed here.
            helpers = sorted({name for off, _, name, kind, _, _ in code.relocs
                              if start <= off < start + size and kind == "undefined"
                              and name.startswith("rust_helper_") and is_branch(code, off)})
            if helpers:
                refused.setdefault(v, f"{fn} calls the kernel's {helpers[0]}(), a C helper of "
                                      "the kernel crate whose code is not in the module")
            for section, off in code.patched_at_load:
                rewrite = rewrites.get(section, Rewrite(None, "unknown to this loader"))
                # A kCFI preamble belongs to the function after it.
                if function_at(code, off + (CFI_PREAMBLE if section == ".cfi_sites" else 0)) != fn:
                    continue
                if rewrite.action is None:
                    refused.setdefault(v, f"{fn} has a site in {section} at .text+{off:#x}: "
                                          f"{rewrite.why}")
                elif rewrite.action == "plain" and code.text[off] not in (0x2E, 0xE8, 0xE9):
                    refused.setdefault(v, f"{fn} has a conditional jump through a retpoline "
                                          f"at .text+{off:#x}, which apply_retpolines() "
                                          "inverts around `jmp *%reg`; not reproduced here")
    return refused


def apply_rewrites(code: ModuleCode, text: bytearray, rewrites: dict[str, Rewrite],
                   text_addr: int = BASE, thunk: thunks.ThunkCode | None = None) -> None:
    """Writes into the relocated `text` (at `text_addr`) what the kernel writes at each
    load-time site whose action is known, returns going to `thunk`; the sites of refused
    variants are never run, and stay as they are."""
    # call __fentry__; jmp __x86_return_thunk; endbr64; call
    expect = {"nop5": (0xE8, NOP5), "ret": (0xE9, RET_PADDED), "thunk": (0xE9, None),
              "seal": (0xF3, ENDBR_POISON), "depth": (0xE8, None), "plain": (0xE8, None)}
    registers = retpoline_registers(code)
    for section, off in code.patched_at_load:
        action = rewrites.get(section, Rewrite(None, "")).action
        if action not in expect:
            continue
        opcode, new = expect[action]
        if action == "plain":
            # `[cs] call/jmp __x86_indirect_thunk_<reg>` (GCC's cs prefix leaves room for
            # `call *%r8`..); a Jcc through the thunk is left, and its function refused.
            start = off + (code.text[off] == 0x2E)
            if code.text[start] in (0xE8, 0xE9):
                text[off:start + 5] = thunks.indirect(
                    code.text[start], thunks.REGS.index(registers[off]), start + 5 - off)
            continue
        if action == "nop5" and code.text[off:off + 5] == NOP5:
            continue        # clang's -mnop-mcount: already the NOP ftrace would write
        # clang's `cs jmp __x86_return_thunk`: patch_return() writes over the prefix too, and
        # pads the instruction's sixth byte with int3.
        start = off + (action in ("ret", "thunk") and code.text[off] == 0x2E)
        if code.text[start] != opcode:
            raise ModuleError(f"{code.path}: the {section} site at .text+{off:#x} holds "
                              f"{code.text[start]:#04x}, not the {opcode:#04x} the kernel "
                              "rewrites there; is the module damaged?")
        if action == "thunk":
            new = thunks.jmp(text_addr + off, thunk.return_thunk)
        elif action == "depth":
            new = depth_call(text, off, text_addr, thunk)
        if new:
            new = new.ljust(start + 5 - off, b"\xcc")
            text[off:off + len(new)] = new


def retpoline_registers(code: ModuleCode) -> dict[int, str]:
    """.text offset of each site in .retpoline_sites -> the register its thunk names."""
    names = {off: name.rpartition("_")[2] for off, _, name, _, _, _ in code.relocs
             if name.startswith("__x86_indirect_thunk_")}
    return {off: next(names[k] for k in range(off + 1, off + 4) if k in names)
            for section, off in code.patched_at_load if section == ".retpoline_sites"}


def depth_call(text: bytearray, off: int, text_addr: int, thunk: thunks.ThunkCode) -> bytes:
    """callthunks.c's patch_call() for the call at .text+off: a call to a function of the
    module whose padding is NOPs goes to the depth-counting template written into that
    padding (`text` gets the template); other calls stay (b"")."""
    if text[off] != 0xE8:
        return b""      # patched out already (ftrace's NOP): call_get_dest() skips it
    dest = off + 5 + struct.unpack_from("<i", text, off + 1)[0]
    template = thunk.call_thunk(text_addr + dest - CALL_THUNK_SIZE)
    pad = dest - CALL_THUNK_SIZE
    if not 0 <= pad < dest <= len(text):
        return b""      # out of the module: a trap here, never reached
    if text[pad:dest] not in (b"\x90" * CALL_THUNK_SIZE, template):
        return b""      # "Invalid padding area": the kernel leaves the call as it is
    text[pad:dest] = template
    return thunks.call(text_addr + off, text_addr + pad)


@dataclass(frozen=True)
class Image:
    data: bytes               # the whole mapping, from BASE
    exec_size: int            # text and traps, executable
    variants: dict[str, int]  # variant -> address of its loop function
    traps: dict[str, int]     # external function -> address of its ud2
    text_address: int
    thunk: thunks.ThunkCode = thunks.ThunkCode("ret")
    gs_base: int | None = None   # for the call depth counter
    code: tuple = ()             # (address, bytes) of the thunks, mapped executable


def align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def lay_out(code: ModuleCode, variants, shift: int = 0,
            rewrites: dict[str, Rewrite] | None = None, thunk: str = "ret",
            kernel: tuple[int, int] = (6, 12)) -> Image:
    """The module's .text at BASE + shift with every relocation applied, then the load-time
    rewrites of `rewrites`, returns going through `thunk` (pure)."""
    text_addr = BASE + shift
    text = bytearray(code.text)
    # Which symbols are functions to trap: branch targets outside .text.
    trap_names = sorted({name for off, typ, name, kind, _, _ in code.relocs
                         if kind != "text" and (typ == R_X86_64_PLT32 or is_branch(code, off))})
    traps_addr = align(text_addr + len(text), PAGE)
    traps = {name: traps_addr + k * TRAP_STRIDE for k, name in enumerate(trap_names)}
    data_addr = align(traps_addr + len(traps) * TRAP_STRIDE + 1, PAGE)
    slots, cursor = {}, data_addr
    for off, typ, name, kind, _, _ in code.relocs:
        if kind == "text" or name in traps:
            continue
        slot = kind if kind.startswith("section:") else name
        if slot not in slots:
            size = (code.section_sizes.get(kind[len("section:"):], 0)
                    if kind.startswith("section:") else UNDEFINED_DATA_SIZE)
            slots[slot] = cursor
            cursor = align(cursor + max(size, DATA_SLOT_MIN), DATA_SLOT_MIN)
    # With retpolines, a call to __x86_indirect_thunk_<reg> stays, to that thunk's code here.
    retpoline_targets = (thunks.retpoline_symbols() if (rewrites or {}).get(
        ".retpoline_sites", Rewrite(None, "")).action == "retpoline" else {})
    for off, typ, name, kind, value, addend in code.relocs:
        if typ == R_X86_64_NONE:
            continue
        if kind == "text":
            s = text_addr + value
        elif name in retpoline_targets:
            s = retpoline_targets[name]
        elif name in traps:
            s = traps[name]
        else:
            s = slots[kind if kind.startswith("section:") else name] + value
        p = text_addr + off
        if typ in (R_X86_64_PC32, R_X86_64_PLT32):
            struct.pack_into("<i", text, off, s + addend - p)
        elif typ == R_X86_64_32S:
            struct.pack_into("<i", text, off, s + addend)
        elif typ == R_X86_64_32:
            struct.pack_into("<I", text, off, s + addend)
        elif typ == R_X86_64_64:
            struct.pack_into("<Q", text, off, s + addend)
        elif typ == R_X86_64_PC64:
            struct.pack_into("<q", text, off, s + addend - p)
        else:
            raise ModuleError(f"{code.path}: relocation type {typ} at .text+{off:#x} "
                              f"({name}) is not handled by the native loader")
    laid = thunks.thunk_code(thunk, kernel=kernel)
    apply_rewrites(code, text, rewrites or {}, text_addr, laid)
    chunks = laid.chunks
    if (rewrites or {}).get(".retpoline_sites", Rewrite(None, "")).action == "retpoline":
        chunks += (thunks.retpolines(laid),)
    # The per-CPU page the call depth counter lives in, reached through %gs.
    percpu = align(cursor, PAGE)
    size = align(percpu + PAGE, PAGE) - BASE
    image = bytearray(size)
    image[shift:shift + len(text)] = text
    for addr in traps.values():
        image[addr - BASE:addr - BASE + 2] = b"\x0f\x0b"    # ud2
    gs_base = None
    if laid.counts_calls:
        struct.pack_into("<q", image, percpu - BASE, laid.depth_initial)
        gs_base = percpu - thunks.DEPTH_VA
    return Image(bytes(image), data_addr - BASE, {v: text_addr + code.functions[loop_symbol(v)][0]
                                                 for v in variants}, traps, text_addr, laid,
                 gs_base, chunks)


def manifest(image: Image, image_path: Path, ns, reps: int, warmup: int, cpu: int | None) -> str:
    lines = [f"base {BASE:x}", f"size {len(image.data):x}", f"exec {image.exec_size:x}",
             f"image {image_path}", f"ns {' '.join(map(str, ns))}", f"reps {reps}",
             f"warmup {warmup}"]
    if cpu is not None:
        lines.append(f"cpu {cpu}")
    if image.gs_base is not None:
        lines.append(f"gs {image.gs_base:x}")
    lines += [f"code {a:x} {b.hex()}" for a, b in image.code]
    lines += [f"variant {v} {a:x}" for v, a in image.variants.items()]
    lines += [f"trap {t} {a:x}" for t, a in image.traps.items()]
    return "\n".join(lines) + "\n"


@dataclass
class HarnessOutput:
    samples: list[dict]       # variant, n, rep, cycles (TSC ticks or core cycles)
    counter: str              # "tsc" or "tsc+perf"
    tsc_hz: float
    cpu: int | None
    perf_reason: str | None
    instructions: list[dict]  # variant, n, rep, instructions (with tsc+perf only)


_SAMPLE = re.compile(r"^sample (\S+) (\d+) (\d+) (\d+)(?: (\d+) (\d+))?$")


def parse_output(text: str) -> HarnessOutput:
    """The harness's stdout, line by line (pure). With hardware counters, a sample's value is
    core cycles; otherwise TSC ticks."""
    samples, insns, info = [], [], {}
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m:
            v, n, rep, ticks, cycles, instructions = m.groups()
            value = int(cycles) if cycles is not None else int(ticks)
            samples.append(dict(variant=v, n=int(n), rep=int(rep), cycles=value))
            if instructions is not None:
                insns.append(dict(variant=v, n=int(n), rep=int(rep),
                                  instructions=int(instructions)))
        elif line.startswith("perf "):
            info["perf"] = line[len("perf "):]
        elif " " in line:
            key, value = line.split(" ", 1)
            info[key] = value
    if "counter" not in info or "tsc_hz" not in info:
        raise messages.Failure("the native harness printed no counter or TSC frequency line")
    return HarnessOutput(samples, info["counter"], float(info["tsc_hz"]),
                         int(info["cpu"]) if "cpu" in info else None, info.get("perf"), insns)


def build_harness(out_dir: Path) -> Path:
    """Compiles native/tpbench_native.c with the host's gcc into the cache."""
    out_dir.mkdir(parents=True, exist_ok=True)
    key = cfg.digest([HARNESS_SOURCE.read_bytes()])
    exe = out_dir / f"tpbench_native-{key}"
    if not exe.exists():
        tmp = exe.with_name(exe.name + ".tmp")
        proc.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(tmp), str(HARNESS_SOURCE)])
        tmp.rename(exe)
    return exe


def kernel_tsc_hz() -> float | None:
    """The TSC frequency the host kernel detected or refined, from its log, if readable."""
    log = proc.output_of(["dmesg"])
    found = None
    for m in re.finditer(r"tsc: (?:Refined TSC clocksource calibration: |Detected )"
                         r"([\d.]+) MHz", log):
        found = float(m.group(1)) * 1e6
    return found


def run_module(ko: Path, variants, ns, reps: int, warmup: int, shift: int,
               work: Path, cpu: int | None = None, thunk: str | None = None) -> HarnessOutput:
    """Reads and checks one module, then times its variants at one placement on this CPU,
    with the load-time rewrites of a kernel returning through `thunk` (the host's own when
    None); a variant they do not cover is an error here."""
    code = read_module(ko)
    name, why = host_thunk() if thunk is None else (thunk, f"{thunk}, forced")
    rewrites = rewrites_for(name, why, host_cpu_flags(),
                            indirect_branches(host_vulnerabilities()))
    problems = check_runnable(code, variants) + [
        f"{ko}: {v} is refused: {why}" for v, why in refusals(code, variants, rewrites).items()]
    if problems:
        raise ModuleError("; ".join(problems))
    return time_code(code, variants, ns, reps, warmup, shift, work, cpu, rewrites, name)


def time_code(code: ModuleCode, variants, ns, reps: int, warmup: int, shift: int,
              work: Path, cpu: int | None = None,
              rewrites: dict[str, Rewrite] | None = None, thunk: str = "ret") -> HarnessOutput:
    """Times the variants of a module already read and checked, at one placement, returns
    going through `thunk`."""
    ko = code.path
    image = lay_out(code, variants, shift, rewrites, thunk, host_kernel_version())
    work.mkdir(parents=True, exist_ok=True)
    image_path = work / f"{ko.stem}+{shift}-{thunk}.image"
    image_path.write_bytes(image.data)
    exe = build_harness(cfg.cache_root() / "native")
    proc = subprocess.run([str(exe)], input=manifest(image, image_path, ns, reps, warmup, cpu),
                          text=True, capture_output=True)
    if proc.returncode != 0:
        raise messages.Failure(f"{ko.name} at .text+{shift}, returns through {thunk}: " +
                            (proc.stderr.strip() or
                             f"tpbench_native exited with status {proc.returncode}"))
    return parse_output(proc.stdout)


# ---------------------------------------------------------------------------
# The stage: every module of a run directory that this host can run.


def guest_matrix(context: dict) -> dict:
    """The matrix the guests ran (module parameters in context.json), for the native stage."""
    params = dict(a.split("=", 1) for a in context.get("module_params", []))
    try:
        return {"variants": [v for v in params["variants"].split(",") if v],
                "ns": [int(n) for n in params["ns"].split(",")],
                "reps": int(params["reps"]), "warmup": int(params["warmup"])}
    except (KeyError, ValueError) as e:
        raise messages.Failure(f"context.json: module_params lack a usable {e}; "
                               "is this a run directory made by make bench?") from None


@dataclass(frozen=True)
class Planned:
    """One module the native stage runs: read once, with the variants it can time."""
    code: ModuleCode
    arch: str
    config: str
    variants: list[str]
    refused: dict[str, str]    # variant -> why it is not timed


def plan(run: Path) -> tuple[dict, list[tuple[ModuleCode, str, str]], list[str]]:
    """Checks a run directory before anything is timed or written: (context, the modules to
    run as (ModuleCode, arch, config), each read once, the skipped ones with why). Raises
    Failure on bad input."""
    context = rundir.guest_context(run)
    modules = sorted(run.glob("tpbench-*.ko"))
    if not modules:
        raise messages.Failure(f"{run}: no tpbench-<arch>-<config>.ko in the run directory; "
                               "the native stage times the modules a guest run measured: "
                               "run make bench first")
    matrix = guest_matrix(context)
    todo, skipped = [], []
    for ko in modules:
        tag = rundir.guest_of(ko.name, "module")
        if tag is None or tag[0] not in MACHINES.values():
            raise messages.Failure(f"{ko}: the name is not tpbench-<arch>-<config>.ko; "
                                   "rename it or remove it from the run directory")
        code = read_module(ko)
        if code.arch != tag[0]:
            raise messages.Failure(f"{ko}: the name says {tag[0]} but the file is {code.arch}; "
                                   "the run directory is damaged")
        if code.arch != host_arch() or code.arch != "x86_64":
            skipped.append(f"{ko.name}: built for {code.arch}; this host is {host_arch()} "
                           "and the native stage runs x86_64 modules on x86_64 hosts only")
            continue
        problems = check_runnable(code, matrix["variants"])
        if problems:
            raise ModuleError("; ".join(problems))
        todo.append((code, *tag))
    return context, todo, skipped


def time_module(code: ModuleCode, arch: str, config: str, variants, matrix: dict, shifts,
                work: Path, cpu: int, run: Path, rows: list, first_rep: int = 0,
                rewrites: dict[str, Rewrite] | None = None, thunk: str = "ret",
                host: bool = True) -> dict:
    """One module, read once, at every placement, returns going through `thunk`; adds its
    samples to `rows`, numbered from `first_rep` (a later round's follow an earlier one's),
    returns what the context records of it. `host`: the host kernel's own thunk, whose
    instruction counts (with hardware counters) are kept too."""
    per_shift = {}
    twin = [AA_TWIN] if AA_OF in variants else []
    for shift in shifts:
        out = time_code(code, list(variants) + twin, matrix["ns"], matrix["reps"],
                        matrix["warmup"], shift, work, cpu, rewrites, thunk)
        accel = accel_name(shift)
        rows += [dict(arch=arch, config=config, accel=accel, state="disabled", thunk=thunk,
                      **dict(s, rep=s["rep"] + first_rep)) for s in out.samples]
        per_shift[accel] = {"counter": out.counter, "cpu": out.cpu,
                            "tsc_hz_calibrated": round(out.tsc_hz),
                            "perf": out.perf_reason or "hardware counters in use",
                            "text_address": hex(BASE + shift)}
        if out.instructions and host:
            pd.DataFrame(out.instructions).to_csv(
                run / f"native-instructions-{arch}-{config}-{accel}.csv", index=False)
    return per_shift


def merge_samples(path: Path, rows: list[dict], done: set, columns) -> None:
    """Writes `rows` into the CSV at `path`, replacing the native rows it had of the
    (arch, config) pairs in `done`, so running the stage again adds nothing twice."""
    old = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=columns)
    if not old.empty:
        keep = [not (str(r.accel).startswith("native") and (r.arch, r.config) in done)
                for r in old.itertuples()]
        old = old[keep]
    new = pd.DataFrame(rows, columns=columns)
    merged = pd.concat([df for df in (old, new) if not df.empty] or [new],
                       ignore_index=True)[list(columns)]
    text = merged.to_csv(index=False, lineterminator="\n")
    bench.write_atomically(path, gzip.compress(text.encode(), mtime=0)
                           if path.suffix == ".gz" else text)


def schedule(modules: list[tuple[ModuleCode, str, str]], variants: list[str], kinds: list,
             host: str | None, host_why: str) -> tuple[list, dict, dict]:
    """What to time: (Planned, thunk, rewrites, is_host) per module and return thunk of
    `kinds` ((thunk, rewrites, is_host), the host's first); the variants refused under the
    host's thunk, by "<arch>/<config>", and those refused under a forced one, by
    "<arch>/<config>/<thunk>". The forced thunks time THUNK_VARIANTS alone."""
    todo, refused, thunk_refused = [], {}, {}
    for code, arch, config in modules:
        tag = f"{arch}/{config}"
        if host is None:
            refused[tag] = {v: f"the host's kernel returns through a thunk this loader does "
                               f"not know ({host_why}); the thunks timed beside stand in"
                            for v in variants}
        for thunk, rewrites, is_host in kinds:
            mine = refusals(code, variants, rewrites)
            if mine and is_host:
                refused[tag] = mine
            elif mine:
                thunk_refused[f"{tag}/{thunk}"] = mine
            timed = [v for v in variants if v not in mine and (is_host or v in THUNK_VARIANTS)]
            if timed:
                todo.append((Planned(code, arch, config, timed, mine), thunk, rewrites, is_host))
    return todo, refused, thunk_refused


def time_rounds(run: Path, todo: list, matrix: dict, shifts, rounds: int, cpu: int,
                earlier: dict) -> tuple[list[dict], list[dict], dict]:
    """Times `todo` `rounds` times over: the host thunk's rows, the forced thunks' rows, and
    what the harness said per "<arch>/<config>". On any failure native.json keeps what an
    earlier pass timed and says what this one lacks."""
    rows, forced_rows, info = [], [], {}
    work = cfg.cache_root() / "native" / run.name
    try:
        for k in range(rounds):
            for p, thunk, rewrites, is_host in todo:
                with messages.Stage(f"native {p.arch}/{p.config}, returns through {thunk}, on "
                                    f"the host CPU, round {k + 1} of {rounds}"):
                    got = time_module(p.code, p.arch, p.config, p.variants, matrix, shifts,
                                      work, cpu, run, rows if is_host else forced_rows,
                                      first_rep=k * matrix["reps"], rewrites=rewrites,
                                      thunk=thunk, host=is_host)
                    if is_host:
                        info[f"{p.arch}/{p.config}"] = got
    except BaseException as e:
        rundir.write_json(run / rundir.NATIVE_CONTEXT, dict(
            earlier, incomplete_reason="native stage: " + bench.first_line(e)))
        raise
    for row in rows:
        del row["thunk"]
    return rows, forced_rows, info


def about_stage(matrix: dict, shifts, rounds: int, vulns: dict, host: str | None,
                host_why: str, kinds: list, host_rewrites: dict, refused: dict,
                thunk_refused: dict) -> dict:
    """native.json's native_about: what the stage ran, on what, and what it refused."""
    return {
        "harness": f"native/tpbench_native.c, sha {cfg.digest([HARNESS_SOURCE.read_bytes()])}",
        "host_cpu": bench.host_cpu(),
        "host_cpu_identity": host_cpu_identity(),
        "tsc_hz_kernel": kernel_tsc_hz(),
        "matrix": matrix,
        "aa_twin": f"{AA_TWIN}: {AA_OF} timed a second time",
        "shifts": list(shifts),
        "rounds": rounds,
        "host_vulnerabilities": vulns,
        # The return thunk of the host's kernel (None: not one this loader knows), and the
        # others timed beside it (native-thunks.csv.gz).
        "host_thunk": {"name": host, "why": host_why},
        "thunks": {t: {"symbol": THUNKS[t][0], "who": THUNKS[t][1],
                       "timed": rundir.NATIVE_SAMPLES if is_host else rundir.THUNK_SAMPLES}
                   for t, _, is_host in kinds},
        "thunk_source": thunks.SOURCE,
        # The thunks' form follows the host's kernel where the trees differ (thunks.py).
        "thunk_kernel": ".".join(map(str, host_kernel_version())),
        # What the loader wrote at each kind of load-time site, as the host's kernel would.
        "rewrites": {section: {"action": r.action or "refuse", "why": r.why}
                     for section, r in host_rewrites.items()},
        "refused": refused,
        "thunk_refused": thunk_refused,
    }


def measure_run(run: Path, cpu: int | None = None, shifts=SHIFTS,
                matrix_override: dict | None = None, rounds: int = ROUNDS,
                thunk_names=tuple(THUNKS)) -> list[dict]:
    """Times every runnable module of `run` at every placement, `rounds` times over: with
    the host kernel's own return thunk into run/native-samples.csv, and with each other thunk
    of `thunk_names` into run/native-thunks.csv.gz (THUNK_VARIANTS alone; replacing that
    module's earlier native samples); what it ran into run/native.json. The guests' files
    stay as they were. Returns the host's rows."""
    vulns = host_vulnerabilities()
    flags = host_cpu_flags()
    host, host_why = host_thunk()
    context, modules, skipped = plan(run)
    earlier = rundir.native_context(run) or {}
    for line in skipped:
        messages.say(f"[tpbench] native: skipped {line}")
    if not modules:
        # Said where the figures would be: REPORT.md reads why from the context.
        rundir.write_json(run / rundir.NATIVE_CONTEXT, {"native_about": {
            "ran": False, "why": "; ".join(skipped) or "no module"}})
        return []
    messages.say(f"[tpbench] native: this host's kernel returns through "
                 f"{host or 'a thunk not reproduced here'} ({host_why})")
    matrix = dict(guest_matrix(context), **(matrix_override or {}))
    # Each thunk the stage times: the host's first (when known), then the others, forced.
    indirect = indirect_branches(vulns)
    kinds = ([(host, rewrites_for(host, host_why, flags, indirect), True)] if host else []) + [
        (t, rewrites_for(t, f"forced: {THUNKS[t][1]}", flags, indirect), False)
        for t in thunk_names if t != host]
    todo, refused, thunk_refused = schedule(modules, matrix["variants"], kinds, host, host_why)
    for tag, mine in refused.items():
        for v, why in mine.items():
            messages.say(f"[tpbench] native: {tag}: {v} refused: {why}")
    # One CPU for every placement: the last this process may use (CPU 0 takes more interrupts).
    cpu = max(os.sched_getaffinity(0)) if cpu is None else cpu
    rows, forced_rows, info = time_rounds(run, todo, matrix, shifts, rounds, cpu, earlier)
    done = {(arch, config) for _, arch, config in modules}
    merge_samples(run / rundir.NATIVE_SAMPLES, rows, done, bench.CSV_COLUMNS)
    merge_samples(run / rundir.THUNK_SAMPLES, forced_rows, done, THUNK_COLUMNS)
    counters = {p["counter"] for v in info.values() for p in v.values()}
    unit = "cycles" if counters == {"tsc+perf"} else "TSC ticks"
    about = about_stage(matrix, shifts, rounds, vulns, host, host_why, kinds,
                        rewrites_for(host, host_why, flags, indirect), refused, thunk_refused)
    # Written whole: an earlier failure's reason goes with it.
    rundir.write_json(run / rundir.NATIVE_CONTEXT, {
        "units": {accel_name(s): unit for s in shifts},
        "native": dict(earlier.get("native", {}), **info),
        "native_about": about,
    })
    return rows
