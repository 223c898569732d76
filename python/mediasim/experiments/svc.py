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

from ..outfolder import one_output
from ..scenario import Scenario
from ..media import fec_residual_loss
from ..sweep import Job, run_many
from .params import StudyParams

NAME = "svc"
AF11, AF12, AF13, AF21 = 10, 12, 14, 18


CASES: tuple[int, ...] = ()  # the study contract: no cases


@dataclass
class Params(StudyParams):
    study: ClassVar[str] = NAME
    count_fields: ClassVar[tuple[str, ...]] = ("video_flows", "tcp_flows")
    fractions: ClassVar[tuple[str, ...]] = ("wred_w_q", "ppacc_a_weight")
    positive: ClassVar[tuple[str, ...]] = ("packet_bytes", "af2_buffer_packets", "wred_w_q", "tcp_mss_bytes",
                                           "playout_delay_ms", "ppacc_a_weight", "ppacc_short_timer_ms",
                                           "ppacc_long_timer_max_gops", "ppacc_feedback_ms", "fec_k")
    may_be_empty: ClassVar[tuple[str, ...]] = ("fec_shares", "fec_buffers")  # no FEC runs

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
    tcp_flavor: str = "sack"  # chosen
    start_spread_s: float = 2.0  # chosen: flows start uniformly in [0, 2] s
    duration_s: float = 60.0  # chosen
    warmup_s: float = 10.0  # chosen
    # Video stops at duration_s and the run goes on this long, so what is in
    # flight arrives and the FEC counts are not cut at the end.
    drain_s: float = 3.0  # chosen
    playout_delay_ms: float = 1000.0  # chosen (delays reported over all arrivals)
    # The synthetic source (docs/models/svc.md): every layer's mean rate
    # times this scale, and the NAL-unit size variation.
    svc_layer_scale: float = 1.0  # chosen: 1.12 Mbit/s per flow at full quality
    svc_size_cv: float = 0.3  # chosen
    # PPACC's constants (docs/models/ppacc.md gives each one's reason).
    # Gentle steps, a smooth estimate and long quiet times after a congestion
    # event: PPACC finds the available bandwidth without probing into loss.
    ppacc_eps_bps: float = 5e3  # chosen: 1% of the 500 kbit/s share per GOP
    ppacc_kappa_bps: float = 30e3  # chosen: 6% of the share per GOP
    ppacc_a_weight: float = 1 / 32  # chosen: one pair sample is noisy behind DRR
    ppacc_short_timer_ms: float = 2000.0  # chosen: 7.5 GOPs
    ppacc_long_timer_max_gops: int = 16  # chosen: FLAT 1-16 GOPs
    ppacc_feedback_ms: float = 100.0  # chosen
    # The original's PPACC delay grows with the buffer "as it would if router
    # queueing were the only source of delay": packets leave as the media
    # makes them, pairs spaced. True: paced at the target through a send buffer.
    ppacc_shaping: bool = False
    # With shaping: pace at this times the target (1: at the target).
    ppacc_pacing_factor: float = 1.0  # chosen
    # Unshaped, no two packets leave closer than s / Cb (the study: the
    # first of a pair "must not leave too close to the previous packet");
    # False: back to back between pairs.
    ppacc_capacity_spacing: bool = True
    # Also run PPACC with the other shaping setting (transport "ppacc-shaped"
    # or "ppacc-unshaped") and check the expected shapes against it too.
    compare_shaping: bool = True
    fec_k: int = 8  # chosen: RS(10, 8) at AF13
    fec_n: int = 10
    fec_shares: tuple[int, ...] = (0, 1, 2, 4)  # video flows using FEC
    fec_buffers: tuple[int, ...] = (5, 20, 50, 80)
    fec_transport: str = "tfrc"  # chosen: FEC replaces what TFRC's probing loses
    replications: int = 10  # chosen
    seed: int = 1

    def quick(self) -> "Params":
        return dataclasses.replace(self, buffers=(5, 35, 80), duration_s=30.0, replications=1, fec_shares=(0, 2, 4),
                                   fec_buffers=(5, 50))

    def check_more(self) -> list[str]:
        problems = []
        if min(self.buffers) < 2:
            problems.append("buffers must be at least 2 packets")
        if self.fec_buffers and min(self.fec_buffers) < 2:
            problems.append("fec_buffers must be at least 2 packets")
        if self.packet_bytes < 41:  # IP, UDP and RTP headers and a byte of payload
            problems.append(f"packet_bytes must be at least 41 (got {self.packet_bytes})")
        if self.af1_reserved_bps >= self.bottleneck_rate_bps:
            problems.append("af1_reserved_bps must leave room for AF2")
        if self.warmup_s >= self.duration_s:
            problems.append("warmup_s must be inside the run")
        if self.start_spread_s >= self.duration_s:
            problems.append(f"start_spread_s must end before the video does at duration_s ({self.duration_s:g} s; "
                            f"got {self.start_spread_s:g})")
        if bad := [t for t in (*self.transports, self.fec_transport) if t not in ("tfrc", "ppacc")]:
            problems.append(f"transports and fec_transport must be tfrc or ppacc (got {bad})")
        if any(k > self.video_flows for k in self.fec_shares):
            problems.append(f"fec_shares must be 0..video_flows ({self.video_flows})")
        if self.tcp_flavor not in ("reno", "newreno", "sack"):
            problems.append(f"tcp_flavor must be reno, newreno or sack (got {self.tcp_flavor!r})")
        if not self.ppacc_pacing_factor >= 1:
            problems.append(f"ppacc_pacing_factor must be at least 1 (got {self.ppacc_pacing_factor})")
        most = 1e12 / max(max(row) for row in LAYER_BPS)  # the engine's bound on a rate (scenario/units.rs)
        if not 0 < self.svc_layer_scale <= most:
            problems.append(f"svc_layer_scale must be above 0 and at most {most:.10g}, which keeps every layer at most "
                            f"1e12 bit/s (got {self.svc_layer_scale:.10g})")
        if len(self.wred_profiles) != 3 or any(not (lo < hi <= 1.0 and 0 < p <= 1)
                                               for lo, hi, p in self.wred_profiles):
            problems.append("wred_profiles: three (min, max, max_p) with 0 <= min < max <= 1, max_p in (0, 1]")
        if not self.fec_k < self.fec_n <= 255:
            problems.append("fec_k < fec_n <= 255")
        return problems


