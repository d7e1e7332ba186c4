"""Every subprocess the runner starts (builds, QEMU) goes through here.

The rest of the runner is pure: configuration (runner.config) and console
parsing (common.console).
"""

import contextlib
import dataclasses
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import console, disk
from common.messages import Failure, Progress, Stage, say
from runner import config as cfg

INIT_MARKER = "tpbench-init: started"


def run(cmd, *, cwd=None, env=None, log: Path | None = None, check=True) -> subprocess.CompletedProcess:
    """Runs a command; with `log`, its output goes there and the tail is shown on failure."""
    full_env = dict(os.environ, **(env or {}))
    if log is None:
        proc = subprocess.run(cmd, cwd=cwd, env=full_env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output = proc.stdout
    else:
        with open(log, "a") as f:
            f.write(f"$ {shlex.join(map(str, cmd))}\n")
            f.flush()
            proc = subprocess.run(cmd, cwd=cwd, env=full_env, text=True,
                                  stdout=f, stderr=subprocess.STDOUT)
        output = Path(log).read_text(errors="replace")
    if check and proc.returncode != 0:
        tail = "\n".join(output.splitlines()[-25:])
        where = f" (full log: {log})" if log else ""
        raise Failure(f"command failed with status {proc.returncode}{where}:\n"
                      f"  {shlex.join(map(str, cmd))}\n{tail}")
    proc.stdout = output
    return proc


@contextlib.contextmanager
def staged(final: Path):
    """A fresh directory beside `final` that becomes `final` only if the block succeeds, so a
    failed or interrupted attempt leaves nothing a later run could take for a good result."""
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{final.name}.tmp-", dir=final.parent))
    try:
        yield work
        if final.exists():
            shutil.rmtree(final)
        work.rename(final)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def locked(path: Path):
    """Holds an exclusive lock on `path` (made if missing): two processes that build the same
    kernel take turns, and the second finds the first's build."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"[tpbench] waiting for another tpbench process to finish {path.stem}")
            fcntl.flock(f, fcntl.LOCK_EX)
        yield


def output_of(cmd) -> str:
    try:
        return subprocess.run(cmd, text=True, capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unavailable"


def debian_version(package: str, root: cfg.DebianRoot | None = None) -> str:
    """The installed version of `package`, on the host or in a Debian root of the cache."""
    admin = [f"--admindir={debian_root(root) / 'var/lib/dpkg'}"] if root else []
    version = output_of(["dpkg-query", *admin, "-W", "-f=${Version}", package])
    if version == "unavailable" or not version:
        raise Failure(f"Debian package {package} is not installed; run `make deps` as root "
                      f"(or: apt-get install {package})")
    return version


def toolchain_versions(arch: cfg.ArchParams = cfg.ARCHS["x86_64"],
                       boot: cfg.ArchParams | None = None) -> dict[str, str]:
    """The compilers `arch` builds with, and the QEMU that `boot` (default: `arch`) boots in:
    a kernel built in a root (mainline) still boots in the host's QEMU."""
    def version(params, *cmd):
        return (output_of(in_root(params, [*cmd, "--version"])).splitlines() or ["none"])[0]
    return {
        "rustc": version(arch, cfg.TOOLCHAIN["RUSTC"]),
        "bindgen": version(arch, cfg.TOOLCHAIN["BINDGEN"]),
        "gcc": version(arch, arch.kernel_compiler),
        "qemu": version(boot or arch, (boot or arch).qemu_binary),
    }


def check_packages(packages=cfg.DEBIAN_PACKAGES) -> list[str]:
    """The packages of `packages` that dpkg does not list as installed."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n", *packages],
                         text=True, capture_output=True).stdout
    installed = {line.split()[0] for line in out.splitlines() if line.endswith(" installed")}
    return [p for p in packages if p not in installed]


# ---------------------------------------------------------------------------
# Debian roots, for architectures whose toolchain Debian 12 lacks


def debian_root(root: cfg.DebianRoot) -> Path:
    """The root's directory in the cache, made with mmdebstrap the first time."""
    final = cfg.root_dir(root)
    if (final / ".tpbench-made").exists():
        return final
    if shutil.which("mmdebstrap") is None:
        raise Failure(f"mmdebstrap not found: it makes the Debian {root.suite} root that "
                      f"builds and boots this architecture; `make deps` installs it")
    if os.geteuid() != 0:
        raise Failure(f"making the Debian {root.suite} root needs root (mmdebstrap's root "
                      f"mode, and chroot to use it); run as root")
    disk.require_space(cfg.cache_root(), "root", f"making the Debian {root.suite} root")
    with staged(final) as work:
        log = work.parent / f"{final.name}.log"
        cmd = ["mmdebstrap", "--variant=apt", f"--include={','.join(root.packages)}",
               root.suite, work, *root.sources]
        with Stage(f"make the Debian {root.suite} root with mmdebstrap (log: {log})"), \
                Progress("mmdebstrap", lambda: last_line(log, "I: ") or "starting"):
            log.write_text("")
            run(cmd, log=log)
        (work / ".tpbench-made").write_text(root.key + "\n")
    return final


def last_line(path: Path, prefix: str) -> str:
    """The last line of `path` that starts with `prefix`, without it ("" if none)."""
    with contextlib.suppress(OSError):
        lines = [l for l in path.read_text(errors="replace").splitlines() if l.startswith(prefix)]
        return lines[-1][len(prefix):] if lines else ""
    return ""


# Enters a root in a private mount namespace: the checkout, the cache and the temporary
# directory appear at their own paths, so every path means the same inside and out.
ENTER_ROOT = cfg.REPO / "runner" / "enter-root.sh"


def in_root(arch: cfg.ArchParams, cmd, share=()) -> list[str]:
    """`cmd` as it runs for `arch`: unchanged on the host, else inside the arch's root, which
    sees the checkout, the cache, the temporary directory and the directories `share`."""
    cmd = [str(c) for c in cmd]
    if arch.root is None:
        return cmd
    shared = sorted({str(cfg.REPO), str(cfg.cache_root().resolve()), tempfile.gettempdir(),
                     *(str(Path(d).resolve()) for d in share)})
    return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", str(ENTER_ROOT),
            str(debian_root(arch.root)), *shared, "--", *cmd]


