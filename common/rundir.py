"""The run directory, owned here alone: its files' names, its context read and written, its
samples read; who is writing it, and whether a run that says it runs still does."""

import gzip
import json
import os
from pathlib import Path

from common import disk
from common.arches import NAMES
from common.messages import Failure

RUNNING = "running"


def runner_identity() -> dict:
    return {"pid": os.getpid(), "boot_id": boot_id()}


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def runner_gone(context: dict) -> str | None:
    """Why a run that says it is running is not: its runner's process is gone (or the
    machine restarted since). None while the runner lives, or for a closed run."""
    if context.get("incomplete_reason") != RUNNING or context.get("complete"):
        return None
    who = context.get("runner")
    if not who:
        return "interrupted: its runner is gone (the run predates recording the runner)"
    if who.get("boot_id") != boot_id():
        return f"interrupted: the machine restarted while its runner (pid {who['pid']}) ran"
    try:
        os.kill(int(who["pid"]), 0)
    except ProcessLookupError:
        return (f"interrupted: its runner (pid {who['pid']}) ended without closing the run, "
                "killed or crashed")
    except PermissionError:
        pass
    return None


# ---------------------------------------------------------------------------
# The files of a run directory. The guests' stage writes CONTEXT, SAMPLES and the files of
# each guest; the native stage writes its own (NATIVE_*, THUNK_SAMPLES) beside them and never
# rewrites the guests'; the analysis reads both through context() and samples().

CONTEXT = "context.json"
SAMPLES = "samples.csv"
NATIVE_CONTEXT = "native.json"
NATIVE_SAMPLES = "native-samples.csv"
THUNK_SAMPLES = "native-thunks.csv.gz"
# What native.json adds to the context: the native stage's keys, and its accelerators' units.
NATIVE_KEYS = ("native", "native_about")

# Each guest's files, by kind: (prefix, suffix) around "<arch>-<config>".
GUEST_FILES = {
    "module": ("tpbench-", ".ko"),               # the module measured
    "console": ("console-", ".log"),
    "probe": ("console-", "-kvm-probe.log"),     # the console of a KVM try that fell back
    "results": ("results-", ".txt"),             # the results channel: KTAP and records
    "helpers": ("kernel-helpers-", ".txt"),      # objdump of the kernel's helpers it calls
    "objdump": ("objdump-", ".txt.gz"),          # objdump -dr of the module, by its binutils
    "listing": ("codegen-", ".txt"),             # the analysis' side-by-side disassembly
    "checks": ("codegen-checks-", ".txt"),       # the analysis' codegen checks
    "paths": ("paths-", ".tsv"),                 # the disabled path of each loop
    "symbols": ("symbols-", ".txt"),             # a Binder guest's driver functions, sized
    "steps": ("steps-", ".csv"),                 # a Binder round trip's instructions by function
}


def named_file(directory: Path, kind: str, name: str) -> Path:
    """The file of `kind` for a boot called `name`: "<arch>-<config>" in a run directory,
    anything for the sample boots under out/."""
    prefix, suffix = GUEST_FILES[kind]
    return Path(directory) / f"{prefix}{name}{suffix}"


# The Binder workload's part of a run (issue 36), <run>/binder/: its own context and samples,
# and each guest's console and results channel named "<kernel>-<arch>-<config>".
BINDER_DIR = "binder"
BINDER_CONTEXT = "binder.json"
BINDER_SAMPLES = "binder-samples.csv"
BINDER_EVENTS = "binder-events.csv"


def binder_dir(run: Path) -> Path:
    return Path(run) / BINDER_DIR


def binder_guest(kernel: str, arch: str, config: str) -> str:
    """A Binder guest's name: its key in binder.json and the stem of its files."""
    return f"{kernel}/{arch}/{config}"


def binder_file(run: Path, kind: str, guest: str) -> Path:
    return named_file(binder_dir(run), kind, guest.replace("/", "-"))


def binder_context(run: Path) -> dict | None:
    """binder.json, or None for a run without a Binder part."""
    path = binder_dir(run) / BINDER_CONTEXT
    return read_json(path) if path.exists() else None


def guest_file(run: Path, kind: str, arch: str, config: str) -> Path:
    return named_file(run, kind, f"{arch}-{config}")


def kind_of(name: str) -> str | None:
    """The kind of a file name: of the kinds whose prefix and suffix it has, the most
    specific (codegen-checks- before codegen-, -kvm-probe.log before .log)."""
    fits = [(len(prefix) + len(suffix), kind) for kind, (prefix, suffix) in GUEST_FILES.items()
            if name.startswith(prefix) and name.endswith(suffix)]
    return max(fits)[1] if fits else None


