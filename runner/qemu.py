"""The guest: its init, its initramfs, QEMU's command line and the boot, watched from the
console until the init says it is done."""

import dataclasses
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import console, disk, rundir
from common.messages import Failure, Stage, say
from runner import config as cfg
from runner.kernel import KernelBuild, SourceTree
from runner.proc import output_of, run, staged
from runner.roots import in_root

INIT_MARKER = "tpbench-init: started"


GUEST_PROGRAMS = cfg.REPO / "runner" / "guest"


def guest_init(source: SourceTree, arch: cfg.ArchParams) -> Path:
    """The guest's /init (runner/guest/init.c)."""
    return guest_program(source, arch, "init")


def guest_program(source: SourceTree, arch: cfg.ArchParams, name: str) -> Path:
    """A program of the guest's, runner/guest/<name>.c, built static against the tree's own
    nolibc (tools/include/nolibc) and UAPI headers with the architecture's GCC, cached by
    what it was built from. One program for every architecture, with no C library to find
    for each."""
    cc = arch.c_compiler
    if arch.root is None and shutil.which(cc) is None:
        raise Failure(f"{cc} not found: it builds the {arch.name} guest's {name}; "
                      f"`make deps` installs it")
    program = GUEST_PROGRAMS / f"{name}.c"
    version = output_of(in_root(arch, [cc, "-dumpfullversion"])).strip()
    key = cfg.digest([program.read_bytes(), source.key.encode(), version.encode()])
    out = cfg.cache_root() / f"{name}-{arch.name}-{key}"
    binary = out / name
    if binary.exists():
        return binary
    with staged(out) as work:
        log = work / "build.log"
        with Stage(f"build the {arch.name} guest's {name} with nolibc (log: {log})"):
            run(in_root(arch, ["make", "-s", "-C", source.path, f"O={work / 'uapi'}",
                               f"ARCH={arch.kernel_arch}", "headers"]), log=log)
            run(in_root(arch, ["make", "-s", "-C", source.path / "tools/include/nolibc",
                               f"ARCH={arch.kernel_arch}", f"OUTPUT={work}/", "headers"]),
                log=log)
            run(in_root(arch, [cc, "-Os", "-static", "-nostdlib", "-nostdinc", "-fno-stack-protector",
                 "-fno-asynchronous-unwind-tables", "-Wall", "-Werror",
                 "-I", work / "sysroot/include", "-I", work / "uapi/usr/include",
                 "-include", "nolibc.h", "-o", work / name, program, "-lgcc"]), log=log)
        (work / name).chmod(0o755)
    return binary


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
                 results: Path, extra=()) -> list[str]:
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
    return in_root(arch, share=[results.parent], cmd=[arch.qemu_binary, *accel_args, *extra, *arch.qemu_machine_args,
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
    results = rundir.named_file(outdir, "results", name)
    console_log = rundir.named_file(outdir, "console", name)
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
            probe = _boot_once(cmd, rundir.named_file(outdir, "probe", name), results, "kvm",
                               "auto: KVM tried first", timeout, kvm_probe_timeout)
            if probe.reached_init:
                # The probe was the run: its log gets the name every other run's has.
                probe.console_log.rename(console_log)
                return dataclasses.replace(probe, console_log=console_log)
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
    return _boot_once(cmd, console_log, results, chosen, reason, timeout, None)
