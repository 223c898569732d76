"""Congestion control for interactive media on the IETF RMCAT test cases
(shared/experiments/rmcat-test-cases.md): GCC, NADA and SCReAM, each on
RFC 8867's wired cases 5.1-5.8 and on cellular capacity traces (RFC 8869
style), at 50 and 100 ms one way, behind drop-tail or FQ-CoDel.

Case numbers: 1-8 are RFC 8867's 5.1-5.8; 9 and 10 are the cellular
cases (the builtin traces ``lte-2mbps`` and ``lte-edge``). Values the RFCs
state are in the first block of ``Params``; values they leave open are
chosen here, marked "chosen", and documented in docs/experiments/rmcat.md.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..outfolder import one_output
from ..scenario import Scenario
from ..sweep import Job, run_many
from .params import MAX_ITEMS, StudyParams

NAME = "rmcat"
CASES: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
# A received frame's fates (the media table's frames_<fate> columns): the late share is of all of them.
SHOWN = ("played", "late", "lost", "undecodable")
CASE_NAMES = {
    1: "5.1 variable capacity, one flow",
    2: "5.2 variable capacity, two flows",
    3: "5.3 congested feedback link",
    4: "5.4 self-fairness",
    5: "5.5 RTT fairness",
    6: "5.6 against a long TCP flow",
    7: "5.7 against short TCP flows",
    8: "5.8 pause and resume",
    9: "cellular, lte-2mbps trace",
    10: "cellular, lte-edge trace",
}
CELLULAR = {9: "lte-2mbps", 10: "lte-edge"}
#: GCC's loss-based rises, as its cc fields: libwebrtc's (the engine's
#: default) and the draft's factor on every pool.
GCC_LOSS_INCREASE: dict[str, dict[str, float]] = {
    "libwebrtc": {"loss_increase": 1.08, "loss_increase_window_ms": 1000.0},
    "draft": {"loss_increase": 1.05, "loss_increase_window_ms": 0.0},
}
#: 5.8: how long after the resume the bottleneck's queue peak is taken, s.
RESUME_WINDOW_S = 10.0

#: Each controller as an RTP member's fields: (cc, feedback, pacer).
CONTROLLERS: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "gcc": ({"type": "gcc", "estimator": "trendline"}, {"format": "twcc"}, {"factor": 2.5, "burst_ms": 5}),
    "nada": ({"type": "nada"}, {"format": "rfc8888"}, {"factor": 1.0, "burst_ms": 5}),
    "scream": ({"type": "scream"}, {"format": "rfc8888"}, {"factor": 1.0, "burst_ms": 0}),
}


@dataclass(frozen=True)
class Flow:
    """One media flow of a case: its start, pause, one-way delay and
    direction (forward S to R, or backward R to S in case 5.3)."""

    start_s: float
    one_way_ms: float | None = None  # None: the run's one-way delay
    pause: tuple[float, float] | None = None
    backward: bool = False
    restart: bool = False  # the pause ends the session; a new one starts at the resume


@dataclass(frozen=True)
class Case:
    duration_s: float
    forward: tuple[tuple[float, float], ...] = ()  # (time s, capacity bit/s)
    backward: tuple[tuple[float, float], ...] = ()  # the feedback path (5.3)
    flows: tuple[Flow, ...] = (Flow(0.0),)
    trace: str | None = None
    long_tcp: bool = False
    short_tcp: int = 0


@dataclass
class Params(StudyParams):
    study: ClassVar[str] = NAME
    positive: ClassVar[tuple[str, ...]] = ("media_payload_bytes", "fps")

    # --- stated by RFC 8867 ---
    capacity_bps: float = 4e6  # unless a case says otherwise
    one_way_delays_ms: tuple[float, ...] = (50.0, 100.0)
    queue_ms: float = 300.0  # drop-tail sized in time at the bottleneck rate
    min_bps: float = 150e3
    max_bps: float = 1.5e6
    start_bps: float = 150e3
    media_payload_bytes: int = 1160  # 1200 bytes on the wire with RTP/UDP/IP
    fps: float = 30.0
    # --- where the sources disagree (chosen, documented) ---
    case51_drop: float = 0.6  # 5.1's third step: x0.6 (one implementation x0.5)
    case55_capacity_bps: float = 4e6  # 5.5: 4 Mbit/s (another 3.5)
    case56_queue_ms: float = 300.0  # 5.6: 300 ms (the deep variant: 1000)
    case57_file_kb: tuple[float, float] = (30.0, 50.0)  # 5.7: uniform sizes (another implementation: 100-1000 kB)
    case57_off_mean_s: float = 10.0
    # 5.7's sources: "closed" (RFC 8867: each idle an exponential time after its transfer ends; a flow of
    # transfers, one connection each) or "open" (each transfer an exponential time after the last one started,
    # drawn up front whatever the network does)
    case57_schedule: str = "closed"
    scream_pacing_factor: float = 1.0  # SCReAM's pacer: RFC 8298's cwnd / s_rtt (the reference code: x1.5)
    case58_resume: str = "hold"  # 5.8: the session pauses, its controller kept ("restart": a fresh one at the resume)
    nada_rampup_delay: str = "filtered"  # NADA's ramp-up test on d_tilde ("raw": each packet's, RFC 8698 and ns3-rmcat)
    gcc_loss_decrease_interval_ms: float = 300.0  # GCC: libwebrtc's wait between loss-based cuts (the draft's: 0)
    # GCC's loss-based rises: "libwebrtc" (1.08 over the last second's least, plus 1 kbit/s) or "draft" (x1.05
    # on every clean 20-packet pool)
    gcc_loss_increase: str = "libwebrtc"
    # GCC's start: libwebrtc's probes (3 and 6 times R_start, then twice each target near the last probe, with
    # padding), or none (False: the draft's start, the multiplicative increase from R_start)
    gcc_probing: bool = True
    # --- chosen here ---
    # The receiver's decoding: "independent" (each frame decodes alone) or "reference" (a lost frame spoils
    # the frames up to the next key frame, which the receiver asks for with a PLI)
    decode: str = "independent"
    # The receiver asks for lost packets again (RTCP Generic NACK; the sender answers with RFC 4588
    # retransmissions, held to its target over 500 ms), as WebRTC's video does
    nack: bool = False
    # The receiver's playout delay: "quantile" (mediasim's, a quantile of the last frames' delays) or "webrtc"
    # (libwebrtc's video jitter estimate and render timing)
    playout_estimator: str = "quantile"
    controllers: tuple[str, ...] = ("gcc", "nada", "scream")
    cases: tuple[int, ...] = CASES
    aqm_variant: bool = True  # every case also behind FQ-CoDel
    feedback_interval_ms: float = 50.0  # chosen: per-packet feedback every 50 ms (NADA's RFC: 100)
    jitter_std_ms: float = 0.0  # chosen: RFC 8867's jitter off by default (sensitivity: on)
    tcp_cc: str = "cubic"  # RFC 8867 says NewReno; CUBIC is what paths carry today ("reno" for the RFC's)
    converge_band: float = 0.15  # convergence: within 15% of the flow's share
    time_scale: float = 1.0  # every case's times x this (quick mode shortens)
    replications: int = 10
    seed: int = 1

    def quick(self) -> "Params":
        return dataclasses.replace(self, one_way_delays_ms=(50.0,), aqm_variant=False, time_scale=0.4,
                                   replications=2)

    def check_more(self) -> list[str]:
        problems = []
        if bad := [c for c in self.cases if c not in CASES]:
            problems.append(f"cases must be among {list(CASES)} (got {bad})")
        if unknown := [c for c in self.controllers if c not in CONTROLLERS]:
            problems.append(f"controllers must be among {sorted(CONTROLLERS)} (got {unknown})")
        if min(self.one_way_delays_ms) < 5:
            problems.append("one_way_delays_ms must be at least 5 ms each")
        if not 0 < self.time_scale <= 10:
            problems.append("time_scale must be in (0, 10]")
        if not 0 < self.case51_drop <= 1:
            problems.append("case51_drop must be in (0, 1]")
        if not 0 < self.case57_file_kb[0] <= self.case57_file_kb[1]:
            problems.append("case57_file_kb must be (low, high) with 0 < low <= high")
        if self.tcp_cc not in ("cubic", "reno"):
            problems.append("tcp_cc must be cubic or reno")
        if min(self.queue_ms, self.case56_queue_ms, self.feedback_interval_ms, self.case57_off_mean_s) <= 0:
            problems.append("queue_ms, case56_queue_ms, feedback_interval_ms and case57_off_mean_s must be positive")
        elif 7 in self.cases and self.case57_schedule == "open" and (n := _expected_transfers(self)) > MAX_ITEMS:
            # Each transfer is a flow: a schedule the engine cannot take
            # would be drawn, transfer by transfer, before it refused it.
            problems.append(f"case57_off_mean_s: about {n:,.0f} transfers in case 5.7, more than the engine's "
                            f"{MAX_ITEMS:,} flows")
        if self.jitter_std_ms > 5e8:  # the jitter's bound is twice it, at most 1e9 ms (the engine's)
            problems.append(f"jitter_std_ms must be at most 500000000, half the engine's bound on the jitter "
                            f"(1e9 ms; got {self.jitter_std_ms:.10g})")
        if not self.min_bps <= self.start_bps <= self.max_bps:  # the controllers' own rule
            problems.append(f"start_bps must be from min_bps to max_bps ({self.min_bps:.10g} to {self.max_bps:.10g}; "
                            f"got {self.start_bps:.10g})")
        if self.case57_schedule not in ("closed", "open"):
            problems.append(f"case57_schedule must be closed or open (got {self.case57_schedule!r})")
        if self.case58_resume not in ("hold", "restart"):
            problems.append(f"case58_resume must be hold or restart (got {self.case58_resume!r})")
        if self.gcc_loss_increase not in GCC_LOSS_INCREASE:
            problems.append(f"gcc_loss_increase must be libwebrtc or draft (got {self.gcc_loss_increase!r})")
        if self.decode not in ("independent", "reference"):
            problems.append(f"decode must be independent or reference (got {self.decode!r})")
        if self.playout_estimator not in ("quantile", "webrtc"):
            problems.append(f"playout_estimator must be quantile or webrtc (got {self.playout_estimator!r})")
        if self.nada_rampup_delay not in ("filtered", "raw"):
            problems.append(f"nada_rampup_delay must be filtered or raw (got {self.nada_rampup_delay!r})")
        if not 0 < self.scream_pacing_factor <= 10:
            problems.append("scream_pacing_factor must be in (0, 10]")
        if self.gcc_loss_decrease_interval_ms > 10_000:  # below 0 and NaN: the shared checks
            problems.append(f"gcc_loss_decrease_interval_ms must be in [0, 10000] ms "
                            f"(got {self.gcc_loss_decrease_interval_ms:.10g})")
        if not 0 < self.converge_band < 1:
            problems.append("converge_band must be in (0, 1)")
        return problems


def cases(p: Params) -> dict[int, Case]:
    """RFC 8867's cases (section 5) and the cellular ones, at their
    nominal times."""
    c = 1e6
    share4 = (Flow(0.0), Flow(20.0), Flow(40.0))
    return {
        1: Case(100.0, ((0, c), (40, 2.5 * c), (60, p.case51_drop * c), (80, c))),
        2: Case(125.0, ((0, 4 * c), (25, 2 * c), (50, 3.5 * c), (75, c), (100, 2 * c)), flows=(Flow(0), Flow(0))),
        3: Case(100.0, ((0, 2 * c), (20, c), (40, 0.5 * c), (60, 2 * c)), ((0, 2 * c), (35, 0.8 * c), (70, 2 * c)),
                flows=(Flow(0), Flow(0, backward=True))),
        4: Case(120.0, ((0, 3.5 * c),), flows=share4),
        5: Case(300.0, ((0, p.case55_capacity_bps),),
                flows=tuple(Flow(10.0 * i, one_way_ms=d) for i, d in enumerate((10, 25, 50, 100, 150)))),
        6: Case(120.0, ((0, 2 * c),), flows=(Flow(5.0),), long_tcp=True),
        7: Case(300.0, ((0, 2 * c),), flows=(Flow(5.0), Flow(5.0)), short_tcp=10),
        8: Case(120.0, ((0, 3.5 * c),), flows=(Flow(0, pause=(40.0, 60.0), restart=p.case58_resume == "restart"),
                                              Flow(20), Flow(40))),
        9: Case(120.0, trace=CELLULAR[9]),
        10: Case(120.0, trace=CELLULAR[10]),
    }


@dataclass(frozen=True)
class Leg:
    """One RTP session of a case: a flow, pausing within it (5.8: the
    source stops, the controller, sequence numbers and receiver carry
    on), or, with ``restart``, one part of a pausing flow (the session
    stops and a new one, with a fresh controller, starts at the resume)."""

    name: str  # the session's name
    flow: int
    start_s: float
    stop_s: float
    one_way_ms: float | None
    backward: bool
    pauses: tuple[tuple[float, float], ...] = ()

    @property
    def rtp_flow(self) -> str:
        return f"{self.name}/{'r' if self.backward else 's'}{self.flow}/rtp"

    def sending(self, t: np.ndarray) -> np.ndarray:
        """Whether the leg sends at each time (started, not stopped, not
        paused)."""
        on = (t >= self.start_s) & (t < self.stop_s)
        for a, b in self.pauses:
            on &= ~((t >= a) & (t < b))
        return on

    @property
    def active_s(self) -> float:
        return self.stop_s - self.start_s - sum(b - a for a, b in self.pauses)


def legs(case: Case) -> list[Leg]:
    out = []
    for i, f in enumerate(case.flows):
        if f.pause and f.restart:
            out.append(Leg(f"m{i}", i, f.start_s, f.pause[0], f.one_way_ms, f.backward))
            out.append(Leg(f"m{i}r", i, f.pause[1], case.duration_s, f.one_way_ms, f.backward))
        else:
            out.append(Leg(f"m{i}", i, f.start_s, case.duration_s, f.one_way_ms, f.backward,
                           (f.pause,) if f.pause else ()))
    return out


def scaled(case: Case, k: float) -> Case:
    """``case`` with every time multiplied by ``k``."""
    def steps(s):
        return tuple((t * k, v) for t, v in s)
    flows = tuple(dataclasses.replace(f, start_s=f.start_s * k, pause=f.pause and (f.pause[0] * k, f.pause[1] * k))
                  for f in case.flows)
    return dataclasses.replace(case, duration_s=case.duration_s * k, forward=steps(case.forward),
                               backward=steps(case.backward), flows=flows)


def nominal_capacity(case: Case) -> float:
    """The capacity the drop-tail queue is sized for (its first value; a
    trace's mean is 2 Mbit/s or less)."""
    return case.forward[0][1] if case.forward else 2e6


def _expected_transfers(p: Params) -> float:
    """About how many transfers ``short_tcp_schedule`` draws: each source
    one per mean off time over the case, and its first (the time scale
    cancels)."""
    case = cases(p)[7]
    return case.short_tcp * (1 + case.duration_s / p.case57_off_mean_s)


def short_tcp_schedule(p: Params, case: Case, rng: random.Random) -> list[tuple[float, int]]:
    """(start s, bytes) of 5.7's transfers: ``case.short_tcp`` sources,
    two on at 0 s, each starting its next transfer an exponential time
    (mean ``case57_off_mean_s``) after its last started, sizes uniform in
    ``case57_file_kb``."""
    lo, hi = p.case57_file_kb
    out = []
    for i in range(case.short_tcp):
        t = 0.0 if i < 2 else rng.expovariate(1 / p.case57_off_mean_s)
        while t < case.duration_s:
            out.append((t, int(rng.uniform(lo, hi) * 1000)))
            t += rng.expovariate(1 / (p.case57_off_mean_s * p.time_scale))
    return sorted(out)


def scenario(p: Params, number: int, controller: str, one_way_ms: float, aqm: str, replication: int) -> Scenario:
    """Case ``number`` for ``controller``: senders s<i>, receivers r<i>,
    the bottleneck a-b (1 ms; capacity per the case; queue per ``aqm``),
    each flow's one-way delay on its access links."""
    case = scaled(cases(p)[number], p.time_scale)
    sc = Scenario(f"rmcat-{number}-{controller}", duration_s=case.duration_s)
    sc.data["description"] = f"RMCAT {CASE_NAMES[number]}, {controller}, {one_way_ms:g} ms, {aqm}"
    sc.measure(series=True, packets=False, queue_sample_ms=100)
    sc.node("a")
    sc.node("b")
    cap = nominal_capacity(case)
    queue_ms = p.case56_queue_ms if number == 6 else p.queue_ms
    if aqm == "droptail":
        queue: dict[str, Any] = {"type": "droptail", "limit_bytes": max(3000, int(cap * queue_ms / 1e3 / 8))}
    else:
        queue = {"type": "fq_codel"}
    jitter = {"jitter": {"std_ms": p.jitter_std_ms, "max_ms": 2 * p.jitter_std_ms}} if p.jitter_std_ms > 0 else {}
    ab: dict[str, Any] = {"queue": queue}
    if case.trace:
        ab["trace"] = {"builtin": case.trace}
    else:
        ab["rate_bps"] = [list(s) for s in case.forward]
    ba: dict[str, Any] = {"queue": dict(queue)}
    if case.backward:
        ba["rate_bps"] = [list(s) for s in case.backward]
    sc.link("a", "b", rate_bps=cap, delay_ms=1.0, ab=ab, ba=ba, **jitter)
    cc, feedback, pacer = CONTROLLERS[controller]
    if cc["type"] == "scream":
        pacer = {**pacer, "factor": p.scream_pacing_factor}
    if cc["type"] == "nada" and p.nada_rampup_delay != "filtered":  # the engine's default left out of the scenario
        cc = {**cc, "rampup_delay": p.nada_rampup_delay}
    if cc["type"] == "gcc" and p.gcc_loss_decrease_interval_ms != 300.0:  # the engine's default, likewise
        cc = {**cc, "loss_decrease_interval_ms": p.gcc_loss_decrease_interval_ms}
    if cc["type"] == "gcc" and p.gcc_loss_increase != "libwebrtc":
        cc = {**cc, **GCC_LOSS_INCREASE[p.gcc_loss_increase]}
    if cc["type"] == "gcc" and not p.gcc_probing:
        cc = {**cc, "probing": False}
    placed: set[int] = set()
    for leg in legs(case):
        i = leg.flow
        d = leg.one_way_ms if leg.one_way_ms is not None else one_way_ms
        s, r = f"s{i}", f"r{i}"
        if i not in placed:
            placed.add(i)
            sc.node(s)
            sc.node(r)
            sc.link(s, "a", rate_bps=100e6, delay_ms=(d - 1) / 2)
            sc.link("b", r, rate_bps=100e6, delay_ms=(d - 1) / 2)
        src, dst = (r, s) if leg.backward else (s, r)
        stop = {"stop_s": leg.stop_s} if leg.stop_s < case.duration_s else {}
        pauses = {"pauses": [list(x) for x in leg.pauses]} if leg.pauses else {}
        member = {**pauses, "node": src, "media": True, "source": {"type": "synthetic", "fps": p.fps}, "pacer": pacer,
                  "feedback": {**feedback, "interval_ms": p.feedback_interval_ms},
                  "cc": {**cc, "min_bps" if cc["type"] != "nada" else "rmin_bps": p.min_bps,
                         "max_bps" if cc["type"] != "nada" else "rmax_bps": p.max_bps, "start_bps": p.start_bps}}
        playout = {"adaptive": True, **({"decode": p.decode} if p.decode != "independent" else {}),
                   **({"nack": True} if p.nack else {}),
                   **({"estimator": p.playout_estimator} if p.playout_estimator != "quantile" else {})}
        sc.rtp_session(leg.name, [member, {"node": dst, "playout": playout}], transport="unicast",
                       session_bw_bps=p.max_bps, media_payload_bytes=p.media_payload_bytes, start_s=leg.start_s,
                       avpf={"trr_interval_ms": 1000}, **stop)
    tcp_cc = {"type": p.tcp_cc}
    if case.long_tcp:
        sc.node("ts")
        sc.node("tr")
        sc.link("ts", "a", rate_bps=100e6, delay_ms=(one_way_ms - 1) / 2)
        sc.link("b", "tr", rate_bps=100e6, delay_ms=(one_way_ms - 1) / 2)
        sc.flow("tcp", "tcp", src="ts", dst="tr", cc=tcp_cc)
    if case.short_tcp:
        sc.node("ts")
        sc.node("tr")
        sc.link("ts", "a", rate_bps=100e6, delay_ms=(one_way_ms - 1) / 2)
        sc.link("b", "tr", rate_bps=100e6, delay_ms=(one_way_ms - 1) / 2)
        if p.case57_schedule == "closed":
            lo, hi = p.case57_file_kb
            for i in range(case.short_tcp):
                transfers = {"size_bytes": [int(lo * 1000), int(hi * 1000)],
                             "off_mean_s": p.case57_off_mean_s * p.time_scale, "start_on": i < 2}
                sc.flow(f"web{i}", "tcp", src="ts", dst="tr", cc=tcp_cc, transfers=transfers)
        else:
            rng = random.Random(f"rmcat-5.7:{p.seed}:{replication}")
            for k, (t, size) in enumerate(short_tcp_schedule(p, case, rng)):
                sc.flow(f"web{k}", "tcp", src="ts", dst="tr", cc=tcp_cc, bytes=size, start_s=t)
    return sc


def fair_share(case: Case, t: np.ndarray, p: Params, backward: bool = False) -> np.ndarray:
    """Per time: the capacity over the media flows sending on that
    direction then, capped at R_max (RFC 8868's reference for a flow's
    rate). TCP's share in 5.6/5.7 is not subtracted: the reference is
    what the flow could have."""
    steps = case.backward if backward else case.forward
    cap = np.full(len(t), np.nan)
    for time, v in steps:
        cap[t >= time] = v
    n = np.zeros(len(t))
    for leg in legs(case):
        if leg.backward == backward:
            n += leg.sending(t)
    return np.minimum(cap / np.maximum(n, 1), p.max_bps)


def trace_share(fwd: pd.DataFrame, t: np.ndarray, p: Params) -> np.ndarray:
    """A trace case's share per time: the link's sampled capacity at or
    before each time, capped at R_max (one flow)."""
    if fwd.empty or not len(t):
        return np.full(len(t), np.nan)
    times, caps = fwd["time_s"].to_numpy(), fwd["capacity_bps"].to_numpy()
    i = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(caps) - 1)
    return np.minimum(caps[i], p.max_bps)


