"""Command line: python3 -m runner {deps,kernels,sample,bench} ..."""

import argparse
import os
import sys
from pathlib import Path

from common import disk, messages, rundir, series
from runner import config as cfg
from runner import bench, kernel, proc, qemu, roots


def validate(args) -> None:
    """Checks every argument before anything expensive starts."""
    if getattr(args, "accel", None) is not None and args.accel not in cfg.ACCELS:
        raise messages.Failure(f"unknown ACCEL {args.accel!r}; valid values: {', '.join(cfg.ACCELS)}")
    for name in getattr(args, "configs", None) or []:
        if name not in cfg.KERNEL_CONFIGS:
            raise messages.Failure(f"unknown kernel config {name!r}; valid values: "
                                   f"{', '.join(cfg.KERNEL_CONFIGS)}")
    for name in bench.parse_list(getattr(args, "profiles", "") or ""):
        if name not in cfg.PROFILES:
            raise messages.Failure(f"unknown build profile {name!r}; valid values: "
                                   f"{', '.join(cfg.PROFILES)}")
    archs = [getattr(args, "arch", None)] + list(bench.parse_list(getattr(args, "archs", "") or ""))
    for arch in archs:
        if arch is not None and arch not in cfg.ARCHS:
            raise messages.Failure(f"unknown architecture {arch!r}; supported: {', '.join(cfg.ARCHS)}")


def cmd_deps(args) -> int:
    """Installs what every supported architecture needs (as root), or says how."""
    packages = list(cfg.DEBIAN_PACKAGES) + [p for a in cfg.ARCHS.values() for p in a.packages]
    missing = roots.check_packages(packages)
    if not missing:
        messages.say("[tpbench] all Debian packages are installed")
        return 0
    steps = ["apt-get update", "apt-get install -y --no-install-recommends " + " ".join(missing)]
    if os.geteuid() != 0:
        messages.say("[tpbench] missing Debian packages; as root, run:\n  " + " && ".join(steps))
        return 1
    with messages.Stage(f"install {len(missing)} Debian packages"):
        proc.run(["apt-get", "update", "-q"])
        proc.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing],
                  env={"DEBIAN_FRONTEND": "noninteractive"})
    return 0


def built_kernels(arch_name: str, config_names, profile_names=(cfg.DEFAULT_PROFILE,),
                  kernel_name=cfg.DEFAULT_KERNEL) -> list[kernel.KernelBuild]:
    arch = cfg.ARCHS[arch_name]
    source = kernel.prepare_source(cfg.KERNELS[kernel_name])
    return [kernel.build_kernel(source, arch, cfg.KERNEL_CONFIGS[n], cfg.PROFILES[p])
            for p in profile_names for n in config_names]


def cmd_kernels(args) -> int:
    for kb in built_kernels(args.arch, args.configs, bench.parse_list(args.profiles),
                            args.kernel):
        print(f"{kb.kernel.name}\t{kb.profile.name}\t{kb.config.name}\t{kb.image}")
    return 0


def cmd_sample(args) -> int:
    """Boots a kernel with the built-in rust_print sample and reports its trace buffer."""
    (kb,) = built_kernels(args.arch, [args.configs[0]], kernel_name=args.kernel)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # The init is a user program: one build, from the series' tree, boots every kernel.
    init = qemu.guest_init(kernel.prepare_source(), kb.arch)
    initrd = qemu.make_initramfs(out / f"initramfs-sample-{kb.arch.name}.cpio.gz", init)
    append = f"tpbench.mode=sample {cfg.KUNIT_OFF}"
    if args.event == "on":
        append += " trace_event=rust_sample:rust_sample_loaded"
    name = f"sample-{kb.kernel.name}-{kb.config.name}-event-{args.event}"
    result = qemu.boot(kb.arch, kb.image, initrd, append, args.accel, out, name,
                        timeout=args.timeout)
    print(f"accel={result.accel} ({result.accel_reason})")
    print(f"time_to_init={result.time_to_init}")
    print(result.results)
    failure = qemu.boot_failure(result)
    if failure:
        messages.say(f"[tpbench] boot failed: {failure}")
        return 1
    return 0


def cmd_binder(args) -> int:
    """Boots a Binder kernel with the Binder workload and prints what it measured."""
    # Here, not at the top: `runner deps` runs before pandas is installed.
    import pandas as pd

    from common import binder as common_binder
    from runner import binder
    (kb,) = built_kernels(args.arch, [args.configs[0]], kernel_name=args.kernel)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"binder-{kb.kernel.name}-{kb.arch.name}-{kb.config.name}"
    result, parsed = binder.boot_binder(kb, args.accel, out, name, args.timeout)
    print(f"accel={result.accel} ({result.accel_reason}); {result.elapsed:.1f} s")
    failure = qemu.boot_failure(result, parsed.problems)
    if failure:
        messages.say(f"[tpbench] binder run failed: {failure}")
        return 1
    samples = out / f"samples-{name}.csv"
    pd.DataFrame(parsed.samples).to_csv(samples, index=False)
    unit, per_tick = binder.unit(result.accel, kb.arch.name, parsed.counter_hz)
    per_trip = common_binder.per_round_trip(parsed.samples, per_tick)
    print(f"{unit} per round trip (samples: {samples}, {per_tick} a tick):")
    print(per_trip.round(1).to_string(index=False))
    for event, n in parsed.events_per_trip.items():
        print(f"{event}\t{n:g} per round trip")
    return 0


