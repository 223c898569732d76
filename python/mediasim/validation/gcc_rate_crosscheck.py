"""Cross-check of GCC's delay-based rate estimate against aiortc's
``RemoteBitrateEstimator`` (a Python port of libwebrtc's receive-side
estimator: inter-arrival grouping, its two-state Kalman filter, the
overuse detector and AIMD rate control), on the same packet timings.

mediasim runs one GCC call on RFC 8867 case 5.1's pattern, shortened (a
bottleneck of 1 Mbit/s, 0.6 at 30 s, 1 again at 50 s; 70 s; 50 ms one way;
300 ms of drop-tail queue; transport-wide feedback every 50 ms; no
probing, which the receive-side estimator does not have), once with each
of its delay filters. Every media packet that arrived, with its
sending time, arrival time and size, is then fed to aiortc's estimator in
order, as a receiver would see it (the send time as a 24-bit
abs-send-time, the size as on the wire, so that both rates count the same
bytes); its estimate is sampled every 100 ms. mediasim's own
estimate is its target (``target_bps``), which, with no loss, is the
delay-based one.

aiortc's estimate is open-loop (the rate it would ask for, from packets
sent at mediasim's rate) and follows libwebrtc's rules where they differ
from the draft's (an additive step of at least 4 kbit/s per response
time, a multiplicative one capped at 1.5 x the incoming rate, initialised
from the incoming rate after 3 s), so agreement is a tolerance, not
equality: the estimate over the capacity in the last 10 s of each
capacity stretch, and the time after the drop to the first estimate under
the new capacity. ``tests/test_gcc_rate_crosscheck.py`` runs mediasim,
checks that its packets are those aiortc was fed (a digest), and holds its
figures to aiortc's stored ones (tests/data/gcc_rate_references.json).

Run ``python -m mediasim.validation.gcc_rate_crosscheck`` (mediasim against
the stored figures) or ``--save-references`` (runs aiortc in its own
interpreter, from ``scripts/install-reference-simulators``, or
``MEDIASIM_AIORTC_PYTHON``). A reference check, not a dependency.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..campaign import atomic
from .gcc_crosscheck import AIORTC_PYTHON
from .media_loop import DURATION_S, Row, backoff_s, call_scenario, print_rows, stretches, within

REFERENCES = Path(__file__).resolve().parents[3] / "tests" / "data" / "gcc_rate_references.json"

ESTIMATORS = ("trendline", "kalman")
SAMPLE_S = 0.1
#: Allowed difference, mediasim against aiortc, per figure.
TOLERANCE = {"estimate_share": 0.10, "backoff_s": 0.5}


def scenario(estimator: str) -> dict[str, Any]:
    sender = {"media": True, "source": {"type": "synthetic", "fps": 30}, "pacer": {},
              "feedback": {"format": "twcc", "interval_ms": 50},
              # aiortc's estimator is libwebrtc's receive-side one, which has
              # no probing: compared without it.
              "cc": {"type": "gcc", "estimator": estimator, "probing": False}}
    return call_scenario(f"gcc-rate-crosscheck-{estimator}", sender, 1.5e6)


def mediasim_run(estimator: str) -> tuple[list[tuple[int, int, int]], list[dict[str, float]]]:
    """The media packets that arrived, as (sent_us, arrival_us, bytes) in
    arrival order, and mediasim's target sampled every 100 ms."""
    import mediasim

    res = mediasim.run(mediasim.Scenario.from_dict(scenario(estimator)))
    p = res.tables["packets"]
    p = p[(p["flow"] == "c/s/rtp") & (p["recv_ns"] >= 0)].sort_values(["recv_ns", "seq"], kind="stable")
    packets = [(int(s) // 1000, int(r) // 1000, int(b)) for s, r, b in
               zip(p["sent_ns"], p["recv_ns"], p["size_bytes"])]
    s = res.tables["media_series"]
    target = s[s["var"] == "target_bps"].sort_values("time_ns")
    return packets, sample(list(zip(target["time_s"], target["value"])))


def sample(points: list[tuple[float, float]]) -> list[dict[str, float]]:
    """The latest value at each 100 ms instant (NaN before the first)."""
    out, i, last = [], 0, float("nan")
    n = int(round(DURATION_S / SAMPLE_S))
    for k in range(1, n + 1):
        t = k * SAMPLE_S
        while i < len(points) and points[i][0] <= t + 1e-9:
            last = float(points[i][1])
            i += 1
        out.append({"t": round(t, 1), "estimate_bps": last})
    return out


def digest(packets: list[tuple[int, int, int]]) -> str:
    return hashlib.sha256(json.dumps(packets).encode()).hexdigest()


_AIORTC = r"""
import json, sys
from aiortc.rate import RemoteBitrateEstimator
e = RemoteBitrateEstimator()
points = []
for sent_us, recv_us, size in json.load(sys.stdin):
    abs_send = (sent_us * (1 << 18) // 1_000_000) & 0xFFFFFF
    r = e.add(recv_us // 1000, abs_send, size, 1)
    if r is not None:
        points.append((recv_us / 1e6, r[0]))
import aiortc
print(json.dumps({"version": aiortc.__version__, "points": points}))
"""


def aiortc_run(packets: list[tuple[int, int, int]]) -> dict[str, Any]:
    if not Path(AIORTC_PYTHON).exists():
        raise RuntimeError(f"no aiortc interpreter at {AIORTC_PYTHON}: run scripts/install-reference-simulators "
                           "or set MEDIASIM_AIORTC_PYTHON")
    proc = subprocess.run([AIORTC_PYTHON, "-c", _AIORTC], input=json.dumps(packets), capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"aiortc failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def figures(samples: list[dict[str, float]]) -> dict[str, Any]:
    out = []
    for start, end, cap in stretches():
        w = [s["estimate_bps"] for s in samples if start < s["t"] <= end]
        out.append({"from_s": start, "to_s": end, "capacity_bps": cap, "estimate_share": sum(w) / len(w) / cap})
    return {"stretches": out, "backoff_s": backoff_s(samples, "estimate_bps")}


def differences(ours: dict[str, Any], ref: dict[str, Any]) -> list[Row]:
    rows = [within(f"estimate_share {a['from_s']:.0f}-{a['to_s']:.0f} s", a["estimate_share"], b["estimate_share"],
                   TOLERANCE["estimate_share"]) for a, b in zip(ours["stretches"], ref["stretches"])]
    rows.append(within("backoff_s", ours["backoff_s"], ref["backoff_s"], TOLERANCE["backoff_s"]))
    return rows


def main(argv: list[str]) -> int:
    runs = {e: mediasim_run(e) for e in ESTIMATORS}
    if "--save-references" in argv:
        doc: dict[str, Any] = {
            "about": "aiortc's RemoteBitrateEstimator (a port of libwebrtc's) fed the media packets of mediasim's "
                     "GCC call on case 5.1's pattern (mediasim.validation.gcc_rate_crosscheck), one run per "
                     "delay filter; tests/test_gcc_rate_crosscheck.py holds mediasim's target to its estimate.",
            "provenance": {"command": "python -m mediasim.validation.gcc_rate_crosscheck --save-references"},
            "runs": {}}
        for e, (packets, _) in runs.items():
            ref = aiortc_run(packets)
            doc["provenance"]["aiortc"] = ref["version"]
            samples = sample([(t, v) for t, v in ref["points"]])
            doc["runs"][e] = {"packets": len(packets), "digest": digest(packets),
                              "figures": figures(samples), "samples": samples}
        atomic.write_bytes(REFERENCES, (json.dumps(doc, indent=1) + "\n").encode())  # whole or not at all
        print(f"wrote {REFERENCES}")
    doc = json.loads(REFERENCES.read_text())
    ok = True
    for e, (packets, ours) in runs.items():
        stored = doc["runs"][e]
        same = stored["digest"] == digest(packets)
        print(f"GCC ({e}) against aiortc {doc['provenance']['aiortc']}; the packets aiortc was fed are "
              f"{'this run' if same else 'NOT this run: --save-references'} ({len(packets)} packets)")
        rows = differences(figures(ours), stored["figures"])
        print_rows(rows, "aiortc")
        ok &= all(r[4] for r in rows) and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
