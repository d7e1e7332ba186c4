"""The kernel trees (Debian's source, the series applied with git am) and their builds in
the cache, keyed by their inputs; the modules built against them; the per-patch check."""

import contextlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from common import disk
from common.messages import Failure, Progress, Stage, say
from runner import config as cfg
from runner import roots
from runner.proc import locked, run, staged
from runner.roots import in_root, toolchain_versions


@dataclass(frozen=True)
class SourceTree:
    path: Path
    key: str
    kernel: cfg.KernelSource = cfg.KERNELS[cfg.DEFAULT_KERNEL]


def package_version(kernel: cfg.KernelSource) -> str:
    """The version of the kernel's source package: the host's, or the one its root pins."""
    return roots.debian_version(kernel.package, kernel.root)


def source_key(kernel: cfg.KernelSource = cfg.KERNELS[cfg.DEFAULT_KERNEL]) -> str:
    return f"{package_version(kernel)}-{cfg.series_hash(kernel)}"


def prepare_source(kernel: cfg.KernelSource = cfg.KERNELS[cfg.DEFAULT_KERNEL]) -> SourceTree:
    """Extracts Debian's tree into the cache and applies the kernel's patches with git am.

    Reuses the tree when one with the same package version and patches
    exists. The tree is made in a temporary directory and renamed into place
    only when every patch applied, so a failed attempt leaves nothing behind
    that a later run could mistake for a good tree.
    """
    key = source_key(kernel)
    final = cfg.cache_root() / f"src-{key}"
    if (final / ".tpbench-applied").exists():
        say(f"[tpbench] {kernel.name} source tree: cached at {final}")
        return SourceTree(final, key, kernel)
    patches = cfg.series_files(kernel.patches)
    for p in patches:
        if not p.exists():
            raise Failure(f"{kernel.patches.name}/series names {p.name}, which does not exist")
    disk.require_space(cfg.cache_root(), "tree", f"extracting {kernel.tarball.name}")
    with staged(final) as work:
        with Stage(f"extract {kernel.tarball.name}"):
            run(["tar", "-xf", kernel.tarball, "-C", work, "--strip-components=1"])
        if kernel.event_header:
            # As an in-tree driver's events: a header the kernel crate's bindings include.
            shutil.copyfile(cfg.EVENT_HEADER, work / "include/trace/events/tpbench.h")
        log = work / "tpbench-apply.log"
        git = ["git", "-c", "user.name=tpbench", "-c", "user.email=tpbench@localhost",
               "-c", "commit.gpgsign=false"]
        with Stage(f"apply {len(patches)} patches"):
            run(["git", "init", "-q"], cwd=work, log=log)
            # Debian's .gitignore ignores everything ('/*'), hence -f.
            run(["git", "add", "-f", "-A", "."], cwd=work, log=log)
            run([*git, "commit", "-q", "-m", f"{kernel.package} {key}"], cwd=work, log=log)
            for patch in patches:
                proc = run([*git, "am", "-q", "--reject", patch], cwd=work, log=log, check=False)
                if proc.returncode != 0:
                    rejects = sorted(str(p.relative_to(work)) for p in work.rglob("*.rej"))
                    raise Failure(f"patch {patch.name} does not apply to {kernel.package} "
                                  f"{package_version(kernel)}; rejected hunks in: "
                                  f"{', '.join(rejects) or '(none written)'}\n"
                                  f"{proc.stdout.strip()[-2000:]}")
        (work / ".tpbench-applied").write_text(key + "\n")
    return SourceTree(final, key, kernel)


def kbuild_make(src: Path, build: Path, *targets, arch=cfg.ARCHS["x86_64"], jobs=None, log=None,
                extra=()):
    jobs = jobs or (os.cpu_count() or 1) + 1
    toolchain = [f"{k}={v}" for k, v in cfg.TOOLCHAIN.items()]
    if arch.cross_compile:
        toolchain.append(f"CROSS_COMPILE={arch.cross_compile}")
    cmd = ["make", "-C", src, f"O={build}", f"ARCH={arch.kernel_arch}", f"-j{jobs}",
           *toolchain, *arch.make_args, *extra, *targets]
    return run(in_root(arch, cmd), log=log, env=arch.build_env)


