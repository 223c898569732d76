"""Benchmarks: fixed workloads, each run in a fresh process so that its peak
memory is its own. Prints simulated events, events per wall second,
delivered packets per wall second, wall time and peak RSS.

Both workloads share one dumbbell: a 10 Mbit/s, 20 ms bottleneck (drop-tail,
100 packets) behind 100 Mbit/s, 1 ms access links, 60 simulated seconds,
1000-byte packets.

- "udp-dumbbell-N": N Poisson UDP flows offering 1.1 x the bottleneck.
- "tcp-dumbbell-N": N bulk TCP SACK flows (MSS 960, so data packets are
  1000 bytes on the wire; delayed ACKs) plus one 1 Mbit/s CBR flow, the
  workload of the ns-2 side-by-side (``mediasim.validation.ns2_compare``).
- "calls-N" (``--calls``): N video calls of 1 Mbit/s through a 100 Mbit/s
  bottleneck: RFC 8593's codec at 30 fps, paced, transport-wide feedback
  every 50 ms, adaptive playout; beside it "calls-rtp-N", the same
  sessions with constant RTP media (no frames, pacer, feedback or
  playout), and "calls-cbr-N", one CBR flow per path at the same rate and
  packet size. The figure to compare is the wall time per delivered media
  packet (`cost_vs_cbr`).
- "gcc-calls-N" (``--gcc-calls``): N GCC calls and 10 CUBIC flows through
  one 1 Gbit/s bottleneck (the RMCAT study's scale test); the figure is
  calls x simulated seconds per wall second; "rmcat-calls-N" (``--gcc-calls
  --mix``) the same with GCC, NADA and SCReAM calls in turn. Beside them
  "cbr-calls-N": the same paths and CUBIC flows with one CBR flow per call
  (0.9 Mbit/s, the calls' packet size), what the network alone costs at
  that scale (`cost_vs_cbr`, per delivered media packet, as for `--calls`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

BOTTLENECK_BPS = 10e6
ACCESS_BPS = 100e6
PAYLOAD = 1000 - 28  # 1000-byte IP packets
LOAD = 1.1


def _dumbbell_base(name: str, n_pairs: int, duration_s: float, extra_pair: bool) -> dict[str, Any]:
    """The shared topology: r1 -(bottleneck)- r2, and n_pairs sender/receiver
    pairs s<i> -> r1, r2 -> d<i> on access links (plus cs/cd if extra_pair)."""
    nodes = [{"name": "r1"}, {"name": "r2"}]
    links = [{"name": "bottleneck", "a": "r1", "b": "r2", "rate_bps": BOTTLENECK_BPS, "delay_ms": 20.0,
              "queue": {"type": "droptail", "limit_packets": 100}}]
    pairs = ([("cs", "cd")] if extra_pair else []) + [(f"s{i}", f"d{i}") for i in range(n_pairs)]
    for s, d in pairs:
        nodes += [{"name": s}, {"name": d}]
        links += [{"a": s, "b": "r1", "rate_bps": ACCESS_BPS, "delay_ms": 1.0},
                  {"a": "r2", "b": d, "rate_bps": ACCESS_BPS, "delay_ms": 1.0}]
    return {"name": name, "duration_s": duration_s, "nodes": nodes, "links": links, "flows": []}


def dumbbell(n_flows: int, duration_s: float = 60.0) -> dict[str, Any]:
    sc = _dumbbell_base(f"udp-dumbbell-{n_flows}", n_flows, duration_s, extra_pair=False)
    per_flow_bps = LOAD * BOTTLENECK_BPS * PAYLOAD / 1000 / n_flows
    sc["flows"] = [{"name": f"f{i}", "type": "poisson", "src": f"s{i}", "dst": f"d{i}",
                    "payload_bytes": PAYLOAD, "rate_bps": per_flow_bps} for i in range(n_flows)]
    return sc


CBR_BPS = 1e6  # chosen: the CBR flow of the TCP dumbbell


def tcp_dumbbell(n_flows: int, duration_s: float = 60.0, flavor: str = "sack") -> dict[str, Any]:
    sc = _dumbbell_base(f"tcp-dumbbell-{n_flows}", n_flows, duration_s, extra_pair=True)
    sc["flows"] = [{"name": "cbr", "type": "cbr", "src": "cs", "dst": "cd", "payload_bytes": PAYLOAD,
                    "rate_bps": CBR_BPS * PAYLOAD / 1000}]
    sc["flows"] += [{"name": f"tcp{i}", "type": "tcp", "src": f"s{i}", "dst": f"d{i}",
                     "tcp": {"flavor": flavor, "mss_bytes": 960, "rwnd_bytes": 1 << 24}} for i in range(n_flows)]
    return sc


GROUP_FANOUT = 100  # chosen: members per second-level router
GROUP_BW_BPS = 64e3  # chosen: session bandwidth of the large-group workload
GROUP_PAYLOAD = 1000  # chosen: media payload bytes (about 7.5 packets/s)


def rtp_group(n_members: int, duration_s: float = 500.0) -> dict[str, Any]:
    """One multicast RTP/AVPF session of ``n_members`` (member 0 the only
    media sender) on a two-level tree: a root router, one router per
    ``GROUP_FANOUT`` members under it, each member on its own access link.
    Everyone joins at 0 s (a step join). No packets table (memory stays
    flat over simulated time)."""
    nodes = [{"name": "root"}]
    links = []
    members = []
    for j in range(n_members):
        r = f"r{j // GROUP_FANOUT}"
        if j % GROUP_FANOUT == 0:
            nodes.append({"name": r})
            links.append({"a": "root", "b": r, "rate_bps": 100e6, "delay_ms": 5.0})
        m = f"m{j}"
        nodes.append({"name": m})
        links.append({"a": r, "b": m, "rate_bps": 10e6, "delay_ms": 5.0})
        members.append({"node": m, "media": j == 0})
    return {
        "name": f"rtp-group-{n_members}", "duration_s": duration_s, "nodes": nodes, "links": links,
        # No per-packet log: memory stays flat over the 500 s.
        "measure": {"packets": False},
        "rtp_sessions": [{"name": "g", "transport": "multicast", "session_bw_bps": GROUP_BW_BPS,
                          "media_payload_bytes": GROUP_PAYLOAD, "members": members}],
    }


RMTP_RECEIVERS_PER_DR = 100  # 10,000 receivers under 100 DRs


def rmtp_tree(n_receivers: int, duration_s: float = 500.0) -> dict[str, Any]:
    """One RMTP session: a sender, ``n_receivers / 100`` DRs each on its own
    link from the sender, 100 receivers under each on their own links; the
    RMTP study's scenario 4 links and losses (1 Mbit/s and 40 ms to a DR,
    512 kbit/s and 10 ms to a receiver; 5% loss at DRs, 1% at receivers).
    No packets table."""
    n_dr = max(1, n_receivers // RMTP_RECEIVERS_PER_DR)
    nodes: list[dict[str, Any]] = [{"name": "s"}]
    links: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    for d in range(n_dr):
        dr = f"d{d}"
        nodes.append({"name": dr, "receiver_loss": {"type": "packet", "rate": 0.05}})
        links.append({"a": "s", "b": dr, "rate_bps": 1e6, "delay_ms": 40.0})
        rs = [f"r{d}_{i}" for i in range(RMTP_RECEIVERS_PER_DR)]
        for r in rs:
            nodes.append({"name": r, "receiver_loss": {"type": "packet", "rate": 0.01}})
            links.append({"a": dr, "b": r, "rate_bps": 512e3, "delay_ms": 10.0})
        groups.append({"dr": dr, "receivers": rs})
    return {
        "name": f"rmtp-tree-{n_dr * RMTP_RECEIVERS_PER_DR}", "duration_s": duration_s, "nodes": nodes,
        "links": links, "measure": {"packets": False},
        "rmtp_sessions": [{"name": "m", "sender": "s", "subgroups": groups}],
    }


CALLS_BOTTLENECK_BPS = 100e6  # chosen: the calls' bottleneck (64 x ~1 Mbit/s fit)
CALL_BPS = 1e6  # chosen: each call's media rate on the wire
CALL_PACKET_BYTES = 1200  # the frame path's default largest packet
CALL_TRR_MS = 1000.0  # chosen: AVPF's T_rr_interval in the calls


def _calls_base(name: str, n: int, duration_s: float) -> dict[str, Any]:
    sc = _dumbbell_base(name, n, duration_s, extra_pair=False)
    sc["links"][0]["rate_bps"] = CALLS_BOTTLENECK_BPS
    sc["links"][0]["queue"] = {"type": "droptail", "limit_packets": 1000}
    return sc


def calls(n_calls: int, duration_s: float = 60.0) -> dict[str, Any]:
    """n video calls s<i> -> d<i>: RFC 8593's codec at 30 fps, paced (2.5 x,
    5 ms), transport-wide feedback every 50 ms, an adaptive playout buffer;
    AVPF with T_rr_interval 1 s (regular reports about once a second, as
    libwebrtc sends them for video)."""
    sc = _calls_base(f"calls-{n_calls}", n_calls, duration_s)
    sc["rtp_sessions"] = [
        {"name": f"c{i}", "transport": "unicast", "session_bw_bps": CALL_BPS,
         "media_payload_bytes": CALL_PACKET_BYTES - 40, "avpf": {"trr_interval_ms": CALL_TRR_MS},
         "members": [{"node": f"s{i}", "media": True, "source": {"type": "synthetic", "fps": 30},
                      "pacer": {}, "feedback": {"format": "twcc", "interval_ms": 50}},
                     {"node": f"d{i}", "playout": {"adaptive": True}}]}
        for i in range(n_calls)]
    return sc


def calls_rtp(n_calls: int, duration_s: float = 60.0) -> dict[str, Any]:
    """The same sessions with today's constant RTP media: no frames, pacer,
    per-packet feedback or playout (what the RTP session itself costs)."""
    sc = calls(n_calls, duration_s)
    sc["name"] = f"calls-rtp-{n_calls}"
    for s in sc["rtp_sessions"]:
        s["members"] = [{"node": m["node"], "media": m.get("media", False)} for m in s["members"]]
    return sc


def calls_cbr(n_calls: int, duration_s: float = 60.0) -> dict[str, Any]:
    """The same paths with one CBR flow each at the calls' rate and packet size."""
    sc = _calls_base(f"calls-cbr-{n_calls}", n_calls, duration_s)
    sc["flows"] = [{"name": f"f{i}", "type": "cbr", "src": f"s{i}", "dst": f"d{i}",
                    "payload_bytes": CALL_PACKET_BYTES - 28, "rate_bps": CALL_BPS * (CALL_PACKET_BYTES - 28)
                    / CALL_PACKET_BYTES} for i in range(n_calls)]
    return sc


