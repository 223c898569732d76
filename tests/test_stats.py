"""Confidence intervals for replicated runs."""

import math

import numpy as np
import pandas as pd
import pytest

from mediasim.stats import mean_ci, summarize


def test_t_interval_matches_hand_computation():
    x = [1.0, 2.0, 3.0, 4.0]
    m, lo, hi = mean_ci(x)
    # t(0.975, 3) = 3.182446; s = 1.290994; half = t * s / 2
    half = 3.182446305 * 1.2909944487 / 2
    assert m == 2.5 and math.isclose(hi - m, half, rel_tol=1e-6) and math.isclose(m - lo, half, rel_tol=1e-6)
    assert mean_ci([5.0]) == (5.0, 5.0, 5.0)
    assert all(math.isnan(v) for v in mean_ci([float("nan")]))


def test_summarize_groups_and_clips_to_bounds():
    df = pd.DataFrame({"k": ["a"] * 4 + ["b"] * 2, "loss": [0, 0, 0, 0.004, 0.5, 0.5]})
    s = summarize(df, ["k"], ["loss"], bounds={"loss": (0.0, 1.0)}).set_index("k")
    assert s.loc["a", "n"] == 4 and s.loc["a", "loss_ci_low"] == 0.0
    assert np.isclose(s.loc["a", "loss_mean"], 0.001)
    assert s.loc["b", "loss_ci_low"] == s.loc["b", "loss_ci_high"] == 0.5


def test_missing_values_are_ignored_whatever_their_spelling():
    m, lo, hi = mean_ci([1.0, None, 3.0, float("nan")])
    assert m == 2.0 and lo < 2.0 < hi
    # Two values: t(0.975, 1) = 12.7062; s = sqrt(2); half = t * s / sqrt(2).
    assert hi - m == pytest.approx(12.7062047, rel=1e-6)


def test_other_levels_and_groups_in_order():
    m, lo, hi = mean_ci([1.0, 2.0, 3.0, 4.0], level=0.9)
    # t(0.95, 3) = 2.353363
    assert hi - m == pytest.approx(2.353363435 * 1.2909944487 / 2, rel=1e-6)
    df = pd.DataFrame({"a": [2, 1, 2, 1], "b": ["x", "x", "y", "y"], "v": [1.0, 2.0, 3.0, 5.0]})
    s = summarize(df, ["a", "b"], ["v"])
    assert list(zip(s["a"], s["b"], s["n"])) == [(1, "x", 1), (1, "y", 1), (2, "x", 1), (2, "y", 1)]
    assert list(s.columns) == ["a", "b", "n", "v_mean", "v_ci_low", "v_ci_high"]
    assert list(s["v_mean"]) == [2.0, 5.0, 1.0, 3.0]


def test_t_quantile_is_scipy_stats_own_and_summaries_do_not_import_scipy_stats():
    """The quantile is scipy.stats.t.ppf to the last bit (the same function
    of scipy.special), without importing scipy.stats (0.37 s of every
    command that summarises replications)."""
    import subprocess
    import sys

    from scipy import stats

    from mediasim.stats import _t_quantile

    for df in [1, 2, 3, 5, 10, 29, 100, 10_000]:
        for level in (0.5, 0.9, 0.95, 0.99):
            assert _t_quantile(0.5 + level / 2, df) == stats.t.ppf(0.5 + level / 2, df)
    check = ("import sys; from mediasim.stats import summarize, mean_ci; mean_ci([1.0, 2.0]); "
             "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
