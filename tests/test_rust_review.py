"""What a Rust-for-Linux maintainer runs on the series: clippy and rustdoc, with Debian's
tools of the same version as rustc-web (rust-web-clippy's clippy-driver, rustdoc). Each runs
in a copy of a cached kernel build, so the cache is never rebuilt with other flags, and
what it produced is cached as the builds are (see review_outputs)."""

import dataclasses
import shutil
from pathlib import Path

import pytest

from common import messages
from runner import bench, kernel, proc
from runner import config as cfg
from tests.conftest import ALL_KERNELS, TEST_ARCHS

CLIPPY = ("CLIPPY=1", "CLIPPY_DRIVER=/usr/bin/clippy-driver")
# The kernels whose series the review covers: the 6.12 series, and the series for mainline
# where this run of the tests builds it (make test-full).
REVIEWED = ["series"] + sorted({k for k, a, _ in ALL_KERNELS
                               if k == "mainline-series" and a == "x86_64"})


def review_outputs(kb, step: str, inputs, run) -> Path:
    """The outputs of a review step (`run(copy, out)`: a make in a copy of the build, which
    leaves in `out` the logs and files the test reads), cached as the kernel builds are:
    keyed by everything that decides them, the build's key (sources, series, fragments,
    rustc, bindgen and the C compiler), the step and its own inputs (such as clippy's
    version and the module's sources). Only a step that finished is kept."""
    key = cfg.digest([kb.key.encode(), step.encode(), *inputs])
    entry = cfg.cache_root() / f"review-{step}-{key}"
    if (entry / "done").exists():
        messages.say(f"[tpbench] {step}: cached at {entry}")
        return entry
    with proc.staged(entry) as out:
        with messages.Stage(f"{step} in a copy of {kb.build.name}"):
            run(copy_of(kb, out / "scratch"), out)
        shutil.rmtree(out / "scratch")
        (out / "done").write_text(key + "\n")
    return entry


def copy_of(kb, tmp_path) -> kernel.KernelBuild:
    """The build, copied: a make with other flags there leaves the cached one as it was."""
    dst = tmp_path / "build"
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(kb.build, dst, symlinks=True)
    return dataclasses.replace(kb, build=dst)


def warnings(log_text: str) -> list[str]:
    return [line for line in log_text.splitlines() if line.startswith(("warning", "error"))]


@pytest.mark.skipif("x86_64" not in TEST_ARCHS, reason="runs on the x86_64 builds")
@pytest.mark.parametrize("name", ["jump_label", "no_jump_label"])
@pytest.mark.parametrize("kernel_name", REVIEWED)
def test_clippy_has_nothing_to_say_about_the_series(built, kernel_name, name):
    """The kernel crate (jump_label.rs, tracepoint.rs and lib.rs of the series), the
    rust_print sample and the benchmark module, built with CLIPPY=1: no warning at all."""
    def clippy(kb, out):
        kernel.kbuild_make(kb.src, kb.build, "rust/", "samples/rust/", arch=kb.build_arch,
                          log=out / "clippy.log", extra=CLIPPY)
        ko = bench.build_bench_module(kb, out / "scratch" / "module", extra=CLIPPY)
        shutil.copy(ko.parent / "tpbench-build.log", out / "module-clippy.log")
    module = sorted(bench.BENCH_MODULE.iterdir())
    out = review_outputs(built(kernel_name, "x86_64", name), "clippy",
                         [proc.output_of(["/usr/bin/clippy-driver", "--version"]).encode(),
                          *(p.name.encode() + p.read_bytes() for p in module if p.is_file())],
                         clippy)
    text = (out / "clippy.log").read_text()
    assert "CLIPPY L rust/kernel.o" in text and "CLIPPY     samples/rust/rust_print_main.o" in text
    assert warnings(text) == []
    module_log = (out / "module-clippy.log").read_text()
    assert "CLIPPY" in module_log and warnings(module_log) == []


RUSTDOC_PAGES = ("jump_label/macro.static_branch_unlikely.html", "macro.declare_trace.html")


