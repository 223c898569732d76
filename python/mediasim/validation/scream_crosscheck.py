"""Cross-check of mediasim's SCReAM (RFC 8298) against Ericsson's own code
(github.com/EricssonResearch/scream, the RFC 8298-era commit ``REF_COMMIT``).

Both run the same closed loop: one video call through a bottleneck whose
capacity steps as RFC 8867 case 5.1's pattern, shortened (1 Mbit/s, 0.6 at
30 s, 1 again at 50 s; 70 s), 50 ms one way, 300 ms (37,500 bytes) of
drop-tail queue, 30 frames a second of target / fps bytes less their
headers (RFC 8298 section 5: the target is the wire rate, which the encoder
compensates for its RTP, UDP and IP headers) cut into packets of at most
1200 RTP bytes, feedback on a periodic grid back over the same delay. The
reference side is ``scream_harness.cpp`` (this folder), compiled with the
reference's ScreamTx, ScreamRx and RtpQueue; mediasim's side is the same
path as a scenario (``scenario()``): a trace source of one frame size
scaled to the target, RFC 8888 feedback, a pacer with no burst at the
reference's 1.5 x SCReAM's pacing rate (its kPacketPacingHeadRoom; RFC
8298 paces at 1 x, which the command also runs, for comparison).

Compared, from 100 ms samples: the sending rate over the capacity in the
last 10 s of each capacity stretch, the mean bottleneck sojourn there,
the time to first reach 80% of the first capacity, the time after the drop
to the first target under the new capacity, and packets lost. Each is the
mean over runs with feedback every ``FEEDBACK_MS`` (40 to 60 ms): both
controllers cycle, and with every clock in the loop exact (frames every
33.3 ms, feedback on its grid) one run's 10 s means depend on how the
cycles meet the feedback's phase, by up to a fifth of the rate on either
side; the mean over the intervals does not. The two are not the same
program (the reference code had moved on from the RFC by then: its fast
start, its window validation, its pacing), so agreement is a tolerance
(``TOLERANCE``), not equality; ``tests/test_scream_crosscheck.py`` holds
mediasim's live figures to the reference's stored ones
(tests/data/scream_references.json).

Run ``python -m mediasim.validation.scream_crosscheck`` (mediasim against
the stored figures) or ``--save-references --scream-src DIR`` (DIR a
checkout of the reference at ``REF_COMMIT``; builds it with g++, runs it,
and stores its figures). A reference check, not a dependency.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .media_loop import (CAPS, DURATION_S, ONE_WAY_MS, QUEUE_BYTES, Row, backoff_s, call_scenario, print_rows,
                         stretches, within)

REFERENCES = Path(__file__).resolve().parents[3] / "tests" / "data" / "scream_references.json"
HARNESS = Path(__file__).with_name("scream_harness.cpp")
REF_REPO = "https://github.com/EricssonResearch/scream"
REF_COMMIT = "d881890be783e8d652cd06e60425c5d919e812c0"  # 2017-12-19, the code of RFC 8298's time

FPS = 30.0
#: The feedback intervals whose runs' figures are averaged, ms.
FEEDBACK_MS = (40.0, 42.5, 45.0, 47.5, 50.0, 52.5, 55.0, 57.5, 60.0)
MIN_BPS, START_BPS, MAX_BPS = 150e3, 150e3, 1.5e6  # RFC 8867's range; both start at the minimum
MAX_RTP_BYTES = 1200
IP_UDP_BYTES = 28
PACING_HEADROOM = 1.5  # the reference paces at 1.5 x cwnd / s_rtt (kPacketPacingHeadRoom); RFC 8298 at 1 x

#: Allowed difference, mediasim against the reference, per figure (each a
#: mean over the feedback intervals). The sojourn's is the widest: the
#: reference subtracts 0.2 of its RTP queue from the rate where RFC 8298
#: subtracts all of it (TX_QUEUE_SIZE_FACTOR), which lets it stand on a
#: longer queue (the command prints mediasim with 0.2 as well).
TOLERANCE = {"rate_share": 0.05, "sojourn_ms": 30.0, "ramp_s": 1.0, "backoff_s": 0.5}


def scenario(pacing_factor: float = PACING_HEADROOM, feedback_ms: float = FEEDBACK_MS[0],
             **cc: float) -> dict[str, Any]:
    """mediasim's side of the loop, as a scenario document; the pacer's
    factor is the reference's headroom unless given (1.0 is RFC 8298's
    pacing rate itself), and ``cc`` overrides SCReAM's fields."""
    sender = {"media": True, "max_packet_bytes": MAX_RTP_BYTES + IP_UDP_BYTES,
              "source": {"type": "trace", "fps": FPS, "frames_bytes": [1000]},
              "pacer": {"factor": pacing_factor, "burst_ms": 0},
              "feedback": {"format": "rfc8888", "interval_ms": feedback_ms},
              "cc": {"type": "scream", "min_bps": MIN_BPS, "start_bps": START_BPS, "max_bps": MAX_BPS, **cc}}
    return call_scenario("scream-crosscheck", sender, MAX_BPS)


