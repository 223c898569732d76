"""Each loss model loses what its parameters say, within statistical bounds."""

import math

import numpy as np
import pytest

import mediasim
from conftest import assert_balanced, line

N = 40_000
PAYLOAD = 972  # 1000 B on the wire


def run_lossy(loss: dict, n: int = N, seed: int = 5, where: str = "link"):
    sc = line(1, rate_bps=100e6, delay_ms=1, duration_s=n * 1e-4 + 1)
    if where == "link":
        sc.data["links"][0]["loss"] = loss
    else:
        sc.data["nodes"][1]["receiver_loss"] = loss
    sc.flow("f", "cbr", src="n0", dst="n1", payload_bytes=PAYLOAD, interval_ms=0.1, max_packets=n)
    res = mediasim.run(sc, seed=seed)
    assert_balanced(res)
    assert res.flows["in_flight"].iloc[0] == 0
    return res


def within(k, n, p, sigmas=4.5, inflation=1.0):
    sd = math.sqrt(n * p * (1 - p) * inflation)
    return abs(k - n * p) <= sigmas * sd


@pytest.mark.parametrize("loss,p", [
    ({"type": "packet", "rate": 0.05}, 0.05),
    ({"type": "byte_error", "rate": 1e-4}, 1 - (1 - 1e-4) ** 1000),
    ({"type": "bit_error", "rate": 1e-5}, 1 - (1 - 1e-5) ** 8000),
])
def test_independent_loss_rates(loss, p):
    res = run_lossy(loss)
    f = res.flows.iloc[0]
    assert f["dropped_link_loss"] == f["lost"]
    assert within(f["lost"], N, p), (f["lost"], N * p)


def test_byte_error_loss_grows_with_packet_size():
    small = line(1, rate_bps=100e6, delay_ms=1, duration_s=10, loss={"type": "byte_error", "rate": 2e-4})
    small.flow("s", "cbr", src="n0", dst="n1", payload_bytes=72, interval_ms=0.2, max_packets=20000)
    small.flow("l", "cbr", src="n0", dst="n1", payload_bytes=1472, interval_ms=0.2, max_packets=20000)
    f = mediasim.run(small, seed=3).flows.set_index("flow")
    for name, size in [("s", 100), ("l", 1500)]:
        assert within(f.loc[name, "lost"], 20000, 1 - (1 - 2e-4) ** size)


def test_gilbert_elliott_stationary_loss_and_burst_length():
    p_gb, p_bg = 0.01, 0.25
    res = run_lossy({"type": "gilbert_elliott", "p_good_to_bad": p_gb, "p_bad_to_good": p_bg}, n=100_000)
    f = res.flows.iloc[0]
    pi_bad = p_gb / (p_gb + p_bg)
    # Losses are correlated (lag-1 correlation 1 - p_gb - p_bg), which
    # inflates the variance of the count by (1 + r) / (1 - r).
    r = 1 - p_gb - p_bg
    assert within(f["lost"], 100_000, pi_bad, inflation=(1 + r) / (1 - r))
    # With loss_bad = 1 and loss_good = 0 a burst lasts 1 / p_bg packets on average.
    assert abs(f["loss_run_mean"] / (1 / p_bg) - 1) < 0.1
    runs = res.loss_runs
    assert runs["count"].sum() == f["loss_runs"]
    assert (runs["run_length"] * runs["count"]).sum() == f["lost"]


def test_explicit_losses_are_exact():
    loss = {
        "type": "explicit",
        "ordinals": [0, 5, 6, 7],
        "packets": [{"flow": "f", "seq": 20}],
        # Windows apply when a packet reaches the loss point, the far end of
        # the link: sent + 0.08 ms serialisation + 1 ms. [4.0, 5.5) ms holds
        # the packets sent at 3.0, 3.1 ... 4.4 ms.
        "windows_s": [[0.004, 0.0055]],
    }
    res = run_lossy(loss, n=100)
    lost = sorted(res.drops["seq"])
    assert lost == [0, 5, 6, 7, 20] + list(range(30, 45))
    f = res.flows.iloc[0]
    assert f["loss_run_max"] == 15 and f["loss_runs"] == 4


def test_receiver_loss_at_node():
    res = run_lossy({"type": "packet", "rate": 0.1}, where="node")
    f = res.flows.iloc[0]
    assert f["dropped_receiver_loss"] == f["lost"] > 0
    assert within(f["lost"], N, 0.1)
    assert set(res.drops["site"]) == {"node:n1"}


def test_loss_applies_per_direction():
    sc = line(1, rate_bps=10e6, delay_ms=1, ab={"loss": {"type": "packet", "rate": 0.5}})
    sc.flow("up", "cbr", src="n0", dst="n1", payload_bytes=100, interval_ms=1, max_packets=2000)
    sc.flow("down", "cbr", src="n1", dst="n0", payload_bytes=100, interval_ms=1, max_packets=2000)
    f = mediasim.run(sc).flows.set_index("flow")
    assert within(f.loc["up", "lost"], 2000, 0.5)
    assert f.loc["down", "lost"] == 0


def test_loss_runs_match_drops_table():
    res = run_lossy({"type": "packet", "rate": 0.2}, n=5000)
    seqs = np.sort(res.drops["seq"].to_numpy())
    breaks = np.flatnonzero(np.diff(seqs) != 1)
    runs = np.diff(np.concatenate([[-1], breaks, [len(seqs) - 1]]))
    f = res.flows.iloc[0]
    assert f["loss_runs"] == len(runs)
    assert f["loss_run_max"] == runs.max()
