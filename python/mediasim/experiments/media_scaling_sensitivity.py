"""Sensitivity of the media-scaling study's conclusions to the values it
leaves open (docs/experiments/media-scaling.md, "Sensitivity").

Each chosen value is set one at a time to a low and a high setting, every
other value at its default, and the whole study re-run. Headlines: each
kind of flow's throughput as a share of the fair share in 15-25 s (all ten
flows under way), and how many times MM_APP's inter-arrival variation
(coefficient of variation) TCP's is. The yardstick is the replications'
own spread: a change is beyond noise when it exceeds the 95% interval of a
difference of two means, sqrt(2) times the default's confidence half-width.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..sweep import run_many
from . import media_scaling as ms
from . import one_at_a_time as oat

OPEN_VALUES: tuple[tuple[str, Any, Any], ...] = (
    ("red_limit_packets", 25, 100),
    ("red_mean_packet_bytes", 500, 1500),
    ("start_spread_s", 0.0, 3.0),
    ("tcp_delayed_ack", False, True),
    ("tcp_min_rto_ms", 200.0, 1000.0),
    ("tcp_initial_window", 1, 4),
    ("timeout_factor", 1.0, 3.0),
    ("holdoff", False, True),
    ("feedback_bytes", 28, 200),
)
HEADLINES = ("ftp_share", "mm_share", "mpeg_share", "jitter_ratio")


def headline(part: dict[str, Any], p: ms.Params) -> dict[str, float]:
    """One replication's headlines."""
    tp = part["throughput"]
    last = f"{p.windows_s[-2]:g}-{p.windows_s[-1]:g} s"
    late = tp[tp["window"] == last]
    share = (late.groupby("kind")["throughput_kbps"].mean() / late["fair_share_kbps"].iloc[0])
    cv = part["jitter"].groupby("kind")["interarrival_cv"].mean()
    return {"ftp_share": share["ftp"], "mm_share": share["mm"], "mpeg_share": share["mpeg"],
        "jitter_ratio": cv["ftp"] / cv["mm"]}


def jobs(p: ms.Params) -> list[Any]:
    """Every run of the sensitivity settings, in the order ``run`` runs them."""
    return oat.set_jobs(oat.settings(p, OPEN_VALUES), ms.jobs)[0]


def run(p: ms.Params, workers: int | None = None, progress: bool = True, cache: Any = None) -> pd.DataFrame:
    """Per setting: each headline's mean and 95% half-width over replications."""
    sets = oat.settings(p, OPEN_VALUES)
    parts = run_many(jobs(p), workers=workers, progress=progress, desc="media-scaling sensitivity", analyse=ms.analyse,
                     cache=cache)
    per_rep, k = [], 0
    for _, _, q in sets:
        per_rep.append([headline(x, q) for x in parts[k:k + q.replications]])
        k += q.replications
    return oat.summarise(sets, per_rep, HEADLINES)


def plot(d: pd.DataFrame, path: Path) -> None:
    oat.plot(d, HEADLINES, path)


def section(d: pd.DataFrame) -> list[str]:
    return oat.section(
        "Each chosen value set low and high in turn (everything else at its default), the whole study re-run. "
        "Headlines: throughput as a share of the fair share in 15-25 s per kind of flow, and TCP's "
        "inter-arrival coefficient of variation over MM_APP's; each with its 95% half-width over the "
        "replications. Plot: `sensitivity.png`.",
        d, HEADLINES)
