"""The codegen checker on objdump listings of real tpbench modules (fixtures)."""

import pytest

from analysis import codegen
from analysis.codegen import Site
from runner import config as cfg
from runner import kernel
from tests.conftest import FIXTURES

VARIANTS = ["c_empty", "rust_empty", "c_trace", "rust_trace", "rust_helper", "rust_load"]
# Offsets of the __jump_table sites in that module (from kelf.jump_table on the .ko).
SITES = {"tpbench_c_trace": [Site("tpbench_c_trace", 0x21a, "nop2", "66 90")],
         "tpbench_rust_trace": [Site("tpbench_rust_trace", 0x4d4, "nop2", "66 90")],
         "tpbench_trace_helper": [Site("tpbench_trace_helper", 0x415, "nop2", "66 90")]}
MEASURED = {"c_empty": 4, "rust_empty": 3, "c_trace": 6, "rust_trace": 4, "rust_helper": 9,
            "rust_load": 6}


def funcs(name):
    return codegen.parse_objdump((FIXTURES / name).read_text())


def test_parser_reads_functions_and_relocations():
    f = funcs("objdump-tpbench-jump_label.txt")
    trace = f["tpbench_rust_trace"]
    assert trace.insns[0].mnemonic == "endbr64"
    calls = [i for i in trace.insns if i.mnemonic == "call"]
    assert [c.reloc for c in calls] == ["rust_do_trace_tpbench_hit"]
    assert f["tpbench_c_trace"].insns[f["tpbench_c_trace"].at(0x21a)].raw == bytes.fromhex("6690")


def test_passing_module():
    f = funcs("objdump-tpbench-jump_label.txt")
    assert codegen.check_codegen(f, SITES, MEASURED, VARIANTS, jump_label=True) == []
    path = codegen.disabled_path(f, "tpbench_rust_helper", {(".text", a) for a in (0x21a, 0x4d4, 0x415)})
    assert [fn for fn, _ in path].count("tpbench_trace_helper") == 4   # endbr64; mov; NOP; ret


def test_jmp_left_at_site_fails():
    sites = dict(SITES, tpbench_rust_trace=[Site("tpbench_rust_trace", 0x4d4, "jmp2", "eb 02")])
    failures = codegen.check_codegen(funcs("objdump-tpbench-jump_label.txt"), sites, MEASURED,
                                     VARIANTS, jump_label=True)
    assert failures == ["tpbench_rust_trace: site at 0x4d4 holds jmp2 (eb 02), not a NOP"]


def test_call_in_disabled_path_fails():
    # The generic path before patch 7 called a C helper to read the key count.
    f = funcs("objdump-tpbench-no_jump_label-before-patch7.txt")
    measured = dict(MEASURED, c_trace=7, rust_trace=10, rust_helper=11)
    failures = codegen.check_codegen(f, {}, measured, VARIANTS, jump_label=False)
    # The helper lives in vmlinux, so its 3 instructions are not counted either.
    assert failures == ["tpbench_rust_trace: the disabled path calls rust_helper_static_key_count",
                        "tpbench_rust_trace: 7 instructions per iteration in the disassembly, "
                        "10 measured"]


def test_static_count_must_equal_measurement():
    f = funcs("objdump-tpbench-jump_label.txt")
    failures = codegen.check_codegen(f, SITES, dict(MEASURED, rust_trace=5), VARIANTS, True)
    assert failures == ["tpbench_rust_trace: 4 instructions per iteration in the disassembly, "
                        "5 measured"]


def test_missing_site_entry_fails():
    sites = {k: v for k, v in SITES.items() if k != "tpbench_c_trace"}
    failures = codegen.check_codegen(funcs("objdump-tpbench-jump_label.txt"), sites, None,
                                     VARIANTS, jump_label=True)
    assert "tpbench_c_trace: 0 __jump_table entries, expected 1" in failures


def test_listing_puts_c_beside_rust_and_marks_the_path():
    text = codegen.listing(funcs("objdump-tpbench-jump_label.txt"), SITES, VARIANTS)
    row = next(l for l in text.splitlines() if "<tpbench_c_trace>:" in l)
    assert "<tpbench_rust_trace>:" in row
    assert "disabled path: 6 instructions per iteration" in text
    assert "*  4d4: xchg %ax,%ax  SITE" in text


