"""Link timing is exact: serialisation 8S/R plus propagation D, in integer ns."""

import numpy as np

import mediasim
from conftest import assert_balanced, line


def test_single_packet_arrives_at_t0_plus_8s_over_r_plus_d():
    # S = 1000 B on the wire (972 payload + 28), R = 1 Mbit/s, D = 10 ms:
    # 8 ms serialisation + 10 ms propagation.
    sc = line(1, rate_bps=1e6, delay_ms=10)
    sc.flow("f", "cbr", src="n0", dst="n1", payload_bytes=972, interval_ms=100, start_s=0.25, max_packets=1)
    res = mediasim.run(sc)
    p = res.packets
    assert len(p) == 1
    assert p["size_bytes"][0] == 1000
    assert p["sent_ns"][0] == 250_000_000
    assert p["recv_ns"][0] == 250_000_000 + 8_000_000 + 10_000_000
    assert_balanced(res)


def test_back_to_back_packets_are_spaced_by_exactly_8s_over_r():
    # The source emits every microsecond into a 1 Mbit/s link: the queue
    # builds and packets leave back to back.
    sc = line(1, rate_bps=1e6, delay_ms=5, queue={"type": "droptail", "limit_packets": 1000})
    sc.flow("f", "cbr", src="n0", dst="n1", payload_bytes=472, interval_ms=0.001, max_packets=50)
    res = mediasim.run(sc)
    recv = res.packets.sort_values("seq")["recv_ns"].to_numpy().astype(np.int64)
    assert len(recv) == 50
    assert recv[0] == 4_000_000 + 5_000_000  # 500 B -> 4 ms
    assert set(np.diff(recv)) == {4_000_000}


def test_fractional_serialisation_times_do_not_drift():
    # 1000 B at 3 Mbit/s = 2666666.67 ns: every three back-to-back packets
    # take exactly 8 ms, over any number of packets.
    sc = line(1, rate_bps=3e6, delay_ms=0, queue={"type": "droptail", "limit_packets": 10000})
    sc.flow("f", "cbr", src="n0", dst="n1", payload_bytes=972, interval_ms=0.001, max_packets=3001)
    res = mediasim.run(sc)
    recv = res.packets.sort_values("seq")["recv_ns"].to_numpy().astype(np.int64)
    gaps = np.diff(recv)
    assert set(gaps) <= {2_666_666, 2_666_667}
    assert recv[3000] - recv[0] == 8_000_000_000
    assert abs((recv[-1] - recv[0]) - 3000 * 8000 / 3e6 * 1e9) < 1


def test_store_and_forward_over_three_hops():
    sc = line(3, rate_bps=2e6, delay_ms=7)
    sc.flow("f", "cbr", src="n0", dst="n3", payload_bytes=222, interval_ms=50, max_packets=4)
    res = mediasim.run(sc)
    d = (res.packets["recv_ns"] - res.packets["sent_ns"]).to_numpy()
    # each hop: 250 B * 8 / 2 Mbit/s = 1 ms, plus 7 ms
    assert set(d) == {3 * (1_000_000 + 7_000_000)}


def test_asymmetric_directions_use_their_own_rate_and_delay():
    sc = line(1, rate_bps=1e6, delay_ms=10, ba={"rate_bps": 4e6, "delay_ms": 1})
    sc.flow("up", "cbr", src="n0", dst="n1", payload_bytes=972, interval_ms=100, max_packets=1)
    sc.flow("down", "cbr", src="n1", dst="n0", payload_bytes=972, interval_ms=100, max_packets=1)
    res = mediasim.run(sc)
    f = res.flows.set_index("flow")
    assert f.loc["up", "delay_mean_ms"] == 18.0
    assert f.loc["down", "delay_mean_ms"] == 3.0
