"""The return thunks the native stage runs: which one a host's kernel chose, where each sits,
and (with the x86_64 kernel built) that their bytes are the kernel's own."""

import re
import subprocess
import tempfile

import pytest

from kelf.rewrites import THUNKS, return_thunk
from runner import thunks
from tests.conftest import MAINLINE_ARCHS, TEST_ARCHS

NONE = {"retbleed": "Not affected", "spec_rstack_overflow": "Not affected",
        "indirect_target_selection": "Not affected"}


@pytest.mark.parametrize("lines, vendor, family, want", [
    # This project's machines, as their /sys/devices/system/cpu/vulnerabilities read.
    ({"spec_rstack_overflow": "Vulnerable: Safe RET, no microcode"}, "AuthenticAMD", 25,
     "srso_alias"),                                     # AMD EPYC family 25 model 17 (issue 31)
    ({"spec_rstack_overflow": "Vulnerable: No microcode"}, "AuthenticAMD", 26, "ret"),
    ({}, "GenuineIntel", 6, "ret"),                     # Intel Xeon family 6 model 207
    ({"spec_rstack_overflow": "Mitigation: Safe RET"}, "AuthenticAMD", 23, "srso"),
    ({"spec_rstack_overflow": "Mitigation: Safe RET",
      "retbleed": "Mitigation: untrained return thunk; SMT enabled with STIBP protection"},
     "AuthenticAMD", 23, "srso"),                       # SRSO's choice is made last and wins
    ({"retbleed": "Mitigation: untrained return thunk; SMT vulnerable"}, "AuthenticAMD", 23,
     "untrain_ret"),
    ({"retbleed": "Mitigation: untrained return thunk; SMT vulnerable",
      "spec_rstack_overflow": "Mitigation: IBPB"}, "AuthenticAMD", 23, "ret"),
    ({"spec_rstack_overflow": "Vulnerable: Microcode, no safe RET"}, "AuthenticAMD", 25, "ret"),
    ({"retbleed": "Mitigation: Stuffing"}, "GenuineIntel", 6, "call_depth"),
    ({"indirect_target_selection": "Mitigation: Retpolines, Stuffing RSB"}, "GenuineIntel", 6,
     "call_depth"),
    ({"indirect_target_selection": "Mitigation: Aligned branch/return thunks"}, "GenuineIntel",
     6, "its"),
    ({"retbleed": "Mitigation: Enhanced IBRS"}, "GenuineIntel", 6, "ret"),
    ({"retbleed": "Mitigation: Something New"}, "GenuineIntel", 6, None),
])
def test_the_thunk_is_chosen_as_bugs_c_chooses_it(lines, vendor, family, want):
    name, why = return_thunk(dict(NONE, **lines), vendor, family)
    assert name == want
    for line in lines.values():
        assert line in why


def test_every_thunk_sits_where_the_kernel_puts_it():
    """The alignments of retpoline.S and the SRSO alias of vmlinux.lds.S, from a 2 MiB
    boundary."""
    base = thunks.THUNK_BASE
    assert base % (2 << 20) == 0
    alias = thunks.thunk_code("srso_alias").symbols
    assert alias["srso_alias_untrain_ret"] == base
    assert alias["srso_alias_safe_ret"] - base == (1 << 2) | (1 << 8) | (1 << 14) | (1 << 20)
    assert thunks.thunk_code("srso").symbols["srso_safe_ret"] % 64 == 0
    assert thunks.thunk_code("untrain_ret").symbols["retbleed_return_thunk"] % 64 == 0
    assert thunks.thunk_code("its").symbols["its_return_thunk"] % 64 == 32
    assert thunks.thunk_code("call_depth").symbols["call_depth_return_thunk"] % 64 == 16
    for name in THUNKS:
        code = thunks.thunk_code(name)
        assert (code.return_thunk is None) == (name == "ret")
        if code.return_thunk is not None:
            assert code.symbols[THUNKS[name][0]] == code.return_thunk


def disassemble(data: bytes, at: int, names: dict[int, str]) -> list[str]:
    """objdump's reading of `data` at address `at`: mnemonic and operands, with branch
    targets named from `names` (or given from `at`) and %rip-relative displacements left
    out."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(data)
        f.flush()
        out = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64",
                              f"--adjust-vma={at:#x}", f.name],
                             capture_output=True, text=True, check=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r"\s*[0-9a-f]+:\s+(?:[0-9a-f]{2} )+\s*(.*)$", line)
        if not m or not m.group(1):
            continue
        text = re.sub(r"\s+", " ", m.group(1).split("#")[0].strip())
        text = re.sub(r"-?0x[0-9a-f]+\(%rip\)", "(%rip)", text)
        text = re.sub(r"\b(call|jmp|je)\s+0x([0-9a-f]+)",
                      lambda m: f"{m.group(1)} " + names.get(int(m.group(2), 16),
                                                      f".+{int(m.group(2), 16) - at:#x}"),
                      text)
        insns.append(text)
    return insns


def kernel_symbols(vmlinux) -> dict[str, int]:
    out = subprocess.run(["nm", str(vmlinux)], capture_output=True, text=True, check=True).stdout
    return {name: int(addr, 16) for addr, _, name in (line.split()[:3] for line in
                                                       out.splitlines() if len(line.split()) >= 3)}


def kernel_bytes(vmlinux, address: int, length: int) -> bytes:
    """`length` bytes of vmlinux's loaded image at `address`, from its section headers."""
    out = subprocess.run(["readelf", "-SW", str(vmlinux)], capture_output=True, text=True,
                         check=True).stdout
    for m in re.finditer(r"\]\s+(\S+)\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", out):
        start, offset, size = (int(m.group(k), 16) for k in (2, 3, 4))
        if start <= address < start + size:
            with open(vmlinux, "rb") as f:
                f.seek(offset + address - start)
                return f.read(length)
    raise AssertionError(f"{address:#x} is in no section of {vmlinux}")


