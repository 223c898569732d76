"""AVPF feedback timing study (shared/experiments/avpf-feedback.md).

Cases built: 1 (RTCP share, unicast, no loss), 2 (the same with byte
errors), 3 (RTCP share in multicast trees), 4 (unicast feedback: sent,
discarded, mean waiting time, AVP against AVPF), 5 and 6 (multicast feedback
in T-16 with shared or distributed losses; in 6 the lossy members also send
SRs), 7 (the k study, draft T_dither_max rule) and 8 (the l study, RFC
rule), 9 (NEWPRED error repair on a three-link chain, link 2 lossy) and 10
(the study's "simulation B": case 9 with link 2 loss-free but congested by
64 FTP/TCP flows, 32 from each side).

Values the study states are in the first block of ``Params``; the others
are chosen here, marked "chosen", and listed in docs/experiments/avpf.md.
"""

from __future__ import annotations

import math
import re

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..outfolder import one_output
from ..reporting.plots import subplots
from ..reporting.tables import md_table
from ..scenario import Scenario
from ..stats import summarize
from ..sweep import Job, run_many
from .avpf_shapes import shape_checks
from .params import StudyParams

NAME = "avpf"
CASES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
#: Case 9's FTP flows start uniformly over the run's first second.
NEWPRED_FTP_JITTER_S = 1.0
HAS_SENSITIVITY = True


