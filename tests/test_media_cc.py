"""The media controllers on per-packet feedback, GCC (docs/models/gcc.md,
both filters), NADA (docs/models/nada.md) and SCReAM (docs/models/scream.md,
RFC 8298 and v2), on RFC 8867 case 5.1's
pattern, shortened: a call through a bottleneck of 1 Mbit/s that drops to
0.6 at 30 s and comes back at 50 s, 50 ms one way, 300 ms of drop-tail
queue. The controllers' parts are tested alone with hand-computed values in
the engine (`proto/cc/gcc`, `proto/cc/nada`, `proto/cc/scream`); here, the shapes case 5.1
expects of the whole: each settles under the capacity without loss, backs
off within a few RTTs of the drop, and recovers after the rise; and bad
input is named at its field."""

import pytest

import mediasim
from conftest import assert_balanced
from mediasim.errors import ScenarioError

CAPS = [[0, 1e6], [30, 0.6e6], [50, 1e6]]


#: Each controller as a member's fields: (cc, feedback, pacer).
CONTROLLERS = {
    "gcc-trendline": ({"type": "gcc", "estimator": "trendline"}, {"format": "twcc", "interval_ms": 50}, {}),
    "gcc-kalman": ({"type": "gcc", "estimator": "kalman"}, {"format": "twcc", "interval_ms": 50}, {}),
    "nada": ({"type": "nada"}, {"format": "rfc8888", "interval_ms": 100}, {"factor": 1.0}),
    "scream": ({"type": "scream"}, {"format": "rfc8888", "interval_ms": 50}, {"factor": 1.0, "burst_ms": 0}),
    "scream-v2": ({"type": "scream", "version": "v2"}, {"format": "rfc8888", "interval_ms": 50},
                  {"factor": 1.0, "burst_ms": 0}),
}


def controlled_call(name="gcc-trendline", caps=CAPS, duration_s=70.0, **fields):
    cc, feedback, pacer = CONTROLLERS[name]
    cc = {**cc, **fields}
    sc = mediasim.Scenario("gcc-steps", duration_s=duration_s)
    sc.measure(series=True, packets=False)
    for n in ("s", "a", "b", "r"):
        sc.node(n)
    sc.link("s", "a", rate_bps=100e6, delay_ms=1)
    sc.link("a", "b", rate_bps=10e6, delay_ms=50, ab={"rate_bps": caps},
            queue={"type": "droptail", "limit_bytes": int(0.3 * 1e6 / 8)})
    sc.link("b", "r", rate_bps=100e6, delay_ms=1)
    sender = {"node": "s", "media": True, "source": {"type": "synthetic", "fps": 30}, "pacer": pacer,
              "feedback": feedback, "cc": cc}
    sc.rtp_session("c", [sender, {"node": "r", "playout": {"adaptive": True}}], transport="unicast",
                   session_bw_bps=1.5e6, media_payload_bytes=1160, avpf={"trr_interval_ms": 1000})
    return sc


def mean(series, var, start_s, end_s):
    x = series[(series["var"] == var) & (series["time_s"] >= start_s) & (series["time_s"] < end_s)]
    return x["value"].mean()


@pytest.fixture(scope="module", params=list(CONTROLLERS))
def steps(request):
    return request.param, mediasim.run(controlled_call(request.param))


def test_each_settles_under_the_capacity_without_loss(steps):
    est, res = steps
    assert_balanced(res)
    s = res.tables["media_series"]
    for start, end, cap in [(20, 30, 1e6), (40, 50, 0.6e6), (60, 70, 1e6)]:
        sent = mean(s, "send_bps", start, end)
        assert 0.75 * cap < sent < 1.02 * cap, (est, start, sent)
    flow = res.tables["flows"].set_index("flow").loc["c/s/rtp"]
    assert flow["lost"] == 0
    # Queuing delay: the one-way delay over the path's 52 ms.
    assert flow["delay_mean_ms"] - 52 < 60, (est, flow["delay_mean_ms"])


def test_each_backs_off_within_a_few_rtts_of_the_drop(steps):
    est, res = steps
    s = res.tables["media_series"]
    target = s[s["var"] == "target_bps"]
    after = target[(target["time_s"] >= 30) & (target["value"] < 0.6e6)]
    # The RTT is about 0.15 s with the feedback interval: a few RTTs.
    assert after["time_s"].min() - 30 < 1.0, est


@pytest.mark.parametrize("name", ["gcc-trendline", "nada", "scream"])
def test_a_controller_without_per_packet_feedback_is_named(name):
    sc = controlled_call(name)
    del sc.data["rtp_sessions"][0]["members"][0]["feedback"]
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert "members[0].cc" in str(e.value) and "per-packet feedback" in str(e.value)