def _calls_without(*parts: str):
    """The calls workload with some of its parts off: "feedback", "playout",
    "pacer", and "source" (constant frames: one packet per interval)."""
    def make(n_calls: int, duration_s: float = 60.0) -> dict[str, Any]:
        sc = calls(n_calls, duration_s)
        sc["name"] = f"calls-{n_calls}-no-" + "-".join(parts)
        for s in sc["rtp_sessions"]:
            sender, receiver = s["members"]
            for part in ("feedback", "pacer"):
                if part in parts:
                    sender.pop(part)
            if "playout" in parts:
                receiver.pop("playout")
            if "source" in parts:
                sender["source"] = {"type": "constant"}
        return sc
    return make


#: The calls workload's parts switched off one at a time, then all.
CALL_PARTS = {"calls_no_feedback": ("feedback",), "calls_no_playout": ("playout",), "calls_no_pacer": ("pacer",),
              "calls_bare": ("feedback", "playout", "pacer", "source")}

GCC_CALLS_BOTTLENECK_BPS = 1e9  # the issue's scale: one 1 Gbit/s bottleneck
GCC_CALLS_TCP_FLOWS = 10  # chosen: CUBIC bulk flows beside the calls


#: Each controller's member fields in the scale workloads: (cc, feedback,
#: pacer), as the RMCAT study runs them (docs/experiments/rmcat.md).
SCALE_CONTROLLERS = {
    "gcc": ({"type": "gcc"}, {"format": "twcc", "interval_ms": 50}, {}),
    "nada": ({"type": "nada"}, {"format": "rfc8888", "interval_ms": 100}, {"factor": 1.0}),
    "scream": ({"type": "scream"}, {"format": "rfc8888", "interval_ms": 50}, {"factor": 1.0, "burst_ms": 0}),
}


