"""Configuration as data: architectures, kernel configs, accelerators, paths.

Nothing here runs a command; runner.proc, roots, kernel and qemu do.
"""

import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path

from common import binder, series

REPO = Path(__file__).resolve().parent.parent
PATCHES = REPO / "patches"
CONFIGS = REPO / "configs"


# The kernel build must use Debian's toolchain, not the rustup one on PATH.
TOOLCHAIN = {
    "RUSTC": "/usr/bin/rustc",
    "RUSTDOC": "/usr/bin/rustdoc",
    "BINDGEN": "/usr/bin/bindgen",
}

# bindgen 0.60.1 loads the newest libclang it finds at run time; with libclang 16 (which a
# newer clang pulls in) it panics on every anonymous union. Every kernel build is pinned to
# LLVM 14's, the one Debian 12's bindgen was built for.
LIBCLANG_PATH = "/usr/lib/llvm-14/lib"

ACCELS = ("auto", "kvm", "tcg")

# Every kernel runs the kernel crate's doctests with KUnit at boot (CONFIG_RUST_KERNEL_DOCTESTS);
# the series' macros have their examples in these files.
DOCTEST_SUITE = "rust_doctests_kernel"
SERIES_DOCTEST_FILES = ("rust/kernel/jump_label.rs", "rust/kernel/tracepoint.rs")
# The boot parameter that keeps KUnit from running them, for boots that check something
# else: they take most of an x86_64 or arm64 boot under TCG.
KUNIT_OFF = "kunit.enable=0"

# The kernel's own static key test (CONFIG_TEST_STATIC_KEYS=m), modules of the build in
# load order: test_static_keys uses keys that test_static_key_base defines. Its init
# checks every kind of C static branch both ways and fails the load if one is wrong.
STATIC_KEY_TESTS = ("lib/test_static_key_base.ko", "lib/test_static_keys.ko")

# Debian packages the project needs; `make deps` installs them.
DEBIAN_PACKAGES = (
    "make", "gcc", "binutils",   # the native harness is built with gcc; objdump reads modules
    "linux-source-6.12", "rustc-web", "rust-web-src", "bindgen",
    "libclang-14-dev", "flex", "bison", "bc", "libelf-dev", "libssl-dev",
    "cpio", "xz-utils", "git", "qemu-system-x86",
    "python3", "python3-pytest", "python3-pyelftools", "python3-pandas", "python3-numpy",
    "python3-pyflakes",   # tests/test_layout.py: no unused import or undefined name
    "gnuplot-nox",      # every plot and figure
    "python3-ply", "python3-git",   # checkpatch's spdxcheck.py
    "rustfmt-web", "rust-web-clippy",   # rustfmtcheck and CLIPPY=1, of rustc-web's version
    "linux-config-6.12",   # Debian's own configs, which the distro profile is checked against
    "gdb",      # single-steps a Binder round trip (runner/gdb_round_trip.py)
)


@dataclass(frozen=True)
class DebianRoot:
    """A Debian root in the cache, for an architecture whose toolchain Debian 12 lacks.

    mmdebstrap (a Debian 12 package) makes it from this list alone, so its cache key is
    this list; the root's packages are never installed into the host. Builds, the guest's
    init, QEMU and objdump of such an architecture run inside it (roots.in_root).
    """
    suite: str
    packages: tuple[str, ...]
    libclang_path: str      # the root's libclang, for its bindgen
    mirror: str = "http://deb.debian.org/debian"
    more_suites: tuple[str, ...] = ()   # further suites of the same mirror, e.g. backports

    @property
    def key(self) -> str:
        return digest([self.suite.encode(), self.mirror.encode(), *map(str.encode, self.packages),
                       *(f"suite {s}".encode() for s in self.more_suites)])

    @property
    def sources(self) -> list[str]:
        """mmdebstrap's mirror arguments: one apt source line per suite."""
        return [f"deb {self.mirror} {s} main" for s in (self.suite, *self.more_suites)]


# Mainline's own implementation (merged in 6.13), as Debian 13's backports ship it. The
# version is pinned: a newer upload changes nothing until this line does (README, "Mainline").
MAINLINE_PACKAGE = "linux-source-7.3"
MAINLINE_VERSION = "7.3.4-1~bpo13+1"