@dataclass
class Params(StudyParams):
    study: ClassVar[str] = NAME
    count_fields: ClassVar[tuple[str, ...]] = ("ftp_flows_per_side",)
    fractions: ClassVar[tuple[str, ...]] = ("loss_rates", "byte_error_rate", "feedback_byte_error_rate",
                                            "newpred_loss_rates")
    positive: ClassVar[tuple[str, ...]] = ("max_feedback_delay_ms", "payload_2m", "payload_200k", "payload_20k",
                                           "congestion_factor", "congestion_buffer_packets", "case4_buffer_packets",
                                           "newpred_duration_s")

    # --- stated by the study ---
    session_bws_bps: tuple[float, ...] = (2e6, 200e3, 20e3)  # cases 1-2
    max_feedback_delay_ms: float = 1000.0
    loss_rates: tuple[float, ...] = (0.001, 0.01)  # case 4
    # --- chosen here (the study does not state them) ---
    replications: int = 5  # chosen
    duration_s: float = 300.0  # chosen: 60 regular AVP intervals
    unicast_link_bps: float = 100e6  # chosen: "well above the session rate"
    unicast_delay_ms: float = 10.0  # chosen
    payload_2m: int = 1000  # case 4 states 1000-byte media packets at 2 Mbit/s
    payload_200k: int = 500  # chosen: 200 kbit/s packet size is not stated
    payload_20k: int = 100  # case 4 states 100-byte media packets at 20 kbit/s
    byte_error_rate: float = 1e-5  # chosen: about 1% loss for a 1000-byte packet
    congestion_factor: float = 0.9  # chosen, case 3: the A1-A2 link at 90% of the session bandwidth
    congestion_buffer_packets: int = 20  # chosen, case 3
    # Case 4's congestion is moderate (the study: about as many media losses
    # as the 0.01 loss-rate case at 20 kbit/s). Chosen: a bottleneck at
    # 2x the session bandwidth, drop-tail 5 packets, shared with Poisson
    # cross traffic (media-size packets) that brings the mean offered load
    # to 89% of it. Cross traffic keeps the congestion the same for AVP and
    # AVPF members (their own RTCP is a small part of the load).
    case4_link_factor: float = 2.0  # chosen
    case4_load: float = 0.89  # chosen: about 1% media loss at 20 kbit/s (measured 1.0-1.1%)
    case4_buffer_packets: int = 5  # chosen
    core_bps: float = 10e6  # chosen (study's example): A1-A2/A3/A4
    core_delay_ms: float = 5.0
    mobile_bps: float = 2e6  # chosen: A5-A8 behind A2
    mobile_delay_ms: float = 100.0
    lowbw_bps: float = 256e3  # chosen: A9-A12 behind A3
    lowbw_delay_ms: float = 20.0
    fast_bps: float = 10e6  # chosen: A13-A16 behind A4
    fast_delay_ms: float = 10.0
    multicast_bws_bps: tuple[float, ...] = (20e3, 64e3)  # chosen: "low session bandwidths", case 3
    feedback_bw_bps: float = 200e3  # chosen: session bandwidth of cases 5-8
    feedback_byte_error_rate: float = 1e-5  # chosen: cases 5-8 (0.5% loss per 528-byte packet)
    k_values: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 3.0, 4.0)  # study
    newpred_delays_ms: tuple[float, ...] = (10.0, 50.0, 100.0, 200.0, 500.0)  # study
    newpred_loss_rates: tuple[float, ...] = (0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2)  # study
    # (bandwidth kbit/s, frames/s, segments/frame), study
    newpred_sessions: tuple[str, ...] = ("32:4:3", "32:5:3", "64:5:3", "64:10:3", "128:10:6", "128:15:6",
                                         "384:15:6", "384:30:6", "512:30:6", "1000:30:9", "2000:30:9")
    newpred_link_bps: float = 10e6  # chosen: all three links of case 9
    newpred_duration_s: float = 60.0  # chosen
    # T_dither_max in the two-member NEWPRED session: the study's agent used
    # the multiparty rule l * T_rr; the RFC's point-to-point rule (0) is run
    # beside it as a variant. Values: "multiparty", "zero".
    newpred_dithers: tuple[str, ...] = ("multiparty", "zero")  # study, RFC variant
    # T_dither_max in case 4's two-member session: RFC 4585's point-to-point
    # 0 (the study's waits of tens of milliseconds rule out dithering), or
    # "multiparty" (l * T_rr, as the NEWPRED agent).
    case4_dither: str = "zero"  # chosen
    ftp_flows_per_side: int = 32  # study (simulation B)
    seed: int = 1

    def stated_payloads(self) -> dict[float, int]:
        """The payload_* fields, by the session bandwidth they are for."""
        return {2e6: self.payload_2m, 200e3: self.payload_200k, 20e3: self.payload_20k}

    def payload(self, bw: float) -> int:
        return self.stated_payloads().get(bw, max(20, int(bw * 0.02 / 8)))  # chosen: 20 ms of media otherwise

    def quick(self) -> "Params":
        # Fewer replications, same length: shorter runs leave 16-member
        # sessions with too few reports per member for their share to settle.
        # Case 9's grid is thinned to three delays, two loss rates, three
        # sessions.
        return dataclasses.replace(self, replications=2, newpred_delays_ms=(10.0, 100.0, 500.0),
                                   newpred_loss_rates=(0.01, 0.1),
                                   newpred_sessions=("32:4:3", "128:10:6", "2000:30:9"))


    def check_more(self) -> list[str]:
        problems = []
        if self.duration_s <= 20:
            problems.append("duration_s must exceed 20 s (AVP needs several 5 s intervals)")
        if not 0 < self.case4_load < self.case4_link_factor:
            problems.append("case4_load must be in (0, case4_link_factor): the media alone is 1/case4_link_factor "
                            "of the bottleneck and the cross traffic adds the rest")
        elif self.case4_load * self.case4_link_factor <= 1.0:
            problems.append("case4_load * case4_link_factor must exceed 1 (room for cross traffic)")
        for name in ("payload_2m", "payload_200k", "payload_20k"):
            if (size := getattr(self, name)) > 65495:
                problems.append(f"{name} must be at most 65495, an RTP payload (got {size})")
        for bw, field in CASE4_SESSIONS:  # case 4's links and cross traffic within the engine's bounds
            rate, cross_bps = case4_rates(self, bw, getattr(self, field))
            pps = cross_bps / ((getattr(self, field) + 12) * 8)
            if rate > 1e12 or pps > 1e6:  # the engine's bounds on a rate and a packet rate (scenario/units.rs)
                problems.append(f"case4_link_factor: {self.case4_link_factor:.10g} makes case 4's {bw:g} bit/s "
                                f"bottleneck {rate:.4g} bit/s and its cross traffic {pps:,.0f} packets/s; the "
                                "engine takes at most 1e12 bit/s and 1e6 packets/s")
                break  # said once
        for name in ("session_bws_bps", "multicast_bws_bps"):  # their sessions' payloads, where not stated
            if big := [bw for bw in getattr(self, name)
                       if bw not in self.stated_payloads() and self.payload(bw) > 65495]:
                problems.append(f"{name}: {big[0]:.10g} bit/s makes 20 ms payloads of {self.payload(big[0]):,} "
                                "bytes, more than an RTP payload's 65495")
        if self.newpred_duration_s <= NEWPRED_FTP_JITTER_S:
            problems.append(f"newpred_duration_s must exceed the FTP flows' {NEWPRED_FTP_JITTER_S:g} s start spread "
                            f"(got {self.newpred_duration_s:g})")
        if (low := min(self.multicast_bws_bps) * self.congestion_factor) < 1:
            problems.append(f"congestion_factor times the least of multicast_bws_bps must be at least 1 bit/s, case "
                            f"3's congested link (got {low:g})")
        if bad := [s for s in self.newpred_sessions if not _session_reads(s)]:
            problems.append(f"newpred_sessions must be kbit/s:frames/s:segments/frame, each above 0 and segments "
                            f"whole (e.g. 32:4:3; got {bad})")
        if self.case4_dither not in ("multiparty", "zero"):
            problems.append(f"case4_dither must be \"multiparty\" or \"zero\" (got {self.case4_dither!r})")
        bad = [d for d in self.newpred_dithers if d not in ("multiparty", "zero")]
        if bad:
            problems.append(f"newpred_dithers must name \"multiparty\" and/or \"zero\" (got {list(self.newpred_dithers)})")
        return problems