def test_checks_made_names_what_ran_and_what_was_skipped():
    ran, skipped = codegen.checks_made(MEASURED, VARIANTS, True, "")
    assert any("equal the per-call cost measured under icount, for 6 variants" in c for c in ran)
    assert skipped == []
    # A KVM run measures cycles: the count check cannot run, and says why.
    ran, skipped = codegen.checks_made(None, VARIANTS, True, "the guest ran under kvm")
    assert not any("per-call cost" in c for c in ran)
    assert skipped == ["instructions counted against instructions measured: the guest ran "
                       "under kvm"]
    # A partial run: the checks of the absent variants are skipped, not claimed.
    ran, skipped = codegen.checks_made({"c_trace": 6}, ["c_empty", "c_trace"], True, "")
    assert "no call on the disabled path of c_trace" in ran
    assert "the checks of rust_trace, rust_helper: not in this run" in skipped
    assert "the count check of c_empty: no measurement" in skipped


def test_absent_variants_are_not_failed():
    f = funcs("objdump-tpbench-jump_label.txt")
    assert codegen.check_codegen(f, {}, None, ["c_empty", "rust_empty"], jump_label=True) == []


def inverted(old_binutils=False):
    text = (FIXTURES / "objdump-inverted-layout-x86_64.txt").read_text()
    if old_binutils:   # binutils before 2.36 print the q suffix
        text = (text.replace("\tcall   ", "\tcallq  ").replace("\tjmp    ", "\tjmpq   ")
                .replace("\tret", "\tretq"))
    return codegen.parse_objdump(text)


@pytest.mark.parametrize("old_binutils", [False, True])
def test_inverted_layout_is_walked_by_what_off_means(old_binutils):
    """The count test jumps *into* an inline enabled block and the off path jumps over
    it: the walk must take the count-of-0 side, not assume forward branches are taken."""
    f = inverted(old_binutils)
    path = [i.mnemonic.rstrip("q") for _, i in codegen.disabled_path(f, "tpbench_inverted", set())]
    assert path == ["mov", "test", "jg", "jmp", "add", "cmp", "jne"]
    path = [i.mnemonic for _, i in codegen.disabled_path(f, "tpbench_inverted_cmp", set())]
    assert path == ["cmpl", "jne", "inc", "cmp", "jb"]          # count 0: jne falls through


def test_indirect_jump_stops_the_walk_with_the_reason():
    with pytest.raises(codegen.WalkError, match="indirect jump at 0x"):
        codegen.disabled_path(inverted(), "tpbench_indirect", set())


def test_sites_are_matched_by_section_and_offset():
    """A __jump_table entry names a section and an offset; the same offset in another
    section (objdump numbers each section from 0) is not a site."""
    f = funcs("objdump-tpbench-jump_label.txt")
    right = dict(SITES)
    wrong = {k: [Site(s.function, s.offset, s.kind, s.raw, ".init.text") for s in v]
             for k, v in SITES.items()}
    text = dict((v, t) for v, _, t in codegen.path_summary(f, right, ["rust_trace"]))
    assert "xchg (NOP site)" in text["rust_trace"]
    text = dict((v, t) for v, _, t in codegen.path_summary(f, wrong, ["rust_trace"]))
    assert "NOP site" not in text["rust_trace"]


# riscv64 (clang 14 and rustc 1.96), from `riscv64-linux-gnu-objdump -dr -j .text` of the
# modules of a real run; the sites are those kelf.jump_table reads from its .ko.
RISCV_SITES = {(".text", a) for a in (0x2a0, 0x3c0, 0x4fc, 0x544)}
RISCV_PATHS = {
    "jump_label": {
        "c_trace": "nop (NOP site); add; bne (taken)",
        "rust_trace": "nop (NOP site); add; bne (taken)",
        "rust_load": "lw (load); blez (taken); add; bne (taken)",
        "rust_count_call": "mv; auipc; jalr tpbench_key_count; lw (load); ret; blez (taken); add; "
                           "bne (taken)",
    },
    "no_jump_label": {
        "c_trace": "lw (load); blez (taken); add; bne (taken)",
        "rust_trace": "lw (load); blez (taken); add; bne (taken)",
        "rust_helper": "add; auipc; jalr tpbench_trace_helper; add; sd; sd; sd; auipc; mv; lw (load); "
                       "blez (taken); ld (load); ld (load); ld (load); add; ret; mv; bne (taken)",
    },
}


