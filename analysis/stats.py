"""Statistics over a run's samples.csv: pure functions over pandas frames.

A sample is the counter delta of one timed call of a loop of N iterations.
The per-call cost is the least-squares slope over N of the fastest sample at
each N, so the constant cost of the call and the timer drops out, and so does
time the machine spent elsewhere. N=0 is left out of the fit: there
the Rust loops return before setting up the loop, a different path.
"""

import numpy as np
import pandas as pd

from common import matrix

GROUP = ["arch", "config", "accel", "variant", "state"]
UNITS = {"tcg": "instructions", "kvm": "cycles"}
# The unit of native samples without hardware counters (the runner records which).
NATIVE_UNIT = "TSC ticks"
# A site's cost is measured against the same loop without the site (the list's baseline);
# runs made before `c_base` and `rust_base` existed fall back to the empty loops.
EARLIER_BASE = {"c_base": "c_empty", "rust_base": "rust_empty"}
# The headline's C site, which the native stage also times twice.
REFERENCE = "c_trace"
# The native stage times the reference twice; the second copy's name. The spread of the
# difference between the two (an A/A comparison) is that run's noise threshold.
AA_TWIN = "aa_" + REFERENCE
BOOTSTRAP = 2000
# Under TCG with -icount every sample repeats exactly, so any difference is real;
# under KVM, differences within this many cycles per call are called noise.
NOISE = {"tcg": 0.0, "kvm": 0.5}
# Recording under -icount: the ring buffer's page changes are spread over the calls, so a
# per-call count is a fraction that moves with the matrix; less than one instruction per
# call between two sites is no difference.
RECORDING_NOISE = 1.0


def is_native(accel: str) -> bool:
    """'native' (the kernel's placement) and 'native+16' etc. (.text shifted in its page)."""
    return accel.split("+", 1)[0] == "native"


def unit_of(accel: str, units: dict | None = None) -> str:
    if units and accel in units:
        return units[accel]
    return NATIVE_UNIT if is_native(accel) else UNITS.get(accel, "cycles")
# Fits are rounded to this many decimals: below it is floating-point residue, not data.
DECIMALS = 9


def slope(n: np.ndarray, cycles: np.ndarray) -> float:
    """Least-squares slope of cycles over n."""
    n = np.asarray(n, dtype=float)
    cycles = np.asarray(cycles, dtype=float)
    dn = n - n.mean()
    return round(float((dn * (cycles - cycles.mean())).sum() / (dn * dn).sum()), DECIMALS)


def floor_slope(group: pd.DataFrame) -> float:
    """The per-call cost: the least-squares slope through the fastest sample at each N.

    A sample can only be slowed down by what else the machine does (another tenant, an
    interrupt, a sibling thread), never sped up, so the fastest repetition is the one
    closest to the code's own cost. Under TCG -icount all repetitions are equal and this
    is the plain least-squares slope."""
    floor = group.groupby("n").cycles.min()
    return slope(floor.index.to_numpy(), floor.to_numpy())


def bootstrap_slopes(group: pd.DataFrame, rng: np.random.Generator, b: int = BOOTSTRAP) -> np.ndarray:
    """`floor_slope` of `b` resamples: at each N, the repetitions are drawn with replacement."""
    ns, floors = [], []
    for n, g in group.groupby("n"):
        values = g.cycles.to_numpy(dtype=float)
        idx = rng.integers(0, len(values), size=(b, len(values)))
        ns.append(float(n))
        floors.append(values[idx].min(axis=1))
    x = np.array(ns)
    y = np.stack(floors, axis=1)
    dx = x - x.mean()
    slopes = (dx * (y - y.mean(axis=1, keepdims=True))).sum(axis=1) / (dx * dx).sum()
    return np.round(slopes, DECIMALS)


def quantization_bound(ns, tick: int) -> float:
    """How far a slope over `ns` can be from the true one when each sample may be off by
    up to one counter tick of `tick` instructions (a difference of two truncated reads)."""
    n = np.array(sorted(set(ns)), dtype=float)
    dn = n - n.mean()
    return float(tick * np.abs(dn).sum() / (dn * dn).sum())


def snap(slopes, tick: int, bound: float):
    """With a counter coarser than one instruction (tick > 1), a slope within `bound` of an
    integer is that integer: under -icount the true count per call is one, and `bound`
    (far below 0.5) rules out every other. A slope farther off stays as it is, so that
    the codegen check, which wants an integer, fails on it."""
    if tick == 1:
        return slopes
    nearest = np.round(slopes)
    return np.where(np.abs(np.asarray(slopes) - nearest) <= bound, nearest, slopes)


def panels(summary: pd.DataFrame) -> list[tuple[str, str]]:
    """The (arch, config) pairs of a summary, x86_64 first, in a stable order."""
    pairs = {(r.arch, r.config) for r in summary.itertuples()}
    return sorted(pairs, key=lambda p: (p[0] != "x86_64", p[0], p[1]))


