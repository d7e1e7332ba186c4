"""The Binder workload (issue 36): a Binder kernel booted with runner/guest/binder.c, which
times round trips to a context manager with the driver's events off, with a probe attached
and recording; and the Binder part of a run, <run>/binder/, which boots every Binder kernel
of it so."""

import time
from datetime import datetime, timezone
from pathlib import Path

from common import binder, console, disk, messages, rundir
from runner import config as cfg
from runner import bench, kernel, proc, qemu

# The sources whose change makes a Binder guest measure something else.
BINDER_SOURCES = (cfg.REPO / "runner" / "guest" / "binder.c",
                  cfg.REPO / "runner" / "guest" / "init.c")
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
    # User programs: the series' tree builds them for every kernel, as the init.
    source = kernel.prepare_source()
    files = {"/binder": qemu.guest_program(source, kb.arch, "binder")}
    out.mkdir(parents=True, exist_ok=True)
    initrd = qemu.make_initramfs(out / f"initramfs-{name}.cpio.gz",
                                 qemu.guest_init(source, kb.arch), files)
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
