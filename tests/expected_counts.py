"""The exact instructions per call that the guests must measure under TCG -icount, per build
profile, architecture, config and state, each explained from the disassembly of the
module the test builds (`make codegen` prints the listings and the disabled paths).

make test checks its profile's table (TEST_PROFILE, distro by default); make test-full both.
The committed run (tests/test_report.py holds these tables to it) has the distro table's five
architectures and the tiny and clang tables' x86_64. Their other rows (tiny on arm64, arm,
riscv64 and loongarch64; clang on arm64) were measured on earlier revisions of the series:
where patch 7 or 8 reaches them (Rust's sites without jump labels, the lazy site while on)
only `make test-full` on those architectures checks them against this one.
"""

# Profile tiny (tinyconfig's -Os, no function tracer): instructions per loop iteration under
# TCG -icount (the guest TSC counts instructions), from the disassembly of tpbench.ko
# (x86_64, GCC 12 for C, rustc 1.96 for Rust). `make codegen` shows the listings.
EXPECTED_TINY = {
    ("x86_64", "jump_label", "disabled"): {
        "c_empty": 4,          # cmp; je; inc; jmp (GCC tests at the top of the loop)
        "rust_empty": 3,       # inc; cmp; jne (LLVM tests at the bottom)
        "c_base": 4,           # cmp; jae; inc; jmp: c_trace without its site
        "rust_base": 3,        # inc; cmp; jb: rust_trace without its site
        "c_trace": 6,          # cmp; je; NOP (site); jmp over the inline enabled block; inc; jmp
        "rust_trace": 4,       # NOP (site); inc; cmp; jne: the enabled block is out of line
        "rust_helper": 9,      # lea; call; [endbr64; mov; NOP (site); ret] in the helper; mov; cmp; jne
        "rust_load": 6,        # mov (key count); test; jle; inc; cmp; jne
        "rust_count_call": 10,  # mov; call; [endbr64; mov; ret]; test; jle; inc; cmp; jne
    },
    # Enabled: the probe is endbr64; incq; add; mov; ret (5), called directly (static
    # call sites are patched), and __DO_TRACE's body is mov %gs (cpu); bt (online); jae;
    # mov (funcs); test; je; mov (data); call (8).
    ("x86_64", "jump_label", "enabled"): {
        "c_empty": 4, "rust_empty": 3, "c_base": 4, "rust_base": 3,
        "c_trace": 19,         # cmp; je; jmp (site); __DO_TRACE 8 + mov (arg); probe 5; inc; jmp
        "rust_trace": 23,      # jmp (site); mov; call; [endbr64; mov (arg); __DO_TRACE 8; probe 5;
                               # ret] in rust_do_trace_tpbench_hit; jmp back; inc; cmp; jne
        "rust_helper": 22,     # lea; call; [endbr64; mov; jmp (site); __DO_TRACE 8; probe 5; ret];
                               # mov; cmp; jne
        "rust_load": 24,       # mov; test; jle; mov; call; [rust_do_trace 10; probe 5; ret]; inc; cmp; jne
        "rust_count_call": 28,  # rust_load plus a call to the count reader [endbr64; mov; ret]
    },
    ("x86_64", "no_jump_label", "disabled"): {
        "c_empty": 4,
        "rust_empty": 3,
        "c_base": 4,
        "rust_base": 3,
        "c_trace": 7,          # cmp; je; mov (count); test; jle; inc; jmp
        "rust_trace": 5,       # cmpl $0 (count); jg; inc; cmp; jne: patch 7's volatile read
        "rust_helper": 11,     # lea; call; [endbr64; mov; mov; test; jle; ret]; mov; cmp; jne
        "rust_load": 6,        # mov (count); test; jle; inc; cmp; jne: the plain load patch 7 replaced
        "rust_count_call": 10,  # rust_trace before patch 7: a call to read the count
    },
    ("x86_64", "no_jump_label", "enabled"): {
        "c_empty": 4, "rust_empty": 3, "c_base": 4, "rust_base": 3,
        "c_trace": 21,         # cmp; je; mov; test; jle; __DO_TRACE 8 + mov (arg); probe 5; inc; jmp
        "rust_trace": 23,      # rust_load with cmpl $0 (count); jg for mov; test; jle
        "rust_helper": 24,     # lea; call; [endbr64; mov; mov; test; jle; __DO_TRACE 8; probe 5;
                               # ret]; mov; cmp; jne
        "rust_load": 24,       # mov; test; jle; mov; call; [rust_do_trace 10; probe 5; ret]; inc; cmp; jne
        "rust_count_call": 28,
    },
    # arm64 (GCC 12 and rustc 1.96 for aarch64): the same loops, with arm64's NOP site.
    ("arm64", "jump_label", "disabled"): {
        "c_empty": 4,          # cmp; b.ne; add; b
        "rust_empty": 4,       # add; cmp; mov; b.ne: the asm operand costs LLVM a mov here
        "c_base": 4,           # cmp; b.cc; add; b
        "rust_base": 3,        # add; cmp; b.cc: an in-out operand needs no mov
        "c_trace": 6,          # cmp; b.ne; NOP (site); b over the inline enabled block; add; b
        "rust_trace": 4,       # NOP (site); add; cmp; b.ne
        "rust_helper": 7,      # add; bl; [NOP (site); ret] in the helper; cmp; mov; b.ne
        "rust_load": 6,        # ldr (count); cmp; b.le; add; cmp; b.ne
        "rust_count_call": 9,  # mov; bl; [ldr; ret]; cmp; b.le; add; cmp; b.ne
    },
    # Enabled, arm64 has no static calls: __DO_TRACE calls __traceiter_tpbench_hit, which
    # walks the probe array and calls the probe indirectly.
    ("arm64", "jump_label", "enabled"): {
        "c_empty": 4, "rust_empty": 4, "c_base": 4, "rust_base": 3,
        "c_trace": 41, "rust_trace": 52, "rust_helper": 49, "rust_load": 51,
        "rust_count_call": 54,
    },
    ("arm64", "no_jump_label", "disabled"): {
        "c_empty": 4,
        "rust_empty": 4,
        "c_base": 4,
        "rust_base": 3,
        "c_trace": 7,          # cmp; b.ne; ldr (count); cmp; b.le; add; b
        "rust_trace": 6,       # ldr (count); cmp; b.le; add; cmp; b.ne
        "rust_helper": 12,     # add; bl; [mov; adrp; add; ldr; cmp; b.le; ret]; cmp; mov; b.ne
        "rust_load": 6,        # the same as rust_trace
        "rust_count_call": 9,  # mov; bl; [ldr; ret]; cmp; b.le; add; cmp; b.ne
    },
    ("arm64", "no_jump_label", "enabled"): {
        "c_empty": 4, "rust_empty": 4, "c_base": 4, "rust_base": 3,
        "c_trace": 46, "rust_trace": 51, "rust_helper": 53, "rust_load": 51,
        "rust_count_call": 54,
    },
    # arm (ARMv7, GCC 12, A32; no Rust in 6.12): GCC's loops as on arm64, with a
    # conditional return (bxeq/bxcs/popeq) where arm64 branches out of the loop.
    ("arm", "jump_label", "disabled"): {
        "c_empty": 4,          # cmp; bxeq; add; b
        "c_base": 4,           # cmp; bxcs; add; b
        "c_trace": 6,          # cmp; popeq; nop (site); b over the inline enabled block; add; b
    },
    ("arm", "jump_label", "enabled"): {"c_empty": 4, "c_base": 4, "c_trace": 32},
    ("arm", "no_jump_label", "disabled"): {
        "c_empty": 4,
        "c_base": 4,
        "c_trace": 7,          # cmp; popeq; ldr (count, through a literal-pool address); cmp;
                               # ble; add; b
    },
    ("arm", "no_jump_label", "enabled"): {"c_empty": 4, "c_base": 4, "c_trace": 34},
    # riscv64 (clang 14 for C, rustc 1.96 for Rust): both compilers test at the bottom of
    # the loop, and the cycle CSR counts instructions as the TSC does.
    ("riscv64", "jump_label", "disabled"): {
        "c_empty": 2,          # add; bne
        "rust_empty": 3,       # add; mv; bne: the asm operand costs LLVM a mv
        "c_base": 2,           # add; bltu
        "rust_base": 2,        # add; bltu
        "c_trace": 3,          # nop (site); add; bne
        "rust_trace": 3,       # nop (site); add; bne
        "rust_helper": 15,     # add; auipc; jalr; [add sp; sd x3; nop (site); ld x3; add sp;
                               # ret] in the helper; mv; bne
        "rust_load": 4,        # lw (count); blez; add; bne
        "rust_count_call": 8,  # mv; auipc; jalr; [lw; ret]; blez; add; bne
    },
    # Enabled, riscv has no static calls either: __traceiter_tpbench_hit walks the probes.
    ("riscv64", "jump_label", "enabled"): {
        "c_empty": 2, "rust_empty": 3, "c_base": 2, "rust_base": 2,
        "c_trace": 52, "rust_trace": 56, "rust_helper": 52, "rust_load": 52,
        "rust_count_call": 56,
    },
    ("riscv64", "no_jump_label", "disabled"): {
        "c_empty": 2,
        "rust_empty": 3,
        "c_base": 2,
        "rust_base": 2,
        "c_trace": 4,          # lw (count); blez; add; bne
        "rust_trace": 4,       # the same as C: patch 7 reads the count inline
        "rust_helper": 18,     # add; auipc; jalr; [add sp; sd x3; auipc; mv; lw; blez; ld x3;
                               # add sp; ret]; mv; bne
        "rust_load": 4,        # the same as rust_trace
        "rust_count_call": 8,  # mv; auipc; jalr; [lw; ret]; blez; add; bne
    },
    ("riscv64", "no_jump_label", "enabled"): {
        "c_empty": 2, "rust_empty": 3, "c_base": 2, "rust_base": 2,
        "c_trace": 52, "rust_trace": 52, "rust_helper": 52, "rust_load": 52,
        "rust_count_call": 56,
    },
    # loongarch64 (GCC 14 for C, rustc 1.96 for Rust, from the Debian 13 root); its counter
    # ticks once per 10 instructions, and the analysis's slope identifies these counts.
    # GCC tests the loop's end at the top and jumps back (bne; ...; b), LLVM at the bottom.
    ("loongarch64", "jump_label", "disabled"): {
        "c_empty": 3,          # bne; addi.d; b
        "rust_empty": 3,       # addi.d; move; bne
        "c_base": 3,           # bltu; addi.d; b
        "rust_base": 2,        # addi.d; bltu
        "c_trace": 5,          # bne; nop (site); b (over the inline enabled block); addi.d; b
        "rust_trace": 3,       # nop (site); addi.d; bne
        "rust_helper": 6,      # addi.d; bl; [nop (site); ret] in the helper; move; bne
        "rust_load": 4,        # ld.w (count, address from the GOT); blez; addi.d; bne
        "rust_count_call": 8,  # move; bl; [ldptr.w; slli.w; ret]; blez; addi.d; bne
    },
    ("loongarch64", "jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 3, "c_base": 3, "rust_base": 2,
        "c_trace": 46, "rust_trace": 55, "rust_helper": 54, "rust_load": 55,
        "rust_count_call": 59,
    },
    ("loongarch64", "no_jump_label", "disabled"): {
        "c_empty": 3,
        "rust_empty": 3,
        "c_base": 3,
        "rust_base": 2,
        "c_trace": 6,          # bne; ldptr.w (count); slli.w (sign extension); blez; addi.d; b
        "rust_trace": 4,       # ld.w (count); blez; addi.d; bne: no sign extension
        "rust_helper": 10,     # addi.d; bl; [pcalau12i; addi.d; ldptr.w; slli.w; blez; ret];
                               # move; bne
        "rust_load": 4,        # the same as rust_trace
        "rust_count_call": 8,  # move; bl; [ldptr.w; slli.w; ret]; blez; addi.d; bne
    },
    ("loongarch64", "no_jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 3, "c_base": 3, "rust_base": 2,
        "c_trace": 50, "rust_trace": 55, "rust_helper": 58, "rust_load": 55,
        "rust_count_call": 59,
    },
}

