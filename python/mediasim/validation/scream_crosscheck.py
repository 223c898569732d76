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
(``TOLERANCE``), not equality; ``tests/test_controller_crosschecks.py`` holds
mediasim's live figures to the reference's stored ones
(tests/data/scream_references.json).

Run ``python -m mediasim.validation.scream_crosscheck`` (mediasim against
the stored figures) or ``--save-references --scream-src DIR`` (DIR a
checkout of the reference at ``REF_COMMIT``; builds it with g++, runs it,
and stores its figures). A reference check, not a dependency.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from . import media_loop
from .media_loop import Row, Run, call_scenario, mean_figures

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
             **cc: Any) -> dict[str, Any]:
    """mediasim's side of the loop, as a scenario document; the pacer's
    factor is the reference's headroom unless given (1.0 is RFC 8298's
    pacing rate itself), and ``cc`` overrides SCReAM's fields."""
    sender = {"media": True, "max_packet_bytes": MAX_RTP_BYTES + IP_UDP_BYTES,
              "source": {"type": "trace", "fps": FPS, "frames_bytes": [1000]},
              "pacer": {"factor": pacing_factor, "burst_ms": 0},
              "feedback": {"format": "rfc8888", "interval_ms": feedback_ms},
              "cc": {"type": "scream", "min_bps": MIN_BPS, "start_bps": START_BPS, "max_bps": MAX_BPS, **cc}}
    return call_scenario("scream-crosscheck", sender, MAX_BPS)


def mediasim_samples(pacing_factor: float = PACING_HEADROOM, feedback_ms: float = FEEDBACK_MS[0],
                     **cc: Any) -> Run:
    """mediasim's run, in the reference harness's 100 ms samples."""
    return media_loop.mediasim_samples(scenario(pacing_factor, feedback_ms, **cc), START_BPS)


def mediasim_figures(pacing_factor: float = PACING_HEADROOM, **cc: Any) -> dict[str, Any]:
    """mediasim's figures, the mean over the feedback intervals."""
    return mean_figures([mediasim_samples(pacing_factor, fb, **cc) for fb in FEEDBACK_MS])


def reference_runs(src: Path) -> dict[str, Run]:
    """Builds the harness once with the reference's sources in ``src`` (a
    checkout of ``REF_REPO``) and runs it at each of ``FEEDBACK_MS``:
    (samples, lost) by interval."""
    code = src / "code"
    parts = [code / f for f in ("ScreamTx.cpp", "ScreamRx.cpp", "RtpQueue.cpp")]
    if not all(p.exists() for p in parts):
        raise RuntimeError(f"{src} is not a checkout of {REF_REPO} (no code/ScreamTx.cpp)")
    return media_loop.harness_runs(HARNESS, parts, code, FPS, FEEDBACK_MS, (MIN_BPS, START_BPS, MAX_BPS))


def differences(ours: dict[str, Any], ref: dict[str, Any]) -> list[Row]:
    """(figure, mediasim, reference, tolerance, within) for each compared figure."""
    return media_loop.differences(ours, ref, TOLERANCE)


def main(argv: list[str]) -> int:
    about = ("Ericsson's SCReAM (ScreamTx/ScreamRx) in mediasim's harness on the cross-check's path "
             "(mediasim.validation.scream_crosscheck), one run per feedback interval (ms); "
             "tests/test_controller_crosschecks.py holds mediasim's figures to these within the module's TOLERANCE.")
    alternatives: list[tuple[str, dict[str, Any]]] = [
        ("paced at RFC 8298's 1 x cwnd / s_rtt", {"pacing_factor": 1.0}),
        ("with the reference's TX_QUEUE_SIZE_FACTOR 0.2", {"tx_queue_size_factor": 0.2})]
    return media_loop.main(argv, sys.modules[__name__], "--scream-src", about, alternatives)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
