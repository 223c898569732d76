"""Initial window 10 versus interactive real-time traffic (the IW10 study,
shared/experiments/iw10-interactive.md).

A 16 kbit/s voice-like CBR flow (40-byte payload every 20 ms over
RTP/UDP/IP) shares a slow access link with 1, 2 or 6 short TCP transfers
(372 kB in total) that start at random between 10 and 12 s, with initial
window 3 or 10. Jitter-buffer discards count as loss; each voice packet
gets a quality level from the length of the loss period it falls in.

Values the study states are in the first block of ``Params``; values it
leaves open are chosen here, marked "chosen", and documented in
docs/experiments/iw10.md.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .. import traces
from ..errors import ScenarioError
from ..outfolder import one_output
from ..reporting.quality_plots import plot_good_quality, plot_level_bars, plot_trace
from ..reporting.tables import md_table
from ..scenario import Scenario
from ..stats import summarize
from ..sweep import Job, run_many
from .params import StudyParams
from .quality import LEVELS, base_delay, quality_metrics

NAME = "iw10"


# The study contract (mediasim.experiments.StudyModule): no cases, no
# sensitivity runs.
CASES: tuple[int, ...] = ()
HAS_SENSITIVITY = False


@dataclass
class Params(StudyParams):
    study: ClassVar[str] = NAME
    count_fields: ClassVar[tuple[str, ...]] = ("flows",)
    positive: ClassVar[tuple[str, ...]] = ("total_bytes", "mss_bytes", "cbr_interval_ms", "buffer_packets",
                                           "min_rto_ms", "delack_timeout_ms")

    # --- stated by the study ---
    flows: tuple[int, ...] = (1, 2, 6)
    initial_windows: tuple[int, ...] = (3, 10)
    jitter_buffers_ms: tuple[float, ...] = (40.0, 60.0, 80.0, 100.0)
    replications: int = 50
    total_bytes: int = 372_000  # "sizes add up to 372 kB" (kB read as 1000 bytes)
    tcp_start_s: float = 10.0  # TCP flows start uniformly in [10, 12] s
    tcp_start_spread_s: float = 2.0
    mss_bytes: int = 1460
    cbr_payload_bytes: int = 40  # voice payload; RTP adds 12 bytes, UDP 8, IPv4 20
    cbr_interval_ms: float = 20.0
    base_window_s: float = 2.0  # n: base delay from the n seconds before observation
    # --- chosen here (the study does not state them) ---
    bottleneck_rate_bps: float = 2e6  # chosen: access downlink
    uplink_rate_bps: float = 512e3  # chosen: access uplink (carries TCP ACKs)
    one_way_delay_ms: float = 25.0  # chosen: base one-way propagation delay, server to client
    server_link_rate_bps: float = 100e6  # chosen: server to access router
    server_link_delay_ms: float = 1.0  # chosen: part of the 25 ms
    buffer_packets: int = 50  # chosen: drop-tail buffer of the downlink
    # The access links compared: "wired" (the fixed downlink above) and
    # "cellular" (a trace-driven downlink with its own buffer).
    accesses: tuple[str, ...] = ("wired", "cellular")
    cellular_trace: str = "lte-2mbps"  # chosen: a builtin trace (mediasim trace list) or a Mahimahi file
    cellular_buffer_packets: int = 200  # chosen: cellular per-user buffers are deeper than wired ones
    observation_s: tuple[float, float] = (10.0, 20.0)  # chosen: voice packets sent in this window are judged
    min_rto_ms: float = 1000.0  # chosen: RFC 6298 minimum RTO
    tcp_flavor: str = "sack"  # SACK-based recovery (stated), RFC 6675
    delack_timeout_ms: float = 200.0  # chosen: RFC 5681 upper bound commonly used
    rtp_header_bytes: int = 12
    seed: int = 1

    @property
    def duration_s(self) -> float:
        """The run length over the wired access: past the observation
        window by 1 s, or by whole seconds enough for a judged packet sent
        at its end to arrive behind a full buffer (the base delay and the
        buffer's packets at the bottleneck rate, with half a second to
        spare), whichever is longer. At the defaults, 25 ms + 50 x 1500 B
        at 2 Mbit/s = 0.33 s: 1 s."""
        full_buffer_s = self.buffer_packets * self.packet_bits / self.bottleneck_rate_bps
        return self.observation_s[1] + max(1.0, math.ceil(self.one_way_delay_ms / 1e3 + full_buffer_s + 0.5))

    @property
    def packet_bits(self) -> int:
        """A full TCP segment on the wire (TCP and IPv4 headers, 40 bytes)."""
        return (self.mss_bytes + 40) * 8

    def access_duration_s(self, access: str) -> float:
        """The run length over ``access``: the wired run's, plus for the
        cellular access the time its full buffer takes to drain at the
        trace's lowest rate (its lowest 1 s window), so that every judged
        voice packet is delivered or dropped."""
        if access == "wired":
            return self.duration_s
        rate = min_rate_bps(self.cellular_ms())
        return self.duration_s + math.ceil(self.cellular_buffer_packets * self.packet_bits / rate)

    def cellular_ms(self) -> list[int]:
        """The cellular downlink's opportunities (a builtin trace or a file)."""
        if self.cellular_trace in traces.BUILTIN:
            return traces.builtin(self.cellular_trace, "cellular_trace")
        return traces.read(self.cellular_trace, "cellular_trace")

    def quick(self) -> "Params":
        """A small version for tests: 4 replications, same set-up."""
        return dataclasses.replace(self, replications=4)


    def check_more(self) -> list[str]:
        problems = []
        if min(self.flows) < 1:
            problems.append("flows must be positive counts")
        if min(self.initial_windows) < 1:
            problems.append("initial_windows must be at least 1 segment")
        if self.observation_s[0] - self.base_window_s < 0:
            problems.append("base_window_s reaches before time 0")
        if self.observation_s[1] <= self.observation_s[0]:
            problems.append("observation_s must be (start, end) with start < end")
        if self.server_link_delay_ms >= self.one_way_delay_ms:
            problems.append("one_way_delay_ms must exceed server_link_delay_ms")
        unknown = set(self.accesses) - {"wired", "cellular"}
        if unknown:
            problems.append(f"accesses must be among wired, cellular (got {', '.join(self.accesses)})")
        if "cellular" in self.accesses:
            try:
                if min_rate_bps(self.cellular_ms()) <= 0:
                    problems.append("cellular_trace has a second without capacity: no run length bounds its queue")
            except ScenarioError as e:
                problems.append(f"cellular_trace: {e.errors[0][1] if e.errors else e}")
        # The engine's own bounds, said here in the study's terms.
        if self.tcp_start_s + self.tcp_start_spread_s >= self.duration_s:
            problems.append(f"tcp_start_s + tcp_start_spread_s must be before the run ends at {self.duration_s:g} s "
                            f"(got {self.tcp_start_s + self.tcp_start_spread_s:g})")
        if (udp := self.cbr_payload_bytes + self.rtp_header_bytes) > 65507:
            problems.append(f"cbr_payload_bytes + rtp_header_bytes must be at most 65507, a UDP payload (got {udp})")
        if self.min_rto_ms > 60_000:  # the engine's maximum RTO, RFC 6298 (2.5)
            problems.append(f"min_rto_ms must be at most 60000, TCP's maximum RTO (got {self.min_rto_ms:g})")
        if self.total_bytes < max(self.flows):
            problems.append(f"total_bytes must give each of {max(self.flows)} flows a byte (got {self.total_bytes})")
        if self.cellular_buffer_packets < 1:
            problems.append("cellular_buffer_packets must be at least 1")
        if self.tcp_flavor not in ("reno", "newreno", "sack"):
            problems.append(f"tcp_flavor must be reno, newreno or sack (got {self.tcp_flavor!r})")
        return problems


