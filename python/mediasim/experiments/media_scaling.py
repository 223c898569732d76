"""Media scaling over UDP versus TCP (the media-scaling study,
shared/experiments/media-scaling.md).

Six FTP flows over TCP Reno, two MM_APP and two MPEG_APP media-scaling
flows over UDP share a 6 Mbit/s, 20 ms RED bottleneck. Five FTP, one MM and
one MPEG flow start at 0 s, the rest join at 15 s; the run lasts 25 s.
Compared: each flow's throughput over 5-15 s and 15-25 s next to the fair
share, the jitter of packet arrivals (TCP against MM_APP), and the media
flows' scale over time.

Values the study states are in the first block of ``Params``; values it
leaves open are chosen here, marked "chosen", and documented in
docs/experiments/media-scaling.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..outfolder import one_output
from ..media import scale_rates
from ..reporting.tables import md_table
from ..scenario import Scenario
from ..stats import summarize
from ..sweep import Job, run_many
from .media_scaling_shapes import shape_checks
from .params import StudyParams, parameters_section

NAME = "media-scaling"
HAS_SENSITIVITY = True
STATED_MPEG_KBPS = (352, 544, 736, 896, 1056)  # the study's own figures for scales 0-4


CASES: tuple[int, ...] = ()  # the study contract: no cases


@dataclass
class Params(StudyParams):
    study: ClassVar[str] = NAME
    count_fields: ClassVar[tuple[str, ...]] = ("ftp_flows", "mm_flows", "mpeg_flows", "late_ftp")
    fractions: ClassVar[tuple[str, ...]] = ("red_w_q", "red_max_p")
    positive: ClassVar[tuple[str, ...]] = ("packet_bytes", "tcp_max_window_packets", "red_max_th", "red_w_q",
                                           "red_max_p", "mpeg_frame_rate", "red_limit_packets",
                                           "red_mean_packet_bytes", "tcp_min_rto_ms", "tcp_initial_window",
                                           "timeout_factor", "feedback_bytes")

    # --- stated by the study ---
    bottleneck_rate_bps: float = 6e6
    bottleneck_delay_ms: float = 20.0
    access_rate_bps: float = 10e6
    access_delay_ms: float = 5.0
    ftp_flows: int = 6
    mm_flows: int = 2
    mpeg_flows: int = 2
    late_ftp: int = 1  # FTP flows that join at join_s (the rest start at 0)
    join_s: float = 15.0
    duration_s: float = 25.0
    windows_s: tuple[float, ...] = (5.0, 15.0, 25.0)  # throughput windows: 5-15 s and 15-25 s
    packet_bytes: int = 1500  # TCP and media packets on the wire
    tcp_max_window_packets: int = 20
    red_min_th: float = 5.0  # Floyd and Jacobson 1993: w_q 0.002, max_p 1/50, max_th = 3 min_th
    red_max_th: float = 15.0
    red_w_q: float = 0.002
    red_max_p: float = 1 / 50
    mpeg_gop: str = "IBBPBBPBB"
    mpeg_i_bytes: int = 11000
    mpeg_p_bytes: int = 8000
    mpeg_b_bytes: int = 2000
    mpeg_frame_rate: float = 30.0
    # --- chosen here (the study does not state them) ---
    red_limit_packets: int = 50  # chosen: ns-2's default queue limit
    red_mean_packet_bytes: int = 500  # chosen: ns-2's mean_pktsize_ default (idle decay only)
    start_spread_s: float = 1.0  # chosen: each flow starts uniformly within this of its group's time
    tcp_delayed_ack: bool = False  # chosen: ns-2's plain TCPSink (one ACK per segment)
    tcp_min_rto_ms: float = 200.0  # chosen: ns-2's minrto_
    tcp_initial_window: int = 2  # chosen: ns-2's windowInit_
    timeout_factor: float = 1.5  # chosen: receiver time-out in control RTTs
    holdoff: bool = True  # chosen: losses within a control RTT of a decrease do not halve again
    feedback_bytes: int = 40  # chosen: request packet on the wire
    jitter_window_s: tuple[float, float] = (10.0, 12.0)  # chosen: inter-arrival plot window
    replications: int = 20  # chosen
    seed: int = 1

    def quick(self) -> "Params":
        return dataclasses.replace(self, replications=3)


    def check_more(self) -> list[str]:
        problems = []
        if min(self.ftp_flows, self.mm_flows, self.mpeg_flows) < 1:
            problems.append("ftp_flows, mm_flows and mpeg_flows must be at least 1")
        if self.late_ftp > self.ftp_flows:
            problems.append("late_ftp must be 0..ftp_flows")
        if not 0 < self.join_s < self.duration_s:
            problems.append("join_s must be inside the run")
        w = self.windows_s
        if len(w) < 2 or any(b <= a for a, b in zip(w, w[1:])) or w[-1] > self.duration_s:
            problems.append("windows_s must be increasing times within the run")
        if self.jitter_window_s[1] <= self.jitter_window_s[0]:
            problems.append("jitter_window_s must be (start, end) with start < end")
        if self.join_s + self.start_spread_s >= self.duration_s:
            problems.append("start_spread_s must end before the run does")
        # The engine's own bounds, said here in the study's terms (a TCP
        # segment is packet_bytes less 40 bytes of TCP/IP headers).
        if not 40 < self.packet_bytes <= 65535:
            problems.append(f"packet_bytes must be 41..65535, above the 40 bytes of TCP/IP headers (got "
                            f"{self.packet_bytes})")
        if self.tcp_min_rto_ms > 60_000:  # the engine's maximum RTO, RFC 6298 (2.5)
            problems.append(f"tcp_min_rto_ms must be at most 60000, TCP's maximum RTO (got {self.tcp_min_rto_ms:g})")
        if self.red_max_th <= self.red_min_th:
            problems.append(f"red_max_th must be above red_min_th ({self.red_min_th:g}; got {self.red_max_th:g})")
        if self.timeout_factor < 1:
            problems.append(f"timeout_factor must be at least 1 control RTT (got {self.timeout_factor:g})")
        if self.feedback_bytes < 28:
            problems.append(f"feedback_bytes must be at least 28, a UDP/IP packet (got {self.feedback_bytes})")
        if not self.mpeg_gop.startswith("I") or set(self.mpeg_gop) - set("IPB"):  # the engine's rule for a gop
            problems.append(f"mpeg_gop must be I, P and B frames starting with I (got {self.mpeg_gop!r})")
        return problems

    def windows(self) -> list[tuple[float, float]]:
        return list(zip(self.windows_s, self.windows_s[1:]))

    def red(self) -> dict[str, Any]:
        return {"type": "red", "min_th": self.red_min_th, "max_th": self.red_max_th, "w_q": self.red_w_q,
                "max_p": self.red_max_p, "limit_packets": self.red_limit_packets,
                "mean_packet_bytes": self.red_mean_packet_bytes}

    def mpeg_fields(self) -> dict[str, Any]:
        return {"app": "mpeg", "gop": self.mpeg_gop, "frame_rate": self.mpeg_frame_rate,
                "frame_bytes": {"I": self.mpeg_i_bytes, "P": self.mpeg_p_bytes, "B": self.mpeg_b_bytes},
                "max_packet_bytes": self.packet_bytes}


def flows(p: Params) -> list[tuple[str, str, float]]:
    """(name, kind, group start) of every flow: the late ones last of each kind."""
    out = []
    for kind, n, late in (("ftp", p.ftp_flows, p.late_ftp), ("mm", p.mm_flows, p.mm_flows // 2),
                          ("mpeg", p.mpeg_flows, p.mpeg_flows // 2)):
        out += [(f"{kind}{i}", kind, p.join_s if i >= n - late else 0.0) for i in range(n)]
    return out


def fair_share_kbps(p: Params, t: float) -> float:
    active = sum(1 for _, _, start in flows(p) if start <= t)
    return p.bottleneck_rate_bps / active / 1e3


def scenario(p: Params) -> Scenario:
    sc = Scenario("media-scaling", duration_s=p.duration_s)
    sc.data["description"] = "Media scaling over UDP (MM_APP, MPEG_APP) against TCP Reno through RED"
    sc.node("n1").node("n2")
    sc.link("n1", "n2", name="bottleneck", rate_bps=p.bottleneck_rate_bps, delay_ms=p.bottleneck_delay_ms,
            ab={"queue": p.red()})
    common: dict[str, Any] = {"cc": {"type": "scale", "timeout_factor": p.timeout_factor, "holdoff": p.holdoff},
              "feedback_bytes": p.feedback_bytes}
    for name, kind, start in flows(p):
        sc.node(f"s_{name}").node(f"d_{name}")
        sc.link(f"s_{name}", "n1", rate_bps=p.access_rate_bps, delay_ms=p.access_delay_ms)
        sc.link("n2", f"d_{name}", rate_bps=p.access_rate_bps, delay_ms=p.access_delay_ms)
        timing: dict[str, Any] = {"src": f"s_{name}", "dst": f"d_{name}", "start_s": start,
                                  "start_jitter_s": p.start_spread_s}
        if kind == "ftp":
            sc.flow(name, "tcp", **timing, tcp={
                "flavor": "reno", "mss_bytes": p.packet_bytes - 40, "max_window_packets": p.tcp_max_window_packets,
                "delayed_ack": p.tcp_delayed_ack, "min_rto_ms": p.tcp_min_rto_ms,
                "initial_window": p.tcp_initial_window})
        elif kind == "mm":
            sc.flow(name, "media_scaling", **timing, app="mm", packet_bytes=p.packet_bytes, **common)
        else:
            sc.flow(name, "media_scaling", **timing, **p.mpeg_fields(), **common)
    sc.measure(queue_sample_ms=50, packets=True, series=True)  # per-packet delays, scale over time
    return sc


def window_throughput(res, p: Params) -> pd.DataFrame:
    """kbit/s of every flow's delivered packets (whole packets on the wire,
    k = 1000) in each window."""
    pk = res.packets
    rows = []
    for name, kind, start in flows(p):
        mine = pk[pk["flow"] == name]
        for a, b in p.windows():
            got = mine[(mine["recv_s"] >= a) & (mine["recv_s"] < b)]["size_bytes"].sum()
            rows.append({"flow": name, "kind": kind, "window": f"{a:g}-{b:g} s", "start_s": start,
                         "throughput_kbps": got * 8 / (b - a) / 1e3, "fair_share_kbps": fair_share_kbps(p, a)})
    return pd.DataFrame(rows)


def arrivals(res, name: str, a: float, b: float) -> np.ndarray:
    """Arrival times (s) of a flow's packets at its receiver in [a, b)."""
    t = np.sort(res.packets[res.packets["flow"] == name]["recv_s"].to_numpy())
    return t[(t >= a) & (t < b)]