# Sites as drivers write them. The txn loops walk 16 transactions (t = &txns[i % 16]) and
# hand t to an empty asm; c_txn/rust_txn add tpbench_txn(t, t->id, t->flags, t->size). LLVM
# (Rust, and C on riscv64) loads the three fields before the site, as does GCC on x86_64;
# GCC on arm64, arm and loongarch64 keeps them in the enabled block. The dense loops run 16 tpbench_hit
# sites per iteration: Rust's stay inline (one NOP each); GCC at -Os stops inlining
# trace_tpbench_hit() in a file that calls it 16 times and calls an out-of-line copy, whose
# NOP is the site (clang on riscv64 inlines all 16). Enabled: a probe per site and event.
EXPECTED_TINY_DRIVER = {
    ("x86_64", "jump_label", "disabled"): {
        "c_txn_base": 8,       # cmp; je; mov; and; imul; add (t); inc; jmp
        "rust_txn_base": 7,    # lea; and; lea; lea (t); mov; cmp; jne
        "c_txn": 13,           # c_txn_base with lea (t) for add; mov x3 (fields); NOP; jmp
        "rust_txn": 12,        # mov; and; shl; lea; add (t); mov x3 (fields); NOP; inc; cmp; jne
        "c_dense": 84,         # cmp; je; inc; jmp and 16 x [mov; call; [mov; NOP; ret]]
        "rust_dense": 19,      # 16 NOPs; inc; cmp; jne
    },
    ("x86_64", "jump_label", "enabled"): {
        "c_txn_base": 8, "rust_txn_base": 7,
        "c_txn": 39,           # 9 to the site; jmp (site); __DO_TRACE 8 (the arguments are
                               # already in their registers); probe 19; inc; jmp
        "rust_txn": 48,        # 8 to the site; jmp (site); call; [endbr64; __DO_TRACE 8 and
                               # 5 moves of the arguments; ret]; probe 19; jmp back; inc; cmp; jne
        "c_dense": 292, "rust_dense": 323,
    },
    ("x86_64", "no_jump_label", "disabled"): {
        "c_txn_base": 8, "rust_txn_base": 7,
        "c_txn": 14,           # the jump-label loop with mov; test; jle (count) for NOP; jmp
        "rust_txn": 13,        # the jump-label loop with cmpl $0 (count); jg for the NOP
        "c_dense": 116,        # 4 and 16 x [mov; call; [mov (count); mov; test; jle; ret]]
        "rust_dense": 35,      # 16 x [cmpl $0 (count); jg]; inc; cmp; jne
    },
    ("x86_64", "no_jump_label", "enabled"): {
        "c_txn_base": 8, "rust_txn_base": 7, "c_txn": 41, "rust_txn": 48,
        "c_dense": 324, "rust_dense": 323,
    },
    ("arm64", "jump_label", "disabled"): {
        "c_txn_base": 6,       # cmp; b.ne; and; madd (t); add; b
        "rust_txn_base": 5,    # and; add; cmp; umaddl (t); b.ne
        "c_txn": 9,            # cmp; b.ne; and; mov; madd (t); NOP (site); b; add; b: no loads
        "rust_txn": 9,         # and; umaddl (t); ldr x3 (fields); NOP (site); add; cmp; b.ne
        "c_dense": 68,         # cmp; b.ne; add; b and 16 x [mov; bl; [NOP; ret]]
        "rust_dense": 19,      # 16 NOPs; add; cmp; b.ne
    },
    ("arm64", "jump_label", "enabled"): {
        "c_txn_base": 6, "rust_txn_base": 5, "c_txn": 80, "rust_txn": 93,
        "c_dense": 740, "rust_dense": 787,
    },
    ("arm64", "no_jump_label", "disabled"): {
        "c_txn_base": 6, "rust_txn_base": 5,
        "c_txn": 10,           # cmp; b.ne; and; mul; add (t); ldr (count); cmp; b.le; add; b
        "rust_txn": 11,        # and; umaddl (t); ldr x3 (fields); ldr (count); cmp; b.lt; add;
                               # cmp; b.ne
        "c_dense": 148,        # 4 and 16 x [mov; bl; [mov; adrp; add; ldr (count); cmp; b.le;
                               # ret]]
        "rust_dense": 51,      # 16 x [ldr (count); cmp; b.lt]; add; cmp; b.ne
    },
    ("arm64", "no_jump_label", "enabled"): {
        "c_txn_base": 6, "rust_txn_base": 5, "c_txn": 81, "rust_txn": 88,
        "c_dense": 804, "rust_dense": 771,
    },
    ("arm", "jump_label", "disabled"): {
        "c_txn_base": 6,       # cmp; bxeq; and; mla (t); add; b
        "c_txn": 8,            # cmp; bne; and; mla (t); NOP (site); b; add; b: no loads
        "c_dense": 68,         # cmp; popeq; add; b and 16 x [mov; bl; [NOP; bx lr]]
    },
    ("arm", "jump_label", "enabled"): {"c_txn_base": 6, "c_txn": 69, "c_dense": 516},
    ("arm", "no_jump_label", "disabled"): {
        "c_txn_base": 6,
        "c_txn": 10,           # cmp; bne; and; mul; add (t); ldr (count); cmp; ble; add; b
        "c_dense": 100,        # cmp; popeq; add; b and 16 x [mov; bl; [ldr (the key's address,
                               # a literal word); ldr (count); cmp; bxle lr]]
    },
    ("arm", "no_jump_label", "enabled"): {"c_txn_base": 6, "c_txn": 69, "c_dense": 564},
    # riscv64 (clang 14 for C): both languages load the fields; clang inlines all 16 sites,
    # and a c.nop aligns the first 4-byte site NOP (riscv's asm aligns each site to 4 bytes).
    ("riscv64", "jump_label", "disabled"): {
        "c_txn_base": 5,       # and; mul; add (t); add; bne
        "rust_txn_base": 8,    # add; and; sll; sll; add (t); add; mv; bne
        "c_txn": 9,            # and; mul; add (t); ld; lw; ld (fields); NOP (site); add; bne
        "rust_txn": 11,        # and; sll; sll; add; add (t); ld; lw; ld (fields); NOP; add; bne
        "c_dense": 19,         # c.nop (alignment); 16 NOPs; add; bne
        "rust_dense": 18,      # 16 NOPs; add; bne
    },
    ("riscv64", "jump_label", "enabled"): {
        "c_txn_base": 5, "rust_txn_base": 8, "c_txn": 90, "rust_txn": 99,
        "c_dense": 803, "rust_dense": 866,
    },
    # Without jump labels clang sinks the C site's loads below the test of the count (a
    # plain load and branch, not an asm goto); LLVM does not for Rust's site.
    ("riscv64", "no_jump_label", "disabled"): {
        "c_txn_base": 5, "rust_txn_base": 8,
        "c_txn": 7,            # and; mul; add (t); lw (count); blez; add; bne: no field loads
        "rust_txn": 12,        # and; sll; sll; add; add (t); ld; lw; ld (fields); lw (count);
                               # blez; add; bne
        "c_dense": 34,         # 16 x [lw (count); blez]; add; bne
        "rust_dense": 34,      # the same
    },
    ("riscv64", "no_jump_label", "enabled"): {
        "c_txn_base": 5, "rust_txn_base": 8, "c_txn": 90, "rust_txn": 92,
        "c_dense": 802, "rust_dense": 802,
    },
    # loongarch64 (GCC 14 for C): GCC keeps the loads in the enabled block, LLVM does not;
    # GCC calls an out-of-line copy at the dense sites, as on x86_64, arm64 and arm.
    ("loongarch64", "jump_label", "disabled"): {
        "c_txn_base": 6,       # bne; andi; alsl.d; alsl.d (t); addi.d; b
        "rust_txn_base": 7,    # addi.d; andi; slli.d; alsl.d; add.d (t); move; bne
        "c_txn": 8,            # bne; andi; alsl.d; alsl.d (t); NOP (site); b; addi.d; b
        "rust_txn": 10,        # andi; slli.d; alsl.d; add.d (t); ldx.d; ld.w; ld.d (fields);
                               # NOP (site); addi.d; bne
        "c_dense": 67,         # bne; addi.d; b and 16 x [move; bl; [NOP; ret]]
        "rust_dense": 18,      # 16 NOPs; addi.d; bne
    },
    ("loongarch64", "jump_label", "enabled"): {
        "c_txn_base": 6, "rust_txn_base": 7, "c_txn": 86, "rust_txn": 96,
        "c_dense": 835, "rust_dense": 850,
    },
    ("loongarch64", "no_jump_label", "disabled"): {
        "c_txn_base": 6, "rust_txn_base": 7,
        "c_txn": 9,            # bne; andi; alsl.d; alsl.d (t); ldptr.w (count); slli.w; blez;
                               # addi.d; b
        "rust_txn": 11,        # rust_txn's loads, then ld.w (count); blez for the NOP
        "c_dense": 131,        # 3 and 16 x [move; bl; [pcalau12i; ld.d (GOT: the key's
                               # address); ldptr.w (count); slli.w; blez; ret]]
        "rust_dense": 34,      # 16 x [ld.w (count); blez]; addi.d; bne
    },
    ("loongarch64", "no_jump_label", "enabled"): {
        "c_txn_base": 6, "rust_txn_base": 7, "c_txn": 89, "rust_txn": 96,
        "c_dense": 899, "rust_dense": 850,
    },
}
for _key, _costs in EXPECTED_TINY_DRIVER.items():
    EXPECTED_TINY[_key].update(_costs)


