"""Sensitivity of the RMCAT study's headlines to the values the RFCs and
implementations leave open (docs/experiments/rmcat.md, "Sensitivity").

Each chosen value is set one at a time to a low and a high setting, every
other value at its default, on a reduced grid: cases 5.1, 5.4, 5.6, 5.7
and 5.8, the first one-way delay, drop-tail, every controller. Headlines,
each the mean over the controllers: 5.1's rate over the share and queuing
delay, 5.4's Jain index, 5.6's and 5.7's rates over the share against TCP,
5.6's freezes per flow, share of late frames and playout delay (the viewer's
side) and 5.8's largest queue after the resume. The yardstick is the
replications' own spread (one_at_a_time.py).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from . import one_at_a_time as oat
from . import rmcat

OPEN_VALUES: tuple[tuple[str, Any, Any], ...] = (
    ("feedback_interval_ms", 20.0, 100.0),
    ("case51_drop", 0.5, 0.6),
    ("queue_ms", 100.0, 1000.0),
    ("jitter_std_ms", 0.0, 15.0),
    ("tcp_cc", "reno", "cubic"),
    ("case56_queue_ms", 300.0, 1000.0),
    ("case57_file_kb", (30.0, 50.0), (100.0, 1000.0)),
    ("case57_schedule", "open", "closed"),
    ("scream_pacing_factor", 1.0, 1.5),
    ("nada_rampup_delay", "raw", "filtered"),
    ("gcc_loss_decrease_interval_ms", 0.0, 300.0),
    ("gcc_loss_increase", "draft", "libwebrtc"),
    ("gcc_probing", False, True),
    ("case58_resume", "restart", "hold"),
    ("decode", "independent", "reference"),
    ("nack", False, True),
    ("playout_estimator", "quantile", "webrtc"),
)
HEADLINES = ("c1_share", "c1_queuing_ms", "c4_jain", "c6_share", "c6_freezes", "c6_late_pct", "c6_playout_ms",
             "c7_share", "c8_resume_queue_ms")


def reduced(p: rmcat.Params) -> rmcat.Params:
    return dataclasses.replace(p, cases=(1, 4, 6, 7, 8), one_way_delays_ms=p.one_way_delays_ms[:1], aqm_variant=False)


def rows_of(part: dict[str, Any]) -> list[dict[str, Any]]:
    """One run's media sessions, each with its run's Jain index and 5.8's
    queue after the resume."""
    run = part["run"]
    return [{**r, "jain": run["jain"], "resume_queue_peak_ms": run["resume_queue_peak_ms"]} for r in part["flows"]]


def headline(rows: pd.DataFrame) -> dict[str, float]:
    """One replication's headlines (means over the controllers)."""
    f = rows.groupby(["case", "controller"])[["share_ratio", "queuing_mean_ms", "jain", "resume_queue_peak_ms",
                                              "freezes", "frames_late_pct", "playout_delay_ms"]].mean()
    return {"c1_share": f.loc[1]["share_ratio"].mean(), "c1_queuing_ms": f.loc[1]["queuing_mean_ms"].mean(),
            "c4_jain": f.loc[4]["jain"].mean(), "c6_share": f.loc[6]["share_ratio"].mean(),
            "c6_freezes": f.loc[6]["freezes"].mean(), "c6_late_pct": f.loc[6]["frames_late_pct"].mean(),
            "c6_playout_ms": f.loc[6]["playout_delay_ms"].mean(),
            "c7_share": f.loc[7]["share_ratio"].mean(), "c8_resume_queue_ms": f.loc[8]["resume_queue_peak_ms"].mean()}


def jobs(p: rmcat.Params) -> list[Any]:
    """Every run of the sensitivity settings, in the order ``run`` runs them."""
    return oat.set_jobs(oat.settings(reduced(p), OPEN_VALUES), rmcat.jobs)[0]


def run(p: rmcat.Params, workers: int | None = None, progress: bool = True, cache: Any = None) -> pd.DataFrame:
    """Per setting: each headline's mean and 95% half-width over replications."""
    return oat.run_sets(oat.settings(reduced(p), OPEN_VALUES), rmcat.jobs, rmcat.analyse, rows_of, headline,
                        HEADLINES, "rmcat sensitivity", workers, progress, cache)


def plot(d: pd.DataFrame, path: Path) -> None:
    oat.plot(d, HEADLINES, path)


def section(d: pd.DataFrame) -> list[str]:
    return oat.section(
        "Each chosen value set low and high in turn (everything else at its default) on cases 5.1, 5.4, 5.6, 5.7 "
        "and 5.8 (first one-way delay, drop-tail). Headlines, each the mean over the controllers: 5.1's rate over "
        "the share and mean queuing delay, 5.4's Jain index, 5.6's and 5.7's rates over the share beside TCP, "
        "5.6's freezes per flow, its share of late frames and its mean playout delay (capture to playout), "
        "5.8's largest queue in the 10 s after the resume; each with its 95% half-width over the replications. "
        "Plot: `sensitivity.png`.",
        d, HEADLINES)