def interarrivals(res, name: str, a: float, b: float) -> np.ndarray:
    """Times between consecutive arrivals of a flow's packets in [a, b), ms."""
    return np.diff(arrivals(res, name, a, b)) * 1e3


def mean_scale(series: pd.DataFrame, a: float, b: float) -> float:
    """Time-weighted mean of a step series over [a, b)."""
    t, v = series["time_s"].to_numpy(), series["value"].to_numpy()
    if len(t) == 0 or t[0] >= b:
        return float("nan")
    edges = np.clip(np.append(t, b), a, b)
    return float(np.sum(v * np.diff(edges)) / (b - a))


def analyse(res, job: Job) -> dict[str, Any]:
    p: Params = job.labels.pop("_params")
    tp = window_throughput(res, p)
    tp["replication"] = job.replication
    ser = res.media_scaling_series
    scales = []
    jitter = []
    for name, kind, start in flows(p):
        if kind != "ftp":
            s = ser[(ser["flow"] == name) & (ser["var"] == "scale")]
            for a, b in p.windows():
                scales.append({"flow": name, "kind": kind, "window": f"{a:g}-{b:g} s",
                               "replication": job.replication, "mean_scale": mean_scale(s, a, b)})
        if kind in ("ftp", "mm"):
            gaps = interarrivals(res, name, max(p.windows_s[0], start + p.start_spread_s), p.duration_s)
            jitter.append({"flow": name, "kind": kind, "replication": job.replication,
                           "interarrival_mean_ms": gaps.mean(), "interarrival_std_ms": gaps.std(),
                           "interarrival_cv": gaps.std() / gaps.mean(), "interarrival_max_ms": gaps.max()})
    out = {"throughput": tp, "scales": pd.DataFrame(scales), "jitter": pd.DataFrame(jitter)}
    if job.replication == 0:
        a, b = p.jitter_window_s
        out["series"] = {
            "arrivals": {n: arrivals(res, n, a, b) for n in ("ftp0", "mm0")},
            "scale": {n: ser[(ser["flow"] == n) & (ser["var"] == "scale")][["time_s", "value"]]
                      for n, k, _ in flows(p) if k != "ftp"},
            "red_avg": res.queue_samples[res.queue_samples["link_dir"] == "bottleneck:n1->n2"][
                ["time_s", "packets", "red_avg"]],
        }
    return out


