"""One row per site kind, language, architecture, config, profile and kernel: what a reader
checks a run by (issue 22's verdict.csv). Pure functions over a run's summary, samples and
disassembly paths."""

import re

import pandas as pd

from analysis import sites, stats
from analysis.pages import driver as driver_page
from kelf.rewrites import THUNKS
from common import matrix

# (site kind, who writes it, variant): the sites a driver author chooses between.
SITES = (("one argument", "C", "c_trace"), ("one argument", "Rust", "rust_trace"),
         ("one argument", "Rust via a C helper", "rust_helper"),
         ("driver-like", "C", "c_txn"), ("driver-like", "Rust", "rust_txn"),
         ("driver-like", "Rust, if enabled", "rust_txn_lazy"),
         ("16 in a row", "C", "c_dense"), ("16 in a row", "Rust", "rust_dense"))

# The driver-like sites, each with the bare site of its language.
ARGUMENT_BARE = {variant: bare for _, variant, bare in driver_page.ARGUMENT_SITES}

COLUMNS = ["arch", "config", "profile", "kernel", "site_kind", "language", "variant",
           "instructions_per_site", "taken_per_site", "argument_loads", "calls_while_off", "native_median",
           "native_min", "native_max", "native_processes", "native_noise", "native_unit",
           "native_thunk"]
# thunks.csv: each site's native cost under each return thunk the native stage timed.
THUNK_COLUMNS = ["arch", "config", "profile", "kernel", "thunk", "host", "variant",
                 "native_median", "native_min", "native_max", "native_processes",
                 "native_noise", "native_unit"]

# A call in a path word, on each architecture: "call f", "bl f", "jal f", "jirl ... f".
_CALL = re.compile(r"^`?(?:call|bl|blx|jal|jalr)\s+([A-Za-z_][\w.]*)")


def cell(table: pd.DataFrame, column: str = "instructions_per_site", **equal):
    """One value of a verdict table, or None when the run has no such row."""
    part = stats.rows(table, **equal)
    return None if part.empty or pd.isna(part[column].iloc[0]) else part[column].iloc[0]


def calls_while_off(path_rows: list, variant: str, baseline: str) -> str | None:
    """The functions a site's disabled path calls beyond its baseline's, ";"-joined, in path
    order ("" for none); None when the disassembly has no path for it."""
    added = sites.site_instructions(path_rows, variant, baseline)
    if added is None:
        return None
    names = [m.group(1) for w in added if not w.startswith("minus") and (m := _CALL.match(w))]
    return ";".join(dict.fromkeys(names))


def aa_noise(samples: pd.DataFrame, reps: int) -> dict:
    """(arch, config) -> the native A/A noise between processes: the largest gap between
    the reference site and its twin (the same loop timed again in the same process), over
    every process (round) and placement, per call."""
    native = stats.native(samples)
    twins = native[native.variant.isin([stats.REFERENCE, stats.AA_TWIN])]
    if twins.empty:
        return {}
    twins = twins.assign(round=twins.rep // reps)
    out = {}
    for (arch, config, _, _), g in twins.groupby(["arch", "config", "accel", "round"]):
        slopes = {v: stats.floor_slope(gv) for v, gv in g[g.n > 0].groupby("variant")}
        if len(slopes) == 2:
            gap = abs(slopes[stats.REFERENCE] - slopes[stats.AA_TWIN])
            out[(arch, config)] = max(out.get((arch, config), 0.0), gap)
    return out


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


def thunk_costs(samples: pd.DataFrame, forced: pd.DataFrame, host: str | None, reps: int,
                unit: str, profile: str, kernel: str) -> pd.DataFrame:
    """Each site's native cost under each return thunk: the host kernel's own (`host`, the
    native rows of samples.csv) and the others timed beside it (`forced`, native-thunks.csv.gz
    rows): median, min and max over processes and placements, with that thunk's A/A noise."""
    frames = [stats.native(stats.rows(samples, state="disabled")).assign(thunk=host)
              if host else None,
              stats.rows(forced, state="disabled") if not forced.empty else None]
    frames = [f for f in frames if f is not None and not f.empty]
    rows = []
    for thunk, g in (pd.concat(frames, ignore_index=True).groupby("thunk", sort=False)
                     if frames else ()):
        g = g.drop(columns="thunk")
        costs, noise = process_costs(g, reps), aa_noise(g, reps)
        for (arch, config, variant), p in costs.groupby(["arch", "config", "variant"]):
            rows.append(dict(arch=arch, config=config, profile=profile, kernel=kernel,
                             thunk=thunk, host=thunk == host, variant=variant,
                             native_median=p.cost.median(), native_min=p.cost.min(),
                             native_max=p.cost.max(),
                             native_processes=int(p["round"].nunique()),
                             native_noise=noise.get((arch, config)), native_unit=unit))
    table = pd.DataFrame(rows, columns=THUNK_COLUMNS)
    order = {t: k for k, t in enumerate(THUNKS)}
    return (table.assign(order=table.thunk.map(order))
            .sort_values(["arch", "config", "order"], kind="stable")
            .drop(columns="order").reset_index(drop=True))


def verdict(summary: pd.DataFrame, samples: pd.DataFrame, paths: dict, reps: int,
            profile: str, kernel: str, host_thunk: str | None = None) -> pd.DataFrame:
    """The verdict rows of one run directory (one profile, one kernel)."""
    guest = stats.rows(stats.guest(summary), state="disabled")
    native = stats.native(summary)
    native_unit = str(native.unit.iloc[0]) if not native.empty else None
    disabled = stats.rows(samples, state="disabled")
    processes = process_costs(disabled, reps)
    noise = aa_noise(disabled, reps)
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
            taken = sites.taken_branches(path_rows, variant, r.baseline.iloc[0])
            rows.append(dict(
                arch=arch, config=config, profile=profile, kernel=kernel, site_kind=kind,
                language=language, variant=variant, instructions_per_site=per_site,
                taken_per_site=(None if taken is None
                                else round(taken / matrix.BY_NAME[variant].sites, 4)),
                argument_loads=loads,
                calls_while_off=calls_while_off(path_rows, variant, r.baseline.iloc[0]),
                native_median=mine.cost.median() if len(mine) else None,
                native_min=mine.cost.min() if len(mine) else None,
                native_max=mine.cost.max() if len(mine) else None,
                native_processes=int(mine["round"].nunique()) if len(mine) else 0,
                native_noise=noise.get((arch, config)) if len(mine) else None,
                native_unit=native_unit if len(mine) else None,
                native_thunk=host_thunk if len(mine) else None))
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table.astype({"argument_loads": "Int64", "native_processes": "int64"})


def host_thunk(context: dict) -> str | None:
    """The return thunk of the kernel whose host ran the native stage; "ret" for a run made
    before it was recorded (those ran only where every return was patched to `ret`)."""
    about = context.get("native_about", {})
    if "host_thunk" not in about:
        return "ret" if about.get("harness") else None
    return about["host_thunk"]["name"]


def native_reps(context: dict) -> int:
    """Repetitions per round of the run's native stage (1 when it had none)."""
    return int(context.get("native_about", {}).get("matrix", {}).get("reps", 1))
