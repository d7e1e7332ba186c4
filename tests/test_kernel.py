"""The real thing: the kernels built from Debian's tree with our series, booted in QEMU,
for each architecture of TEST_ARCHS (default: x86_64, arm64, arm, riscv64 and loongarch64)."""

import pytest

from kelf.jump_table import read_jump_table, site_problems
from common import messages
from runner import config as cfg
from common import console
from runner import kernel, proc, qemu, roots
from tests.conftest import ALL_KERNELS, KERNELS, OUT, RUST_ARCHS, TEST_ARCHS
from tests.test_rust_review import REVIEWED

EVENT = "rust_sample_loaded"
# The sample, the doctests and the Rust sites exist on RUST_ARCHS alone.
RUST_KERNELS = [(a, c) for a, c in KERNELS if a in RUST_ARCHS]
# The same, with mainline's kernels of TEST_MAINLINE_ARCHS: (kernel, arch, config).
ALL_RUST_KERNELS = [(k, a, c) for k, a, c in ALL_KERNELS
                    if cfg.build_params(cfg.KERNELS[k], cfg.ARCHS[a]).rust]
# The instruction at a disabled static branch site, per architecture.
SITE_NOPS = {"x86_64": {"nop2", "nop5"}, "arm64": {"nop4"}, "riscv64": {"nop4"}, "arm": {"nop4"},
             "loongarch64": {"nop4"}}


@pytest.mark.parametrize("kernel, arch, name", ALL_KERNELS)
def test_kernel_builds_with_requested_options(built, kernel, arch, name):
    kb = built(kernel, arch, name)
    assert kb.image.stat().st_size > 500_000
    have = cfg.parse_kconfig((kb.build / ".config").read_text())
    rust = cfg.build_params(cfg.KERNELS[kernel], cfg.ARCHS[arch]).rust
    assert have.get("CONFIG_RUST", "n") == ("y" if rust else "n")
    assert have["CONFIG_TRACEPOINTS"] == "y" and have["CONFIG_TEST_STATIC_KEYS"] == "m"
    assert have.get("CONFIG_JUMP_LABEL", "n") == ("y" if name == "jump_label" else "n")
    # The generated asm template exists only where Rust emits static branches.
    # Its name contains "generated", which make rustfmt and rustfmtcheck skip.
    generated = kb.build / "rust/kernel/generated_arch_static_branch_asm.rs"
    assert generated.exists() == (name == "jump_label" and rust)


@pytest.mark.parametrize("arch", RUST_ARCHS)
def test_generated_asm_comes_from_the_c_header(kernels, arch):
    text = (kernels[(arch, "jump_label")].build
            / "rust/kernel/generated_arch_static_branch_asm.rs").read_text()
    assert text.startswith("::kernel::concat_literals!(")
    assert "__jump_table" in text and '"{symb} + {off} + {branch}"' in text
    if arch == "x86_64":
        # CONFIG_HAVE_JUMP_LABEL_HACK: a jmp objtool NOPs, and flag 2 in the key field.
        assert '"1: jmp " "{l_yes}" " # objtool NOPs this\\n\\t"' in text
        assert '"{symb} + {off} + {branch}" " + 2"' in text
    elif arch == "riscv64":
        # A 4-byte nop: no compressed instruction and no linker relaxation at the site.
        assert '"\t.option norvc\\n\\t" "1:\t" "nop" "\\n\\t"' in text
        assert '".dword"' in text
    else:
        assert '"1:\tnop\\n\\t"' in text


@pytest.mark.parametrize("event", ["on", "off"])
@pytest.mark.parametrize("kernel, arch, name", ALL_RUST_KERNELS)
def test_rust_sample_fires_its_tracepoint(built, sample_initramfs, accel, kernel, arch, name,
                                          event):
    """On mainline too: its rust_print sample fires the same event with the same value."""
    kb = built(kernel, arch, name)
    # The doctests have a boot of their own (selftest_boot): KUnit stays off here.
    append = f"tpbench.mode=sample {cfg.KUNIT_OFF}"
    if event == "on":
        append += f" trace_event=rust_sample:{EVENT}"
    result = qemu.boot(kb.arch, kb.image, sample_initramfs[arch], append, accel, OUT,
                        f"sample-{kernel}-{arch}-{name}-event-{event}", timeout=300)
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


