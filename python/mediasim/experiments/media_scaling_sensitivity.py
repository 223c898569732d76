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

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from ..reporting.plots import subplots
from ..reporting.tables import md_table
from ..stats import mean_ci
from ..sweep import run_many
from . import media_scaling as ms

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


def settings(p: ms.Params) -> list[tuple[str, str, ms.Params]]:
    """(value, setting, params) of every run set: the default, then each
    open value low and high (skipping the default's own setting)."""
    out = [("default", "-", p)]
    for name, low, high in OPEN_VALUES:
        for label, v in (("low", low), ("high", high)):
            if v != getattr(p, name):
                out.append((name, f"{label}: {v}", dataclasses.replace(p, **{name: v})))
    return out


def run(p: ms.Params, workers: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Per setting: each headline's mean and 95% half-width over replications."""
    sets = settings(p)
    jobs = [j for _, _, q in sets for j in ms.jobs(q)]
    parts = run_many(jobs, workers=workers, progress=progress, desc="media-scaling sensitivity", analyse=ms.analyse)
    rows, k = [], 0
    for value, setting, q in sets:
        reps = pd.DataFrame([headline(x, q) for x in parts[k:k + q.replications]])
        k += q.replications
        row: dict[str, Any] = {"value": value, "setting": setting}
        for h in HEADLINES:
            m, lo, hi = mean_ci(reps[h].to_numpy())
            row[h], row[f"{h}_half"] = m, (hi - lo) / 2
        rows.append(row)
    return pd.DataFrame(rows)


def noise(d: pd.DataFrame) -> pd.Series:
    """Per headline: the change two means of this many replications show
    by chance (95%), sqrt(2) x the default's half-width."""
    base = d[d["value"] == "default"].iloc[0]
    return pd.Series({h: 2 ** 0.5 * base[f"{h}_half"] for h in HEADLINES})


def plot(d: pd.DataFrame, path: Path) -> None:
    base = d[d["value"] == "default"].iloc[0]
    rest = d[d["value"] != "default"]
    fig, axes = subplots(1, len(HEADLINES), figsize=(4 * len(HEADLINES), 0.35 * len(rest) + 1.5), sharey=True)
    labels = [f"{r.value} {r.setting}" for r in rest.itertuples()]
    for ax, h in zip(axes, HEADLINES):
        ax.barh(labels, rest[h] - base[h])
        ax.axvline(0, color="k", lw=0.8)
        n = noise(d)[h]
        ax.axvspan(-n, n, color="grey", alpha=0.2, label="noise (95%)")
        ax.set_title(f"{h} (default {base[h]:.3g})", fontsize=9)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def section(d: pd.DataFrame) -> list[str]:
    base = d[d["value"] == "default"].iloc[0]
    n = noise(d)
    moved = []
    for r in d[d["value"] != "default"].itertuples():
        big = [f"{h} {getattr(r, h) - base[h]:+.3g}" for h in HEADLINES if abs(getattr(r, h) - base[h]) > n[h]]
        moved.append({"value": r.value, "setting": r.setting, "beyond noise": ", ".join(big) or "-"})
    return [
        "## Sensitivity to the values the study leaves open",
        "",
        "Each chosen value set low and high in turn (everything else at its default), the whole study re-run. "
        "Headlines: throughput as a share of the fair share in 15-25 s per kind of flow, and TCP's "
        "inter-arrival coefficient of variation over MM_APP's; each with its 95% half-width over the "
        "replications. Plot: `sensitivity.png`.",
        "",
        md_table(d, 3),
        "",
        "Changes beyond noise (larger than sqrt(2) x the default's half-width: "
        + ", ".join(f"{h} {v:.3g}" for h, v in n.items()) + "):",
        "",
        md_table(pd.DataFrame(moved)),
        "",
    ]
