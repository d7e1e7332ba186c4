"""One row per site kind, language, architecture, config, profile and kernel: what a reader
checks a run by (issue 22's verdict.csv). Pure functions over a run's summary, samples and
disassembly paths."""

import pandas as pd

from analysis import report, sites, stats
from runner import matrix

# (site kind, who writes it, variant): the sites a driver author chooses between.
SITES = (("one argument", "C", "c_trace"), ("one argument", "Rust", "rust_trace"),
         ("one argument", "Rust via a C helper", "rust_helper"),
         ("driver-like", "C", "c_txn"), ("driver-like", "Rust", "rust_txn"),
         ("driver-like", "Rust, if enabled", "rust_txn_lazy"),
         ("16 in a row", "C", "c_dense"), ("16 in a row", "Rust", "rust_dense"))

# The driver-like sites, each with the bare site of its language.
ARGUMENT_BARE = {variant: bare for _, variant, bare in report.ARGUMENT_SITES}

COLUMNS = ["arch", "config", "profile", "kernel", "site_kind", "language", "variant",
           "instructions_per_site", "argument_loads", "native_median", "native_min",
           "native_max", "native_processes", "native_unit"]


def process_costs(samples: pd.DataFrame, reps: int) -> pd.DataFrame:
    """Each native process's cost of each site, per call: its floor slope minus its
    baseline's in the same process (round) and placement. A round of the native stage is a
    new process, so these are the values a reader's own run may land on."""
    native = stats.native(samples)
    if native.empty:
        return pd.DataFrame(columns=["arch", "config", "accel", "round", "variant", "cost"])
    native = native.assign(round=native.rep // reps)
    slopes = {key: stats.floor_slope(g) for key, g in
              native.groupby(["arch", "config", "accel", "round", "variant"])}
    rows = []
    for (arch, config, accel, rnd, variant), value in slopes.items():
        base = stats.baseline_of(variant, {k[4] for k in slopes if k[:4] == (arch, config, accel, rnd)})
        if base is None or variant == base:
            continue
        cost = (value - slopes[(arch, config, accel, rnd, base)]) / max(
            matrix.BY_NAME[variant].sites, 1)
        rows.append(dict(arch=arch, config=config, accel=accel, round=rnd, variant=variant,
                         cost=cost))
    return pd.DataFrame(rows)


def verdict(summary: pd.DataFrame, samples: pd.DataFrame, paths: dict, reps: int,
            profile: str, kernel: str) -> pd.DataFrame:
    """The verdict rows of one run directory (one profile, one kernel)."""
    guest = stats.rows(stats.guest(summary), state="disabled")
    native = stats.native(summary)
    native_unit = str(native.unit.iloc[0]) if not native.empty else None
    processes = process_costs(stats.rows(samples, state="disabled"), reps)
    rows = []
    for arch, config in stats.panels(guest):
        path_rows = paths.get(f"{arch}-{config}") or []
        for kind, language, variant in SITES:
            r = stats.rows(guest, arch=arch, config=config, variant=variant)
            if r.empty or pd.isna(r.net.iloc[0]):
                continue
            per_site = r.net.iloc[0] / matrix.BY_NAME[variant].sites
            loads = None
            if variant in ARGUMENT_BARE:
                bare = stats.rows(guest, arch=arch, config=config, variant=ARGUMENT_BARE[variant])
                loads = sites.argument_loads(path_rows, variant, r.baseline.iloc[0],
                                             ARGUMENT_BARE[variant],
                                             None if bare.empty else bare.baseline.iloc[0])
            mine = (processes[(processes.arch == arch) & (processes.config == config)
                              & (processes.variant == variant)] if not processes.empty
                    else processes)
            rows.append(dict(
                arch=arch, config=config, profile=profile, kernel=kernel, site_kind=kind,
                language=language, variant=variant, instructions_per_site=per_site,
                argument_loads=loads,
                native_median=mine.cost.median() if len(mine) else None,
                native_min=mine.cost.min() if len(mine) else None,
                native_max=mine.cost.max() if len(mine) else None,
                native_processes=int(mine["round"].nunique()) if len(mine) else 0,
                native_unit=native_unit if len(mine) else None))
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table.astype({"argument_loads": "Int64", "native_processes": "int64"})


def native_reps(context: dict) -> int:
    """Repetitions per round of the run's native stage (1 when it had none)."""
    return int(context.get("native_about", {}).get("matrix", {}).get("reps", 1))