def _scale_paths(name: str, n_calls: int, duration_s: float) -> dict[str, Any]:
    """The scale workloads' network: a path s<i> -> d<i> per call, and
    ``GCC_CALLS_TCP_FLOWS`` CUBIC flows on paths of their own, through one
    1 Gbit/s, 20 ms bottleneck with 300 ms of drop-tail queue (RFC 8867's
    sizing); no packets table."""
    sc = _dumbbell_base(name, n_calls + GCC_CALLS_TCP_FLOWS, duration_s, extra_pair=False)
    sc["links"][0]["rate_bps"] = GCC_CALLS_BOTTLENECK_BPS
    sc["links"][0]["queue"] = {"type": "droptail", "limit_bytes": int(GCC_CALLS_BOTTLENECK_BPS * 0.3 / 8)}
    sc["measure"] = {"packets": False}
    sc["flows"] = [{"name": f"tcp{k}", "type": "tcp", "src": f"s{n_calls + k}", "dst": f"d{n_calls + k}",
                    "cc": {"type": "cubic"}} for k in range(GCC_CALLS_TCP_FLOWS)]
    return sc


def _cc_calls(name: str, n_calls: int, duration_s: float, controllers: list[str]) -> dict[str, Any]:
    """n video calls (RFC 8593's codec at 30 fps, paced, per-packet
    feedback, adaptive playout; 150 kbit/s to 1.5 Mbit/s), the i-th with
    ``controllers[i % len(controllers)]``, on ``_scale_paths``."""
    sc = _scale_paths(name, n_calls, duration_s)
    sessions = []
    for i in range(n_calls):
        cc, feedback, pacer = SCALE_CONTROLLERS[controllers[i % len(controllers)]]
        sessions.append(
            {"name": f"c{i}", "transport": "unicast", "session_bw_bps": 1.5e6,
             "media_payload_bytes": CALL_PACKET_BYTES - 40, "avpf": {"trr_interval_ms": CALL_TRR_MS},
             "members": [{"node": f"s{i}", "media": True, "source": {"type": "synthetic", "fps": 30},
                          "pacer": dict(pacer), "feedback": dict(feedback), "cc": dict(cc)},
                         {"node": f"d{i}", "playout": {"adaptive": True}}]})
    sc["rtp_sessions"] = sessions
    return sc


