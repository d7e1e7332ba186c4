"""Statistics over a run's samples.csv: pure functions over pandas frames.

A sample is the TSC delta of one timed call of a loop of N iterations. The
per-call cost is the least-squares slope of cycles over N, so the constant
cost of the call and the timer drops out. N=0 is left out of the fit: there
the Rust loops return before setting up the loop, a different path.
"""

import numpy as np
import pandas as pd

GROUP = ["arch", "config", "accel", "variant", "state"]
UNITS = {"tcg": "instructions", "kvm": "cycles"}
EMPTY_OF = {"c": "c_empty", "rust": "rust_empty"}
REFERENCE = "c_trace"
BOOTSTRAP = 2000
# Under TCG with -icount every sample repeats exactly, so any difference is real;
# under KVM, differences within this many cycles per call are called noise.
NOISE = {"tcg": 0.0, "kvm": 0.5}
# Fits are rounded to this many decimals: below it is floating-point residue, not data.
DECIMALS = 9


def language(variant: str) -> str:
    return variant.split("_", 1)[0]


def slope(n: np.ndarray, cycles: np.ndarray) -> float:
    """Least-squares slope of cycles over n."""
    n = np.asarray(n, dtype=float)
    cycles = np.asarray(cycles, dtype=float)
    dn = n - n.mean()
    return round(float((dn * (cycles - cycles.mean())).sum() / (dn * dn).sum()), DECIMALS)


def bootstrap_slopes(group: pd.DataFrame, rng: np.random.Generator, b: int = BOOTSTRAP) -> np.ndarray:
    """Slopes of `b` resamples: at each N, the repetitions are drawn with replacement."""
    parts = [g.cycles.to_numpy(dtype=float) for _, g in group.groupby("n")]
    ns = [float(n) for n, _ in group.groupby("n")]
    draws_n, draws_c = [], []
    for n, values in zip(ns, parts):
        idx = rng.integers(0, len(values), size=(b, len(values)))
        draws_c.append(values[idx])
        draws_n.append(np.full((b, len(values)), n))
    x = np.concatenate(draws_n, axis=1)
    y = np.concatenate(draws_c, axis=1)
    dx = x - x.mean(axis=1, keepdims=True)
    slopes = (dx * (y - y.mean(axis=1, keepdims=True))).sum(axis=1) / (dx * dx).sum(axis=1)
    return np.round(slopes, DECIMALS)


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
        noun = unit.rstrip("s") if abs(diff) == 1 else unit
        return f"costs {abs(diff):g} {noun} {word} per call{ci}"
    return f"within noise (CI {lo:.2f}..{hi:.2f})"


def summarize(samples: pd.DataFrame, seed: int = 1) -> pd.DataFrame:
    """One row per (arch, config, accel, variant, state) with slopes, intervals and verdicts;
    the unit follows the accelerator (instructions under TCG -icount, cycles under KVM)."""
    rng = np.random.default_rng(seed)
    fit = samples[samples.n > 0]
    draws, rows = {}, []
    for key, g in fit.groupby(GROUP, sort=False):
        draws[key] = bootstrap_slopes(g, rng)
        mild, severe = tukey_outliers(per_call_samples(samples_of(samples, key)))
        rows.append(dict(zip(GROUP, key), per_call=slope(g.n, g.cycles),
                         ci_lo=interval(draws[key])[0], ci_hi=interval(draws[key])[1],
                         mild_outliers=mild, severe_outliers=severe,
                         first_rep_outlier=first_rep_outlier(g), reps=g.rep.nunique(),
                         ns=",".join(str(n) for n in sorted(g.n.unique()))))
    out = pd.DataFrame(rows)
    net, net_lo, net_hi, d, d_lo, d_hi, verdicts = [], [], [], [], [], [], []
    for _, r in out.iterrows():
        key = tuple(r[c] for c in GROUP)
        arch, cfg, accel, variant, state = key
        empty = (arch, cfg, accel, EMPTY_OF[language(variant)], state)
        ref, ref_empty = (arch, cfg, accel, REFERENCE, state), (arch, cfg, accel, "c_empty", state)
        net_draws = np.round(draws[key] - draws[empty], DECIMALS)
        net.append(round(r.per_call - out_value(out, empty), DECIMALS))
        net_lo.append(interval(net_draws)[0])
        net_hi.append(interval(net_draws)[1])
        if ref in draws and not variant.endswith("_empty"):
            ref_net = out_value(out, ref) - out_value(out, ref_empty)
            diff_draws = np.round(net_draws - (draws[ref] - draws[ref_empty]), DECIMALS)
            lo, hi = interval(diff_draws)
            diff = round(net[-1] - ref_net, DECIMALS)
            d.append(diff); d_lo.append(lo); d_hi.append(hi)
            verdicts.append("reference" if variant == REFERENCE else
                            verdict(diff, lo, hi, NOISE.get(accel, 0.5), UNITS.get(accel, "cycles")))
        else:
            d.append(np.nan); d_lo.append(np.nan); d_hi.append(np.nan)
            verdicts.append("baseline")
    out["net"], out["net_lo"], out["net_hi"] = net, net_lo, net_hi
    out["diff_c"], out["diff_lo"], out["diff_hi"], out["verdict"] = d, d_lo, d_hi, verdicts
    out["unit"] = [UNITS.get(a, "cycles") for a in out.accel]
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
