"""Engine memory per flow and per packet in flight (``mediasim bench
--memory``).

Each figure is a slope: peak resident memory of a fresh process that runs
one scenario, against the number of flows or of packets held, so the
interpreter's own memory and the engine's fixed costs cancel out.

- Per TCP flow: the dumbbell of ``bench --vs-ns2`` with 256 to 4096 flows,
  2 simulated seconds (each flow brings its two hosts, their access links
  with queues and routes, sender, sink and result rows).
- Per packet queued: a 100 Mb/s CBR source into a 1 Mb/s link whose
  drop-tail queue has no practical limit, for 0.5 to 2 s (the queue grows
  by ~12,000 packets a second).
- Per packet propagating: a 1 Gb/s link with 1 to 4 s of delay, full of
  packets that have left its queue and not yet arrived.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any

from .bench import peak_rss_mb, tcp_dumbbell

PAYLOAD = 1000 - 28  # 1000-byte IP packets


def _line(name: str, rate_bps: float, link_bps: float, delay_ms: float, duration_s: float) -> dict[str, Any]:
    """A CBR source on a 10 Gb/s access link into link a-b."""
    return {
        "name": name, "duration_s": duration_s,
        "nodes": [{"name": "s"}, {"name": "a"}, {"name": "b"}],
        "links": [{"a": "s", "b": "a", "rate_bps": 10e9, "delay_ms": 0.001},
                  {"name": "line", "a": "a", "b": "b", "rate_bps": link_bps, "delay_ms": delay_ms,
                   "queue": {"type": "droptail", "limit_packets": 10_000_000}}],
        "flows": [{"name": "cbr", "type": "cbr", "src": "s", "dst": "b", "payload_bytes": PAYLOAD,
                   "rate_bps": rate_bps * PAYLOAD / 1000}],
    }


def scenario(kind: str, x: float) -> dict[str, Any]:
    if kind == "flows":
        return tcp_dumbbell(int(x), duration_s=2.0)
    if kind == "queued":
        return _line("queued", 100e6, 1e6, 1.0, duration_s=x)
    if kind == "propagating":
        return _line("propagating", 1e9, 1e9, x * 1000, duration_s=x)
    raise ValueError(f"unknown memory workload {kind!r}")


POINTS = {"flows": (256, 1024, 2048, 4096), "queued": (0.5, 1.0, 2.0), "propagating": (1.0, 2.0, 4.0)}


def _child(kind: str, x: float) -> None:
    """Runs one point in this fresh process; prints what it held and the
    memory that took."""
    from .. import _engine

    sc = json.dumps(scenario(kind, x))
    base = peak_rss_mb()
    _tables, meta_json = _engine.run(sc, seed=1, only=[], lists=True)
    meta = json.loads(meta_json)
    flows = sum(1 for f in json.loads(sc)["flows"] if f["type"] == "tcp")
    print(json.dumps({"kind": kind, "x": x, "flows": flows, "in_flight": meta["in_flight"],
                      "delta_mb": peak_rss_mb() - base}))


def _point(kind: str, x: float) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "mediasim.validation.memory_bench", kind, str(x)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"memory benchmark {kind} {x} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def engine_memory(quick: bool = False) -> list[dict[str, Any]]:
    """One row per figure: bytes per flow, per packet queued, per packet
    propagating, with the points it was fitted on."""
    rows = []
    for kind, points in POINTS.items():
        pts = [_point(kind, x) for x in (points[:2] if quick else points)]
        count = "flows" if kind == "flows" else "in_flight"
        xs = [float(p[count]) for p in pts]
        ys = [p["delta_mb"] * 2**20 for p in pts]
        rows.append({"figure": {"flows": "per TCP flow", "queued": "per packet queued",
                                "propagating": "per packet propagating"}[kind],
                     "bytes": round(statistics.linear_regression(xs, ys).slope),
                     "points": ", ".join(f"{int(x)}: {y / 2**20:.1f} MiB" for x, y in zip(xs, ys))})
    return rows


if __name__ == "__main__":
    _child(sys.argv[1], float(sys.argv[2]))