@dataclass(frozen=True)
class KernelBuild:
    arch: cfg.ArchParams
    config: cfg.KernelConfig
    profile: cfg.BuildProfile
    src: Path
    build: Path
    key: str
    kernel: cfg.KernelSource = cfg.KERNELS[cfg.DEFAULT_KERNEL]

    @property
    def image(self) -> Path:
        return self.build / self.arch.image

    @property
    def build_arch(self) -> cfg.ArchParams:
        """The architecture as this kernel is built (in its source's root, if any)."""
        return cfg.build_params(self.kernel, self.arch, self.profile)


def build_key(source: SourceTree, arch: cfg.ArchParams, config: cfg.KernelConfig,
              profile: cfg.BuildProfile) -> str:
    tools = toolchain_versions(cfg.build_params(source.kernel, arch, profile))
    toolhash = cfg.digest([f"{k}={tools[k]}".encode() for k in ("rustc", "bindgen", "gcc")])
    return (f"{source.key}-{arch.name}-{profile.name}-{config.name}-"
            f"{cfg.fragment_hash(arch, config, profile, source.kernel.name)}-{toolhash}")


def configure(src: Path, build: Path, arch: cfg.ArchParams, config: cfg.KernelConfig,
              profile: cfg.BuildProfile, log: Path, kernel: str = cfg.DEFAULT_KERNEL) -> None:
    """tinyconfig + the fragments + olddefconfig, then every requested option must be there."""
    fragments = cfg.fragment_paths(arch, config, profile, kernel)
    kbuild_make(src, build, "tinyconfig", arch=arch, log=log)
    run(in_root(arch, [src / "scripts/kconfig/merge_config.sh", "-m", "-O", build,
                       build / ".config", *fragments]), cwd=src, log=log,
        env={"ARCH": arch.kernel_arch})
    kbuild_make(src, build, "olddefconfig", arch=arch, log=log)
    wanted = {}
    for path in fragments:
        wanted.update(cfg.parse_kconfig(path.read_text()))
    text = (build / ".config").read_text()
    if profile.llvm:
        check_llvm_match(text, f"{kernel}/{arch.name}/{profile.name}/{config.name}")
    lost = cfg.missing_options(wanted, text)
    if lost:
        raise Failure(f"{kernel}/{arch.name}/{profile.name}/{config.name}: these requested "
                      f"options did not survive "
                      f"olddefconfig (probably due to unsatisfied dependencies): "
                      f"{', '.join(lost)}")


def check_llvm_match(config_text: str, name: str) -> None:
    """A profile built with clang for Rust beside it wants clang and rustc on one LLVM major
    (what 7.3's RUSTC_CLANG_LLVM_COMPATIBLE tests; inline helpers and kCFI's shared type
    hashes rely on it): refuse a mismatch, naming both versions, before anything is built."""
    options = cfg.parse_kconfig(config_text)
    clang, rustc = options.get("CONFIG_CLANG_VERSION"), options.get("CONFIG_RUSTC_LLVM_VERSION")
    if not clang or clang == "0" or not rustc or rustc == "0":
        raise Failure(f"{name}: the configured kernel names no clang or no rustc LLVM "
                      f"(CONFIG_CLANG_VERSION={clang}, CONFIG_RUSTC_LLVM_VERSION={rustc}): "
                      "is the profile's root made with its clang and rustc-web?")
    if int(clang) // 10000 != int(rustc) // 10000:
        raise Failure(f"{name}: clang is LLVM {int(clang) // 10000} "
                      f"(CONFIG_CLANG_VERSION={clang}) but rustc links LLVM "
                      f"{int(rustc) // 10000} (CONFIG_RUSTC_LLVM_VERSION={rustc}); the clang "
                      "profile needs one LLVM major for both: change CLANG_LLVM in "
                      "runner/config.py to rustc's")


def build_image_and_modules(src: Path, build: Path, arch: cfg.ArchParams, log: Path) -> None:
    kbuild_make(src, build, Path(arch.image).name, "modules", arch=arch, log=log)


def build_kernel(source: SourceTree, arch: cfg.ArchParams, config: cfg.KernelConfig,
                 profile: cfg.BuildProfile = cfg.PROFILES[cfg.DEFAULT_PROFILE]) -> KernelBuild:
    """Configures and builds one kernel in its own O= directory, unless already built."""
    why = source.kernel.why_impossible(arch.name, config.name) or profile.why_not(arch.name)
    if why:
        raise Failure(f"no {source.kernel.name}/{arch.name}/{profile.name}/{config.name} "
                      f"kernel, {why}")
    key = build_key(source, arch, config, profile)
    build = cfg.cache_root() / f"build-{key}"
    with locked(build.with_name(build.name + ".lock")):
        return build_kernel_unlocked(source, arch, config, profile, key, build)


