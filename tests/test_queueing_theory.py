"""Poisson arrivals of fixed-size packets on one link form an M/D/1 queue:
mean waiting time Wq = rho * T / (2 (1 - rho)), T the service time."""

import numpy as np
import pytest

import mediasim
from conftest import assert_balanced, line

RATE = 8e6  # 1000-byte packets -> T = 1 ms
SIZE = 1000
T_S = SIZE * 8 / RATE
DELAY_MS = 2.0


@pytest.mark.parametrize("rho,duration_s", [(0.5, 1500.0), (0.8, 2500.0)])
def test_mean_queueing_delay_matches_md1_within_3_percent(rho, duration_s):
    sc = line(1, rate_bps=RATE, delay_ms=DELAY_MS, duration_s=duration_s,
              queue={"type": "droptail", "limit_packets": 1_000_000})
    sc.flow("p", "poisson", src="n0", dst="n1", payload_bytes=SIZE - 28, rate_pps=rho / T_S)
    res = mediasim.run(sc, seed=11)
    assert_balanced(res)
    assert res.flows["lost"].iloc[0] == 0
    delay_s = (res.packets["recv_ns"] - res.packets["sent_ns"]).to_numpy() * 1e-9
    wait = delay_s - T_S - DELAY_MS * 1e-3
    assert wait.min() >= -1e-9  # never faster than the link allows
    expected = rho * T_S / (2 * (1 - rho))
    measured = wait.mean()
    assert abs(measured / expected - 1) < 0.03, (measured, expected)
    # The utilisation of the link is rho.
    util = res.links.set_index("direction").loc["n0-n1:n0->n1", "utilization"]
    assert abs(util - rho) < 0.01
    # Little's law on the queue: mean number waiting = lambda * Wq.
    q = res.queues.set_index("direction").loc["n0-n1:n0->n1"]
    assert abs(q["mean_packets"] / (rho / T_S * measured) - 1) < 0.02