def min_rate_bps(ms: list[int]) -> float:
    """A trace's lowest capacity over whole 1 s windows of one pass."""
    per_s = np.bincount((np.asarray(ms) - 1) // 1000, minlength=max(1, ms[-1] // 1000))
    return float(per_s[: max(1, ms[-1] // 1000)].min()) * traces.OPPORTUNITY_BYTES * 8


def scenario(p: Params, n_flows: int, iw: int, access: str = "wired") -> Scenario:
    """One configuration: server -> router -> client, voice plus n_flows
    TCP transfers downstream, over the wired access (a fixed downlink) or
    the cellular one (the trace's downlink with its own buffer; the same
    uplink and delays)."""
    suffix = "" if access == "wired" else f"-{access}"
    sc = Scenario(f"iw10-{n_flows}flows-iw{iw}{suffix}", duration_s=p.access_duration_s(access))
    sc.data["description"] = f"IW10 study: CBR voice and short TCP transfers over a {access} access link"
    sc.node("server").node("router").node("client")
    sc.link("server", "router", rate_bps=p.server_link_rate_bps, delay_ms=p.server_link_delay_ms,
            queue={"type": "droptail", "limit_packets": 1000})
    delay_ms = p.one_way_delay_ms - p.server_link_delay_ms
    if access == "wired":
        sc.link("router", "client", name="access", rate_bps=p.bottleneck_rate_bps, delay_ms=delay_ms,
                queue={"type": "droptail", "limit_packets": p.buffer_packets},
                ba={"rate_bps": p.uplink_rate_bps})
    else:
        trace = ({"builtin": p.cellular_trace} if p.cellular_trace in traces.BUILTIN
                 else {"file": str(p.cellular_trace)})
        sc.link("router", "client", name="access", rate_bps=None, delay_ms=delay_ms,
                ab={"trace": trace, "queue": {"type": "droptail", "limit_packets": p.cellular_buffer_packets}},
                ba={"rate_bps": p.uplink_rate_bps})
    sc.flow("voice", "cbr", src="server", dst="client", payload_bytes=p.cbr_payload_bytes + p.rtp_header_bytes,
            interval_ms=p.cbr_interval_ms, start_s=0.0)
    sizes = [p.total_bytes // n_flows] * n_flows
    sizes[0] += p.total_bytes - sum(sizes)
    for i, size in enumerate(sizes):
        sc.flow(f"tcp{i}", "tcp", src="server", dst="client", bytes=size,
                start_s=p.tcp_start_s, start_jitter_s=p.tcp_start_spread_s,
                tcp={"flavor": p.tcp_flavor, "initial_window": iw, "mss_bytes": p.mss_bytes,
                     "min_rto_ms": p.min_rto_ms, "delayed_ack": True, "limited_transmit": True,
                     "delack_timeout_ms": p.delack_timeout_ms})
    sc.measure(packets=True)  # the voice analysis reads every packet's delay
    return sc


def voice_delays(res, p: Params) -> tuple[np.ndarray, np.ndarray]:
    """Send times and one-way delays (NaN if never delivered) of every voice
    packet, in sequence order."""
    sent = int(res.flows.set_index("flow").loc["voice", "sent"])
    seq_sent_s = np.arange(sent) * p.cbr_interval_ms / 1e3
    delay = np.full(sent, np.nan)
    pk = res.packets[res.packets["flow"] == "voice"]
    delay[pk["seq"].to_numpy().astype(np.int64)] = pk["delay_ms"].to_numpy() / 1e3
    return seq_sent_s, delay


def analyse(res, job: Job) -> list[dict[str, Any]]:
    """Per-run rows: one per jitter buffer size. Runs in the worker."""
    p: Params = job.labels.pop("_params")
    sent_s, delay = voice_delays(res, p)
    t0, t1 = p.observation_s
    base = base_delay(sent_s, delay, t0 - p.base_window_s, t0)
    window = (sent_s >= t0) & (sent_s < t1)
    dropped = set(res.drops[res.drops["flow"] == "voice"]["seq"].astype(int))
    missing = [k for k in np.flatnonzero(window & np.isnan(delay)) if k not in dropped]
    if missing:
        raise RuntimeError(f"iw10: voice packets {missing[:5]} neither delivered nor dropped: run too short")
    tcp = res.tcp
    rows = []
    for jb in p.jitter_buffers_ms:
        m = quality_metrics(delay[window], base, jb / 1e3)
        rows.append({
            **job.labels,
            "replication": job.replication,
            "jitter_buffer_ms": jb,
            **m,
            "base_delay_ms": base * 1e3,
            "tcp_completion_mean_s": float(tcp["completion_time_s"].mean()),
            "tcp_completion_max_s": float(tcp["completion_time_s"].max()),
            "tcp_completed": float(tcp["completion_time_s"].notna().mean()),
            "tcp_retransmissions": float(tcp["retransmissions"].sum()),
            "tcp_timeouts": float(tcp["timeouts"].sum()),
        })
    return rows


def jobs(p: Params) -> list[Job]:
    out = []
    for access in p.accesses:
        for n in p.flows:
            for iw in p.initial_windows:
                data = scenario(p, n, iw, access).to_dict()
                for r in range(p.replications):
                    labels = {"access": access, "flows": n, "iw": iw, "_params": p}
                    out.append(Job(data, seed=p.seed, replication=r, labels=labels))
    return out


METRICS = [f"level_{lv}" for lv in LEVELS] + ["good_quality", "pure_loss", "delayed_loss", "loss"]


def study_jobs(p: Params) -> list[Job]:
    """Every run ``reproduce(p, ...)`` makes, in its order (the
    ``StudyModule`` contract)."""
    return jobs(p)


def aggregate(rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    keys = ["access", "flows", "iw", "jitter_buffer_ms"]
    bounds = {m: (0.0, 1.0) for m in METRICS}
    summary = summarize(rows, keys, METRICS, bounds=bounds)
    levels = []
    for _, r in summary.iterrows():
        for lv in LEVELS:
            levels.append({
                "access": r["access"], "flows": int(r["flows"]), "iw": int(r["iw"]),
                "jitter_buffer_ms": r["jitter_buffer_ms"], "level": lv,
                "share_mean": r[f"level_{lv}_mean"], "share_ci_low": r[f"level_{lv}_ci_low"],
                "share_ci_high": r[f"level_{lv}_ci_high"],
            })
    tcp = summarize(rows[rows["jitter_buffer_ms"] == rows["jitter_buffer_ms"].min()], ["access", "flows", "iw"],
                    ["tcp_completion_mean_s", "tcp_completion_max_s", "tcp_completed", "tcp_retransmissions",
                     "tcp_timeouts", "base_delay_ms"])
    cols = keys + ["n"] + [f"{m}_{s}" for m in ("good_quality", "pure_loss", "delayed_loss") for s in ("mean", "ci_low", "ci_high")]
    for df in (summary, tcp):
        df[["flows", "iw"]] = df[["flows", "iw"]].astype(int)
    return {"summary": summary[cols], "quality_levels": pd.DataFrame(levels), "tcp": tcp, "all_metrics": summary,
            "conclusions": conclusions(summary)}


def conclusions(summary: pd.DataFrame) -> pd.DataFrame:
    """The study's three conclusions, checked per access on the mean good
    quality (levels 0 and 1), each held or not with its figures:
    1. IW10 is more harmful than IW3: lower good quality with IW10 on
       average over the (flows, jitter buffer) pairs, and in most of them;
    2. many parallel flows are harmful even with IW3: with IW3, the most
       flows give lower good quality than one flow on average, and at most
       jitter buffers;
    3. larger jitter buffers reduce the harm: for every (flows, IW), good
       quality at the largest buffer is at least that at the smallest, and
       higher on average."""
    out = []
    for access, s in summary.groupby("access", sort=False):
        gq = s.set_index(["flows", "iw", "jitter_buffer_ms"])["good_quality_mean"]
        iws, flows, jbs = (sorted(s[k].unique()) for k in ("iw", "flows", "jitter_buffer_ms"))
        rows = []
        if 3 in iws and 10 in iws:
            a = s[s["iw"] == 3].set_index(["flows", "jitter_buffer_ms"])["good_quality_mean"]
            b = s[s["iw"] == 10].set_index(["flows", "jitter_buffer_ms"])["good_quality_mean"]
            lower = int((b < a).sum())
            held = b.mean() < a.mean() and lower > len(a) / 2
            rows.append(("IW10 is more harmful than IW3", held,
                         f"good quality {a.mean():.4f} (IW3) vs {b.mean():.4f} (IW10) on average; "
                         f"IW10 lower in {lower} of {len(a)} (flows, jitter buffer) pairs"))
        if 3 in iws and len(flows) > 1:
            few, many = flows[0], flows[-1]
            a = pd.Series([gq[(few, 3, jb)] for jb in jbs], index=jbs)
            b = pd.Series([gq[(many, 3, jb)] for jb in jbs], index=jbs)
            lower = int((b < a).sum())
            held = b.mean() < a.mean() and lower > len(jbs) / 2
            rows.append((f"many parallel flows are harmful even with IW3 ({many} vs {few})", held,
                         f"good quality {a.mean():.4f} ({few} flow(s)) vs {b.mean():.4f} ({many} flows) with IW3 "
                         f"on average; lower at {lower} of {len(jbs)} jitter buffers"))
        if len(jbs) > 1:
            small, large = jbs[0], jbs[-1]
            gain = [gq[(f, iw, large)] - gq[(f, iw, small)] for f in flows for iw in iws]
            held = min(gain) >= 0 and float(np.mean(gain)) > 0
            rows.append(("larger jitter buffers reduce the harm", held,
                         f"good quality up by {np.mean(gain):.4f} on average from {small:g} to {large:g} ms "
                         f"(smallest change {min(gain):.4f})"))
        for statement, held, figures in rows:
            out.append({"access": access, "statement": statement, "holds": "yes" if held else "no",
                        "figures": figures})
    return pd.DataFrame(out, columns=["access", "statement", "holds", "figures"])


@one_output("study")
def reproduce(p: Params, out: Path, workers: int | None = None, progress: bool = True, cache: Any = None,
              overwrite: bool = False) -> Path:
    p.check()
    results = run_many(jobs(p), workers=workers, progress=progress, desc="iw10 runs", analyse=analyse, cache=cache)
    rows = pd.DataFrame([r for rs in results for r in rs])
    rows.to_parquet(out / "replications.parquet", index=False)
    tables = aggregate(rows)
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
        df.to_parquet(out / f"{name}.parquet", index=False)
    plot_level_bars(tables["quality_levels"], out / "quality_levels.png")
    plot_good_quality(tables["summary"], out / "good_quality.png")
    if "cellular" in p.accesses:
        plot_trace(p.cellular_ms(), p.bottleneck_rate_bps, out / "cellular_trace.png")
    return write_report(p, tables, out)


def write_report(p: Params, tables: dict[str, pd.DataFrame], out: Path) -> Path:
    stated = {f.name for f in dataclasses.fields(Params)}
    params = pd.DataFrame(
        [{"parameter": k, "value": str(v)} for k, v in dataclasses.asdict(p).items() if k in stated]
    )
    s = tables["summary"]
    md = [
        "# IW10 versus interactive traffic",
        "",
        "Study: shared/experiments/iw10-interactive.md. Definition and chosen values: docs/experiments/iw10.md.",
        f"{p.replications} replications per configuration, seed {p.seed}, 95% Student-t confidence intervals "
        "(clipped to [0, 1]).",
        "",
        "## The study's conclusions, wired and cellular access",
        "",
        "Wired: a fixed downlink of the chosen rate and buffer. Cellular: the downlink follows the trace "
        f"`{p.cellular_trace}` (Mahimahi format, `cellular_trace.png`) with a drop-tail buffer of "
        f"{p.cellular_buffer_packets} packets; the same uplink, delays and flows.",
        "",
        md_table(tables["conclusions"]),
        "",
        "## Good quality (levels 0 and 1) and loss rates",
        "",
        md_table(s, 4),
        "",
        "## Quality level distribution",
        "",
        md_table(tables["quality_levels"].pivot_table(index=["access", "flows", "iw", "jitter_buffer_ms"], columns="level",
                                                      values="share_mean").reset_index(), 4),
        "",
        "## TCP transfers",
        "",
        md_table(tables["tcp"], 3),
        "",
        "Plots: `quality_levels.png` (stacked level shares), `good_quality.png` (good quality versus jitter buffer), "
        "one row or panel per access; `cellular_trace.png` (the cellular downlink's capacity).",
        "",
        "## Parameters",
        "",
        md_table(params),
        "",
    ]
    report = out / "report.md"
    report.write_text("\n".join(md))
    (out / "summary.md").write_text(md_table(s, 4) + "\n")
    return report