# The series' examples that KUnit runs as doctests, in both configurations: arch_static_branch!
# is hidden, as mainline's, and has none. declare_trace!'s second example registers a probe on
# a tracepoint of its own: an argument runs only once the tracepoint is on.
# The examples each kernel's series adds, run as KUnit doctests: file -> how many. Mainline's
# jump_label.rs and tracepoint.rs have none.
SERIES_DOCTESTS = {
    "series": {"rust/kernel/jump_label.rs": 1, "rust/kernel/tracepoint.rs": 2},
    "mainline-series": {"rust/kernel/jump_label.rs": 1, "rust/kernel/tracepoint.rs": 1},
}


# A name no file has: its ENOENT shows that the init reports what each load returned.
ABSENT_MODULE = "no_such_module.ko"
_selftest_boots = {}


def selftest_boot(built, guest_inits, accel, arch, name, kernel="series"):
    """One boot per kernel for the kernel's own tests: KUnit runs the doctests before init,
    then the init loads the static key test modules (and a module that does not exist)."""
    if (kernel, arch, name) not in _selftest_boots:
        _selftest_boots[(kernel, arch, name)] = qemu.boot_loading_modules(
            built(kernel, arch, name), guest_inits[arch], (*cfg.STATIC_KEY_TESTS, ABSENT_MODULE),
            accel, OUT, f"selftests-{kernel}-{arch}-{name}")
    return _selftest_boots[(kernel, arch, name)]


@pytest.mark.parametrize("kernel, arch, name", ALL_KERNELS)
def test_kernel_static_key_test_passes(built, guest_inits, accel, kernel, arch, name):
    """lib/test_static_keys: every kind of C static branch (static_key_true/false,
    static_branch_likely/unlikely, keys of the module and of another one) follows its key
    both ways; patch 4 changed the asm all of them use. A failure refuses the load (EINVAL)."""
    result, statuses = selftest_boot(built, guest_inits, accel, arch, name, kernel)
    assert qemu.boot_failure(result) is None, qemu.boot_failure(result)
    assert statuses == {"test_static_key_base": 0, "test_static_keys": 0, "no_such_module": 2}


@pytest.mark.parametrize("kernel, arch, name", ALL_RUST_KERNELS)
def test_macro_examples_pass_as_kunit_doctests(built, guest_inits, accel, kernel, arch, name):
    result, _ = selftest_boot(built, guest_inits, accel, arch, name, kernel)
    suite = console.parse_kunit_suite(result.console_lines, cfg.DOCTEST_SUITE)
    assert suite.problems == (), suite.problems
    assert not [t for t in suite.tests if t.status == "not ok"]
    # The kernel crate has doctests of its own; the series' are among them, each with its
    # location.
    ours = SERIES_DOCTESTS.get(kernel, {})
    assert len(suite.tests) > sum(ours.values())
    for path, count in ours.items():
        found = suite.in_file(path)
        assert [t.status for t in found] == ["ok"] * count, (path, found)


@pytest.mark.parametrize("arch, name", KERNELS)
def test_c_site_in_bench_module(kernels, arch, name):
    """The bench module's C trace_tpbench_hit() site, on every architecture (the module has
    its C half alone where there is no Rust): with CONFIG_JUMP_LABEL one __jump_table entry
    and a NOP; without it, no entry."""
    from runner import bench
    ko = bench.build_bench_module(kernels[(arch, name)], OUT / f"bench-module-{arch}-{name}")
    entries = read_jump_table(ko)
    if name == "jump_label":
        assert site_problems(entries, "tpbench_c_trace", "__tracepoint_tpbench_hit") == []
        (site,) = [e for e in entries if e.function == "tpbench_c_trace"]
        assert site.site_kind in SITE_NOPS[arch]
    else:
        assert entries == []


