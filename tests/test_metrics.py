"""The flow summary agrees with independent computations from the
per-packet tables, and in-flight packets are accounted for."""

import numpy as np
import pytest

import mediasim
from conftest import assert_balanced


def test_summary_matches_packet_table(examples):
    res = mediasim.run(mediasim.load_scenario(examples / "dumbbell.toml").measure(packets=True), seed=4)
    assert_balanced(res)
    for _, f in res.flows.iterrows():
        p = res.packets[(res.packets["flow"] == f["flow"]) & (res.packets["receiver"] == f["receiver"])]
        d_ms = p["delay_ms"].to_numpy()
        assert len(p) == f["received"]
        assert np.isclose(d_ms.mean(), f["delay_mean_ms"])
        assert np.isclose(np.percentile(d_ms, 99), f["delay_p99_ms"])
        assert np.isclose(np.percentile(d_ms, 50), f["delay_p50_ms"])
        # RFC 3550 A.8 jitter over arrivals in order
        transit = (p.sort_values("recv_ns")["recv_ns"].astype(np.int64) - p.sort_values("recv_ns")["sent_ns"].astype(np.int64)).to_numpy()
        j = 0.0
        for dd in np.abs(np.diff(transit)):
            j += (dd - j) / 16
        assert np.isclose(j * 1e-6, f["jitter_ms"])


def test_throughput_windows(examples):
    res = mediasim.run(mediasim.load_scenario(examples / "dumbbell.toml").measure(packets=True), seed=4)
    for _, w in res.throughput.iterrows():
        p = res.packets[(res.packets["flow"] == w["flow"])]
        t = p["recv_ns"].to_numpy() * 1e-9
        inside = p["size_bytes"].to_numpy()[(t >= w["window_start_s"]) & (t < w["window_end_s"])]
        assert inside.sum() == w["bytes"]
        assert np.isclose(w["throughput_bps"], inside.sum() * 8 / (w["window_end_s"] - w["window_start_s"]))


def test_packets_in_flight_at_the_end_are_counted():
    # 100 packets/s over a 500 ms link stopped at 1 s: the last ~50 are on the wire.
    sc = mediasim.Scenario("inflight", duration_s=1.0)
    sc.node("a").node("b").link("a", "b", rate_bps=10e6, delay_ms=500)
    sc.flow("f", "cbr", src="a", dst="b", payload_bytes=100, interval_ms=10)
    res = mediasim.run(sc)
    assert_balanced(res)
    f = res.flows.iloc[0]
    assert f["sent"] == 100 and f["in_flight"] == 50 and f["lost"] == 0


def test_queue_samples_and_stats():
    sc = mediasim.Scenario("q", duration_s=2.0)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=1, queue={"type": "droptail", "limit_packets": 10})
    # 2 Mbit/s into 1 Mbit/s: the queue fills to its limit and overflows.
    sc.flow("f", "cbr", src="a", dst="b", payload_bytes=972, rate_bps=2e6 * 972 / 1000)
    sc.measure(queue_sample_ms=100)
    res = mediasim.run(sc)
    assert_balanced(res)
    q = res.queue_samples[res.queue_samples["link_dir"] == "a-b:a->b"]
    assert len(q) == 21  # t = 0, 0.1, ... 2.0
    assert q["packets"].max() == 10
    stats = res.queues.set_index("direction").loc["a-b:a->b"]
    assert stats["max_packets"] == 10
    assert stats["dropped_queue_overflow"] == res.flows["dropped_queue_overflow"].iloc[0] > 0
    assert stats["arrivals"] == stats["departures"] + stats["dropped_queue_overflow"] + stats["final_packets"]


def test_trace_records_every_hop():
    sc = mediasim.Scenario("t", duration_s=1.0)
    sc.node("a").node("b").node("c")
    sc.link("a", "b", rate_bps=1e6, delay_ms=1).link("b", "c", rate_bps=1e6, delay_ms=1)
    sc.flow("f", "cbr", src="a", dst="c", payload_bytes=100, interval_ms=100, max_packets=3)
    res = mediasim.run(sc, trace=True)
    tr = res.trace
    assert list(tr[tr["seq"] == 0]["event"]) == ["+", "-", "r", "+", "-", "r", "D"]
    assert (tr["time_ns"].diff().dropna() >= 0).all()


def test_warmup_leaves_packets_sent_before_it_out_of_the_flow_summaries(examples):
    # The oracle is the full packet log of the same run: the summaries
    # with a 5 s warm-up equal the log's packets sent from 5 s on.
    sc = mediasim.load_scenario(examples / "dumbbell.toml").measure(packets=True)
    sc.set("links[name=bottleneck].queue.limit_packets", 5)  # losses too
    full = mediasim.run(sc, seed=2)
    warm = mediasim.run(sc.measure(warmup_s=5.0), seed=2)
    assert warm.packets.equals(full.packets)  # the log itself is whole
    f = warm.flows.set_index("flow")
    assert (f["sent"] == f["received"] + f["lost"] + f["in_flight"]).all()
    assert f["lost"].sum() > 0
    p = full.packets[full.packets["sent_s"] >= 5.0]
    for flow, g in p.groupby(p["flow"].astype(str)):
        row = f.loc[flow]
        assert row["received"] == len(g)
        assert row["delay_mean_ms"] == pytest.approx(g["delay_ms"].mean(), rel=1e-12)
        active = row["stop_s"] - max(row["start_s"], 5.0)
        assert row["throughput_bps"] == pytest.approx(g["size_bytes"].sum() * 8 / active, rel=1e-12)
    assert (f["sent"] < full.flows.set_index("flow")["sent"]).all()


def test_a_warmup_as_long_as_the_run_is_refused(examples):
    sc = mediasim.load_scenario(examples / "dumbbell.toml").measure(warmup_s=20.0)
    with pytest.raises(mediasim.ScenarioError, match="measure.warmup_s: 20 s leaves nothing to measure"):
        sc.validate()


def test_jitter_under_two_to_the_minus_60_ns_is_zero():
    """RFC 3550 A.8's estimate on a path whose transit stopped changing
    decays by 15/16 a packet; below 2^-60 ns the engine sets it to 0
    (sim/jitter.rs: left alone it would end stuck at a subnormal value,
    where every step is slow). Above that the flows table's value is the
    recurrence's (test_summary_matches_packet_table)."""
    sc = mediasim.Scenario.from_dict({
        "name": "constant-transit", "duration_s": 5.2,
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"a": "a", "b": "b", "rate_bps": 100e6, "delay_ms": 1.0}],
        # g's packets queue some of f's during its first 0.2 s.
        "flows": [{"name": "f", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 100,
                   "rate_bps": 100 * 8 * 1000},
                  {"name": "g", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 1400,
                   "rate_bps": 50e6, "stop_s": 0.2}],
    }).measure(packets=True)
    res = mediasim.run(sc, seed=1)
    p = res.packets[res.packets["flow"] == "f"].sort_values("recv_ns")
    transit = (p["recv_ns"].astype(np.int64) - p["sent_ns"].astype(np.int64)).to_numpy()
    d = np.abs(np.diff(transit))
    # Transit changes while g runs, then holds for the last ~5,000 packets.
    assert d.any() and 4_000 < len(d) - np.flatnonzero(d)[-1] < 6_000
    j = 0.0
    for dd in d:
        j += (float(dd) - j) / 16
    # The plain recurrence ends far under a nanosecond, yet above 2^-60 ns
    # and visible in milliseconds.
    assert 0 < j * 1e-6 and j < 2.0 ** -60
    assert res.flows.set_index("flow").loc["f", "jitter_ms"] == 0.0
