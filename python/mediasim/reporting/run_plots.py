"""Pictures of one run from its folder (``mediasim plot RUN``): per-flow
throughput and one-way delay over time (from the packets table), queue
lengths and sojourn times (queue_samples), TCP windows (tcp_series), and
for media senders their rates, pacer queue and frame sizes
(media_series, paced_series). Each panel needs its table; a run without
any of them gets an error saying what to turn on.

A flow has one colour in every panel. By default only the media and
data flows are drawn (user-named flows, RTP media ``s/n/rtp``, RMTP's
data, retransmissions and repairs), not the control flows the engine
derives (TCP ACKs ``x/ack``, RTCP ``s/n/rtcp``, feedback ``x/fb``,
RMTP's acknowledgements ``s/n/hack``): ``flows`` chooses (names, or
shell patterns such as ``"web*"``; ``["*"]`` for every flow)."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

NEEDS = ("no table to plot: run with --packets (throughput, delay), --series (TCP windows, media rates), "
         "measure.queue_sample_ms (queues) or a changing link (capacity), and --out")


#: The most throughput bins a plot makes: a picture of about a thousand
#: pixels' width shows no more, and the grid of bins is held in memory.
MAX_BINS = 100_000


def throughput_series(packets: pd.DataFrame, bin_s: float, end_s: float | None = None) -> pd.DataFrame:
    """Received bit/s per flow in bins of ``bin_s`` (time at the bin's
    start), every bin from 0 to ``end_s`` (default: to the bin of the last
    arrival), a bin without arrivals at 0. More than ``MAX_BINS`` bins is a
    ValueError saying the least bin that fits."""
    span_s = end_s if end_s is not None else (float(packets["recv_s"].max()) if len(packets) else 0.0)
    if span_s / bin_s > MAX_BINS:
        raise ValueError(f"a throughput bin of {bin_s:g} s makes {span_s / bin_s:.3g} bins over {span_s:g} s; "
                         f"at most {MAX_BINS:,} (bins of at least {span_s / MAX_BINS:.3g} s)")
    t = (packets["recv_s"] // bin_s) * bin_s
    bits = packets["size_bytes"].astype("int64") * 8
    sums = bits.groupby([packets["flow"].astype(str), t]).sum() / bin_s
    if end_s is not None:
        bins = int(np.ceil(end_s / bin_s - 1e-9)) if end_s > 0 else 0
    else:  # an arrival on a bin's start opens that bin
        bins = int(packets["recv_s"].max() // bin_s) + 1 if len(packets) else 0
    grid = np.arange(bins) * bin_s
    rows = []
    for flow, g in sums.groupby(level=0):
        s = g.droplevel(0).reindex(grid, fill_value=0.0) if len(grid) else g.droplevel(0)
        rows.append(pd.DataFrame({"flow": flow, "time_s": s.index.to_numpy(dtype=float),
                                  "throughput_bps": s.to_numpy(dtype=float)}))
    if not rows:
        return pd.DataFrame({"flow": pd.Series(dtype=str), "time_s": pd.Series(dtype=float),
                             "throughput_bps": pd.Series(dtype=float)})
    return pd.concat(rows, ignore_index=True)


#: The last part of the names of the control flows the engine derives
#: (users' flow names have no '/'): TCP's ACKs, RTCP, per-packet or
#: rate feedback, RMTP's acknowledgements.
CONTROL_FLOWS = ("ack", "rtcp", "fb", "hack")


def shown(flow: str, patterns: list[str] | None) -> bool:
    """Whether ``flow`` is drawn: by ``patterns`` if given, else if it is
    not a control flow (``CONTROL_FLOWS``)."""
    if patterns:
        return any(fnmatch.fnmatchcase(flow, p) for p in patterns)
    return "/" not in flow or flow.rsplit("/", 1)[1] not in CONTROL_FLOWS


Colour = tuple[float, float, float, float]  # RGBA, as matplotlib's colour maps give


def flow_colours(names: list[str]) -> dict[str, Colour]:
    """One colour per flow, the same in every panel (tab10, then tab20)."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {n: cmap(i % cmap.N) for i, n in enumerate(names)}


