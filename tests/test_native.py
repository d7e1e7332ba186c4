"""The native stage on real modules of earlier runs (tests/fixtures: runs/, modules/): loading,
relocation, the harness, and every kind of bad input. Timing values are never
asserted here; only what holds on any x86_64 host."""

import shutil
import struct

import pytest

from common import messages, rundir
from runner import native, thunks
from runner import config as cfg
from tests.conftest import FIXTURES

OLD_RUN = FIXTURES / "runs" / "seven-variants"
KO = OLD_RUN / "tpbench-x86_64-jump_label.ko"
# The variants that run had (it predates c_base and rust_base).
OLD_VARIANTS = ["c_empty", "rust_empty", "c_trace", "rust_trace", "rust_helper", "rust_load",
                "rust_count_call"]

x86_only = pytest.mark.skipif(native.host_arch() != "x86_64",
                              reason="the native stage runs x86_64 modules on x86_64 hosts")


def test_module_is_read():
    code = native.read_module(KO)
    assert code.arch == "x86_64"
    assert {native.loop_symbol(v) for v in OLD_VARIANTS} <= set(code.functions)
    assert native.check_runnable(code, OLD_VARIANTS) == []


def test_relocations_resolve_into_the_image():
    code = native.read_module(KO)
    image = native.lay_out(code, OLD_VARIANTS, shift=16)
    assert image.text_address == native.BASE + 16
    # rust_helper's call to the C helper lands on the helper's loaded address.
    start, size = code.functions["tpbench_rust_helper"]
    calls = [off for off, typ, name, kind, _, _ in code.relocs
             if start <= off < start + size and name == "tpbench_trace_helper"]
    assert calls, "rust_helper has no relocated call to tpbench_trace_helper"
    at = image.text_address + calls[0]
    rel = struct.unpack_from("<i", image.data, at - native.BASE)[0]
    helper = image.text_address + code.functions["tpbench_trace_helper"][0]
    assert at + 4 + rel == helper
    # Calls out of the module get a ud2 each; the static call of the enabled path is one.
    assert "__SCT__tp_func_tpbench_hit" in image.traps
    for addr in image.traps.values():
        assert image.data[addr - native.BASE:addr - native.BASE + 2] == b"\x0f\x0b"
    # Nothing is patched: the site still holds the NOP objtool left.
    assert image.data[16:16 + len(code.text)].count(b"\x66\x90") >= 1


def test_harness_output_is_parsed():
    out = native.parse_output("cpu 1\nperf cycles: No such file or directory\ncounter tsc\n"
                              "tsc_hz 2596140000\nsample c_trace 10 0 123\n"
                              "sample c_trace 10 1 120\n")
    assert out.counter == "tsc" and out.cpu == 1 and out.tsc_hz == 2596140000
    assert out.samples == [dict(variant="c_trace", n=10, rep=0, cycles=123),
                           dict(variant="c_trace", n=10, rep=1, cycles=120)]
    assert "No such file" in out.perf_reason and out.instructions == []
    with_perf = native.parse_output("counter tsc+perf\ntsc_hz 1e9\nsample c_trace 10 0 50 40 60\n")
    assert with_perf.samples[0]["cycles"] == 40          # core cycles, not ticks
    assert with_perf.instructions[0]["instructions"] == 60
    with pytest.raises(messages.Failure, match="no counter"):
        native.parse_output("sample c_trace 10 0 123\n")


@x86_only
def test_old_module_runs_without_reaching_a_trap(tmp_path):
    out = native.run_module(KO, OLD_VARIANTS + [native.AA_TWIN], [1, 100], 2, 1, 0, tmp_path)
    assert {s["variant"] for s in out.samples} == set(OLD_VARIANTS) | {native.AA_TWIN}
    assert all(s["cycles"] > 0 for s in out.samples)
    assert out.tsc_hz > 1e8


def as_variant(monkeypatch, variant, symbol):
    """Runs a module function that is not a loop as if it were a variant's loop."""
    real = native.loop_symbol
    monkeypatch.setattr(native, "loop_symbol", lambda v: symbol if v == variant else real(v))


