"""Command line: python3 -m runner {deps,kernels,sample} ..."""

import argparse
import os
import sys
import time
from pathlib import Path

from runner import config as cfg
from runner import console, world


def validate(args) -> None:
    """Checks every argument before anything expensive starts."""
    if getattr(args, "accel", None) is not None and args.accel not in cfg.ACCELS:
        raise world.Failure(f"unknown ACCEL {args.accel!r}; valid values: {', '.join(cfg.ACCELS)}")
    for name in getattr(args, "configs", None) or []:
        if name not in cfg.KERNEL_CONFIGS:
            raise world.Failure(f"unknown kernel config {name!r}; valid values: "
                                f"{', '.join(cfg.KERNEL_CONFIGS)}")
    arch = getattr(args, "arch", None)
    if arch is not None and arch not in cfg.ARCHS:
        raise world.Failure(f"unknown architecture {arch!r}; supported: {', '.join(cfg.ARCHS)}")


def cmd_deps(args) -> int:
    missing = world.check_packages()
    if not missing:
        world.say("[tpbench] all Debian packages are installed")
        return 0
    command = "apt-get install -y " + " ".join(missing)
    if os.geteuid() != 0:
        world.say(f"[tpbench] missing Debian packages; as root, run:\n  apt-get update && {command}")
        return 1
    with world.Stage(f"install {len(missing)} Debian packages"):
        world.run(["apt-get", "update", "-q"])
        world.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing],
                  env={"DEBIAN_FRONTEND": "noninteractive"})
    return 0


def built_kernels(arch_name: str, config_names) -> list[world.KernelBuild]:
    arch = cfg.ARCHS[arch_name]
    source = world.prepare_source()
    return [world.build_kernel(source, arch, cfg.KERNEL_CONFIGS[n]) for n in config_names]


def cmd_kernels(args) -> int:
    for kb in built_kernels(args.arch, args.configs):
        print(f"{kb.config.name}\t{kb.image}")
    return 0


def cmd_sample(args) -> int:
    """Boots a kernel with the built-in rust_print sample and reports its trace buffer."""
    (kb,) = built_kernels(args.arch, [args.configs[0]])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    initrd = world.make_initramfs(out / "initramfs-sample.cpio.gz")
    append = "tpbench.mode=sample"
    if args.event == "on":
        append += " trace_event=rust_sample:rust_sample_loaded"
    name = f"sample-{kb.config.name}-event-{args.event}"
    result = world.boot(kb.arch, kb.image, initrd, append, args.accel, out, name,
                        timeout=args.timeout)
    verdict = console.judge_console(result.console_lines)
    print(f"accel={result.accel} ({result.accel_reason})")
    print(f"time_to_init={result.time_to_init}")
    print(result.results)
    if not verdict.ok:
        why = ("timed out" if result.timed_out else verdict.panic or
               ("never reached init" if not verdict.reached_init else "init did not finish"))
        tail = "\n".join(result.console_lines[-20:])
        world.say(f"[tpbench] boot failed: {why}; last console lines:\n{tail}")
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m runner")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("deps", help="install the Debian packages (root) or print the command")
    for name, helptext in (("kernels", "extract, patch and build the kernels (cached)"),
                           ("sample", "boot a kernel and dump the rust_print sample's trace")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("--arch", default="x86_64")
        p.add_argument("--configs", nargs="+", default=list(cfg.KERNEL_CONFIGS))
        if name == "sample":
            p.add_argument("--accel", default="auto")
            p.add_argument("--event", choices=("on", "off"), default="on")
            p.add_argument("--out", default="out/sample")
            p.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args(argv)
    try:
        validate(args)
        return {"deps": cmd_deps, "kernels": cmd_kernels, "sample": cmd_sample}[args.command](args)
    except world.Failure as e:
        world.say(f"[tpbench] error: {e}")
        return 2
    except KeyboardInterrupt:
        world.say("[tpbench] interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
