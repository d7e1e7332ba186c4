"""The sections through which an x86_64 kernel rewrites a module's code as it loads it.

Each entry of these sections is the address of one instruction in the module's
text. What the kernel writes there depends on the CPU and on what the kernel
chose against its vulnerabilities (arch/x86/kernel/alternative.c, ftrace), so
the bytes in the .ko file are not always the bytes that run.
"""

import re

from elftools.elf.elffile import ELFFile

# section -> what the kernel does with each site it lists
REWRITE_SECTIONS = {
    "__mcount_loc": "ftrace turns each `call __fentry__` into a 5-byte NOP when the module "
                    "loads (and back into a call when a function tracer is attached)",
    ".return_sites": "apply_returns() turns each `jmp __x86_return_thunk` into `ret` (padded "
                     "with int3) unless the CPU's retbleed, SRSO or ITS mitigation sends "
                     "returns through a thunk",
    ".retpoline_sites": "apply_retpolines() leaves each call through "
                        "`__x86_indirect_thunk_<reg>` to the retpoline, or turns it into a "
                        "plain indirect call, as the spectre_v2 mitigation asks",
    ".call_sites": "callthunks_patch_module_calls() sends each call through a depth-"
                   "accounting thunk when retbleed=stuff (call depth tracking) is on",
    ".altinstructions": "apply_alternatives() replaces instructions by others for the CPU's "
                        "features",
    ".ibt_endbr_seal": "apply_seal_endbr() turns an `endbr64` that no indirect call reaches "
                       "into a NOP when the CPU enforces IBT",
    ".cfi_sites": "apply_fineibt() writes new type hashes into each kCFI preamble and check "
                  "(cfi_rand), or, on a CPU that enforces IBT, rewrites both into FineIBT's",
}
# kCFI's preamble before each function (`mov $hash, %eax` and NOPs), which .cfi_sites lists:
# CONFIG_FUNCTION_PADDING_BYTES before the function's entry.
CFI_PREAMBLE = 16


# The thunks a return may go through, in the order of the report's table: the kernel symbol
# a return jumps to, and who gets it (arch/x86/kernel/cpu/bugs.c, 6.12.118: set_return_thunk()
# in retbleed_select_mitigation(), srso_select_mitigation() and its_select_mitigation()).
THUNKS = {
    "ret": ("ret", "no return mitigation: apply_returns() writes `ret; int3` in place"),
    "srso": ("srso_return_thunk", "SRSO Safe RET on AMD family 0x17 (Zen 1/2) and 0x1a"),
    "srso_alias": ("srso_alias_return_thunk", "SRSO Safe RET on AMD family 0x19 (Zen 3/4)"),
    "untrain_ret": ("retbleed_return_thunk", "retbleed's untrained return thunk (AMD Zen 1/2 "
                                             "without SRSO Safe RET)"),
    "call_depth": ("call_depth_return_thunk", "call depth tracking (retbleed=stuff or "
                                              "ITS's RSB stuffing, Intel Skylake)"),
    "its": ("its_return_thunk", "ITS's aligned return thunk (Intel, ITS affected)"),
}


def return_thunk(vulns: dict[str, str], vendor: str | None,
                 family: int | None) -> tuple[str | None, str]:
    """(the THUNKS name a kernel returns through, why), from its
    /sys/devices/system/cpu/vulnerabilities lines and its CPU, as bugs.c decides: SRSO's
    Safe RET (the alias form on family 0x19) is chosen last and wins; SRSO's IBPB on entry
    clears the return thunk. (None, why) for a line this function does not know: better no
    figure than one for the wrong thunk."""
    srso_line = vulns.get("spec_rstack_overflow", "Not affected")
    retbleed = vulns.get("retbleed", "Not affected")
    its_line = vulns.get("indirect_target_selection", "Not affected")
    said = (f"retbleed: {retbleed}; spec_rstack_overflow: {srso_line}; "
            f"indirect_target_selection: {its_line}")
    if re.search(r"\bsafe ret\b", srso_line, re.I) and "no safe RET" not in srso_line:
        name = "srso_alias" if family == 0x19 else "srso"
        return name, f"{said}: SRSO Safe RET on {vendor} family {family or 0:#x}"
    if srso_line == "Mitigation: IBPB":
        return "ret", f"{said}: IBPB on kernel entry, so bugs.c clears X86_FEATURE_RETHUNK"
    if "Stuffing" in retbleed or "Stuffing" in its_line:
        return "call_depth", f"{said}: call depth tracking"
    if "Aligned branch/return thunks" in its_line:
        return "its", f"{said}: ITS's aligned return thunk"
    if "untrained return thunk" in retbleed:
        return "untrain_ret", f"{said}: retbleed's untrained return thunk"
    known = ("Not affected", "Vulnerable", "Mitigation: IBPB", "Mitigation: IBRS",
             "Mitigation: Enhanced IBRS", "Mitigation: Reduced Speculation",
             "Mitigation: Microcode", "Mitigation: Vulnerable, KVM: Not affected")
    if all(line.startswith(known) for line in (srso_line, retbleed, its_line)):
        return "ret", f"{said}: no return thunk"
    return None, f"{said}: a mitigation this loader does not recognise"


def indirect_branches(vulns: dict[str, str]) -> tuple[str | None, str]:
    """How a kernel that says `vulns` makes an indirect call or jump (apply_retpolines() in
    arch/x86/kernel/alternative.c, 6.12.118): "retpoline" (each site keeps its call to
    `__x86_indirect_thunk_<reg>`), "plain" (`call *%reg`, NOP-padded), or None with why for
    what this loader does not reproduce (LFENCE retpolines, ITS's indirect thunks)."""
    line = vulns.get("spectre_v2", "Not affected")
    its_line = vulns.get("indirect_target_selection", "Not affected")
    said = f"spectre_v2: {line}"
    if line.startswith("Mitigation: Retpolines"):
        return "retpoline", f"{said}: the generic retpoline"
    if "Aligned branch/return thunks" in its_line:
        return None, f"{said}; ITS: {its_line}: ITS's indirect thunks are not reproduced here"
    if "LFENCE" in line:
        return None, f"{said}: LFENCE before each indirect branch is not reproduced here"
    if line.startswith(("Not affected", "Vulnerable", "Mitigation: Enhanced", "Mitigation: IBRS")):
        return "plain", f"{said}: a plain indirect branch"
    return None, f"{said}: a mitigation this loader does not recognise"


def no_return_thunk(vulns: dict[str, str]) -> bool:
    """True when a kernel that says `vulns` sends no return through a thunk, so that
    apply_returns() writes `ret` (an unrecognised line counts as a thunk)."""
    return return_thunk(vulns, None, None)[0] == "ret"


def patchable_entries(path) -> set[tuple[str, int]]:
    """(section, offset) of each function entry that __patchable_function_entries lists:
    the NOPs the compiler left for ftrace (-fpatchable-function-entry), which ftrace
    rewrites at load (on riscv64 the four 2-byte c.nop become two 4-byte nop)."""
    found = set()
    with open(path, "rb") as f:
        elf = ELFFile(f)
        rela = elf.get_section_by_name(".rela__patchable_function_entries")
        if rela is None:
            return found
        symtab = elf.get_section(rela["sh_link"])
        for r in rela.iter_relocations():
            sym = symtab.get_symbol(r["r_info_sym"])
            if isinstance(sym["st_shndx"], int):
                found.add((elf.get_section(sym["st_shndx"]).name, sym["st_value"] + r["r_addend"]))
    return found
