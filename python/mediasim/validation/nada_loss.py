"""NADA under random loss, against Cisco's code: the NADA cross-check's
path (``nada_crosscheck``) with each packet on the way lost with
probability ``LOSS_RATES`` (mediasim's ``packet`` loss model on the link,
the sender's RTCP included; the harness's ``loss=P seed=N``,
path_harness.h), the reference's ``NadaController`` in the same harness.

One loss pattern decides much of a run (NADA leaves its accelerated
ramp-up on any loss in 500 ms, and the reference's runs at 2% loss range
over 0.2-1.0 of the capacity), so each side runs ``SEEDS`` loss seeds at
each of ``FEEDBACK_MS``, and the figures are the means over those runs:
the sending rate over the capacity and the mean bottleneck sojourn in the
last 10 s of each capacity stretch, and packets lost in all. Three
versions of mediasim's NADA run: the default (the ramp-up's test on the
filtered delay, RFC 8888 feedback), the test on each packet's delay with
RFC 8888 feedback (arrival times in 1/1024 s), and the same with
transport-wide feedback (250 us), the nearest to the reference, whose
feedback carries microseconds.

RFC 8698's loss penalty alone sets NADA's equilibrium: DLOSS (p /
PLRREF)^2 is 10 ms at 1% and 40 ms at 2%, so x_curr = PRIO XREF RMAX /
r_ref puts the rate at 1.5 Mbit/s (the capacity then limits it) and 375
kbit/s (``equilibrium_bps``); the ramp-up between losses lifts both sides
above that.

``python -m mediasim.validation.nada_loss`` prints mediasim's figures
beside the stored reference's (tests/data/nada_loss_references.json);
``--save-references --nada-src DIR`` rebuilds those from a checkout of
ns3-rmcat at ``nada_crosscheck.REF_COMMIT``. ``tests/test_controller_crosschecks.py``
holds the figures docs/models/nada.md gives. A reference check, not a
dependency.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..campaign import atomic
from . import media_loop, nada_crosscheck
from .media_loop import Run

REFERENCES = Path(__file__).resolve().parents[3] / "tests" / "data" / "nada_loss_references.json"
LOSS_RATES = (0.01, 0.02)
FEEDBACK_MS = (80.0, 100.0, 120.0)
SEEDS = (0, 1, 2, 3)

#: mediasim's versions: (name, feedback format, NADA's fields).
VERSIONS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("default (filtered delay, RFC 8888)", "rfc8888", {}),
    ("each packet's delay, RFC 8888", "rfc8888", {"rampup_delay": "raw"}),
    ("each packet's delay, transport-wide", "twcc", {"rampup_delay": "raw"}),
)


def equilibrium_bps(loss: float, xref_ms: float = 10.0, dloss_ms: float = 10.0, plrref: float = 0.01,
                    rmax_bps: float = nada_crosscheck.MAX_BPS) -> float:
    """RFC 8698's rate where the loss penalty alone is the whole signal
    (x_curr = PRIO XREF RMAX / r_ref, PRIO 1), within RMIN and RMAX."""
    x_ms = dloss_ms * (loss / plrref) ** 2
    return min(rmax_bps, max(nada_crosscheck.MIN_BPS, xref_ms * rmax_bps / x_ms))


def figures(runs: list[Run]) -> dict[str, Any]:
    """The mean over ``runs`` of each stretch's rate over capacity and
    sojourn, with the least and greatest rate and the greatest sojourn of
    any run; packets lost summed."""
    each = [media_loop.figures(samples, lost) for samples, lost in runs]
    out = []
    for i, s in enumerate(each[0]["stretches"]):
        shares = [f["stretches"][i]["rate_share"] for f in each]
        sojourns = [f["stretches"][i]["sojourn_ms"] for f in each]
        out.append({"from_s": s["from_s"], "to_s": s["to_s"], "capacity_bps": s["capacity_bps"],
                    "rate_share": sum(shares) / len(shares), "rate_share_min": min(shares),
                    "rate_share_max": max(shares), "sojourn_ms": sum(sojourns) / len(sojourns),
                    "sojourn_ms_max": max(sojourns)})
    return {"runs": len(runs), "stretches": out, "lost": sum(f["lost"] for f in each)}


def mediasim_figures(loss: float, fmt: str = "rfc8888", **cc: Any) -> dict[str, Any]:
    """mediasim's figures at ``loss`` with feedback ``fmt`` and NADA's
    fields ``cc`` (over the reference's rate shaping), over every interval
    and seed."""
    return figures([media_loop.mediasim_samples(nada_crosscheck.scenario(fb, fmt, loss, **cc),
                                                nada_crosscheck.START_BPS, seed)
                    for fb in FEEDBACK_MS for seed in SEEDS])


def reference_figures(src: Path) -> dict[str, dict[str, Any]]:
    """The reference's figures by loss rate, built from ``src`` (a
    checkout of ns3-rmcat)."""
    code = src / "model" / "congestion-control"
    parts = [code / f for f in ("nada-controller.cc", "sender-based-controller.cc")]
    if not all(p.exists() for p in parts):
        raise RuntimeError(f"{src} is not a checkout of {nada_crosscheck.REF_REPO}")
    rates = (nada_crosscheck.MIN_BPS, nada_crosscheck.START_BPS, nada_crosscheck.MAX_BPS)
    return {str(loss): figures(list(media_loop.harness_runs(
        nada_crosscheck.HARNESS, parts, code, nada_crosscheck.FPS, FEEDBACK_MS, rates, loss, SEEDS).values()))
        for loss in LOSS_RATES}


def _line(name: str, f: dict[str, Any]) -> str:
    shares = " / ".join(f"{s['rate_share']:.2f} ({s['rate_share_min']:.2f}-{s['rate_share_max']:.2f})"
                        for s in f["stretches"])
    sojourns = " / ".join(f"{s['sojourn_ms']:.1f}" for s in f["stretches"])
    return f"  {name:<40} rate/capacity {shares}; sojourn ms {sojourns}; lost {f['lost']}"


def main(argv: list[str]) -> int:
    """Prints the reference's and mediasim's figures at each loss rate
    (after rebuilding the reference with ``--save-references --nada-src
    DIR``). 0, or 2 for bad arguments."""
    if "--save-references" in argv:
        if "--nada-src" not in argv or argv.index("--nada-src") + 1 >= len(argv):
            print(f"--save-references needs --nada-src DIR (a checkout of {nada_crosscheck.REF_REPO} "
                  f"at {nada_crosscheck.REF_COMMIT})", file=sys.stderr)
            return 2
        ref = reference_figures(Path(argv[argv.index("--nada-src") + 1]))
        doc = {"about": "Cisco's NADA (ns3-rmcat's NadaController) in mediasim's harness on the NADA cross-check's "
                        "path with random loss (mediasim.validation.nada_loss): per loss rate, the mean over "
                        "feedback intervals x loss seeds.",
               "provenance": {"repository": nada_crosscheck.REF_REPO, "commit": nada_crosscheck.REF_COMMIT,
                              "command": "python -m mediasim.validation.nada_loss --save-references --nada-src DIR"},
               "feedback_ms": list(FEEDBACK_MS), "seeds": list(SEEDS), "figures": ref}
        atomic.write_bytes(REFERENCES, (json.dumps(doc, indent=1) + "\n").encode())  # whole or not at all
        print(f"wrote {REFERENCES}")
    else:
        ref = json.loads(REFERENCES.read_text())["figures"]
    print(f"{len(FEEDBACK_MS)} feedback intervals x {len(SEEDS)} loss seeds; stretches 20-30 / 40-50 / 60-70 s "
          "(mean, least-greatest)")
    for loss in LOSS_RATES:
        print(f"loss {loss:.0%} (RFC 8698's loss equilibrium {equilibrium_bps(loss) / 1e3:.0f} kbit/s)")
        print(_line("reference (Cisco's NadaController)", ref[str(loss)]))
        for name, fmt, cc in VERSIONS:
            print(_line(name, mediasim_figures(loss, fmt, **cc)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
