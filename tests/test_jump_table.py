"""The jump table decoder and site check, on fixed entries (no kernel needed)."""

from analysis.jump_table import JumpEntry, site_problems

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
