"""TCP at scenario level: analytic timing, the Mathis et al. throughput
formula, window limits, flavours, accounting."""

import math

import numpy as np

import pytest

import mediasim
from conftest import assert_balanced


def pair(rate_bps=10e6, delay_ms=10.0, duration_s=5.0, **link):
    sc = mediasim.Scenario("tcp", duration_s=duration_s).measure(packets=True, series=True)
    sc.node("a").node("b").link("a", "b", rate_bps=rate_bps, delay_ms=delay_ms, **link)
    return sc


def test_handshake_and_one_segment_transfer_take_exactly_their_wire_times():
    sc = pair()
    sc.flow("x", "tcp", src="a", dst="b", bytes=1000)
    res = mediasim.run(sc)
    assert_balanced(res)
    t = res.tcp.iloc[0]
    # SYN and SYN-ACK are 52 B (20 IP + 32 TCP with options): 41.6 us each
    # at 10 Mbit/s; the data segment is 1040 B: 832 us. Plus 10 ms each way.
    syn = 52 * 8 / 10e6 + 0.010
    assert t["established_s"] == pytest.approx(2 * syn, abs=1e-9)
    assert t["completion_time_s"] == pytest.approx(2 * syn + 1040 * 8 / 10e6 + 0.010, abs=1e-9)
    assert t["bytes_delivered"] == 1000
    p = res.packets[res.packets["flow"] == "x"]
    assert sorted(p["size_bytes"]) == [52, 1040]  # SYN, data (with FIN)


def test_iw10_finishes_ten_segments_in_one_round_trip_iw3_needs_more():
    fct = {}
    for iw in (3, 10):
        sc = pair(rate_bps=100e6, delay_ms=50)
        sc.flow("x", "tcp", src="a", dst="b", bytes=10 * 1460, tcp={"initial_window": iw})
        fct[iw] = mediasim.run(sc).tcp["completion_time_s"].iloc[0]
    rtt = 0.1
    assert fct[10] < 2 * rtt + 0.01  # handshake + one flight
    assert fct[3] > fct[10] + 1.5 * rtt  # slow start needs further round trips


def test_rfc3390_initial_window_is_three_segments_for_mss_1460():
    sc = pair(rate_bps=100e6, delay_ms=50)
    sc.flow("x", "tcp", src="a", dst="b", bytes=100_000)
    res = mediasim.run(sc, trace=True)
    tr = res.trace[(res.trace["event"] == "-") & (res.trace["flow"] == "x") & (res.trace["size_bytes"] == 1500)]
    first_flight = tr[tr["time_ns"] < tr["time_ns"].min() + 50e6]
    assert len(first_flight) == 3


def test_window_cap_limits_throughput_to_w_over_rtt():
    sc = pair(rate_bps=100e6, delay_ms=50, duration_s=20)
    sc.flow("x", "tcp", src="a", dst="b", start_s=0, tcp={"max_window_packets": 20})
    res = mediasim.run(sc)
    goodput = res.tcp["goodput_bps"].iloc[0]
    expected = 20 * 1460 * 8 / 0.1  # 20 segments per 100 ms RTT
    assert goodput == pytest.approx(expected, rel=0.05)
    assert res.tcp["retransmissions"].iloc[0] == 0


def test_receive_window_limits_throughput_to_w_over_rtt():
    # The receiver advertises 14600 bytes (10 segments): one window per
    # RTT, whatever cwnd grows to. Slow start takes a few RTTs of 20 s.
    sc = pair(rate_bps=100e6, delay_ms=50, duration_s=20)
    sc.flow("x", "tcp", src="a", dst="b", tcp={"rwnd_bytes": 14600})
    res = mediasim.run(sc)
    expected = 14600 * 8 / 0.1
    assert res.tcp["goodput_bps"].iloc[0] == pytest.approx(expected, rel=0.05)
    cwnd = res.tcp_series[res.tcp_series["var"] == "cwnd_bytes"]["value"]
    assert cwnd.max() > 2 * 14600, "the window, not cwnd, is the limit"


