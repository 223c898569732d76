"""Plots for voice-quality studies (quality levels, good quality)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .plots import subplots

LEVEL_COLOURS = ["#2b8a3e", "#8ce99a", "#ffd43b", "#ff922b", "#f03e3e", "#862e9c"]


def _by_access(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    if "access" not in df.columns:
        return [("", df)]
    return [(str(a), g) for a, g in df.groupby("access", sort=False)]


def plot_level_bars(levels: pd.DataFrame, path: Path) -> None:
    """Stacked bars of level shares per (flows, IW), one panel per jitter
    buffer, one row per access (if the table has several)."""
    jbs = sorted(levels["jitter_buffer_ms"].unique())
    groups = _by_access(levels)
    fig, axes = subplots(len(groups), len(jbs), figsize=(3.2 * len(jbs), 4 * len(groups)), sharey=True, squeeze=False)
    for row, (access, lv_df) in zip(axes, groups):
        for ax, jb in zip(row, jbs):
            d = lv_df[lv_df["jitter_buffer_ms"] == jb].pivot_table(index=["flows", "iw"], columns="level",
                                                                    values="share_mean")
            labels = [f"{f}f IW{iw}" for f, iw in d.index]
            bottom = None
            for lv in d.columns:
                ax.bar(labels, d[lv], bottom=bottom, color=LEVEL_COLOURS[int(lv)], label=f"level {lv}")
                bottom = d[lv] if bottom is None else bottom + d[lv]
            ax.set_title(f"{access + ': ' if access else ''}jitter buffer {jb:g} ms", fontsize=9)
            ax.tick_params(axis="x", rotation=60)
            ax.set_ylim(0.8, 1.0)
        row[0].set_ylabel("share of voice packets (axis from 0.8)")
    axes[0][-1].legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_good_quality(summary: pd.DataFrame, path: Path) -> None:
    """Good-quality share versus jitter buffer, one line per (flows, IW),
    one panel per access (if the table has several)."""
    groups = _by_access(summary)
    fig, axes = subplots(1, len(groups), figsize=(6 * len(groups), 4), sharey=True, squeeze=False)
    for ax, (access, s) in zip(axes[0], groups):
        for (f, iw), g in s.groupby(["flows", "iw"]):
            g = g.sort_values("jitter_buffer_ms")
            y = g["good_quality_mean"]
            err = [y - g["good_quality_ci_low"], g["good_quality_ci_high"] - y]
            ax.errorbar(g["jitter_buffer_ms"], y, yerr=err, marker="o" if iw <= 3 else "s", capsize=3,
                        linestyle="-" if iw <= 3 else "--", label=f"{f} flow(s), IW{iw}")
        ax.set_xlabel("jitter buffer (ms)")
        if access:
            ax.set_title(f"{access} access")
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("good quality (levels 0+1)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_trace(ms: list[int], wired_bps: float, path: Path, bin_s: float = 0.5) -> None:
    """A trace's capacity over one pass (``bin_s`` bins) against the wired
    access's fixed rate."""
    import numpy as np

    counts = np.bincount((np.asarray(ms) - 1) // int(bin_s * 1000))
    t = np.arange(len(counts)) * bin_s
    fig, ax = subplots(figsize=(8, 3))
    ax.step(t, counts * 1504 * 8 / bin_s / 1e6, where="post", label="cellular downlink (trace)")
    ax.axhline(wired_bps / 1e6, color="k", ls="--", lw=1, label="wired downlink")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"capacity (Mbit/s, {bin_s:g} s bins)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