def tukey_outliers(values) -> tuple[int, int]:
    """(mild, severe): beyond 1.5 and 3 IQR of the quartiles; severe ones are not mild."""
    v = np.asarray(values, dtype=float)
    q1, q3 = np.percentile(v, [25, 75])
    iqr = q3 - q1
    severe = (v < q1 - 3 * iqr) | (v > q3 + 3 * iqr)
    mild = ((v < q1 - 1.5 * iqr) | (v > q3 + 1.5 * iqr)) & ~severe
    return int(mild.sum()), int(severe.sum())


def first_rep_outlier(group: pd.DataFrame) -> bool:
    """True when, at some N, repetition 0 lies beyond the mild fence of that N's samples."""
    for _, g in group.groupby("n"):
        v = g.cycles.to_numpy(dtype=float)
        q1, q3 = np.percentile(v, [25, 75])
        iqr = q3 - q1
        first = g[g.rep == g.rep.min()].cycles.iloc[0]
        if first < q1 - 1.5 * iqr or first > q3 + 1.5 * iqr:
            return True
    return False


def interval(draws: np.ndarray) -> tuple[float, float]:
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return float(lo), float(hi)


def fmt(x) -> str:
    """Every number the report prints: an exact count as it is ("2"), anything else to two
    decimals ("0.70", "-0.00" for a small negative); "" for none."""
    return "" if x is None or pd.isna(x) else f"{x:g}" if float(x).is_integer() else f"{x:.2f}"


def number(x: float) -> str:
    """fmt without a sign on a zero: the verdict's "within noise (CI 0.00..0.03)"."""
    text = fmt(x)
    return "0.00" if text == "-0.00" else text


def measured(x: float) -> str:
    """A measured (not counted) value: always two decimals, never "-0.00"."""
    text = f"{x:.2f}"
    return "0.00" if text == "-0.00" else text


def quantity(x: float, unit: str) -> str:
    """ "1 instruction", "2 instructions", "0.70 TSC ticks"."""
    return f"{number(x)} {unit.rstrip('s') if x == 1 else unit}"


def guest(table: pd.DataFrame) -> pd.DataFrame:
    """The rows measured inside a guest (TCG or KVM), without the native ones."""
    return table[[not is_native(a) for a in table.accel]]


def native(table: pd.DataFrame) -> pd.DataFrame:
    return table[[is_native(a) for a in table.accel]]


def rows(table: pd.DataFrame, **equal) -> pd.DataFrame:
    """The rows whose columns equal the values given: rows(t, arch="arm64", state="disabled")."""
    mask = pd.Series(True, index=table.index)
    for column, value in equal.items():
        mask &= table[column] == value
    return table[mask]


def verdict(diff: float, lo: float, hi: float, noise: float, unit: str) -> str:
    """Compares a difference to C with its interval [lo, hi] and the noise threshold.

    'matches C' when the whole interval lies within +-noise; a cost when the whole
    interval lies beyond it on one side; 'within noise' when it straddles.
    """
    if -noise <= lo and hi <= noise:
        return "matches C"
    if lo > noise or hi < -noise:
        word = "more" if diff > 0 else "less"
        a, b = sorted((abs(lo), abs(hi)))
        ci = "" if lo == hi else f" (CI {a:.2f}..{b:.2f})"
        return f"costs {quantity(abs(diff), unit)} {word} per call{ci}"
    return f"within noise (CI {lo:.2f}..{hi:.2f})"


def baselines_of(variant: str) -> tuple[str, ...]:
    """The loops `variant` may be measured against, the list's first: the same loop without
    its site, or for runs that predate it the empty loop."""
    v = matrix.BY_NAME.get(variant)
    if v is None or v.baseline is None:
        return ()
    return (v.baseline,) + ((EARLIER_BASE[v.baseline],) if v.baseline in EARLIER_BASE else ())


def baseline_of(variant: str, present) -> str | None:
    """The loop `variant` is measured against, of those in `present`."""
    return next((name for name in baselines_of(variant) if name in present), None)


def noise_threshold(draws: dict, group: tuple, accel: str) -> float:
    """Per-call differences within +-this are noise. Native: the larger end of the 95%
    interval of the A/A difference (the reference against its twin, timed alike);
    guests: the constant of NOISE."""
    arch, config, _, state = group
    ref, twin = ((arch, config, accel, v, state) for v in (REFERENCE, AA_TWIN))
    if ref in draws and twin in draws:
        lo, hi = interval(np.round(draws[ref] - draws[twin], DECIMALS))
        return max(abs(lo), abs(hi))
    if state == "recording" and accel == "tcg":
        return RECORDING_NOISE
    return NOISE.get(accel, 0.5)


