"""The path the media controller cross-checks run (``gcc_rate_crosscheck``,
``scream_crosscheck``, ``scream_v2_crosscheck``, ``nada_crosscheck``, ``nada_loss``): RFC 8867 case
5.1's pattern, shortened. One call from s to r over one link of 1 Mbit/s,
0.6 at 30 s and 1 again at 50 s (70 s in all), 50 ms one way, 300 ms
(37,500 bytes) of drop-tail queue, and optionally random loss. Also what they compare: figures over the last 10 s of
each capacity stretch, the back-off after the drop, and the printed table
of differences; and, for the closed-loop checks against a reference's
code in a C++ harness (SCReAM, NADA), building and running the harness,
mediasim's run in the harness's 100 ms samples, and the figures of
several runs averaged."""

from __future__ import annotations

import math
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterator

from ..campaign import atomic

DURATION_S = 70.0
ONE_WAY_MS = 50.0
QUEUE_BYTES = 37_500  # 300 ms at 1 Mbit/s (RFC 8867)
CAPS = [(0.0, 1e6), (30.0, 0.6e6), (50.0, 1e6)]

#: (figure, mediasim, reference, tolerance, within)
Row = tuple[str, float, float, float, bool]


def call_scenario(name: str, sender: dict[str, Any], session_bw_bps: float, loss: float = 0.0) -> dict[str, Any]:
    """The path with one RTP session: ``sender`` (a member on node s) to a
    plain receiver on r; series and the packets table on. ``loss``: each
    packet's probability of being lost on the link from s to r (the
    ``packet`` model; the media's and the sender's RTCP)."""
    ab: dict[str, Any] = {"rate_bps": [[t, c] for t, c in CAPS]}
    if loss:
        ab["loss"] = {"type": "packet", "rate": loss}
    link = {"a": "s", "b": "r", "rate_bps": CAPS[0][1], "delay_ms": ONE_WAY_MS, "ab": ab,
            "queue": {"type": "droptail", "limit_bytes": QUEUE_BYTES}}
    return {"name": name, "duration_s": DURATION_S, "measure": {"series": True, "packets": True},
            "nodes": [{"name": "s"}, {"name": "r"}], "links": [link],
            "rtp_sessions": [{"name": "c", "transport": "unicast", "session_bw_bps": session_bw_bps,
                              "media_payload_bytes": 1160, "avpf": {"trr_interval_ms": 1000},
                              "members": [{"node": "s", **sender}, {"node": "r"}]}]}


def stretches() -> Iterator[tuple[float, float, float]]:
    """(from_s, to_s, capacity_bps): the last 10 s of each capacity stretch."""
    ends = [at for at, _ in CAPS[1:]] + [DURATION_S]
    for (_, cap), end in zip(CAPS, ends):
        yield end - 10.0, end, cap


def backoff_s(samples: list[dict[str, float]], key: str) -> float:
    """Time after the drop to the first sample of ``key`` under the new capacity."""
    drop_at, drop_cap = CAPS[1]
    return next((s["t"] - drop_at for s in samples if s["t"] > drop_at and s[key] < drop_cap), math.nan)


def within(name: str, ours: float, ref: float, tolerance: float) -> Row:
    return name, ours, ref, tolerance, abs(ours - ref) <= tolerance


def print_rows(rows: list[Row], reference: str) -> None:
    print(f"{'figure':<26}{'mediasim':>10}{reference:>11}{'tolerance':>11}  within")
    for name, a, b, tol, ok in rows:
        print(f"{name:<26}{a:>10.3f}{b:>11.3f}{tol:>11.3f}  {'yes' if ok else 'NO'}")


#: A sample row of a run, column by column, as stored.
SAMPLE_COLUMNS = ("t", "target_bps", "sent_bps", "sojourn_ms")

#: One run: its 100 ms samples and the packets it lost.
Run = tuple[list[dict[str, float]], int]


