"""The sections through which an x86_64 kernel rewrites a module's code as it loads it.

Each entry of these sections is the address of one instruction in the module's
text. What the kernel writes there depends on the CPU and on what the kernel
chose against its vulnerabilities (arch/x86/kernel/alternative.c, ftrace), so
the bytes in the .ko file are not always the bytes that run.
"""

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
}


def no_return_thunk(vulns: dict[str, str]) -> bool:
    """True when a kernel that says `vulns` (its /sys/devices/system/cpu/vulnerabilities,
    file name -> line) sends no return through a thunk, so that apply_returns() writes
    `ret`: none of retbleed, SRSO and ITS is mitigated by one. Kernels word their thunks
    differently from version to version, so only these plain states count as "none"."""
    plain = ("Not affected", "Vulnerable")
    srso = vulns.get("spec_rstack_overflow", "Not affected")
    return (vulns.get("retbleed", "Not affected").startswith(plain)
            and (srso in plain or srso.startswith("Vulnerable: No microcode"))
            and vulns.get("indirect_target_selection", "Not affected").startswith(plain))


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
