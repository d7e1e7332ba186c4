# tpbench: what a disabled tracepoint costs when Rust calls it.
# `make help` lists the targets.

PYTHON ?= /usr/bin/python3
ACCEL ?= auto
export ACCEL
# Architectures for make bench (x86_64 only by default, so the default run stays fast)
# and for make test. loongarch64's and 32-bit arm's kernels (arm has no Rust in 6.12) are in
# make test-full alone: with mainline's x86_64 kernel and the Binder kernel, all of them would
# not fit in CI's 75 minutes on a new machine.
ARCHS ?= x86_64
ALL_ARCHS = x86_64 arm64 arm riscv64 loongarch64
TEST_ARCHS ?= x86_64 arm64 riscv64
export TEST_ARCHS
# The Binder kernels make test boots with the Binder workload (x86_64, jump labels), and their
# build profile: Rust Binder built tiny; make test-full boots C and Rust Binder built distro.
TEST_BINDER_KERNELS ?= binder-rust
export TEST_BINDER_KERNELS
TEST_BINDER_PROFILE ?= tiny
export TEST_BINDER_PROFILE
# The architectures whose no_jump_label kernel make test builds too: with mainline's x86_64
# kernel and the Debian 13 root, arm64's second kernel would take a new machine past CI's 75
# minutes. make test-full builds both kernels of every TEST_ARCHS.
TEST_NO_JUMP_LABEL_ARCHS ?= x86_64
export TEST_NO_JUMP_LABEL_ARCHS
# Build profiles for make bench: distro (-O2, Debian's mitigations and function tracer: what
# users run) by default; PROFILES="distro tiny" adds tinyconfig's -Os build to the same run.
PROFILES ?= distro
# The architectures the further profiles and kernels are measured on (default: all of ARCHS);
# NAME=ARCH,ARCH gives one of them its own, e.g. "tiny=x86_64,arm64 series-gcc14=x86_64".
COMPARE_ARCHS ?=
# The profile make test builds and checks; make test-full checks tiny too.
TEST_PROFILE ?= distro
export TEST_PROFILE
# The architectures whose mainline kernel (Debian 13 backports' linux-source-7.3, built in the
# Debian 13 root) make test builds and boots beside the series' with the same checks.
TEST_MAINLINE_ARCHS ?= x86_64
export TEST_MAINLINE_ARCHS
# Their configs: CONFIG_JUMP_LABEL=y in make test; make test-full adds =n.
TEST_MAINLINE_CONFIGS ?= jump_label
export TEST_MAINLINE_CONFIGS
# The 7.3 kernels make test builds there: mainline; make test-full adds mainline-series.
TEST_MAINLINE_KERNELS ?= mainline
export TEST_MAINLINE_KERNELS
# The kernel of make bench, make kernels and make sample: series (6.12 with patches/),
# mainline, or series-gcc14 (the series' tree built with mainline's compilers).
KERNEL ?= series
# Kernels make bench measures beside KERNEL, in the first profile, on COMPARE_ARCHS: mainline
# by default; mainline-series is mainline with what the benchmark found (patches-mainline-series/);
# series-gcc14 tells the compiler's part of the differences from the kernel's.
COMPARE_KERNELS ?= $(filter-out $(KERNEL),mainline)
# QUICK=1: a short matrix (3 values of N, 5 repetitions).
QUICK_ARGS = $(if $(QUICK),--ns "1 10 100" --reps 5)
# REUSE=<run-id>: take from that earlier run each guest it holds for the same kernel build,
# module sources, matrix and QEMU, instead of booting it again (ACCEL=tcg: exact counts only).
REUSE_ARGS = $(if $(REUSE),--reuse data/$(REUSE))
RUN_DIR = $(if $(RUN),data/$(RUN),$$($(PYTHON) -m analysis latest))
INCOMPLETE = $(if $(ALLOW_INCOMPLETE),--allow-incomplete,)

.PHONY: help deps kernels sample bench native codegen report compare test test-full unit-test \
	binder check-series

