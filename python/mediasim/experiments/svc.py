"""Scalable video over DiffServ, TFRC against PPACC, and FEC at a lower
drop precedence (the SVC study, shared/experiments/svc-ppacc-tfrc.md).

Four SVC flows (AF11 base, AF12 enhancement) and two TCP flows (AF21)
share a 3 Mbit/s bottleneck: DRR between AF1 (2 Mbit/s reserved, WRED
with AF11 < AF12 < AF13 drop precedence) and AF2 (the rest, drop-tail).
The AF1 buffer is swept from 5 to 80 packets for TFRC and PPACC; then FEC
(Reed-Solomon at AF13) for a share of the video flows.

Values the study states are in the first block of ``Params``; values it
leaves open are chosen here, marked "chosen", and documented in
docs/experiments/svc.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..reporting.tables import md_table
from ..scenario import Scenario
from ..stats import summarize
from ..sweep import Job, run_many
from .params import StudyParams, parameters_section

NAME = "svc"
AF11, AF12, AF13, AF21 = 10, 12, 14, 18


@dataclass
class Params(StudyParams):
    study: ClassVar[str] = NAME

    # --- stated by the study ---
    bottleneck_rate_bps: float = 3e6
    access_rate_bps: float = 20e6
    video_flows: int = 4
    tcp_flows: int = 2
    af1_reserved_bps: float = 2e6
    buffers: tuple[int, ...] = (5, 20, 35, 50, 65, 80)  # AF1 buffer, packets
    transports: tuple[str, ...] = ("tfrc", "ppacc")
    packet_bytes: int = 1250  # "80 packets is about 400 ms" at 2 Mbit/s
    # --- chosen here (the study does not state them) ---
    bottleneck_delay_ms: float = 20.0  # chosen: RTT about 60 ms, shorter than a GOP (267 ms)
    access_delay_ms: float = 5.0  # chosen
    af2_buffer_packets: int = 50  # chosen
    wred_w_q: float = 0.02  # chosen: small buffers need a quick average
    # WRED thresholds as fractions of the AF1 buffer, and max_p: AF11, AF12, AF13.
    wred_profiles: tuple[tuple[float, float, float], ...] = ((0.6, 1.0, 0.05), (0.2, 0.6, 0.2), (0.05, 0.3, 0.5))
    tcp_mss_bytes: int = 1460  # chosen
    start_spread_s: float = 2.0  # chosen: flows start uniformly in [0, 2] s
    duration_s: float = 60.0  # chosen
    warmup_s: float = 10.0  # chosen
    playout_delay_ms: float = 1000.0  # chosen (delays reported over all arrivals)
    fec_k: int = 8  # chosen: RS(10, 8) at AF13
    fec_n: int = 10
    fec_shares: tuple[int, ...] = (0, 2, 4)  # video flows using FEC (TFRC)
    fec_buffers: tuple[int, ...] = (5, 20, 50, 80)
    replications: int = 3  # chosen
    seed: int = 1

    def quick(self) -> "Params":
        return dataclasses.replace(self, buffers=(5, 50), duration_s=30.0, replications=1, fec_shares=(0, 4),
                                   fec_buffers=(5, 50))

    def check_more(self) -> list[str]:
        problems = []
        if not self.buffers or min(self.buffers) < 2:
            problems.append("buffers must be at least 2 packets")
        if self.af1_reserved_bps >= self.bottleneck_rate_bps:
            problems.append("af1_reserved_bps must leave room for AF2")
        if not 0 <= self.warmup_s < self.duration_s:
            problems.append("warmup_s must be inside the run")
        if bad := [t for t in self.transports if t not in ("tfrc", "ppacc")]:
            problems.append(f"transports must be tfrc or ppacc (got {bad})")
        if len(self.wred_profiles) != 3 or any(not (0 <= lo < hi <= 1.0 and 0 < p <= 1)
                                               for lo, hi, p in self.wred_profiles):
            problems.append("wred_profiles: three (min, max, max_p) with 0 <= min < max <= 1, max_p in (0, 1]")
        if not self.fec_k < self.fec_n <= 255:
            problems.append("fec_k < fec_n <= 255")
        return problems


def af1_queue(p: Params, buffer: int) -> dict[str, Any]:
    profiles = [{"dscp": [d], "min_th": lo * buffer, "max_th": hi * buffer, "max_p": mp}
                for d, (lo, hi, mp) in zip((AF11, AF12, AF13), p.wred_profiles)]
    return {"type": "wred", "limit_packets": buffer, "w_q": p.wred_w_q, "mean_packet_bytes": p.packet_bytes,
            "profiles": profiles}


def scenario(p: Params, transport: str, buffer: int, fec_flows: int = 0) -> Scenario:
    sc = Scenario(f"svc-{transport}-{buffer}", duration_s=p.duration_s)
    sc.data["description"] = "SVC over DiffServ: TFRC or PPACC video with TCP, DRR between AF1 and AF2"
    sc.node("r1").node("r2")
    queue = {"type": "drr", "classes": [
        {"name": "af1", "dscp": [AF11, AF12, AF13], "rate_bps": p.af1_reserved_bps, "queue": af1_queue(p, buffer)},
        {"name": "af2", "rate_bps": p.bottleneck_rate_bps - p.af1_reserved_bps,
         "queue": {"type": "droptail", "limit_packets": p.af2_buffer_packets}}]}
    sc.link("r1", "r2", name="bottleneck", rate_bps=p.bottleneck_rate_bps, delay_ms=p.bottleneck_delay_ms,
            ab={"queue": queue})
    start = {"start_s": 0.0, "start_jitter_s": p.start_spread_s}
    for i in range(p.video_flows):
        sc.node(f"vs{i}").node(f"vd{i}")
        sc.link(f"vs{i}", "r1", rate_bps=p.access_rate_bps, delay_ms=p.access_delay_ms)
        sc.link("r2", f"vd{i}", rate_bps=p.access_rate_bps, delay_ms=p.access_delay_ms)
        extra: dict[str, Any] = {}
        if transport == "ppacc":
            extra["ppacc"] = {"capacity_bps": p.bottleneck_rate_bps}
        if i < fec_flows:
            extra["fec"] = {"code": "rs", "k": p.fec_k, "n": p.fec_n, "dscp": AF13}
        sc.flow(f"video{i}", "svc", src=f"vs{i}", dst=f"vd{i}", transport=transport, packet_bytes=p.packet_bytes,
                base_dscp=AF11, enhancement_dscp=AF12, playout_delay_ms=p.playout_delay_ms, **start, **extra)
    for i in range(p.tcp_flows):
        sc.node(f"ts{i}").node(f"td{i}")
        sc.link(f"ts{i}", "r1", rate_bps=p.access_rate_bps, delay_ms=p.access_delay_ms)
        sc.link("r2", f"td{i}", rate_bps=p.access_rate_bps, delay_ms=p.access_delay_ms)
        sc.flow(f"tcp{i}", "tcp", src=f"ts{i}", dst=f"td{i}", dscp=AF21, **start,
                tcp={"flavor": "sack", "mss_bytes": p.tcp_mss_bytes})
    sc.measure(windows_s=[[p.warmup_s, p.duration_s]])
    return sc


def analyse(res, job: Job) -> dict[str, Any]:
    p: Params = job.labels.pop("_params")
    cls = res.queue_classes[res.queue_classes["direction"] == "bottleneck:r1->r2"].set_index("class").loc["af1"]
    arrivals = [cls[f"wred_arrival_bytes_{i}"] for i in range(3)]
    drops = [cls[f"wred_drop_bytes_{i}"] for i in range(3)]
    ratio = lambda d, a: d / a if a > 0 else float("nan")  # noqa: E731
    span = p.duration_s - p.warmup_s
    tp = res.throughput.groupby("flow", observed=True)["bytes"].sum() * 8 / span
    videos = [f"video{i}" for i in range(p.video_flows)]
    pk = res.packets
    d = pk[pk["flow"].isin(videos) & (pk["recv_s"] >= p.warmup_s)]["delay_ms"].to_numpy()
    s = res.svc.set_index("flow")
    row = {**job.labels, "replication": job.replication,
           "byte_loss": ratio(drops[0] + drops[1], arrivals[0] + arrivals[1]),
           "byte_loss_af11": ratio(drops[0], arrivals[0]), "byte_loss_af12": ratio(drops[1], arrivals[1]),
           "video_kbps": float(tp[videos].mean() / 1e3),
           "tcp_kbps": float(tp[[f"tcp{i}" for i in range(p.tcp_flows)]].mean() / 1e3),
           "delay_p25_ms": float(np.percentile(d, 25)), "delay_p50_ms": float(np.percentile(d, 50)),
           "delay_p75_ms": float(np.percentile(d, 75)), "delay_p99_ms": float(np.percentile(d, 99)),
           "decodable_share": float(sum(s[f"decodable_bytes_{x}"].sum() for x in ("base", "s0_fgs", "s1", "s1_fgs"))
                                    / sum(s[f"offered_bytes_{x}"].sum() for x in ("base", "s0_fgs", "s1", "s1_fgs")))}
    fec = [f for f in videos if s.loc[f, "fec_repair_packets"] > 0]
    plain = [f for f in videos if f not in fec]
    resid = lambda fs: float(1 - (s.loc[fs, "media_packets_received"].sum() + s.loc[fs, "fec_recovered_packets"].sum())  # noqa: E731
                             / s.loc[fs, "media_packets"].sum()) if fs else float("nan")
    row.update({"residual_loss_fec_flows": resid(fec), "residual_loss_plain_flows": resid(plain)})
    return {"row": row, "delays": d if job.replication == 0 else None}


def jobs(p: Params) -> list[Job]:
    out = []
    for t in p.transports:
        for b in p.buffers:
            data = scenario(p, t, b).to_dict()
            out += [Job(data, seed=p.seed, replication=r, labels={"part": "transports", "transport": t, "buffer": b,
                                                                  "fec_flows": 0, "_params": p})
                    for r in range(p.replications)]
    for k in p.fec_shares:
        for b in p.fec_buffers:
            data = scenario(p, "tfrc", b, fec_flows=k).to_dict()
            out += [Job(data, seed=p.seed, replication=r, labels={"part": "fec", "transport": "tfrc", "buffer": b,
                                                                  "fec_flows": k, "_params": p})
                    for r in range(p.replications)]
    return out


METRICS = ["byte_loss", "byte_loss_af11", "byte_loss_af12", "video_kbps", "tcp_kbps", "delay_p50_ms",
           "delay_p99_ms", "decodable_share"]
FEC_METRICS = ["residual_loss_fec_flows", "residual_loss_plain_flows", "byte_loss", "video_kbps", "tcp_kbps",
               "decodable_share"]


def aggregate(rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    tr = rows[rows["part"] == "transports"]
    fec = rows[rows["part"] == "fec"]
    return {"transports": summarize(tr, ["transport", "buffer"], METRICS),
            "fec": summarize(fec, ["fec_flows", "buffer"], FEC_METRICS)}


def plot_losses(t: pd.DataFrame, path: Path) -> None:
    from ..reporting.plots import subplots

    fig, axes = subplots(1, 3, figsize=(12, 3.5), sharey=True)
    for ax, m, title in zip(axes, ("byte_loss", "byte_loss_af11", "byte_loss_af12"), ("all video", "AF11", "AF12")):
        for tp, g in t.groupby("transport"):
            ax.errorbar(g["buffer"], g[f"{m}_mean"], yerr=[g[f"{m}_mean"] - g[f"{m}_ci_low"],
                                                            g[f"{m}_ci_high"] - g[f"{m}_mean"]], marker="o", label=tp)
        ax.set_title(f"byte loss ratio, {title}")
        ax.set_xlabel("AF1 buffer (packets)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_delays(delays: dict[tuple[str, int], np.ndarray], path: Path) -> None:
    from ..reporting.plots import subplots

    keys = sorted(delays)
    fig, ax = subplots(figsize=(max(6, len(keys) * 0.6), 4))
    ax.boxplot([delays[k] for k in keys], whis=(1, 99), showfliers=False)
    ax.set_xticks(range(1, len(keys) + 1), [f"{t}\n{b}" for t, b in keys], fontsize=7)
    ax.set_ylabel("one-way delay (ms)")
    ax.set_title("video one-way delay per transport and AF1 buffer (whiskers: 1st and 99th percentiles)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def reproduce(p: Params, out: Path, workers: int | None = None, progress: bool = True) -> Path:
    p.check()
    out.mkdir(parents=True, exist_ok=True)
    parts = run_many(jobs(p), workers=workers, progress=progress, desc="svc runs", analyse=analyse)
    rows = pd.DataFrame([x["row"] for x in parts])
    rows.to_parquet(out / "replications.parquet", index=False)
    tables = aggregate(rows)
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
        df.to_parquet(out / f"{name}.parquet", index=False)
    delays = {(x["row"]["transport"], x["row"]["buffer"]): x["delays"] for x in parts
              if x["delays"] is not None and x["row"]["part"] == "transports"}
    plot_losses(tables["transports"], out / "losses.png")
    plot_delays(delays, out / "delays.png")
    return write_report(p, tables, out)


def write_report(p: Params, tables: dict[str, pd.DataFrame], out: Path) -> Path:
    t = tables["transports"]
    cols = ["transport", "buffer", "n"] + [f"{m}_mean" for m in METRICS]
    md = [
        "# Scalable video over DiffServ: TFRC against PPACC, and FEC",
        "",
        "Study: shared/experiments/svc-ppacc-tfrc.md. Choices: docs/experiments/svc.md.",
        f"{p.replications} replications per configuration, seed {p.seed}; 95% Student-t intervals in the CSV files.",
        "",
        "## TFRC and PPACC across AF1 buffer sizes",
        "",
        md_table(t[cols], 3),
        "",
        "Plots: `losses.png` (byte loss ratio, all video, AF11, AF12), `delays.png` (delay distributions).",
        "",
        "## FEC (RS at AF13) for a share of the video flows, TFRC",
        "",
        md_table(tables["fec"][["fec_flows", "buffer", "n"] + [f"{m}_mean" for m in FEC_METRICS]], 3),
        "",
        *parameters_section(p),
    ]
    report = out / "report.md"
    report.write_text("\n".join(md))
    return report