@pytest.mark.parametrize("field,value,words", [
    ("beta", 1.5, "(0, 1)"),
    ("start_bps", 5e6, "within [min_bps, max_bps]"),
    ("trendline_window", 1, "2..=1000"),
    ("estimator", "nonsense", "nonsense"),
    ("loss_low", 0.5, "at most loss_high"),
    ("loss_decrease_interval_ms", -300, "non-negative"),
    ("loss_increase_window_ms", -1000, "non-negative"),
    ("loss_increase_window_ms", 2e9, "at most"),
])
def test_bad_gcc_fields_are_named(field, value, words):
    sc = controlled_call(**{field: value})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert f"members[0].cc.{field}" in str(e.value) and words in str(e.value)


@pytest.mark.parametrize("cc", ["gcc", "nada", "scream"])
def test_gcc_nada_and_scream_are_only_for_rtp_media(cc):
    sc = mediasim.Scenario("paced-gcc", duration_s=1.0)
    sc.node("a")
    sc.node("b")
    sc.link("a", "b", rate_bps=1e6, delay_ms=10)
    sc.data.setdefault("flows", []).append(
        {"name": "p", "type": "paced", "src": "a", "dst": "b", "cc": {"type": cc}})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert "flows[0].cc" in str(e.value) and "per-packet feedback" in str(e.value)


@pytest.mark.parametrize("field,value,words", [
    ("kappa", -1, "non-negative"),
    ("alpha", 2, "probability"),
    ("rmin_bps", 2e6, "at most rmax_bps"),
    ("logwin_ms", 0, "positive"),
])
def test_bad_nada_fields_are_named(field, value, words):
    sc = controlled_call("nada", **{field: value})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert f"members[0].cc.{field}" in str(e.value) and words in str(e.value)


@pytest.mark.parametrize("field,value,words", [
    ("beta_loss", 1.5, "probability"),
    ("qdelay_target_lo_ms", 500, "at most qdelay_target_hi_ms"),
    ("l4s", True, "version"),
    ("min_bps", 2e6, "at most max_bps"),
    ("stall_ms", 0, "positive"),
])
def test_bad_scream_fields_are_named(field, value, words):
    sc = controlled_call("scream", **{field: value})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert f"members[0].cc.{field}" in str(e.value) and words in str(e.value)


def test_scream_without_a_pacer_is_named():
    """SCReAM's RTP queue is the member's pacer: without one the window
    would have nothing to hold back."""
    sc = controlled_call("scream")
    del sc.data["rtp_sessions"][0]["members"][0]["pacer"]
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert "members[0].cc" in str(e.value) and "pacer" in str(e.value)


def test_screams_window_holds_the_excess_at_the_sender_when_capacity_falls():
    """Self-clocking (RFC 8298 4.1.2.5): when the capacity falls to 30%,
    only a window's worth of bytes can be in the network, so the excess
    waits in the RTP queue (the pacer) instead of overflowing the 37.5 kB
    bottleneck queue, which 0.7 Mbit/s of excess would fill in 0.4 s."""
    res = mediasim.run(controlled_call("scream", caps=[[0, 1e6], [10, 0.3e6]], duration_s=20.0))
    assert_balanced(res)
    flow = res.tables["flows"].set_index("flow").loc["c/s/rtp"]
    assert flow["lost"] == 0
    media = res.tables["media"].iloc[0]
    assert media["pacer_delay_max_ms"] > 100


@pytest.mark.parametrize("name", ["scream", "scream-v2"])
def test_media_marked_ect_meets_an_aqm_with_marks_instead_of_drops(name):
    """A member's `ecn = "ect0"` media through CoDel with ECN: the AQM
    marks CE where it would drop, RFC 8888 feedback carries the bits back,
    and SCReAM backs off on them (BETA_ECN): no loss; the same call
    not-ECT is dropped instead."""
    out = {}
    for ecn in ("ect0", "not_ect"):
        sc = controlled_call(name, duration_s=40.0)
        sc.data["rtp_sessions"][0]["members"][0]["ecn"] = ecn
        sc.data["links"][1]["queue"] = {"type": "codel", "ecn": True}
        res = mediasim.run(sc)
        assert_balanced(res)
        flow = res.tables["flows"].set_index("flow").loc["c/s/rtp"]
        out[ecn] = (flow["lost"], res.tables["queues"]["ecn_marks"].sum())
    assert out["ect0"][0] == 0 and out["ect0"][1] > 0, out
    assert out["not_ect"][0] > 0 and out["not_ect"][1] == 0, out


def test_a_bad_media_ecn_codepoint_is_named():
    sc = controlled_call("scream")
    sc.data["rtp_sessions"][0]["members"][0]["ecn"] = "ce"
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert "ecn" in str(e.value) and "ce" in str(e.value)