help:
	@echo "tpbench targets:"
	@echo "  make bench        the whole benchmark: kernels (cached), module, QEMU runs into"
	@echo "                    data/<run-id>/, the native stage, statistics, plots, codegen, REPORT.md"
	@echo "  make native       time the newest run's x86_64 modules on the host CPU (or RUN=<id>)"
	@echo "  make codegen      disassemble and check the newest run's modules (or RUN=<id>)"
	@echo "  make report       REPORT.md and plots again from the newest run (or RUN=<id>)"
	@echo "  make compare      what changed from run AGAINST=<id> to the newest (or RUN=<id>)"
	@echo "  make test         what CI runs: series, checkpatch, builds, boots, benchmark, analysis"
	@echo "                    (no_jump_label kernels of TEST_NO_JUMP_LABEL_ARCHS alone)"
	@echo "  make test-full    make test with both kernels of every architecture, in both"
	@echo "                    profiles"
	@echo "  make unit-test    only the tests that need no kernel"
	@echo "  make deps         install the Debian packages (as root), or print the apt-get command"
	@echo "  make kernels      extract, patch and build both kernels of each of TEST_ARCHS (cached)"
	@echo "  make sample       boot the jump_label kernel (KERNEL=...) and show the Rust sample's trace"
	@echo "  make binder       boot mainline with C and Rust Binder (shipped, floor, helper world)"
	@echo "                    and time Binder round trips in each (x86_64)"
	@echo "  make check-series build each tree after each patch, both configs: the 6.12 series"
	@echo "                    and the series for mainline (slow)"
	@echo "variables:"
	@echo "  ACCEL=auto|kvm|tcg   QEMU accelerator (auto: KVM if it boots, else TCG) [$(ACCEL)]"
	@echo "  ARCHS=\"x86_64 arm64\" architectures for make bench [$(ARCHS)]"
	@echo "  TEST_ARCHS=...       architectures for make test and make kernels [$(TEST_ARCHS)]"
	@echo "  TEST_NO_JUMP_LABEL_ARCHS=...  those make test also boots without jump labels"
	@echo "                       [$(TEST_NO_JUMP_LABEL_ARCHS)]"
	@echo "  PROFILES=\"distro tiny\" build profiles for make bench, the first the headline's [$(PROFILES)]"
	@echo "  COMPARE_ARCHS=...    the architectures of the further profiles and kernels"
	@echo "                       [all of ARCHS]; NAME=ARCH,ARCH gives one of them its own"
	@echo "  TEST_PROFILE=...     the build profile make test checks [$(TEST_PROFILE)]"
	@echo "  TEST_MAINLINE_ARCHS=...  those make test also builds and boots mainline for"
	@echo "                       [$(TEST_MAINLINE_ARCHS)]"
	@echo "  TEST_MAINLINE_CONFIGS=...  mainline's configs make test builds [$(TEST_MAINLINE_CONFIGS)]"
	@echo "  TEST_MAINLINE_KERNELS=...  the 7.3 kernels make test builds there (mainline,"
	@echo "                       mainline-series) [$(TEST_MAINLINE_KERNELS)]"
	@echo "  KERNEL=series|mainline|mainline-series|series-gcc14  the kernel of make bench,"
	@echo "                       kernels and sample"
	@echo "                       [$(KERNEL)]"
	@echo "  COMPARE_KERNELS=...  kernels make bench measures beside KERNEL, on COMPARE_ARCHS;"
	@echo "                       PROFILE/KERNEL builds one in a further profile (clang/mainline)"
	@echo "                       [$(COMPARE_KERNELS)]"
	@echo "  QUICK=1              short matrix for make bench"
	@echo "  REUSE=<run-id>       make bench takes each guest that earlier run holds for the"
	@echo "                       same kernel build, module and matrix from it (ACCEL=tcg)"
	@echo "  RUN=<run-id>         the run under data/ for native, codegen, report and compare"
	@echo "  AGAINST=<run-id>     the earlier run make compare compares RUN with"
	@echo "  ALLOW_INCOMPLETE=1   analyse an incomplete run (every output says so)"
	@echo "  TPBENCH_CACHE=DIR    where trees and builds are cached [~/.cache/tpbench]"
	@echo "  PYTHON=...           the Python every step runs with [$(PYTHON)]"