def figures(samples: list[dict[str, float]], lost: int) -> dict[str, Any]:
    """The compared figures from 100 ms samples {t, target_bps, sent_bps,
    sojourn_ms (NaN when no packet left the queue)}."""
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


def mediasim_samples(pacing_factor: float = PACING_HEADROOM, feedback_ms: float = FEEDBACK_MS[0],
                     **cc: float) -> tuple[list[dict[str, float]], int]:
    """mediasim's run, in the reference harness's 100 ms samples."""
    import numpy as np

    import mediasim

    res = mediasim.run(mediasim.Scenario.from_dict(scenario(pacing_factor, feedback_ms, **cc)))
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
                        "target_bps": float(before["value"].iloc[-1]) if len(before) else START_BPS,
                        "sent_bps": float(sent[i]),
                        "sojourn_ms": float(soj_sum[i] / soj_n[i]) if soj_n[i] else float("nan")})
    lost = int(res.tables["flows"].set_index("flow").loc["c/s/rtp", "lost"])
    return samples, lost


#: A stored run's sample rows, column by column.
SAMPLE_COLUMNS = ("t", "target_bps", "sent_bps", "sojourn_ms")


def stored_runs(doc: dict[str, Any]) -> list[tuple[list[dict[str, float]], int]]:
    """The reference's runs (samples, lost) as stored, in interval order."""
    return [([dict(zip(doc["columns"], row)) for row in r["samples"]], r["lost"]) for r in doc["runs"].values()]


def mean_figures(runs: list[tuple[list[dict[str, float]], int]]) -> dict[str, Any]:
    """The figures of each run (samples, lost), averaged; packets lost summed."""
    each = [figures(samples, lost) for samples, lost in runs]
    out = {k: sum(f[k] for f in each) / len(each) for k in ("ramp_s", "backoff_s")}
    out["stretches"] = [{**s, **{k: sum(f["stretches"][i][k] for f in each) / len(each)
                                 for k in ("rate_share", "sojourn_ms")}}
                        for i, s in enumerate(each[0]["stretches"])]
    out["lost"] = sum(f["lost"] for f in each)
    return out


def mediasim_figures(pacing_factor: float = PACING_HEADROOM, **cc: float) -> dict[str, Any]:
    """mediasim's figures, the mean over the feedback intervals."""
    return mean_figures([mediasim_samples(pacing_factor, fb, **cc) for fb in FEEDBACK_MS])


def reference_runs(src: Path) -> dict[str, tuple[list[dict[str, float]], int]]:
    """Builds the harness once with the reference's sources in ``src`` (a
    checkout of ``REF_REPO``) and runs it at each of ``FEEDBACK_MS``:
    (samples, lost) by interval."""
    code = src / "code"
    parts = [code / f for f in ("ScreamTx.cpp", "ScreamRx.cpp", "RtpQueue.cpp")]
    if not all(p.exists() for p in parts):
        raise RuntimeError(f"{src} is not a checkout of {REF_REPO} (no code/ScreamTx.cpp)")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "scream_harness"
        subprocess.run(["g++", "-O2", "-std=c++14", f"-I{code}", "-o", str(exe), str(HARNESS), *map(str, parts)],
                       check=True, capture_output=True, text=True)
        return {str(fb): _run_harness(exe, fb) for fb in FEEDBACK_MS}


