"""The real thing: both kernels built from Debian's tree with our series, booted in QEMU."""

import pytest

from analysis.jump_table import read_jump_table, site_problems
from runner import config as cfg
from runner import console, world
from tests.conftest import OUT

EVENT = "rust_sample_loaded"


@pytest.mark.parametrize("name", list(cfg.KERNEL_CONFIGS))
def test_kernel_builds_with_requested_options(kernels, name):
    kb = kernels[name]
    assert kb.image.stat().st_size > 500_000
    have = cfg.parse_kconfig((kb.build / ".config").read_text())
    assert have["CONFIG_RUST"] == "y" and have["CONFIG_TRACEPOINTS"] == "y"
    assert have.get("CONFIG_JUMP_LABEL", "n") == ("y" if name == "jump_label" else "n")
    # The generated asm template exists only where Rust emits static branches.
    generated = kb.build / "rust/kernel/arch_static_branch_asm.rs"
    assert generated.exists() == (name == "jump_label")


def test_generated_asm_comes_from_the_c_header(kernels):
    text = (kernels["jump_label"].build / "rust/kernel/arch_static_branch_asm.rs").read_text()
    # x86 with CONFIG_HAVE_JUMP_LABEL_HACK: a jmp objtool NOPs, and flag 2 in the key field.
    assert text.startswith("::kernel::concat_literals!(")
    assert '"1: jmp " "{l_yes}" " # objtool NOPs this\\n\\t"' in text
    assert '"{symb} + {off} + {branch}" " + 2"' in text
    assert "__jump_table" in text


@pytest.mark.parametrize("event", ["on", "off"])
@pytest.mark.parametrize("name", list(cfg.KERNEL_CONFIGS))
def test_rust_sample_fires_its_tracepoint(kernels, sample_initramfs, accel, name, event):
    kb = kernels[name]
    append = "tpbench.mode=sample"
    if event == "on":
        append += f" trace_event=rust_sample:{EVENT}"
    result = world.boot(kb.arch, kb.image, sample_initramfs, append, accel, OUT,
                        f"sample-{name}-event-{event}", timeout=300)
    verdict = console.judge_console(result.console_lines)
    tail = "\n".join(result.console_lines[-15:])
    assert verdict.ok, f"boot failed ({result.accel}): {verdict}\n{tail}"
    # The Rust half of the sample ran its init.
    assert any("Rust printing macros sample (init)" in l for l in result.console_lines)
    out = result.results.splitlines()
    info = console.key_values(out)
    assert info["event_exists"] == "yes"
    assert info["event_enable"] == ("1" if event == "on" else "0")
    trace = console.section(out, "tpbench: trace begin", "tpbench: trace end")
    assert trace is not None, "no trace dump on the results channel"
    records = console.trace_events(trace, EVENT)
    if event == "on":
        assert len(records) == 1 and records[0].endswith(f"{EVENT}: magic=42"), records
    else:
        assert records == []


def test_rust_site_in_module_is_a_nop(kernels):
    """In rust_print.ko the Rust call site has one __jump_table entry and holds a NOP."""
    ko = world.build_sample_module(kernels["jump_label"])
    entries = read_jump_table(ko)
    assert site_problems(entries, "rust_print_main", f"__tracepoint_{EVENT}") == []
    (site,) = [e for e in entries if e.function and "rust_print_main" in e.function]
    assert site.objtool_nop, "the key field lacks objtool's flag (2)"
    assert (site.key_addend & ~3) == 8, "the key is the field at offset 8 of struct tracepoint"
