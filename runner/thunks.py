"""The return thunks an x86_64 kernel may send a module's returns through, as machine code.

A kernel built with CONFIG_MITIGATION_RETHUNK (Debian's is) compiles every
`ret` as `jmp __x86_return_thunk` and lists the site in `.return_sites`. At
module load, apply_returns() (arch/x86/kernel/alternative.c) either writes
`ret; int3` there, when the CPU needs no return mitigation, or a `jmp` to the
thunk arch/x86/kernel/cpu/bugs.c chose. The thunks differ in what one return
costs, so the native stage runs the chosen one's own instruction sequence.

The sequences below are written from Debian 12's linux-source-6.12
(6.12.118-1~deb12u1), arch/x86/lib/retpoline.S, and placed at the addresses
its linker script and alignment directives give them relative to a 2 MiB
boundary; tests/test_thunks.py checks them, byte for byte, against the
vmlinux the project builds from that tree. Only the path one return takes is
executed here: the untraining half of each sequence (run on kernel entry) is
laid out too, so the return lands where the kernel's would, but never run.

Call depth tracking (retbleed=stuff, Intel Skylake) also counts calls: each
direct call in `.call_sites` whose target is padded with NOPs is redirected
to a `sarq $5` on a per-CPU counter written into the padding
(arch/x86/kernel/callthunks.c), and the return thunk shifts the counter back,
refilling the return stack buffer when it runs dry. The counter is reached
through %gs, as in the kernel; the harness sets the process's GS base.
"""

import struct
from dataclasses import dataclass, field

from kelf.rewrites import THUNKS

# What the sequences follow (context.json records it beside the samples).
SOURCE = ("arch/x86/lib/retpoline.S, arch/x86/kernel/callthunks.c and "
          "arch/x86/include/asm/nospec-branch.h of linux-source-6.12 6.12.118-1~deb12u1")
THUNK_BASE = 0x4000_0000     # 2 MiB aligned, within a rel32 jump of the module's .text
ALIAS_BITS = (1 << 2) | (1 << 8) | (1 << 14) | (1 << 20)   # vmlinux.lds.S's SRSO ASSERT
# The per-CPU call depth counter: the "address" its %gs-relative instructions name (in the
# kernel, pcpu_hot + X86_call_depth); the harness sets GS base so that it lands on a cell
# of the image's data.
DEPTH_VA = 0x40

INT3, UD2, LFENCE, RET = b"\xcc", b"\x0f\x0b", b"\x0f\xae\xe8", b"\xc3"
LEA_RSP_8 = bytes.fromhex("488d642408")      # lea 0x8(%rsp),%rsp
NOP2 = bytes.fromhex("6690")                 # ASM_NOP2
ENDBR64 = bytes.fromhex("f30f1efa")          # SYM_FUNC_START's ENDBR (CONFIG_X86_KERNEL_IBT)
# The one difference between the trees the project builds: 6.12.118's SYM_FUNC_START
# (arch/x86/include/asm/linkage.h) ends in ENDBR, 7.3.4's does not, so only 6.12's
# call_depth_return_thunk starts with endbr64. A kernel from this version on is given 7.3's
# form; which release in between dropped it is not checked here.
NO_FUNC_ENDBR_FROM = (7, 3)


def align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def rel32(at: int, length: int, target: int) -> bytes:
    return struct.pack("<i", target - (at + length))


def call(at: int, target: int) -> bytes:
    return b"\xe8" + rel32(at, 5, target)


def jmp(at: int, target: int) -> bytes:
    return b"\xe9" + rel32(at, 5, target)


def gs_rip(prefix_opcode_modrm: bytes, at: int, imm: bytes) -> bytes:
    """`op %gs:DEPTH_VA(%rip)` with an immediate: the displacement counts from the end of
    the instruction."""
    length = len(prefix_opcode_modrm) + 4 + len(imm)
    return prefix_opcode_modrm + rel32(at, length, DEPTH_VA) + imm


def sarq_depth(at: int) -> bytes:
    """INCREMENT_CALL_DEPTH: sarq $5, %gs:pcpu_hot+X86_call_depth(%rip) (9 bytes)."""
    return gs_rip(bytes.fromhex("6548c13d"), at, b"\x05")


@dataclass(frozen=True)
class ThunkCode:
    """One thunk laid out: executable chunks at fixed addresses, the address a module's
    return jumps to (None: `ret` in place), and what call depth tracking needs."""
    name: str
    chunks: tuple[tuple[int, bytes], ...] = ()
    symbols: dict[str, int] = field(default_factory=dict)
    return_thunk: int | None = None
    counts_calls: bool = False
    depth_initial: int = -1      # CREDIT_CALL_DEPTH, as after kernel entry

    def call_thunk(self, pad: int) -> bytes:
        """The bytes callthunks.c writes into a function's padding at `pad`."""
        return sarq_depth(pad)


def srso(base: int) -> ThunkCode:
    """srso_untrain_ret / srso_safe_ret / srso_return_thunk: `.align 64`, then the skip
    that puts srso_safe_ret on the next 64-byte boundary."""
    safe = base + 64
    code = b"\x48\xb8"                                   # srso_untrain_ret: movabs $..., %rax
    code += LEA_RSP_8 + RET + INT3 + INT3                # srso_safe_ret (the movabs immediate)
    code += LFENCE
    code += call(safe - 2 + len(code), safe) + UD2
    thunk = align(safe - 2 + len(code), 16)              # SYM_CODE_START: 16-byte aligned
    chunks = ((safe - 2, code), (thunk, call(thunk, safe) + UD2))
    return ThunkCode("srso", chunks, {"srso_untrain_ret": safe - 2, "srso_safe_ret": safe,
                                      "srso_return_thunk": thunk}, thunk)