def cmd_check_series(args) -> int:
    """Every patch of the series builds on its own, in every config."""
    source = kernel.prepare_source(cfg.KERNELS[args.kernel])
    configs = [cfg.KERNEL_CONFIGS[n] for n in args.configs]
    results = kernel.check_series_bisectable(source, cfg.ARCHS[args.arch], configs)
    for subject, config, ok in results:
        print(f"{'ok' if ok else 'FAILS'}\t{config}\t{subject}")
    return 0 if all(ok for _, _, ok in results) else 1


def cmd_recipients(args) -> int:
    """The To: and Cc: lines of a kernel's series, from its tree's get_maintainer.pl."""
    source = kernel.prepare_source(cfg.KERNELS[args.kernel])
    to, cc = kernel.recipients(source.path, series.own_patches(source.kernel.patches))
    print("To: " + ",\n    ".join(to))
    print("Cc: " + ",\n    ".join(cc))
    return 0


def bench_params(args) -> bench.BenchParams:
    return bench.BenchParams(variants=bench.parse_list(args.variants),
                             states=bench.parse_list(args.states),
                             ns=bench.parse_ints(args.ns, "NS"),
                             reps=bench.parse_int(args.reps, "REPS"),
                             warmup=bench.parse_int(args.warmup, "WARMUP"))


def guests(args) -> Path:
    """The guests of the matrix `args` asks for, run into a new run directory, returned."""
    params = bench_params(args)
    problems = params.problems()
    binder_kernels = bench.parse_list(args.binder_kernels)
    binder_archs = bench.parse_list(args.binder_archs)
    problems += [f"unknown Binder kernel {k!r}; valid: {', '.join(cfg.BINDER_KERNELS)}"
                 for k in binder_kernels if k not in cfg.BINDER_KERNELS]
    problems += [f"unknown Binder architecture {a!r}; supported: {', '.join(cfg.ARCHS)}"
                 for a in binder_archs if a not in cfg.ARCHS]
    if problems:
        raise messages.Failure("; ".join(problems))
    run = bench.run_matrix(args.configs, args.accel, params, Path(args.data),
                           bench.parse_list(args.archs),
                           profile_names=bench.parse_list(args.profiles),
                           compare_archs=args.compare_archs.split(),
                           kernel_name=args.kernel,
                           compare_kernels=bench.parse_list(args.compare_kernels),
                           reuse=Path(args.reuse) if args.reuse else None)
    if binder_kernels:
        from runner import binder
        # The run's context says what its Binder part was asked for: the command again.
        context = rundir.guest_context(run)
        context["binder_part"] = {"kernels": binder_kernels, "archs": binder_archs}
        rundir.write_context(run, context)
        try:
            failed = binder.run_part(run, binder_kernels, binder_archs, args.configs,
                                     args.accel)
        except BaseException as e:
            bench.mark_incomplete(run, f"binder: {bench.first_line(e)}")
            raise
        if failed:
            bench.mark_incomplete(run, f"binder: {'; '.join(failed)}")
            raise messages.Failure(f"run {run.name}: the Binder workload failed in "
                                   f"{len(failed)} guest(s): {'; '.join(failed)} (console "
                                   f"and results in {rundir.binder_dir(run)})")
    return run


def cmd_bench(args) -> int:
    print(guests(args))
    return 0


def cmd_native(args) -> int:
    """The native stage: the run's modules of this host's architecture, timed on its CPU."""
    from runner import native  # pandas and pyelftools: installed by `deps`, so not imported before it
    run = Path(args.run)
    rows = native.measure_run(run)
    thunks = run / rundir.THUNK_SAMPLES
    messages.say(f"[tpbench] native: {len(rows)} samples through the host kernel's own return in "
                 f"{run / rundir.NATIVE_SAMPLES}"
                 + (f"; the other return thunks' in {thunks}" if thunks.exists() else ""))
    return 0


def cmd_disassemble(args) -> int:
    """objdump-<arch>-<config>.txt.gz beside each module of a run (and of its further runs)
    that lacks one: runs made before the runner wrote them at run time."""
    for part in rundir.parts(Path(args.run)):
        for (arch, config), ko in rundir.guest_files(part, "module").items():
            if not rundir.guest_file(part, "objdump", arch, config).exists():
                rundir.write_objdump(part, arch, config, kernel.disassemble(cfg.ARCHS[arch], ko))
                messages.say(f"[tpbench] disassembled {ko}")
    return 0