@pytest.mark.parametrize("arch", RUST_ARCHS)
def test_rust_site_in_module_is_a_nop(kernels, arch):
    """In rust_print.ko the Rust call site has one __jump_table entry and holds a NOP."""
    ko = kernel.build_sample_module(kernels[(arch, "jump_label")])
    entries = read_jump_table(ko)
    assert site_problems(entries, "rust_print_main", f"__tracepoint_{EVENT}") == []
    (site,) = [e for e in entries if e.function and "rust_print_main" in e.function]
    assert site.site_kind in SITE_NOPS[arch]
    assert (site.key_addend & ~3) == 8, "the key is the field at offset 8 of struct tracepoint"
    # x86 asks objtool to NOP the compiler's jmp (flag 2); arm64 emits the nop itself.
    assert site.objtool_nop == (arch == "x86_64")


WRONG_KEY = """// SPDX-License-Identifier: GPL-2.0

//! Must not compile: static_branch_unlikely! given a key of the wrong type.

use kernel::prelude::*;

module! {
    type: WrongKey,
    name: "wrong_key",
    license: "GPL",
}

struct WrongKey;

// A tracepoint of its own, all zeroes: the module is only compiled and linked, never loaded.
// SAFETY: Every field of `struct tracepoint` is valid as zero (pointers, counters).
static mut TP: kernel::bindings::tracepoint = unsafe { core::mem::zeroed() };

impl kernel::Module for WrongKey {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: Only compiled, never loaded.
        let _on = unsafe {
            kernel::jump_label::static_branch_unlikely!(TP, KEYTYPE, FIELD)
        };
        Ok(WrongKey)
    }
}
"""


@pytest.mark.parametrize("name", list(cfg.KERNEL_CONFIGS))
@pytest.mark.parametrize("keytype, field, compiles", [
    ("kernel::bindings::tracepoint", "key", True),           # right: the control
    ("kernel::bindings::static_key", "enabled", False),      # the static is not a static_key
    ("kernel::bindings::tracepoint", "funcs", False),        # that field is not a static_key
])
def test_static_branch_unlikely_checks_its_arguments(kernels, tmp_path, name, keytype, field, compiles):
    """In both configurations a wrong key type or field is a compile error; with
    CONFIG_JUMP_LABEL the series once took them unchecked into a __jump_table entry."""
    # x86_64's build where it is among the kernels, else another Rust architecture's (not
    # 32-bit arm's), of this config.
    kb = kernels.get(("x86_64", name)) or next(
        (k for (a, c), k in kernels.items() if c == name and cfg.ARCHS[a].rust), None)
    if kb is None:
        pytest.skip(f"no kernel with Rust and {name} among the kernels of this test run")
    (tmp_path / "Kbuild").write_text("obj-m := wrong_key.o\n")
    (tmp_path / "wrong_key.rs").write_text(WRONG_KEY.replace("KEYTYPE", keytype)
                                           .replace("FIELD", field))
    if compiles:
        kernel.build_external_module(kb, tmp_path)
        assert (tmp_path / "wrong_key.ko").exists()
    else:
        with pytest.raises(messages.Failure, match=r"error\[E0308\]: mismatched types"):
            kernel.build_external_module(kb, tmp_path)


