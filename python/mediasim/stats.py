"""Small statistics helpers for replicated experiments."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd


def _t_quantile(p: float, df: int) -> float:
    """Student's t quantile: scipy.stats.t.ppf(p, df), which is this very
    function of scipy.special; importing scipy.stats for it took 0.37 s of
    every command that summarises replications (``campaign``, ``sweep``,
    the studies), scipy.special 0.09 s."""
    from scipy.special import stdtrit

    return float(stdtrit(df, p))


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval (low, high) of i.i.d.
    replication values; NaNs are ignored. With one value the interval is
    (mean, mean); with none, all NaN."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return (float("nan"),) * 3
    m = float(x.mean())
    if x.size == 1:
        return m, m, m
    half = float(_t_quantile(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return m, m - half, m + half


# Metric names of quantities that cannot be negative, by their unit.
NONNEGATIVE = re.compile(r"(_s|_ms|_us|_bps|_kbps|_pps|_pct|_bytes|_packets|_frames|_count|loss_rate|_rate|retx|"
                         r"retx_total|retransmissions|_sent|_received|_lost|_drops)$")


def summarize(
    df: pd.DataFrame,
    by: list[str],
    metrics: list[str],
    level: float = 0.95,
    bounds: dict[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """Per group of ``by``: n, and mean / ci_low / ci_high of each metric.
    ``bounds`` clips a metric's interval to its physical range (e.g. a loss
    rate to [0, 1]), since the t interval knows nothing of it. A metric
    whose name gives a unit of a quantity that cannot be negative (a time,
    a delay, a rate, a size, a count, a share: ``NONNEGATIVE``) is clipped
    at 0 unless ``bounds`` says otherwise."""
    bounds = {**{m: (0.0, math.inf) for m in metrics if NONNEGATIVE.search(m)}, **(bounds or {})}
    rows = []
    for key, g in df.groupby(by, sort=True, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["n"] = len(g)
        for m in metrics:
            mean, lo, hi = mean_ci(g[m].to_numpy(), level)
            if m in bounds:
                lo, hi = max(lo, bounds[m][0]), min(hi, bounds[m][1])
            row[f"{m}_mean"], row[f"{m}_ci_low"], row[f"{m}_ci_high"] = mean, lo, hi
        rows.append(row)
    return pd.DataFrame(rows)
