"""Cross-check of RED against ns-2's Queue/RED (Floyd's own implementation).

The TCP cross-check dumbbell (``mediasim.validation.crosscheck``: 8 bulk
TCP SACK flows with delayed ACKs plus one 1 Mbit/s CBR flow, 10 Mbit/s
20 ms bottleneck, 100 Mbit/s 1 ms access links, 1000-byte packets, 60 s)
with RED on the bottleneck and a 100-packet hard limit, in two settings:

- ``fj93``: Floyd and Jacobson's parameters (min_th 5, max_th 15 packets,
  w_q 0.002, max_p 1/50), the paper's drop spacing, no gentle mode;
- ``gentle``: the same thresholds with max_p 1/10, gentle mode and ns-2's
  ``wait_`` spacing (ns-2's later defaults).

and, to see RED apart from TCP, ``fj93-cbr``: the fj93 queue fed by one
open-loop 11 Mbit/s CBR flow alone (no TCP).

Compared: the time average of RED's average queue (sampled every 10 ms in
both) and the number of packets the bottleneck dropped, each within 10%.
ns-2's TCP settings are aligned as in the TCP cross-check (minimum RTO
200 ms, delayed-ACK timeout 100 ms, initial window 2, no receiver window),
and limited transmit is off: ns-2's Sack1 agent sends nothing new on the
first duplicate ACKs. That matters here as it hardly does with drop-tail:
RED's drops are single, each recovered by fast retransmit, and with
limited transmit on mediasim's flows hold RED's average at 8.6 packets and
drop 19% more (1,094 against ns-2's 916).

ns-3's RedQueueDisc runs the TCP settings too where ns-3 is installed
(``scripts/install-reference-simulators``): it does not expose its average,
so for it the time-averaged instantaneous queue (sampled every 10 ms) and
the drops are shown, next to mediasim's time-averaged queue. ns-3's TCP
(NewReno with SACK recovery, ``LimitedTransmit`` off) differs more from
mediasim's and ns-2's than they do from each other: a reference, not a
target.

Run ``python -m mediasim.validation.red_crosscheck`` (ns-2 from ``apt-get
install ns2``); ``--save-references`` stores the reference figures in
tests/data/red_references.json, which tests/test_red.py holds mediasim to
(ns-2's, within 10%). A reference check, not a dependency.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .. import _engine
from ..results import Results
from .bench import tcp_dumbbell
from .refsim import ns2_dumbbell

DURATION_S = 60.0
FLOWS = 8
SAMPLE_S = 0.01
TOLERANCE = 0.10
BOTTLENECK = "bottleneck:r1->r2"

FJ93 = {"min_th": 5.0, "max_th": 15.0, "w_q": 0.002, "max_p": 1 / 50, "gentle": False, "wait": False}
SETTINGS: dict[str, dict[str, Any]] = {
    "fj93": FJ93,
    "gentle": {"min_th": 5.0, "max_th": 15.0, "w_q": 0.002, "max_p": 1 / 10, "gentle": True, "wait": True},
    "fj93-cbr": FJ93,
}
OPEN_LOOP_BPS = 11e6  # the CBR rate of the open-loop case (1000-byte packets)


def red_queue(setting: str) -> dict[str, Any]:
    return {"type": "red", "limit_packets": 100, "mean_packet_bytes": 1000, **SETTINGS[setting]}


def open_loop(setting: str) -> bool:
    return setting.endswith("-cbr")


def scenario(setting: str, duration_s: float = DURATION_S) -> dict[str, Any]:
    sc = tcp_dumbbell(0 if open_loop(setting) else FLOWS, duration_s, flavor="sack")
    sc["name"] = f"red-crosscheck-{setting}"
    sc["links"][0]["queue"] = red_queue(setting)
    if open_loop(setting):
        sc["flows"][0]["rate_bps"] = OPEN_LOOP_BPS * 972 / 1000
    for f in sc["flows"]:
        if f["type"] == "tcp":
            f["tcp"].update({"min_rto_ms": 200, "delack_timeout_ms": 100, "initial_window": 2,
                             "limited_transmit": False})
    sc["measure"] = {"queue_sample_ms": SAMPLE_S * 1e3, "packets": False}
    return sc


def mediasim_run(setting: str, seed: int = 1, duration_s: float = DURATION_S) -> dict[str, Any]:
    raw, meta = _engine.run(json.dumps(scenario(setting, duration_s)), seed=seed)
    res = Results.from_engine(raw, meta)
    q = res.queues.set_index("direction").loc[BOTTLENECK]
    samples = res.queue_samples[res.queue_samples["link_dir"] == BOTTLENECK]
    drops = int(sum(v for k, v in q.items() if k.startswith("dropped_")))
    return {"simulator": "mediasim", "setting": setting, "mean_avg_packets": float(samples["red_avg"].mean()),
            "mean_queue_packets": float(q["mean_packets"]), "drops": drops, "departures": int(q["departures"])}


def ns2_settings(setting: str) -> str:
    s = SETTINGS[setting]
    tcl = {"thresh_": s["min_th"], "maxthresh_": s["max_th"], "q_weight_": s["w_q"],
           "linterm_": round(1 / s["max_p"]), "gentle_": str(s["gentle"]).lower(),
           "wait_": str(s["wait"]).lower(), "bytes_": "false", "queue_in_bytes_": "false",
           "mean_pktsize_": 1000, "setbit_": "false", "adaptive_": 0, "drop_tail_": "true"}
    return "\n".join(f"Queue/RED set {k} {v}" for k, v in tcl.items())


def ns2_run(setting: str, workdir: Path, duration_s: float = DURATION_S) -> dict[str, Any]:
    script = workdir / f"red_{setting}.tcl"
    tcl = ns2_dumbbell.script(
        0 if open_loop(setting) else FLOWS, duration_s, "sack", window=10000, iw=2, queue="RED",
        queue_settings=ns2_settings(setting), queue_sample_s=SAMPLE_S,
        extra="Agent/TCP set minrto_ 0.2\nAgent/TCPSink/DelAck set interval_ 0.1")
    if open_loop(setting):
        # ns-2's UDP packets are packetSize_ bytes on the wire (no IP or UDP
        # header added): 1000 bytes at 11 Mbit/s, as mediasim's.
        tcl = tcl.replace("$cbr set rate_ 1Mb", f"$cbr set rate_ {OPEN_LOOP_BPS / 1e6}Mb")
        tcl = tcl.replace("$cbr set packetSize_ 972", "$cbr set packetSize_ 1000")
    script.write_text(tcl)
    proc = subprocess.run(["ns", str(script)], capture_output=True, text=True, check=True)
    out = ns2_dumbbell.parse(proc.stdout)
    aves = [a for _, a in out["ave"]]
    return {"simulator": "ns-2", "setting": setting, "mean_avg_packets": sum(aves) / len(aves),
            "mean_queue_packets": float("nan"), "drops": out["pdrops"], "departures": out["pdepartures"]}


def ns3_run(setting: str, python: str, duration_s: float = DURATION_S) -> dict[str, Any]:
    s = SETTINGS[setting]
    red = f"{s['min_th']}:{s['max_th']}:{s['w_q']}:{s['max_p']}:{int(s['gentle'])}:{int(s['wait'])}"
    script = Path(__file__).resolve().parent / "refsim" / "ns3_dumbbell.py"
    proc = subprocess.run([python, str(script), str(FLOWS), "sack", str(duration_s), red],
                          capture_output=True, text=True, check=True)
    got = dict(line.split()[:2] for line in proc.stdout.splitlines() if line.split()[:1] in (["qdrops"], ["qlen"]))
    return {"simulator": "ns-3", "setting": setting, "mean_avg_packets": float("nan"),
            "mean_queue_packets": float(got["qlen"]), "drops": int(got["qdrops"]), "departures": float("nan")}


def relative_gap(m: dict[str, Any], ref: dict[str, Any], key: str) -> float:
    return abs(m[key] - ref[key]) / abs(ref[key])


def reference_runs() -> dict[str, Any]:
    from .crosscheck import ns3_python

    if shutil.which("ns") is None:
        raise RuntimeError("ns-2 not found: install it with `apt-get install ns2`")
    py3 = ns3_python()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [ns2_run(s, Path(tmp)) for s in SETTINGS]
    if py3:
        runs += [ns3_run(s, py3) for s in SETTINGS if not open_loop(s)]
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "ns2"], capture_output=True, text=True)
    return {
        "about": "ns-2 Queue/RED on the RED cross-check dumbbell (mediasim.validation.red_crosscheck); "
                 "tests/test_red.py holds mediasim within 10% of these.",
        "provenance": {"ns-2": version.stdout.strip() or "unknown",
                       "command": "python -m mediasim.validation.red_crosscheck --save-references",
                       "settings": SETTINGS},
        "runs": runs,
    }


REFERENCES = Path(__file__).resolve().parents[3] / "tests" / "data" / "red_references.json"


def stored_references(path: Path = REFERENCES, simulator: str = "ns-2") -> dict[str, dict[str, Any]]:
    return {r["setting"]: r for r in json.loads(path.read_text())["runs"] if r["simulator"] == simulator}


def compare() -> list[dict[str, Any]]:
    runs = reference_runs()["runs"]
    rows = []
    for setting in SETTINGS:
        m = mediasim_run(setting)
        ns2 = next(r for r in runs if r["setting"] == setting and r["simulator"] == "ns-2")
        gaps = {k: relative_gap(m, ns2, k) for k in ("mean_avg_packets", "drops")}
        verdict = {"simulator": "gap to ns-2", "setting": setting, **{k: f"{v:.1%}" for k, v in gaps.items()},
                   "departures": "ok" if max(gaps.values()) <= TOLERANCE else "OUTSIDE 10%"}
        rows += [m, ns2, verdict]
        rows += [r for r in runs if r["setting"] == setting and r["simulator"] == "ns-3"]
    return rows


if __name__ == "__main__":
    from ..reporting.tables import md_table
    import pandas as pd

    if "--save-references" in sys.argv:
        REFERENCES.write_text(json.dumps(reference_runs(), indent=1) + "\n")
        print(f"wrote {REFERENCES}")
    else:
        print(md_table(pd.DataFrame(compare()).map(lambda x: f"{x:.4g}" if isinstance(x, float) else x)))
