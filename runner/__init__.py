"""tpbench runner: builds the patched kernels and boots them in QEMU."""
