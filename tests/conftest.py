"""Shared fixtures: the built kernels are made once per session (and cached across runs)."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runner import config as cfg  # noqa: E402
from runner import kernel, qemu  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
# The variants of the module that captured the KTAP and record fixtures (x86_64, jump labels):
# the list before rust_txn_lazy was added.
FIXTURE_VARIANTS = ("c_empty", "rust_empty", "c_base", "rust_base", "c_trace", "rust_trace",
                    "rust_helper", "rust_load", "rust_count_call", "c_txn_base", "rust_txn_base",
                    "c_txn", "rust_txn", "c_dense", "rust_dense")
# The architectures the kernel tests build and boot. The defaults here are the Makefile's,
# so that pytest run alone tests what `make test` does; `make test-full` widens them.
TEST_ARCHS = os.environ.get("TEST_ARCHS", "x86_64 arm64 riscv64").split()
OUT = cfg.REPO / "out" / "test"
# Those with Rust in 6.12, where the benchmark runs (all but 32-bit arm).
RUST_ARCHS = [a for a in TEST_ARCHS if a in cfg.ARCHS and cfg.ARCHS[a].rust]
# Those whose no_jump_label kernel is built too. Ten kernels do not fit in CI's 75 minutes on
# a new machine, so `make test` names x86_64 alone; `make test-full` all.
NO_JUMP_LABEL_ARCHS = os.environ.get("TEST_NO_JUMP_LABEL_ARCHS", "x86_64").split()
# The build profile of every kernel the tests build: distro (what users run) in make test,
# tiny too in make test-full.
TEST_PROFILE = os.environ.get("TEST_PROFILE", cfg.DEFAULT_PROFILE)
# The (arch, config) kernels the tests build and boot.
KERNELS = [(a, c) for a in TEST_ARCHS for c in cfg.KERNEL_CONFIGS
           if c == "jump_label" or a in NO_JUMP_LABEL_ARCHS]
# The architectures whose mainline kernel (cfg.KERNELS["mainline"]) is built and booted
# beside the series' with the same checks, and its configs (make test: CONFIG_JUMP_LABEL=y).
MAINLINE_ARCHS = os.environ.get("TEST_MAINLINE_ARCHS", "x86_64").split()
MAINLINE_CONFIGS = os.environ.get("TEST_MAINLINE_CONFIGS", "jump_label").split()
# The 7.3 kernels built there: mainline in make test; make test-full adds mainline-series
# (mainline with patches-mainline-series/), whose build would take a new machine past CI's
# 75 minutes.
MAINLINE_KERNELS = os.environ.get("TEST_MAINLINE_KERNELS", "mainline").split()
# Every (kernel, arch, config) the tests build: the series' kernels, then the 7.3 ones.
ALL_KERNELS = ([("series", a, c) for a, c in KERNELS]
               + [(k, a, c) for k in MAINLINE_KERNELS for a in MAINLINE_ARCHS
                  for c in MAINLINE_CONFIGS if not cfg.KERNELS[k].why_impossible(a, c)])
# The Binder kernels (issue 36) booted with the Binder workload on x86_64 with jump labels,
# and their build profile: make test boots Rust Binder built tiny (a distro build of mainline
# would take a new machine past CI's 75 minutes); make test-full C and Rust Binder built
# distro, as make bench BINDER=1 does.
BINDER_KERNELS = os.environ.get("TEST_BINDER_KERNELS", "binder-rust").split()
BINDER_PROFILE = os.environ.get("TEST_BINDER_PROFILE", "tiny")
_counts = {"passed": 0, "failed": 0, "skipped": 0}


def pytest_configure(config):
    accel = os.environ.get("ACCEL", "auto")
    if accel not in cfg.ACCELS:
        raise pytest.UsageError(f"unknown ACCEL {accel!r}; valid values: {', '.join(cfg.ACCELS)}")
    if TEST_PROFILE not in cfg.PROFILES:
        raise pytest.UsageError(f"unknown TEST_PROFILE {TEST_PROFILE!r}; valid values: "
                                f"{', '.join(cfg.PROFILES)}")
    unknown = [c for c in MAINLINE_CONFIGS if c not in cfg.KERNEL_CONFIGS]
    if unknown:
        raise pytest.UsageError(f"unknown config {unknown[0]!r} in TEST_MAINLINE_CONFIGS; "
                                f"valid: {', '.join(cfg.KERNEL_CONFIGS)}")
    unknown = [k for k in MAINLINE_KERNELS if k not in cfg.KERNELS]
    if unknown:
        raise pytest.UsageError(f"unknown kernel {unknown[0]!r} in TEST_MAINLINE_KERNELS; "
                                f"valid: {', '.join(cfg.KERNELS)}")
    unknown = [k for k in BINDER_KERNELS if k not in cfg.BINDER_KERNELS]
    if unknown or BINDER_PROFILE not in cfg.PROFILES:
        raise pytest.UsageError(f"unknown Binder kernel or profile in TEST_BINDER_KERNELS "
                                f"({' '.join(BINDER_KERNELS)}) or TEST_BINDER_PROFILE "
                                f"({BINDER_PROFILE}); valid: {', '.join(cfg.BINDER_KERNELS)}; "
                                f"{', '.join(cfg.PROFILES)}")
    unknown = [a for a in TEST_ARCHS + NO_JUMP_LABEL_ARCHS + MAINLINE_ARCHS if a not in cfg.ARCHS]
    if unknown:
        raise pytest.UsageError(f"unknown architecture {unknown[0]!r} in TEST_ARCHS; "
                                f"supported: {', '.join(cfg.ARCHS)}")


# Fixtures that build or boot a kernel (or extract its tree); a test that uses one is marked
# `kernel`, and `make unit-test` runs every other test (pytest -m "not kernel").
KERNEL_FIXTURES = {"source_tree", "mainline_tree", "kernels", "built", "sample_initramfs",
                   "two_runs", "binder_boot"}


def pytest_collection_modifyitems(config, items):
    config.addinivalue_line("markers", "kernel: needs a built kernel or the kernel tree")
    for item in items:
        if KERNEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.kernel)


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _counts[report.outcome] += 1


def pytest_unconfigure(config):
    # The plain closing line CI reads; printed after pytest's own summary.
    print(f"\n{_counts['passed']} passed, {_counts['failed']} failed, {_counts['skipped']} skipped")


@pytest.fixture(scope="session")
def accel():
    return os.environ.get("ACCEL", "auto")


@pytest.fixture(scope="session")
def source_tree():
    return kernel.prepare_source()


@pytest.fixture(scope="session")
def mainline_tree():
    """Mainline's tree (with its harness patch), which make test builds anyway: its
    MAINTAINERS and scripts/get_maintainer.pl say whom the series for mainline goes to."""
    return kernel.prepare_source(cfg.KERNELS["mainline"])


@pytest.fixture(scope="session")
def kernels(source_tree):
    """Every kernel of KERNELS in TEST_PROFILE, built once (or taken from the cache)."""
    return {(arch, name): kernel.build_kernel(source_tree, cfg.ARCHS[arch], cfg.KERNEL_CONFIGS[name],
                                             cfg.PROFILES[TEST_PROFILE])
            for arch, name in KERNELS}


@pytest.fixture(scope="session")
def built(kernels):
    """`built(kernel, arch, config)`: that kernel in TEST_PROFILE, built on first use. The
    series' kernels are all built first (as `kernels`), so that a failure shows there."""
    trees, builds = {}, {("series", a, c): kb for (a, c), kb in kernels.items()}

    def build(name: str, arch: str, config: str) -> kernel.KernelBuild:
        if (name, arch, config) not in builds:
            if name not in trees:
                trees[name] = kernel.prepare_source(cfg.KERNELS[name])
            builds[(name, arch, config)] = kernel.build_kernel(
                trees[name], cfg.ARCHS[arch], cfg.KERNEL_CONFIGS[config],
                cfg.PROFILES[TEST_PROFILE])
        return builds[(name, arch, config)]
    return build


@pytest.fixture(scope="session")
def guest_inits(source_tree):
    return {arch: qemu.guest_init(source_tree, cfg.ARCHS[arch]) for arch in TEST_ARCHS}


@pytest.fixture(scope="session")
def sample_initramfs(guest_inits):
    OUT.mkdir(parents=True, exist_ok=True)
    return {arch: qemu.make_initramfs(OUT / f"initramfs-sample-{arch}.cpio.gz", init)
            for arch, init in guest_inits.items()}


@pytest.fixture(scope="session")
def binder_boot(accel):
    """`binder_boot(name)`: the Binder kernel `name` (x86_64, jump labels, BINDER_PROFILE)
    booted once with the Binder workload: (boot result, parsed results channel)."""
    from runner import binder
    boots = {}

    def boot(name: str):
        if name not in boots:
            source = kernel.prepare_source(cfg.KERNELS[name])
            kb = kernel.build_kernel(source, cfg.ARCHS["x86_64"],
                                     cfg.KERNEL_CONFIGS["jump_label"], cfg.PROFILES[BINDER_PROFILE])
            boots[name] = binder.boot_binder(kb, accel, OUT, f"binder-{name}-{BINDER_PROFILE}",
                                             timeout=600)
        return boots[name]
    return boot