def test_the_gcc_crosschecks_stored_inputs_are_the_generators():
    """tests/data/gcc_references.json holds aiortc's detector outputs for
    the inputs `mediasim.validation.gcc_crosscheck` generates (the engine
    test compares mediasim's detector with them): a change to the
    generator must come with new references."""
    import json

    from mediasim.validation import gcc_crosscheck as g

    doc = json.loads(g.REFERENCES.read_text())
    assert doc["inputs"] == g.inputs()
    s = g.summary(doc["outputs"])
    assert s["groups"] == 1500 and min(s["normal"], s["underuse"], s["overuse"]) > 10


def test_gccs_loss_based_rises_do_not_hold_back_a_clean_ramp_up():
    """Without loss, libwebrtc's rise (1.08 times the last second's least,
    on every message) keeps GCC's target at its delay-based estimate
    through the ramp-up: the same as with a loss-based rate that never
    binds (the aiortc check's call, its first 18 s)."""
    import pandas as pd

    from mediasim.validation import gcc_rate_crosscheck as g

    def target(cc_fields):
        d = g.scenario("trendline")
        d["rtp_sessions"][0]["members"][0]["cc"].update(cc_fields)
        s = mediasim.run(mediasim.Scenario.from_dict(d)).tables["media_series"]
        s = s[(s["var"] == "target_bps") & (s["time_s"] <= 18.0)]
        return s.set_index("time_s")["value"]

    # A 1 us window and a factor of 10: As is the delay-based estimate after every message.
    ours, free = target({}), target({"loss_increase": 10.0, "loss_increase_window_ms": 0.001})
    both = pd.concat([ours.rename("ours"), free.rename("free")], axis=1).sort_index().ffill().dropna()
    assert len(both) > 100 and both["free"].iloc[-1] > 2 * both["free"].iloc[0]  # a ramp-up
    assert (both["ours"] / both["free"]).between(0.99, 1.01).all()


def _start(probing, capacity_bps=4e6, duration_s=6.0):
    """A GCC call from its 300 kbit/s start on a path of ``capacity_bps``
    (R_max 5 Mbit/s), with or without libwebrtc's start-up probes."""
    sc = controlled_call(caps=[[0, capacity_bps]], duration_s=duration_s, probing=probing, max_bps=5e6)
    sc.data["rtp_sessions"][0]["session_bw_bps"] = 6e6
    sc.measure(series=True, packets=True)
    res = mediasim.run(sc, seed=1)
    assert_balanced(res)
    s = res.tables["media_series"]
    return res, s[s["var"] == "target_bps"].set_index("time_s")["value"]


def test_gccs_start_up_probes_find_the_capacity_within_a_second():
    """libwebrtc's initial probes (3 and 6 times the start rate, then twice
    each estimate that reaches 0.7 of the last probe) take the target from
    300 kbit/s to the path's 4 Mbit/s range within a second; without them
    the multiplicative increase (8% a second) is still under 0.5 Mbit/s."""
    res, probed = _start(True)
    _, plain = _start(False)
    at = lambda x, t: x[x.index <= t].iloc[-1]  # noqa: E731
    assert at(probed, 1.0) > 2.5e6, probed[probed.index <= 1.0]
    assert at(plain, 1.0) < 0.5e6 and at(plain, 5.9) < 0.6e6
    # The probes asked for more than the start's two: 0.9, 1.8, then 3.6
    # (twice the 1.8 result) capped at R_max.
    assert probed[probed.index <= 1.0].max() <= 5e6
    m = res.tables["media"].iloc[0]
    # Padding: each 224 octets after IPv4, UDP, RTP and the 8-byte extension.
    assert m["padding_packets"] > 0 and m["padding_bytes"] == m["padding_packets"] * (224 + 48)
    # Padding carries no media: the media rate is the frames' alone.
    assert m["media_payload_bytes"] * 8 / 6.0 == pytest.approx(m["media_rate_bps"], rel=1e-9)
    pk = res.tables["packets"]
    pk = pk[pk["flow"] == "c/s/rtp"]
    assert (pk["size_bytes"] == 272).sum() >= m["padding_packets"] - 1  # delivered (at most one in flight)


def test_a_probe_through_a_narrow_path_reads_its_capacity():
    """A path of 1 Mbit/s: the 1.8 Mbit/s probe comes back at the path's
    rate, so the estimate is 0.95 of it (libwebrtc's saturated probe), not
    the probe's rate; the target stays under the capacity."""
    _, probed = _start(True, capacity_bps=1e6, duration_s=3.0)
    early = probed[(probed.index > 0) & (probed.index <= 1.0)]
    # The first probe (0.9 Mbit/s) passes; the second reads the path.
    assert early.iloc[0] == pytest.approx(0.9e6, rel=0.01), early
    assert early.iloc[1] == pytest.approx(0.95e6, rel=0.01), early
    assert early.max() < 1.01e6, early
