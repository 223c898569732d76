"""Cross-check of mediasim's NADA (RFC 8698) against Cisco's own code
(github.com/cisco/ns3-rmcat at ``REF_COMMIT``: ``NadaController`` and its
base ``SenderBasedController``, written to run without ns-3).

Both run the same closed loop: one video call through a bottleneck whose
capacity steps as RFC 8867 case 5.1's pattern, shortened (1 Mbit/s, 0.6 at
30 s, 1 again at 50 s; 70 s), 50 ms one way, 300 ms (37,500 bytes) of
drop-tail queue, 30 frames a second of r_vin / fps bytes less their
headers cut into packets of at most 1200 RTP bytes, sent one by one at
r_send from a rate-shaping buffer (mediasim's pacer, factor 1, no burst),
and feedback of every packet received, sent back every ``FEEDBACK_MS``
over the same delay. The reference side is ``nada_harness.cpp`` (this
folder), compiled with the reference's controller and run as ns3-rmcat's
RmcatSender runs it: with its BETA_V = BETA_S = 0, r_vin = r_send = r_ref,
which mediasim is given too (``beta_v = beta_s = 0``; RFC 8698's 0.1,
which the command also runs, for comparison). mediasim's side is the
same path as a scenario (``scenario()``): a trace source of one frame size
scaled to the target, RFC 8888 feedback, NADA.

Compared, from 100 ms samples: the sending rate over the capacity in the
last 10 s of each capacity stretch, the mean bottleneck sojourn there,
the time to first reach 80% of the first capacity, the time after the drop
to the first target under the new capacity, and packets lost; each the
mean over runs with feedback every 80 to 120 ms. The two are not the same
program, so agreement is a tolerance (``TOLERANCE``), not equality; the
one known difference is the accelerated ramp-up's test, which the
reference makes on every packet's queuing delay in its 500 ms history and
mediasim on the filtered delay (docs/models/nada.md).
``tests/test_controller_crosschecks.py`` holds mediasim's live figures to the
reference's stored ones (tests/data/nada_references.json).

Run ``python -m mediasim.validation.nada_crosscheck`` (mediasim against
the stored figures) or ``--save-references --nada-src DIR`` (DIR a
checkout of the reference at ``REF_COMMIT``; builds it with g++, runs it,
and stores its figures). A reference check, not a dependency.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from . import media_loop
from .media_loop import Row, Run, call_scenario, mean_figures

REFERENCES = Path(__file__).resolve().parents[3] / "tests" / "data" / "nada_references.json"
HARNESS = Path(__file__).with_name("nada_harness.cpp")
REF_REPO = "https://github.com/cisco/ns3-rmcat"
REF_COMMIT = "adb3f8e5c17829a61c29e6adb637a93212e21198"  # 2020-09-16, the code of RFC 8698's tests

FPS = 30.0
#: The feedback intervals whose runs' figures are averaged, ms (ns3-rmcat
#: sends feedback every 100 ms, as RFC 8698's DELTA).
FEEDBACK_MS = (80.0, 90.0, 100.0, 110.0, 120.0)
MIN_BPS, START_BPS, MAX_BPS = 150e3, 150e3, 1.5e6  # RFC 8867's range and RFC 8698's defaults
MAX_RTP_BYTES = 1200
IP_UDP_BYTES = 28
#: ns3-rmcat's rate shaping (rmcat-constants.h); RFC 8698 section 4.4 gives 0.1 for both.
REFERENCE_BETAS = {"beta_v": 0.0, "beta_s": 0.0}

#: Allowed difference, mediasim against the reference, per figure (each a
#: mean over the feedback intervals; packets lost summed over the runs).
#: The time to ramp up has the widest: the reference counts a packet's
#: payload in its receiving rate, mediasim the packet on the wire, so the
#: reference's (1 + gamma) r_recv is the lower; and it ends the accelerated
#: ramp-up on any packet's queuing delay over QEPS, mediasim on the
#: filtered delay (``rampup_delay``; the command prints mediasim with each
#: packet's delay as well). The reference loses a packet or two in some
#: runs at the drop, where its queue peaks, mediasim none.
TOLERANCE = {"rate_share": 0.03, "sojourn_ms": 8.0, "ramp_s": 4.0, "backoff_s": 0.25, "lost": 5.0}


def scenario(feedback_ms: float = FEEDBACK_MS[0], feedback_format: str = "rfc8888", loss: float = 0.0,
             **cc: Any) -> dict[str, Any]:
    """mediasim's side of the loop, as a scenario document, with feedback
    in ``feedback_format`` and each packet on the way lost with
    probability ``loss``; ``cc`` overrides NADA's fields (by default the
    reference's rate shaping)."""
    sender = {"media": True, "max_packet_bytes": MAX_RTP_BYTES + IP_UDP_BYTES,
              "source": {"type": "trace", "fps": FPS, "frames_bytes": [1000]},
              "pacer": {"factor": 1.0, "burst_ms": 0},
              "feedback": {"format": feedback_format, "interval_ms": feedback_ms},
              "cc": {"type": "nada", "rmin_bps": MIN_BPS, "start_bps": START_BPS, "rmax_bps": MAX_BPS,
                     **REFERENCE_BETAS, **cc}}
    return call_scenario("nada-crosscheck", sender, MAX_BPS, loss)


def mediasim_samples(feedback_ms: float = FEEDBACK_MS[0], **cc: Any) -> Run:
    """mediasim's run, in the reference harness's 100 ms samples."""
    return media_loop.mediasim_samples(scenario(feedback_ms, **cc), START_BPS)


def mediasim_figures(**cc: Any) -> dict[str, Any]:
    """mediasim's figures, the mean over the feedback intervals."""
    return mean_figures([mediasim_samples(fb, **cc) for fb in FEEDBACK_MS])


def reference_runs(src: Path) -> dict[str, Run]:
    """Builds the harness once with the reference's controller in ``src``
    (a checkout of ``REF_REPO``) and runs it at each of ``FEEDBACK_MS``:
    (samples, lost) by interval."""
    code = src / "model" / "congestion-control"
    parts = [code / f for f in ("nada-controller.cc", "sender-based-controller.cc")]
    if not all(p.exists() for p in parts):
        raise RuntimeError(f"{src} is not a checkout of {REF_REPO} (no model/congestion-control/nada-controller.cc)")
    return media_loop.harness_runs(HARNESS, parts, code, FPS, FEEDBACK_MS, (MIN_BPS, START_BPS, MAX_BPS))


def differences(ours: dict[str, Any], ref: dict[str, Any]) -> list[Row]:
    """(figure, mediasim, reference, tolerance, within) for each compared figure."""
    return media_loop.differences(ours, ref, TOLERANCE)


def main(argv: list[str]) -> int:
    about = ("Cisco's NADA (ns3-rmcat's NadaController) in mediasim's harness on the cross-check's path "
             "(mediasim.validation.nada_crosscheck), one run per feedback interval (ms); "
             "tests/test_controller_crosschecks.py holds mediasim's figures to these within the module's TOLERANCE.")
    alternatives: list[tuple[str, dict[str, Any]]] = [
        ("with RFC 8698's beta_v = beta_s = 0.1", {"beta_v": 0.1, "beta_s": 0.1}),
        ("with the ramp-up's test on each packet's delay", {"rampup_delay": "raw"})]
    return media_loop.main(argv, sys.modules[__name__], "--nada-src", about, alternatives)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