@pytest.mark.parametrize("kernel_name", REVIEWED)
def test_rustfmtcheck_passes_on_the_patched_tree(source_tree, built, kernel_name):
    """make rustfmtcheck on the patched sources (the 6.12 series', and the series for
    mainline's where the tests build it), with Debian's rustfmt (rustfmt-web, the version of
    rustc-web); the benchmark's Rust is checked the same way."""
    import subprocess
    src = (source_tree.path if kernel_name == "series"
           else built(kernel_name, "x86_64", "jump_label").src)

    def status():
        return subprocess.run(["git", "status", "--porcelain"], cwd=src,
                              capture_output=True, text=True, check=True).stdout
    before = status()
    proc = subprocess.run(["make", "-C", str(src), "rustfmtcheck",
                           "RUSTFMT=/usr/bin/rustfmt"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert status() == before        # the cached tree is left exactly as it was
    proc = subprocess.run(["/usr/bin/rustfmt", "--check", "--edition", "2021",
                           str(cfg.REPO / "bench-module" / "tpbench_rs.rs")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


# One architecture per toolchain: the host's, and each Debian root's.
TOOLCHAIN_ARCHS = list({cfg.ARCHS[a].root: a for a in reversed(RUST_ARCHS)}.values())


@pytest.mark.parametrize("arch, clang", [(a, "19." if cfg.ARCHS[a].root else "14.")
                                         for a in TOOLCHAIN_ARCHS])
def test_bindgen_uses_the_pinned_libclang(source_tree, arch, clang):
    """bindgen 0.60.1 takes the newest libclang it finds unless told; the host's builds pin
    LLVM 14's, a root's builds the root's own (19 in Debian 13). The kernel's own probe
    header makes libclang print its version."""
    arch = cfg.ARCHS[arch]
    header = source_tree.path / "scripts/rust_is_available_bindgen_libclang.h"
    out = proc.run(roots.in_root(arch, [cfg.TOOLCHAIN["BINDGEN"], header]),
                   env=arch.build_env).stdout
    assert f"clang version {clang}" in out, out
    assert out.count("clang version") == 1


def test_guest_init_is_built_with_nolibc_into_its_cache_entry(source_tree, tmp_path, monkeypatch):
    """From scratch in an empty cache: a static ELF of the guest's architecture, in its own
    entry, and no half-built directory left beside it."""
    from elftools.elf.elffile import ELFFile
    monkeypatch.setenv("TPBENCH_CACHE", str(tmp_path))
    # An architecture built on the host: a root's would make the whole root in the empty cache.
    arch = cfg.ARCHS[next((a for a in TEST_ARCHS if cfg.ARCHS[a].root is None), "x86_64")]
    init = qemu.guest_init(source_tree, arch)
    with open(init, "rb") as f:
        elf = ELFFile(f)
        assert elf["e_type"] == "ET_EXEC" and not elf.get_section_by_name(".interp")
        assert elf["e_machine"] == {"x86_64": "EM_X86_64", "arm64": "EM_AARCH64",
                                    "arm": "EM_ARM", "riscv64": "EM_RISCV"}[arch.name]
    assert [p.name for p in tmp_path.iterdir()] == [init.parent.name]
    assert qemu.guest_init(source_tree, arch) == init      # cached: the same file


def test_the_clang_profile_configures_as_androids_gki_with_rust(source_tree, tmp_path):
    """The clang profile's configure step, in its Debian 13 root (clang 22, rustc on LLVM 22):
    every requested option survives olddefconfig with Rust on, and clang and rustc are on one
    LLVM major. Building and booting clang kernels (about 15 minutes each here) is `make bench`'s
    with the clang profile, not make test's."""
    profile = cfg.PROFILES["clang"]
    arch = cfg.build_params(source_tree.kernel, cfg.ARCHS["x86_64"], profile)
    build = tmp_path / "build"
    build.mkdir()
    kernel.configure(source_tree.path, build, arch, cfg.KERNEL_CONFIGS["jump_label"], profile,
                     tmp_path / "configure.log")
    have = cfg.parse_kconfig((build / ".config").read_text())
    for option in ("CONFIG_RUST", "CONFIG_LTO_CLANG_FULL", "CONFIG_CFI_CLANG", "CONFIG_PREEMPT",
                   "CONFIG_FUNCTION_TRACER", "CONFIG_MITIGATION_RETHUNK", "CONFIG_JUMP_LABEL"):
        assert have.get(option) == "y", option
    assert int(have["CONFIG_CLANG_VERSION"]) // 10000 == int(profile.llvm)