def panels(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    out = []
    c = tables.get("link_capacity")
    if c is not None and len(c):
        out.append("capacity")
    if len(tables.get("packets", [])):
        out += ["throughput", "delay"]
    q = tables.get("queue_samples")
    if q is not None and len(q) and q["packets"].max() > 0:
        out += ["queues", "sojourn"]
    s = tables.get("tcp_series")
    if s is not None and (s["var"] == "cwnd_bytes").any():
        out.append("cwnd")
    m = tables.get("media_series")
    p = tables.get("paced_series")
    if (m is not None and m["var"].isin(list(MEDIA_RATES)).any()) or (p is not None and len(p)):
        out.append("media_rate")
    for name, var in (("pacer", "pacer_queue_bytes"), ("frames", "frame_bytes")):
        if m is not None and (m["var"] == var).any():
            out.append(name)
    return out


class _Ctx:
    def __init__(self, tables, bin_s: float, end_s: float, flows: list[str] | None, colours: dict[str, Colour]):
        self.t, self.bin_s, self.end_s, self.flows, self.colours = tables, bin_s, end_s, flows, colours

    def colour(self, flow: str):
        return self.colours.get(flow)


#: chosen: the most entries a panel's legend lists; more run off the
#: panel (two columns of ten fill a panel's height at its font size).
MAX_LEGEND = 20


def legend(ax) -> None:
    """The panel's legend, of at most ``MAX_LEGEND`` entries: beyond that,
    the first ones and a last entry that counts the rest."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if len(handles) > MAX_LEGEND:
        from matplotlib.lines import Line2D

        rest = len(handles) - (MAX_LEGEND - 1)
        handles = handles[:MAX_LEGEND - 1] + [Line2D([], [], linestyle="none")]
        labels = labels[:MAX_LEGEND - 1] + [f"... and {rest} more"]
    ax.legend(handles, labels, fontsize=7, loc="upper right", ncol=2)


def plot_run(folder: str | Path, out: str | Path | None = None, bin_s: float = 1.0,
             flows: list[str] | None = None) -> Path:
    """Draws the panels a run folder's tables allow (``panels``), one under
    another over the run's time, into ``out`` (default: the folder's
    plots.png); ``flows`` are patterns of the flows to draw (default: all
    but the control flows). Returns the picture's path."""
    from matplotlib.figure import Figure

    from ..campaign.atomic import save_figure
    from ..results import Results

    res = Results.read_parquet(folder)
    names = panels(res.tables)
    if not names:
        raise ValueError(NEEDS)
    all_flows = list(res.meta["codes"]["flow"])  # every run's meta names its flows
    chosen = [f for f in all_flows if shown(f, flows)]
    if flows and not chosen:
        raise ValueError(f"no flow matches {', '.join(flows)} (the run's flows: {', '.join(all_flows)})")
    # Up to where the run ended: a run stopped early ends before its duration.
    ctx = _Ctx(res.tables, bin_s, res.meta["end_ns"] * 1e-9, flows, flow_colours(chosen))
    fig = Figure(figsize=(9, 2.6 * len(names)))
    axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        _PANELS[name](ax, ctx)
        ax.grid(alpha=0.3)
        legend(ax)
    axes[-1, 0].set_xlabel("simulated time (s)")
    axes[-1, 0].set_xlim(0, ctx.end_s)  # shared by every panel
    fig.suptitle(f"{res.meta.get('scenario')}: seed {res.meta.get('seed')}, replication {res.meta.get('replication')}")
    fig.tight_layout()
    path = Path(out) if out else Path(folder) / "plots.png"
    save_figure(fig, path, dpi=110)  # whole or not at all
    return path


def _capacity(ax, c: _Ctx):
    """Each sampled direction's capacity (dashed) and what it carried
    (solid), per sampling interval."""
    t = c.t["link_capacity"]
    for i, (ld, g) in enumerate(t.groupby(t["link_dir"].astype(str))):
        x = g["time_s"].to_numpy(dtype=float)
        colour = f"C{i % 10}"
        ax.step(x, g["capacity_bps"].to_numpy(dtype=float) / 1e6, where="pre", ls="--", color=colour,
                label=f"{ld} capacity")
        ax.step(x, g["carried_bps"].to_numpy(dtype=float) / 1e6, where="pre", color=colour, label=f"{ld} carried")
    ax.set_ylabel("link (Mbit/s)")
    ax.set_ylim(bottom=0)


def _throughput(ax, c: _Ctx):
    for flow, g in throughput_series(c.t["packets"], c.bin_s, c.end_s).groupby("flow"):
        if not shown(flow, c.flows):
            continue
        # Each bin drawn to its end: the last value repeated at the last bin's end.
        x = np.append(g["time_s"].to_numpy(), g["time_s"].iloc[-1] + c.bin_s)
        y = np.append(g["throughput_bps"].to_numpy(), g["throughput_bps"].iloc[-1]) / 1e3
        ax.step(x, y, where="post", label=flow, color=c.colour(flow))
    ax.set_ylabel(f"throughput (kbit/s, {c.bin_s:g} s bins)")
    ax.set_ylim(bottom=0)


