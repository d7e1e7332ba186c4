"""The Binder workload (issue 36): a Binder kernel booted with runner/guest/binder.c, which
times round trips to a context manager with the driver's events off, with a probe attached
and recording; and the Binder part of a run, <run>/binder/, which boots every Binder kernel
of it so."""

import bisect
import os
import shutil
import socket
import subprocess
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from common import binder, console, disk, messages, rundir
from common.messages import Failure
from runner import config as cfg
from runner import bench, kernel, proc, qemu

# The sources whose change makes a Binder guest measure something else.
BINDER_SOURCES = (cfg.REPO / "runner" / "guest" / "binder.c",
                  cfg.REPO / "runner" / "guest" / "init.c")
GDB_SCRIPT = cfg.REPO / "runner" / "gdb_round_trip.py"
# The ioctl calls let run before stepping: past the 100 warm round trips and the first
# repetitions, inside a timed loop of the smallest payload.
STEP_SKIP = 1000
STEP_COLUMNS = ("function", "instructions", "entries")
SAMPLE_COLUMNS = ("kernel", "arch", "config", "state", "payload", "n", "rep", "ticks")
EVENT_COLUMNS = ("kernel", "arch", "config", "event", "per_trip")


def boot_binder(kb: kernel.KernelBuild, accel: str, out: Path, name: str,
                timeout: float) -> tuple[qemu.BootResult, binder.BinderResults]:
    """Boots `kb` (a kernel of cfg.BINDER_EVENTS) with the init's binder mode; returns the
    boot and what its results channel says."""
    events = cfg.BINDER_EVENTS.get(kb.kernel.name)
    if events is None:
        raise ValueError(f"{kb.kernel.name} has no Binder driver: "
                         f"use one of {', '.join(cfg.BINDER_EVENTS)}")
    initrd = binder_initramfs(kb, out, name)
    append = f"tpbench.mode=binder tpbench.events={events} {cfg.KUNIT_OFF}"
    try:
        result = qemu.boot(kb.arch, kb.image, initrd, append, accel, out, name,
                           timeout=timeout)
    finally:
        initrd.unlink(missing_ok=True)
    lines, cut = console.whole_lines(result.results)
    parsed = binder.parse(lines)
    parsed.problems += cut
    return result, parsed


def binder_initramfs(kb: kernel.KernelBuild, out: Path, name: str) -> Path:
    """The init and the workload for `kb`'s architecture, in an initramfs under `out`."""
    # User programs: the series' tree builds them for every kernel, as the init.
    source = kernel.prepare_source()
    files = {"/binder": qemu.guest_program(source, kb.arch, "binder")}
    out.mkdir(parents=True, exist_ok=True)
    return qemu.make_initramfs(out / f"initramfs-{name}.cpio.gz",
                               qemu.guest_init(source, kb.arch), files)


def text_symbols(kb: kernel.KernelBuild) -> list[tuple[int, str]]:
    """The kernel's functions by address, demangled (Rust's v0 names too)."""
    nm = kb.arch.objdump.removesuffix("objdump") + "nm"
    out = []
    for line in proc.output_of([nm, "-n", "--defined-only", "--demangle",
                                str(kb.build / "vmlinux")]).splitlines():
        fields = line.split(maxsplit=2)
        if len(fields) == 3 and fields[1] in "tTwW":
            out.append((int(fields[0], 16), fields[2]))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def step_round_trip(kb: kernel.KernelBuild, symbols: list[tuple[int, str]], out: Path,
                    name: str, timeout: float = 900) -> list[int]:
    """Every instruction one round trip of the disabled state runs, by address: the guest
    boots stopped under QEMU's gdb stub, gdb (runner/gdb_round_trip.py) lets it reach a timed
    loop and single-steps three ioctl calls, interrupts masked. Exact under TCG, as the
    slope is, but one round trip where the slope is the mean of 90. `symbols`: the
    kernel's (text_symbols()), where the ioctl entry is found."""
    if shutil.which("gdb") is None:
        raise Failure("gdb is not installed: `make deps` installs it (Debian's gdb)")
    ioctl = binder.STEP_ENTRY.get(kb.arch.name)
    entry = dict((n, a) for a, n in symbols).get(ioctl)
    if entry is None:
        raise Failure(f"{kb.kernel.name} {kb.arch.name}: no single-stepping here (the host's "
                      f"gdb debugs {', '.join(binder.STEP_ENTRY)}) or no {ioctl}()")
    initrd = binder_initramfs(kb, out, f"steps-{name}")
    port = free_port()
    # No tpbench.events=: the init runs the disabled state only.
    cmd = qemu.qemu_command(kb.arch, kb.image, initrd, f"tpbench.mode=binder {cfg.KUNIT_OFF}",
                            "tcg", rundir.named_file(out, "results", f"steps-{name}"),
                            extra=("-gdb", f"tcp:127.0.0.1:{port}", "-S"))
    steps = out / f"pcs-{name}.txt"
    console_log = rundir.named_file(out, "console", f"steps-{name}")
    with open(console_log, "w") as log:
        guest = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT)
    try:
        gdb = subprocess.run(
            ["gdb", "-nx", "-batch", "-x", str(GDB_SCRIPT), str(kb.build / "vmlinux")],
            env=dict(os.environ, TPBENCH_GDB_PORT=str(port), TPBENCH_ENTRY=f"{entry:#x}",
                     TPBENCH_SKIP=str(STEP_SKIP), TPBENCH_STEPS=str(steps)),
            capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f"{name}: single-stepping a round trip took over {timeout:.0f} s") from None
    finally:
        guest.kill()
        guest.wait()
        initrd.unlink(missing_ok=True)
    if not steps.exists():
        tail = "\n  ".join((gdb.stdout + gdb.stderr).splitlines()[-8:])
        raise Failure(f"{name}: gdb stepped no round trip (console: {console_log}):\n  {tail}")
    pcs = [int(line, 16) for line in steps.read_text().split()]
    steps.unlink()
    return pcs


