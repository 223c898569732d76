"""DualPI2 (RFC 9332, docs/models/queues.md#dualpi2): its PI2 update, the
coupling and the L4S ramp are tested by hand in the engine
(`queue/dualpi2.rs`); here, the shapes RFC 9332 promises of the whole: the
Classic queue held near its 15 ms target by PI2 with drops (or marks for
ECN-capable traffic) instead of overflow, and ECT(1) traffic (SCReAMv2 in
its L4S mode) kept at a queuing delay of a few milliseconds beside a
Classic CUBIC flow that fills the Classic queue, where drop-tail gives it
the CUBIC flow's queue."""

import pytest

import mediasim
from conftest import assert_balanced
from mediasim.errors import ScenarioError
from test_media_cc import controlled_call


def classic(ecn):
    sc = mediasim.Scenario("pi2", duration_s=30.0).measure(packets=False)
    sc.node("a")
    sc.node("b")
    sc.link("a", "b", rate_bps=10e6, delay_ms=20, ab={"queue": {"type": "dualpi2"}})
    sc.flow("x", "tcp", src="a", dst="b", cc={"type": "cubic"}, tcp={"ecn": ecn})
    return mediasim.run(sc)


@pytest.mark.parametrize("ecn", [False, True])
def test_pi2_holds_the_classic_queue_near_its_target(ecn):
    res = classic(ecn)
    assert_balanced(res)
    flow = res.tables["flows"].set_index("flow").loc["x"]
    q = res.tables["queues"].iloc[0]
    queuing_ms = flow["delay_mean_ms"] - flow["delay_min_ms"]
    assert 8 < queuing_ms < 25, queuing_ms
    assert q["dropped_queue_overflow"] == 0
    if ecn:
        assert flow["lost"] == 0 and q["dualpi2_classic_marks"] > 0
    else:
        assert q["dropped_dualpi2"] > 0


def l4s_call(queue, ecn, l4s):
    sc = controlled_call("scream-v2", caps=[[0, 4e6]], duration_s=40.0, l4s=l4s)
    sc.data["rtp_sessions"][0]["members"][0]["ecn"] = ecn
    sc.data["links"][1]["queue"] = queue
    sc.flow("bulk", "tcp", src="s", dst="r", cc={"type": "cubic"}, start_s=5.0)
    res = mediasim.run(sc)
    assert_balanced(res)
    return res


def test_l4s_media_keeps_a_low_delay_beside_a_classic_flow():
    res = l4s_call({"type": "dualpi2"}, "ect1", True)
    flows = res.tables["flows"].set_index("flow")
    rtp, tcp = flows.loc["c/s/rtp"], flows.loc["bulk"]
    q = res.tables["queues"]
    assert q["dualpi2_l4s_marks"].sum() > 0
    # The path's one-way delay is 52 ms; L4S queuing stays a few ms while
    # the Classic queue sits near PI2's 15 ms target.
    assert rtp["delay_mean_ms"] - 52 < 10, rtp["delay_mean_ms"]
    assert tcp["delay_mean_ms"] - rtp["delay_mean_ms"] > 5
    # Drop-tail gives the media the CUBIC flow's queue instead.
    tail = l4s_call({"type": "droptail", "limit_bytes": 150_000}, "not_ect", False)
    rtp_tail = tail.tables["flows"].set_index("flow").loc["c/s/rtp"]
    assert rtp_tail["delay_mean_ms"] - 52 > 5 * (rtp["delay_mean_ms"] - 52)


@pytest.mark.parametrize("field,value,words", [
    ("alpha", 0, "positive"),
    ("k", -1, "positive"),
    ("t_update_ms", 0, "positive"),
    ("range_us", -1, "non-negative"),
    ("limit_ms", 1e9, "at most"),
])
def test_bad_dualpi2_fields_are_named(field, value, words):
    sc = mediasim.Scenario("pi2", duration_s=1.0)
    sc.node("a")
    sc.node("b")
    sc.link("a", "b", rate_bps=10e6, delay_ms=20, ab={"queue": {"type": "dualpi2", field: value}})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert f"queue.{field}" in str(e.value) and words in str(e.value)