@x86_only
def test_a_variant_that_calls_out_of_the_module_is_stopped_and_named(tmp_path, monkeypatch):
    """out() formats into the results buffer with vscnprintf, a kernel function: run as a
    variant it reaches that function's trap, and the run stops naming both."""
    as_variant(monkeypatch, "formats", "out")
    with pytest.raises(messages.Failure, match="variant formats reached the trap for vscnprintf"):
        native.run_module(KO, ["formats"], [1], 1, 0, 0, tmp_path)


# What a host without return thunks says (this project's CI machines, kernel 6.18).
PLAIN_HOST = {"retbleed": "Not affected", "spec_rstack_overflow": "Vulnerable: No microcode",
              "indirect_target_selection": "Not affected",
              "spectre_v2": "Mitigation: Retpolines; STIBP: disabled; RSB filling"}


def test_a_variant_with_code_the_kernel_rewrites_is_refused(monkeypatch):
    """time_one() reads the TSC through an alternative (.altinstructions): the kernel would
    run other bytes there than the file holds, so it is refused by name before anything
    runs, and the other variants are not."""
    as_variant(monkeypatch, "timer", "time_one")
    code = native.read_module(KO)
    assert native.check_runnable(code, ["timer"]) == []
    refused = native.refusals(code, ["timer", "c_trace"], native.rewrites_for("ret", "plain", set()))
    assert list(refused) == ["timer"]
    assert "tpbench_now has a site in .altinstructions" in refused["timer"]
    assert "replaced per CPU feature" in refused["timer"]


def test_the_rewrites_follow_the_thunk():
    plain = native.rewrites_for("ret", "plain", set())
    assert plain["__mcount_loc"].action == "nop5"
    assert plain[".return_sites"].action == "ret"
    assert plain[".call_sites"].action == plain[".ibt_endbr_seal"].action == "keep"
    assert plain[".retpoline_sites"].action is None
    for thunk in ("srso", "srso_alias", "untrain_ret", "its"):
        r = native.rewrites_for(thunk, "forced", set())
        assert r[".return_sites"].action == "thunk" and r[".call_sites"].action == "keep"
    depth = native.rewrites_for("call_depth", "forced", set())
    assert depth[".return_sites"].action == "thunk" and depth[".call_sites"].action == "depth"
    unknown = native.rewrites_for(None, "retbleed: Mitigation: Something New", set())
    assert unknown[".return_sites"].action is None
    assert "Something New" in unknown[".return_sites"].why
    assert native.rewrites_for("ret", "plain", {"ibt"})[".ibt_endbr_seal"].action == "seal"


def test_a_cpu_that_enforces_ibt_gets_its_endbr64_sealed_as_the_kernel_seals_them():
    """On an IBT host the kernel writes `osp nopl (%rax)` over each endbr64 that
    .ibt_endbr_seal lists; the loader writes the same, and nothing else moves."""
    code = native.read_module(KO)
    sealed = [off for section, off in code.patched_at_load if section == ".ibt_endbr_seal"]
    assert sealed
    text = bytearray(code.text)
    native.apply_rewrites(code, text, {".ibt_endbr_seal": native.Rewrite("seal", "")})
    for off in sealed:
        assert code.text[off:off + 4] == bytes.fromhex("f30f1efa")    # endbr64
        assert text[off:off + 4] == native.ENDBR_POISON
    changed = [i for i in range(len(text)) if text[i] != code.text[i]]
    assert len(changed) <= 4 * len(sealed)


# --- bad input: one clear message each, and nothing written ----------------------

def copy_run(tmp_path, keep=("context.json", "samples.csv")):
    run = tmp_path / "run"
    run.mkdir()
    for name in keep:
        shutil.copy(OLD_RUN / name, run / name)
    return run


def listing(run):
    return {p.name: p.stat().st_mtime_ns for p in run.iterdir()}


