"""kCFI checks, static calls and the shadow call stack, read from real clang modules."""

from analysis import codegen, hardening
from tests.conftest import FIXTURES


def facts(name):
    return hardening.facts(codegen.parse_objdump((FIXTURES / name).read_text()), {})


def test_the_series_arm64_paths_each_pass_one_kcfi_check_and_the_helper_two_scs_ops():
    """6.12 built by clang for arm64: LTO inlines __traceiter_tpbench_hit() (another file's)
    into C's loop, into rust_do_trace_tpbench_hit() and into the helper, each with its check
    before the probe's indirect call (ldur, 2 x movk, cmp, b.eq); the helper saves its return
    address on the shadow call stack even while the event is off."""
    f = facts("objdump-clang-arm64-jump_label.txt")
    for who in ("C", "Rust", "Rust via a C helper"):
        assert f["paths"][who]["checks"] == [5]
        assert not f["paths"][who]["calls_iterator"] and not f["paths"][who]["static_call"]
    assert f["iterator_checks"] == [5]
    assert not f["out_of_line_trace"]
    assert f["shadow_stack"] == ["str x30, [x18], #8", "ldr x30, [x18, #-8]!"]


def test_mainline_arm64_reaches_a_lone_probe_through_a_static_call():
    """7.3 built by clang for arm64 calls its probes through static call trampolines (no
    check on the way to one probe; the iterator keeps its own), outlines trace_tpbench_hit(),
    and its helper returns before making a frame: no shadow call stack op while off."""
    f = facts("objdump-clang-mainline-arm64-jump_label.txt")
    for who in ("C", "Rust", "Rust via a C helper"):
        assert f["paths"][who]["checks"] == [] and f["paths"][who]["static_call"]
    assert f["iterator_checks"] == [5]
    assert f["out_of_line_trace"]
    assert f["shadow_stack"] == []


def test_x86_64_checks_are_three_instructions_before_the_iterators_call():
    """x86_64 reaches a lone probe through an inline static call; the iterator, which the
    static call runs for two or more probes, checks each (mov, add, je)."""
    code = codegen.parse_objdump((FIXTURES / "objdump-clang-x86_64-no_jump_label.txt").read_text())
    codegen.as_loaded(code, return_thunk=False)
    f = hardening.facts(code, {})
    assert f["iterator_checks"] == [3]
    assert all(p["static_call"] and p["checks"] == [] for p in f["paths"].values())
    assert f["shadow_stack"] == []