def _run_harness(exe: Path, feedback_ms: float) -> tuple[list[dict[str, float]], int]:
    """One run of the built harness with feedback every ``feedback_ms``."""
    args = [DURATION_S, FPS, feedback_ms, ONE_WAY_MS, QUEUE_BYTES, MIN_BPS, START_BPS, MAX_BPS]
    steps = [f"{t}:{c}" for t, c in CAPS]
    out = subprocess.run([str(exe), *map(str, args), *steps], check=True, capture_output=True, text=True).stdout
    samples, lost = [], 0
    for line in out.splitlines():
        t, target, sent, soj, lost_so_far = line.split()
        samples.append({"t": float(t), "target_bps": float(target), "sent_bps": float(sent),
                        "sojourn_ms": float(soj) if float(soj) >= 0 else float("nan")})
        lost = int(lost_so_far)
    return samples, lost


def differences(ours: dict[str, Any], ref: dict[str, Any]) -> list[Row]:
    """(figure, mediasim, reference, tolerance, within) for each compared figure."""
    rows = []
    for a, b in zip(ours["stretches"], ref["stretches"]):
        span = f"{a['from_s']:.0f}-{a['to_s']:.0f} s"
        rows += [within(f"{k} {span}", a[k], b[k], TOLERANCE[k]) for k in ("rate_share", "sojourn_ms")]
    rows += [within(k, ours[k], ref[k], TOLERANCE[k]) for k in ("ramp_s", "backoff_s")]
    rows.append(("lost", ours["lost"], ref["lost"], 0.0, ours["lost"] == ref["lost"]))
    return rows


def main(argv: list[str]) -> int:
    if "--save-references" in argv:
        if "--scream-src" not in argv or argv.index("--scream-src") + 1 >= len(argv):
            print(f"--save-references needs --scream-src DIR (a checkout of {REF_REPO} at {REF_COMMIT})",
                  file=sys.stderr)
            return 2
        src = Path(argv[argv.index("--scream-src") + 1])
        runs = reference_runs(src)
        ref = mean_figures(list(runs.values()))
        doc = {"about": "Ericsson's SCReAM (ScreamTx/ScreamRx) in mediasim's harness on the cross-check's path "
                        "(mediasim.validation.scream_crosscheck), one run per feedback interval (ms); "
                        "tests/test_scream_crosscheck.py holds mediasim's figures to these within the module's "
                        "TOLERANCE.",
               "provenance": {"repository": REF_REPO, "commit": REF_COMMIT,
                              "command": "python -m mediasim.validation.scream_crosscheck --save-references "
                                         "--scream-src DIR"},
               "figures": ref, "columns": list(SAMPLE_COLUMNS),
               "runs": {fb: {"lost": lost, "samples": [[s[c] for c in SAMPLE_COLUMNS] for s in samples]}
                        for fb, (samples, lost) in runs.items()}}
        REFERENCES.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
        print(f"wrote {REFERENCES}")
    else:
        ref = json.loads(REFERENCES.read_text())["figures"]
    ours = mediasim_figures()
    rows = differences(ours, ref)
    print_rows(rows, "reference")
    for what, factor, cc in [("paced at RFC 8298's 1 x cwnd / s_rtt", 1.0, {}),
                             ("with the reference's TX_QUEUE_SIZE_FACTOR 0.2", PACING_HEADROOM,
                              {"tx_queue_size_factor": 0.2})]:
        alt = mediasim_figures(factor, **cc)
        shares = " / ".join(f"{x['rate_share']:.3f}" for x in alt["stretches"])
        sojourns = " / ".join(f"{x['sojourn_ms']:.1f}" for x in alt["stretches"])
        print(f"mediasim {what}: rate_share {shares}, sojourn_ms {sojourns}")
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
