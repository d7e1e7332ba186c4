"""The architectures tpbench knows, once: their names in the order every table prints them,
and the ELF machine each module of theirs carries. runner/config.py's ARCHS gives each its
build and boot parameters under the same names (a test holds the two together)."""

NAMES = ("x86_64", "arm64", "arm", "riscv64", "loongarch64")

# e_machine as pyelftools names it -> architecture. pyelftools 0.29 (Debian 12) does not name
# EM_LOONGARCH (258).
MACHINES = {"EM_X86_64": "x86_64", "EM_AARCH64": "arm64", "EM_RISCV": "riscv64", "EM_ARM": "arm",
            258: "loongarch64"}