# QEMU from Debian 13's backports: 10.0's loongarch TCG aborts under -icount ("Raised
# interrupt while not in I/O function") on the self-IPI of irq_work_queue(), which 7.3's SRCU
# raises for tracepoint_srcu as the module loads; 11.1 runs it. Pinned, as the kernel is; apt
# takes a backports version only when named, so QEMU's packages are named with it.
QEMU_BACKPORTS_VERSION = "1:11.1.3+ds-2~bpo13+1"

# Debian 13: GCC 14 for LoongArch, rustc 1.96, bindgen 0.71.1 with libclang 19, QEMU 11.1
# from the backports; the mainline tree and the cross compilers that build it for each
# architecture.
TRIXIE_ROOT = DebianRoot(
    suite="trixie",
    packages=("gcc-loongarch64-linux-gnu", "make", "bc", "flex", "bison", "libelf-dev",
              "libssl-dev", "python3", "rustc-web", "rust-web-src", "bindgen", "libclang-dev",
              # CLIPPY=1 on the series for mainline (tests/test_rust_review.py)
              "rust-web-clippy",
              "clang", "lld", "llvm", "cpio", "kmod",
              *(f"{p}={QEMU_BACKPORTS_VERSION}"
                for p in ("qemu-system-misc", "qemu-system-common", "qemu-system-data")),
              "gcc", "gcc-aarch64-linux-gnu", "gcc-arm-linux-gnueabihf", "gcc-riscv64-linux-gnu",
              f"{MAINLINE_PACKAGE}={MAINLINE_VERSION}"),
    libclang_path="/usr/lib/llvm-19/lib",
    more_suites=("trixie-backports",),
)


# The kernels Android ships Rust drivers in are clang-built (issue 34). Debian 13's clang 22
# and rustc-web 1.96 share LLVM 22, as CONFIG_RUSTC_CLANG_LLVM_COMPATIBLE wants; the kernel's
# check is matched by kernel.check_llvm_match at configure time. Its bindgen (0.71.1) makes
# opaque structs with libclang >= 22 (rust-bindgen PR 3278), so it loads libclang 21, which
# trixie has only in its backports.
CLANG_LLVM = "22"
CLANG_ROOT = DebianRoot(
    suite="trixie",
    packages=("make", "bc", "flex", "bison", "libelf-dev", "libssl-dev", "python3", "cpio",
              "kmod", "xz-utils", "rustc-web", "rust-web-src", "bindgen", "libclang1-21",
              f"clang-{CLANG_LLVM}", f"lld-{CLANG_LLVM}", f"llvm-{CLANG_LLVM}",
              # objdump for arm64's modules and kernel helpers (ArchParams.objdump): LLVM=
              # needs no binutils, so nothing else brings it into the root.
              "binutils-aarch64-linux-gnu"),
    libclang_path="/usr/lib/llvm-21/lib",
    more_suites=("trixie-backports",),
)


@dataclass(frozen=True)
class KernelSource:
    """A kernel the module is measured on: a Debian source package and the patches on it.

    With `root`, the package is the one installed in that Debian root, and every kernel of
    this source is built inside it (the guests still boot in the host's QEMU, as 6.12's).
    With `build_root` alone, the host's package is built inside that root.
    """
    name: str
    package: str
    patches: Path           # a directory whose `series` file lists the patches, in order
    root: "DebianRoot | None" = None
    # Copy the module's trace header into the tree as include/trace/events/tpbench.h: mainline's
    # declare_trace! reaches an event only through the kernel crate's bindings.
    event_header: bool = False
    what: str = ""
    build_root: "DebianRoot | None" = None
    # Architectures where this kernel has Rust and 6.12 has none: each gets the fragment
    # <arch>-rust.config on top of its base one, and the module's Rust variants.
    rust_archs: tuple[str, ...] = ()
    # (arch, config, why): kernels of this source that cannot exist; a run leaves them out.
    impossible: tuple[tuple[str, str, str], ...] = ()
    # The kernel whose profile fragments (<profile>-<kernel>.config) this one takes: a
    # patched kernel is configured as the tree it patches.
    configured_as: str = ""
    # Fragments of configs/ every build of this kernel takes, after the profile's: what the
    # kernel is for (the Binder kernels' driver).
    fragments: tuple[str, ...] = ()

    def why_impossible(self, arch: str, config: str) -> str | None:
        return next((why for a, c, why in self.impossible if (a, c) == (arch, config)), None)

    @property
    def tarball(self) -> Path:
        inside = Path(f"/usr/src/{self.package}.tar.xz")
        return root_dir(self.root) / inside.relative_to("/") if self.root else inside


