"""GCC's rate estimate against aiortc's RemoteBitrateEstimator (a port of
libwebrtc's) on the same packet timings
(`mediasim.validation.gcc_rate_crosscheck`): aiortc's figures are stored
in tests/data/gcc_rate_references.json with a digest of the packets it was
fed; mediasim's run is repeated here and held to them."""

import json
import re
from pathlib import Path

import pytest

from mediasim.validation import gcc_rate_crosscheck as g


@pytest.fixture(scope="module")
def stored():
    return json.loads(g.REFERENCES.read_text())


@pytest.fixture(scope="module", params=g.ESTIMATORS)
def run(request):
    return request.param, g.mediasim_run(request.param)


def test_aiortc_was_fed_this_runs_packets(stored, run):
    estimator, (packets, _) = run
    ref = stored["runs"][estimator]
    assert ref["packets"] == len(packets) > 5000
    assert ref["digest"] == g.digest(packets), "GCC's run changed: rerun with --save-references"


def test_the_stored_figures_are_those_of_the_stored_samples(stored):
    for ref in stored["runs"].values():
        assert g.figures(ref["samples"]) == ref["figures"]


def test_mediasims_estimate_agrees_with_aiortcs(stored, run):
    estimator, (_, ours) = run
    rows = g.differences(g.figures(ours), stored["runs"][estimator]["figures"])
    assert len(rows) == 4
    assert all(ok for *_, ok in rows), rows


@pytest.mark.parametrize("beta", [0.6, 0.95])
def test_the_check_tells_a_different_decrease_factor(stored, beta, monkeypatch):
    """GCC's multiplicative decrease at 0.6 or 0.95 instead of 0.85 leaves
    the tolerance: the check can tell."""
    base = g.scenario

    def changed(estimator):
        sc = base(estimator)
        sc["rtp_sessions"][0]["members"][0]["cc"]["beta"] = beta
        return sc

    monkeypatch.setattr(g, "scenario", changed)
    _, ours = g.mediasim_run("trendline")
    rows = g.differences(g.figures(ours), stored["runs"]["trendline"]["figures"])
    assert not all(ok for *_, ok in rows)


def test_the_gcc_page_gives_these_figures(stored, run):
    """docs/models/gcc.md's table row for each filter is this run's and the
    stored reference's figures."""
    estimator, (_, ours) = run
    ref = stored["runs"][estimator]["figures"]
    mine = g.figures(ours)
    cells = [f"{a['estimate_share']:.3f}, {b['estimate_share']:.3f}" for a, b in zip(mine["stretches"],
                                                                                       ref["stretches"])]
    row = f"| {estimator} | {' | '.join(cells)} | {mine['backoff_s']:.1f} s, {ref['backoff_s']:.1f} s |"
    page = re.sub(r"\s+", " ", (Path(__file__).parents[1] / "docs" / "models" / "gcc.md").read_text())
    assert row in page, row