def test_not_a_module(tmp_path):
    bad = tmp_path / "tpbench-x86_64-jump_label.ko"
    bad.write_text("arch,config\n")
    with pytest.raises(native.ModuleError, match="not an ELF file"):
        native.read_module(bad)
    obj = tmp_path / "tpbench-x86_64-no_jump_label.ko"
    shutil.copy("/bin/true", obj)         # an ELF, but an executable, not a module
    with pytest.raises(native.ModuleError, match="not a kernel module"):
        native.read_module(obj)


def test_module_of_another_architecture():
    code = native.read_module(OLD_RUN / "tpbench-arm64-jump_label.ko")
    (problem,) = native.check_runnable(code, OLD_VARIANTS)
    assert "arm64 module" in problem and "x86_64 modules only" in problem


def test_module_without_the_expected_functions():
    code = native.read_module(KO)
    (problem,) = native.check_runnable(code, OLD_VARIANTS + ["c_base"])
    assert "no function tpbench_c_base" in problem and "make bench" in problem


def test_run_directory_without_modules(tmp_path):
    run = copy_run(tmp_path)
    before = listing(run)
    with pytest.raises(messages.Failure, match="no tpbench-<arch>-<config>.ko"):
        native.measure_run(run)
    assert listing(run) == before


def test_not_a_run_directory(tmp_path):
    with pytest.raises(messages.Failure, match="not a run directory"):
        native.measure_run(tmp_path)


def test_damaged_module_in_a_run_writes_nothing(tmp_path):
    run = copy_run(tmp_path)
    (run / "tpbench-x86_64-jump_label.ko").write_bytes(KO.read_bytes()[:200])
    before = listing(run)
    with pytest.raises(messages.Failure, match="tpbench-x86_64-jump_label.ko"):
        native.measure_run(run)
    assert listing(run) == before


def test_mislabelled_module_in_a_run(tmp_path):
    run = copy_run(tmp_path)
    shutil.copy(OLD_RUN / "tpbench-arm64-jump_label.ko", run / "tpbench-x86_64-jump_label.ko")
    with pytest.raises(messages.Failure, match="the name says x86_64 but the file is arm64"):
        native.measure_run(run)


@x86_only
def test_running_twice_adds_nothing_twice(tmp_path):
    """The native stage writes its own files beside the guests' (issue 33): samples.csv and
    context.json stay byte for byte, and a second pass replaces the first's samples."""
    run = copy_run(tmp_path, keep=("context.json", "samples.csv",
                                   "tpbench-x86_64-jump_label.ko",
                                   "tpbench-arm64-jump_label.ko"))
    guests = {name: (run / name).read_bytes() for name in ("context.json", "samples.csv")}
    small = {"ns": [1, 100], "reps": 2, "warmup": 0}
    first = native.measure_run(run, shifts=(0, 16), matrix_override=small, rounds=2)
    after_one = (run / rundir.NATIVE_SAMPLES).read_text().splitlines()
    native.measure_run(run, shifts=(0, 16), matrix_override=small, rounds=2)
    after_two = (run / rundir.NATIVE_SAMPLES).read_text().splitlines()
    assert len(after_one) == len(after_two) == 1 + len(first)
    assert {name: (run / name).read_bytes() for name in guests} == guests
    # The arm64 module was skipped.
    assert {r["arch"] for r in first} == {"x86_64"}
    assert {r["accel"] for r in first} == {"native", "native+16"}
    # Two rounds of two repetitions: each (placement, variant, N) has repetitions 0 to 3.
    reps = {}
    for r in first:
        reps.setdefault((r["accel"], r["variant"], r["n"]), []).append(r["rep"])
    assert {tuple(sorted(v)) for v in reps.values()} == {(0, 1, 2, 3)}
    context = rundir.context(run)
    assert context["native_about"]["rounds"] == 2
    assert context["units"]["native+16"] in ("TSC ticks", "cycles")
    # The analysis reads the two files as one run: the guests' rows, then the host's.
    together = rundir.samples(run)
    assert len(together) == len(guests["samples.csv"].splitlines()) - 1 + len(first)


# --- a module of the distro profile: code the kernel rewrites at load ------------------------

DISTRO_RUN = FIXTURES / "runs" / "distro"
DISTRO_KO = DISTRO_RUN / "tpbench-x86_64-jump_label.ko"


