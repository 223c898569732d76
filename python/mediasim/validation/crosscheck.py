"""Cross-check of TCP behaviour against ns-2 (and ns-3 where installed).

The same dumbbell in each simulator: N bulk TCP flows (NewReno or SACK,
delayed ACKs) plus one 1 Mbit/s CBR flow, 10 Mbit/s 20 ms bottleneck with a
100-packet drop-tail queue, 100 Mbit/s 1 ms access links, 60 s, 1000-byte
packets. Compared: bottleneck utilisation, Jain's fairness index over the
TCP flows' goodput, and the cwnd sawtooth (mean period between window
reductions and mean peak before them, after a 10 s warm-up).

Settings aligned with ns-2's defaults where the two differ: minimum RTO
200 ms, delayed-ACK timeout 100 ms, initial window 2, no receiver window
limit (ns-2 window_ set to 10000), and NewReno's timer reset on every
partial ACK ("slow_but_steady": ns-2's newreno_changes1_ = 0). mediasim's
own default is RFC 6582's "impatient" variant; ``--impatient`` compares
that too, to show the difference. Run with ``python -m mediasim.validation.crosscheck``;
ns-2 comes from ``apt-get install ns2``. This is a reference check, not a
test: neither simulator is a dependency.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import _engine
from ..campaign import atomic
from .bench import tcp_dumbbell
from .crosscheck_metrics import jain, sawtooth, verdict
from .refsim import ns2_dumbbell
from ..results import Results

DURATION_S = 60.0
SAMPLE_S = 0.01
MSS = 960  # 1000-byte packets on the wire

def mediasim_run(n: int, flavor: str, newreno_timer: str = "slow_but_steady") -> dict[str, Any]:
    sc = tcp_dumbbell(n, DURATION_S, flavor=flavor)
    sc["measure"] = {"series": True}  # the window over time
    for f in sc["flows"]:
        if f["type"] == "tcp":
            f["tcp"].update({"min_rto_ms": 200, "delack_timeout_ms": 100, "initial_window": 2,
                             "newreno_timer": newreno_timer})
    raw, meta = _engine.run(json.dumps(sc), seed=1)
    res = Results.from_engine(raw, meta)
    links = res.links.set_index("direction")
    util = links.loc["bottleneck:r1->r2", "tx_bytes"] * 8 / (10e6 * DURATION_S)
    goodput = res.tcp.sort_values("flow")["goodput_bps"].to_numpy()
    grid = np.arange(0, DURATION_S, SAMPLE_S)
    per_flow = []
    ser = res.tcp_series

    def on_grid(g):
        ts, vs = g["time_ns"].to_numpy() * 1e-9, g["value"].to_numpy()
        idx = np.searchsorted(ts, grid, side="right") - 1
        return np.where(idx >= 0, vs[np.clip(idx, 0, None)], vs[0])

    for flow, g in ser[ser["var"] == "cwnd_bytes"].groupby("flow", observed=True):
        w = on_grid(g) / MSS
        # ns-2 keeps fast-recovery inflation apart from cwnd_ (in dupwnd_),
        # so its cwnd_ during recovery is ssthresh; RFC 5681's cwnd includes
        # the inflation (ssthresh + 3 SMSS + one per dupack), which for
        # small windows hides the halving from the detector. Compare the
        # same quantity: min(cwnd, ssthresh) while in recovery.
        rec = on_grid(ser[(ser["var"] == "recovery") & (ser["flow"] == flow)]) > 0
        ss = on_grid(ser[(ser["var"] == "ssthresh_bytes") & (ser["flow"] == flow)]) / MSS
        w = np.where(rec, np.minimum(w, ss), w)
        per_flow.append(sawtooth(grid, w))
    return summarize_run("mediasim", n, flavor, util, goodput, per_flow)


def ns2_run(n: int, flavor: str, workdir: Path) -> dict[str, Any]:
    script = workdir / f"x_{n}_{flavor}.tcl"
    script.write_text(ns2_dumbbell.script(n, DURATION_S, flavor, sample_s=SAMPLE_S, window=10000, iw=2,
                                          extra="Agent/TCP set minrto_ 0.2\nAgent/TCPSink/DelAck set interval_ 0.1"))
    out = ns2_dumbbell.parse(subprocess.run(["ns", str(script)], capture_output=True, text=True, check=True).stdout)
    cw, acked, bdep = out["cwnd"], out["acked"], out["bdepartures"]
    util = bdep * 8 / (10e6 * DURATION_S)
    goodput = np.array([acked[i] * MSS * 8 / DURATION_S for i in sorted(acked)])
    per_flow = []
    for i in sorted(cw):
        a = np.array(cw[i])
        per_flow.append(sawtooth(a[:, 0], a[:, 1]))
    return summarize_run("ns-2", n, flavor, util, goodput, per_flow)


def summarize_run(sim: str, n: int, flavor: str, util: float, goodput: np.ndarray, per_flow) -> dict[str, Any]:
    periods = [p for p, _, k in per_flow if k > 1 and not np.isnan(p)]
    peaks = [pk for _, pk, k in per_flow if k > 0]
    return {
        "simulator": sim, "flows": n, "flavor": flavor,
        "utilization": util, "jain": jain(goodput),
        "goodput_mbps": goodput.sum() / 1e6,
        "sawtooth_period_s": float(np.mean(periods)) if periods else float("nan"),
        "sawtooth_peak_pkts": float(np.mean(peaks)) if peaks else float("nan"),
    }


def ns3_python() -> str | None:
    """An interpreter with the ns3 package: $MEDIASIM_NS3_PYTHON, or the
    venv made by scripts/install-reference-simulators."""
    for cand in (os.environ.get("MEDIASIM_NS3_PYTHON"), "/opt/ns3env/venv/bin/python"):
        if cand and Path(cand).exists():
            return cand
    return None


def ns3_run(n: int, flavor: str, python: str) -> dict[str, Any]:
    script = Path(__file__).resolve().parent / "refsim" / "ns3_dumbbell.py"
    proc = subprocess.run([python, str(script), str(n), flavor, str(DURATION_S)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ns-3 run failed:\n{proc.stderr[-3000:]}")
    cw: dict[int, list[tuple[float, float]]] = {}
    rx, btx = {}, 0
    for line in proc.stdout.splitlines():
        p = line.split()
        if not p:
            continue
        if p[0] == "cw":
            cw.setdefault(int(p[1]), []).append((float(p[2]), float(p[3])))
        elif p[0] == "rx":
            rx[int(p[1])] = int(p[2])
        elif p[0] == "btx":
            btx = int(p[1])
    util = btx * 8 / (10e6 * DURATION_S)
    goodput = np.array([rx[i] * 8 / DURATION_S for i in sorted(rx)])
    grid = np.arange(0, DURATION_S, SAMPLE_S)
    per_flow = []
    for i in sorted(cw):
        a = np.array(cw[i])
        idx = np.searchsorted(a[:, 0], grid, side="right") - 1
        w = np.where(idx >= 0, a[np.clip(idx, 0, None), 1], 2.0)
        per_flow.append(sawtooth(grid, w))
    return summarize_run("ns-3", n, flavor, util, goodput, per_flow)


def compare(sizes=(1, 8), flavors=("newreno", "sack"), newreno_timer: str = "slow_but_steady",
            with_ns3: bool = True) -> pd.DataFrame:
    if shutil.which("ns") is None:
        raise RuntimeError("ns-2 not found: install it with `apt-get install ns2`")
    py3 = ns3_python() if with_ns3 else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for flavor in flavors:
            for n in sizes:
                m = mediasim_run(n, flavor, newreno_timer)
                refs = [ns2_run(n, flavor, Path(tmp))]
                if py3:
                    refs.append(ns3_run(n, flavor, py3))
                rows += [m, *refs, verdict(m, refs)]
    return pd.DataFrame(rows)


REFERENCES = Path(__file__).resolve().parents[3] / "tests" / "data" / "crosscheck_references.json"
METRICS = ("utilization", "jain", "sawtooth_period_s", "sawtooth_peak_pkts", "goodput_mbps")


def reference_runs(sizes=(1, 8), flavors=("newreno", "sack"), with_ns3: bool = True) -> dict[str, Any]:
    """Runs the reference simulators on every configuration and returns
    their figures with provenance, for storing (``save_references``)."""
    if shutil.which("ns") is None:
        raise RuntimeError("ns-2 not found: install it with `apt-get install ns2`")
    py3 = ns3_python() if with_ns3 else None
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for flavor in flavors:
            for n in sizes:
                refs = [ns2_run(n, flavor, Path(tmp))] + ([ns3_run(n, flavor, py3)] if py3 else [])
                for r in refs:
                    runs.append({k: r[k] for k in ("simulator", "flows", "flavor", *METRICS)})
    return {
        "about": "Figures of the reference simulators on the cross-check dumbbell (mediasim.validation.crosscheck); "
                 "tests/test_crosscheck_references.py asserts mediasim's run against them at the documented tolerances.",
        "provenance": {
            "ns-2": _version(["dpkg-query", "-W", "-f=${Version}", "ns2"]) or "unknown",
            "ns-3": _version([py3, "-c", "import importlib.metadata as m; print(m.version('ns3'))"]) if py3 else None,
            "command": "mediasim crosscheck --save-references",
            "settings": f"{DURATION_S:g} s, 10 Mbit/s 20 ms bottleneck, 100-packet drop-tail, MSS {MSS}, "
                        "min RTO 200 ms, delayed-ACK timeout 100 ms, IW 2",
        },
        "runs": runs,
    }


def _version(cmd: list[str]) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def save_references(path: Path = REFERENCES, with_ns3: bool = True) -> Path:
    """Stores fresh reference figures; a simulator not run this time (ns-3
    not installed, or ``with_ns3=False``) keeps its stored figures and
    provenance."""
    doc = reference_runs(with_ns3=with_ns3)
    ran = {r["simulator"] for r in doc["runs"]}
    if path.exists():
        old = json.loads(path.read_text())
        for sim in ("ns-2", "ns-3"):
            if sim not in ran:
                doc["runs"] += [r for r in old["runs"] if r["simulator"] == sim]
                doc["provenance"][sim] = old["provenance"].get(sim)
    atomic.write_bytes(path, (json.dumps(doc, indent=1) + "\n").encode())  # whole or not at all
    return path


def stored_references(path: Path = REFERENCES) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The stored reference figures by (flavor, flows)."""
    by: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in json.loads(path.read_text())["runs"]:
        by.setdefault((r["flavor"], r["flows"]), []).append(r)
    return by


if __name__ == "__main__":
    from ..reporting.tables import md_table

    timer = "impatient" if "--impatient" in sys.argv else "slow_but_steady"
    df = compare(newreno_timer=timer, with_ns3="--no-ns3" not in sys.argv)
    print(md_table(df.map(lambda x: f"{x:.4g}" if isinstance(x, float) else x)))
    print("\nverdict: the closest reference's difference (absolute for utilisation and jain, relative otherwise);")
    print("ok = within tolerance (utilisation 0.02, jain 0.05, sawtooth period and peak 15%) of at least one reference")
    if ns3_python() is None:
        print("ns-3 not found (pip install ns3 into a venv and set MEDIASIM_NS3_PYTHON): compared with ns-2 only")