EVENT_HEADER = REPO / "bench-module" / "tpbench_trace.h"

KERNELS = {
    "series": KernelSource("series", "linux-source-6.12", PATCHES,
                           what="Debian 12's 6.12 with the series (patches/)"),
    "mainline": KernelSource("mainline", MAINLINE_PACKAGE, REPO / "patches-mainline",
                             root=TRIXIE_ROOT, event_header=True,
                             rust_archs=("arm",),   # ARMv7 since 6.15
                             impossible=(("arm64", "no_jump_label",
                                          "as 7.3's arch/arm64/Kconfig selects JUMP_LABEL: "
                                          "every arm64 kernel has jump labels"),),
                             what=f"Debian 13 backports' {MAINLINE_PACKAGE} {MAINLINE_VERSION}, "
                                  "mainline's own implementation, built in the Debian 13 root"),
    # Mainline with what the benchmark found, as a series for mainline (issue 35).
    "mainline-series": KernelSource("mainline-series", MAINLINE_PACKAGE,
                                    REPO / "patches-mainline-series", root=TRIXIE_ROOT,
                                    event_header=True, rust_archs=("arm",),
                                    impossible=(("arm64", "no_jump_label",
                                                 "as 7.3's arch/arm64/Kconfig selects JUMP_LABEL: "
                                                 "every arm64 kernel has jump labels"),),
                                    what=f"mainline ({MAINLINE_VERSION}) with the series "
                                         "for mainline (patches-mainline-series/)",
                                    configured_as="mainline"),
    # The series' very tree, built by mainline's compilers: what differs between it and
    # "series" is the compiler's doing, what differs between it and "mainline" the kernel's.
    "series-gcc14": KernelSource("series-gcc14", "linux-source-6.12", PATCHES,
                                 build_root=TRIXIE_ROOT,
                                 what="the series' 6.12 tree built in the Debian 13 root "
                                      "(GCC 14), with mainline's toolchain"),
}

# Mainline with one of its Binder drivers built in (issue 36): "mainline"'s tree, or that tree
# with a harness patch (`world`: the floor, every tracepoint call compiled to nothing; the
# helper world, Rust's events through out-of-line C functions).
BINDER_DRIVERS = {"c": "C Binder (drivers/android/binder.c)",
                  "rust": "Rust Binder (drivers/android/binder/)"}
BINDER_WORLDS = {"": "", "floor": " and every tracepoint call compiled to nothing",
                 "helper": " reaching each event through an out-of-line C function",
                 "series": " and the series for mainline (patches-mainline-series/)"}
BINDER_PATCHES = {"": KERNELS["mainline"].patches, "series": KERNELS["mainline-series"].patches,
                  "floor": REPO / "patches-binder-floor", "helper": REPO / "patches-binder-helper"}


def binder_kernel(driver: str, world: str = "") -> KernelSource:
    return replace(KERNELS["mainline"], name=binder.kernel_name(driver, world),
                   configured_as="mainline", patches=BINDER_PATCHES[world],
                   fragments=(f"binder-{driver}.config",),
                   what=f"mainline ({MAINLINE_VERSION}) with {BINDER_DRIVERS[driver]} built "
                        f"in{BINDER_WORLDS[world]}")


BINDER_KERNELS = {k.name: k for k in (binder_kernel("c"), binder_kernel("c", "floor"),
                                      binder_kernel("rust"), binder_kernel("rust", "floor"),
                                      binder_kernel("rust", "helper"),
                                      binder_kernel("rust", "series"))}
KERNELS.update(BINDER_KERNELS)
# The tracefs event system of each kernel's driver.
BINDER_EVENTS = {name: "binder" if name.startswith("binder-c") else "rust_binder"
                 for name in BINDER_KERNELS}

DEFAULT_KERNEL = "series"