def variants_in(code):
    """The variants a module has: one from before a variant was added lacks it."""
    return [v for v in native.bench.VARIANTS if f"tpbench_{v}" in code.functions]


def test_the_loader_writes_what_the_hosts_kernel_writes_at_load():
    """Each `call __fentry__` becomes ftrace's NOP and, with no return thunk in use, each
    `jmp __x86_return_thunk` becomes `ret; int3 x 4`; nothing else changes."""
    code = native.read_module(DISTRO_KO)
    sites = {}
    for section, off in code.patched_at_load:
        sites.setdefault(section, []).append(off)
    assert sites["__mcount_loc"] and sites[".return_sites"]
    variants = variants_in(code)
    plain = native.rewrites_for("ret", "plain", set())
    assert native.refusals(code, variants, plain) == {}
    image = native.lay_out(code, variants, 0, plain)
    untouched = native.lay_out(code, variants, 0, {})
    text = image.data[:len(code.text)]
    for off in sites["__mcount_loc"]:
        assert code.text[off] == 0xE8 and text[off:off + 5] == native.NOP5
    for off in sites[".return_sites"]:
        assert code.text[off] == 0xE9 and text[off:off + 5] == native.RET_PADDED
    # Nothing else changes (a byte of a site may happen to keep its value).
    changed = {k for k in range(len(code.text)) if text[k] != untouched.data[k]}
    assert changed <= {off + k for s in ("__mcount_loc", ".return_sites") for off in sites[s]
                       for k in range(5)}


@pytest.mark.parametrize("thunk", ["srso", "srso_alias", "untrain_ret", "call_depth", "its"])
def test_every_return_goes_through_the_thunk(thunk):
    """With a return thunk, each `jmp __x86_return_thunk` jumps to that thunk's own code
    (the loop function's own return included: nothing is refused for it)."""
    code = native.read_module(DISTRO_KO)
    rewrites = native.rewrites_for(thunk, "forced", set())
    variants = variants_in(code)
    assert native.refusals(code, variants, rewrites) == {}
    image = native.lay_out(code, variants, 16, rewrites, thunk)
    want = image.thunk.return_thunk
    text = image.data[16:16 + len(code.text)]
    returns = [off for section, off in code.patched_at_load if section == ".return_sites"]
    assert returns
    for off in returns:
        at = image.text_address + off
        assert text[off] == 0xE9
        assert at + 5 + struct.unpack_from("<i", text, off + 1)[0] == want


def test_call_depth_tracking_counts_the_helpers_call_in_its_padding():
    """callthunks.c: the call from rust_helper's loop to the C helper goes to `sarq $5` on
    the %gs-relative depth counter, written into the helper's NOP padding; the counter
    starts credited (-1) in the image's per-CPU page."""
    code = native.read_module(DISTRO_KO)
    rewrites = native.rewrites_for("call_depth", "forced", set())
    image = native.lay_out(code, variants_in(code), 0, rewrites, "call_depth")
    start, size = code.functions["tpbench_rust_helper"]
    helper = code.functions["tpbench_trace_helper"][0]
    calls = [off for off, _, name, _, _, _ in code.relocs
             if start <= off < start + size and name == "tpbench_trace_helper"]
    site = calls[0] - 1
    text = image.data[:len(code.text)]
    dest = site + 5 + struct.unpack_from("<i", text, site + 1)[0]
    pad = helper - native.CALL_THUNK_SIZE
    assert dest == pad
    assert text[pad:helper] == image.thunk.call_thunk(image.text_address + pad)
    assert image.gs_base is not None
    cell = image.gs_base + thunks.DEPTH_VA - native.BASE
    assert struct.unpack_from("<q", image.data, cell)[0] == -1
    # Without call depth tracking the same call goes straight to the helper.
    plain = native.lay_out(code, variants_in(code), 0, native.rewrites_for("ret", "", set()))
    ptext = plain.data[:len(code.text)]
    assert site + 5 + struct.unpack_from("<i", ptext, site + 1)[0] == helper
    assert ptext[pad:helper] == b"\x90" * native.CALL_THUNK_SIZE and plain.gs_base is None