SCALE_CBR_BPS = 0.9e6  # chosen: 1,000 of them fill 90% of the 1 Gbit/s bottleneck


def cbr_calls(n_calls: int, duration_s: float = 300.0) -> dict[str, Any]:
    """The scale workloads' paths and CUBIC flows (``_scale_paths``) with
    one CBR flow per call instead of the call, ``SCALE_CBR_BPS`` on the wire
    in packets of the calls' size: what the network alone costs at that
    scale."""
    sc = _scale_paths(f"cbr-calls-{n_calls}", n_calls, duration_s)
    payload = CALL_PACKET_BYTES - 28
    sc["flows"] = [{"name": f"f{i}", "type": "cbr", "src": f"s{i}", "dst": f"d{i}", "payload_bytes": payload,
                    "rate_bps": SCALE_CBR_BPS * payload / CALL_PACKET_BYTES} for i in range(n_calls)] + sc["flows"]
    return sc


def gcc_calls(n_calls: int, duration_s: float = 300.0) -> dict[str, Any]:
    """n GCC calls and the CUBIC flows (``_cc_calls``)."""
    return _cc_calls(f"gcc-calls-{n_calls}", n_calls, duration_s, ["gcc"])


def rmcat_calls(n_calls: int, duration_s: float = 300.0) -> dict[str, Any]:
    """n calls, GCC, NADA and SCReAM in turn, and the CUBIC flows."""
    return _cc_calls(f"rmcat-calls-{n_calls}", n_calls, duration_s, ["gcc", "nada", "scream"])