def _session_reads(spec: str) -> bool:
    """A NEWPRED session as case 9 reads it: kbit/s:frames/s:segments,
    each above 0, the segments a whole number."""
    try:
        kb, fps, segs = (float(x) for x in spec.split(":"))
    except ValueError:  # not three numbers
        return False
    return all(math.isfinite(x) and x > 0 for x in (kb, fps, segs)) and segs.is_integer()


# ---------------------------------------------------------------- topologies

def t2(p: Params, bw: float, loss: dict | None = None, congested: bool = False) -> Scenario:
    sc = Scenario("t2", duration_s=p.duration_s)
    sc.node("A1").node("A2")
    rate = bw * p.congestion_factor if congested else p.unicast_link_bps
    link: dict[str, Any] = {}
    if congested:
        link["queue"] = {"type": "droptail", "limit_packets": p.congestion_buffer_packets}
    if loss:
        link["ab"] = {"loss": loss}
    sc.link("A1", "A2", rate_bps=rate, delay_ms=p.unicast_delay_ms, **link)
    return sc


#: Case 4's sessions: bandwidth (bit/s) and the field of its payload.
CASE4_SESSIONS = ((2e6, "payload_2m"), (20e3, "payload_20k"))


def case4_rates(p: Params, bw: float, payload: int) -> tuple[float, float]:
    """Case 4's bottleneck rate and its Poisson cross traffic's rate
    (bit/s of payload_bytes = payload + 12, as the flow is given): the
    bottleneck at case4_load less the media."""
    rate = bw * p.case4_link_factor
    wire = payload + 12 + 28  # RTP, UDP and IPv4 headers
    return rate, (p.case4_load * rate - bw) * (payload + 12) / wire


def t2_cross(p: Params, bw: float, payload: int) -> Scenario:
    """T-2 with case 4's moderate congestion: a bottleneck shared with
    Poisson cross traffic of media-size packets."""
    sc = Scenario("t2", duration_s=p.duration_s)
    sc.node("A1").node("A2")
    rate, cross_bps = case4_rates(p, bw, payload)
    sc.link("A1", "A2", rate_bps=rate, delay_ms=p.unicast_delay_ms,
            queue={"type": "droptail", "limit_packets": p.case4_buffer_packets})
    sc.flow("cross", "poisson", src="A1", dst="A2", payload_bytes=payload + 12, rate_bps=cross_bps)
    return sc


def tree(p: Params, size: int, loss_all: dict | None = None) -> Scenario:
    """T-4, T-8 or T-16 (every agent a host and a router)."""
    sc = Scenario(f"t{size}", duration_s=p.duration_s)
    for i in range(1, size + 1):
        sc.node(f"A{i}")
    extra: dict[str, Any] = {"loss": loss_all} if loss_all else {}
    core: dict[str, Any] = dict(rate_bps=p.core_bps, delay_ms=p.core_delay_ms, **extra)
    for i in (2, 3, 4):
        sc.link("A1", f"A{i}", **core)
    kinds = {"mobile": (p.mobile_bps, p.mobile_delay_ms), "lowbw": (p.lowbw_bps, p.lowbw_delay_ms),
             "fast": (p.fast_bps, p.fast_delay_ms)}
    if size == 8:
        attach = [("A2", "A5", "mobile"), ("A2", "A6", "mobile"), ("A3", "A7", "lowbw"), ("A4", "A8", "fast")]
    elif size == 16:
        attach = [("A2", f"A{i}", "mobile") for i in range(5, 9)] + [("A3", f"A{i}", "lowbw") for i in range(9, 13)] \
            + [("A4", f"A{i}", "fast") for i in range(13, 17)]
    else:
        attach = []
    for a, b, kind in attach:
        rate, delay = kinds[kind]
        sc.link(a, b, rate_bps=rate, delay_ms=delay, **extra)
    return sc


def session(sc: Scenario, bw: float, payload: int, members: list[dict], transport: str, p: Params) -> Scenario:
    sc.data["rtp_sessions"] = [{
        "name": "s", "transport": transport, "session_bw_bps": bw, "media_payload_bytes": payload,
        "avpf": {"max_feedback_delay_ms": p.max_feedback_delay_ms}, "members": members,
    }]
    return sc


# --------------------------------------------------------------------- cases

