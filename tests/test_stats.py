"""Statistics on synthetic data with known answers."""

import numpy as np
import pandas as pd
import pytest

from analysis import stats


def frame(rows):
    return pd.DataFrame(rows, columns=["arch", "config", "accel", "variant", "state", "n", "rep",
                                       "cycles"])


def exact_run(costs, base=10, ns=(0, 1, 10, 100), reps=5, accel="tcg"):
    """Samples as icount gives them: cycles = base + cost * n, identical across reps."""
    rows = []
    for variant, cost in costs.items():
        for n in ns:
            for rep in range(reps):
                rows.append(("x86_64", "jump_label", accel, variant, "disabled", n, rep,
                             base + cost * n))
    return frame(rows)


def test_slope_is_exact_on_a_line():
    assert stats.slope([1, 10, 100], [17, 53, 413]) == pytest.approx(4.0)


def test_bootstrap_of_exact_data_has_zero_width():
    df = exact_run({"c_trace": 6})
    draws = stats.bootstrap_slopes(df[df.n > 0], np.random.default_rng(0), b=200)
    assert np.allclose(draws, 6.0)


def test_bootstrap_interval_covers_a_noisy_slope():
    rng = np.random.default_rng(3)
    rows = [("x86_64", "k", "kvm", "c_trace", "disabled", n, r, 100 + 5.0 * n + rng.normal(0, 20))
            for n in (10, 100, 1000) for r in range(31)]
    df = frame(rows)
    lo, hi = stats.interval(stats.bootstrap_slopes(df, np.random.default_rng(1)))
    assert lo < 5.0 < hi and hi - lo < 0.2


def test_summary_net_and_difference_to_c():
    df = exact_run({"c_empty": 4, "c_trace": 6, "rust_empty": 3, "rust_trace": 4,
                    "rust_helper": 9})
    t = stats.summarize(df).set_index("variant")
    assert t.loc["rust_trace", "per_call"] == pytest.approx(4)
    assert t.loc["rust_trace", "net"] == pytest.approx(1)        # 4 - rust_empty 3
    assert t.loc["c_trace", "net"] == pytest.approx(2)           # 6 - c_empty 4
    assert t.loc["rust_trace", "diff_c"] == pytest.approx(-1)
    assert t.loc["rust_trace", "verdict"] == "costs 1 instruction less per call"
    assert t.loc["rust_helper", "verdict"] == "costs 4 instructions more per call"
    assert t.loc["c_trace", "verdict"] == "reference"
    assert t.loc["c_empty", "verdict"] == "baseline"
    assert (t.mild_outliers == 0).all() and not t.first_rep_outlier.any()


@pytest.mark.parametrize("diff, lo, hi, noise, expected", [
    (0.0, 0.0, 0.0, 0.0, "matches C"),
    (1.0, 1.0, 1.0, 0.0, "costs 1 cycle more per call"),
    (-2.0, -2.0, -2.0, 0.0, "costs 2 cycles less per call"),
    (0.2, -0.4, 0.5, 0.5, "matches C"),                 # inside the threshold, edges included
    (0.7, 0.6, 0.8, 0.5, "costs 0.70 cycles more per call (CI 0.60..0.80)"),
    (-0.7, -0.8, -0.6, 0.5, "costs 0.70 cycles less per call (CI 0.60..0.80)"),
    (0.4, -0.2, 0.9, 0.5, "within noise (CI -0.20..0.90)"),
    (0.5, 0.5, 0.6, 0.5, "within noise (CI 0.50..0.60)"),   # lo on the edge: not beyond it
])
def test_verdict_edges(diff, lo, hi, noise, expected):
    assert stats.verdict(diff, lo, hi, noise, "cycles") == expected


def test_site_cost_is_measured_against_the_loop_without_the_site():
    """With c_base/rust_base in the run, the empty loops are no longer the baselines."""
    df = exact_run({"c_empty": 4, "rust_empty": 4, "c_base": 4, "rust_base": 3, "c_trace": 6,
                    "rust_trace": 4, "rust_helper": 7})
    t = stats.summarize(df).set_index("variant")
    assert t.loc["rust_trace", "baseline"] == "rust_base"
    assert t.loc["rust_trace", "net"] == 1 and t.loc["c_trace", "net"] == 2
    assert t.loc["rust_helper", "net"] == 4                      # against rust_base too
    assert t.loc["rust_trace", "verdict"] == "costs 1 instruction less per call"
    assert t.loc["rust_empty", "verdict"] == "baseline" and pd.isna(t.loc["rust_empty", "net"])


def test_per_call_cost_is_the_slope_of_the_fastest_samples():
    """A rep slowed by the machine moves the least-squares slope, not the floor's."""
    df = exact_run({"c_trace": 6}, ns=(1, 10, 100, 1000), reps=7)
    df.loc[(df.rep == 3) & (df.n == 1000), "cycles"] += 5000
    assert stats.floor_slope(df[df.n > 0]) == pytest.approx(6.0)
    assert stats.slope(df.n, df.cycles) > 6.5


def noisy_native(costs, spread, reps=31, seed=5):
    """Native-like samples: base + cost * n plus a non-negative delay per sample."""
    rng = np.random.default_rng(seed)
    rows = [("x86_64", "jump_label", "native", v, "disabled", n, r,
             200 + c * n + rng.exponential(spread))
            for v, c in costs.items() for n in (1, 10, 100, 1000, 10000) for r in range(reps)]
    return frame(rows)