# Profile distro (-O2, Debian's mitigations and function tracer; x86_64 guests chose
# retpolines and no return thunk for QEMU's CPU). As loaded: each C function's
# `call __fentry__` is ftrace's NOP ("nop (ftrace)"), each `jmp __x86_return_thunk` a `ret`.
# At -O2 GCC tests at the bottom of the loop, as LLVM does, and inlines trace_tpbench_hit()
# into all 16 dense sites: C's site is one NOP like Rust's.
EXPECTED_DISTRO = {
    ("x86_64", "jump_label", "disabled"): {
        "c_empty": 3,          # add; cmp; jne
        "rust_empty": 3,       # inc; cmp; jne
        "c_base": 3,           # add; cmp; jb: c_trace without its site
        "rust_base": 3,        # inc; cmp; jb: rust_trace without its site
        "c_trace": 4,          # NOP (site); add; cmp; jne: the enabled block is out of line
        "rust_trace": 4,       # NOP (site); inc; cmp; jne
        "rust_helper": 9,      # lea; call; [endbr64; nop (ftrace); NOP (site); ret]; mov; cmp; jne
        "rust_load": 6,        # inc; cmp; je; mov (key count); test; jle
        "rust_count_call": 11,  # inc; cmp; je; mov; call; [endbr64; nop (ftrace); mov; ret];
                                # test; jle
        "c_txn_base": 7,       # mov; and; lea; lea; add (t); cmp; jne
        "rust_txn_base": 7,    # mov; and; inc; lea; lea (t); cmp; jne
        "c_txn": 11,           # c_txn_base's 7 with mov x3 (the fields) and the NOP
        "rust_txn": 12,        # mov; and; shl; lea; add (t); mov x3 (fields); NOP; inc; cmp; jne
        "rust_txn_lazy": 8,    # mov; and; lea; lea (t); NOP; inc; cmp; jne: no field loads
        "c_dense": 19,         # 16 NOPs (sites); add; cmp; jne: GCC -O2 inlines all 16
        "rust_dense": 19,      # 16 NOPs (sites); inc; cmp; jne
    },
    # Enabled: jmp (site); __DO_TRACE's mov %gs (cpu); bt (online); jae; incl (preempt
    # count); mov (funcs); test; je; mov (data); then the argument moves and the call of the
    # static call, patched to the probe [endbr64; nop (ftrace); addq; add; mov; ret]; decl
    # (preempt count); jne (no reschedule). C's block is inline: 22. Rust's is
    # rust_do_trace_tpbench_hit, called: mov x2; call; [endbr64; __DO_TRACE 8; mov x3; call;
    # probe 6; decl; je; ret]; mov; jmp back: 8 more (the call, endbr64, ret, five moves and
    # the jump back, minus C's inline jne and arg move).
    ("x86_64", "jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 3, "c_base": 3, "rust_base": 3,
        "c_trace": 22,         # jmp; 8 of __DO_TRACE; mov (arg); call; probe 6; decl; jne; 3 loop
        "rust_trace": 30,      # jmp; mov; mov; call; [12 to the call; probe 6; decl; je; ret];
                               # mov; jmp; inc; cmp; jne
        "rust_helper": 28,     # lea; call; [endbr64; nop; jmp (site); 8; mov x2; call; probe 6;
                               # decl; jne... ret]; mov; cmp; jne
        "rust_load": 30,       # rust_trace's enabled path with the count's test for the site
        "rust_count_call": 35,  # rust_load plus the call of the count reader [endbr64; nop; mov; ret]
        "c_txn_base": 7, "rust_txn_base": 7,
        "c_txn": 42,           # mov; and; lea; lea (t); mov x3 (fields); jmp (site); __DO_TRACE
                               # 8; call; probe 20 [endbr64; nop (ftrace); 17 that count and
                               # compare the fields; ret]; decl; jne; add; cmp; jne
        "rust_txn": 55,        # the same, through rust_do_trace_tpbench_txn: 13 more
        "rust_txn_lazy": 54,   # the fields loaded after the site's jmp, then call_tpbench_txn():
                               # no second site (patch 8), so one instruction under rust_txn
        "c_dense": 307,        # 16 x 19 (each site as c_trace's, plus its argument); add; cmp; jne
        "rust_dense": 435,     # 16 x 27 (each site as rust_trace's); inc; cmp; jne
    },
    ("x86_64", "no_jump_label", "disabled"): {
        "c_empty": 3, "rust_empty": 3, "c_base": 3, "rust_base": 3,
        "c_trace": 6,          # mov (count); test; jg; add; cmp; jne
        "rust_trace": 5,       # cmpl $0 (count); jg; inc; cmp; jne: patch 7's volatile read
                               # folds into the compare, one instruction under C's mov; test
        "rust_helper": 11,     # lea; call; [endbr64; nop (ftrace); mov; test; jg; ret]; mov; cmp; jne
        "rust_load": 6,        # the same code as rust_trace
        "rust_count_call": 11,  # a call to read the count: rust_trace before patch 7
        "c_txn_base": 7, "rust_txn_base": 7,
        "c_txn": 13,           # c_txn_base's 7, mov x3 (fields), mov (count); test; jg
        "rust_txn": 13,        # mov; and; shl; lea; add (t); mov x3 (fields), cmpl $0 (count);
                               # jg (falls through: patch 9); inc; cmp; jne
        "rust_txn_lazy": 9,    # mov; and; lea; lea (t); cmpl $0 (count); jg; inc; cmp; jne
        "c_dense": 51,         # 16 x [mov (count); test; jg]; add; cmp; jne
        "rust_dense": 35,      # 16 x [cmpl $0 (count); jg]; inc; cmp; jne: one under C's per
                               # site; no jg taken since patch 9 (before it, 15 of 16 jle were)
    },
    ("x86_64", "no_jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 3, "c_base": 3, "rust_base": 3,
        # rust_trace: cmpl $0 (count); jg (taken); mov x2; call [rust_do_trace_tpbench_hit, as
        # with jump labels]; mov; jmp back; inc; cmp; jne.
        "c_trace": 24, "rust_trace": 31, "rust_helper": 30, "rust_load": 30,
        "rust_count_call": 35, "c_txn_base": 7, "rust_txn_base": 7, "c_txn": 44,
        # Patch 9 moves Rust's enabled call out of line, as C's: a taken jg to it and a jmp back.
        # The lazy site tests the key once (patch 8's call_tpbench_txn()): one under rust_txn.
        "rust_txn": 56, "rust_txn_lazy": 55, "c_dense": 339, "rust_dense": 436,
    },
    # arm64 (GCC 12, rustc 1.96): the two NOPs at each C function's entry are ftrace's
    # (-fpatchable-function-entry=2); pointer authentication adds nothing to leaf functions.
    ("arm64", "jump_label", "disabled"): {
        "c_empty": 3,          # add; cmp; b.ne
        "rust_empty": 4,       # add; cmp; mov; b.ne: the asm operand costs LLVM a mov
        "c_base": 3,           # add; cmp; b.hi
        "rust_base": 3,        # add; cmp; b.cc
        "c_trace": 4,          # nop (site); add; cmp; b.ne
        "rust_trace": 4,       # nop (site); add; cmp; b.ne
        "rust_helper": 9,      # add; bl; [nop; nop (ftrace); nop (site); ret]; cmp; mov; b.ne
        "rust_load": 6,        # add; cmp; b.eq; ldr (count); cmp; b.lt
        "rust_count_call": 11,  # add; cmp; b.eq; mov; bl; [nop; nop; ldr; ret]; cmp; b.lt
        "c_txn_base": 7,       # and; ubfiz; add; add; add (t); cmp; b.ne
        "rust_txn_base": 5,    # and; add; cmp; umaddl (t); b.ne
        "c_txn": 8,            # and; ubfiz; add; add (t); nop (site); add; cmp; b.ne: no loads
        "rust_txn": 9,         # and; umaddl (t); ldr x3 (fields); nop (site); add; cmp; b.ne
        "rust_txn_lazy": 6,    # and; umaddl (t); nop (site); add; cmp; b.ne: no field loads
        "c_dense": 19,         # 16 nops (sites); add; cmp; b.ne
        "rust_dense": 19,      # 16 nops (sites); add; cmp; b.ne
    },
    ("arm64", "jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 4, "c_base": 3, "rust_base": 3,
        "c_trace": 47, "rust_trace": 48, "rust_helper": 47, "rust_load": 48,
        "rust_count_call": 53, "c_txn_base": 7, "rust_txn_base": 5, "c_txn": 84,
        # The lazy site: its key test, then call_tpbench_txn() with no second one (patch 8).
        "rust_txn": 85, "rust_txn_lazy": 85, "c_dense": 706, "rust_dense": 723,
    },
    ("arm64", "no_jump_label", "disabled"): {
        "c_empty": 3, "rust_empty": 4, "c_base": 3, "rust_base": 3,
        "c_trace": 6,          # ldr (count); cmp; b.gt; add; cmp; b.ne
        "rust_trace": 6,       # add; cmp; b.eq; ldr (count); cmp; b.lt
        "rust_helper": 21,     # add; bl; [nop; nop (ftrace); paciasp; stp; adrp; mov; add; stp;
                               # mov; ldr (count); cmp; b.gt; ldp; ldp; autiasp; ret]; cmp; mov;
                               # b.ne: without jump labels GCC gives the helper a frame, and
                               # pointer authentication signs and checks its return address
        "rust_load": 6,        # the same code as rust_trace
        "rust_count_call": 11,  # add; cmp; b.eq; mov; bl; [nop; nop; ldr; ret]; cmp; b.lt
        "c_txn_base": 7, "rust_txn_base": 5,
        "c_txn": 10,           # c_txn_base's and; ubfiz; add; add (t); ldr (count); cmp; b.gt;
                               # add; cmp; b.ne: no field loads
        "rust_txn": 11,        # and; umaddl (t); ldr x3 (fields); ldr (count); cmp; b.ge;
                               # add; cmp; b.ne (patch 9: the call is out of line)
        "rust_txn_lazy": 8,    # and; umaddl (t); ldr (count); cmp; b.ge; add; cmp; b.ne
        "c_dense": 51,         # 16 x [ldr (count); cmp; b.gt]; add; cmp; b.ne
        "rust_dense": 51,      # 16 x [ldr (count); cmp; b.ge]; add; cmp; b.ne
    },
    # Patch 9's out-of-line call keeps N in x0, which the call clobbers: the enabled block
    # saves and restores it around the call (mov x23, x0; mov x0, x8; bl; mov x0, x23; b),
    # three more than before it in rust_txn, 47 over rust_dense's 16 sites. rust_trace: ldr
    # (count); cmp; b.ge (taken); mov x21, x0; mov x0, x19; bl; mov x0, x21; b back: the
    # same save and restore. The lazy site tests the key once (patch 8's call_tpbench_txn()).
    ("arm64", "no_jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 4, "c_base": 3, "rust_base": 3,
        "c_trace": 52, "rust_trace": 50, "rust_helper": 49, "rust_load": 48,
        "rust_count_call": 53, "c_txn_base": 7, "rust_txn_base": 5, "c_txn": 87,
        "rust_txn": 84, "rust_txn_lazy": 84, "c_dense": 787, "rust_dense": 755,
    },
    # arm (ARMv7 A32, GCC 12, C only): as arm64's C loops.
    ("arm", "jump_label", "disabled"): {
        "c_empty": 3,          # add; cmp; bne
        "c_base": 3,           # add; cmp; bhi
        "c_trace": 4,          # nop (site); add; cmp; bne
        "c_txn_base": 5,       # and; mla (t); add; cmp; bne
        "c_txn": 6,            # and; mla (t); nop (site); add; cmp; bne: no loads
        "c_dense": 19,         # 16 nops (sites); add; cmp; bne
    },
    ("arm", "jump_label", "enabled"): {
        "c_empty": 3, "c_base": 3, "c_trace": 36, "c_txn_base": 5, "c_txn": 78, "c_dense": 531,
    },
    # riscv64 (clang 14 and rustc 1.96): ftrace's entry is four c.nop in the file, two nop
    # once loaded ("nop (ftrace)").
    ("riscv64", "jump_label", "disabled"): {
        "c_empty": 2,          # add; bne
        "rust_empty": 3,       # add; mv; bne
        "c_base": 2,           # add; bltu
        "rust_base": 2,        # add; bltu
        "c_trace": 3,          # nop (site); add; bne
        "rust_trace": 3,       # nop (site); add; bne
        "rust_helper": 17,     # add; auipc; jalr; [nop; nop (ftrace); add; sd x3; nop (site);
                               # ld x3; add; ret]; mv; bne: clang gives the -O2 helper a frame
        "rust_load": 4,        # add; beq; lw (count); blez
        "rust_count_call": 10,  # add; beq; mv; auipc; jalr; [nop; nop (ftrace); lw; ret]; blez
        "c_txn_base": 5,       # and; mul; add; add (t); bne
        "rust_txn_base": 7,    # and; add; sll; sll; add; add (t); bne
        "c_txn": 9,            # and; mul; add (t); ld; lw; ld (fields); nop (site); add; bne
        "rust_txn": 11,        # and; sll; sll; add; add (t); ld; lw; ld (fields); nop; add; bne
        "rust_txn_lazy": 8,    # and; sll; sll; add; add (t); nop; add; bne: no field loads, where
                               # clang's c_txn loads all three before its NOP
        "c_dense": 19,         # a nop; 16 nops (sites); add; bne
        "rust_dense": 18,      # 16 nops (sites); add; bne
    },
    ("riscv64", "jump_label", "enabled"): {
        "c_empty": 2, "rust_empty": 3, "c_base": 2, "rust_base": 2,
        "c_trace": 56, "rust_trace": 57, "rust_helper": 56, "rust_load": 55,
        "rust_count_call": 61, "c_txn_base": 5, "rust_txn_base": 7, "c_txn": 94,
        # rust_txn_lazy: one key test, then call_tpbench_txn() (patch 8; 103 with a second).
        "rust_txn": 100, "rust_txn_lazy": 100, "c_dense": 867, "rust_dense": 897,
    },
    # loongarch64 (GCC 14 and rustc 1.96 of Debian 13): ftrace's entry is two nop, left as
    # they are; the counter ticks once per 10 instructions (the analysis's snapped slope).
    ("loongarch64", "jump_label", "disabled"): {
        "c_empty": 2,          # addi.d; bne
        "rust_empty": 3,       # addi.d; move; bne
        "c_base": 2,           # addi.d; bltu
        "rust_base": 2,        # addi.d; bltu
        "c_trace": 3,          # nop (site); addi.d; bne
        "rust_trace": 3,       # nop (site); addi.d; bne
        "rust_helper": 8,      # addi.d; bl; [nop; nop (ftrace); nop (site); ret]; move; bne
        "rust_load": 4,        # addi.d; beq; ld.w (count); blez
        "rust_count_call": 10,  # addi.d; beq; move; bl; [nop; nop; ldptr.w; slli.w; ret]; blez
        "c_txn_base": 5,       # andi; alsl.d; alsl.d (t); addi.d; bne
        "rust_txn_base": 6,    # andi; addi.d; slli.d; alsl.d; add.d (t); bne
        "c_txn": 7,            # andi; move; alsl.d; alsl.d (t); nop (site); addi.d; bne: no loads
        "rust_txn": 10,        # andi; slli.d; alsl.d; add.d (t); ldx.d; ld.w; ld.d (fields);
                               # nop (site); addi.d; bne
        "rust_txn_lazy": 7,    # andi; slli.d; alsl.d; add.d (t); nop (site); addi.d; bne
        "c_dense": 18,         # 16 nops (sites); addi.d; bne
        "rust_dense": 18,      # 16 nops (sites); addi.d; bne
    },
    ("loongarch64", "jump_label", "enabled"): {
        "c_empty": 2, "rust_empty": 3, "c_base": 2, "rust_base": 2,
        "c_trace": 51, "rust_trace": 50, "rust_helper": 50, "rust_load": 50,
        "rust_count_call": 56, "c_txn_base": 5, "rust_txn_base": 6, "c_txn": 92,
        # rust_txn_lazy: one key test, then call_tpbench_txn() (patch 8; 91 with a second).
        "rust_txn": 89, "rust_txn_lazy": 89, "c_dense": 780, "rust_dense": 785,
    },
}


