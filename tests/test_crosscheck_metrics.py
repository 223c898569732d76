"""The measurement code of the ns-2/ns-3 cross-check (the cross-check itself
needs the reference simulators and runs from its own command)."""

import numpy as np
import pytest

from mediasim.validation.crosscheck_metrics import TOLERANCE, jain, sawtooth, verdict


def test_jain_index():
    assert jain(np.array([5.0, 5.0, 5.0])) == pytest.approx(1.0)
    assert jain(np.array([1.0, 0.0, 0.0, 0.0])) == pytest.approx(0.25)
    assert jain(np.array([3.0, 1.0])) == pytest.approx(16 / 20)


def test_sawtooth_period_and_peak_of_a_synthetic_aimd_series():
    # cwnd grows by 1 packet per 0.1 s from 20 to 40, then halves: period 2 s, peak 40.
    t = np.arange(0, 60, 0.01)
    phase = np.mod(t, 2.0)
    w = 20 + 10 * phase
    w[phase < 0.01] = 20
    period, peak, n = sawtooth(t, w, warmup_s=10.0)
    assert period == pytest.approx(2.0, abs=0.02)
    assert peak == pytest.approx(40.0, abs=0.2)
    assert n >= 24


def test_verdict_passes_within_tolerance_of_any_reference():
    m = {"flows": 1, "flavor": "sack", "utilization": 0.99, "jain": 1.0, "sawtooth_period_s": 10.0, "sawtooth_peak_pkts": 100.0}
    far = dict(m, utilization=0.90, sawtooth_period_s=20.0)
    near = dict(m, sawtooth_period_s=11.0)
    v = verdict(m, [far, near])
    assert all(v[k].startswith("ok") for k in TOLERANCE)
    v = verdict(m, [far])
    assert v["utilization"].startswith("OFF") and v["sawtooth_period_s"].startswith("OFF")


def test_jain_index_of_empty_and_idle_sets_is_undefined():
    assert np.isnan(jain(np.array([])))
    assert np.isnan(jain(np.array([0.0, 0.0])))
    assert jain([2, 2, 4]) == pytest.approx(64 / 72)  # plain lists of integers


def test_sawtooth_exact_on_a_hand_made_series():
    # 10 ms grid; the window climbs 1 packet per sample and is cut in half
    # at 12.00 s, 14.50 s and 17.00 s; a second cut 0.2 s after the first
    # belongs to the same episode and is merged. Peaks before each cut:
    # measured from the start of the post-warm-up series.
    t = np.round(np.arange(0, 20, 0.01), 2)
    w = np.full(t.size, 10.0)
    level = 10.0
    cuts = {12.0: 0.5, 12.2: 0.5, 14.5: 0.5, 17.0: 0.5}
    for i, ti in enumerate(t):
        if ti in cuts:
            level *= cuts[ti]
        else:
            level += 0.1
        w[i] = level
    period, peak, n = sawtooth(t, w, warmup_s=10.0)
    assert n == 3, "four cuts, two of them one episode"
    assert period == pytest.approx(((14.5 - 12.0) + (17.0 - 14.5)) / 2, abs=1e-9)
    i12, i145, i17 = (int(round(x * 100)) for x in (12.0, 14.5, 17.0))
    peaks = [w[1000:i12].max(), w[i12:i145].max(), w[i145:i17].max()]
    assert peak == pytest.approx(np.mean(peaks), abs=1e-9)
    # One episode only (the two merged cuts): no period, the peak before it.
    period, peak, n = sawtooth(t[:1400], w[:1400], warmup_s=10.0)
    assert np.isnan(period) and n == 1 and peak == pytest.approx(w[1000:1200].max())
    # No cut at all: no period, the series' peak.
    period, peak, n = sawtooth(t[:1100], w[:1100], warmup_s=10.0)
    assert np.isnan(period) and n == 0 and peak == pytest.approx(w[1000:1100].max())
    # Cuts before the warm-up do not count.
    assert sawtooth(t, w, warmup_s=17.5)[2] == 0


def test_sawtooth_cut_threshold_is_a_third():
    t = np.arange(0, 4, 0.5)
    w = np.array([30, 30, 20.1, 30, 19.9, 30, 19.9, 30], dtype=float)
    # 30 -> 20.1 is less than a third down; 30 -> 19.9 is more.
    assert sawtooth(t, w, warmup_s=0.0)[2] == 2


def test_verdict_reports_the_closest_difference_and_its_kind():
    m = {"flows": 8, "flavor": "newreno", "utilization": 0.95, "jain": 0.9, "sawtooth_period_s": 2.0,
         "sawtooth_peak_pkts": 20.0}
    r1 = dict(m, utilization=0.99, jain=0.80, sawtooth_period_s=2.5, sawtooth_peak_pkts=0.0)
    r2 = dict(m, utilization=0.96, jain=0.96, sawtooth_period_s=1.8, sawtooth_peak_pkts=26.0)
    v = verdict(m, [r1, r2])
    assert (v["simulator"], v["flows"], v["flavor"]) == ("verdict", 8, "newreno")
    assert v["utilization"] == "ok (0.01)"          # absolute: |0.95 - 0.96|
    assert v["jain"] == "OFF (0.06)"                # absolute: closest 0.96
    assert v["sawtooth_period_s"] == "ok (0.111)"   # relative: 2.0 / 1.8 - 1
    assert v["sawtooth_peak_pkts"] == "OFF (0.231)"  # relative to 26 (the 0 reference is infinitely far)
