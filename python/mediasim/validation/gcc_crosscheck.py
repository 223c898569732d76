"""Cross-check of GCC's overuse detector against aiortc's, a Python port
of libwebrtc's (``aiortc.rate.OveruseDetector``).

Both detectors are fed the same sequence of delay-gradient estimates, one
per packet group: a seeded sequence of calm noise, a rising gradient (a
queue filling), a falling one (a queue draining), isolated spikes (which
must not move the adaptive threshold) and a return to calm, with group
spacings around a 30 fps frame interval and the number of deltas counting
up from 1. aiortc is run in its own interpreter (``scripts/install-
reference-simulators`` makes one at /opt/aiortcenv/venv, or set
``MEDIASIM_AIORTC_PYTHON``); its hypothesis and threshold after every
group are stored, with the inputs, in tests/data/gcc_references.json.
The engine's test ``proto::cc::gcc::tests::the_detector_agrees_with_aiortc``
feeds mediasim's detector (libwebrtc's gains, k_up 0.0087 and k_down
0.039, as the trendline estimator uses them) the stored inputs and holds
it to aiortc's outputs: the same usage at every group and the threshold
within 1e-9 ms.

Run ``python -m mediasim.validation.gcc_crosscheck`` (prints the
agreement with the stored figures) or ``--save-references`` (runs aiortc
and stores its figures). A reference check, not a dependency.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..campaign import atomic

REFERENCES = Path(__file__).resolve().parents[3] / "tests" / "data" / "gcc_references.json"
AIORTC_PYTHON = os.environ.get("MEDIASIM_AIORTC_PYTHON", "/opt/aiortcenv/venv/bin/python")
GROUPS = 1500
SEED = 8867


def inputs(seed: int = SEED, groups: int = GROUPS) -> list[dict[str, Any]]:
    """One record per group: the gradient estimate (offset, ms), the
    group's send spacing (ms), the number of deltas so far, and the time
    (ms, whole)."""
    rng = random.Random(seed)
    out, now = [], 1000
    for i in range(groups):
        phase = i * 5 // groups  # five phases
        if phase == 0 or phase == 4:
            offset = rng.gauss(0.0, 0.05)
        elif phase == 1:
            offset = 0.02 * (i - groups // 5) / (groups // 5) * 10 + rng.gauss(0.0, 0.05)
        elif phase == 2:
            offset = -0.2 + rng.gauss(0.0, 0.05)
        else:
            offset = rng.gauss(0.0, 0.05) + (2.0 if i % 37 == 0 else 0.0)
        send_ms = 33.3 + rng.uniform(-3.0, 3.0)
        now += int(round(send_ms + rng.uniform(-2.0, 2.0)))
        out.append({"offset": offset, "send_ms": send_ms, "deltas": min(i + 1, 1000), "now_ms": now})
    return out


_AIORTC = r"""
import json, sys
from aiortc.rate import OveruseDetector, BandwidthUsage
d = OveruseDetector()
names = {BandwidthUsage.NORMAL: "normal", BandwidthUsage.UNDERUSING: "underuse", BandwidthUsage.OVERUSING: "overuse"}
out = []
for x in json.load(sys.stdin):
    u = d.detect(x["offset"], x["send_ms"], x["deltas"], x["now_ms"])
    out.append({"usage": names[u], "threshold_ms": d.threshold})
import aiortc
print(json.dumps({"version": aiortc.__version__, "outputs": out}))
"""


def aiortc_run(xs: list[dict[str, Any]]) -> dict[str, Any]:
    if not Path(AIORTC_PYTHON).exists():
        raise RuntimeError(f"no aiortc interpreter at {AIORTC_PYTHON}: run scripts/install-reference-simulators "
                           "or set MEDIASIM_AIORTC_PYTHON")
    proc = subprocess.run([AIORTC_PYTHON, "-c", _AIORTC], input=json.dumps(xs), capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"aiortc failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def summary(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    usages = [o["usage"] for o in outputs]
    return {"groups": len(usages), **{u: usages.count(u) for u in ("normal", "underuse", "overuse")},
            "threshold_final_ms": outputs[-1]["threshold_ms"],
            "threshold_max_ms": max(o["threshold_ms"] for o in outputs)}


def main(argv: list[str]) -> None:
    xs = inputs()
    if "--save-references" in argv:
        ref = aiortc_run(xs)
        doc = {"about": "aiortc's OveruseDetector (a port of libwebrtc's) on a seeded gradient sequence "
                        "(mediasim.validation.gcc_crosscheck); the engine's GCC detector test holds mediasim to "
                        "its usage at every group and its threshold within 1e-9 ms.",
               "provenance": {"aiortc": ref["version"],
                              "command": "python -m mediasim.validation.gcc_crosscheck --save-references"},
               "inputs": xs, "outputs": ref["outputs"]}
        atomic.write_bytes(REFERENCES, (json.dumps(doc) + "\n").encode())  # whole or not at all
        print(f"wrote {REFERENCES}: {summary(ref['outputs'])}")
        return
    doc = json.loads(REFERENCES.read_text())
    print(f"stored aiortc {doc['provenance']['aiortc']}: {summary(doc['outputs'])}")
    print("mediasim's side runs in the engine's tests: cargo test -p mediasim-engine the_detector_agrees_with_aiortc")


if __name__ == "__main__":
    main(sys.argv[1:])