def srso_alias(base: int) -> ThunkCode:
    """srso_alias_untrain_ret at a 2 MiB boundary; srso_alias_safe_ret at the address with
    bits 2, 8, 14 and 20 set (the BTB alias on Zen 3/4), srso_alias_return_thunk after it."""
    safe = base | ALIAS_BITS
    thunk = safe + len(LEA_RSP_8 + RET + INT3)
    untrain = NOP2 + LFENCE + jmp(base + 5, thunk)
    chunks = ((base, untrain), (safe, LEA_RSP_8 + RET + INT3 + call(thunk, safe) + UD2))
    return ThunkCode("srso_alias", chunks, {"srso_alias_untrain_ret": base,
                                            "srso_alias_safe_ret": safe,
                                            "srso_alias_return_thunk": thunk}, thunk)


def untrain_ret(base: int) -> ThunkCode:
    """retbleed_untrain_ret (`test $0xcc, %bl` as entered) with retbleed_return_thunk, a
    plain `ret; int3`, on the next 64-byte boundary inside it."""
    thunk = base + 64
    code = b"\xf6" + RET + INT3 + LFENCE + b"\xeb\xf9" + INT3   # jmp retbleed_return_thunk
    return ThunkCode("untrain_ret", ((thunk - 1, code),),
                     {"retbleed_untrain_ret": thunk - 1, "retbleed_return_thunk": thunk}, thunk)


def call_depth(base: int, kernel: tuple[int, int] = (6, 12)) -> ThunkCode:
    """call_depth_return_thunk: `.align 64`, then SYM_FUNC_START's 16 bytes of call
    padding and ENDBR; shift the depth counter; while calls are credited, return; when it
    runs dry, refill the RSB with 16 calls and credit it again."""
    at = base + 16
    code = ENDBR64 if kernel < NO_FUNC_ENDBR_FROM else b""
    code += gs_rip(bytes.fromhex("6548c125"), at + len(code), b"\x05")   # shlq $5, depth
    code += b"\x74\x02" + RET + INT3                            # jz 1f; ret; int3
    code += (call(0, 6) + INT3) * 16                            # 1: call 2f; int3; 2: (x16)
    code += bytes.fromhex("4881c480000000")                     # add $0x80, %rsp
    code += gs_rip(bytes.fromhex("6548c705"), at + len(code), b"\xff" * 4)   # movq $-1
    code += RET + INT3
    return ThunkCode("call_depth", ((at, code),), {"call_depth_return_thunk": at}, at,
                     counts_calls=True)


def its(base: int) -> ThunkCode:
    """its_return_thunk: `.align 64, 0xcc; .skip 32, 0xcc`, so that its `ret` sits in the
    upper half of a cache line."""
    thunk = base + 32
    return ThunkCode("its", ((thunk, RET + INT3),), {"its_return_thunk": thunk}, thunk)


# GEN-for-each-reg.h's order: a register's number is its slot in __x86_indirect_thunk_array.
REGS = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
RETPOLINE_BASE = THUNK_BASE + (4 << 20)   # away from the return thunks' pages
RETPOLINE_THUNK_SIZE = 32


def retpolines(returns: "ThunkCode", base: int = RETPOLINE_BASE) -> tuple[int, bytes]:
    """__x86_indirect_thunk_array as one chunk: for each register, in its 32-byte slot,
    `call 1f; int3; 1: mov %reg, (%rsp)` and the return every `ret` of the kernel makes
    (RET: `ret; int3`, or a `jmp` to the return thunk, as apply_returns() patches the
    array's own return sites); int3 between."""
    array = bytearray(INT3 * (len(REGS) * RETPOLINE_THUNK_SIZE))
    for k, reg in enumerate(REGS):
        at = base + k * RETPOLINE_THUNK_SIZE
        mov = bytes([0x48 | (k >= 8) << 2, 0x89, 0x04 | (k & 7) << 3, 0x24])
        code = call(0, 6) + INT3 + mov
        code += (jmp(at + len(code), returns.return_thunk) if returns.return_thunk
                 else RET + INT3 * 4)
        array[at - base:at - base + len(code)] = code
    return base, bytes(array)


def retpoline_symbols(base: int = RETPOLINE_BASE) -> dict[str, int]:
    return {f"__x86_indirect_thunk_{reg}": base + k * RETPOLINE_THUNK_SIZE
            for k, reg in enumerate(REGS)}


def indirect(opcode: int, reg: int, length: int) -> bytes:
    """emit_indirect(): `call *%reg` or `jmp *%reg` (then int3) padded with NOPs to
    `length`, what apply_retpolines() writes without retpolines."""
    rex = b"\x41" if reg >= 8 else b""
    code = rex + bytes([0xFF, (0xD0 if opcode == 0xE8 else 0xE0) | (reg & 7)])
    if opcode == 0xE9 and len(code) < length:
        code += INT3
    return code + b"\x90" * (length - len(code))


LAYOUTS = {"srso": srso, "srso_alias": srso_alias, "untrain_ret": untrain_ret,
           "call_depth": call_depth, "its": its}


def thunk_code(name: str, base: int = THUNK_BASE, kernel: tuple[int, int] = (6, 12)) -> ThunkCode:
    """The thunk `name` of THUNKS laid out from `base` (2 MiB aligned), as the kernel of
    version `kernel` (major, minor) has it."""
    if name not in THUNKS:
        raise ValueError(f"unknown return thunk {name!r}; known: {', '.join(THUNKS)}")
    if name == "ret":
        return ThunkCode("ret")
    if name == "call_depth":
        return call_depth(base, kernel)
    return LAYOUTS[name](base)
