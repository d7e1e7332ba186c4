"""The run matrix: build the benchmark module for each kernel, boot, collect samples.

Writes data/<run-id>/ (each guest's console, results and module, samples.csv, context.json;
common/rundir.py names them).
Statistics are analysis/'s job; this only records what the guest measured.
"""

import csv
import hashlib
import io
import json
import platform
import shutil
import tempfile
import dataclasses
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from common import messages
from runner import config as cfg
from common import console, disk, matrix, records, rundir
from common.rundir import RUNNING, runner_gone, runner_identity
from runner import kernel, proc, qemu, roots

# 2: an arch column in samples.csv; context.configs keyed "<arch>/<config>".
# 3: context.profile names the build profile (runs before it were all "tiny"); a run's
#    further profiles are run directories inside it.
SCHEMA_VERSION = 3
VARIANTS = matrix.VARIANTS
STATES = matrix.STATES
MAX_N = 1_000_000
MAX_REPS = 1000
CSV_COLUMNS = ("arch", "config", "accel", "variant", "state", "n", "rep", "cycles")
BENCH_MODULE = cfg.REPO / "bench-module"
DATA = cfg.REPO / "data"


@dataclass(frozen=True)
class BenchParams:
    variants: tuple[str, ...] = VARIANTS
    states: tuple[str, ...] = STATES
    ns: tuple[int, ...] = (0, 1, 10, 100, 1000, 10000)
    reps: int = 31
    warmup: int = 3
    results_kib: int | None = None   # the module's results buffer; None: its default (4 MiB)
    panic_after: int | None = None   # test only: the module panics after this many samples

    def problems(self) -> list[str]:
        """The same checks the module makes, so that bad input fails before a boot."""
        out = []
        for v in self.variants:
            if v not in VARIANTS:
                out.append(f"unknown variant {v!r}; valid: {', '.join(VARIANTS)}")
        for s in self.states:
            if s not in STATES:
                out.append(f"unknown state {s!r}; valid: {', '.join(STATES)}")
        if not self.variants or not self.states or not self.ns:
            out.append("variants, states and N list must each name at least one value")
        if not 1 <= len(self.ns) <= 16:
            out.append(f"between 1 and 16 values of N, not {len(self.ns)}")
        for n in self.ns:
            if not 0 <= n <= MAX_N:
                out.append(f"N={n} is outside 0..{MAX_N}")
        if len({n for n in self.ns if n > 0}) < 2:
            out.append("the per-call cost is a slope over N: give at least two values of N "
                       "above 0")
        if not 1 <= self.reps <= MAX_REPS:
            out.append(f"reps={self.reps} is outside 1..{MAX_REPS}")
        if not 0 <= self.warmup <= MAX_REPS:
            out.append(f"warmup={self.warmup} is outside 0..{MAX_REPS}")
        if self.panic_after is not None and self.panic_after < 1:
            out.append(f"panic_after={self.panic_after} must be at least 1 (it is a test switch)")
        if self.results_kib is not None and not 4 <= self.results_kib <= 65536:
            out.append(f"results_kib={self.results_kib} is outside 4..65536")
        return out

    def for_arch(self, arch: cfg.ArchParams) -> "BenchParams":
        """What a guest of `arch` runs: without Rust (32-bit arm), the C variants alone."""
        if arch.rust:
            return self
        return dataclasses.replace(self, variants=tuple(
            v for v in self.variants if matrix.BY_NAME[v].language == "C"))

    def module_args(self) -> list[str]:
        return [f"variants={','.join(self.variants)}", f"states={','.join(self.states)}",
                f"ns={','.join(map(str, self.ns))}", f"reps={self.reps}",
                f"warmup={self.warmup}"] + (
                    [f"results_kib={self.results_kib}"] if self.results_kib else []) + (
                    [f"panic_after={self.panic_after}"] if self.panic_after else [])


def parse_list(text: str) -> tuple[str, ...]:
    return tuple(x for x in text.replace(",", " ").split() if x)


def parse_int(text: str, what: str) -> int:
    values = parse_ints(text, what)
    if len(values) != 1:
        raise messages.Failure(f"{what} must be one integer, not {text!r}")
    return values[0]