@dataclass(frozen=True)
class ArchParams:
    """What differs between architectures (after KUnit's QemuArchParams)."""
    name: str
    kernel_arch: str
    image: str              # path of the boot image inside the build dir
    base_fragment: str      # Kconfig fragment applied on top of tinyconfig
    cross_compile: str      # CROSS_COMPILE prefix; empty for the host's architecture
    qemu_binary: str
    console: str            # the guest's console device
    results_tty: str        # the guest's device for the results channel
    # QEMU arguments for the results channel; {path} is the host file it goes to.
    results_args: tuple[str, ...]
    qemu_machine_args: tuple[str, ...]
    kvm_possible: bool      # a KVM guest of this architecture can run on this host
    packages: tuple[str, ...] = ()   # Debian packages only this architecture needs
    make_args: tuple[str, ...] = ()  # more kbuild variables, such as LLVM=-14
    kernel_cc: str = ""              # the kernel's C compiler; empty: CROSS_COMPILE's gcc
    rust: bool = True                # 6.12 supports Rust here (Documentation/rust/arch-support.rst)
    tcg_kernel_args: str = ""        # more kernel parameters for a boot under TCG
    objdump: str = "objdump"         # the binutils objdump that reads this architecture
    # Guest instructions per tick of the module's counter under -icount shift=0: 1, but for
    # loongarch64's stable counter, which QEMU runs at 100 MHz of its 1 GHz virtual clock.
    counter_period: int = 1
    root: DebianRoot | None = None   # builds and boots inside this root, not on the host

    @property
    def build_env(self) -> dict[str, str]:
        return {"LIBCLANG_PATH": self.root.libclang_path if self.root else LIBCLANG_PATH}

    @property
    def c_compiler(self) -> str:
        """The GCC that builds this architecture's guest init."""
        return f"{self.cross_compile}gcc"

    @property
    def kernel_compiler(self) -> str:
        return self.kernel_cc or self.c_compiler


@dataclass(frozen=True)
class KernelConfig:
    """One kernel configuration to build and run: base fragment + its own."""
    name: str
    fragment: str


# The results channel where the machine has no second UART: a virtio console (hvc0).
VIRTIO_RESULTS = ("-device", "virtio-serial-device", "-chardev", "file,id=results,path={path}",
                  "-device", "virtconsole,chardev=results")

ARCHS = {
    "x86_64": ArchParams(
        name="x86_64",
        kernel_arch="x86",
        image="arch/x86/boot/bzImage",
        base_fragment="x86_64-base.config",
        cross_compile="",
        qemu_binary="qemu-system-x86_64",
        console="ttyS0",
        results_tty="ttyS1",
        results_args=("-serial", "file:{path}"),
        qemu_machine_args=("-m", "512", "-smp", "1"),
        kvm_possible=True,
        # Calibrating the local APIC timer busy-waits 100 ms of guest time, which under
        # -icount took 12 of a 14 s boot; the benchmark runs with interrupts off, so the
        # PIT serves as the tick.
        tcg_kernel_args="noapictimer",
    ),
    "arm64": ArchParams(
        name="arm64",
        kernel_arch="arm64",
        image="arch/arm64/boot/Image",
        base_fragment="arm64-base.config",
        objdump="aarch64-linux-gnu-objdump",
        cross_compile="aarch64-linux-gnu-",
        qemu_binary="qemu-system-aarch64",
        console="ttyAMA0",
        results_tty="hvc0",
        results_args=VIRTIO_RESULTS,
        qemu_machine_args=("-M", "virt", "-cpu", "cortex-a57", "-m", "512", "-smp", "1"),
        kvm_possible=False,
        packages=("gcc-aarch64-linux-gnu", "qemu-system-arm"),
    ),
    # ARMv7, C only: 6.12 has no Rust for 32-bit arm, but patch 4 changed its asm.
    "arm": ArchParams(
        name="arm",
        kernel_arch="arm",
        image="arch/arm/boot/zImage",
        base_fragment="arm-base.config",
        objdump="arm-linux-gnueabihf-objdump",
        cross_compile="arm-linux-gnueabihf-",
        qemu_binary="qemu-system-arm",
        console="ttyAMA0",
        results_tty="hvc0",
        results_args=VIRTIO_RESULTS,
        qemu_machine_args=("-M", "virt", "-m", "512", "-smp", "1"),
        kvm_possible=False,
        packages=("gcc-arm-linux-gnueabihf", "qemu-system-arm"),
        rust=False,
    ),
    # Rust on riscv needs a clang-built kernel (HAVE_RUST if CC_IS_CLANG): Debian 12's
    # LLVM 14, the one its bindgen was built for. GCC builds the guest's init.
    "riscv64": ArchParams(
        name="riscv64",
        kernel_arch="riscv",
        image="arch/riscv/boot/Image",
        base_fragment="riscv64-base.config",
        objdump="riscv64-linux-gnu-objdump",
        cross_compile="riscv64-linux-gnu-",
        qemu_binary="qemu-system-riscv64",
        console="ttyS0",
        results_tty="hvc0",
        results_args=VIRTIO_RESULTS,
        # -bios default: the OpenSBI firmware QEMU ships (Debian's opensbi package).
        qemu_machine_args=("-M", "virt", "-bios", "default", "-m", "512", "-smp", "1"),
        kvm_possible=False,
        packages=("gcc-riscv64-linux-gnu", "clang-14", "lld-14", "llvm-14", "qemu-system-misc",
                  "opensbi"),
        make_args=("LLVM=-14",),
        kernel_cc="clang-14",
    ),
    # LoongArch needs Debian 13's cross GCC (6.12 wants LLVM 18 or GCC for it) and QEMU:
    # Debian 12's QEMU 7.2 prints nothing with the same kernel. QEMU loads the ELF vmlinux
    # itself, with no firmware; -net none keeps it from looking for a PXE ROM.
    "loongarch64": ArchParams(
        name="loongarch64",
        kernel_arch="loongarch",
        image="vmlinux",
        base_fragment="loongarch64-base.config",
        objdump="loongarch64-linux-gnu-objdump",
        cross_compile="loongarch64-linux-gnu-",
        qemu_binary="qemu-system-loongarch64",
        console="ttyS0",
        results_tty="ttyS1",
        results_args=("-serial", "file:{path}"),
        qemu_machine_args=("-M", "virt", "-m", "1024", "-smp", "1", "-net", "none"),
        kvm_possible=False,
        counter_period=10,
        packages=("mmdebstrap",),
        root=TRIXIE_ROOT,
    ),
}