def build_kernel_unlocked(source: SourceTree, arch: cfg.ArchParams, config: cfg.KernelConfig,
                          profile: cfg.BuildProfile, key: str, build: Path) -> KernelBuild:
    result = KernelBuild(arch, config, profile, source.path, build, key, source.kernel)
    name = f"{source.kernel.name}/{arch.name}/{profile.name}/{config.name}"
    stamp = build / ".tpbench-built"
    if stamp.exists() and result.image.exists():
        say(f"[tpbench] kernel {name}: cached at {build}")
        return result
    disk.require_space(cfg.cache_root(), "kernel", f"building {name}")
    build.mkdir(parents=True, exist_ok=True)
    log = build / "tpbench-build.log"
    log.write_text("")
    with Stage(f"configure {name}"):
        configure(source.path, build, result.build_arch, config, profile, log, source.kernel.name)
    progress = BuildProgress(log, built_steps().get(name))
    with Stage(f"build {name} kernel and modules (log: {log})"), \
            Progress(f"build {name}", progress.describe):
        build_image_and_modules(source.path, build, result.build_arch, log)
    remember_steps(name, progress.steps)
    stamp.write_text(key + "\n")
    return result


# A line of kbuild's short output: "  CC      kernel/cpu.o", "  LD [M]  net/x.ko".
_KBUILD_STEP = re.compile(r"^  [A-Z][A-Z0-9_]*(?: \[M\]| [A-Z])?\s+(\S+)$")


