"""The metrics the TCP cross-check compares (pure functions, tested
without the reference simulators): Jain's fairness index, the cwnd
sawtooth's period and peak, and the verdict against the references with
the documented tolerances."""

from __future__ import annotations

from typing import Any

import numpy as np

WARMUP_S = 10.0


def jain(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum())) if len(x) and (x**2).sum() > 0 else float("nan")


def sawtooth(t: np.ndarray, cwnd: np.ndarray, warmup_s: float = WARMUP_S) -> tuple[float, float, int]:
    """(mean period between window reductions, mean peak before them, count)
    from a cwnd series (packets) sampled on a regular grid. A reduction is a
    drop of more than a third from one sample to the next."""
    m = t >= warmup_s
    t, w = t[m], cwnd[m]
    drops = np.flatnonzero(w[1:] < w[:-1] * (2 / 3)) + 1
    if len(drops) < 2:
        return float("nan"), float(w.max()) if len(w) else float("nan"), len(drops)
    # merge reductions closer than 0.5 s (one recovery episode can cut twice)
    starts = [drops[0]]
    for d in drops[1:]:
        if t[d] - t[starts[-1]] > 0.5:
            starts.append(d)
    keep = np.array(starts)
    peaks = [w[a:b].max() for a, b in zip(np.r_[0, keep[:-1]], keep)]
    return float(np.diff(t[keep]).mean()) if len(keep) > 1 else float("nan"), float(np.mean(peaks)), len(keep)


TOLERANCE = {"utilization": ("abs", 0.02), "jain": ("abs", 0.05),
             "sawtooth_period_s": ("rel", 0.15), "sawtooth_peak_pkts": ("rel", 0.15)}


def verdict(m: dict[str, Any], refs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per metric: the closest reference's difference, and whether it is
    within tolerance of at least one reference."""
    row: dict[str, Any] = {"simulator": "verdict", "flows": m["flows"], "flavor": m["flavor"]}
    for k, (kind, tol) in TOLERANCE.items():
        diffs = []
        for r in refs:
            if kind == "abs":
                diffs.append(abs(m[k] - r[k]))
            else:
                diffs.append(abs(m[k] / r[k] - 1) if r[k] else float("inf"))
        best = min(diffs)
        row[k] = f"{'ok' if best <= tol else 'OFF'} ({best:.3g})"
    return row