# ---------------------------------------------------------------------------
# Kernel source and builds


@dataclass(frozen=True)
class SourceTree:
    path: Path
    key: str
    kernel: cfg.KernelSource = cfg.KERNELS[cfg.DEFAULT_KERNEL]


def package_version(kernel: cfg.KernelSource) -> str:
    """The version of the kernel's source package: the host's, or the one its root pins."""
    return debian_version(kernel.package, kernel.root)


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
        return cfg.build_params(self.kernel, self.arch)


def build_key(source: SourceTree, arch: cfg.ArchParams, config: cfg.KernelConfig,
              profile: cfg.BuildProfile) -> str:
    tools = toolchain_versions(cfg.build_params(source.kernel, arch))
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
    lost = cfg.missing_options(wanted, (build / ".config").read_text())
    if lost:
        raise Failure(f"{kernel}/{arch.name}/{profile.name}/{config.name}: these requested "
                      f"options did not survive "
                      f"olddefconfig (probably due to unsatisfied dependencies): "
                      f"{', '.join(lost)}")


def build_image_and_modules(src: Path, build: Path, arch: cfg.ArchParams, log: Path) -> None:
    kbuild_make(src, build, Path(arch.image).name, "modules", arch=arch, log=log)


def build_kernel(source: SourceTree, arch: cfg.ArchParams, config: cfg.KernelConfig,
                 profile: cfg.BuildProfile = cfg.PROFILES[cfg.DEFAULT_PROFILE]) -> KernelBuild:
    """Configures and builds one kernel in its own O= directory, unless already built."""
    why = source.kernel.why_impossible(arch.name, config.name)
    if why:
        raise Failure(f"no {source.kernel.name}/{arch.name}/{config.name} kernel, {why}")
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
    commits = run(["git", "rev-list", "--reverse", "HEAD~%d..HEAD" % len(cfg.series_files())],
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
                        configure(tree, build, arch, config, profile, log)
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


# ---------------------------------------------------------------------------
# Guest: initramfs and QEMU

GUEST_INIT = cfg.REPO / "runner" / "guest" / "init.c"


def guest_init(source: SourceTree, arch: cfg.ArchParams) -> Path:
    """The guest's /init: runner/guest/init.c built static against the tree's own nolibc
    (tools/include/nolibc) and UAPI headers with the architecture's GCC, cached by what it
    was built from. One init for every architecture, with no C library to find for each."""
    cc = arch.c_compiler
    if arch.root is None and shutil.which(cc) is None:
        raise Failure(f"{cc} not found: it builds the {arch.name} guest's init; "
                      f"`make deps` installs it")
    version = output_of(in_root(arch, [cc, "-dumpfullversion"])).strip()
    key = cfg.digest([GUEST_INIT.read_bytes(), source.key.encode(), version.encode()])
    out = cfg.cache_root() / f"init-{arch.name}-{key}"
    init = out / "init"
    if init.exists():
        return init
    with staged(out) as work:
        log = work / "build.log"
        with Stage(f"build the {arch.name} guest init with nolibc (log: {log})"):
            run(in_root(arch, ["make", "-s", "-C", source.path, f"O={work / 'uapi'}",
                               f"ARCH={arch.kernel_arch}", "headers"]), log=log)
            run(in_root(arch, ["make", "-s", "-C", source.path / "tools/include/nolibc",
                               f"ARCH={arch.kernel_arch}", f"OUTPUT={work}/", "headers"]),
                log=log)
            run(in_root(arch, [cc, "-Os", "-static", "-nostdlib", "-nostdinc", "-fno-stack-protector",
                 "-fno-asynchronous-unwind-tables", "-Wall", "-Werror",
                 "-I", work / "sysroot/include", "-I", work / "uapi/usr/include",
                 "-include", "nolibc.h", "-o", work / "init", GUEST_INIT, "-lgcc"]), log=log)
        (work / "init").chmod(0o755)
    return init


def make_initramfs(out: Path, init: Path, extra_files: dict[str, Path] | None = None) -> Path:
    """A gzip'd newc cpio: our init and any extra files (guest path -> host path)."""
    with tempfile.TemporaryDirectory(prefix="tpbench-initramfs-") as tmp:
        root = Path(tmp)
        shutil.copy(init, root / "init")
        (root / "init").chmod(0o755)
        for guest_path, host_path in (extra_files or {}).items():
            dest = root / guest_path.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(host_path, dest)
        names = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        tmp_out = out.with_suffix(".tmp")
        with open(tmp_out, "wb") as f:
            cpio = subprocess.Popen(["cpio", "-o", "-H", "newc", "--quiet", "-R", "0:0"], cwd=root,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            gzip = subprocess.Popen(["gzip", "-9n"], stdin=cpio.stdout, stdout=f)
            cpio.stdout.close()
            cpio.stdin.write("\n".join(names).encode() + b"\n")
            cpio.stdin.close()
            if cpio.wait() != 0 or gzip.wait() != 0:
                raise Failure("making the initramfs with cpio | gzip failed")
        tmp_out.rename(out)
    return out


def boot_loading_modules(kb: KernelBuild, init: Path, modules, accel: str, outdir: Path,
                         name: str, timeout: float = 300) -> tuple["BootResult", dict[str, int]]:
    """Boots `kb` with the init's insmod mode, which loads each of `modules` (paths in the
    build, or names of files that do not exist) in order; returns the boot and each
    module's status by name: 0, or the errno of the refusal."""
    outdir.mkdir(parents=True, exist_ok=True)
    files = {f"/{Path(m).stem}.ko": kb.build / m for m in modules if (kb.build / m).exists()}
    initrd = make_initramfs(outdir / f"initramfs-{name}.cpio.gz", init, files)
    load = ",".join(Path(m).stem for m in modules)
    result = boot(kb.arch, kb.image, initrd, f"tpbench.mode=insmod tpbench.load={load}", accel,
                  outdir, name, timeout=timeout)
    return result, console.insmod_statuses(result.results.splitlines())


def kvm_usable() -> tuple[bool, str]:
    if not os.path.exists("/dev/kvm"):
        return False, "/dev/kvm does not exist"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "/dev/kvm is not readable and writable by this user"
    return True, "/dev/kvm is present"


def qemu_command(arch: cfg.ArchParams, image: Path, initrd: Path, append: str, accel: str,
                 results: Path) -> list[str]:
    """The exact QEMU command line for one boot (pure, once the arch's Debian root exists)."""
    if accel == "tcg":
        # The guest TSC then counts executed instructions, exactly.
        accel_args = ["-accel", "tcg", "-icount", "shift=0,sleep=off"]
    elif accel == "kvm":
        accel_args = ["-accel", "kvm", "-cpu", "host"]
    else:
        raise ValueError(f"accelerator must be kvm or tcg here, not {accel!r}")
    results_args = [a.replace("{path}", str(results)) for a in arch.results_args]
    # The results file may be outside the checkout (bench --data elsewhere).
    return in_root(arch, share=[results.parent], cmd=[arch.qemu_binary, *accel_args, *arch.qemu_machine_args,
            "-no-reboot", "-display", "none", "-monitor", "none",
            "-serial", "stdio", *results_args,
            "-kernel", str(image), "-initrd", str(initrd),
            "-append", " ".join(filter(None, [
                f"console={arch.console} panic=-1 tpbench.results={arch.results_tty}",
                arch.tcg_kernel_args if accel == "tcg" else "", append]))])


@dataclass
class BootResult:
    accel: str
    accel_reason: str
    command: list[str]
    console_log: Path
    results_file: Path
    reached_init: bool
    timed_out: bool
    returncode: int | None
    elapsed: float
    time_to_init: float | None = None
    console_lines: list[str] = field(default_factory=list)

    @property
    def results(self) -> str:
        return self.results_file.read_text(errors="replace") if self.results_file.exists() else ""


PROGRESS_MARKERS = ("tpbench-init:", "tpbench: timing")


def killed_by(returncode: int | None) -> str | None:
    """'signal 9 (SIGKILL)' for a process a signal ended, else None."""
    if returncode is None or returncode >= 0:
        return None
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "unknown"
    return f"signal {-returncode} ({name})"


def boot_failure(result: "BootResult", problems=()) -> str | None:
    """Why a boot cannot be trusted, with the last console lines; None when it can."""
    verdict = console.judge_console(result.console_lines)
    if verdict.ok and not problems:
        return None
    # The cause first: a panic explains the missing results, not the other way round.
    why = "; ".join(([verdict.panic] if verdict.panic else []) + list(problems)) or (
        "never reached init" if not verdict.reached_init else "init did not finish")
    if verdict.trouble:
        quoted = "\n  ".join(verdict.trouble[:5])
        why = f"the kernel reported trouble during the run:\n  {quoted}\n{why}"
    signal_name = killed_by(result.returncode)
    if signal_name and not result.timed_out:
        why = f"QEMU was killed by {signal_name} before the module reported; {why}"
    if result.timed_out:
        why = f"guest timed out; {why}"
    tail = "\n".join(result.console_lines[-15:])
    return f"{why}\nlast console lines:\n{tail}"


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child, before exec: the kernel sends it SIGKILL when its parent ends, so no QEMU
    outlives the runner that started it."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    # The parent may have died between fork and prctl: then no signal would come.
    if os.getppid() == 1:
        os._exit(1)


def _boot_once(cmd, console_log: Path, results: Path, accel: str, reason: str,
               timeout: float, init_timeout: float | None) -> BootResult:
    """Runs QEMU, streaming the console to console_log; kills it on a timeout.

    With `init_timeout`, also gives up when the guest has not reached init by
    then (used to probe whether KVM can boot at all).
    """
    say(f"[tpbench] $ {shlex.join(cmd)}")
    results.unlink(missing_ok=True)
    start = time.monotonic()
    lines: list[str] = []
    state = {"init_at": None, "timed_out": False}
    with disk.writing(console_log), open(console_log, "w") as log:
        # The guest dies with this process, however it ends (even by SIGKILL).
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, preexec_fn=die_with_parent)

        def watchdog():
            while proc.poll() is None:
                now = time.monotonic() - start
                if now > timeout or (init_timeout and state["init_at"] is None and now > init_timeout):
                    state["timed_out"] = True
                    proc.kill()
                    return
                time.sleep(0.2)

        threading.Thread(target=watchdog, daemon=True).start()
        try:
            for raw in proc.stdout:
                line = raw.decode(errors="replace").rstrip("\r\n")
                log.write(line + "\n")
                log.flush()
                lines.append(line)
                if any(m in line for m in PROGRESS_MARKERS):
                    say(f"[guest {time.monotonic() - start:5.1f} s] {line.strip()}")
                if state["init_at"] is None and INIT_MARKER in line:
                    state["init_at"] = time.monotonic() - start
        finally:
            # Whatever arrived stays in the log, even on Ctrl-C.
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    return BootResult(accel=accel, accel_reason=reason, command=cmd, console_log=console_log,
                      results_file=results, reached_init=state["init_at"] is not None,
                      timed_out=state["timed_out"], returncode=proc.returncode,
                      elapsed=time.monotonic() - start, time_to_init=state["init_at"],
                      console_lines=lines)


def boot(arch: cfg.ArchParams, image: Path, initrd: Path, append: str, accel: str, outdir: Path,
         name: str, timeout: float = 300, kvm_probe_timeout: float = 30) -> BootResult:
    """Boots once with the chosen accelerator; `auto` tries KVM and falls back to TCG."""
    if accel not in cfg.ACCELS:
        raise Failure(f"unknown accelerator {accel!r}; valid values: {', '.join(cfg.ACCELS)}")
    outdir.mkdir(parents=True, exist_ok=True)
    results = outdir / f"results-{name}.txt"
    if accel == "tcg":
        chosen, reason = "tcg", "requested (ACCEL=tcg)"
    elif accel == "kvm":
        ok, why = kvm_usable()
        if not arch.kvm_possible:
            ok, why = False, f"KVM cannot run an {arch.name} guest on this host"
        if not ok:
            raise Failure(f"ACCEL=kvm but {why}; use ACCEL=tcg or ACCEL=auto")
        chosen, reason = "kvm", "requested (ACCEL=kvm)"
    elif not arch.kvm_possible:
        chosen, reason = "tcg", f"auto: KVM cannot run an {arch.name} guest on this host; using TCG"
    else:
        ok, why = kvm_usable()
        if ok:
            cmd = qemu_command(arch, image, initrd, append, "kvm", results)
            probe = _boot_once(cmd, outdir / f"console-{name}-kvm-probe.log", results, "kvm",
                               "auto: KVM tried first", timeout, kvm_probe_timeout)
            if probe.reached_init:
                # The probe was the run: its log gets the name every other run's has.
                final = outdir / f"console-{name}.log"
                probe.console_log.rename(final)
                return dataclasses.replace(probe, console_log=final)
            how = (f"did not reach init within {kvm_probe_timeout:.0f} s" if probe.timed_out
                   else f"QEMU was killed by {killed_by(probe.returncode)} before init"
                   if killed_by(probe.returncode)
                   else f"QEMU exited with status {probe.returncode} before init")
            say(f"[tpbench] KVM guest {how}; falling back to TCG")
            chosen = "tcg"
            reason = f"auto: /dev/kvm present but the KVM guest {how}; fell back to TCG"
        else:
            chosen, reason = "tcg", f"auto: {why}; using TCG"
    cmd = qemu_command(arch, image, initrd, append, chosen, results)
    return _boot_once(cmd, outdir / f"console-{name}.log", results, chosen, reason, timeout, None)