def test_riscv64_parser_merges_local_labels_and_names_calls():
    f = funcs("objdump-tpbench-riscv64-jump_label.txt")
    assert not [name for name in f if name.startswith(".L")]
    trace = f["tpbench_c_trace"]
    # objdump labels .Ltmp0 and .LBB2_7 inside the function; they stay in it.
    assert trace.insns[-1].mnemonic == "ret" and len(trace.insns) == 33
    site = trace.insns[trace.at(0x2a0)]
    assert site.raw == bytes.fromhex("13000000") and site.mnemonic == "nop"
    assert trace.insns[0].raw == bytes.fromhex("0111")        # c.addi sp,-32, memory order
    calls = [i for i in trace.insns if codegen.is_call(i.mnemonic)]
    assert [(c.mnemonic, c.reloc) for c in calls] == [("jalr", "__traceiter_tpbench_hit")]
    assert not codegen.is_conditional("jal") and not codegen.is_conditional("jr")


@pytest.mark.parametrize("config", ["jump_label", "no_jump_label"])
def test_riscv64_disabled_paths(config):
    f = funcs(f"objdump-tpbench-riscv64-{config}.txt")
    # Without CONFIG_JUMP_LABEL, LLVM merged the two identical Rust loops.
    codegen.add_aliases(f, {"tpbench_rust_trace": ["tpbench_rust_load"]})
    sites = {"any": [Site("any", a, "nop4", "13 00 00 00") for _, a in RISCV_SITES]
             if config == "jump_label" else []}
    summary = {v: text for v, _, text in codegen.path_summary(f, sites, list(RISCV_PATHS[config]))}
    assert summary == RISCV_PATHS[config]


# arm (ARMv7, GCC 12, A32), from `arm-linux-gnueabihf-objdump -dr -j .text` of a real run's
# modules, which have the C variants alone (no Rust on 32-bit arm in 6.12).
ARM_PATHS = {
    "jump_label": {
        "c_empty": "cmp; bxeq; add; b (taken)",
        "c_trace": "cmp; popeq; nop (NOP site); b (taken); add; b (taken)",
    },
    # The key's address comes from a literal word (`ldr r6, [pc, #40]`) with its relocation.
    "no_jump_label": {
        "c_trace": "cmp; popeq; ldr (load); cmp; ble (taken); add; b (taken)",
    },
}


@pytest.mark.parametrize("config", ["jump_label", "no_jump_label"])
def test_arm_disabled_paths(config):
    f = funcs(f"objdump-tpbench-arm-{config}.txt")
    sites = {"any": [Site("any", a, "nop4", "00 f0 20 e3") for a in (0x64, 0x194)]
             if config == "jump_label" else []}
    summary = {v: text for v, _, text in codegen.path_summary(f, sites, list(ARM_PATHS[config]))}
    assert summary == ARM_PATHS[config]
    # A conditional return inside the loop is one instruction that falls through, not a return.
    assert not codegen.is_return("bxeq", "lr") and codegen.is_return("bx", "lr")
    assert codegen.is_return("pop", "{r4, r5, r6, pc}") and not codegen.is_return("pop", "{r4}")
    assert codegen.arm_condition("ble") == "le" and codegen.arm_condition("bl") is None