def test_native_noise_threshold_comes_from_the_a_a_twin():
    quiet = stats.summarize(noisy_native({"c_base": 1, "c_trace": 2, stats.AA_TWIN: 2}, 5))
    loud = stats.summarize(noisy_native({"c_base": 1, "c_trace": 2, stats.AA_TWIN: 2}, 4000))
    assert 0 < quiet.noise.iloc[0] < loud.noise.iloc[0]
    twin = quiet.set_index("variant").loc[stats.AA_TWIN]
    assert twin.verdict == "A/A twin of c_trace" and twin.unit == "TSC ticks"


def test_native_difference_beyond_the_a_a_noise_is_real():
    t = stats.summarize(noisy_native({"c_base": 1, "rust_base": 1, "c_trace": 2,
                                      "rust_trace": 1, "rust_helper": 4,
                                      stats.AA_TWIN: 2}, 5)).set_index("variant")
    # Net of each language's base: C 1, Rust 0, helper 3; against C: -1 and +2.
    assert t.loc["rust_helper", "diff_c"] == pytest.approx(2, abs=0.05)
    assert t.loc["rust_helper", "verdict"].startswith("costs 2")
    assert "TSC ticks more per call" in t.loc["rust_helper", "verdict"]
    assert t.loc["rust_trace", "diff_c"] == pytest.approx(-1, abs=0.05)
    assert "less per call" in t.loc["rust_trace", "verdict"]


def test_tukey_outliers():
    values = [10] * 20 + [11, 12, 9, 10, 10, 10, 10, 10]
    assert stats.tukey_outliers(values) == (0, 3)         # IQR 0: any deviation is severe
    v = list(range(100, 120)) + [135, 160]                # q1 104.25, q3 115.75, IQR 11.5
    assert stats.tukey_outliers(v) == (1, 1)


def test_first_rep_outlier_is_flagged():
    df = exact_run({"c_trace": 6}, reps=8)
    df.loc[(df.rep == 0) & (df.n == 100), "cycles"] += 500
    assert stats.first_rep_outlier(df)
    assert not stats.first_rep_outlier(exact_run({"c_trace": 6}))


def test_one_repetition_has_no_interval_and_no_verdict():
    t = stats.summarize(exact_run({"c_base": 4, "c_trace": 6}, reps=1)).set_index("variant")
    assert t.loc["c_trace", "per_call"] == 6                     # the slope is still there
    assert pd.isna(t.loc["c_trace", "ci_lo"])                    # but no "exact" interval
    assert t.loc["c_trace", "verdict"] == "one repetition: no interval, no verdict"


def test_one_value_of_n_cannot_be_fitted():
    t = stats.summarize(exact_run({"c_base": 4, "c_trace": 6}, ns=(0, 100))).set_index("variant")
    assert pd.isna(t.loc["c_trace", "per_call"])
    assert t.loc["c_trace", "verdict"] == "no fit: needs two values of N above 0 (has N=100)"


def test_a_run_without_c_trace_says_so():
    t = stats.summarize(exact_run({"rust_base": 3, "rust_trace": 4})).set_index("variant")
    assert t.loc["rust_trace", "net"] == 1
    assert t.loc["rust_trace", "verdict"] == "no c_trace and its baseline in this run: no comparison with C"


def test_a_run_without_a_baseline_says_so():
    t = stats.summarize(exact_run({"c_trace": 6, "rust_trace": 4})).set_index("variant")
    assert t.loc["rust_trace", "verdict"].startswith("no baseline loop in this run (rust_base or rust_empty")
    assert pd.isna(t.loc["rust_trace", "net"])
    assert (t.verdict != "baseline").all()


def ticked_run(cost, tick=10, overhead=37, ns=(0, 1, 10, 100, 1000, 10000), reps=31):
    """Samples as loongarch64's stable counter gives them under -icount: truncated reads of
    a clock that ticks once per `tick` instructions, at whatever phase each sample starts,
    already multiplied by the tick (as load.in_instructions does)."""
    rng = np.random.default_rng(7)
    rows = []
    for n in ns:
        for rep in range(reps):
            start = int(rng.integers(0, 10 ** 6))
            ticks = (start + overhead + cost * n) // tick - start // tick
            rows.append(("loongarch64", "jump_label", "tcg", "c_trace", "disabled", n, rep,
                         ticks * tick))
    return frame(rows).assign(tick=tick)


def test_a_coarse_counter_gives_the_exact_count_it_identifies():
    bound = stats.quantization_bound((1, 10, 100, 1000, 10000), 10)
    assert 0 < bound < 0.01
    raw = stats.floor_slope(ticked_run(4))
    assert raw != 4 and abs(raw - 4) <= bound            # the fit alone is not exact
    row = stats.summarize(ticked_run(4)).iloc[0]
    assert row.per_call == 4 and row.ci_lo == row.ci_hi == 4


def test_a_slope_no_integer_explains_is_left_as_it_is():
    # Half an instruction per call cannot happen under -icount: it stays visible.
    row = stats.summarize(ticked_run(4.5)).iloc[0]
    assert abs(row.per_call - 4.5) < 0.01 and not float(row.per_call).is_integer()