def figures(samples: list[dict[str, float]], lost: int) -> dict[str, Any]:
    """The compared figures from 100 ms samples {t, target_bps, sent_bps,
    sojourn_ms (NaN when no packet left the queue)}: the sending rate over
    the capacity and the mean sojourn in the last 10 s of each stretch, the
    time to first send at 80% of the first capacity, the back-off after
    the drop, and packets lost."""
    out = []
    for start, end, cap in stretches():
        w = [s for s in samples if start < s["t"] <= end]
        soj = [s["sojourn_ms"] for s in w if s["sojourn_ms"] == s["sojourn_ms"]]
        out.append({"from_s": start, "to_s": end, "capacity_bps": cap,
                    "rate_share": sum(s["sent_bps"] for s in w) / len(w) / cap,
                    "sojourn_ms": sum(soj) / len(soj) if soj else float("nan")})
    first_cap = CAPS[0][1]
    ramp = next((s["t"] for s in samples if s["sent_bps"] >= 0.8 * first_cap), float("nan"))
    return {"stretches": out, "ramp_s": ramp, "backoff_s": backoff_s(samples, "target_bps"), "lost": lost}


def mean_figures(runs: list[Run]) -> dict[str, Any]:
    """The figures of each run, averaged; packets lost summed."""
    each = [figures(samples, lost) for samples, lost in runs]
    out = {k: sum(f[k] for f in each) / len(each) for k in ("ramp_s", "backoff_s")}
    out["stretches"] = [{**s, **{k: sum(f["stretches"][i][k] for f in each) / len(each)
                                 for k in ("rate_share", "sojourn_ms")}}
                        for i, s in enumerate(each[0]["stretches"])]
    out["lost"] = sum(f["lost"] for f in each)
    return out


def differences(ours: dict[str, Any], ref: dict[str, Any], tolerance: dict[str, float]) -> list[Row]:
    """(figure, mediasim, reference, tolerance, within) for each compared figure."""
    rows = []
    for a, b in zip(ours["stretches"], ref["stretches"]):
        span = f"{a['from_s']:.0f}-{a['to_s']:.0f} s"
        rows += [within(f"{k} {span}", a[k], b[k], tolerance[k]) for k in ("rate_share", "sojourn_ms")]
    rows += [within(k, ours[k], ref[k], tolerance[k]) for k in ("ramp_s", "backoff_s")]
    rows.append(within("lost", ours["lost"], ref["lost"], tolerance.get("lost", 0.0)))  # none given: equal
    return rows


def mediasim_samples(doc: dict[str, Any], start_bps: float, seed: int = 0) -> Run:
    """mediasim's run of the scenario ``doc`` (a `call_scenario`) with
    ``seed``, in the harnesses' 100 ms samples (the target before the first
    is ``start_bps``)."""
    import numpy as np

    import mediasim

    res = mediasim.run(mediasim.Scenario.from_dict(doc), seed=seed)
    s = res.tables["media_series"]
    target = s[s["var"] == "target_bps"].sort_values("time_s")
    p = res.tables["packets"]
    p = p[p["flow"] == "c/s/rtp"]
    bins = np.arange(0.0, DURATION_S + 1e-9, 0.1)
    sent = np.histogram(p["sent_s"], bins=bins, weights=p["size_bytes"])[0] * 8 / 0.1
    got = p[p["recv_s"].notna()]
    leave = got["recv_s"] - ONE_WAY_MS / 1e3  # when it left the bottleneck
    soj_sum = np.histogram(leave, bins=bins, weights=got["delay_ms"] - ONE_WAY_MS)[0]
    soj_n = np.histogram(leave, bins=bins)[0]
    samples = []
    for i, t in enumerate(bins[1:]):
        before = target[target["time_s"] <= t + 1e-9]
        samples.append({"t": round(float(t), 1),
                        "target_bps": float(before["value"].iloc[-1]) if len(before) else start_bps,
                        "sent_bps": float(sent[i]),
                        "sojourn_ms": float(soj_sum[i] / soj_n[i]) if soj_n[i] else float("nan")})
    lost = int(res.tables["flows"].set_index("flow").loc["c/s/rtp", "lost"])
    return samples, lost


def stored_runs(doc: dict[str, Any]) -> list[Run]:
    """A stored reference's runs, in the order stored."""
    return [([dict(zip(doc["columns"], row)) for row in r["samples"]], r["lost"]) for r in doc["runs"].values()]


def runs_document(about: str, provenance: dict[str, str], ref: dict[str, Any], runs: dict[str, Run]) -> str:
    """The stored references' text: what they are, where from, the mean
    figures and every run's samples."""
    import json

    doc = {"about": about, "provenance": provenance, "figures": ref, "columns": list(SAMPLE_COLUMNS),
           "runs": {fb: {"lost": lost, "samples": [[s[c] for c in SAMPLE_COLUMNS] for s in samples]}
                    for fb, (samples, lost) in runs.items()}}
    return json.dumps(doc, separators=(",", ":")) + "\n"