# Profile clang (clang 22, full LTO, kCFI, PREEMPT; arm64's shadow call stack), the series on
# x86_64 and arm64: the counts of runs 20261207T153959Z-6648b0d (x86_64, its guests taken from
# 20261207T084504Z-6648b0d through 20261207T125711Z-6648b0d) and
# 20261207T002526Z-fe594e7 (arm64, the series' previous revision), each equal to the walk of its
# disabled path (`make codegen`: paths-<arch>-<config>.tsv of data/<run>/clang/ lists the
# instructions; the enabled state's counts add __DO_TRACE, the probe and, on arm64,
# __traceiter_tpbench_hit() inlined by LTO with its kCFI check). Built by `make bench
# PROFILES="distro clang"`, not by make test.
EXPECTED_CLANG = {
    ("x86_64", "jump_label", "disabled"): {
        "c_empty": 3, "rust_empty": 3, "c_base": 3, "rust_base": 3, "c_trace": 4,
        "rust_trace": 4, "rust_helper": 9, "rust_load": 6, "rust_count_call": 11,
        "c_txn_base": 7, "rust_txn_base": 7, "c_txn": 12, "rust_txn": 12,
        "rust_txn_lazy": 8, "c_dense": 19, "rust_dense": 19,
    },
    ("x86_64", "jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 3, "c_base": 3, "rust_base": 3, "c_trace": 25,
        "rust_trace": 30, "rust_helper": 28, "rust_load": 30, "rust_count_call": 35,
        "c_txn_base": 7, "rust_txn_base": 7, "c_txn": 47, "rust_txn": 56,
        "rust_txn_lazy": 55, "c_dense": 355, "rust_dense": 435,
    },
    ("x86_64", "no_jump_label", "disabled"): {
        # Patch 7's volatile read folds into cmpl $0 (count); jg: one under C's per site.
        "c_empty": 3, "rust_empty": 3, "c_base": 3, "rust_base": 3, "c_trace": 5,
        "rust_trace": 5, "rust_helper": 10, "rust_load": 6, "rust_count_call": 11,
        "c_txn_base": 7, "rust_txn_base": 7, "c_txn": 13, "rust_txn": 13,
        "rust_txn_lazy": 9, "c_dense": 35, "rust_dense": 35,
    },
    ("x86_64", "no_jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 3, "c_base": 3, "rust_base": 3, "c_trace": 25,
        "rust_trace": 31, "rust_helper": 29, "rust_load": 30, "rust_count_call": 35,
        "c_txn_base": 7, "rust_txn_base": 7, "c_txn": 47, "rust_txn": 57,
        "rust_txn_lazy": 56, "c_dense": 340, "rust_dense": 436,
    },
    ("arm64", "jump_label", "disabled"): {
        "c_empty": 3, "rust_empty": 4, "c_base": 3, "rust_base": 3, "c_trace": 4,
        "rust_trace": 4, "rust_helper": 20, "rust_load": 6, "rust_count_call": 11,
        "c_txn_base": 5, "rust_txn_base": 5, "c_txn": 9, "rust_txn": 9, "rust_txn_lazy": 6,
        "c_dense": 19, "rust_dense": 19,
    },
    ("arm64", "jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 4, "c_base": 3, "rust_base": 3, "c_trace": 55,
        "rust_trace": 69, "rust_helper": 68, "rust_load": 69, "rust_count_call": 74,
        "c_txn_base": 5, "rust_txn_base": 5, "c_txn": 90, "rust_txn": 108,
        "rust_txn_lazy": 109, "c_dense": 835, "rust_dense": 1059,
    },
    ("arm64", "no_jump_label", "disabled"): {
        "c_empty": 3, "rust_empty": 4, "c_base": 3, "rust_base": 3, "c_trace": 6,
        "rust_trace": 6, "rust_helper": 24, "rust_load": 6, "rust_count_call": 11,
        "c_txn_base": 5, "rust_txn_base": 5, "c_txn": 11, "rust_txn": 11,
        "rust_txn_lazy": 8, "c_dense": 51, "rust_dense": 51,
    },
    ("arm64", "no_jump_label", "enabled"): {
        "c_empty": 3, "rust_empty": 4, "c_base": 3, "rust_base": 3, "c_trace": 49,
        "rust_trace": 71, "rust_helper": 72, "rust_load": 69, "rust_count_call": 74,
        "c_txn_base": 5, "rust_txn_base": 5, "c_txn": 88, "rust_txn": 107,
        "rust_txn_lazy": 114, "c_dense": 739, "rust_dense": 1091,
    },
}

EXPECTED = {"tiny": EXPECTED_TINY, "distro": EXPECTED_DISTRO, "clang": EXPECTED_CLANG}
