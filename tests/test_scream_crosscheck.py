"""mediasim's SCReAM (RFC 8298) against Ericsson's own code on the same
closed loop (`mediasim.validation.scream_crosscheck`): the reference's
figures are stored in tests/data/scream_references.json, mediasim's are
computed here and held to them within the module's tolerances."""

import json

import pytest

from mediasim.validation import scream_crosscheck as x


@pytest.fixture(scope="module")
def stored():
    return json.loads(x.REFERENCES.read_text())


@pytest.fixture(scope="module")
def ours():
    return x.mediasim_figures()


def test_the_stored_figures_are_those_of_the_stored_runs(stored):
    assert stored["provenance"]["commit"] == x.REF_COMMIT
    assert list(stored["runs"]) == [str(fb) for fb in x.FEEDBACK_MS]
    assert json.loads(json.dumps(x.mean_figures(x.stored_runs(stored)))) == stored["figures"]


def test_mediasim_agrees_with_the_reference_code(stored, ours):
    rows = x.differences(ours, stored["figures"])
    assert len(rows) == 9
    assert all(ok for *_, ok in rows), rows
    # Both settle near the capacity, under the 100 ms delay target, without loss.
    for s in ours["stretches"]:
        assert 0.9 < s["rate_share"] < 1.02 and s["sojourn_ms"] < 100.0


@pytest.mark.parametrize("ramp_up_speed_bps", [100e3, 400e3])
def test_the_check_tells_a_different_ramp_up_speed(stored, ramp_up_speed_bps):
    """RFC 8298's RAMP_UP_SPEED (200 kbit/s per second) halved or doubled
    moves the time to 80% of the first capacity out of the tolerance: the
    check can tell."""
    alt = x.mediasim_figures(ramp_up_speed_bps=ramp_up_speed_bps)
    failed = [name for name, *_, ok in x.differences(alt, stored["figures"]) if not ok]
    assert failed == ["ramp_s"], failed