@x86_only
@pytest.mark.parametrize("thunk", ["ret", "srso", "srso_alias", "untrain_ret", "call_depth",
                                   "its"])
def test_every_thunk_runs_on_this_cpu(thunk, tmp_path):
    """The harness maps each thunk where it belongs and runs every variant through it, the
    RSB refill of call depth tracking included: the loop functions' own returns are not
    balanced by counted calls, so the counter runs dry every dozen samples."""
    code = native.read_module(DISTRO_KO)
    variants = variants_in(code)
    # With the retpoline array mapped beside, as on a host whose kernel uses retpolines.
    indirect = ("plain", "eIBRS") if thunk == "call_depth" else ("retpoline", "Retpolines")
    out = native.time_code(code, variants, [1, 10], 13, 1, 0, tmp_path,
                           rewrites=native.rewrites_for(thunk, "forced", set(), indirect),
                           thunk=thunk)
    assert {s["variant"] for s in out.samples} == set(variants)


def test_an_unknown_host_thunk_refuses_the_host_figures_and_says_why(tmp_path, monkeypatch):
    """A vulnerabilities line the loader does not know: no variant is timed as the host's
    (the run's samples have none: those of the earlier native stage in samples.csv give way
    to native-samples.csv's), every one is refused with the line quoted, and every thunk
    is still timed beside it (native-thunks.csv.gz)."""
    run = tmp_path / "run"
    shutil.copytree(DISTRO_RUN, run, ignore=shutil.ignore_patterns("*.png", "report"))
    for ko in run.glob("tpbench-*.ko"):
        if ko.name != DISTRO_KO.name:
            ko.unlink()
    monkeypatch.setattr(native, "host_vulnerabilities",
                        lambda: dict(PLAIN_HOST, retbleed="Mitigation: Something New"))
    monkeypatch.setattr(cfg, "cache_root", lambda: tmp_path / "cache")
    before = rundir.samples(run)
    rows = native.measure_run(run, shifts=(0,), rounds=1,
                              matrix_override={"ns": [1, 10], "reps": 2, "warmup": 0})
    assert rows == []
    after = rundir.samples(run)
    assert not any(a.startswith("native") and c == "jump_label" for a, c in
                   zip(after.accel, after.config))
    assert len(after[[not a.startswith("native") for a in after.accel]]) == len(
        before[[not a.startswith("native") for a in before.accel]])
    ctx = rundir.context(run)
    assert ctx["native_about"]["host_thunk"]["name"] is None
    refused = ctx["native_about"]["refused"]["x86_64/jump_label"]
    assert set(refused) == set(ctx["native_about"]["matrix"]["variants"])
    assert all("Something New" in why for why in refused.values())
    forced = native.pd.read_csv(run / rundir.THUNK_SAMPLES)
    assert set(forced.thunk) == set(native.THUNKS)


MAINLINE_NJL_KO = FIXTURES / "modules" / "mainline-7.3.4" / "tpbench-x86_64-no_jump_label.ko"


def test_a_variant_that_calls_the_kernels_helper_is_refused_by_name():
    """Mainline's Rust without jump labels reads the count through the kernel crate's C
    helper: those variants are not timed natively, and the others are."""
    code = native.read_module(MAINLINE_NJL_KO)
    refused = native.refusals(code, variants_in(code), native.rewrites_for("ret", "plain", set()))
    assert set(refused) == {"rust_trace", "rust_txn", "rust_dense"}
    assert refused["rust_trace"] == ("tpbench_rust_trace calls the kernel's "
                                     "rust_helper_static_key_count(), a C helper of the kernel "
                                     "crate whose code is not in the module")


