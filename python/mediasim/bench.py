"""Benchmarks: fixed workloads, each run in a fresh process so that its peak
memory is its own. Prints simulated events, events per wall second,
delivered packets per wall second, wall time and peak RSS.

Workload "udp-dumbbell-N": N Poisson UDP flows of 1000-byte packets share a
10 Mbit/s, 20 ms bottleneck (drop-tail, 100 packets) behind 100 Mbit/s, 1 ms
access links, for 60 simulated seconds; total offered load is 1.1 x the
bottleneck, so the queue is busy and drops.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

BOTTLENECK_BPS = 10e6
ACCESS_BPS = 100e6
PAYLOAD = 1000 - 28  # 1000-byte IP packets
LOAD = 1.1


def dumbbell(n_flows: int, duration_s: float = 60.0) -> dict[str, Any]:
    nodes = [{"name": "r1"}, {"name": "r2"}]
    links = [
        {"name": "bottleneck", "a": "r1", "b": "r2", "rate_bps": BOTTLENECK_BPS, "delay_ms": 20.0,
         "queue": {"type": "droptail", "limit_packets": 100}},
    ]
    flows = []
    per_flow_bps = LOAD * BOTTLENECK_BPS * PAYLOAD / 1000 / n_flows
    for i in range(n_flows):
        s, d = f"s{i}", f"d{i}"
        nodes += [{"name": s}, {"name": d}]
        links += [
            {"a": s, "b": "r1", "rate_bps": ACCESS_BPS, "delay_ms": 1.0},
            {"a": "r2", "b": d, "rate_bps": ACCESS_BPS, "delay_ms": 1.0},
        ]
        flows.append({"name": f"f{i}", "type": "poisson", "src": s, "dst": d,
                      "payload_bytes": PAYLOAD, "rate_bps": per_flow_bps})
    return {"name": f"udp-dumbbell-{n_flows}", "duration_s": duration_s, "nodes": nodes, "links": links, "flows": flows}


def _child(n_flows: int, duration_s: float) -> None:
    """Runs one workload in this (fresh) process and prints its figures."""
    import resource
    import time

    import numpy  # noqa: F401  (the binding returns numpy arrays; load it outside the timing)

    from . import _engine

    sc = json.dumps(dumbbell(n_flows, duration_s))
    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    t0 = time.perf_counter()
    _tables, meta_json = _engine.run(sc, seed=1)
    wall = time.perf_counter() - t0
    meta = json.loads(meta_json)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({
        "workload": meta["scenario"],
        "flows": n_flows,
        "sim_s": duration_s,
        "events": meta["events"],
        "delivered": meta["delivered"],
        "wall_s": round(wall, 4),
        "engine_wall_s": round(meta["wall_s"], 4),
        "events_per_s": round(meta["events"] / wall),
        "delivered_per_s": round(meta["delivered"] / wall),
        "peak_rss_mb": round(rss_mb, 1),
        "baseline_rss_mb": round(base_mb, 1),
    }))


def run_benchmarks(quick: bool = False) -> list[dict[str, Any]]:
    cases = [(1, 5.0), (8, 5.0)] if quick else [(1, 60.0), (8, 60.0), (64, 60.0), (256, 60.0)]
    rows = []
    for n, dur in cases:
        proc = subprocess.run(
            [sys.executable, "-m", "mediasim.bench", str(n), str(dur)],
            capture_output=True, text=True, check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"benchmark with {n} flows failed:\n{proc.stderr}")
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return rows


if __name__ == "__main__":
    _child(int(sys.argv[1]), float(sys.argv[2]))