KERNEL_CONFIGS = {
    "jump_label": KernelConfig("jump_label", "jump_label.config"),
    "no_jump_label": KernelConfig("no_jump_label", "no_jump_label.config"),
}


@dataclass(frozen=True)
class BuildProfile:
    """How the kernel is built around the series: optimisation, mitigations, tracer.

    `fragment` applies to every architecture, then `<name>-<arch>.config` to each of
    `arch_fragments` (the architecture's own mitigations), then `<name>-<kernel>.config` to
    each kernel of `kernel_fragments` on the architectures it names (what that kernel's Debian
    configs do differently there).
    """
    name: str
    fragment: str
    arch_fragments: tuple[str, ...] = ()
    what: str = ""
    kernel_fragments: tuple[tuple[str, tuple[str, ...]], ...] = ()   # (kernel, its archs)
    # A profile on top of another: that one's fragments first, then this one's.
    extends: str = ""
    # Built in this root with LLVM=-<llvm> (C, assembler, linker), not with GCC; only on
    # `archs` (empty: every architecture).
    root: DebianRoot | None = None
    llvm: str = ""
    archs: tuple[str, ...] = ()

    def fragments(self, arch: "ArchParams", kernel: str = DEFAULT_KERNEL) -> list[str]:
        base = PROFILES[self.extends].fragments(arch, kernel) if self.extends else []
        own = [f"{self.name}-{arch.name}.config"] if arch.name in self.arch_fragments else []
        if arch.name in dict(self.kernel_fragments).get(kernel, ()):
            own.append(f"{self.name}-{kernel}.config")
        return [*base, self.fragment, *own]

    def why_not(self, arch: str) -> str | None:
        """Why this profile builds no kernel for `arch`; None if it does."""
        if self.archs and arch not in self.archs:
            return (f"the {self.name} profile is built for {', '.join(self.archs)} only "
                    "(Android's GKI architectures)")
        return None