PROFILES = {"both AVPF": ("avpf", "avpf"), "A1 AVP, A2 AVPF": ("avp", "avpf"), "both AVP": ("avp", "avp")}


def case_1_2(p: Params, errors: bool) -> list[tuple[dict, Scenario]]:
    out = []
    for bw in p.session_bws_bps:
        for senders in ("A1", "A1+A2"):
            for label, (pa, pb) in PROFILES.items():
                loss = {"type": "byte_error", "rate": p.byte_error_rate} if errors else None
                sc = t2(p, bw, loss=loss)
                if errors:
                    sc.data["links"][0]["ba"] = {"loss": loss}
                members = [{"node": "A1", "profile": pa, "media": True},
                           {"node": "A2", "profile": pb, "media": senders == "A1+A2"}]
                out.append(({"case": 2 if errors else 1, "session_bw_bps": bw, "senders": senders, "profiles": label},
                            session(sc, bw, p.payload(bw), members, "unicast", p)))
    return out


def case_3(p: Params) -> list[tuple[dict, Scenario]]:
    out = []
    for size in (4, 8, 16):
        for cond in ("none", "byte errors", "congestion"):
            for bw in p.multicast_bws_bps:
                loss = {"type": "byte_error", "rate": p.byte_error_rate} if cond == "byte errors" else None
                sc = tree(p, size, loss_all=loss)
                if cond == "congestion":
                    # The A1-A2 link carries less than the two senders offer.
                    sc.data["links"][0].update({"rate_bps": bw * p.congestion_factor,
                                                "queue": {"type": "droptail", "limit_packets": p.congestion_buffer_packets}})
                members = [{"node": f"A{i}", "media": i in (1, 2)} for i in range(1, size + 1)]
                out.append(({"case": 3, "topology": f"T-{size}", "condition": cond, "session_bw_bps": bw},
                            session(sc, bw, p.payload(bw), members, "multicast", p)))
    return out


def case_4(p: Params) -> list[tuple[dict, Scenario]]:
    out = []
    for bw, payload in ((bw, getattr(p, field)) for bw, field in CASE4_SESSIONS):
        for loss_label in [*(f"plr {x:g}" for x in p.loss_rates), "congestion"]:
            for prof in ("avp", "avpf"):
                if loss_label == "congestion":
                    sc = t2_cross(p, bw, payload)
                else:
                    sc = t2(p, bw, loss={"type": "packet", "rate": float(loss_label.split()[1])})
                members: list[dict[str, Any]] = [{"node": "A1", "media": True, "profile": prof},
                                                 {"node": "A2", "profile": prof}]
                sc = session(sc, bw, payload, members, "unicast", p)
                sc.data["rtp_sessions"][0]["avpf"]["point_to_point_dither"] = p.case4_dither
                out.append(({"case": 4, "session_bw_bps": bw, "loss": loss_label, "profile": prof.upper()}, sc))
    return out


def case_5_6(p: Params, with_sr: bool) -> list[tuple[dict, Scenario]]:
    out = []
    lossy = {"shared": ["A2", "A5", "A6", "A7", "A8"], "distributed": ["A5", "A6", "A7", "A8"]}
    for kind in ("shared", "distributed"):
        sc = tree(p, 16)
        loss = {"type": "byte_error", "rate": p.feedback_byte_error_rate}
        for l in sc.data["links"]:
            if (kind == "shared" and (l["a"], l["b"]) == ("A1", "A2")) or (kind == "distributed" and l["a"] == "A2"):
                l["ab"] = {"loss": loss}
        members = [{"node": f"A{i}", "media": i == 1, "sender_reports": with_sr and f"A{i}" in lossy[kind]}
                   for i in range(1, 17)]
        session(sc, p.feedback_bw_bps, p.payload_200k, members, "multicast", p)
        # The draft's RTT rule (k = 1): members with an RTT estimate (the SR
        # senders of case 6) use k * RTT / 2 * members, the others l * T_rr,
        # which is the RFC rule; so case 5 is the RFC rule in effect.
        sc.data["rtp_sessions"][0]["avpf"].update({"dither": "rtt", "k": 1.0})
        out.append(({"case": 6 if with_sr else 5, "losses": kind}, sc))
    return out


# The k and l studies: who joins, who shares the losses (on A1-A2 only),
# and which member is nearer the source (An) or farther (Af).
SUPPRESSION_SCENARIOS: dict[int, dict[str, Any]] = {
    1: {"members": ["A1", "A2", "A5", "A3", "A9"], "an": "A2", "af": "A5", "sr": ["A2", "A5"]},
    # A2 does not join in scenarios 2 and 3: it only forwards.
    2: {"members": ["A1", "A5", "A6", "A3", "A9"], "an": "A5", "af": "A6", "sr": ["A5", "A6"]},
    3: {"members": ["A1", "A5", "A6", "A3", "A9"], "an": "A5", "af": "A6", "sr": ["A5", "A6"],
        "delays": {"A5": 20.0, "A6": 40.0}},
}