@pytest.mark.parametrize("p", [0.001, 0.005, 0.01, 0.02])
def test_reno_throughput_follows_mathis_formula_within_20_percent(p):
    # MSS/RTT * sqrt(3/(2p)) with an ACK per segment. The formula has no
    # timeouts, so the RTO floor is 200 ms to keep their cost small.
    sc = pair(rate_bps=1e9, delay_ms=50, duration_s=400, queue={"type": "droptail", "limit_packets": 100000},
              ab={"loss": {"type": "packet", "rate": p}})
    sc.flow("f", "tcp", src="a", dst="b",
            tcp={"flavor": "reno", "delayed_ack": False, "rwnd_bytes": 1 << 30, "min_rto_ms": 200})
    res = mediasim.run(sc, seed=1)
    rtt = res.tcp_series[res.tcp_series["var"] == "rtt_s"]["value"].mean()
    model = 1460 * 8 / rtt * math.sqrt(3 / (2 * p))
    assert res.tcp["goodput_bps"].iloc[0] == pytest.approx(model, rel=0.20)


@pytest.mark.parametrize("flavor", ["reno", "newreno", "sack"])
def test_every_flavor_completes_over_a_lossy_congested_path(flavor):
    sc = mediasim.Scenario("d", duration_s=60)
    sc.node("a").node("r").node("b")
    sc.link("a", "r", rate_bps=100e6, delay_ms=1)
    sc.link("r", "b", rate_bps=2e6, delay_ms=20, queue={"type": "droptail", "limit_packets": 10},
            ab={"loss": {"type": "packet", "rate": 0.01}})
    sc.flow("x", "tcp", src="a", dst="b", bytes=1_000_000, tcp={"flavor": flavor})
    sc.flow("y", "tcp", src="a", dst="b", bytes=500_000, start_s=2, tcp={"flavor": flavor})
    res = mediasim.run(sc, seed=3)
    assert_balanced(res)
    t = res.tcp.set_index("flow")
    assert list(t["bytes_delivered"]) == [1_000_000, 500_000]
    assert t["retransmissions"].min() > 0
    assert (t["completion_time_s"] > 0).all()
    f = res.flows.set_index("flow")
    assert f.loc["x", "dropped_link_loss"] > 0 and f.loc["x", "dropped_queue_overflow"] > 0
    # every data packet sent is a segment counted by the sender
    assert f.loc["x", "sent"] == t.loc["x", "segments_sent"]


def test_five_losses_in_one_window_sack_one_rtt_newreno_one_per_rtt_reno_times_out():
    # 72-segment transfer, segments lost at transmissions 60, 62, ... 68
    # (near the tail, so new data cannot hide the recovery time). RTT 100 ms.
    t = {}
    for flavor in ("reno", "newreno", "sack"):
        sc = pair(rate_bps=10e6, delay_ms=50, duration_s=30,
                  ab={"loss": {"type": "explicit", "packets": [{"flow": "x", "seq": s} for s in (60, 62, 64, 66, 68)]}})
        sc.flow("x", "tcp", src="a", dst="b", bytes=72 * 1460, tcp={"flavor": flavor})
        t[flavor] = mediasim.run(sc).tcp.set_index("flow").loc["x"]
    assert t["sack"]["timeouts"] == 0 and t["newreno"]["timeouts"] == 0
    assert t["newreno"]["retransmissions"] == 5
    # NewReno repairs one hole per RTT: four RTTs more than SACK.
    assert t["newreno"]["completion_time_s"] - t["sack"]["completion_time_s"] == pytest.approx(0.4, abs=0.03)
    # Reno leaves recovery on the first partial ACK and ends in a timeout.
    assert t["reno"]["timeouts"] >= 1
    assert t["reno"]["completion_time_s"] > t["newreno"]["completion_time_s"] + 0.5