def _series(res, flow: str, var: str) -> pd.DataFrame:
    s = res.tables["media_series"]
    return s[(s["flow"] == flow) & (s["var"] == var)][["time_s", "value"]]


def _rate_1s(x: pd.DataFrame) -> pd.DataFrame:
    """A series averaged over 1 s bins."""
    if x.empty:
        return pd.DataFrame({"time_s": [], "value": []})
    b = np.floor(x["time_s"].to_numpy())
    g = x.assign(bin=b).groupby("bin")["value"].mean()
    return pd.DataFrame({"time_s": g.index + 0.5, "value": g.to_numpy()})


def stretches(case: Case, leg: Leg) -> list[tuple[float, float]]:
    """The spans of constant share while ``leg`` sends: between its start,
    its stop, capacity steps and other flows' starts, stops, pauses and
    resumes; ``leg``'s own pauses are left out."""
    steps = case.backward if leg.backward else case.forward
    every = legs(case)
    changes = ({t for t, _ in steps} | {x.start_s for x in every} | {x.stop_s for x in every}
               | {t for x in every for pause in x.pauses for t in pause})
    marks = sorted(m for m in changes | {leg.start_s} if leg.start_s <= m < leg.stop_s)
    spans = [(m, marks[i + 1] if i + 1 < len(marks) else leg.stop_s) for i, m in enumerate(marks)]
    return [(a, b) for a, b in spans if leg.sending(np.array([a]))[0]]


