"""The Binder workload (issue 36): a Binder kernel booted with runner/guest/binder.c, which
times round trips to a context manager with the driver's events off and recording."""

from pathlib import Path

from common import binder, console
from runner import config as cfg
from runner import kernel, qemu


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
    initrd = qemu.make_initramfs(out / f"initramfs-{name}.cpio.gz",
                                 qemu.guest_init(source, kb.arch), files)
    append = f"tpbench.mode=binder tpbench.events={events} {cfg.KUNIT_OFF}"
    result = qemu.boot(kb.arch, kb.image, initrd, append, accel, out, name, timeout=timeout)
    lines, cut = console.whole_lines(result.results)
    parsed = binder.parse(lines)
    parsed.problems += cut
    return result, parsed