def case_7_8(p: Params, case: int) -> list[tuple[dict, Scenario]]:
    out = []
    for sid, spec in SUPPRESSION_SCENARIOS.items():
        for x in p.k_values:
            sc = tree(p, 16)
            for l in sc.data["links"]:
                if (l["a"], l["b"]) == ("A1", "A2"):
                    l["ab"] = {"loss": {"type": "byte_error", "rate": p.feedback_byte_error_rate}}
                if l["a"] == "A2" and l["b"] in spec.get("delays", {}):
                    l["delay_ms"] = spec["delays"][l["b"]]
            members = [{"node": m, "media": m == "A1", "sender_reports": case == 7 and m in spec["sr"]}
                       for m in spec["members"]]
            session(sc, p.feedback_bw_bps, p.payload_200k, members, "multicast", p)
            avpf = sc.data["rtp_sessions"][0]["avpf"]
            if case == 7:
                avpf.update({"dither": "rtt", "k": x})
            else:
                avpf.update({"dither": "rfc", "l": x})
            out.append(({"case": case, "scenario": sid, "k" if case == 7 else "l": x, "_an": spec["an"],
                         "_af": spec["af"]}, sc))
    return out


def newpred_chain(p: Params, bw: float, fps: float, segs: int, delay_ms: float, plr: float | None,
                  ftp: bool = False, dither: str = "multiparty") -> Scenario:
    sc = Scenario("newpred", duration_s=p.newpred_duration_s)
    for n in ("S", "R1", "R2", "C"):
        sc.node(n)
    sc.link("S", "R1", rate_bps=p.newpred_link_bps, delay_ms=10.0)
    link2: dict[str, Any] = {}
    if plr:
        link2["ab"] = {"loss": {"type": "packet", "rate": plr}}
    sc.link("R1", "R2", rate_bps=p.newpred_link_bps, delay_ms=delay_ms, **link2)
    sc.link("R2", "C", rate_bps=p.newpred_link_bps, delay_ms=10.0)
    if ftp:
        for i in range(p.ftp_flows_per_side):
            for side, near, far in (("l", "R1", "R2"), ("r", "R2", "R1")):
                a, b = f"{side}s{i}", f"{side}d{i}"
                sc.node(a).node(b)
                sc.link(a, near, rate_bps=100e6, delay_ms=1.0)
                sc.link(far, b, rate_bps=100e6, delay_ms=1.0)
                sc.flow(f"ftp-{side}{i}", "tcp", src=a, dst=b, start_s=0.0, start_jitter_s=NEWPRED_FTP_JITTER_S,
                        tcp={"flavor": "sack"})
    sc.data["rtp_sessions"] = [{
        "name": "s", "transport": "unicast", "session_bw_bps": bw, "media_payload_bytes": 100,
        "newpred": {"frames_per_s": fps, "segments_per_frame": segs},
        "avpf": {"max_feedback_delay_ms": p.max_feedback_delay_ms, "point_to_point_dither": dither},
        "members": [{"node": "S", "media": True}, {"node": "C"}],
    }]
    return sc


DITHER_LABELS = {"multiparty": "l*T_rr (study)", "zero": "0 (RFC p2p)"}


def case_9(p: Params, ftp: bool) -> list[tuple[dict, Scenario]]:
    out = []
    for spec in p.newpred_sessions:
        kb, fps, segs = (float(x) for x in spec.split(":"))
        for d in p.newpred_delays_ms:
            for plr in ((None,) if ftp else p.newpred_loss_rates):
                for dither in p.newpred_dithers:
                    labels: dict[str, Any] = {"case": 10 if ftp else 9, "session": spec, "session_kbps": kb,
                                              "link2_delay_ms": d, "p2p_dither": DITHER_LABELS[dither]}
                    if not ftp:
                        labels["loss_rate"] = plr
                    out.append((labels, newpred_chain(p, kb * 1e3, fps, int(segs), d, plr, ftp, dither)))
    return out


RTP_FIGURES = ("rtcp_share_pct", "fb_wanted", "fb_sent", "fb_suppressed", "fb_discarded", "mwt_s", "early_packets",
               "loss_report_delay_mean_s", "loss_reports", "losses_multiply_reported", "recoveries",
               "recovery_time_mean_s", "waiting_time_mean_s")
#: What ``analyse`` measures per member, every run.
FIGURES = frozenset({*RTP_FIGURES, "media_loss_rate"})