def convergence(case: Case, rate: pd.DataFrame, share: np.ndarray, p: Params, leg: Leg) -> list[float]:
    """Seconds from the start of each stretch of constant share to the
    first second the 1 s sending rate is within ``converge_band`` of the
    share (NaN if not before the stretch ends)."""
    out = []
    t = rate["time_s"].to_numpy()
    v = rate["value"].to_numpy()
    for m, end in stretches(case, leg):
        ok = (t >= m) & (t < end) & (np.abs(v - share) <= p.converge_band * share)
        out.append(float(t[ok][0] - m) if ok.any() else float("nan"))
    return out


def _settled(case: Case, rate: pd.DataFrame, share: np.ndarray, leg: Leg) -> np.ndarray:
    """The 1 s rate over the share in the second half of every stretch of
    constant share (the settled state, without the transients)."""
    t = rate["time_s"].to_numpy()
    keep = np.zeros(len(t), dtype=bool)
    for m, end in stretches(case, leg):
        keep |= (t >= (m + end) / 2) & (t < end)
    keep &= np.isfinite(share) & (share > 0)
    return rate["value"].to_numpy()[keep] / share[keep]


def settled_ratio(case: Case, rate: pd.DataFrame, share: np.ndarray, leg: Leg) -> float:
    """The mean settled rate over the share."""
    x = _settled(case, rate, share, leg)
    return float(np.mean(x)) if len(x) else float("nan")


