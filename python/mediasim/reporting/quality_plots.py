"""Plots for voice-quality studies (quality levels, good quality)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .plots import subplots

LEVEL_COLOURS = ["#2b8a3e", "#8ce99a", "#ffd43b", "#ff922b", "#f03e3e", "#862e9c"]


def plot_level_bars(levels: pd.DataFrame, path: Path) -> None:
    """Stacked bars of level shares per (flows, IW), one panel per jitter buffer."""
    jbs = sorted(levels["jitter_buffer_ms"].unique())
    fig, axes = subplots(1, len(jbs), figsize=(3.2 * len(jbs), 4), sharey=True, squeeze=False)
    for ax, jb in zip(axes[0], jbs):
        d = levels[levels["jitter_buffer_ms"] == jb].pivot_table(index=["flows", "iw"], columns="level", values="share_mean")
        labels = [f"{f}f IW{iw}" for f, iw in d.index]
        bottom = None
        for lv in d.columns:
            ax.bar(labels, d[lv], bottom=bottom, color=LEVEL_COLOURS[int(lv)], label=f"level {lv}")
            bottom = d[lv] if bottom is None else bottom + d[lv]
        ax.set_title(f"jitter buffer {jb:g} ms")
        ax.tick_params(axis="x", rotation=60)
        ax.set_ylim(0.8, 1.0)
    axes[0][0].set_ylabel("share of voice packets (axis from 0.8)")
    axes[0][-1].legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_good_quality(summary: pd.DataFrame, path: Path) -> None:
    """Good-quality share versus jitter buffer, one line per (flows, IW)."""
    fig, ax = subplots(figsize=(6, 4))
    for (f, iw), g in summary.groupby(["flows", "iw"]):
        g = g.sort_values("jitter_buffer_ms")
        y = g["good_quality_mean"]
        err = [y - g["good_quality_ci_low"], g["good_quality_ci_high"] - y]
        ax.errorbar(g["jitter_buffer_ms"], y, yerr=err, marker="o" if iw <= 3 else "s", capsize=3,
                    linestyle="-" if iw <= 3 else "--", label=f"{f} flow(s), IW{iw}")
    ax.set_xlabel("jitter buffer (ms)")
    ax.set_ylabel("good quality (levels 0+1)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
