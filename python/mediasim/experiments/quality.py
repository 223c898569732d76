"""Voice quality from per-packet delays: base delay, pure and delayed
loss, loss periods and the loss-period quality scale of the IW10 study.

Pure loss: the packet never arrived. Delayed loss: it arrived later than
base delay + jitter buffer, so the playout buffer discards it. A loss
period is a run of consecutive lost packets (pure or delayed); each packet
gets a level: 0 not lost; 1 single loss; 2 in a run of 2-3; 3 of 4-5;
4 of 6-9; 5 of 10 or more. "Good quality" = levels 0 and 1.
"""

from __future__ import annotations

import numpy as np

LEVELS = (0, 1, 2, 3, 4, 5)
# Upper bounds of run lengths for levels 1..4; longer runs are level 5.
_LEVEL_BOUNDS = ((1, 1), (2, 3), (3, 5), (4, 9))


def base_delay(sent_s: np.ndarray, delay_s: np.ndarray, start_s: float, end_s: float) -> float:
    """Minimum one-way delay of packets sent in [start_s, end_s) that
    arrived (delay not NaN). NaN if none."""
    m = (sent_s >= start_s) & (sent_s < end_s) & ~np.isnan(delay_s)
    return float(delay_s[m].min()) if m.any() else float("nan")


def run_lengths_to_levels(lost: np.ndarray) -> np.ndarray:
    """Per packet (in sequence order), its quality level given which
    packets are lost."""
    lost = np.asarray(lost, dtype=bool)
    levels = np.zeros(lost.size, dtype=np.int8)
    if not lost.any():
        return levels
    padded = np.concatenate([[False], lost, [False]]).astype(np.int8)
    edges = np.diff(padded)
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    for s, e in zip(starts, ends):
        n = e - s
        level = 5
        for lv, hi in _LEVEL_BOUNDS:
            if n <= hi:
                level = lv
                break
        levels[s:e] = level
    return levels


def classify(delay_s: np.ndarray, base_s: float, jitter_buffer_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(pure, delayed) loss masks for packets with one-way delays `delay_s`
    (NaN = never arrived)."""
    pure = np.isnan(delay_s)
    with np.errstate(invalid="ignore"):
        delayed = ~pure & (delay_s > base_s + jitter_buffer_s)
    return pure, delayed


def quality_metrics(delay_s: np.ndarray, base_s: float, jitter_buffer_s: float) -> dict[str, float]:
    """Level shares, good-quality share and loss rates of one observation
    period (packets in sequence order)."""
    n = delay_s.size
    pure, delayed = classify(delay_s, base_s, jitter_buffer_s)
    levels = run_lengths_to_levels(pure | delayed)
    out = {f"level_{lv}": float((levels == lv).sum() / n) if n else float("nan") for lv in LEVELS}
    out["good_quality"] = out["level_0"] + out["level_1"]
    out["pure_loss"] = float(pure.sum() / n) if n else float("nan")
    out["delayed_loss"] = float(delayed.sum() / n) if n else float("nan")
    out["loss"] = out["pure_loss"] + out["delayed_loss"]
    out["packets"] = float(n)
    return out