def settled_cv(case: Case, rate: pd.DataFrame, share: np.ndarray, leg: Leg) -> float:
    """How much the settled rate swings: the coefficient of variation of
    the settled rate over the share. A rate that holds its share gives 0,
    one that oscillates about it the size of its swing."""
    x = _settled(case, rate, share, leg)
    return float(x.std() / x.mean()) if len(x) > 1 and x.mean() > 0 else float("nan")


def _float(x: Any) -> float:
    """A table's figure as a float; one the run had none of (no packet
    delivered, no frame played: a null) is NaN."""
    return float("nan") if pd.isna(x) else float(x)


def jain(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum())) if len(x) and (x ** 2).sum() > 0 else float("nan")


def analyse(res, job: Job) -> dict[str, Any]:
    """Per media flow: RFC 8868's figures; per run: utilisation and Jain's
    index; the 1 s rate series of each flow, for the report's pictures."""
    p: Params = job.labels.pop("_params")
    number = job.labels["case"]
    case = scaled(cases(p)[number], p.time_scale)
    flows = res.tables["flows"].set_index("flow")
    media = res.tables["media"].set_index("flow")
    base = {**job.labels, "replication": job.replication}
    rows, series = [], []
    caps = res.tables["link_capacity"]
    fwd = caps[caps["link_dir"] == "a-b:a->b"]
    resume = next((f.pause[1] for f in case.flows if f.pause), None)
    resume_conv = float("nan")
    for leg in legs(case):
        name = leg.rtp_flow
        fl, md = flows.loc[name], media.loc[name]
        send = _rate_1s(_series(res, name, "send_bps"))
        send = send[leg.sending(send["time_s"].to_numpy())]  # a second that holds a pause's start is paused
        t = send["time_s"].to_numpy()
        share = fair_share(case, t, p, leg.backward) if not case.trace else trace_share(fwd, t, p)
        active = max(leg.active_s, 1e-9)
        half = send[send["time_s"] >= leg.start_s + (leg.stop_s - leg.start_s) / 2]["value"]
        conv = convergence(case, send, share, p, leg) if not case.trace else []
        if resume is not None and case.flows[leg.flow].pause:
            resume_conv = dict(zip((m for m, _ in stretches(case, leg)), conv)).get(resume, resume_conv)
        valid = np.isfinite(share) & (share > 0)
        rows.append({
            **base, "flow": leg.name, "rate_bps": float(fl["sent_bytes"]) * 8 / active,
            "share_ratio": float(np.mean(send["value"].to_numpy()[valid] / share[valid])) if valid.any()
            else float("nan"),
            "settled_ratio": settled_ratio(case, send, share, leg),
            "settled_cv": settled_cv(case, send, share, leg),
            "queuing_mean_ms": _float(fl["delay_mean_ms"] - fl["delay_min_ms"]),
            "queuing_p95_ms": _float(fl["delay_p95_ms"] - fl["delay_min_ms"]),
            "loss_pct": 100 * float(fl["loss_rate"]),
            "rate_cv": float(half.std() / half.mean()) if len(half) > 1 and half.mean() > 0 else float("nan"),
            "converge_s": float(np.nanmean(conv)) if conv and np.isfinite(conv).any() else float("nan"),
            "unconverged_steps": int(np.sum(~np.isfinite(conv))) if conv else 0,
            "feedback_pct": 100 * float(md["feedback_bytes_received"]) / max(float(md["media_payload_bytes"]), 1),
            "frame_delay_ms": _float(md["frame_delay_mean_ms"]),
            "playout_delay_ms": _float(md["playout_delay_mean_ms"]),
            "frames_late_pct": 100 * float(md["frames_late"]) / max(float(sum(md[f"frames_{k}"] for k in SHOWN)), 1.0),
            "freezes": int(md["freezes"]),
        })
        series.append(send.assign(flow=leg.name, **{k: base[k] for k in ("case", "controller", "one_way_ms", "aqm",
                                                                  "replication")}))
    # Utilisation of the forward bottleneck; Jain over the media sessions'
    # rates while they send.
    util = float(fwd["carried_bps"].sum() / fwd["capacity_bps"].sum()) if len(fwd) else float("nan")
    late = [r["rate_bps"] for r in rows]
    tcp = res.tables["tcp"]
    run = {**base, "utilisation": util, "jain": jain(np.array(late)) if len(late) > 1 else float("nan"),
           "tcp_goodput_bps": float(tcp["goodput_bps"].sum()) if len(tcp) and number == 6 else float("nan"),
           **short_transfers(tcp, number),
           "resume_converge_s": resume_conv,
           "resume_queue_peak_ms": resume_queue_peak_ms(res, case, p, resume)}
    cap_series = fwd[["time_s", "capacity_bps"]].assign(**{k: base[k] for k in ("case", "one_way_ms", "aqm",
                                                                              "controller", "replication")})
    return {"flows": rows, "run": run, "series": pd.concat(series) if series else pd.DataFrame(),
            "capacity": cap_series}


