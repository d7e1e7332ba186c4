"""Bytes per site, from a real module of an earlier run (x86_64, tiny, CONFIG_JUMP_LABEL=y)."""
import subprocess
from pathlib import Path

from analysis import codegen, size
from analysis.codegen import Insn

KO = (Path(__file__).resolve().parent / "fixtures" / "modules" / "tiny-2026-12-03"
      / "tpbench-x86_64-jump_label.ko")


def test_function_sizes_agree_with_nm():
    nm = subprocess.run(["nm", "-S", "--defined-only", KO], capture_output=True, text=True,
                        check=True).stdout
    want = {f[3]: int(f[1], 16) for f in map(str.split, nm.splitlines())
            if len(f) == 4 and f[2] in "tT"}
    got = size.function_sizes(KO)
    assert want and {k: got[k] for k in want} == want


def test_site_sizes_of_the_committed_module():
    entries = size.jump_entries(KO)
    # The two inline sites, the helper's, and the functional check's static branch.
    assert entries == {"tpbench_c_trace": 1, "tpbench_rust_trace": 1, "tpbench_trace_helper": 1,
                       "tpbench_rust_key_is_on": 1}
    rows = {r["variant"]: r for r in size.site_sizes(size.function_sizes(KO), entries, "x86_64")}
    assert list(rows) == ["c_trace", "rust_trace", "rust_helper", "rust_load", "rust_count_call"]
    # tpbench_c_trace (69 B) minus tpbench_c_base (17 B): GCC's inline enabled block.
    assert rows["c_trace"]["site_text"] == 52 and rows["c_trace"]["jump_entry"] == 16
    # The C functions of the event: __traceiter 48, __probestub 5, trace_event_raw_event 106,
    # perf_trace 177, trace_raw_output 65.
    assert {r["event_c_text"] for r in rows.values()} == {401}
    assert rows["c_trace"]["kind_text"] == 0
    assert rows["rust_trace"]["kind_text"] == 46         # rust_do_trace_tpbench_hit
    # and tpbench_trace_helper, with its site's __jump_table entry
    assert rows["rust_helper"]["kind_text"] == 46 + 49 + 16
    assert rows["rust_helper"]["jump_entry"] == 0
    assert size.site_sizes(size.function_sizes(KO), {}, "x86_64")[0]["jump_entry"] == 0
    assert size.jump_entry_bytes("arm") == 12


def test_loads_are_told_from_stores_and_addresses():
    def loads(mnemonic, ops):
        return codegen.loads_data(Insn(0, b"", mnemonic, ops))
    assert loads("mov", "0x10(%rsi),%r8") and loads("bt", "%rax,0x0(%rip)")
    assert loads("mov", "%gs:0x0(%rip),%eax") and loads("cmp", "%rdx,(%rsi)")
    assert not loads("mov", "%rax,0x0(%rip)") and not loads("lea", "0x0(%rax),%rsi")
    assert not loads("nopl", "0x0(%rax,%rax,1)") and not loads("xchg", "%ax,%ax")
    assert loads("ldr", "x1, [x0, #8]") and loads("ldr", "r6, [pc, #40]")
    assert loads("ld", "a0,8(a1)") and not loads("sd", "ra,40(sp)")
    assert loads("ld.w", "$a1, $a0, 8") and loads("ldptr.w", "$a0, $a0, 0")
    assert not loads("pop", "{r4, pc}") and not loads("ret", "")
