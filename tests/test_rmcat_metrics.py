"""RFC 8868's per-flow criteria as the RMCAT study computes them, on
RFC 8867's own cases and rate series made up by hand: each flow's share
of the capacity over time, the stretches of constant share, convergence,
the settled rate, 1 s rates and Jain's index."""

import numpy as np
import pandas as pd
import pytest

from mediasim.experiments import rmcat


@pytest.fixture(scope="module")
def p():
    return rmcat.Params()


def test_the_share_is_the_capacity_over_the_flows_sending_capped_at_r_max(p):
    c = rmcat.cases(p)
    t = np.array([10.0, 30.0, 50.0, 119.0, 120.0])
    # 5.4: 3.5 Mbit/s, flows from 0, 20 and 40 s; R_max 1.5 Mbit/s. At the
    # end (120 s) no flow sends: the whole capacity, as for one flow.
    assert rmcat.fair_share(c[4], t, p) == pytest.approx([1.5e6, 1.5e6, 3.5e6 / 3, 3.5e6 / 3, 1.5e6])
    # 5.1's steps: 1, 2.5 (above R_max), 0.6 and 1 Mbit/s.
    assert rmcat.fair_share(c[1], np.array([0.0, 39.9, 40.0, 59.9, 60.0, 80.0]), p) == pytest.approx(
        [1e6, 1e6, 1.5e6, 1.5e6, 0.6e6, 1e6])
    # 5.3: each direction's own steps and flows.
    assert rmcat.fair_share(c[3], np.array([10.0, 30.0, 50.0]), p) == pytest.approx([1.5e6, 1e6, 0.5e6])
    assert rmcat.fair_share(c[3], np.array([10.0, 40.0, 80.0]), p, backward=True) == pytest.approx(
        [1.5e6, 0.8e6, 1.5e6])
    # 5.2: two flows from the start share 4 Mbit/s, then 2.
    assert rmcat.fair_share(c[2], np.array([1.0, 30.0]), p) == pytest.approx([1.5e6, 1e6])
    # 5.8: while the first flow pauses (40-60 s) the others share without it.
    q = rmcat.Params(max_bps=10e6)
    c8 = rmcat.cases(q)[8]
    assert rmcat.fair_share(c8, np.array([30.0, 50.0, 70.0]), q) == pytest.approx([1.75e6, 1.75e6, 3.5e6 / 3])
    # No flow sending yet: the whole capacity, as for one flow.
    assert rmcat.fair_share(c[6], np.array([1.0]), q) == pytest.approx([2e6])


def test_stretches_of_constant_share_split_at_every_change_and_skip_own_pauses(p):
    c = rmcat.cases(p)
    (leg,) = rmcat.legs(c[1])
    assert rmcat.stretches(c[1], leg) == [(0, 40), (40, 60), (60, 80), (80, 100.0)]
    m0, m1, m2 = rmcat.legs(c[4])
    assert rmcat.stretches(c[4], m0) == [(0.0, 20.0), (20.0, 40.0), (40.0, 120.0)]
    assert rmcat.stretches(c[4], m2) == [(40.0, 120.0)]
    # 5.8 (pause, same session): the pausing flow's own pause is no stretch
    # of its; the others see the pause and the resume as changes.
    a, b, _ = rmcat.legs(c[8])
    assert a.pauses == ((40.0, 60.0),)
    assert rmcat.stretches(c[8], a) == [(0.0, 20.0), (20.0, 40.0), (60.0, 120.0)]
    assert rmcat.stretches(c[8], b) == [(20.0, 40.0), (40.0, 60.0), (60.0, 120.0)]
    # With a restart the resumed flow is a session of its own from 60 s.
    r = rmcat.Params(case58_resume="restart")
    legs = rmcat.legs(rmcat.cases(r)[8])
    assert [(x.name, x.start_s, x.stop_s) for x in legs[:2]] == [("m0", 0.0, 40.0), ("m0r", 60.0, 120.0)]
    assert rmcat.stretches(rmcat.cases(r)[8], legs[1]) == [(60.0, 120.0)]


def _case51(p):
    """5.1, its one flow, 1 s rates' times and the flow's share at them."""
    c = rmcat.cases(p)[1]
    (leg,) = rmcat.legs(c)
    t = np.arange(100) + 0.5
    return c, leg, t, rmcat.fair_share(c, t, p)


def _rate(values) -> pd.DataFrame:
    return pd.DataFrame({"time_s": np.arange(len(values)) + 0.5, "value": np.asarray(values, dtype=float)})


def test_convergence_is_the_first_second_within_the_band_of_the_new_share(p):
    c, leg, t, share = _case51(p)
    v = share.copy()
    v[0:5] = 0.5 * share[0:5]  # 5 s to reach the first share
    v[40:43] = 0.86e6  # 1.5 Mbit/s from 40 s: 0.86 is outside 15%, 1.3 inside from 43 s
    v[43:60] = 1.3e6
    v[60:80] = 0.6e6 * 1.15  # at the band's edge from the step on
    v[80:100] = 0.5e6  # never back within 15% of 1 Mbit/s
    got = rmcat.convergence(c, _rate(v), share, p, leg)
    # Counted to the middle of the first second within the band.
    assert got[:3] == pytest.approx([5.5, 3.5, 0.5]) and np.isnan(got[3])