def short_transfers(tcp: pd.DataFrame, number: int) -> dict[str, float]:
    """5.7's transfers: how many started and their mean time from SYN to
    the FIN's ACK (the sender's view, for either schedule)."""
    if number != 7 or not len(tcp):
        return {"tcp_transfers": 0, "tcp_completion_s": float("nan")}
    if tcp["transfers"].notna().any():  # closed: a flow of transfers per source
        done = tcp["transfers_done"].astype(float)
        took = float((tcp["transfer_time_mean_s"] * done).sum() / done.sum()) if done.sum() else float("nan")
        return {"tcp_transfers": int(tcp["transfers"].sum()), "tcp_completion_s": took}
    return {"tcp_transfers": int(len(tcp)), "tcp_completion_s": float((tcp["sender_done_s"] - tcp["start_s"]).mean())}


def resume_queue_peak_ms(res, case: Case, p: Params, resume: float | None) -> float:
    """5.8: the forward bottleneck's largest queue, as delay at its
    nominal rate, over the ``RESUME_WINDOW_S`` (scaled) after the resume
    (NaN for cases without a pause)."""
    if resume is None:
        return float("nan")
    q = res.tables["queue_samples"]
    q = q[(q["link_dir"] == "a-b:a->b") & (q["time_s"] >= resume)
          & (q["time_s"] < resume + RESUME_WINDOW_S * p.time_scale)]
    return float(q["bytes"].max() * 8 / nominal_capacity(case) * 1e3) if len(q) else float("nan")