def analyse(res, job: Job) -> list[dict[str, Any]]:
    """One row per RTP member. Reads the tables' columns without building
    DataFrames: a case 9 run simulates in 0.3 ms, and two DataFrames, a
    filter and a row loop took 1.4 ms."""
    rtp = res.columns("rtp")
    labels = {k: v for k, v in job.labels.items() if not k.startswith("_")}
    flows = res.columns("flows")
    media = flows["kind"] == "rtp"
    sent = flows["sent"][media].sum()
    media_loss = float(flows["lost"][media].sum() / sent) if sent else float("nan")
    role = {job.labels.get("_an"): "An", job.labels.get("_af"): "Af"}
    figures = {k: rtp[k].tolist() for k in RTP_FIGURES}
    rows = []
    for i, flow in enumerate(rtp["flow"]):
        member = flow.split("/")[1]
        rows.append({**labels, "replication": job.replication, "member": member, "role": role.get(member, ""),
                     "media_loss_rate": media_loss, **{k: v[i] for k, v in figures.items()}})
    return rows


def build_jobs(p: Params, cases: tuple[int, ...]) -> list[Job]:
    specs = []
    if 1 in cases:
        specs += case_1_2(p, errors=False)
    if 2 in cases:
        specs += case_1_2(p, errors=True)
    if 3 in cases:
        specs += case_3(p)
    if 4 in cases:
        specs += case_4(p)
    if 5 in cases:
        specs += case_5_6(p, with_sr=False)
    if 6 in cases:
        specs += case_5_6(p, with_sr=True)
    for c in (7, 8):
        if c in cases:
            specs += case_7_8(p, c)
    if 9 in cases:
        specs += case_9(p, ftp=False)
    if 10 in cases:
        specs += case_9(p, ftp=True)
    # One copy of each scenario, its replications' to share.
    return [Job(data, seed=p.seed, replication=r, labels=labels)
            for labels, data in ((labels, sc.to_dict()) for labels, sc in specs) for r in range(p.replications)]


def study_jobs(p: Params, cases: tuple[int, ...] = CASES, sensitivity: bool = False) -> list[Job]:
    """Every run ``reproduce(p, ..., cases=cases, sensitivity=sensitivity)``
    makes, in its order (the ``StudyModule`` contract)."""
    from . import avpf_sensitivity

    return build_jobs(p, cases) + (avpf_sensitivity.jobs(p, cases) if sensitivity else [])