def _delay(ax, c: _Ctx):
    p = c.t["packets"]
    for flow, g in p.groupby(p["flow"].astype(str)):
        if not shown(flow, c.flows):
            continue
        step = max(1, len(g) // 5000)  # at most ~5,000 points per flow
        ax.plot(g["recv_s"].to_numpy()[::step], g["delay_ms"].to_numpy()[::step], ".", ms=2, label=flow,
                color=c.colour(flow))
    ax.set_ylabel("one-way delay (ms)")
    ax.set_ylim(bottom=0)


def _busy_queues(q: pd.DataFrame):
    for ld, g in q.groupby(q["link_dir"].astype(str)):
        if g["packets"].max() > 0:
            yield ld, g


def _queues(ax, c: _Ctx):
    for ld, g in _busy_queues(c.t["queue_samples"]):
        ax.step(g["time_s"], g["packets"], where="post", label=ld)
    ax.set_ylabel("queue (packets)")
    ax.set_ylim(bottom=0)


def _sojourn(ax, c: _Ctx):
    """The time a packet arriving at the sample would wait: the queue's
    bytes at the link direction's rate."""
    links = c.t["links"]
    rate = dict(zip(links["direction"].astype(str), links["rate_bps"].astype(float)))
    for ld, g in _busy_queues(c.t["queue_samples"]):
        if rate.get(ld):
            ax.step(g["time_s"], g["bytes"].to_numpy(dtype=float) * 8 / rate[ld] * 1e3, where="post", label=ld)
    ax.set_ylabel("queue sojourn time (ms)")
    ax.set_ylim(bottom=0)


def _cwnd(ax, c: _Ctx):
    s = c.t["tcp_series"]
    w = s[s["var"] == "cwnd_bytes"]
    for flow, g in w.groupby(w["flow"].astype(str)):
        if not shown(flow, c.flows):
            continue
        ax.step(g["time_s"], np.asarray(g["value"]) / 1e3, where="post", label=flow, color=c.colour(flow))
    ax.set_ylabel("TCP cwnd (kB)")
    ax.set_ylim(bottom=0)


#: A media sender's rate series and how each is drawn: what it sends
#: (solid), the controller's target (dashed), the codec's rate (dotted).
MEDIA_RATES = {"send_bps": ("sent", "-"), "target_bps": ("target", "--"), "codec_bps": ("codec", ":")}


def _series_of(c: _Ctx, table: str, var: str, carry: bool = True):
    """(flow, times, values) of one variable of a series table, per
    drawn flow. With ``carry``, the last value is carried to the run's
    end: a rate or a queue holds until its next point (series are
    recorded on change)."""
    s = c.t.get(table)
    if s is None or not len(s):
        return
    s = s[s["var"] == var]
    for flow, g in s.groupby(s["flow"].astype(str)):
        if not shown(flow, c.flows):
            continue
        x = g["time_s"].to_numpy(dtype=float)
        y = g["value"].to_numpy(dtype=float)
        if carry and c.end_s > x[-1]:
            x, y = np.append(x, c.end_s), np.append(y, y[-1])
        yield flow, x, y


def _media_rate(ax, c: _Ctx):
    for var, (what, style) in MEDIA_RATES.items():
        for flow, x, y in _series_of(c, "media_series", var):
            ax.step(x, y / 1e3, where="post", ls=style, label=f"{flow} {what}", color=c.colour(flow))
    # A paced flow's controller (flows of type "paced").
    for flow, x, y in _series_of(c, "paced_series", "rate_bps"):
        ax.step(x, y / 1e3, where="post", ls="--", label=f"{flow} target", color=c.colour(flow))
    ax.set_ylabel("media rate (kbit/s)")
    ax.set_ylim(bottom=0)


def _pacer(ax, c: _Ctx):
    for flow, x, y in _series_of(c, "media_series", "pacer_queue_bytes"):
        ax.step(x, y / 1e3, where="post", label=flow, color=c.colour(flow))
    ax.set_ylabel("pacer queue (kB)")
    ax.set_ylim(bottom=0)


def _frames(ax, c: _Ctx):
    """Each frame's size at its capture."""
    for flow, x, y in _series_of(c, "media_series", "frame_bytes", carry=False):
        step = max(1, len(x) // 5000)  # at most ~5,000 points per flow
        ax.plot(x[::step], y[::step] / 1e3, ".", ms=2, label=flow, color=c.colour(flow))
    ax.set_ylabel("frame size (kB)")
    ax.set_ylim(bottom=0)


_PANELS = {"capacity": _capacity, "throughput": _throughput, "delay": _delay, "queues": _queues, "sojourn": _sojourn,
           "cwnd": _cwnd, "media_rate": _media_rate, "pacer": _pacer, "frames": _frames}