def jobs(p: Params) -> list[Job]:
    out = []
    aqms = ("droptail", "fq_codel") if p.aqm_variant else ("droptail",)
    for number in p.cases:
        delays = p.one_way_delays_ms if number != 5 else p.one_way_delays_ms[:1]  # 5.5 sets its own delays
        for controller in p.controllers:
            for d in delays:
                for aqm in aqms:
                    for r in range(p.replications):
                        sc = scenario(p, number, controller, d, aqm, r)
                        out.append(Job(sc.to_dict(), seed=p.seed, replication=r,
                                       labels={"case": number, "controller": controller, "one_way_ms": d,
                                               "aqm": aqm, "_params": p}))
    return out


def _narrowed(p: Params, cases: tuple[int, ...] | None) -> Params:
    """``p`` with only ``cases``, when given (``reproduce``'s option)."""
    return dataclasses.replace(p, cases=tuple(cases)) if cases else p


def study_jobs(p: Params, cases: tuple[int, ...] | None = None, sensitivity: bool = False) -> list[Job]:
    """Every run ``reproduce(p, ..., cases=cases, sensitivity=sensitivity)``
    makes, in its order (the ``StudyModule`` contract)."""
    from . import rmcat_sensitivity

    p = _narrowed(p, cases)
    return jobs(p) + (rmcat_sensitivity.jobs(p) if sensitivity else [])


