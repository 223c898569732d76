"""Side by side with ns-2: the TCP dumbbell of ``mediasim bench`` run in
mediasim and in ns-2 (the simulator the reference studies used), in
alternation, several times. Prints the median wall time per packet through
the bottleneck for each and their ratio, three ways for mediasim:

- ``engine``: the engine's run alone (``_engine.run``, timed inside);
- ``api``: a lean Python process that imports the engine and runs it;
- ``cli``: ``mediasim run FILE`` as a user types it (the scenario written
  to a file first), with its peak resident memory;

and, with ``ns3=True``, ns-3's ``Simulator::Run`` on the same dumbbell
(its cross-check script, without the cwnd trace), once per size: ns-3
needs ~15 s to import and compile the script, so only its run is timed.

ns-2 is a reference, never a dependency: install it with
``apt-get install ns2``. The Tcl script is generated here; its topology,
rates, queue, packet size and TCP variant mirror ``bench.tcp_dumbbell``.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .refsim import ns2_dumbbell

def ns2_script(n: int, duration_s: float) -> str:
    return ns2_dumbbell.script(n, duration_s, flavor="sack")


def run_ns2(n: int, duration_s: float, workdir: Path) -> dict[str, Any]:
    script = workdir / f"dumbbell_{n}.tcl"
    script.write_text(ns2_script(n, duration_s))
    t0 = time.perf_counter()
    proc = subprocess.run(["ns", str(script)], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"ns-2 failed for n={n}:\n{proc.stderr[-2000:]}")
    return {"wall_s": wall, "bottleneck_packets": ns2_dumbbell.parse(proc.stdout)["pdepartures"]}


# The engine's time is its run alone: the scenario text is built before
# the clock starts (building and dumping the dict in Python takes 2.5-3.6 ms
# at 256 flows, which is not the engine's).
_MEDIASIM_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy
from mediasim import _engine
from mediasim.validation.bench import tcp_dumbbell
text = json.dumps(tcp_dumbbell(int(sys.argv[1]), float(sys.argv[2])))
t1 = time.perf_counter()
tables, meta = _engine.run(text, seed=1)
t2 = time.perf_counter()
links = tables["links"]
codes, names = links["direction"]  # coded text: (codes, names)
i = [names[c] for c in codes].index("bottleneck:r1->r2")
print(json.dumps({"startup_s": t1 - t0, "run_s": t2 - t1, "bottleneck_packets": int(links["tx_packets"][i]),
                  "delivered": json.loads(meta)["delivered"]}))
"""


def run_mediasim(n: int, duration_s: float) -> dict[str, Any]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _MEDIASIM_CHILD, str(n), str(duration_s)],
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"mediasim failed for n={n}:\n{proc.stderr[-2000:]}")
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, "run_s": r["run_s"], "bottleneck_packets": r["bottleneck_packets"],
            "delivered": r["delivered"]}


def _cli_command() -> list[str]:
    """The ``mediasim`` command beside this interpreter (as installed)."""
    script = Path(sys.executable).parent / "mediasim"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mediasim"]


def run_cli(n: int, duration_s: float, workdir: Path) -> dict[str, Any]:
    """``mediasim -q run FILE``: wall time and peak resident memory of the
    whole process. The memory is GNU time's: a child's own rusage would
    count this (larger) process's pages at the fork."""
    from .bench import tcp_dumbbell

    path = workdir / f"dumbbell_{n}.json"
    if not path.exists():
        path.write_text(json.dumps(tcp_dumbbell(n, duration_s)))
    gnu_time = Path("/usr/bin/time")
    cmd = [*_cli_command(), "-q", "run", str(path), "--seed", "1"]
    if gnu_time.exists():
        cmd = [str(gnu_time), "-f", "%M", *cmd]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"mediasim run failed for n={n}:\n{proc.stderr[-2000:]}")
    peak = int(proc.stderr.split()[-1]) / 1024 if gnu_time.exists() else float("nan")
    return {"wall_s": wall, "peak_rss_mib": peak}


def run_ns3(n: int, duration_s: float, repeats: int = 3) -> dict[str, Any] | None:
    """ns-3's Simulator::Run wall time (the median of ``repeats`` runs in
    one process: its 15 s of import and compilation are paid once) and
    bottleneck packets, or None without an ns-3 interpreter."""
    import os
    import statistics

    from .crosscheck import ns3_python

    python = ns3_python()
    if python is None:
        return None
    script = Path(__file__).resolve().parent / "refsim" / "ns3_dumbbell.py"
    env = {**os.environ, "MEDIASIM_NS3_NO_CWND_TRACE": "1", "MEDIASIM_NS3_REPEATS": str(repeats)}
    proc = subprocess.run([python, str(script), str(n), "sack", str(duration_s)], capture_output=True, text=True,
                          env=env, check=False)
    runs = [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("run_s")]
    vals = dict(line.split()[:2] for line in proc.stdout.splitlines() if line.startswith("btx"))
    if proc.returncode != 0 or len(runs) != repeats or "btx" not in vals:
        raise RuntimeError(f"ns-3 failed for n={n}:\n{proc.stderr[-2000:]}")
    # Bottleneck bytes include PPP's 2-byte header on 1000-byte packets.
    return {"run_s": statistics.median(runs), "runs_s": runs, "bottleneck_packets": int(vals["btx"]) / 1002}


