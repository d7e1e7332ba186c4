# tpbench: what a disabled tracepoint costs when Rust calls it.
# `make help` lists the targets.

PYTHON ?= /usr/bin/python3
ACCEL ?= auto
export ACCEL

.PHONY: help deps kernels sample test unit-test

help:
	@echo "tpbench targets:"
	@echo "  make deps       install the Debian packages (as root), or print the apt-get command"
	@echo "  make kernels    extract, patch and build both x86_64 kernels (cached)"
	@echo "  make sample     boot the jump_label kernel and show the Rust sample's trace"
	@echo "  make test       everything above, checked: series, checkpatch, builds, boots, codegen"
	@echo "  make unit-test  only the tests that need no kernel"
	@echo "variables:"
	@echo "  ACCEL=auto|kvm|tcg   QEMU accelerator (auto: KVM if it boots, else TCG) [$(ACCEL)]"
	@echo "  TPBENCH_CACHE=DIR    where trees and builds are cached [~/.cache/tpbench]"

deps:
	@$(PYTHON) -m runner deps

kernels: deps
	$(PYTHON) -m runner kernels

sample: deps
	$(PYTHON) -m runner sample --configs jump_label --event on --accel $(ACCEL)

test: deps
	$(PYTHON) -m pytest -v -p no:cacheprovider tests

unit-test:
	$(PYTHON) -m pytest -v -p no:cacheprovider tests/test_console.py tests/test_jump_table.py tests/test_runner.py