def run(p: Params, workers: int | None = None, progress: bool = True, cache: Any = None
        ) -> dict[str, pd.DataFrame]:
    """Every run's figures: ``flows`` (one row per media flow), ``runs``
    (one per run), ``series`` (1 s sending rates) and ``capacity``."""
    p.check()
    parts = run_many(jobs(p), workers=workers, progress=progress, desc="rmcat runs", analyse=analyse, cache=cache)
    return {
        "flows": pd.DataFrame([r for x in parts for r in x["flows"]]),
        "runs": pd.DataFrame([x["run"] for x in parts]),
        "series": pd.concat([x["series"] for x in parts], ignore_index=True),
        "capacity": pd.concat([x["capacity"] for x in parts], ignore_index=True),
    }


HAS_SENSITIVITY = True


@one_output("study")
def reproduce(p: Params, out: Path, workers: int | None = None, progress: bool = True,
              cases: tuple[int, ...] | None = None, sensitivity: bool = False, cache: Any = None,
              overwrite: bool = False) -> Path:
    """Runs the study into ``out`` and returns its report; ``cases``
    narrows it; with ``sensitivity``, also the one-at-a-time runs over the
    values the RFCs leave open (rmcat_sensitivity.py)."""
    from . import rmcat_report

    p = _narrowed(p, cases)
    p.check()
    t = run(p, workers, progress, cache)
    sens = None
    if sensitivity:
        from . import rmcat_sensitivity

        sens = rmcat_sensitivity.run(p, workers=workers, progress=progress, cache=cache)
    return rmcat_report.write(p, t, out, sens)