@pytest.mark.skipif("x86_64" not in TEST_ARCHS, reason="runs on the x86_64 builds")
@pytest.mark.parametrize("kernel_name", REVIEWED)
def test_rustdoc_documents_the_new_macros(built, kernel_name):
    def rustdoc(kb, out):
        kernel.kbuild_make(kb.src, kb.build, "rustdoc", arch=kb.build_arch,
                           log=out / "rustdoc.log")
        doc = kb.build / "Documentation/output/rust/rustdoc/kernel"
        for page in RUSTDOC_PAGES:
            if (doc / page).exists():
                (out / "pages" / page).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(doc / page, out / "pages" / page)
    out = review_outputs(built(kernel_name, "x86_64", "jump_label"), "rustdoc", [], rustdoc)
    assert warnings((out / "rustdoc.log").read_text()) == []
    for page in RUSTDOC_PAGES:
        assert (out / "pages" / page).exists(), page


MISMATCH = """// SPDX-License-Identifier: GPL-2.0

//! declare_trace! with an argument list that is not the event's TP_PROTO.

use kernel::prelude::*;

module! {
    type: Mismatch,
    name: "mismatch",
    license: "GPL",
}

mod trace {
    kernel::declare_trace! {
        /// `tpbench_hit`'s TP_PROTO is `(unsigned long i)`; this says `(u8, u64)`.
        ///
        /// # Safety
        ///
        /// None: the module is only built, never loaded.
        pub(crate) unsafe fn tpbench_hit(i: u8, extra: u64);
    }
}

struct Mismatch;

impl kernel::Module for Mismatch {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: Only built, never loaded.
        unsafe { trace::tpbench_hit(1, 2) };
        Ok(Mismatch)
    }
}
"""


@pytest.mark.skipif("x86_64" not in TEST_ARCHS, reason="runs on the x86_64 builds")
@pytest.mark.parametrize("name", ["jump_label", "no_jump_label"])
def test_a_tp_proto_mismatch_is_not_caught(kernels, tmp_path, name):
    """What declare_trace!'s documentation warns of: argument types that are not the
    event's TP_PROTO compile and link without a word; the C side then reads an
    unsigned long where Rust passed a u8 and a u64. A change that makes this a build
    error will fail this test, which is then to be turned around."""
    from runner import config as cfg
    src = cfg.REPO / "bench-module"
    for f in ("tpbench_trace.h", "tpbench_events.c", "tpbench.h", "tpbench_variants.h"):
        shutil.copy(src / f, tmp_path / f)
    (tmp_path / "mismatch_main.rs").write_text(MISMATCH)
    (tmp_path / "Kbuild").write_text("ccflags-y += -I$(src)\nobj-m := mismatch.o\n"
                                     "mismatch-y := mismatch_main.o tpbench_events.o\n")
    kernel.build_external_module(kernels[("x86_64", name)], tmp_path)
    log = (tmp_path / "tpbench-build.log").read_text()
    assert (tmp_path / "mismatch.ko").exists() and warnings(log) == []


def test_review_outputs_are_kept_only_for_a_step_that_finished(tmp_path, monkeypatch):
    """The cache of review steps: a step that fails leaves no entry, one that finishes is
    read back without running again, and another key runs it again."""
    monkeypatch.setenv("TPBENCH_CACHE", str(tmp_path / "cache"))
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "vmlinux").write_text("built")
    kb = kernel.KernelBuild(cfg.ARCHS["x86_64"], cfg.KERNEL_CONFIGS["jump_label"],
                           cfg.PROFILES["distro"], tmp_path,
                           tmp_path / "build", "key-1")
    calls = []

    def failing(copy, out):
        raise messages.Failure("make failed")

    def logging(copy, out):
        calls.append(copy.build)
        (out / "step.log").write_text((copy.build / "vmlinux").read_text())

    with pytest.raises(messages.Failure, match="make failed"):
        review_outputs(kb, "step", [b"in"], failing)
    assert list((tmp_path / "cache").iterdir()) == []
    first = review_outputs(kb, "step", [b"in"], logging)
    assert (first / "step.log").read_text() == "built" and not (first / "scratch").exists()
    assert review_outputs(kb, "step", [b"in"], logging) == first and len(calls) == 1
    assert review_outputs(kb, "step", [b"other"], logging) != first and len(calls) == 2