def test_indirect_calls_go_through_the_retpoline_or_straight_as_the_kernel_makes_them():
    """With retpolines each call to __x86_indirect_thunk_<reg> lands on that register's
    thunk of the array mapped beside; without, it becomes `call *%reg` padded with NOPs."""
    code = native.read_module(DISTRO_KO)
    sites = [off for section, off in code.patched_at_load if section == ".retpoline_sites"]
    regs = native.retpoline_registers(code)
    assert sites and set(sites) == set(regs)
    # GCC's `cs call __x86_indirect_thunk_r12` (6 bytes) leaves room for `call *%r12`.
    prefixed = [off for off in sites if code.text[off] == 0x2E]
    assert prefixed and all(regs[off] == "r12" for off in prefixed)
    retpoline = native.rewrites_for("ret", "", set(), ("retpoline", "Retpolines"))
    image = native.lay_out(code, variants_in(code), 0, retpoline)
    symbols = thunks.retpoline_symbols()
    assert [a for a, _ in image.code] == [thunks.RETPOLINE_BASE]
    for off in sites:
        at = off + 1 + (off in prefixed)
        target = at + 4 + struct.unpack_from("<i", image.data, at)[0] + native.BASE
        assert target == symbols[f"__x86_indirect_thunk_{regs[off]}"]
    plain = native.lay_out(code, variants_in(code), 0,
                           native.rewrites_for("ret", "", set(), ("plain", "eIBRS")))
    assert plain.code == ()
    for off in sites:
        k, length = thunks.REGS.index(regs[off]), 5 + (off in prefixed)
        want = thunks.indirect(code.text[off + (off in prefixed)], k, length)
        assert plain.data[off:off + length] == want
        assert want.startswith(b"\x41\xff\xd4" if regs[off] == "r12" else b"\xff")
    # With call depth tracking the kernel's accounting retpolines are not reproduced.
    depth = native.rewrites_for("call_depth", "", set(), ("retpoline", "Retpolines"))
    assert depth[".retpoline_sites"].action is None


CLANG_LTO_KO = FIXTURES / "modules" / "clang-22-lto" / "tpbench-x86_64-jump_label.ko"


@x86_only
def test_a_clang_lto_module_is_laid_out_as_the_kernel_places_it_and_runs(tmp_path):
    """clang's LTO puts each C function in a section of its own (.text.<name>): the loader
    lays them out after .text, each at its alignment, as the kernel's loader does, and every
    variant runs, kCFI's preambles and all."""
    code = native.read_module(CLANG_LTO_KO)
    variants = variants_in(code)
    assert {"c_trace", "rust_trace", "c_dense", "rust_helper"} <= set(variants)
    assert native.check_runnable(code, variants) == []
    # Run-time text only: init and exit code and the static call trampolines stay out.
    assert not {"init_module", "cleanup_module", "__SCT__tp_func_tpbench_hit"} & set(code.functions)
    start, _ = code.functions["tpbench_c_trace"]
    assert code.text[start:start + 4] == bytes.fromhex("f30f1efa")      # endbr64
    # The kCFI hash before each function, as clang emits it: mov $hash, %eax.
    cfi, _ = code.functions["__cfi_tpbench_c_trace"]
    assert code.text[cfi] == 0xB8 and cfi < start
    rewrites = native.rewrites_for("ret", "plain", set())
    assert native.refusals(code, variants, rewrites) == {}
    out = native.time_code(code, variants, [1, 10], 3, 1, 0, tmp_path, rewrites=rewrites)
    assert {s["variant"] for s in out.samples} == set(variants)


@x86_only
def test_kcfi_preambles_are_kept_without_ibt_and_refused_by_name_with_it():
    """Without IBT the kernel only re-hashes kCFI (same instructions): every variant runs.
    On an IBT CPU it rewrites each preamble into FineIBT's, which this loader does not: each
    variant whose loop has a preamble (the one before its entry) is refused, named."""
    code = native.read_module(CLANG_LTO_KO)
    variants = variants_in(code)
    assert any(section == ".cfi_sites" for section, _ in code.patched_at_load)
    kept = native.rewrites_for("ret", "plain", set())
    assert kept[".cfi_sites"].action == "keep"
    assert native.refusals(code, variants, kept) == {}
    refused = native.refusals(code, variants, native.rewrites_for("ret", "plain", {"ibt"}))
    assert "c_trace" in refused and "FineIBT" in refused["c_trace"]
    assert refused["c_trace"].startswith("tpbench_c_trace has a site in .cfi_sites")