def by_function(pcs: list[int], symbols: list[tuple[int, str]]) -> str:
    """A stepped round trip as CSV: per function, the instructions it ran and how often it
    was entered at its first instruction; most instructions first."""
    starts = [a for a, _ in symbols]
    runs, entries = Counter(), Counter()
    for pc in pcs:
        i = bisect.bisect_right(starts, pc) - 1
        name = symbols[i][1] if i >= 0 else "(user space)"
        runs[name] += 1
        entries[name] += i >= 0 and starts[i] == pc
    rows = [dict(function=n, instructions=k, entries=entries[n])
            for n, k in sorted(runs.items(), key=lambda x: (-x[1], x[0]))]
    return bench.samples_csv(rows, STEP_COLUMNS)


def driver_symbols(kb: kernel.KernelBuild) -> str:
    """The functions of the kernel's drivers/android/ objects: "<bytes> <name>" a line, by
    name. Which of them the compiler kept out of line is part of what the tracepoint sites
    change: the analysis sets a kernel's against its floor's."""
    sizes = {}
    nm = kb.arch.objdump.removesuffix("objdump") + "nm"     # the binutils of the arch
    for obj in sorted((kb.build / "drivers" / "android").rglob("*.o")):
        if obj.name.endswith(".mod.o"):
            continue
        # Demangled (Rust's v0 names too), so a name may hold spaces.
        for line in proc.output_of([nm, "-S", "--demangle", str(obj)]).splitlines():
            fields = line.split(maxsplit=3)
            if len(fields) == 4 and fields[2] in "tT":
                sizes[fields[3]] = int(fields[1], 16)
    return "".join(f"{size} {name}\n" for name, size in sorted(sizes.items()))


def unit(accel: str, arch: str, counter_hz: int) -> tuple[str, int]:
    """What a Binder sample's ticks count, and how many of that a tick is. The workload reads
    the counter user space has, not the module's. Under TCG -icount shift=0 (qemu.boot) a
    guest nanosecond is one instruction: x86_64's TSC counts those nanoseconds, a counter
    of `counter_hz` (arm64's CNTVCT: 62.5 MHz on QEMU 7.2's virt) ticks every 10^9 /
    counter_hz of them. Elsewhere, or where the guest cannot read its counter's frequency
    (riscv, loongarch), they stay counter ticks."""
    if accel == "tcg":
        if arch == "x86_64":
            return "instructions", 1
        if counter_hz and 10**9 % counter_hz == 0:
            return "instructions", 10**9 // counter_hz
    return "counter ticks", 1


def stepped(kernel_name: str, arch: str, accel: str) -> bool:
    """Whether the Binder part single-steps a round trip of this guest: each driver as
    shipped and its floor, where the host's gdb can (under TCG, so that it is exact)."""
    return (arch in binder.STEP_ENTRY and accel == "tcg"
            and binder.kernel_parts(kernel_name)[1] in ("", "floor"))