def parse_ints(text: str, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in parse_list(text))
    except ValueError:
        raise messages.Failure(f"{what} must be integers, not {text!r}") from None


def write_atomically(path: Path, text: str) -> None:
    disk.write_atomically(path, text)


def samples_csv(rows, columns=CSV_COLUMNS) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


RUN_ID_TAG = "the first 7 hex digits of sha256(series hash + matrix parameters)"


def new_run_dir(root: Path, params: BenchParams) -> Path:
    """data/<UTC time>-<tag>[-<k>] (RUN_ID_TAG says what the tag hashes); never reuses a
    directory: a second run started in the same second with the same matrix gets -2."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    tag = hashlib.sha256((cfg.series_hash() + repr(params)).encode()).hexdigest()[:7]
    root.mkdir(parents=True, exist_ok=True)
    for k in range(1, 100):
        run = root / (f"{stamp}-{tag}" if k == 1 else f"{stamp}-{tag}-{k}")
        try:
            run.mkdir()   # atomic: of two runs, one gets the name and the other moves on
            return run
        except FileExistsError:
            continue
    raise messages.Failure(f"{root}: 99 runs named {stamp}-{tag} already; wait a second")


def first_line(e: BaseException) -> str:
    """A reason for context.json, even from an exception without a message."""
    if isinstance(e, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    lines = str(e).strip().splitlines()
    return lines[0] if lines else f"{type(e).__name__} (no message)"


def project_state() -> dict:
    """The checkout that made the run: its commit, whether it had changes, and a hash of the
    module sources that were built."""
    commit = proc.output_of(["git", "-C", str(cfg.REPO), "rev-parse", "HEAD"])
    status = proc.output_of(["git", "-C", str(cfg.REPO), "status", "--porcelain",
                              "--untracked-files=no"])
    sources = sorted(p for p in BENCH_MODULE.iterdir() if p.is_file())
    return {"project_commit": commit,
            "project_dirty": None if commit == "unavailable" else bool(status),
            "module_source_hash": cfg.digest([p.name.encode() + b"\0" + p.read_bytes()
                                              for p in sources])}


def host_cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def build_bench_module(kbuild: kernel.KernelBuild, work: Path, extra=()) -> Path:
    """Copies bench-module/ into `work` (a directory of this run's own, never the checkout,
    so two runs at once do not build into one directory) and builds it there."""
    out = work / "tpbench-bench-module"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(BENCH_MODULE, out, ignore=shutil.ignore_patterns("*.o", "*.ko", ".*"))
    kernel.build_external_module(kbuild, out, extra)
    return out / "tpbench.ko"


def run_matrix(config_names, accel: str, params: BenchParams, data_root: Path = DATA,
               arch_names=("x86_64",), timeout: float = 900, only=None,
               profile_names=(cfg.DEFAULT_PROFILE,), compare_archs=None,
               kernel_name=cfg.DEFAULT_KERNEL, compare_kernels=(), reuse=None) -> Path:
    """Runs every (architecture, config), or those of the set `only` of (arch, config) names,
    for each build profile, on the kernel `kernel_name`; returns the run directory. The first
    profile's results are the run directory's own; each further profile's are a run directory
    of their own inside it, named after the profile (data/<run-id>/tiny/), and so are those of
    each kernel of `compare_kernels`, built in the first profile (data/<run-id>/mainline/) or,
    named <profile>/<kernel>, in that further profile (data/<run-id>/clang/mainline/);
    both are measured on `compare_archs` (default: every architecture). With `reuse`, an
    earlier run directory, a guest whose results that run holds for the same inputs is taken
    from it instead of booted again, whichever of its parts holds it (part_with_guest(),
    reusable_guest() say which). Raises messages.Failure
    on a bad run, after marking the run incomplete with the reason."""
    problems = params.problems()
    if accel not in cfg.ACCELS:
        problems.append(f"unknown ACCEL {accel!r}; valid values: {', '.join(cfg.ACCELS)}")
    for name in config_names:
        if name not in cfg.KERNEL_CONFIGS:
            problems.append(f"unknown config {name!r}; valid: {', '.join(cfg.KERNEL_CONFIGS)}")
    nested = [split_kernel(k) for k in compare_kernels]
    for name in (kernel_name, *(k for _, k in nested)):
        if name not in cfg.KERNELS:
            problems.append(f"unknown kernel {name!r}; valid: {', '.join(cfg.KERNELS)}")
    for profile, name in nested:
        if profile is not None and profile not in profile_names[1:]:
            problems.append(f"COMPARE_KERNELS names {profile}/{name}, but {profile!r} is no "
                            f"further build profile of PROFILES ({' '.join(profile_names)})")
    if (any(k == kernel_name for _, k in nested)
            or len(set(compare_kernels)) != len(compare_kernels)):
        problems.append(f"name each kernel once, not {' '.join([kernel_name, *compare_kernels])}")
    for name in profile_names:
        if name not in cfg.PROFILES:
            problems.append(f"unknown build profile {name!r}; valid: {', '.join(cfg.PROFILES)}")
    if not profile_names or len(set(profile_names)) != len(profile_names):
        problems.append(f"name each build profile once, not {' '.join(profile_names) or 'none'}")
    archs_of, arch_problems = further_archs(compare_archs or (), arch_names,
                                            [*profile_names[1:], *compare_kernels])
    problems += arch_problems
    for name in arch_names:
        if name not in cfg.ARCHS:
            problems.append(f"unknown architecture {name!r}; supported: {', '.join(cfg.ARCHS)}")
        elif not all(params.for_arch(cfg.build_params(cfg.KERNELS[k], cfg.ARCHS[name])).variants
                     for k in (kernel_name, *(k for _, k in nested)) if k in cfg.KERNELS):
            problems.append(f"{name}: 6.12 has no Rust there, and VARIANTS names no C variant "
                            "to run")
    if reuse is not None:
        problems += reuse_problems(Path(reuse), accel)
    if problems:
        raise messages.Failure("; ".join(problems))
    archs = [cfg.ARCHS[a] for a in arch_names]
    for name in close_orphans(data_root) if Path(data_root).is_dir() else []:
        messages.say(f"[tpbench] run {name}: its runner is gone; marked interrupted")
    disk.require_space(data_root, "run", "a run of the matrix")
    source = kernel.prepare_source(cfg.KERNELS[kernel_name])
    trees = {k: kernel.prepare_source(cfg.KERNELS[k]) for _, k in nested}
    run = new_run_dir(data_root, params)
    profiles = [cfg.PROFILES[p] for p in profile_names]
    # (run directory, source, profile): the run's own first, then the further profiles of its
    # kernel, then the further kernels, each in the first profile or in the further profile
    # its COMPARE_KERNELS token names (clang/mainline: data/<run-id>/clang/mainline/).
    parts = [(run, source, profiles[0])]
    parts += [(run / p.name, source, p) for p in profiles[1:]]
    parts += [(run / k if p is None else run / p / k, trees[k],
               profiles[0] if p is None else cfg.PROFILES[p]) for p, k in nested]
    for where, tree, profile in parts:
        first = where == run
        name = str(where.relative_to(run))
        where.mkdir(exist_ok=True)
        mine = archs if first else [a for a in archs if a.name in archs_of[name]]
        # Each context names the further runs inside its directory.
        inside = [k for p, k in nested if p == (None if first else name)]
        others = ([p.name for p in profiles[1:]] if first else [], inside)
        try:
            run_profile(tree, where, profile, *others, mine, config_names, accel, params,
                        timeout, only, None if reuse is None else Path(reuse))
        except BaseException as e:
            if not first:   # the run's own context already says why
                mark_incomplete(run, f"{name}: {first_line(e)}")
            raise
    return run


def reuse_problems(earlier: Path, accel: str) -> list[str]:
    """What keeps the run `earlier` from lending this run its guests."""
    out = []
    if accel != "tcg":
        out.append(f"REUSE takes guests counted under TCG, whose counts are exact and the "
                   f"same on every boot: give ACCEL=tcg, not {accel}")
    if not (earlier / rundir.CONTEXT).is_file():
        out.append(f"REUSE: {earlier} is no run directory (no {rundir.CONTEXT}); give "
                   "data/<run-id>")
    return out


def part_with_guest(earlier: Path, tag: str, key: str) -> Path | None:
    """The directory of the earlier run (itself or one of its further profiles and kernels)
    whose guest `tag` ("arch/config") ran a kernel of the build `key`; None if none did."""
    for part in rundir.parts(earlier):
        entry = rundir.guest_context(part).get("configs", {}).get(tag)
        if entry is not None and entry.get("build_key") == key:
            return part
    return None


def reusable_guest(earlier: Path, tag: str, key: str, module_args: list[str],
                   toolchain: dict, module_hash: str) -> tuple[dict | None, str]:
    """The context entry of the guest `tag` ("arch/config") in the earlier run directory
    `earlier` (part_with_guest()'s), where booting it again would give the same samples: the
    same kernel build (`key` names the tree, its patches, the config fragments and the
    compilers), the same module sources and parameters, the same QEMU, and TCG's exact count.
    Else (None, why not)."""
    ctx = rundir.guest_context(earlier)
    entry = ctx.get("configs", {}).get(tag)
    if entry is None:
        return None, f"{earlier.name} has no guest {tag}"
    why = [why for ok, why in (
        (ctx.get("complete") is True, "that run is incomplete"),
        (entry.get("build_key") == key, "its kernel was another build"),
        (entry.get("accel") == "tcg", "it was not counted under TCG"),
        (entry.get("module_params") == module_args, "its module parameters differ"),
        (ctx.get("module_source_hash") == module_hash, "its module sources differ"),
        (ctx.get("toolchain", {}).get(tag.split("/")[0]) == toolchain,
         "its compilers or QEMU differ"),
    ) if not ok]
    return (None, why[0]) if why else (entry, "")


def reused(earlier: Path, source, arch: cfg.ArchParams, config: str,
           profile: cfg.BuildProfile, params: BenchParams, run: Path, context: dict,
           rows: list) -> bool:
    """Takes the guest (arch, config) from the earlier run directory if it holds it for the
    same inputs, saying which it did and why; True if it did."""
    key = kernel.build_key(source, arch, cfg.KERNEL_CONFIGS[config], profile)
    module_args = params.for_arch(cfg.build_params(source.kernel, arch, profile)).module_args()
    tag = f"{arch.name}/{config}"
    part = part_with_guest(earlier, tag, key)
    entry, why_not = ((None, f"{earlier.name} has no guest {tag} of this kernel build")
                      if part is None else
                      reusable_guest(part, tag, key, module_args, context["toolchain"][arch.name],
                                     context["module_source_hash"]))
    where = f"{source.kernel.name}/{profile.name}/{arch.name}/{config}"
    if entry is None:
        messages.say(f"[tpbench] {where}: booted, not reused: {why_not}")
        return False
    messages.say(f"[tpbench] {where}: reused from {part} (the same kernel build, module "
                 "and matrix), not booted again")
    booted = rundir.guest_context(earlier)
    reuse_guest(part, entry, {"run": booted["run_id"], "date": booted["date"]}, arch.name,
                config, run, context, rows)
    return True


def reuse_guest(earlier: Path, entry: dict, origin: dict, arch: str, config: str, run: Path,
                context: dict, rows: list) -> None:
    """Copies the guest of an earlier run's directory `earlier` into `run`: its files, its
    samples and its context entry, which names the run that booted it (`origin`, unless the
    guest was reused there too)."""
    for kind in ("module", "console", "probe", "results", "helpers", "objdump"):
        source = rundir.guest_file(earlier, kind, arch, config)
        if source.exists():
            target = rundir.guest_file(run, kind, arch, config)
            with disk.writing(target):
                shutil.copy(source, target)
    with open(earlier / rundir.SAMPLES, newline="") as f:
        rows += [{k: r[k] for k in CSV_COLUMNS} for r in csv.DictReader(f)
                 if (r["arch"], r["config"]) == (arch, config)]
    context["configs"][f"{arch}/{config}"] = dict(
        entry, reused_from=entry.get("reused_from") or origin)
    write_atomically(run / rundir.SAMPLES, samples_csv(rows))
    rundir.write_context(run, context)


def split_kernel(token: str) -> tuple[str | None, str]:
    """A COMPARE_KERNELS token: "mainline" is (None, "mainline"), built in the run's first
    profile; "clang/mainline" is ("clang", "mainline"), built in that further profile."""
    profile, _, name = token.rpartition("/")
    return profile or None, name


def further_archs(tokens, arch_names, further_names) -> tuple[dict, list[str]]:
    """COMPARE_ARCHS: each further run's architectures (a further profile's or kernel's).
    A plain architecture is every further run's, unless `name=arch,arch` gives that run its
    own; with neither, a further run has all of the run's. Returns ({name: archs}, problems)."""
    plain = [t for t in tokens if "=" not in t]
    own = dict(t.split("=", 1) for t in tokens if "=" in t)
    problems = [f"COMPARE_ARCHS names {name!r}, which is no further profile or kernel of this "
                f"run ({', '.join(further_names) or 'there is none'})"
                for name in own if name not in further_names]
    archs_of = {name: tuple(parse_list(own.get(name, "")) or plain or arch_names)
                for name in further_names}
    for name in sorted({a for archs in archs_of.values() for a in archs} - set(arch_names)):
        problems.append(f"a further run's architecture {name!r} is not among the "
                        f"run's ({', '.join(arch_names)})")
    return archs_of, problems


# Less free space than this after a guest means the disk filled under it.
FULL = 1 << 20


def close_orphans(data_root: Path) -> list[str]:
    """Marks every run under `data_root` whose runner is gone as interrupted; returns the
    names of the runs it marked."""
    marked = []
    for ctx_path in sorted(Path(data_root).glob(f"*/{rundir.CONTEXT}")) + sorted(
            Path(data_root).glob(f"*/*/{rundir.CONTEXT}")):
        try:
            context = json.loads(ctx_path.read_text())
        except (OSError, ValueError):
            continue
        why = runner_gone(context)
        if why:
            context["incomplete_reason"] = why
            rundir.write_json(ctx_path, context)
            marked.append(str(ctx_path.parent.relative_to(data_root)))
    return marked


def mark_incomplete(run: Path, reason: str) -> None:
    context = rundir.guest_context(run)
    context["complete"], context["incomplete_reason"] = False, reason
    rundir.write_context(run, context)


def run_profile(source, run: Path, profile: cfg.BuildProfile, other_profiles: list[str],
                other_kernels: list[str], archs, config_names, accel: str, params: BenchParams,
                timeout: float, only, earlier: Path | None = None) -> None:
    """One build profile's kernels into `run`, which gets its own context.json and samples;
    a guest the earlier run `earlier` (or a further run inside it) holds for the same inputs
    is taken from it."""
    context = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run.name,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host_cpu": host_cpu(),
        "host_kernel": platform.release(),
        "archs": [a.name for a in archs],
        "profile": profile.name,
        "profile_what": profile.what,
        "kernel": source.kernel.name,
        "kernel_what": source.kernel.what,
        "other_profiles": other_profiles,
        "other_kernels": other_kernels,
        "kernel_package": f"{source.kernel.package} {kernel.package_version(source.kernel)}",
        "series_hash": cfg.series_hash(source.kernel),
        "series": [p.name for p in cfg.series_files(source.kernel.patches)],
        **project_state(),
        "run_id_tag": RUN_ID_TAG,
        "toolchain": {a.name: roots.toolchain_versions(cfg.build_params(source.kernel, a, profile), a)
                      for a in archs},
        "module_params": params.module_args(),
        "requested_accel": accel,
        "units": {"tcg": "instructions", "kvm": "cycles"},
        "configs": {},
        "not_built": {},    # arch/config -> why the run has no guest of it (no kernel, or QEMU)
        "kernels_known": list(cfg.KERNELS),     # what the report names when a run lacks one
        # Why this kernel has no guest of some (arch, config), asked for or not.
        "kernels_impossible": {f"{a}/{c}": why for a, c, why in source.kernel.impossible},
        "complete": False,
        "incomplete_reason": RUNNING,
        # Who is running it: a run still "running" whose runner is gone was interrupted.
        "runner": runner_identity(),
    }
    rundir.write_context(run, context)
    rows: list[dict] = []
    messages.say(f"[tpbench] run {run} (build profile {profile.name}: {profile.what})")
    try:
        for arch in archs:
            for name in [n for n in config_names if only is None or (arch.name, n) in only]:
                why = source.kernel.why_impossible(arch.name, name) or profile.why_not(arch.name)
                if why:
                    messages.say(f"[tpbench] {source.kernel.name}/{arch.name}/{name}: none, {why}")
                    context["not_built"][f"{arch.name}/{name}"] = why
                    continue
                if earlier is not None and reused(earlier, source, arch, name, profile,
                                                  params, run, context, rows):
                    continue
                run_one(source, arch, cfg.KERNEL_CONFIGS[name], profile, accel, params, run,
                        context, timeout, rows)
        context["complete"] = True
        context["incomplete_reason"] = None
    except BaseException as e:
        context["incomplete_reason"] = first_line(e)
        raise
    finally:
        close_run(run, context, rows)