def guest_of(name: str, kind: str) -> tuple[str, str] | None:
    """(arch, config) of a file name of `kind`, or None for a name of another kind. Schema 1
    runs were x86_64 alone and left the architecture out of the names."""
    if kind_of(name) != kind:
        return None
    prefix, suffix = GUEST_FILES[kind]
    stem = name[len(prefix):-len(suffix)]
    for arch in NAMES:
        if stem.startswith(arch + "-"):
            return arch, stem[len(arch) + 1:]
    return "x86_64", stem


def guest_files(run: Path, kind: str) -> dict[tuple[str, str], Path]:
    """Every file of `kind` in the run, by (arch, config), in name order."""
    prefix, suffix = GUEST_FILES[kind]
    out = {}
    for p in sorted(Path(run).glob(f"{prefix}*{suffix}")):
        tag = guest_of(p.name, kind)
        if tag:
            out[tag] = p
    return out


class Damaged(Failure):
    """A run directory that cannot be read as one; the message names the file."""


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise Damaged(f"{path}: not valid JSON ({e}); the run is damaged: run make "
                      "bench again") from None
    if not isinstance(data, dict):
        raise Damaged(f"{path}: not a JSON object; the run is damaged: run make bench again")
    return data


def guest_context(run: Path) -> dict:
    """context.json as the guests' stage wrote it."""
    path = Path(run) / CONTEXT
    if not path.exists():
        raise Damaged(f"{run}: not a run directory (no {CONTEXT}); give data/<run-id>")
    return read_json(path)


def native_context(run: Path) -> dict | None:
    """native.json, or None where the native stage wrote none (or, before it had a file of
    its own, wrote into context.json)."""
    path = Path(run) / NATIVE_CONTEXT
    return read_json(path) if path.exists() else None


def context(run: Path) -> dict:
    """The run's context: the guests', with the native stage's keys and units over it and a
    failure of either stage making the whole incomplete."""
    ctx = guest_context(run)
    native = native_context(run)
    if native is None:
        return ctx
    ctx = dict(ctx, **{k: native[k] for k in NATIVE_KEYS if k in native})
    ctx["units"] = dict(ctx.get("units", {}), **native.get("units", {}))
    if native.get("incomplete_reason") and ctx.get("complete"):
        ctx["complete"], ctx["incomplete_reason"] = False, native["incomplete_reason"]
    return ctx


def write_json(path: Path, data: dict) -> None:
    disk.write_atomically(path, json.dumps(data, indent=2) + "\n")


def write_context(run: Path, ctx: dict) -> None:
    write_json(Path(run) / CONTEXT, ctx)


def parts(run: Path) -> list[Path]:
    """The run directory, then that of each further build profile and kernel inside it, and
    theirs in turn (a kernel built in a further profile: <run>/clang/mainline)."""
    ctx = guest_context(run)
    out = [Path(run)]
    for name in [*ctx.get("other_profiles", []), *ctx.get("other_kernels", [])]:
        other = Path(run) / name
        if not (other / CONTEXT).exists():
            raise Damaged(f"{run}/{CONTEXT} names the further run {other.name}, but {other} "
                          f"has no {CONTEXT}: the run is damaged or was cut short; run make "
                          "bench again")
        out += parts(other)
    return out


def write_objdump(run: Path, arch: str, config: str, text: str) -> None:
    """The module's disassembly, kept compressed (zcat shows it): the runner, which knows each
    architecture's binutils, writes it; the codegen walk reads it."""
    disk.write_atomically(guest_file(run, "objdump", arch, config),
                          gzip.compress(text.encode(), mtime=0))


def read_objdump(run: Path, arch: str, config: str) -> str:
    path = guest_file(run, "objdump", arch, config)
    if not path.exists():
        raise Damaged(f"{path}: missing; the runner writes it beside the module it measured "
                      f"(a run made before it did: python3 -m runner disassemble --run {run})")
    try:
        return gzip.decompress(path.read_bytes()).decode()
    except (OSError, EOFError) as e:
        raise Damaged(f"{path}: not a whole gzip file ({e}); the run is damaged") from None


def is_native(accel: str) -> bool:
    return str(accel).split("+", 1)[0] == "native"


def samples(run: Path):
    """The run's samples, the guests' and the host's own-thunk native ones together. A run
    whose native stage predates native-samples.csv has them in samples.csv; where both
    exist, native-samples.csv's are the ones kept."""
    import pandas as pd     # the runner reads no samples: it need not import pandas
    guests = pd.read_csv(Path(run) / SAMPLES)
    path = Path(run) / NATIVE_SAMPLES
    if not path.exists():
        return guests
    native = pd.read_csv(path)
    guests = guests[[not is_native(a) for a in guests.accel]]
    return pd.concat([guests, native], ignore_index=True)