# loongarch64 (GCC 14 and rustc 1.96 of the Debian 13 root), from `loongarch64-linux-gnu-objdump
# -dr -j .text` of a real run's modules. The module takes the key's address from the GOT
# (pcalau12i + ld.d with R_LARCH_GOT_PC_LO12) and reads the count through it.
LOONGARCH_SITES = {"jump_label": (0x90, 0x260, 0x38c, 0x40c), "no_jump_label": ()}
LOONGARCH_PATHS = {
    "jump_label": {
        "c_trace": "bne (taken); nop (NOP site); b (taken); addi.d; b (taken)",
        "rust_trace": "nop (NOP site); addi.d; bne (taken)",
        "rust_helper": "addi.d; bl tpbench_trace_helper; nop (NOP site); ret; move; bne (taken)",
        "rust_load": "ld.w (load); blez (taken); addi.d; bne (taken)",
        "rust_count_call": "move; bl tpbench_key_count; ldptr.w (load); slli.w; ret; blez (taken); "
                           "addi.d; bne (taken)",
    },
    # `slli.w rd, rj, 0` sign-extends the count and keeps it 0.
    "no_jump_label": {
        "c_trace": "bne (taken); ldptr.w (load); slli.w; blez (taken); addi.d; b (taken)",
        "rust_trace": "ld.w (load); blez (taken); addi.d; bne (taken)",
        "rust_helper": "addi.d; bl tpbench_trace_helper; pcalau12i; addi.d; ldptr.w (load); slli.w; "
                       "blez (taken); ret; move; bne (taken)",
    },
}
# The helper's object defines the tracepoint and reaches it through its section anchor
# .LANCHOR0 (kelf.jump_table.tracepoint_anchor_relocations reads these from the .ko).
LOONGARCH_ANCHORS = {"jump_label": set(), "no_jump_label": {(".text", 0x26c), (".text", 0x270)}}


@pytest.mark.parametrize("config", list(LOONGARCH_PATHS))
def test_loongarch64_disabled_paths(config):
    f = funcs(f"objdump-tpbench-loongarch64-{config}.txt")
    codegen.name_tracepoint_anchors(f, LOONGARCH_ANCHORS[config])
    # Without CONFIG_JUMP_LABEL, LLVM merged the two identical Rust loops (as on riscv64).
    codegen.add_aliases(f, {"tpbench_rust_trace": ["tpbench_rust_load"]})
    sites = {"any": [Site("any", a, "nop4", "00 00 40 03") for a in LOONGARCH_SITES[config]]}
    summary = {v: text for v, _, text in
               codegen.path_summary(f, sites, list(LOONGARCH_PATHS[config]))}
    assert summary == LOONGARCH_PATHS[config]
    # The GOT load gives the key's address, not its count: the branch on the count decides.
    load = f["tpbench_rust_load"]
    got = next(i for i in load.insns if i.reloc_type == "R_LARCH_GOT_PC_LO12")
    assert codegen.got_load(got) and got.mnemonic == "ld.d"
    assert codegen.is_call("jirl") and codegen.is_return("ret")


def test_arm_zero_literal_words_and_conditional_returns():
    """objdump prints a run of zero literal words as "..." with their relocations alone; the
    parser gives each relocation its word, so the key's address is known. A conditional
    return (`bxle lr`) is decided by the test of the key, as a branch is."""
    text = """
00000144 <tpbench_x>:
 1a0:\teaffffed \tb\t15c <tpbench_x+0x18>
\t...
\t\t\t1a4: R_ARM_ABS32\ttpbench_txns
\t\t\t1a8: R_ARM_ABS32\t__tracepoint_tpbench_txn
"""
    (f,) = codegen.parse_objdump(text).values()
    assert [(i.addr, i.mnemonic, i.reloc) for i in f.insns] == [
        (0x1a0, "b", None), (0x1a4, ".word", "tpbench_txns"),
        (0x1a8, ".word", "__tracepoint_tpbench_txn")]
    assert codegen.arm_conditional_return("bxle", "lr") == "le"
    assert codegen.arm_conditional_return("popeq", "{r4, pc}") == "eq"
    assert codegen.arm_conditional_return("bx", "lr") is None
    assert codegen.arm_conditional_return("bxle", "r3") is None


