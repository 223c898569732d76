"""Cross-check of mediasim's SCReAMv2 (``version = "v2"``,
draft-johansson-ccwg-rfc8298bis-screamv2) against Ericsson's own
ScreamV2Tx (github.com/EricssonResearch/scream at ``REF_COMMIT``).

The closed loop is RFC 8298's check's (``scream_crosscheck``): one call
through 1 Mbit/s, 0.6 at 30 s and 1 again at 50 s (70 s), 50 ms one way,
37,500 bytes of drop-tail queue, 30 frames a second of the target less
its headers in packets of at most 1200 RTP bytes, periodic feedback at
each of ``FEEDBACK_MS``, the figures the mean over those runs. What
differs is SCReAMv2's interface: the reference side
(``scream_v2_harness.cpp``) feeds ScreamV2Tx the RFC 8888 messages its
ScreamRx writes, byte for byte, and mediasim's side sends RFC 8888
feedback too. Both pace at 1.5 times the target (PACKET_PACING_HEADROOM,
inside the controller: mediasim's pacer runs at factor 1).

The reference is built with the draft's constants where its constructor
takes them (BETA_LOSS, BETA_ECN, QDELAY_TARGET_LO 60 ms, the headrooms,
MUL_INCREASE_FACTOR 0.02; its own defaults differ: a 100 ms delay target,
0.05), and with its adaptive pacing-rate scale, adaptive target-rate
scale and frame-size overhead off, as mediasim has none of them; what
remains is the reference's own code, including compensations the draft
does not describe (docs/models/scream.md). So agreement is a tolerance
(``TOLERANCE``): the sojourn's is tight, as both stand on a queue well
under the 60 ms target, which a changed target would move.

Run ``python -m mediasim.validation.scream_v2_crosscheck`` (mediasim
against the stored figures, tests/data/scream_v2_references.json) or
``--save-references --scream-src DIR`` (DIR a checkout of the reference
at ``REF_COMMIT``; builds it with g++, runs it, and stores its figures).
A reference check, not a dependency.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from . import media_loop, scream_crosscheck
from .media_loop import Row, Run, mean_figures

REFERENCES = Path(__file__).resolve().parents[3] / "tests" / "data" / "scream_v2_references.json"
HARNESS = Path(__file__).with_name("scream_v2_harness.cpp")
REF_REPO = scream_crosscheck.REF_REPO
REF_COMMIT = "c8f84c3dc920cb65f0c99126cec3fb7778b57777"  # 2026-07-31, the repository's head then

FPS = scream_crosscheck.FPS
FEEDBACK_MS = scream_crosscheck.FEEDBACK_MS
RATES_BPS = (scream_crosscheck.MIN_BPS, scream_crosscheck.START_BPS, scream_crosscheck.MAX_BPS)

#: Allowed difference, mediasim against the reference, per figure (each a mean over the feedback intervals).
TOLERANCE = {"rate_share": 0.05, "sojourn_ms": 10.0, "ramp_s": 1.0, "backoff_s": 0.5}


def mediasim_samples(feedback_ms: float = FEEDBACK_MS[0], **cc: float) -> Run:
    """mediasim's run, in the reference harness's 100 ms samples; ``cc``
    overrides SCReAMv2's fields."""
    return scream_crosscheck.mediasim_samples(1.0, feedback_ms, version="v2", **cc)


def mediasim_figures(**cc: float) -> dict[str, Any]:
    """mediasim's figures, the mean over the feedback intervals."""
    return mean_figures([mediasim_samples(fb, **cc) for fb in FEEDBACK_MS])


def reference_runs(src: Path) -> dict[str, Run]:
    """Builds the harness once with the reference's sources in ``src`` (a
    checkout of ``REF_REPO`` at ``REF_COMMIT``) and runs it at each of
    ``FEEDBACK_MS``: (samples, lost) by interval."""
    code = src / "code"
    parts = [code / f for f in ("ScreamV2Tx.cpp", "ScreamV2TxStream.cpp", "ScreamTx.cpp", "ScreamRx.cpp",
                                "RtpQueue.cpp")]
    if not all(p.exists() for p in parts):
        raise RuntimeError(f"{src} is not a checkout of {REF_REPO} with SCReAMv2 (no code/ScreamV2Tx.cpp)")
    return media_loop.harness_runs(HARNESS, parts, code, FPS, FEEDBACK_MS, RATES_BPS)


def differences(ours: dict[str, Any], ref: dict[str, Any]) -> list[Row]:
    """(figure, mediasim, reference, tolerance, within) for each compared figure."""
    return media_loop.differences(ours, ref, TOLERANCE)


def main(argv: list[str]) -> int:
    about = ("Ericsson's SCReAMv2 (ScreamV2Tx/ScreamRx, RFC 8888 feedback) in mediasim's harness on the "
             "cross-check's path (mediasim.validation.scream_v2_crosscheck), one run per feedback interval (ms); "
             "tests/test_controller_crosschecks.py holds mediasim's figures to these within the module's TOLERANCE.")
    alternatives: list[tuple[str, dict[str, Any]]] = [
        ("with the reference's own MUL_INCREASE_FACTOR 0.05", {"mul_increase_factor": 0.05})]
    return media_loop.main(argv, sys.modules[__name__], "--scream-src", about, alternatives)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