def add_kernel_argument(parser) -> None:
    parser.add_argument("--kernel", choices=list(cfg.KERNELS), default=cfg.DEFAULT_KERNEL,
                        help="; ".join(f"{k}: {v.what}" for k, v in cfg.KERNELS.items()))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m runner")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("deps", help="install the Debian packages (root) or print the command")
    for name, helptext in (("kernels", "extract, patch and build the kernels (cached)"),
                           ("check-series", "build the tree after each patch (slow)"),
                           ("sample", "boot a kernel and dump the rust_print sample's trace"),
                           ("binder", "boot a Binder kernel with the Binder workload")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("--arch", default="x86_64")
        p.add_argument("--configs", nargs="+", default=list(cfg.KERNEL_CONFIGS))
        add_kernel_argument(p)
        if name == "kernels":
            p.add_argument("--profiles", default=cfg.DEFAULT_PROFILE, help="space-separated")
        if name in ("sample", "binder"):
            p.add_argument("--accel", default="auto")
            if name == "sample":
                p.add_argument("--event", choices=("on", "off"), default="on")
            p.add_argument("--out", default=f"out/{name}")
            p.add_argument("--timeout", type=float, default=300)
    add_kernel_argument(sub.add_parser("recipients", help="the To: and Cc: of a series, from "
                                                          "its tree's get_maintainer.pl"))
    add_matrix_arguments(sub.add_parser("bench", help="run the benchmark matrix into "
                                                      "data/<run-id>/"))
    p = sub.add_parser("native", help="time a run's modules on the host CPU (x86_64 hosts)")
    p.add_argument("--run", required=True, help="the run directory, data/<run-id>")
    p = sub.add_parser("disassemble", help="objdump each module of a run made before the "
                                           "runner kept it")
    p.add_argument("--run", required=True, help="the run directory, data/<run-id>")
    args = parser.parse_args(argv)
    commands = {"deps": cmd_deps, "kernels": cmd_kernels, "sample": cmd_sample,
                "bench": cmd_bench, "binder": cmd_binder, "check-series": cmd_check_series, "native": cmd_native,
                "recipients": cmd_recipients,
                "disassemble": cmd_disassemble}
    return guarded(lambda: commands[args.command](args), args)


def add_matrix_arguments(p) -> None:
    """What a run measures: the arguments of `runner bench` and of `tpbench bench`."""
    p.add_argument("--archs", default="x86_64", help="space- or comma-separated")
    p.add_argument("--profiles", default=cfg.DEFAULT_PROFILE,
                   help="build profiles, space- or comma-separated; the first is the run's own")
    p.add_argument("--compare-archs", default="",
                   help="the architectures of the further profiles and kernels (default: all "
                        "of --archs), space-separated; NAME=ARCH,ARCH gives one its own")
    p.add_argument("--configs", nargs="+", default=list(cfg.KERNEL_CONFIGS))
    add_kernel_argument(p)
    p.add_argument("--compare-kernels", default="",
                   help="kernels measured beside --kernel, in the first profile, on "
                        "--compare-archs; space- or comma-separated")
    p.add_argument("--accel", default="auto")
    defaults = bench.BenchParams()
    p.add_argument("--variants", default=",".join(defaults.variants))
    p.add_argument("--states", default=",".join(defaults.states))
    p.add_argument("--ns", default=",".join(map(str, defaults.ns)))
    p.add_argument("--reps", default=str(defaults.reps))
    p.add_argument("--warmup", default=str(defaults.warmup))
    p.add_argument("--data", default=str(bench.DATA))
    p.add_argument("--reuse", default="",
                   help="an earlier run directory: each guest it holds for the same kernel "
                        "build, module and matrix is taken from it, not booted again (TCG only)")
    p.add_argument("--binder-kernels", default="",
                   help="Binder kernels booted with the Binder workload into "
                        "data/<run-id>/binder/ after the matrix, space- or comma-separated: "
                        + ", ".join(cfg.BINDER_KERNELS))
    p.add_argument("--binder-archs", default="x86_64",
                   help="their architectures (each in every config of --configs)")


def guarded(step, args) -> int:
    """Runs a step after checking `args`: a Failure or the file system's fault is one line
    and status 2, never a traceback; an interrupt is status 130."""
    try:
        validate(args)
        return step()
    except messages.Failure as e:
        messages.say(f"[tpbench] error: {e}")
        return 2
    except OSError as e:
        # The file system's fault (full, read-only, not ours) wherever it struck: one line.
        if e.errno not in disk.FAULTS:
            raise
        messages.say(f"[tpbench] error: {disk.explain(e, Path(e.filename or 'a file the runner did not name'))}")
        return 2
    except KeyboardInterrupt:
        messages.say("[tpbench] interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