def tables(rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    out: dict[str, pd.DataFrame] = {}
    pct = {"rtcp_share_pct": (0.0, 100.0)}
    for case in sorted(rows["case"].unique()):
        d = rows[rows["case"] == case]
        # Other cases' labels go (empty here); a figure stays even when no
        # run had one (no loss reported without feedback errors, say).
        d = d[[c for c in d.columns if c in FIGURES or d[c].notna().any()]]
        keys = [c for c in ("session_bw_bps", "senders", "profiles", "topology", "condition", "loss", "profile")
                if c in d.columns]
        if case in (1, 2, 3):
            per_member = summarize(d, keys + ["member"], ["rtcp_share_pct"], bounds=pct)
            total = d.groupby(keys + ["replication"], sort=False)["rtcp_share_pct"].sum().reset_index()
            out[f"case{case}_members"] = per_member
            out[f"case{case}_total"] = summarize(total, keys, ["rtcp_share_pct"], bounds=pct)
        elif case == 4:
            rx = d[d["member"] == "A2"]
            out["case4_feedback"] = summarize(rx, keys, ["media_loss_rate", "fb_wanted", "fb_sent", "fb_discarded",
                                                         "mwt_s"])
        elif case in (5, 6):
            lossy = d[d["fb_wanted"] > 0]
            out[f"case{case}_feedback"] = summarize(lossy, ["losses", "member"],
                                                    ["fb_wanted", "fb_sent", "fb_suppressed", "fb_discarded", "mwt_s"])
        elif case in (9, 10):
            rx = d[d["member"] == "C"]
            keys9 = ["session", "session_kbps", "link2_delay_ms"] + (["loss_rate"] if case == 9 else []) \
                + ["p2p_dither"]
            out[f"case{case}_newpred"] = summarize(rx, keys9, ["fb_wanted", "recoveries", "recovery_time_mean_s",
                                                                "waiting_time_mean_s", "fb_discarded"])
        else:
            x = "k" if case == 7 else "l"
            d = d.astype({"scenario": int})  # NaN in other cases made it float
            m = d[d["role"] != ""].copy()
            m["suppression_rate"] = m["fb_suppressed"] / m["fb_wanted"]
            rates = summarize(m, ["scenario", x, "role"], ["suppression_rate"], bounds={"suppression_rate": (0.0, 1.0)})
            src = d[d["member"] == "A1"].copy()
            src["failure_rate"] = src["losses_multiply_reported"] / src["loss_reports"]
            sender = summarize(src, ["scenario", x], ["failure_rate", "loss_report_delay_mean_s"],
                               bounds={"failure_rate": (0.0, 1.0)})
            out[f"case{case}_suppression"] = rates
            out[f"case{case}_sender"] = sender
    return out


def _natural(label: str) -> tuple:
    """"32:4:3" before "128:10:6": numbers compared as numbers."""
    return tuple(float(x) if x.replace(".", "", 1).isdigit() else x for x in re.split(r"[:\s]+", str(label)))


def plots(t: dict[str, pd.DataFrame], out: Path) -> list[str]:
    made = []
    for case in (1, 2):
        key = f"case{case}_total"
        if key not in t:
            continue
        d = t[key]
        fig, ax = subplots(figsize=(9, 4))
        labels = [f"{bw / 1e3:g}k {s}\n{pr}" for bw, s, pr in zip(d["session_bw_bps"], d["senders"], d["profiles"])]
        ax.bar(range(len(d)), d["rtcp_share_pct_mean"],
               yerr=[d["rtcp_share_pct_mean"] - d["rtcp_share_pct_ci_low"], d["rtcp_share_pct_ci_high"] - d["rtcp_share_pct_mean"]])
        ax.axhline(5.0, color="k", linestyle="--", linewidth=1, label="5% share")
        ax.set_xticks(range(len(d)), labels, fontsize=6, rotation=90)
        ax.set_ylabel("RTCP, % of session bandwidth (sum)")
        ax.set_title(f"Case {case}: RTCP share, unicast" + (" with byte errors" if case == 2 else ""))
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / f"case{case}_rtcp_share.png", dpi=120)
        made.append(f"case{case}_rtcp_share.png")
    if "case4_feedback" in t:
        d = t["case4_feedback"]
        fig, ax = subplots(figsize=(7, 4))
        zeros = 0
        for prof, g in d.groupby("profile"):
            labels = [f"{bw / 1e3:g}k, {loss}" for bw, loss in zip(g["session_bw_bps"], g["loss"])]
            # A log axis cannot show 0 (no feedback waited): left out, and said.
            y = g["mwt_s_mean"].to_numpy(dtype=float)
            zeros += int((y <= 0).sum())
            ax.plot(labels, np.where(y > 0, y, np.nan), marker="o", label=prof)
        if zeros < len(d):  # a log axis needs a point above 0
            ax.set_yscale("log")
        if zeros:
            ax.text(0.01, 0.01, f"{zeros} point(s) at 0 s left out (log axis)", transform=ax.transAxes, fontsize=7)
        ax.set_ylabel("mean waiting time of feedback (s)")
        ax.set_title("Case 4: feedback waiting time, AVP against AVPF")
        ax.tick_params(axis="x", rotation=30)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "case4_mwt.png", dpi=120)
        made.append("case4_mwt.png")
    made += plot_dither_variants(t, out)  # cases 9 and 10, each if it ran
    if "case9_newpred" in t:
        d = t["case9_newpred"]
        d = d[d["p2p_dither"] == d["p2p_dither"].iloc[0]]
        delays = sorted(d["link2_delay_ms"].unique())
        fig, axes = subplots(1, len(delays), figsize=(3.6 * len(delays), 3.8), sharey=True, squeeze=False)
        for ax, dl in zip(axes[0], delays):
            at = d[(d["link2_delay_ms"] == dl) & (d["loss_rate"] > 0)]  # a log axis has no 0
            for sess in sorted(at["session"].unique(), key=_natural):
                g = at[at["session"] == sess].sort_values("loss_rate")
                ax.plot(g["loss_rate"], g["waiting_time_mean_s_mean"], marker="o", label=sess)
            ax.set_xscale("log")
            ax.set_title(f"link 2 delay {dl:g} ms")
            ax.set_xlabel("packet loss rate on link 2")
        axes[0][0].set_ylabel("NEWPRED waiting time (s)")
        axes[0][-1].legend(fontsize=6, title="kbit/s:fps:segments", title_fontsize=6)
        fig.suptitle(f"Case 9: NEWPRED waiting time, T_dither_max = {d['p2p_dither'].iloc[0]}")
        fig.tight_layout()
        fig.savefig(out / "case9_newpred_waiting.png", dpi=120)
        made.append("case9_newpred_waiting.png")
    for case in (7, 8):
        if f"case{case}_suppression" not in t:
            continue
        x = "k" if case == 7 else "l"
        rates, sender = t[f"case{case}_suppression"], t[f"case{case}_sender"]
        fig, axes = subplots(1, 3, figsize=(13, 3.8))
        for sid, g in rates.groupby("scenario"):
            for role, gg in g.groupby("role"):
                axes[0].plot(gg[x], gg["suppression_rate_mean"], marker="o",
                             linestyle="-" if role == "An" else "--", label=f"scenario {sid}, {role}")
        for sid, g in sender.groupby("scenario"):
            axes[1].plot(g[x], g["failure_rate_mean"], marker="o", label=f"scenario {sid}")
            axes[2].plot(g[x], g["loss_report_delay_mean_s_mean"], marker="o", label=f"scenario {sid}")
        for ax, yl in zip(axes, ("suppression rate", "suppression failure rate", "loss report delay at A1 (s)")):
            ax.set_xlabel(x)
            ax.set_ylabel(yl)
            ax.legend(fontsize=7)
        fig.suptitle(f"Case {case}: the {x} study ({'draft RTT rule' if case == 7 else 'RFC rule'})")
        fig.tight_layout()
        fig.savefig(out / f"case{case}_{x}_study.png", dpi=120)
        made.append(f"case{case}_{x}_study.png")
    return made