def test_unrolled_loop_is_counted_per_source_iteration():
    """GCC 14 (mainline's toolchain) unrolls the empty C loop twice: one trip of 4
    instructions runs 2 iterations, and the slope fitted over N lies near 2, not on it."""
    f = funcs("objdump-mainline-x86_64-c_empty-unrolled.txt")
    path = codegen.disabled_path(f, "tpbench_c_empty", set())
    assert [i.mnemonic for _, i in path] == ["lea", "add", "cmp", "jne"]
    assert codegen.iterations_per_trip(path) == 2
    assert codegen.check_codegen(f, {}, {"c_empty": 1.99}, ["c_empty"], jump_label=True) == []
    assert codegen.check_codegen(f, {}, {"c_empty": 3}, ["c_empty"], jump_label=True) == [
        "tpbench_c_empty: 4 instructions per trip, unrolled 2 times: 2 per iteration in the "
        "disassembly, 3 measured"]
    (row,) = codegen.path_summary(f, {}, ["c_empty"])
    assert row[:2] == ("c_empty", "2 (4 per trip, unrolled 2 times)")


@pytest.mark.parametrize("fixture, loops", [
    ("objdump-tpbench-jump_label.txt", VARIANTS),
    ("objdump-tpbench-riscv64-jump_label.txt", ["c_empty", "c_trace", "rust_trace"]),
    ("objdump-tpbench-loongarch64-no_jump_label.txt", ["c_empty", "c_trace"]),
    ("objdump-tpbench-arm-jump_label.txt", ["c_empty", "c_trace"]),
])
def test_loops_that_count_by_one_run_one_iteration_per_trip(fixture, loops):
    f = funcs(fixture)
    for loop in loops:
        path = codegen.disabled_path(f, codegen.LOOP_PREFIX + loop, set())
        assert codegen.iterations_per_trip(path) == 1, (fixture, loop)


def mainline_without_jump_labels(arch="x86_64", part="rust_trace"):
    """Mainline's Rust sites without CONFIG_JUMP_LABEL (7.3.4, distro), with the kernel
    crate's helper they call as a run keeps it from vmlinux."""
    f = funcs(f"objdump-mainline-{arch}-no_jump_label-{part}.txt")
    f.update(codegen.kernel_functions(
        (FIXTURES / f"kernel-helpers-mainline-{arch}-no_jump_label.txt").read_text()))
    codegen.as_loaded(f, return_thunk=False)
    return f


def test_the_walk_follows_a_call_into_the_kernels_helper():
    f = mainline_without_jump_labels()
    helper = f[codegen.MAINLINE_COUNT_HELPER]
    # vmlinux names the return thunk by its alias, __pi___x86_return_thunk: the kernel's `ret`.
    assert [i.mnemonic for i in helper.insns] == ["endbr64", "mov", "ret"]
    path = codegen.disabled_path(f, "tpbench_rust_trace", set())
    assert [(fn == codegen.MAINLINE_COUNT_HELPER, i.mnemonic) for fn, i in path] == [
        (False, "inc"), (False, "cmp"), (False, "je"), (False, "mov"), (False, "call"),
        (True, "endbr64"), (True, "mov"), (True, "ret"), (False, "test"), (False, "jle")]


def test_mainlines_call_to_read_the_count_is_expected_only_where_it_is_by_design():
    f = mainline_without_jump_labels()
    measured = {"rust_trace": 10}
    assert codegen.check_codegen(f, {}, measured, ["rust_trace"], jump_label=False,
                                 count_helper=codegen.MAINLINE_COUNT_HELPER) == []
    assert codegen.check_codegen(f, {}, measured, ["rust_trace"], jump_label=False) == [
        "tpbench_rust_trace: the disabled path calls rust_helper_static_key_count"]
    ran, _ = codegen.checks_made(measured, ["rust_trace"], False, "",
                                 codegen.MAINLINE_COUNT_HELPER)
    assert ran[1].startswith("one call, to the kernel's rust_helper_static_key_count()")


# A module built with rust_txn_lazy (series with patch 8, x86_64, distro, jump labels).
LAZY_KO = FIXTURES / "tpbench-x86_64-jump_label-lazy.ko"


