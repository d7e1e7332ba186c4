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