def harness_runs(harness: Path, sources: list[Path], include: Path, fps: float, feedback_ms: tuple[float, ...],
                 rates_bps: tuple[float, float, float], loss: float = 0.0,
                 seeds: tuple[int, ...] = (0,)) -> dict[str, Run]:
    """Builds ``harness`` once with the reference's ``sources`` (g++, the
    headers in ``include``) and runs it on the path at each of
    ``feedback_ms``: (samples, lost) by interval. ``rates_bps``: the
    controller's least, starting and greatest rates. With ``loss``, each
    interval runs once per seed of ``seeds``, keyed "interval/seed"."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / harness.stem
        subprocess.run(["g++", "-O2", "-std=c++14", f"-I{include}", "-o", str(exe), str(harness), *map(str, sources)],
                       check=True, capture_output=True, text=True)
        if not loss:
            return {str(fb): _run_harness(exe, fps, fb, rates_bps) for fb in feedback_ms}
        return {f"{fb}/{seed}": _run_harness(exe, fps, fb, rates_bps, [f"loss={loss}", f"seed={seed}"])
                for fb in feedback_ms for seed in seeds}


def _run_harness(exe: Path, fps: float, feedback_ms: float, rates_bps: tuple[float, float, float],
                 extra: list[str] | None = None) -> Run:
    """One run of a built harness with feedback every ``feedback_ms``
    (``extra``: the harness's optional arguments, path_harness.h)."""
    args = [DURATION_S, fps, feedback_ms, ONE_WAY_MS, QUEUE_BYTES, *rates_bps]
    steps = [f"{t}:{c}" for t, c in CAPS]
    out = subprocess.run([str(exe), *map(str, args), *steps, *(extra or [])],
                         check=True, capture_output=True, text=True).stdout
    samples, lost = [], 0
    for line in out.splitlines():
        t, target, sent, soj, lost_so_far = line.split()
        samples.append({"t": float(t), "target_bps": float(target), "sent_bps": float(sent),
                        "sojourn_ms": float(soj) if float(soj) >= 0 else float("nan")})
        lost = int(lost_so_far)
    return samples, lost


def main(argv: list[str], check: Any, src_option: str, about: str,
         alternatives: list[tuple[str, dict[str, Any]]]) -> int:
    """A cross-check's command: mediasim's figures against the stored
    reference's, printed; with ``--save-references SRC_OPTION DIR``, the
    reference built from DIR, run, and stored first. ``check``: the
    cross-check's module (its ``REFERENCES``, ``REF_REPO``, ``REF_COMMIT``,
    ``reference_runs``, ``mediasim_figures``, ``differences``);
    ``alternatives``: (what, mediasim_figures' arguments) also printed.
    0 if every figure is within its tolerance, else 1 (2: bad arguments)."""
    import json
    import sys

    if "--save-references" in argv:
        if src_option not in argv or argv.index(src_option) + 1 >= len(argv):
            print(f"--save-references needs {src_option} DIR (a checkout of {check.REF_REPO} at {check.REF_COMMIT})",
                  file=sys.stderr)
            return 2
        runs = check.reference_runs(Path(argv[argv.index(src_option) + 1]))
        ref = mean_figures(list(runs.values()))
        command = f"python -m {check.__spec__.name} --save-references {src_option} DIR"
        provenance = {"repository": check.REF_REPO, "commit": check.REF_COMMIT, "command": command}
        atomic.write_bytes(check.REFERENCES, runs_document(about, provenance, ref, runs).encode())  # whole or not at all
        print(f"wrote {check.REFERENCES}")
    else:
        ref = json.loads(check.REFERENCES.read_text())["figures"]
    rows = check.differences(check.mediasim_figures(), ref)
    print_rows(rows, "reference")
    for what, kwargs in alternatives:
        alt = check.mediasim_figures(**kwargs)
        shares = " / ".join(f"{x['rate_share']:.3f}" for x in alt["stretches"])
        sojourns = " / ".join(f"{x['sojourn_ms']:.1f}" for x in alt["stretches"])
        print(f"mediasim {what}: rate_share {shares}, sojourn_ms {sojourns}, ramp_s {alt['ramp_s']:.2f}, "
              f"backoff_s {alt['backoff_s']:.2f}, lost {alt['lost']}")
    return 0 if all(r[4] for r in rows) else 1