def close_run(run: Path, context: dict, rows: list) -> None:
    """The run's samples and context as they are now. On a disk fault the samples written
    before stay, and the context still gets one last try to say why the run stopped."""
    ctx_path = run / rundir.CONTEXT
    try:
        earlier = json.loads(ctx_path.read_text())
    except (OSError, ValueError):
        earlier = None
    try:
        if rows:
            write_atomically(run / rundir.SAMPLES, samples_csv(rows))
        rundir.write_context(run, context)
    except disk.DiskFault as e:
        why = dict(complete=False, incomplete_reason=first_line(e))
        # In place, largest first: the last, the file as it was with only the reason
        # changed and the spaces gone, fits in the blocks truncating it frees.
        tries = [json.dumps(dict(context, **why), indent=2) + "\n",
                 json.dumps(dict(context, **why), separators=(",", ":")) + "\n"]
        if earlier is not None:
            tries.append(json.dumps(dict(earlier, **why), separators=(",", ":")) + "\n")
        any(disk.write_last_words(ctx_path, text) for text in tries)
        raise


def doctest_summary(suite: console.KunitSuite) -> dict:
    """What context.json keeps of the kernel crate's doctests: counts, and the series' own."""
    def count(status):
        return sum(t.status == status for t in suite.tests)
    return {
        "suite": suite.name,
        "passed": count("ok"),
        "failed": count("not ok"),
        "skipped": count("skip"),
        "series": [{"name": t.name, "location": t.location, "status": t.status}
                   for path in cfg.SERIES_DOCTEST_FILES for t in suite.in_file(path)],
        "problems": list(suite.problems),
    }