# The synthetic source's mean layer rates (spatial x quality), bit/s, before
# svc_layer_scale: the engine's defaults (docs/models/svc.md).
LAYER_BPS = ((160e3, 160e3), (400e3, 400e3))


def ppacc_fields(p: Params) -> dict[str, Any]:
    return {"capacity_bps": p.bottleneck_rate_bps, "eps_bps": p.ppacc_eps_bps, "kappa_bps": p.ppacc_kappa_bps,
            "a_weight": p.ppacc_a_weight, "short_timer_ms": p.ppacc_short_timer_ms,
            "long_timer_max_gops": p.ppacc_long_timer_max_gops, "feedback_ms": p.ppacc_feedback_ms,
            "shaping": p.ppacc_shaping, "capacity_spacing": p.ppacc_capacity_spacing,
            **({"pacing_factor": p.ppacc_pacing_factor} if p.ppacc_shaping else {})}


def af1_queue(p: Params, buffer: int) -> dict[str, Any]:
    profiles = [{"dscp": [d], "min_th": lo * buffer, "max_th": hi * buffer, "max_p": mp}
                for d, (lo, hi, mp) in zip((AF11, AF12, AF13), p.wred_profiles)]
    return {"type": "wred", "limit_packets": buffer, "w_q": p.wred_w_q, "mean_packet_bytes": p.packet_bytes,
            "profiles": profiles}


def variant(p: Params) -> str:
    """The transport label of PPACC with the other shaping setting."""
    return "ppacc-unshaped" if p.ppacc_shaping else "ppacc-shaped"


def sweep_transports(p: Params) -> list[str]:
    """The transports of the buffer sweep, with the shaping variant."""
    extra = [variant(p)] if p.compare_shaping and "ppacc" in p.transports else []
    return [*p.transports, *extra]