def test_a_lazy_site_that_reads_an_argument_while_off_fails_its_check():
    """rust_txn_lazy's disabled path loads nothing beyond its baseline, as the bare site; put
    rust_txn's code (whose three field loads come before the key's test) in its place and the
    check names the loads."""
    f = codegen.parse_objdump(kernel.disassemble(cfg.ARCHS["x86_64"], LAZY_KO))
    codegen.as_loaded(f, return_thunk=False)
    sites = codegen.sites_by_function(LAZY_KO)
    variants = ["rust_base", "rust_trace", "rust_txn_base", "rust_txn", "rust_txn_lazy"]
    assert codegen.check_codegen(f, sites, None, variants, True) == []
    assert codegen.lazy_loads(codegen.walk_all(f, codegen.site_offsets(sites), variants)) == (0, 0)
    f["tpbench_rust_txn_lazy"] = f["tpbench_rust_txn"]
    assert codegen.check_codegen(f, sites, None, variants, True) == [
        "tpbench_rust_txn_lazy: 3 loads on the disabled path beyond its baseline's, where the "
        "bare site has 0: an argument is read while the event is off"]


def test_taken_branches_count_what_an_instruction_count_cannot_see():
    """Rows of the committed run's paths-x86_64-no_jump_label.tsv (series 6.12, before the
    layout fix): C's 16 sites fall through, Rust's take the branch over each call but the
    last (whose skip is the loop's back edge); an unrolled path counts per iteration."""
    from analysis import sites
    rows = [["c_base", "3", "add; cmp; jb (taken)"],
            ["rust_base", "3", "inc; cmp; jb (taken)"],
            ["c_dense", "51", "; ".join(["mov (load); test; jg"] * 16 + ["add; cmp; jne (taken)"])],
            ["rust_dense", "51", "; ".join(["inc; cmp; je"] + ["mov (load); test; jle (taken)"] * 16)],
            ["unrolled", "4 (8 per trip, unrolled 2 times)",
             "add; bnez (taken); add; beq; add; bnez (taken); add; bnez (taken)"]]
    assert sites.taken_branches(rows, "c_dense", "c_base") == 0
    assert sites.taken_branches(rows, "rust_dense", "rust_base") == 15
    assert sites.taken_branches(rows, "unrolled", "c_base") == 0.5
    assert sites.taken_branches(rows, "missing", "c_base") is None


def test_a_loongarch64_call_into_the_kernel_goes_through_the_modules_plt():
    """The module loader sends `bl rust_helper_static_key_count` through a PLT entry of four
    instructions: 12 per iteration, as measured (mainline 7.3.4, loongarch64, QEMU 11.1),
    where the call straight into the helper would be 8."""
    f = mainline_without_jump_labels("loongarch64")
    path = codegen.disabled_path(f, "tpbench_rust_trace", set())
    plt = "rust_helper_static_key_count@plt"
    assert [(fn, i.mnemonic) for fn, i in path if fn != "tpbench_rust_trace"] == [
        (plt, "lu12i.w"), (plt, "lu32i.d"), (plt, "lu52i.d"), (plt, "jr"),
        ("rust_helper_static_key_count", "ldptr.w"), ("rust_helper_static_key_count", "slli.w"),
        ("rust_helper_static_key_count", "ret")]
    assert len(path) == 12
    assert codegen.check_codegen(f, {}, {"rust_trace": 12}, ["rust_trace"], jump_label=False,
                                 count_helper=codegen.MAINLINE_COUNT_HELPER) == []


def test_an_arm_literal_pool_reload_is_not_an_argument_read():
    """Mainline 7.3.4's arm rust_txn_lazy reloads &tpbench_txns from its literal pool each trip
    (the call to read the key clobbers r1) but reads no field of the transaction until the
    key is on: its loads beyond its baseline are the bare site's one, the key's count."""
    f = mainline_without_jump_labels("arm", "lazy")
    variants = ["rust_base", "rust_trace", "rust_txn_base", "rust_txn_lazy"]
    walks = codegen.walk_all(f, set(), variants)
    lazy = [i for fn, i in walks["rust_txn_lazy"] if codegen.loads_data(i)]
    assert [codegen.operands(i)[-1] for i in lazy] == ["[pc, #84]", "[r0]"]
    assert codegen.lazy_loads(walks) == (1, 1)