deps:
	@$(PYTHON) -m runner deps

kernels: deps
	@for arch in $(TEST_ARCHS); do \
		$(PYTHON) -m runner kernels --arch $$arch --profiles "$(PROFILES)" \
			--kernel $(KERNEL) || exit 1; done

sample: deps
	$(PYTHON) -m runner sample --configs jump_label --event on --accel $(ACCEL) --kernel $(KERNEL)

# Binder round trips (issue 36): mainline 7.3.4 with C or Rust Binder, shipped, floor,
# helper world and Rust with the series for mainline, each booted with the Binder workload.
# make binder boots each into out/binder/ (x86_64, jump labels); make bench BINDER=1 boots
# each on BINDER_ARCHS in every config into data/<run-id>/binder/, and the report gets its
# answer and page.
BINDER_KERNELS ?= binder-c binder-c-floor binder-rust binder-rust-floor binder-rust-helper \
	binder-rust-series
BINDER_ARCHS ?= x86_64
BINDER_ARGS = $(if $(BINDER),--binder-kernels "$(BINDER_KERNELS)" --binder-archs "$(BINDER_ARCHS)")
binder: deps
	@for k in $(BINDER_KERNELS); do \
		$(PYTHON) -m runner binder --kernel $$k --configs jump_label --accel $(ACCEL) \
			|| exit 1; done

check-series: deps
	$(PYTHON) -m runner check-series --kernel series
	$(PYTHON) -m runner check-series --kernel mainline-series

bench: deps
	$(PYTHON) -m tpbench bench --archs "$(ARCHS)" --profiles "$(PROFILES)" \
		--compare-archs "$(COMPARE_ARCHS)" --kernel $(KERNEL) \
		--compare-kernels "$(COMPARE_KERNELS)" --accel $(ACCEL) $(QUICK_ARGS) $(REUSE_ARGS) \
		$(BINDER_ARGS)

native:
	$(PYTHON) -m tpbench native --run $(RUN_DIR)

codegen:
	$(PYTHON) -m tpbench codegen --run $(RUN_DIR) $(INCOMPLETE)

report:
	$(PYTHON) -m tpbench report --run $(RUN_DIR) $(INCOMPLETE)

# What changed between two runs' verdicts (counts, loads, calls, native ranges).
compare:
	@test -n "$(AGAINST)" || { echo "make compare RUN=<run-id> AGAINST=<run-id>" >&2; exit 2; }
	$(PYTHON) -m analysis compare --run $(RUN_DIR) --against data/$(AGAINST)

test: deps
	$(PYTHON) -m pytest -v -p no:cacheprovider --capture=tee-sys --durations=15 tests

# Both kernels of every architecture, in every build profile (clang: x86_64 and arm64).
test-full:
	$(MAKE) test TEST_ARCHS="$(ALL_ARCHS)" TEST_NO_JUMP_LABEL_ARCHS="$(ALL_ARCHS)" \
		TEST_MAINLINE_ARCHS="$(ALL_ARCHS)" TEST_MAINLINE_CONFIGS="jump_label no_jump_label" \
		TEST_MAINLINE_KERNELS="mainline mainline-series" \
		TEST_BINDER_KERNELS="binder-c binder-rust" TEST_BINDER_PROFILE=distro
	$(MAKE) test TEST_ARCHS="$(ALL_ARCHS)" TEST_NO_JUMP_LABEL_ARCHS="$(ALL_ARCHS)" \
		TEST_PROFILE=tiny TEST_MAINLINE_ARCHS= TEST_BINDER_KERNELS=
	$(MAKE) test TEST_ARCHS="x86_64 arm64" TEST_NO_JUMP_LABEL_ARCHS="x86_64 arm64" \
		TEST_PROFILE=clang TEST_MAINLINE_ARCHS="x86_64 arm64" \
		TEST_MAINLINE_CONFIGS="jump_label no_jump_label" TEST_BINDER_KERNELS=

# Every test that needs no kernel build, boot or tree (conftest marks the others).
unit-test:
	$(PYTHON) -m pytest -v -p no:cacheprovider -m "not kernel" tests