def scenario(p: Params, transport: str, buffer: int, fec_flows: int = 0) -> Scenario:
    """One run; ``transport`` is tfrc, ppacc, or ppacc's shaping variant."""
    if transport == variant(p):
        p, transport = dataclasses.replace(p, ppacc_shaping=not p.ppacc_shaping), "ppacc"
    sc = Scenario(f"svc-{transport}-{buffer}", duration_s=p.duration_s + p.drain_s)
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
        cc: dict[str, Any] = {"type": transport, **(ppacc_fields(p) if transport == "ppacc" else {})}
        if i < fec_flows:
            extra["fec"] = {"code": "rs", "k": p.fec_k, "n": p.fec_n, "dscp": AF13}
        sc.flow(f"video{i}", "svc", src=f"vs{i}", dst=f"vd{i}", cc=cc, packet_bytes=p.packet_bytes,
                base_dscp=AF11, enhancement_dscp=AF12, playout_delay_ms=p.playout_delay_ms,
                layer_bps=[[x * p.svc_layer_scale for x in row] for row in LAYER_BPS], size_cv=p.svc_size_cv,
                stop_s=p.duration_s, **start, **extra)
    for i in range(p.tcp_flows):
        sc.node(f"ts{i}").node(f"td{i}")
        sc.link(f"ts{i}", "r1", rate_bps=p.access_rate_bps, delay_ms=p.access_delay_ms)
        sc.link("r2", f"td{i}", rate_bps=p.access_rate_bps, delay_ms=p.access_delay_ms)
        sc.flow(f"tcp{i}", "tcp", src=f"ts{i}", dst=f"td{i}", dscp=AF21, **start,
                tcp={"flavor": p.tcp_flavor, "mss_bytes": p.tcp_mss_bytes})
    sc.measure(windows_s=[[p.warmup_s, p.duration_s]], packets=True)  # delays per packet
    return sc


LAYERS = ("base", "s0_fgs", "s1", "s1_fgs")


def class_losses(res) -> dict[str, float]:
    """Byte loss ratios of the AF1 queue: AF11 and AF12 together, each, and
    AF13 (from the WRED class's per-profile counts)."""
    qc = res.columns("queue_classes")
    (row,) = np.flatnonzero((qc["direction"] == "bottleneck:r1->r2") & (qc["class"] == "af1"))
    arrivals = [float(qc[f"wred_arrival_bytes_{i}"][row]) for i in range(3)]
    drops = [float(qc[f"wred_drop_bytes_{i}"][row]) for i in range(3)]
    ratio = lambda d, a: d / a if a > 0 else float("nan")  # noqa: E731
    return {"byte_loss": ratio(drops[0] + drops[1], arrivals[0] + arrivals[1]),
            "byte_loss_af11": ratio(drops[0], arrivals[0]), "byte_loss_af12": ratio(drops[1], arrivals[1]),
            "byte_loss_af13": ratio(drops[2], arrivals[2])}


def fec_figures(s: dict[str, np.ndarray], flows: list[str], p: Params, tag: str) -> dict[str, float]:
    """Media loss before and after FEC decoding of ``flows`` (by the svc
    table's columns), the analytic residual for the measured loss rates,
    and goodput (decodable bytes per second per flow)."""
    nan = float("nan")
    if not flows:
        return {f"{m}_{tag}": nan for m in ("media_loss", "repair_loss", "residual_loss", "residual_model",
                                            "goodput_kbps")}
    rows = np.isin(s["flow"], flows)
    total = lambda c: s[c][rows].sum()  # noqa: E731
    sent, repairs = total("media_packets"), total("fec_repair_packets")
    p_m = 1 - total("media_packets_received") / sent
    p_r = 1 - total("fec_repair_received") / repairs if repairs > 0 else nan
    model = (fec_residual_loss("rs", p.fec_k, p.fec_n, min(max(p_m, 0.0), 1.0), min(max(p_r, 0.0), 1.0))
             if repairs > 0 else p_m)
    decodable = sum(total(f"decodable_bytes_{x}") for x in LAYERS)
    return {f"media_loss_{tag}": float(p_m), f"repair_loss_{tag}": float(p_r),
            f"residual_loss_{tag}": float(1 - total("media_packets_kept") / sent),
            f"residual_model_{tag}": float(model),
            f"goodput_kbps_{tag}": float(decodable * 8 / p.duration_s / len(flows) / 1e3)}


def _sum_by(keys: np.ndarray, values: np.ndarray) -> dict[str, float]:
    out: dict[str, float] = {}
    for k, v in zip(keys.tolist(), values.tolist()):
        out[k] = out.get(k, 0) + v
    return out


