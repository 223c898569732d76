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
    return x.figures(*x.mediasim_samples())


def test_the_stored_figures_are_those_of_the_stored_samples(stored):
    assert stored["provenance"]["commit"] == x.REF_COMMIT
    assert x.figures(stored["samples"], stored["figures"]["lost"]) == stored["figures"]


def test_mediasim_agrees_with_the_reference_code(stored, ours):
    rows = x.differences(ours, stored["figures"])
    assert len(rows) == 9
    assert all(ok for *_, ok in rows), rows
    # Both settle near the capacity, under the 100 ms delay target, without loss.
    for s in ours["stretches"]:
        assert 0.95 < s["rate_share"] < 1.02 and s["sojourn_ms"] < 100.0


def test_the_check_tells_a_different_pacing_rate(stored):
    """Paced at RFC 8298's 1 x cwnd / s_rtt instead of the reference's
    1.5 x, mediasim leaves the tolerance: the check can tell."""
    alt = x.figures(*x.mediasim_samples(1.0))
    rows = x.differences(alt, stored["figures"])
    assert not all(ok for *_, ok in rows)
