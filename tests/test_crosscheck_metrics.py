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