def analyse(res, job: Job) -> dict[str, Any]:
    """One run's row of figures, and its video packets' one-way delays
    after the warm-up (for the box plots). Small tables are read as numpy
    columns (their DataFrames and pandas look-ups cost more than half as
    much as the run); the packet log's filter stays categorical."""
    p: Params = job.labels.pop("_params")
    span = p.duration_s - p.warmup_s
    tp = res.columns("throughput")
    bps = {f: b * 8 / span for f, b in _sum_by(tp["flow"], tp["bytes"]).items()}
    videos = [f"video{i}" for i in range(p.video_flows)]
    pk = res.packets
    d = pk[pk["flow"].isin(videos) & (pk["recv_s"] >= p.warmup_s)]["delay_ms"].to_numpy()
    s = res.columns("svc")
    # No video delivered after the warm-up (an AF1 reservation too small to
    # carry any): no quantiles.
    q25, q50, q75, q99 = (float(x) for x in np.percentile(d, [25, 50, 75, 99])) if len(d) else [float("nan")] * 4
    row = {**job.labels, "replication": job.replication, **class_losses(res),
           "video_kbps": float(np.mean([bps[f] for f in videos]) / 1e3),
           "tcp_kbps": float(np.mean([bps[f"tcp{i}"] for i in range(p.tcp_flows)]) / 1e3),
           "delay_p25_ms": q25, "delay_p50_ms": q50, "delay_p75_ms": q75, "delay_p99_ms": q99,
           "decodable_share": float(sum(s[f"decodable_bytes_{x}"].sum() for x in LAYERS)
                                    / sum(s[f"offered_bytes_{x}"].sum() for x in LAYERS))}
    repairs = dict(zip(s["flow"].tolist(), s["fec_repair_packets"].tolist()))
    fec = [f for f in videos if repairs[f] > 0]
    row.update(fec_figures(s, fec, p, "fec_flows"))
    row.update(fec_figures(s, [f for f in videos if f not in fec], p, "plain_flows"))
    return {"row": row, "delays": d}


def jobs(p: Params) -> list[Job]:
    """The transport sweep, then the FEC comparison."""
    out = []
    for t in sweep_transports(p):
        for b in p.buffers:
            data = scenario(p, t, b).to_dict()
            out += [Job(data, seed=p.seed, replication=r, labels={"part": "transports", "transport": t, "buffer": b,
                                                                  "fec_flows": 0, "_params": p})
                    for r in range(p.replications)]
    for k in p.fec_shares:
        for b in p.fec_buffers:
            data = scenario(p, p.fec_transport, b, fec_flows=k).to_dict()
            out += [Job(data, seed=p.seed, replication=r, labels={"part": "fec", "transport": p.fec_transport,
                                                                  "buffer": b, "fec_flows": k, "_params": p})
                    for r in range(p.replications)]
    return out


def study_jobs(p: Params, sensitivity: bool = False) -> list[Job]:
    """Every run ``reproduce(p, ..., sensitivity=sensitivity)`` makes, in
    its order (the ``StudyModule`` contract)."""
    from . import svc_sensitivity

    return jobs(p) + (svc_sensitivity.jobs(p) if sensitivity else [])


def run(p: Params, workers: int | None = None, progress: bool = True, cache: Any = None) -> tuple[pd.DataFrame, dict]:
    """Every run's row, and the video delays pooled over replications per
    (transport, buffer) of the transport sweep."""
    p.check()
    parts = run_many(jobs(p), workers=workers, progress=progress, desc="svc runs", analyse=analyse, cache=cache)
    rows = pd.DataFrame([x["row"] for x in parts])
    delays: dict[tuple[str, int], list[np.ndarray]] = {}
    for x in parts:
        if x["row"]["part"] == "transports":
            delays.setdefault((x["row"]["transport"], x["row"]["buffer"]), []).append(x["delays"])
    return rows, {k: np.concatenate(v) for k, v in delays.items()}


HAS_SENSITIVITY = True


@one_output("study")
def reproduce(p: Params, out: Path, workers: int | None = None, progress: bool = True,
              sensitivity: bool = False, cache: Any = None, overwrite: bool = False) -> Path:
    """Runs the study into ``out`` and returns its report; with
    ``sensitivity``, also the one-at-a-time runs over the values the study
    leaves open (svc_sensitivity.py)."""
    from . import svc_report

    p.check()
    rows, delays = run(p, workers, progress, cache)
    sens = None
    if sensitivity:
        from . import svc_sensitivity

        sens = svc_sensitivity.run(p, workers=workers, progress=progress, cache=cache)
    return svc_report.write(p, rows, delays, out, sens)