def plot_dither_variants(t: dict[str, pd.DataFrame], out: Path) -> list[str]:
    """Cases 9 and 10: mean NEWPRED waiting time per session under each
    point-to-point dither rule (mean over link-2 delays and loss rates)."""
    made = []
    for case in (9, 10):
        d = t.get(f"case{case}_newpred")
        if d is None or d["p2p_dither"].nunique() < 2:
            continue
        m = d.groupby(["session", "p2p_dither"], sort=False)["waiting_time_mean_s_mean"].mean().unstack()
        fig, ax = subplots(figsize=(8, 3.8))
        width = 0.8 / len(m.columns)
        for i, col in enumerate(m.columns):
            ax.bar([x + i * width for x in range(len(m))], m[col], width=width, label=f"T_dither_max = {col}")
        ax.set_xticks([x + width * (len(m.columns) - 1) / 2 for x in range(len(m))], m.index, rotation=45, fontsize=7)
        if (m.to_numpy() > 0).any():  # no waiting at all (no congestion, no loss): a linear axis at 0
            ax.set_yscale("log")
        ax.set_xlabel("session (kbit/s:frames/s:segments)")
        ax.set_ylabel("NEWPRED waiting time (s)")
        ax.set_title(f"Case {case}: the study's dither against the RFC point-to-point rule")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"case{case}_dither_variants.png", dpi=120)
        made.append(f"case{case}_dither_variants.png")
    return made


@one_output("study")
def reproduce(p: Params, out: Path, workers: int | None = None, progress: bool = True,
              cases: tuple[int, ...] = CASES, sensitivity: bool = False, cache: Any = None,
              overwrite: bool = False) -> Path:
    """Runs the cases and writes tables, plots and report.md; with
    ``sensitivity``, also the one-at-a-time sensitivity runs
    (avpf_sensitivity.py) and their section of the report."""
    p.check()
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise ValueError(f"avpf: case(s) {unknown} not built yet (built: {list(CASES)})")
    results = run_many(build_jobs(p, cases), workers=workers, progress=progress, desc="avpf runs", analyse=analyse,
                       cache=cache)
    rows = pd.DataFrame([r for rs in results for r in rs])
    rows.to_parquet(out / "replications.parquet", index=False)
    t = tables(rows)
    for name, df in t.items():
        df.to_csv(out / f"{name}.csv", index=False)
        df.to_parquet(out / f"{name}.parquet", index=False)
    made = plots(t, out)
    md = ["# AVPF feedback timing", "",
          "Study: shared/experiments/avpf-feedback.md. Definition and chosen values: docs/experiments/avpf.md.",
          f"Cases {', '.join(map(str, cases))}; {p.replications} replications, {p.duration_s:g} s each, seed {p.seed}; "
          "95% Student-t confidence intervals.", ""]
    shapes = shape_checks(t)
    if len(shapes):
        md += ["## The study's expected shapes", "", md_table(shapes), ""]
    for name, df in t.items():
        md += [f"## {name}", "", md_table(df, 4), ""]
    md += ["Plots: " + ", ".join(f"`{m}`" for m in made), ""]
    if sensitivity:
        md += _sensitivity(p, out, cases, workers, progress, cache)
    report = out / "report.md"
    report.write_text("\n".join(md))
    return report


def _sensitivity(p: Params, out: Path, cases: tuple[int, ...], workers: int | None, progress: bool,
                 cache: Any = None) -> list[str]:
    from . import avpf_sensitivity as sens

    d = sens.run(p, cases, workers=workers, progress=progress, cache=cache)
    d.to_csv(out / "sensitivity.csv", index=False)
    d.to_parquet(out / "sensitivity.parquet", index=False)
    sens.plot(d, out)
    return sens.section(d, sens.reduced(p))
