"""What a Rust-for-Linux maintainer runs on the series: clippy and rustdoc, with Debian's
tools of the same version as rustc-web (rust-web-clippy's clippy-driver, rustdoc). Each runs
in a copy of a cached kernel build, so the cache is never rebuilt with other flags."""

import shutil

import pytest

from runner import bench, world
from tests.conftest import TEST_ARCHS

CLIPPY = ("CLIPPY=1", "CLIPPY_DRIVER=/usr/bin/clippy-driver")


def copy_of(kb, tmp_path) -> world.KernelBuild:
    """The build, copied: a make with other flags there leaves the cached one as it was."""
    dst = tmp_path / "build"
    shutil.copytree(kb.build, dst, symlinks=True)
    return world.KernelBuild(kb.arch, kb.config, kb.src, dst, kb.key)


def warnings(log_text: str) -> list[str]:
    return [line for line in log_text.splitlines() if line.startswith(("warning", "error"))]


@pytest.mark.skipif("x86_64" not in TEST_ARCHS, reason="runs on the x86_64 builds")
@pytest.mark.parametrize("name", ["jump_label", "no_jump_label"])
def test_clippy_has_nothing_to_say_about_the_series(kernels, tmp_path, name):
    """The kernel crate (jump_label.rs, tracepoint.rs and lib.rs of the series), the
    rust_print sample and the benchmark module, built with CLIPPY=1: no warning at all."""
    kb = copy_of(kernels[("x86_64", name)], tmp_path)
    log = tmp_path / "clippy.log"
    world.kbuild_make(kb.src, kb.build, "rust/", "samples/rust/", arch=kb.arch, log=log,
                      extra=CLIPPY)
    text = log.read_text()
    assert "CLIPPY L rust/kernel.o" in text and "CLIPPY     samples/rust/rust_print_main.o" in text
    assert warnings(text) == []
    ko = bench.build_bench_module(kb, tmp_path / "module", extra=CLIPPY)
    module_log = (ko.parent / "tpbench-build.log").read_text()
    assert "CLIPPY" in module_log and warnings(module_log) == []


@pytest.mark.skipif("x86_64" not in TEST_ARCHS, reason="runs on the x86_64 builds")
def test_rustdoc_documents_the_new_macros(kernels, tmp_path):
    kb = copy_of(kernels[("x86_64", "jump_label")], tmp_path)
    log = tmp_path / "rustdoc.log"
    world.kbuild_make(kb.src, kb.build, "rustdoc", arch=kb.arch, log=log)
    assert warnings(log.read_text()) == []
    doc = kb.build / "Documentation/output/rust/rustdoc/kernel"
    for page in ("jump_label/macro.static_key_false.html", "macro.declare_trace.html"):
        assert (doc / page).exists(), page


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
    for f in ("tpbench_trace.h", "tpbench_events.c", "tpbench.h"):
        shutil.copy(src / f, tmp_path / f)
    (tmp_path / "mismatch_main.rs").write_text(MISMATCH)
    (tmp_path / "Kbuild").write_text("ccflags-y += -I$(src)\nobj-m := mismatch.o\n"
                                     "mismatch-y := mismatch_main.o tpbench_events.o\n")
    world.build_external_module(kernels[("x86_64", name)], tmp_path)
    log = (tmp_path / "tpbench-build.log").read_text()
    assert (tmp_path / "mismatch.ko").exists() and warnings(log) == []