def test_tcp_validation_messages():
    sc = pair()
    sc.flow("x", "tcp", src="a", dst="b", payload_bytes=100, bytes=0,
            tcp={"initial_window": 0, "mss_bytes": 0, "min_rto_ms": -1, "flavor": "vegas"})
    with pytest.raises(mediasim.ScenarioError) as e:
        sc.validate()
    paths = dict(e.value.errors)
    assert paths.get("flows[0].tcp.flavor") == "must be one of reno, newreno, sack (got vegas)"
    sc.data["flows"][0]["tcp"]["flavor"] = "sack"
    with pytest.raises(mediasim.ScenarioError) as e:
        sc.validate()
    paths = dict(e.value.errors)
    assert "not used by tcp" in paths["flows[0].payload_bytes"]
    assert paths["flows[0].bytes"] == "must be at least 1"
    assert paths["flows[0].tcp.initial_window"] == "must be at least 1 segment"
    assert "1..=65495" in paths["flows[0].tcp.mss_bytes"]
    assert "positive" in paths["flows[0].tcp.min_rto_ms"]


def test_tcp_ports_may_not_clash():
    sc = pair()
    sc.flow("x", "tcp", src="a", dst="b", bytes=1000, dst_port=80)
    sc.flow("y", "tcp", src="a", dst="b", bytes=1000, dst_port=80)
    with pytest.raises(mediasim.ScenarioError, match='port 80 on node "b" is already used by flow "x"'):
        mediasim.run(sc)


def test_random_start_times_are_reproducible_and_within_bounds():
    sc = pair(duration_s=20)
    for i in range(6):
        sc.flow(f"x{i}", "tcp", src="a", dst="b", bytes=10_000, start_s=10, start_jitter_s=2)
    a = mediasim.run(sc, seed=1).tcp["start_s"]
    b = mediasim.run(sc, seed=1).tcp["start_s"]
    c = mediasim.run(sc, seed=1, replication=1).tcp["start_s"]
    assert list(a) == list(b) and list(a) != list(c)
    assert a.between(10, 12).all() and a.nunique() == 6


def test_cubic_windows_follow_rfc_9438s_cubic_between_losses():
    """One CUBIC flow (RFC 9438, no fast convergence) filling a 20 Mbit/s,
    50 ms path with a 100-packet queue: after each loss the window follows
    W(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta) / C), from the
    epoch's first growth, within 3% at a quarter, half and three quarters
    of K; Reno on the same path, halving, is below it at those points."""
    def run(cc):
        sc = mediasim.Scenario("cubic", duration_s=40.0).measure(packets=False, series=True)
        sc.node("a").node("r").node("b")
        sc.link("a", "r", rate_bps=1e9, delay_ms=1)
        sc.link("r", "b", rate_bps=20e6, delay_ms=50, queue={"type": "droptail", "limit_packets": 100})
        sc.flow("x", "tcp", src="a", dst="b", tcp={"flavor": "sack"}, cc=cc)
        res = mediasim.run(sc)
        assert_balanced(res)
        cw = res.tcp_series[res.tcp_series["var"] == "cwnd_bytes"]
        return res, cw["time_s"].to_numpy(), cw["value"].to_numpy() / 1460

    res, t, w = run({"type": "cubic", "fast_convergence": False})
    drops = [i for i in range(len(w) - 1) if w[i + 1] < 0.8 * w[i] and t[i] > 3.0]
    checked = 0
    for d, nxt in zip(drops, drops[1:]):
        w_max = w[d]
        start = next(i for i in range(d + 1, len(w)) if w[i] > w[d + 1] + 0.5) - 1
        k = (w_max * 0.3 / 0.4) ** (1 / 3)
        for f in (0.25, 0.5, 0.75):
            at = t[start] + f * k
            if at >= t[nxt]:
                continue
            i = int(np.searchsorted(t, at)) - 1
            assert w[i] == pytest.approx(0.4 * ((f - 1) * k) ** 3 + w_max, rel=0.03), (t[d], f)
            checked += 1
    assert checked >= 9, checked
    reno, _, _ = run({"type": "reno"})
    assert res.tcp["goodput_bps"].iloc[0] > reno.tcp["goodput_bps"].iloc[0]


def test_cubic_fields_are_checked():
    sc = pair()
    sc.flow("x", "tcp", src="a", dst="b", cc={"type": "cubic", "beta": 1.2, "c": 0})
    with pytest.raises(mediasim.errors.ScenarioError) as e:
        mediasim.run(sc)
    assert "flows[0].cc.beta" in str(e.value) and "flows[0].cc.c" in str(e.value)
