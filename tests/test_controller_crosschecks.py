"""mediasim's media controllers against their authors' code on the same
closed loop: SCReAM (RFC 8298) against Ericsson's
(`mediasim.validation.scream_crosscheck`), NADA (RFC 8698) against Cisco's
(`mediasim.validation.nada_crosscheck`). Each reference's figures are
stored in tests/data/; mediasim's are computed here and held to them
within the module's tolerances."""

import json

import pytest

from mediasim.validation import media_loop, nada_crosscheck, scream_crosscheck

CHECKS = {"scream": scream_crosscheck, "nada": nada_crosscheck}

#: Where both sides settle in each stretch: (rate over capacity, sojourn ms), least and most. SCReAM stays
#: under its 100 ms delay target; NADA stands on the queue XREF sets (XREF RMAX / r_ref: 15 ms at 1 Mbit/s).
SETTLED = {"scream": ((0.9, 1.02), (0.0, 100.0)), "nada": ((0.97, 1.01), (15.0, 45.0))}


@pytest.fixture(scope="module", params=list(CHECKS))
def check(request):
    """(name, module, the stored reference, mediasim's figures)."""
    x = CHECKS[request.param]
    return request.param, x, json.loads(x.REFERENCES.read_text()), x.mediasim_figures()


def test_the_stored_figures_are_those_of_the_stored_runs(check):
    _, x, stored, _ = check
    assert stored["provenance"]["commit"] == x.REF_COMMIT
    assert stored["provenance"]["command"].startswith(f"python -m {x.__name__} --save-references")
    assert list(stored["runs"]) == [str(fb) for fb in x.FEEDBACK_MS]
    assert json.loads(json.dumps(media_loop.mean_figures(media_loop.stored_runs(stored)))) == stored["figures"]


def test_mediasim_agrees_with_the_reference_code(check):
    name, x, stored, ours = check
    rows = x.differences(ours, stored["figures"])
    assert len(rows) == 9
    assert all(ok for *_, ok in rows), rows
    (rate_lo, rate_hi), (soj_lo, soj_hi) = SETTLED[name]
    for s in [*ours["stretches"], *stored["figures"]["stretches"]]:
        assert rate_lo < s["rate_share"] < rate_hi and soj_lo < s["sojourn_ms"] < soj_hi, (name, s)


@pytest.mark.parametrize("name,cc,failed", [
    # RFC 8298's RAMP_UP_SPEED (200 kbit/s per second) halved or doubled.
    ("scream", {"ramp_up_speed_bps": 100e3}, ["ramp_s"]),
    ("scream", {"ramp_up_speed_bps": 400e3}, ["ramp_s"]),
    # The queue NADA stands on follows XREF.
    ("nada", {"xref_ms": 20.0}, ["sojourn_ms 20-30 s", "sojourn_ms 40-50 s", "sojourn_ms 60-70 s"]),
    # KAPPA doubled backs off faster after the drop.
    ("nada", {"kappa": 1.0}, ["backoff_s"]),
    # DFILT halved raises the ramp-up's gamma (QBOUND / (RTT + DELTA + DFILT)).
    ("nada", {"dfilt_ms": 60.0}, ["ramp_s"]),
])
def test_the_check_tells_a_changed_constant(name, cc, failed):
    """One of the RFC's constants changed moves its figures out of the
    tolerance, and only those: the check can tell."""
    x = CHECKS[name]
    stored = json.loads(x.REFERENCES.read_text())
    alt = x.mediasim_figures(**cc)
    assert [n for n, *_, ok in x.differences(alt, stored["figures"]) if not ok] == failed