def run_one(source, arch: cfg.ArchParams, config: cfg.KernelConfig, profile: cfg.BuildProfile,
            accel: str, params: BenchParams, run: Path, context: dict, timeout: float,
            rows: list) -> None:
    """One kernel: build (cached), module, boot, parse. Adds its samples to `rows` before
    judging the boot, so a failed guest's samples are kept with the run."""
    tag = f"{arch.name}-{config.name}"
    kb = kernel.build_kernel(source, arch, config, profile)
    # Scratch of this run alone (module build, initramfs), in the cache, gone afterwards.
    with tempfile.TemporaryDirectory(prefix=f"work-{run.name}-{tag}-", dir=cfg.cache_root()) as tmp:
        ko = build_bench_module(kb, Path(tmp))
        # The exact module measured, for the codegen comparison of this run.
        measured = rundir.guest_file(run, "module", arch.name, config.name)
        with disk.writing(measured):
            shutil.copy(ko, measured)
        rundir.write_objdump(run, arch.name, config.name, kernel.disassemble(arch, ko))
        helpers = kernel.kernel_helpers_code(kb, ko)
        if helpers:
            write_atomically(rundir.guest_file(run, "helpers", arch.name, config.name), helpers)
        # The init is a user program: the series' tree builds it for every kernel.
        init = qemu.guest_init(kernel.prepare_source(), arch)
        initrd = qemu.make_initramfs(Path(tmp) / "initramfs-bench.cpio.gz", init,
                                      {"/tpbench.ko": ko})
        boot_and_record(arch, config, kb, initrd, accel, params, run, context, timeout, rows)


