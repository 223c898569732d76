"""Confidence intervals for replicated runs."""

import math

import numpy as np
import pandas as pd

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