def _vs_ns3(n: int, duration_s: float, m_pk: float) -> dict[str, Any]:
    """ns-3's run against the engine timed just before and just after it
    (3 runs each): ns-3 takes half a minute or more per size, long enough
    for a shared host's load to change, so the engine's figure for this
    ratio comes from the same minutes."""
    around = [run_mediasim(n, duration_s)["run_s"] for _ in range(3)]
    r3 = run_ns3(n, duration_s)
    if r3 is None:
        return {}
    around += [run_mediasim(n, duration_s)["run_s"] for _ in range(3)]
    engine_s = statistics.median(around)
    return {
        "ns3_run_s": r3["run_s"],
        "ns3_bottleneck_pkts": int(r3["bottleneck_packets"]),
        "mediasim_engine_s_around_ns3": engine_s,
        "speedup_engine_vs_ns3_run": (r3["run_s"] / r3["bottleneck_packets"]) / (engine_s / m_pk),
    }


def _row(n: int, ms: list[dict[str, Any]], ns: list[dict[str, Any]], cli: list[dict[str, Any]]) -> dict[str, Any]:
    """One size's medians and speedups from its runs of the engine (``ms``),
    ns-2 (``ns``) and the ``mediasim run`` command (``cli``)."""
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    m_pk, n_pk = med(ms, "bottleneck_packets"), med(ns, "bottleneck_packets")
    delivered, fastest = med(ms, "delivered"), min(x["run_s"] for x in ms)
    row = {
        "flows": n,
        "ns2_wall_s": med(ns, "wall_s"),
        "ns2_bottleneck_pkts": int(n_pk),
        "ns2_us_per_pkt": med(ns, "wall_s") / n_pk * 1e6,
        "mediasim_wall_s": med(ms, "wall_s"),
        "mediasim_engine_s": med(ms, "run_s"),
        "mediasim_bottleneck_pkts": int(m_pk),
        "mediasim_us_per_pkt": med(ms, "wall_s") / m_pk * 1e6,
        "mediasim_engine_us_per_pkt": med(ms, "run_s") / m_pk * 1e6,
        # The unit: every packet delivered to an application
        # (data, ACKs, CBR), which more flows make more of per
        # bottleneck packet (more ACKs, fewer delayed).
        "mediasim_delivered": int(delivered),
        "mediasim_engine_us_per_delivered": med(ms, "run_s") / delivered * 1e6,
        # The fastest run: the cost with the least interference from the
        # host, which only ever adds time (on a shared host the medians of
        # two sizes can come from spells of different load).
        "mediasim_engine_s_min": fastest,
        "mediasim_engine_us_per_delivered_min": fastest / delivered * 1e6,
    }
    row["mediasim_cli_wall_s"] = med(cli, "wall_s")
    row["mediasim_cli_peak_mib"] = max(c["peak_rss_mib"] for c in cli)
    row["speedup_process"] = row["ns2_us_per_pkt"] / row["mediasim_us_per_pkt"]
    row["speedup_cli"] = row["ns2_us_per_pkt"] / (row["mediasim_cli_wall_s"] / m_pk * 1e6)
    row["speedup_engine"] = row["ns2_us_per_pkt"] / row["mediasim_engine_us_per_pkt"]
    return row


def compare(sizes=(1, 8, 64, 256), repeats: int = 5, duration_s: float = 60.0,
            ns3: bool = False) -> list[dict[str, Any]]:
    if shutil.which("ns") is None:
        raise RuntimeError("ns-2 not found: install it with `apt-get install ns2`")
    runs: dict[int, tuple[list, list, list]] = {n: ([], [], []) for n in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        # Every size in every round, and each tool in turn within a size:
        # the host's load comes and goes in spells of seconds to minutes,
        # and the growth of cost with size compares sizes, so a spell must
        # hit them all alike.
        for _ in range(repeats):
            for n in sizes:
                ms, ns, cli = runs[n]
                ms.append(run_mediasim(n, duration_s))
                cli.append(run_cli(n, duration_s, Path(tmp)))
                ns.append(run_ns2(n, duration_s, Path(tmp)))
    rows = [_row(n, *runs[n]) for n in sizes]
    if ns3:
        for row in rows:
            row.update(_vs_ns3(row["flows"], duration_s, row["mediasim_bottleneck_pkts"]))
    _cost_growth(rows)
    return rows


def _cost_growth(rows: list[dict[str, Any]]) -> None:
    """Each size's engine cost per bottleneck packet and per delivered
    packet over the smallest size's: how cost grows with the number of
    flows."""
    first = min(rows, key=lambda r: r["flows"])
    for r in rows:
        r["engine_cost_per_pkt_vs_smallest"] = r["mediasim_engine_us_per_pkt"] / first["mediasim_engine_us_per_pkt"]
        r["engine_cost_per_delivered_vs_smallest"] = (r["mediasim_engine_us_per_delivered"]
                                                      / first["mediasim_engine_us_per_delivered"])
        if "mediasim_engine_us_per_delivered_min" in first:
            r["engine_cost_per_delivered_vs_smallest_min"] = (r["mediasim_engine_us_per_delivered_min"]
                                                              / first["mediasim_engine_us_per_delivered_min"])


if __name__ == "__main__":
    import pandas as pd

    from ..reporting.tables import md_table

    sizes = tuple(int(x) for x in sys.argv[1].split(",")) if len(sys.argv) > 1 else (1, 8, 64, 256)
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    print(md_table(pd.DataFrame(compare(sizes, repeats)), 4))