def test_a_comment_that_names_jump_labels_does_not_set_them():
    from analysis.__main__ import option_set
    comment = "# GKI: CONFIG_JUMP_LABEL=y; the configs set it either way.\n"
    njl = (cfg.REPO / "configs" / "no_jump_label.config").read_text()
    jl = (cfg.REPO / "configs" / "jump_label.config").read_text()
    assert not option_set(comment + njl) and option_set(comment + jl)
    assert not option_set(jl + njl)        # the last fragment wins
    # Mainline's clang build inlines the kernel crate's helpers: no count helper to call.
    clang = (cfg.REPO / "configs" / "clang-mainline.config").read_text()
    assert option_set(njl + clang, "CONFIG_RUST_INLINE_HELPERS")
    assert not option_set(njl, "CONFIG_RUST_INLINE_HELPERS")


def clang_without_jump_labels():
    """objdump -dr of the clang profile's module (clang 22, full LTO, kCFI; x86_64 JL=n):
    each C function in a section of its own, loops rotated, `cs jmp __x86_return_thunk`."""
    f = funcs("objdump-clang-x86_64-no_jump_label.txt")
    codegen.as_loaded(f, return_thunk=False)
    return f


def test_clangs_rotated_loop_is_walked_from_its_own_head():
    """clang puts the enabled path's preempt_enable() above the loop's head: the lowest
    backward target is not on the disabled path, the next one is. C's site is then
    `cmpl $0x0, key; jle` (2 instructions), as measured."""
    f = clang_without_jump_labels()
    assert f["tpbench_c_trace"].section == ".text.tpbench_c_trace"
    site = codegen.disabled_path(f, "tpbench_c_trace", set())
    base = codegen.disabled_path(f, "tpbench_c_base", set())
    assert [i.mnemonic for _, i in site][-2:] == ["cmpl", "jle"]
    assert codegen.per_iteration(site) - codegen.per_iteration(base) == 2


def test_a_cs_prefixed_jump_to_the_return_thunk_is_a_return():
    """clang pads `jmp __x86_return_thunk` with a cs prefix: objdump prints `cs jmp`, which
    is the jump (made a `ret` as the kernel loads it), not an instruction named cs."""
    f = clang_without_jump_labels()
    key_count = f["tpbench_key_count"]
    assert "cs" not in {i.mnemonic for i in key_count.insns}
    assert codegen.disabled_path(f, "tpbench_rust_count_call", set())


def test_an_arm64_lto_kernel_reads_the_key_with_a_load_acquire():
    """Under LTO arm64's READ_ONCE() is ldar (asm/rwonce.h): the walk reads that as the key's
    count, so clang's `cmp w8, #1; b.lt` is decided, into the helper and in C's own site."""
    f = funcs("objdump-clang-arm64-no_jump_label.txt")
    site = codegen.disabled_path(f, "tpbench_c_trace", set())
    base = codegen.disabled_path(f, "tpbench_c_base", set())
    assert "ldar" in [i.mnemonic for _, i in site]
    assert codegen.per_iteration(site) - codegen.per_iteration(base) == 3
    helper = codegen.disabled_path(f, "tpbench_rust_helper", set())
    assert ("tpbench_trace_helper", "b.lt") in [(fn, i.mnemonic) for fn, i in helper]


def test_a_call_into_a_section_offset_reaches_the_function_there():
    """Mainline's module calls its static functions as `.text+0x1df0`: the call reaches
    __do_trace_tpbench_hit(), the function at that offset, not the kernel."""
    f = funcs("objdump-clang-mainline-arm64-jump_label.txt")
    calls = [i for i in f["rust_do_trace_tpbench_hit"].insns if i.mnemonic == "bl"]
    assert calls[0].reloc == ".text" and calls[0].reloc_addend == 0x1df0
    assert codegen.callee(f, calls[0]) == "__do_trace_tpbench_hit"