def step_into(run: Path, kb: kernel.KernelBuild, guest: str, entry: dict,
              context: dict) -> None:
    """Single-steps a round trip of `guest` into binder/steps-*.csv; a failure is the
    guest's, in binder.json."""
    messages.say(f"[tpbench] binder {guest}: single-stepping a round trip ...")
    start = time.monotonic()
    try:
        symbols = text_symbols(kb)
        pcs = step_round_trip(kb, symbols, rundir.binder_dir(run), guest.replace("/", "-"))
    except Failure as e:
        context["failed"][guest] = f"single-stepping a round trip: {e}"
        messages.say(f"[tpbench] binder {guest}: {context['failed'][guest]}")
        return
    disk.write_atomically(rundir.binder_file(run, "steps", guest),
                          by_function(pcs, symbols))
    entry["stepped_instructions"] = len(pcs)
    entry["step_seconds"] = round(time.monotonic() - start, 1)


def run_part(run: Path, kernel_names, arch_names, config_names, accel: str,
             timeout: float = 300) -> list[str]:
    """Boots each Binder kernel of `kernel_names` on each architecture and config into
    <run>/binder/ (rundir.BINDER_*), one guest after another; a guest that fails is named
    in binder.json and the others still run. Returns what failed, one line each: the run
    is incomplete if any did."""
    part = rundir.binder_dir(run)
    part.mkdir(exist_ok=True)
    context = {
        "run_id": Path(run).name,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "requested_accel": accel,
        "source_hash": cfg.digest([p.read_bytes() for p in BINDER_SOURCES]),
        "kernels": {k: cfg.KERNELS[k].what for k in kernel_names},
        "events": {k: cfg.BINDER_EVENTS[k] for k in kernel_names},
        "guests": {},
        "not_built": {},
        "failed": {},
        "complete": False,
        "incomplete_reason": rundir.RUNNING,
        "runner": rundir.runner_identity(),
    }
    samples: list[dict] = []
    events: list[dict] = []

    def save() -> None:
        disk.write_atomically(part / rundir.BINDER_SAMPLES,
                              bench.samples_csv(samples, SAMPLE_COLUMNS))
        disk.write_atomically(part / rundir.BINDER_EVENTS, bench.samples_csv(events, EVENT_COLUMNS))
        rundir.write_json(part / rundir.BINDER_CONTEXT, context)

    save()
    try:
        for arch_name in arch_names:
            arch = cfg.ARCHS[arch_name]
            for config_name in config_names:
                for name in kernel_names:
                    guest = rundir.binder_guest(name, arch_name, config_name)
                    why = cfg.KERNELS[name].why_impossible(arch_name, config_name)
                    if why:
                        context["not_built"][guest] = why
                        continue
                    start = time.monotonic()
                    messages.say(f"[tpbench] binder {guest} ...")
                    source = kernel.prepare_source(cfg.KERNELS[name])
                    kb = kernel.build_kernel(source, arch, cfg.KERNEL_CONFIGS[config_name])
                    result, parsed = boot_binder(kb, accel, part, guest.replace("/", "-"),
                                                 timeout)
                    failure = qemu.boot_failure(result, parsed.problems)
                    per_tick = unit(result.accel, arch_name, parsed.counter_hz)
                    entry = {
                        "build_key": kb.key,
                        "accel": result.accel,
                        "accel_reason": result.accel_reason,
                        "unit": per_tick[0],
                        "per_tick": per_tick[1],
                        "counter_hz": parsed.counter_hz,
                        "guest_seconds": round(result.elapsed, 1),
                        "seconds": round(time.monotonic() - start, 1),
                        "trips_counted": parsed.trips_counted,
                        "qemu": proc.output_of([arch.qemu_binary, "--version"]).splitlines()[0],
                    }
                    context["guests"][guest] = entry
                    disk.write_atomically(rundir.binder_file(run, "symbols", guest),
                                          driver_symbols(kb))
                    if failure:
                        context["failed"][guest] = failure
                        messages.say(f"[tpbench] binder {guest} failed: {failure}")
                    else:
                        tag = dict(kernel=name, arch=arch_name, config=config_name)
                        samples += [dict(tag, **s) for s in parsed.samples]
                        events += [dict(tag, event=e, per_trip=n)
                                   for e, n in parsed.events_per_trip.items()]
                        if stepped(name, arch_name, result.accel):
                            step_into(run, kb, guest, entry, context)
                    save()
        failed = [f"{g}: {why.splitlines()[0]}" for g, why in context["failed"].items()]
        context["complete"] = not failed
        context["incomplete_reason"] = "; ".join(failed) or None
        return failed
    except BaseException as e:
        context["incomplete_reason"] = bench.first_line(e)
        raise
    finally:
        save()