def boot_and_record(arch, config, kb, initrd: Path, accel: str, params: BenchParams, run: Path,
                    context: dict, timeout: float, rows: list) -> None:
    """Boots one kernel with the module and records its samples and context."""
    tag = f"{arch.name}-{config.name}"
    params = params.for_arch(kb.build_arch)
    append = "tpbench.mode=bench " + " ".join(f"tpbench.arg={a}" for a in params.module_args())
    with messages.Stage(f"run matrix on {arch.name}/{config.name}"):
        # Straight into the run directory, so an interrupted boot keeps its console.
        result = qemu.boot(arch, kb.image, initrd, append, accel, run, tag, timeout=timeout)
    fragments = cfg.fragment_paths(arch, config, kb.profile, kb.kernel.name)
    context["configs"][f"{arch.name}/{config.name}"] = {
        "arch": arch.name,
        "config": config.name,
        "profile": kb.profile.name,
        "kernel_release": (kb.build / "include/config/kernel.release").read_text().strip(),
        "build_key": kb.key,
        "fragments": {p.name: p.read_text() for p in fragments},
        "fragment_hash": cfg.fragment_hash(arch, config, kb.profile, kb.kernel.name),
        "qemu_command": result.command,
        "accel": result.accel,
        "accel_reason": result.accel_reason,
        "unit": "instructions" if result.accel == "tcg" else "cycles",
        # The samples are counter ticks; the analysis multiplies them by this under TCG.
        "counter_period": arch.counter_period,
        "boot_seconds": round(result.elapsed, 1),
        "seconds_to_init": (round(result.time_to_init, 1)
                            if result.time_to_init is not None else None),
        "module_params": params.module_args(),
        # What the guest's kernel chose for QEMU's CPU model (its vulnerabilities files).
        "vulnerabilities": console.vulnerabilities(result.console_lines),
    }
    doctest_problems = []
    if kb.build_arch.rust:    # the kernel crate's doctests exist where Rust does
        doctests = console.parse_kunit_suite(result.console_lines, cfg.DOCTEST_SUITE)
        context["configs"][f"{arch.name}/{config.name}"]["doctests"] = doctest_summary(doctests)
        doctest_problems = list(doctests.problems)
    lines, cut = console.whole_lines(result.results)
    ktap_lines, dumps = records.split_results(lines)
    ktap = console.parse_ktap(ktap_lines)
    record_summary, record_problems = records.check(dumps, params.variants)
    context["configs"][f"{arch.name}/{config.name}"]["records"] = record_summary
    samples = ktap.samples
    if not samples:
        # A guest that died before reporting: the samples it printed on its console as it
        # took them (only with the module's test parameter panic_after) are what arrived.
        samples = console.console_samples(result.console_lines)
    rows += [dict(arch=arch.name, config=config.name, accel=result.accel, **s) for s in samples]
    write_atomically(run / rundir.SAMPLES, samples_csv(rows))
    rundir.write_context(run, context)
    failure = qemu.boot_failure(result, list(ktap.problems) + cut + doctest_problems
                                 + [f"record check: {p}" for p in record_problems])
    free, _ = disk.free_and_total(run)
    if failure and free < FULL:
        # QEMU writes the results file itself: on a full disk it is cut short, and the
        # problem is the disk, not the guest.
        raise disk.DiskFault(f"{arch.name}/{config.name}: the guest's results in "
                             f"{result.results_file} were cut short: no space left; "
                             f"{disk.where_words(run)}; free space there or point --data "
                             "elsewhere")
    if failure:
        raise messages.Failure(f"{arch.name}/{config.name}: {failure}")
    messages.say(f"[tpbench] {arch.name}/{config.name}: {len(samples)} samples, all "
                 f"{len(ktap.tests)} KTAP tests ok, "
                 f"{sum(v['records'] for v in record_summary['on'].values())} records as fired")