def summarize(samples: pd.DataFrame, seed: int = 1, units: dict | None = None) -> pd.DataFrame:
    """One row per (arch, config, accel, variant, state) with slopes, intervals and verdicts;
    the unit follows the accelerator (instructions under TCG -icount, cycles under KVM,
    TSC ticks or cycles natively: `units` overrides). A row that lacks what its verdict
    needs (two values of N above 0, two repetitions, its baseline loop, `c_trace`) says so
    in its verdict instead of carrying a number it cannot support."""
    rng = np.random.default_rng(seed)
    fit = samples[samples.n > 0]
    draws, rows = {}, []
    for key, g in fit.groupby(GROUP, sort=False):
        fits = g.n.nunique() >= 2
        spread = fits and g.rep.nunique() >= 2
        # in_instructions() records the counter's tick; samples of 1-instruction counters
        # (and of other callers) have none.
        tick = int(g.tick.max()) if "tick" in g else 1
        bound = quantization_bound(g.n, tick) if fits else 0.0
        if spread:
            draws[key] = snap(bootstrap_slopes(g, rng), tick, bound)
        lo, hi = interval(draws[key]) if spread else (np.nan, np.nan)
        mild, severe = tukey_outliers(per_call_samples(samples_of(samples, key)))
        per_call = float(snap(floor_slope(g), tick, bound)) if fits else np.nan
        rows.append(dict(zip(GROUP, key), per_call=per_call,
                         ci_lo=lo, ci_hi=hi, mild_outliers=mild, severe_outliers=severe,
                         first_rep_outlier=first_rep_outlier(g), reps=g.rep.nunique(),
                         ns=",".join(str(n) for n in sorted(g.n.unique()))))
    out = pd.DataFrame(rows)
    present = {}
    for key in draws:
        present.setdefault((key[0], key[1], key[2], key[4]), set()).add(key[3])
    noise = {g: noise_threshold(draws, g, g[2]) for g in present}
    columns = {c: [] for c in ("baseline", "net", "net_lo", "net_hi", "diff_c", "diff_lo",
                               "diff_hi", "verdict")}
    for _, r in out.iterrows():
        key = tuple(r[c] for c in GROUP)
        arch, cfg, accel, variant, state = key
        group = (arch, cfg, accel, state)
        mine = present.get(group, set())
        base_name = baseline_of(variant, mine)
        reference = matrix.reference_of(variant)
        c_base = baseline_of(reference, mine) if reference else None
        row = dict.fromkeys(columns, np.nan)
        row["baseline"] = base_name or ""
        if key not in draws:
            row["verdict"] = (f"no fit: needs two values of N above 0 (has N={r.ns})"
                              if pd.isna(r.per_call) else
                              "one repetition: no interval, no verdict")
        elif variant == AA_TWIN:
            row["verdict"] = f"A/A twin of {REFERENCE}"
        elif not baselines_of(variant):
            row["verdict"] = "baseline"
        elif base_name is None:
            row["verdict"] = (f"no baseline loop in this run ({' or '.join(baselines_of(variant))}"
                              " with two repetitions): no site cost")
        else:
            base = (arch, cfg, accel, base_name, state)
            net_draws = np.round(draws[key] - draws[base], DECIMALS)
            row["net"] = round(r.per_call - out_value(out, base), DECIMALS)
            row["net_lo"], row["net_hi"] = interval(net_draws)
            ref = (arch, cfg, accel, reference, state)
            if ref not in draws or c_base is None:
                row["verdict"] = (f"no {reference} and its baseline in this run: "
                                  "no comparison with C")
            else:
                ref_base = (arch, cfg, accel, c_base, state)
                ref_net = out_value(out, ref) - out_value(out, ref_base)
                diff_draws = np.round(net_draws - (draws[ref] - draws[ref_base]), DECIMALS)
                row["diff_lo"], row["diff_hi"] = interval(diff_draws)
                row["diff_c"] = round(row["net"] - ref_net, DECIMALS)
                row["verdict"] = ("reference" if variant == reference else
                                  verdict(row["diff_c"], row["diff_lo"], row["diff_hi"],
                                          noise[group], unit_of(accel, units)))
        for c in columns:
            columns[c].append(row[c])
    for c, values in columns.items():
        out[c] = values
    out["noise"] = [noise.get((r.arch, r.config, r.accel, r.state), np.nan)
                    for r in out.itertuples()]
    out["unit"] = [unit_of(a, units) for a in out.accel]
    return out


def out_value(table: pd.DataFrame, key) -> float:
    m = np.logical_and.reduce([table[c] == v for c, v in zip(GROUP, key)])
    return float(table[m].per_call.iloc[0])


def samples_of(samples: pd.DataFrame, key) -> pd.DataFrame:
    m = np.logical_and.reduce([samples[c] == v for c, v in zip(GROUP, key)])
    return samples[m]


def per_call_samples(group: pd.DataFrame) -> np.ndarray:
    """Each sample at the largest N as a per-call figure (for outliers and box plots)."""
    top = group[group.n == group.n.max()]
    return top.cycles.to_numpy(dtype=float) / max(int(group.n.max()), 1)