def test_the_settled_rate_is_the_second_half_of_each_stretch(p):
    c, leg, t, share = _case51(p)
    v = share.copy()
    for m, end in rmcat.stretches(c, leg):
        first = (t >= m) & (t < (m + end) / 2)
        v[first] = 5 * share[first]  # transients: left out
    assert rmcat.settled_ratio(c, _rate(v), share, leg) == pytest.approx(1.0)
    assert rmcat.settled_cv(c, _rate(v), share, leg) == pytest.approx(0.0)
    # At 80% of the share in every settled second: 0.8, no swing.
    assert rmcat.settled_ratio(c, _rate(np.where(v == share, 0.8 * share, v)), share, leg) == pytest.approx(0.8)
    # Seconds without a share (none known) are left out; none left: NaN.
    unknown = np.where(t < 50, np.nan, share)
    assert rmcat.settled_ratio(c, _rate(v), unknown, leg) == pytest.approx(1.0)
    assert np.isnan(rmcat.settled_ratio(c, _rate(v), np.full(100, np.nan), leg))
    assert np.isnan(rmcat.settled_cv(c, _rate(v), np.full(100, np.nan), leg))


def test_one_second_rates_and_jains_index():
    x = pd.DataFrame({"time_s": [0.1, 0.9, 1.0, 2.5, 2.6, 2.7], "value": [1.0, 3.0, 5.0, 6.0, 7.0, 8.0]})
    r = rmcat._rate_1s(x)
    assert r["time_s"].tolist() == [0.5, 1.5, 2.5] and r["value"].tolist() == [2.0, 5.0, 7.0]
    assert rmcat._rate_1s(x.iloc[:0]).empty
    assert rmcat.jain(np.array([1.0, 1.0, 1.0])) == pytest.approx(1.0)
    assert rmcat.jain(np.array([1.0, 0.0])) == pytest.approx(0.5)
    assert rmcat.jain(np.array([3.0, 1.0, np.nan])) == pytest.approx(16 / 20)
    assert np.isnan(rmcat.jain(np.array([]))) and np.isnan(rmcat.jain(np.array([0.0, 0.0])))


def test_legs_carry_each_flows_direction_delay_and_pauses(p):
    c = rmcat.cases(p)
    assert [(x.name, x.flow, x.one_way_ms) for x in rmcat.legs(c[5])] == [
        (f"m{i}", i, d) for i, d in enumerate((10, 25, 50, 100, 150))]
    fwd, back = rmcat.legs(c[3])
    assert (fwd.backward, back.backward, back.flow) == (False, True, 1)
    # The backward flow's stretches follow the backward steps.
    assert rmcat.stretches(c[3], back) == [(0, 35), (35, 70), (70, 100.0)]
    r = rmcat.Params(case58_resume="restart")
    a, ar = rmcat.legs(rmcat.cases(r)[8])[:2]
    assert (a.flow, ar.flow, a.backward, ar.backward, a.one_way_ms, ar.one_way_ms) == (0, 0, False, False, None, None)
    # A pausing leg sends from its start to its stop, not in its pause.
    paused = rmcat.legs(c[8])[0]
    t = np.array([-1.0, 10.0, 40.0, 59.9, 60.0, 119.9, 120.0, 130.0])
    assert paused.sending(t).tolist() == [False, True, False, False, True, True, False, False]
    late = rmcat.legs(c[4])[2]
    assert late.sending(np.array([39.9, 40.0])).tolist() == [False, True]


def test_settled_figures_take_every_stretch_and_only_known_shares(p):
    c, leg, t, share = _case51(p)
    share = share / 1e6  # Mbit/s: the first share is exactly 1
    v = share.copy()
    v[20:40] = 0.5  # the first stretch's settled half at half its share
    # Stretches' second halves: 20 s at 0.5, 10 s at 1, 10 s at 1, 10 s at 1.
    assert rmcat.settled_ratio(c, _rate(v), share, leg) == pytest.approx((20 * 0.5 + 30 * 1.0) / 50)
    # A share of 0 (no capacity) is no reference.
    zero = share.copy()
    zero[90:100] = 0.0
    assert rmcat.settled_ratio(c, _rate(v), zero, leg) == pytest.approx((20 * 0.5 + 20 * 1.0) / 40)
    # The swing: 0.4 and 0.6 of the share in turn is a mean of 0.5 and a
    # coefficient of variation of 0.2.
    swing = np.where(np.arange(100) % 2 == 0, 0.4, 0.6) * share
    assert rmcat.settled_cv(c, _rate(swing), share, leg) == pytest.approx(0.2)
    # Two settled seconds are enough for a swing; one is not.
    two = np.full(100, np.nan)
    two[[20, 21]] = 1.0
    assert rmcat.settled_cv(c, _rate(swing), two, leg) == pytest.approx(0.2)
    two[21] = np.nan
    assert np.isnan(rmcat.settled_cv(c, _rate(swing), two, leg))


def test_an_empty_series_has_the_rate_columns():
    r = rmcat._rate_1s(pd.DataFrame({"time_s": [], "value": []}))
    assert list(r.columns) == ["time_s", "value"] and r.empty
    assert rmcat.jain(np.array([0.5, 0.5])) == pytest.approx(1.0)