WORKLOADS = {"udp": dumbbell, "tcp": tcp_dumbbell, "rtp_group": rtp_group, "rmtp": rmtp_tree,
             "calls": calls, "calls_rtp": calls_rtp, "calls_cbr": calls_cbr, "gcc_calls": gcc_calls,
             "rmcat_calls": rmcat_calls, "cbr_calls": cbr_calls,
             **{k: _calls_without(*v) for k, v in CALL_PARTS.items()}}


def peak_rss_mb() -> float:
    """Peak resident memory of this process. VmHWM belongs to the address
    space, so unlike ru_maxrss it does not inherit the parent's peak across
    fork + exec."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _child(workload: str, n_flows: int, duration_s: float, partitions: int = 1) -> None:
    """Runs one workload in this (fresh) process, split into ``partitions``,
    and prints its figures."""
    import time

    import numpy  # noqa: F401  (the binding returns numpy arrays; load it outside the timing)

    from .. import _engine

    scenario = WORKLOADS[workload](n_flows, duration_s)
    if partitions > 1:
        scenario["parallel"] = {"partitions": partitions}
    sc = json.dumps(scenario)
    base_mb = peak_rss_mb()
    t0 = time.perf_counter()
    _tables, meta_json = _engine.run(sc, seed=1)
    wall = time.perf_counter() - t0
    meta = json.loads(meta_json)
    rss_mb = peak_rss_mb()
    # Media packets delivered: the RTP flows of calls, every flow otherwise.
    flows = _tables["flows"]
    codes, names = flows["flow"]
    kinds = flows["kind"]
    kind_of = (lambda i: kinds[1][kinds[0][i]]) if isinstance(kinds, tuple) else (lambda i: kinds[i])
    media = [i for i in range(len(codes)) if kind_of(i) in ("rtp", "cbr", "poisson", "tcp")]
    media_delivered = int(sum(flows["received"][i] for i in media))
    print(json.dumps({
        "workload": meta["scenario"],
        "flows": n_flows,
        "partitions": partitions,
        "sim_s": duration_s,
        "events": meta["events"],
        "delivered": meta["delivered"],
        "wall_s": round(wall, 4),
        "engine_wall_s": round(meta["wall_s"], 4),
        "events_per_s": round(meta["events"] / wall),
        "delivered_per_s": round(meta["delivered"] / wall),
        "wall_us_per_delivered": round(wall / max(meta["delivered"], 1) * 1e6, 3),
        "media_delivered": media_delivered,
        "wall_us_per_media_packet": round(wall / max(media_delivered, 1) * 1e6, 3),
        "peak_rss_mb": round(rss_mb, 1),
        "baseline_rss_mb": round(base_mb, 1),
    }))


def run_benchmarks(quick: bool = False, workloads: tuple[str, ...] = ("udp", "tcp")) -> list[dict[str, Any]]:
    sizes = [(1, 5.0), (8, 5.0)] if quick else [(1, 60.0), (8, 60.0), (64, 60.0), (256, 60.0)]
    rows = []
    for w in workloads:
        for n, dur in sizes:
            rows.append(run_one(w, n, dur))
    return rows


CALLS_ROUNDS = 5  # chosen: rounds of the calls comparison (the fastest of each is kept)


def run_calls(quick: bool = False, parts: bool = False) -> list[dict[str, Any]]:
    """The calls workload beside CBR flows on the same paths, with the
    ratio of their wall time per delivered media packet. The three
    workloads run in turn for ``CALLS_ROUNDS`` rounds (one when quick),
    each in a fresh process, and each keeps its fastest round: on a shared
    host, load comes in spells that a single run of each would put on one
    workload and not the others. With ``parts``, the calls with each of
    their parts off (``CALL_PARTS``) run among them: what each part
    costs."""
    n, dur = (8, 5.0) if quick else (64, 60.0)
    names = ("calls", *(CALL_PARTS if parts else ()), "calls_rtp", "calls_cbr")
    best: dict[str, dict[str, Any]] = {}
    for _ in range(1 if quick else CALLS_ROUNDS):
        for w in names:
            row = run_one(w, n, dur)
            if w not in best or row["wall_s"] < best[w]["wall_s"]:
                best[w] = row
    return _with_cost_vs_cbr([best[w] for w in names])


COUNTS_SIM_S = (10.0, 20.0)  # chosen: the two durations whose difference --counts takes


def run_calls_counts(quick: bool = False, parts: bool = False) -> list[dict[str, Any]]:
    """The workloads of `run_calls`, counted by valgrind's cache simulator
    instead of timed (cache_counts.py): instructions, first- and
    second-level cache misses and mispredicted branches per delivered media
    packet, beside the CBR flows'. Quick: 8 calls, 1 and 2 simulated seconds."""
    from .cache_counts import run_counts

    n, durations = (8, (1.0, 2.0)) if quick else (64, COUNTS_SIM_S)
    names = ["calls", *(CALL_PARTS if parts else ()), "calls_rtp", "calls_cbr"]
    return run_counts(names, n, durations)


