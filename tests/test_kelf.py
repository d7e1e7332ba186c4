"""The jump table decoder and site check, on fixed entries (no kernel needed)."""

from kelf.jump_table import JumpEntry, site_problems

KEY = "__tracepoint_rust_sample_loaded"
FUNC = "_RNvXCs_15rust_print_mainNtB2_9RustPrint6Module4init"


def entry(site_bytes, addend=10, function=FUNC, key=KEY):
    return JumpEntry(".text", 0x653, 0x657, key, addend, function, 0x440, site_bytes)


def test_two_byte_nop_passes():
    assert site_problems([entry(bytes.fromhex("6690eb1bbf"))], "rust_print_main", KEY) == []


def test_five_byte_nop_passes():
    assert entry(bytes.fromhex("0f1f440000")).site_kind == "nop5"
    assert site_problems([entry(bytes.fromhex("0f1f440000"))], "rust_print_main", KEY) == []


def test_jmp_left_at_site_fails():
    # What the compiler emits before objtool runs: `eb 02` (jmp over the next jmp).
    problems = site_problems([entry(bytes.fromhex("eb02eb1bbf"))], "rust_print_main", KEY)
    assert problems and "jmp2" in problems[0]


def test_call_at_site_fails():
    problems = site_problems([entry(bytes.fromhex("e800000000"))], "rust_print_main", KEY)
    assert problems and "call" in problems[0]


def test_missing_or_duplicate_entry_fails():
    assert site_problems([], "rust_print_main", KEY)
    nop = entry(bytes.fromhex("6690eb1bbf"))
    assert site_problems([nop, nop], "rust_print_main", KEY)
    assert site_problems([entry(bytes.fromhex("6690eb1bbf"), key="other")], "rust_print_main", KEY)


def test_flag_bits():
    e = entry(bytes.fromhex("6690eb1bbf"), addend=8 + 2)
    assert e.objtool_nop and not e.branch_default
    on = entry(bytes.fromhex("6690eb1bbf"), addend=8 + 3)
    assert on.branch_default
    assert site_problems([on], "rust_print_main", KEY)


def arm_entry(site_bytes):
    return JumpEntry(".text", 0x3c, 0x48, "__tracepoint_tpbench_hit", 4, "tpbench_c_trace", 0x10,
                     site_bytes, "arm")


def test_arm_nop_passes_and_a_branch_left_there_fails():
    # A32 `nop` (e320f000) and `b` (ea000001), as they lie in memory.
    nop = arm_entry(bytes.fromhex("00f020e3"))
    assert nop.site_kind == "nop4" and nop.site_size == 4
    assert site_problems([nop], "tpbench_c_trace", "__tracepoint_tpbench_hit") == []
    # `mov r0, r0` (e1a00000): the NOP rustc's ARMv6 target assembles (mainline 7.3).
    assert arm_entry(bytes.fromhex("0000a0e1")).site_kind == "nop4"
    b = arm_entry(bytes.fromhex("010000ea"))
    assert b.site_kind == "b"
    assert "holds b (01 00 00 ea), not a NOP" in site_problems(
        [b], "tpbench_c_trace", "__tracepoint_tpbench_hit")[0]