PROFILES = {
    "distro": BuildProfile("distro", "distro.config", ("x86_64", "arm64", "arm"),
                           "-O2 with Debian's mitigations and function tracer",
                           # Not arm: 7.3 has no lazy preemption there, so voluntary stays, as
                           # in 6.12 (backports ship no armhf linux-config-7.3 to check).
                           kernel_fragments=(("mainline", ("x86_64", "arm64", "riscv64",
                                                           "loongarch64")),)),
    "tiny": BuildProfile("tiny", "tiny.config", (), "tinyconfig's -Os, no function tracer"),
    # Android's GKI code generation on top of distro: clang, LTO, kCFI, PREEMPT, and the
    # shadow call stack on arm64 (clang.config says where each option comes from).
    "clang": BuildProfile("clang", "clang.config", ("arm64",),
                          f"distro built by clang {CLANG_LLVM} with full LTO, kCFI and "
                          "PREEMPT, as Android's GKI (arm64: shadow call stack)",
                          kernel_fragments=(("series", ("x86_64", "arm64")),
                                            ("mainline", ("x86_64", "arm64"))),
                          extends="distro", root=CLANG_ROOT, llvm=CLANG_LLVM,
                          archs=("x86_64", "arm64")),
}
# What users run: make bench and make test measure it unless PROFILES says otherwise.
DEFAULT_PROFILE = "distro"


def cache_root() -> Path:
    """Where extracted trees and builds live: never inside the checkout."""
    env = os.environ.get("TPBENCH_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "tpbench"


def root_dir(root: DebianRoot) -> Path:
    """Where a Debian root lives in the cache: keyed by its suites and packages."""
    return cache_root() / f"root-{root.suite}-{root.key}"


def series_files(patches: Path | None = None) -> list[Path]:
    """The patches listed in `patches`/series (the series' by default), in order."""
    return series.series_files(patches or PATCHES)


def digest(parts) -> str:
    """A short content hash over byte strings, for cache keys."""
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:12]


def series_hash(kernel: KernelSource | None = None) -> str:
    """What a source tree is made of beyond its package: its patches (and the event header)."""
    files = series_files(kernel.patches if kernel else None)
    header = [b"event header\0" + EVENT_HEADER.read_bytes()] if kernel and kernel.event_header else []
    return digest([f.name.encode() + b"\0" + f.read_bytes() for f in files] + header)


def build_params(kernel: KernelSource, arch: ArchParams,
                 profile: "BuildProfile | None" = None) -> ArchParams:
    """`arch` as `kernel`'s kernels are built in `profile`: inside its root, with the root's
    LLVM, and with Rust where the kernel has it; a profile with its own LLVM builds every
    kernel inside its root with that LLVM alone."""
    if arch.name in kernel.rust_archs:
        arch = replace(arch, rust=True)
    if profile is not None and profile.llvm:
        return replace(arch, root=profile.root, make_args=(f"LLVM=-{profile.llvm}",),
                       kernel_cc=f"clang-{profile.llvm}")
    root = kernel.build_root or kernel.root
    if root is None or arch.root is not None:
        return arch
    make_args = tuple("LLVM=1" if a.startswith("LLVM=") else a for a in arch.make_args)
    return replace(arch, root=root, make_args=make_args,
                   kernel_cc="clang" if arch.kernel_cc else "")


def fragment_paths(arch: ArchParams, config: KernelConfig, profile: BuildProfile,
                   kernel: str = DEFAULT_KERNEL) -> list[Path]:
    """In the order merge_config applies them: base (and Rust where only this kernel has it),
    profile, then the config's own."""
    source = KERNELS[kernel]
    rust = [CONFIGS / f"{arch.name}-rust.config"] if arch.name in source.rust_archs else []
    return [CONFIGS / arch.base_fragment, *rust,
            *(CONFIGS / f for f in profile.fragments(arch, source.configured_as or kernel)),
            *(CONFIGS / f for f in source.fragments), CONFIGS / config.fragment]


def fragment_hash(arch: ArchParams, config: KernelConfig, profile: BuildProfile,
                  kernel: str = DEFAULT_KERNEL) -> str:
    return digest([p.read_bytes() for p in fragment_paths(arch, config, profile, kernel)])


def parse_kconfig(text: str) -> dict[str, str]:
    """CONFIG_X -> its value, with 'n' for '# CONFIG_X is not set' lines."""
    options = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("CONFIG_") and "=" in line:
            key, value = line.split("=", 1)
            options[key] = value
        elif line.startswith("# CONFIG_") and line.endswith(" is not set"):
            options[line[2:-len(" is not set")]] = "n"
    return options


def missing_options(wanted: dict[str, str], dotconfig_text: str) -> list[str]:
    """The requested options that a .config does not have as requested."""
    have = parse_kconfig(dotconfig_text)
    return sorted(k for k, v in wanted.items() if have.get(k, "n") != v)