def jobs(p: Params) -> list[Job]:
    data = scenario(p).to_dict()
    return [Job(data, seed=p.seed, replication=r, labels={"_params": p}) for r in range(p.replications)]


def study_jobs(p: Params, sensitivity: bool = False) -> list[Job]:
    """Every run ``reproduce(p, ..., sensitivity=sensitivity)`` makes, in
    its order (the ``StudyModule`` contract)."""
    from . import media_scaling_sensitivity as sens

    return jobs(p) + (sens.jobs(p) if sensitivity else [])


def aggregate(parts: list[dict[str, Any]]) -> dict[str, pd.DataFrame]:
    tp = pd.concat([x["throughput"] for x in parts], ignore_index=True)
    # Only flows under way in a window (a late flow has none before it joins).
    tp = tp[tp["start_s"] <= tp["window"].str.split("-").str[0].astype(float)]
    per_flow = summarize(tp, ["window", "flow", "kind"], ["throughput_kbps"])
    per_flow = per_flow.merge(tp.groupby(["window", "flow"])[["fair_share_kbps", "start_s"]].first().reset_index())
    per_flow["share_of_fair"] = per_flow["throughput_kbps_mean"] / per_flow["fair_share_kbps"]
    per_kind = summarize(tp, ["window", "kind"], ["throughput_kbps"])
    per_kind = per_kind.merge(tp.groupby("window")["fair_share_kbps"].first().reset_index())
    per_kind["share_of_fair"] = per_kind["throughput_kbps_mean"] / per_kind["fair_share_kbps"]
    order = lambda df: df.sort_values("window", key=lambda w: w.str.split("-").str[0].astype(float),  # noqa: E731
                                      kind="stable").reset_index(drop=True)
    per_flow, per_kind = order(per_flow), order(per_kind)
    scales = pd.concat([x["scales"] for x in parts])
    scales = order(summarize(scales[scales["mean_scale"].notna()], ["window", "flow", "kind"], ["mean_scale"]))
    jitter = summarize(pd.concat([x["jitter"] for x in parts]), ["kind"],
                       ["interarrival_mean_ms", "interarrival_std_ms", "interarrival_cv", "interarrival_max_ms"])
    return {"throughput": per_flow, "throughput_by_kind": per_kind, "scales": scales, "jitter": jitter}