def vmlinux_of(built, kernel: str):
    """The x86_64 jump_label vmlinux of `kernel`, or a skip when this test run has none."""
    if "x86_64" not in (TEST_ARCHS if kernel == "series" else MAINLINE_ARCHS):
        pytest.skip(f"no x86_64 {kernel} kernel in this test run")
    return built(kernel, "x86_64", "jump_label").build / "vmlinux"


@pytest.mark.parametrize("kernel", ["series", "mainline"])
@pytest.mark.parametrize("name", [t for t in THUNKS if t != "ret"])
def test_each_thunk_is_the_kernels_own_code(built, kernel, name):
    """Each symbol of the thunk, as laid out here, decodes to the instructions the x86_64
    vmlinux (Debian's config, every return mitigation built in) holds at that symbol,
    branch targets named; where the kernel aligns or aliases a symbol, the same alignment
    or alias holds in vmlinux. The sequences follow 6.12.118; mainline 7.3's vmlinux shows
    whether they still hold for the kernels hosts run now."""
    vmlinux = vmlinux_of(built, kernel)
    theirs = kernel_symbols(vmlinux)
    code = thunks.thunk_code(name, kernel={"series": (6, 12), "mainline": (7, 3)}[kernel])
    ours_names = {a: s for s, a in code.symbols.items()}
    their_names = {theirs[s]: s for s in code.symbols if s in theirs}
    for symbol, at in code.symbols.items():
        assert symbol in theirs, f"vmlinux has no {symbol}"
        chunk_at, chunk = next((a, b) for a, b in code.chunks if a <= at < a + len(b))
        later = [a for a in code.symbols.values() if at < a < chunk_at + len(chunk)]
        end = min(later, default=chunk_at + len(chunk))
        mine = chunk[at - chunk_at:end - chunk_at]
        kernel = kernel_bytes(vmlinux, theirs[symbol], len(mine))
        assert disassemble(mine, at, ours_names) == disassemble(kernel, theirs[symbol],
                                                                their_names), symbol
        assert at % 64 == theirs[symbol] % 64, f"{symbol}: placed otherwise in its cache line"
    if name == "call_depth":
        # callthunks.c's template, written into each callee's padding.
        template = code.call_thunk(0x1000)
        kernel = kernel_bytes(vmlinux, theirs["skl_call_thunk_template"], len(template))
        assert disassemble(template, 0x1000, {}) == disassemble(
            kernel, theirs["skl_call_thunk_template"], {})
        assert theirs["skl_call_thunk_tail"] - theirs["skl_call_thunk_template"] == len(template)
    if name == "srso_alias":
        assert (theirs["srso_alias_safe_ret"] - theirs["srso_alias_untrain_ret"]
                == code.symbols["srso_alias_safe_ret"] - code.symbols["srso_alias_untrain_ret"])


@pytest.mark.parametrize("lines, want", [
    ({"spectre_v2": "Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not "
                    "affected; BHI: Not affected"}, "retpoline"),      # this AMD EPYC's kernel
    ({"spectre_v2": "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; PBRSB-eIBRS: "
                    "SW sequence; BHI: Vulnerable"}, "plain"),         # the Intel Xeon's
    ({"spectre_v2": "Mitigation: Enhanced / Automatic IBRS",
      "indirect_target_selection": "Mitigation: Aligned branch/return thunks"}, None),
    ({"spectre_v2": "Mitigation: LFENCE"}, None),
    ({"spectre_v2": "Not affected"}, "plain"),
])
def test_indirect_branches_are_made_as_the_kernel_makes_them(lines, want):
    from kelf.rewrites import indirect_branches
    name, why = indirect_branches(lines)
    assert name == want and lines["spectre_v2"] in why


def test_the_retpoline_array_holds_each_register_in_its_slot():
    """__x86_indirect_thunk_<reg> at its 32-byte slot: `call 1f; int3; 1: mov %reg,(%rsp)`,
    then the return the kernel makes."""
    plain = thunks.retpolines(thunks.thunk_code("ret"))
    through = thunks.retpolines(thunks.thunk_code("srso_alias"))
    symbols = thunks.retpoline_symbols()
    for reg in ("rax", "rdi", "r8", "r15"):
        at = symbols[f"__x86_indirect_thunk_{reg}"]
        for base, array in (plain, through):
            mine = array[at - base:at - base + 16]
            insns = disassemble(mine, at, {})
            assert insns[:3] == ["call .+0x6", "int3", f"mov %{reg},(%rsp)"], insns
        assert disassemble(plain[1][at - plain[0]:at - plain[0] + 11], at, {})[3] == "ret"
        assert disassemble(through[1][at - through[0]:at - through[0] + 15], at,
                           {thunks.thunk_code("srso_alias").return_thunk: "thunk"})[3] == \
            "jmp thunk"


@pytest.mark.parametrize("kernel", ["series", "mainline"])
def test_the_retpolines_are_the_kernels_own_code(built, kernel):
    vmlinux = vmlinux_of(built, kernel)
    theirs = kernel_symbols(vmlinux)
    base, array = thunks.retpolines(thunks.thunk_code("ret"))
    for name, at in thunks.retpoline_symbols().items():
        if name.endswith("_rsp"):
            continue
        mine = disassemble(array[at - base:at - base + 10], at, {})[:3]
        kernel_code = kernel_bytes(vmlinux, theirs[name], 10)
        assert mine == disassemble(kernel_code, theirs[name], {})[:3], name
        assert theirs[name] - theirs["__x86_indirect_thunk_array"] == at - base, name
