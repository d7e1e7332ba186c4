"""A run directory read for the report: its context and samples, checked, in instructions."""

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis import validate
from common import rundir
from common.rundir import runner_gone


@dataclass(frozen=True)
class Analysed:
    """One build profile's run directory, read and summarised."""
    run: Path
    context: dict
    summary: pd.DataFrame
    paths: dict          # "<arch>-<config>" -> [variant, count, instructions] rows

    @property
    def profile(self) -> str:
        return profile_of(self.context)


def profile_of(context: dict) -> str:
    """The run's build profile; every run before profiles existed was tinyconfig's -Os."""
    return context.get("profile", "tiny")


def kernel_of(context: dict) -> str:
    """The run's kernel; every run before kernels existed was the series'."""
    return context.get("kernel", "series")


def normalize(context: dict, samples: pd.DataFrame):
    """Reads schema 1 runs (x86_64 only, no arch column) as schema 2."""
    if context.get("schema_version", 1) >= 2:
        return context, samples
    arch = context.get("arch", "x86_64")
    if "arch" not in samples.columns:
        samples = samples.copy()
        samples.insert(0, "arch", arch)
    context = dict(context)
    context["configs"] = {f"{arch}/{k}": dict(v, arch=arch, config=k)
                          for k, v in context["configs"].items()}
    context["toolchain"] = {arch: context["toolchain"]}
    return context, samples


def load_run(run: Path, allow_incomplete: bool):
    context = validate.check_run(run)
    # A run still "running" whose runner is gone was interrupted: say so, not "running".
    gone = runner_gone(context)
    if gone:
        context = dict(context, incomplete_reason=gone)
    if not context.get("complete") and not allow_incomplete:
        raise SystemExit(f"{run}: the run is incomplete ({context.get('incomplete_reason')}); "
                         "pass ALLOW_INCOMPLETE=1 to analyse what it recorded anyway")
    samples = rundir.samples(run)
    if samples.empty:
        raise SystemExit(f"{run}: samples.csv has no samples")
    context, samples = normalize(context, samples)
    return context, in_instructions(context, samples)


def load_thunk_samples(run: Path) -> pd.DataFrame:
    """The native samples of the return thunks other than the host kernel's own
    (native-thunks.csv.gz, checked by validate.check_run with samples.csv); empty for a run
    made before they were timed."""
    path = run / rundir.THUNK_SAMPLES
    if not path.exists():
        return pd.DataFrame(columns=validate.COLUMNS_THUNKS)
    return pd.read_csv(path)


def in_instructions(context: dict, samples: pd.DataFrame) -> pd.DataFrame:
    """Guest samples in instructions: a counter that ticks once per `counter_period`
    instructions under -icount (loongarch64's, every 10) has its ticks multiplied by it.
    samples.csv keeps the ticks the guest reported."""
    periods = {(c["arch"], c["config"]): c.get("counter_period", 1)
               for c in context["configs"].values()}
    factor = [periods.get((a, c), 1) if accel == "tcg" else 1
              for a, c, accel in zip(samples.arch, samples.config, samples.accel)]
    if all(f == 1 for f in factor):
        return samples
    factor = pd.Series(factor, index=samples.index)
    return samples.assign(cycles=samples.cycles * factor, tick=factor)