def mpeg_rates_table(p: Params) -> pd.DataFrame:
    rows = scale_rates(**p.mpeg_fields())
    for r, stated in zip(rows, STATED_MPEG_KBPS):
        r["stated_kbps"] = stated
    return pd.DataFrame(rows)[["scale", "stated_kbps", "payload_kbps", "wire_kbps"]].round(1)


def plot_interarrivals(series: dict[str, np.ndarray], p: Params, path: Path) -> None:
    from ..reporting.plots import subplots

    fig, axes = subplots(2, 1, figsize=(7, 5), sharex=True)
    for ax, (name, t) in zip(axes, series.items()):
        ax.plot(t[1:], np.diff(t) * 1e3, ".", ms=3)
        ax.set_ylabel("inter-arrival (ms)")
        ax.set_title(f"{name}: time since the previous packet's arrival at the receiver")
    axes[-1].set_xlabel("arrival time (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_scales(series: dict[str, pd.DataFrame], p: Params, path: Path) -> None:
    from ..reporting.plots import subplots

    fig, ax = subplots(figsize=(7, 3.5))
    for name, s in series.items():
        t = np.append(s["time_s"].to_numpy(), p.duration_s)
        v = np.append(s["value"].to_numpy(), s["value"].to_numpy()[-1:])
        ax.step(t, v, where="post", label=name)
    ax.axvline(p.join_s, color="grey", ls=":", lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("scale")
    ax.set_yticks(range(5))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_throughput(tp: pd.DataFrame, path: Path) -> None:
    from ..reporting.plots import subplots

    windows = list(dict.fromkeys(tp["window"]))
    fig, axes = subplots(1, len(windows), figsize=(4 * len(windows), 3.5), sharey=True)
    for ax, w in zip(np.atleast_1d(axes), windows):
        d = tp[tp["window"] == w]
        err = [d["throughput_kbps_mean"] - d["throughput_kbps_ci_low"],
               d["throughput_kbps_ci_high"] - d["throughput_kbps_mean"]]
        ax.bar(d["flow"], d["throughput_kbps_mean"], yerr=err, capsize=2)
        ax.axhline(d["fair_share_kbps"].iloc[0], color="k", ls="--", lw=1, label="fair share")
        ax.set_title(w)
        ax.tick_params(axis="x", rotation=60, labelsize=7)
    np.atleast_1d(axes)[0].set_ylabel("throughput (kbit/s)")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


@one_output("study")
def reproduce(p: Params, out: Path, workers: int | None = None, progress: bool = True,
              sensitivity: bool = False, cache: Any = None, overwrite: bool = False) -> Path:
    """Runs the study and writes its tables, plots and report; with
    ``sensitivity``, also the one-at-a-time runs over the values the study
    leaves open (media_scaling_sensitivity.py) and their section."""
    p.check()
    parts = run_many(jobs(p), workers=workers, progress=progress, desc="media-scaling runs", analyse=analyse,
                     cache=cache)
    tables = aggregate(parts)
    tables["mpeg_rates"] = mpeg_rates_table(p)
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
        df.to_parquet(out / f"{name}.parquet", index=False)
    series = parts[0]["series"]
    plot_interarrivals(series["arrivals"], p, out / "interarrivals.png")
    plot_scales(series["scale"], p, out / "scales.png")
    plot_throughput(tables["throughput"], out / "throughput.png")
    extra: list[str] = []
    if sensitivity:
        from . import media_scaling_sensitivity as sens

        d = sens.run(p, workers=workers, progress=progress, cache=cache)
        d.to_csv(out / "sensitivity.csv", index=False)
        sens.plot(d, out / "sensitivity.png")
        extra = sens.section(d)
    return write_report(p, tables, out, extra)


def write_report(p: Params, tables: dict[str, pd.DataFrame], out: Path, extra: list[str] | None = None) -> Path:
    tp = tables["throughput"][["window", "flow", "kind", "n", "throughput_kbps_mean", "throughput_kbps_ci_low",
                               "throughput_kbps_ci_high", "fair_share_kbps", "share_of_fair"]]
    md = [
        "# Media scaling over UDP versus TCP",
        "",
        "Study: shared/experiments/media-scaling.md. Choices and their reasons: docs/experiments/media-scaling.md.",
        f"{p.replications} replications, seed {p.seed}, 95% Student-t confidence intervals. RED at n1: "
        f"min_th {p.red_min_th:g}, max_th {p.red_max_th:g} packets, w_q {p.red_w_q:g}, max_p {p.red_max_p:g} "
        "(Floyd and Jacobson 1993), "
        f"buffer {p.red_limit_packets} packets.",
        "",
        "## The study's expected shape",
        "",
        md_table(shape_checks(tables)),
        "",
        "## Throughput per flow (kbit/s, whole packets on the wire) and the fair share",
        "",
        md_table(tp, 3),
        "",
        "## Throughput per kind of flow (flows active in the window)",
        "",
        md_table(tables["throughput_by_kind"], 3),
        "",
        "## Inter-arrival times at the receivers (from 5 s, or once a late flow is under way)",
        "",
        md_table(tables["jitter"], 3),
        "",
        "## Mean scale of the media flows",
        "",
        md_table(tables["scales"], 3),
        "",
        "## MPEG_APP: each scale's rate for the study's trace",
        "",
        "The study's stated rates next to what its trace and policies give (payload) and what the simulation "
        "sends (payload plus 28 bytes of UDP/IP headers per packet after fragmentation to 1500 bytes). "
        "The simulation produces the `wire_kbps` column.",
        "",
        md_table(tables["mpeg_rates"], 6),
        "",
        "Plots: `throughput.png`, `interarrivals.png` (one FTP and one MM_APP flow), `scales.png`.",
        "",
        *(extra or []),
        *parameters_section(p),
    ]
    report = out / "report.md"
    report.write_text("\n".join(md))
    return report
