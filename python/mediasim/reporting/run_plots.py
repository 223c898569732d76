"""Pictures of one run from its folder (``mediasim plot RUN``): per-flow
throughput and one-way delay over time (from the packets table), queue
lengths (queue_samples) and TCP windows (tcp_series). Each panel needs
its table; a run without any of them gets an error saying what to turn
on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

NEEDS = ("no table to plot: run with --packets (throughput, delay), --series (TCP windows) "
         "or measure.queue_sample_ms (queues), and --out")


def throughput_series(packets: pd.DataFrame, bin_s: float) -> pd.DataFrame:
    """Received bit/s per flow in bins of ``bin_s`` (time at the bin's start)."""
    t = (packets["recv_s"] // bin_s) * bin_s
    bits = packets["size_bytes"].astype("int64") * 8
    out = bits.groupby([packets["flow"].astype(str), t]).sum() / bin_s
    return out.rename("throughput_bps").rename_axis(["flow", "time_s"]).reset_index()


def panels(tables: dict[str, pd.DataFrame]) -> list[str]:
    out = []
    if len(tables.get("packets", [])):
        out += ["throughput", "delay"]
    q = tables.get("queue_samples")
    if q is not None and len(q) and q["packets"].max() > 0:
        out.append("queues")
    s = tables.get("tcp_series")
    if s is not None and (s["var"] == "cwnd_bytes").any():
        out.append("cwnd")
    return out


def plot_run(folder: str | Path, out: str | Path | None = None, bin_s: float = 1.0) -> Path:
    from matplotlib.figure import Figure

    from ..results import Results

    res = Results.read_parquet(folder)
    names = panels(res.tables)
    if not names:
        raise ValueError(NEEDS)
    fig = Figure(figsize=(9, 2.6 * len(names)))
    axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        _PANELS[name](ax, res.tables, bin_s)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right", ncol=2)
    axes[-1, 0].set_xlabel("simulated time (s)")
    fig.suptitle(f"{res.meta.get('scenario')}: seed {res.meta.get('seed')}, replication {res.meta.get('replication')}")
    fig.tight_layout()
    path = Path(out) if out else Path(folder) / "plots.png"
    fig.savefig(path, dpi=110)
    return path


def _throughput(ax, t, bin_s):
    for flow, g in throughput_series(t["packets"], bin_s).groupby("flow"):
        ax.step(g["time_s"], g["throughput_bps"] / 1e3, where="post", label=flow)
    ax.set_ylabel(f"throughput (kbit/s, {bin_s:g} s bins)")


def _delay(ax, t, bin_s):
    p = t["packets"]
    for flow, g in p.groupby(p["flow"].astype(str)):
        step = max(1, len(g) // 5000)  # at most ~5,000 points per flow
        ax.plot(g["recv_s"].to_numpy()[::step], g["delay_ms"].to_numpy()[::step], ".", ms=2, label=flow)
    ax.set_ylabel("one-way delay (ms)")


def _queues(ax, t, bin_s):
    q = t["queue_samples"]
    for ld, g in q.groupby(q["link_dir"].astype(str)):
        if g["packets"].max() > 0:
            ax.step(g["time_s"], g["packets"], where="post", label=ld)
    ax.set_ylabel("queue (packets)")


def _cwnd(ax, t, bin_s):
    s = t["tcp_series"]
    c = s[s["var"] == "cwnd_bytes"]
    for flow, g in c.groupby(c["flow"].astype(str)):
        ax.step(g["time_s"], np.asarray(g["value"]) / 1e3, where="post", label=flow)
    ax.set_ylabel("TCP cwnd (kB)")


_PANELS = {"throughput": _throughput, "delay": _delay, "queues": _queues, "cwnd": _cwnd}