def check_two_durations(workloads: list[str], durations: tuple[float, float]) -> None:
    """The workloads known and the durations of a steady-state difference
    (--counts, --profile) in order: a ValueError naming what is wrong."""
    for w in workloads:
        if w not in WORKLOADS:
            raise ValueError(f"unknown workload {w!r}")
    if not 0 < durations[0] < durations[1]:
        raise ValueError(f"durations {durations}: expected 0 < shorter < longer")


PROFILE_SIM_S = (60.0, 600.0)  # chosen: the calls' durations sampled by perf (--profile)


def run_calls_profile(quick: bool = False, parts: bool = False) -> list[dict[str, Any]]:
    """The workloads of `run_calls` sampled by perf instead of timed whole
    (wall_profile.py): a delivered media packet's time in each part of the
    simulator, beside the CBR flows'. Quick: 8 calls, 10 and 200 simulated
    seconds."""
    from .wall_profile import run_profiles

    n, durations = (8, (10.0, 200.0)) if quick else (64, PROFILE_SIM_S)
    names = ["calls", *(CALL_PARTS if parts else ()), "calls_rtp", "calls_cbr"]
    return run_profiles(names, n, durations)


def _with_cost_vs_cbr(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adds each row's wall time per delivered media packet over the last
    row's (the CBR flows on the same paths)."""
    cbr = max(rows[-1]["wall_us_per_media_packet"], 1e-9)
    for r in rows:
        r["cost_vs_cbr"] = round(r["wall_us_per_media_packet"] / cbr, 3)
    return rows


def run_scale_calls(quick: bool = False, mix: bool = False, partitions: int = 1) -> list[dict[str, Any]]:
    """1,000 GCC calls (with ``mix``, GCC, NADA and SCReAM in turn) for
    300 s, then CBR on the same paths (``cbr_calls``), each in a fresh
    process and split into ``partitions``: calls x simulated seconds per
    wall second, and the cost per delivered media packet against CBR's.
    Quick: 50 calls for 10 s."""
    n, dur = (50, 10.0) if quick else (1000, 300.0)
    rows = [run_one(w, n, dur, partitions) for w in ("rmcat_calls" if mix else "gcc_calls", "cbr_calls")]
    for row in rows:
        row["call_s_per_wall_s"] = round(n * dur / row["wall_s"], 1)
    return _with_cost_vs_cbr(rows)


def run_one(workload: str, n: int, dur: float, partitions: int = 1) -> dict[str, Any]:
    """One workload in a fresh process (split into ``partitions``). numpy's OpenBLAS is held to one
    thread there: the child does no linear algebra, and on a two-core host
    idle BLAS threads spinning beside the engine showed in its profiles."""
    proc = subprocess.run(
        [sys.executable, "-m", "mediasim.validation.bench", workload, str(n), str(dur), str(partitions)],
        capture_output=True, text=True, check=False, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark {workload} with {n} flows failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 1)