class BuildProgress:
    """What a kernel build has done so far, from its log: kbuild's steps against those of
    the last build of the same kernel, architecture, profile and config, and where it is."""

    def __init__(self, log: Path, expected: int | None):
        self.log, self.expected = log, expected
        self.steps, self.offset, self.where = 0, 0, ""

    def describe(self) -> str:
        with contextlib.suppress(OSError), open(self.log, "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
            # Only whole lines: the rest is read again next time.
            whole = chunk[:chunk.rfind(b"\n") + 1]
            self.offset += len(whole)
            for line in whole.decode(errors="replace").splitlines():
                m = _KBUILD_STEP.match(line)
                if m:
                    self.steps += 1
                    self.where = "/".join(m.group(1).split("/")[:2])
        of = f" of about {self.expected}" if self.expected else ""
        return f"{self.steps}{of} kbuild steps" + (f", in {self.where}" if self.where else "")


STEPS_FILE = "build-steps.json"


def built_steps() -> dict[str, int]:
    """kbuild steps of the last build of each kernel/arch/profile/config, for the progress."""
    with contextlib.suppress(OSError, ValueError):
        return json.loads((cfg.cache_root() / STEPS_FILE).read_text())
    return {}


def remember_steps(name: str, steps: int) -> None:
    with contextlib.suppress(OSError):
        disk.write_atomically(cfg.cache_root() / STEPS_FILE,
                              json.dumps(dict(built_steps(), **{name: steps}), indent=1))


def check_series_bisectable(source: SourceTree, arch: cfg.ArchParams, configs,
                            profile: cfg.BuildProfile = cfg.PROFILES[cfg.DEFAULT_PROFILE]
                            ) -> list[tuple[str, str, bool]]:
    """Builds the tree after each patch of the series, for each config: every patch must build.

    Uses a worktree of the cached source repository, checked out commit by
    commit so that each build is incremental. Returns (patch, config, ok).
    """
    repo = source.path
    kernel = source.kernel
    arch = cfg.build_params(kernel, arch, profile)
    commits = run(["git", "rev-list", "--reverse",
                   "HEAD~%d..HEAD" % len(cfg.series_files(kernel.patches))],
                  cwd=repo).stdout.split()
    tree = cfg.cache_root() / f"bisect-{source.key}"
    if not tree.exists():
        run(["git", "worktree", "add", "--detach", tree, commits[0]], cwd=repo)
    results = []
    for config in configs:
        build = cfg.cache_root() / f"bisect-{source.key}-{arch.name}-{profile.name}-{config.name}"
        build.mkdir(parents=True, exist_ok=True)
        for commit in commits:
            subject = run(["git", "log", "-1", "--format=%s", commit], cwd=repo).stdout.strip()
            log = build / f"build-{commit[:12]}.log"
            log.write_text("")
            run(["git", "checkout", "-q", "--detach", commit], cwd=tree)
            with Stage(f"bisect {config.name}: {subject}"):
                try:
                    if not (build / ".config").exists():
                        configure(tree, build, arch, config, profile, log, kernel.name)
                    kbuild_make(tree, build, "olddefconfig", arch=arch, log=log)
                    build_image_and_modules(tree, build, arch, log)
                    results.append((subject, config.name, True))
                except Failure as e:
                    say(str(e))
                    results.append((subject, config.name, False))
    return results


def build_external_module(kbuild: KernelBuild, module_dir: Path, extra=()) -> None:
    """Builds an out-of-tree module against a built kernel."""
    log = module_dir / "tpbench-build.log"
    log.write_text("")
    with Stage(f"build module {module_dir.name} for {kbuild.arch.name}/{kbuild.config.name}"):
        kbuild_make(kbuild.src, kbuild.build, "modules", arch=kbuild.build_arch, log=log,
                    extra=(f"M={module_dir}", *extra))


def kernel_helpers_code(kbuild: KernelBuild, ko: Path) -> str:
    """`objdump -d` of the kernel crate's C helpers (`rust_helper_*`) that a module calls,
    from the kernel's vmlinux; "" when it calls none.

    A Rust site that calls one on its disabled path (mainline's static_branch_unlikely!
    without CONFIG_JUMP_LABEL reads the key's count through rust_helper_static_key_count())
    runs that code too, and the codegen walk counts it from here.
    """
    arch = kbuild.build_arch
    symbols = run(in_root(arch, [arch.objdump, "-t", ko], share=[ko.parent])).stdout
    helpers = sorted({line.split()[-1] for line in symbols.splitlines()
                      if "*UND*" in line and line.split()[-1].startswith("rust_helper_")})
    return "".join(run(in_root(arch, [arch.objdump, "-d", "--insn-width=16",
                                      f"--disassemble={name}", kbuild.build / "vmlinux"])).stdout
                   for name in helpers)


def disassemble(arch: cfg.ArchParams, ko: Path) -> str:
    """`objdump -dr` of a module, by the binutils of the architecture's build (its
    standard output alone: a warning on standard error is not code)."""
    cmd = in_root(arch, [arch.objdump, "-dr", "--insn-width=16", ko], share=[ko.parent])
    proc = subprocess.run(cmd, text=True, capture_output=True)
    if proc.returncode != 0:
        raise Failure(f"{arch.objdump} could not disassemble {ko}: {proc.stderr.strip()}")
    return proc.stdout


def build_sample_module(kbuild: KernelBuild) -> Path:
    """The rust_print sample as a loadable module, built from the patched tree's files.

    The boot test needs the sample built in (its event fires at init, before
    a module's events could be enabled); the codegen test looks at the .ko a
    driver author would ship. This builds the same sources with the sample's
    own Makefile and CONFIG_SAMPLE_RUST_PRINT=m, outside the kernel's tree.
    """
    out = kbuild.build / "tpbench-rust-print-module"
    ko = out / "rust_print.ko"
    if ko.exists() and (out / ".tpbench-built").exists():
        return ko
    if out.exists():
        shutil.rmtree(out)
    out.mkdir()
    sample = kbuild.src / "samples/rust"
    for name in ("Makefile", "rust_print_main.rs", "rust_print_events.c"):
        shutil.copy(sample / name, out / name)
    build_external_module(kbuild, out, extra=("CONFIG_SAMPLE_RUST_PRINT=m",))
    (out / ".tpbench-built").write_text("")
    return ko


def recipients(src: Path, patches: list[Path]) -> tuple[list[str], list[str]]:
    """Whom a series goes to, as the tree's scripts/get_maintainer.pl says and b4 asks it:
    the maintainers of the files the patches touch (To) and their reviewers and lists (Cc).
    Only MAINTAINERS decides: no git history (a Debian tarball has none) and no keywords
    (a word in a commit message, such as riscv64 in a table, is no claim on the patch)."""
    def ask(*flags):
        out = run(["perl", src / "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
                   "--no-rolestats", "--no-keywords", *flags, *patches], cwd=src).stdout
        return [line for line in out.splitlines() if line.strip()]
    to = ask("--no-l", "--no-r")
    return to, [name for name in ask("--no-m") if name not in to]
