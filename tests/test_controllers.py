"""The rate-controller seam (proto/cc): any controller drives a paced bulk
flow, an SVC flow, an RTP member's media and a media-scaling flow; TFRC
behind the seam behaves exactly as the TFRC flow; the fixed-rate example
controller sends at its rate; the media-scaling control runs over any
levels; errors name the `cc` field."""

import json

import pytest

import mediasim
from mediasim import _engine
from conftest import assert_balanced, assert_field_error, line


def _two(kind: str, **fields) -> mediasim.Results:
    sc = line(1, rate_bps=2e6, delay_ms=20, duration_s=20, queue={"type": "droptail", "limit_packets": 20})
    sc.flow("f", kind, src="n0", dst="n1", **fields)
    return mediasim.run(sc, seed=3)


def test_tfrc_behind_the_seam_sends_exactly_as_the_tfrc_flow():
    """The paced flow with cc = tfrc and the TFRC flow run the same rules
    (RFC 5348) through different code paths: every packet leaves and
    arrives at the same instant."""
    a = _two("tfrc", packet_bytes=1000)
    b = _two("paced", packet_bytes=1000, cc={"type": "tfrc"})
    cols = ["sent", "received", "lost", "throughput_bps", "delay_mean_ms", "delay_p95_ms", "jitter_ms"]
    fa, fb = a.flows.set_index("flow"), b.flows.set_index("flow")
    assert fa.loc["f", cols].tolist() == fb.loc["f", cols].tolist()
    assert fa.loc["f/fb", "sent"] == fb.loc["f/fb", "sent"] > 0
    assert a.packets["recv_ns"].tolist() == b.packets["recv_ns"].tolist()
    assert b.paced.set_index("flow").loc["f", "final_target_bps"] == a.tfrc.set_index("flow").loc["f", "final_rate_bps"]
    assert_balanced(b)


def test_a_fixed_rate_flow_sends_at_its_rate_and_returns_no_feedback():
    """1000-byte packets at 400 kbit/s leave 20 ms apart: 1000 packets in
    the 20 s run, whatever the 2 Mbit/s link does; the last (sent at
    19.98 s, 24 ms on its way) is still in flight at the end."""
    res = _two("paced", packet_bytes=1000, cc={"type": "fixed", "rate_bps": 400e3})
    f = res.flows.set_index("flow")
    assert f.loc["f", "sent"] == 1000
    assert (f.loc["f", "received"], f.loc["f", "in_flight"], f.loc["f/fb", "sent"]) == (999, 1, 0)
    gaps = res.packets[res.packets["flow"] == "f"]["sent_ns"].diff().dropna().unique()
    assert gaps.tolist() == [20_000_000]
    p = res.paced.set_index("flow").loc["f"]
    assert (p["packets_sent"], p["final_target_bps"], p["packets_received"], p["feedback_sent"]) == (
        1000, 400e3, 999, 0)


def test_a_fixed_rate_above_the_link_fills_the_queue_and_loses():
    """3 Mbit/s into 2 Mbit/s: a third of the packets cannot leave; a
    fixed rate does not back off."""
    res = _two("paced", packet_bytes=1000, cc={"type": "fixed", "rate_bps": 3e6})
    f = res.flows.set_index("flow").loc["f"]
    assert f["lost"] / f["sent"] == pytest.approx(1 / 3, abs=0.01)
    assert f["throughput_bps"] == pytest.approx(2e6, rel=0.01)


def test_an_svc_flow_runs_on_the_fixed_rate_controller():
    """The SVC source chooses its layers within the controller's target:
    at a fixed 600 kbit/s it offers no more than that per GOP."""
    sc = line(1, rate_bps=10e6, delay_ms=10, duration_s=20)
    sc.flow("v", "svc", src="n0", dst="n1", cc={"type": "fixed", "rate_bps": 600e3}, stop_s=20)
    res = mediasim.run(sc, seed=1)
    svc = res.svc.set_index("flow").loc["v"]
    assert svc["final_rate_bps"] == 600e3
    offered = sum(svc[c] for c in ("offered_bytes_base", "offered_bytes_s0_fgs", "offered_bytes_s1",
                                   "offered_bytes_s1_fgs"))
    assert 0.5 * 600e3 * 20 / 8 < offered <= 600e3 * 20 / 8
    assert res.flows.set_index("flow").loc["v/fb", "sent"] == 0
    assert res.flows.set_index("flow").loc["v", "lost"] == 0


LEVELS = [200e3, 400e3, 800e3, 1600e3, 3200e3]


def test_the_scale_control_climbs_its_levels_on_a_free_path():
    """A paced flow under the media-scaling control with five levels of
    its own, on a 10 Mbit/s path: one level up per loss-free control RTT
    (the floor: one 1000-byte packet at 200 kbit/s, 40 ms), never down,
    and at the top level it sends one packet per 2.5 ms."""
    sc = line(1, rate_bps=10e6, delay_ms=20, duration_s=20)
    sc.flow("f", "paced", src="n0", dst="n1", cc={"type": "scale", "levels_bps": LEVELS})
    res = mediasim.run(sc, seed=1)
    p = res.paced.set_index("flow").loc["f"]
    assert p["final_target_bps"] == 3200e3
    f = res.flows.set_index("flow")
    assert f.loc["f", "lost"] == 0 and f.loc["f/fb", "sent"] == 4, "one request per level up"
    sent = res.packets[res.packets["flow"] == "f"]["sent_ns"]
    assert sent.diff().iloc[-100:].unique().tolist() == [2_500_000]
    rates = res.paced_series
    assert rates[rates["flow"] == "f"]["value"].tolist() == LEVELS
    assert_balanced(res)


def test_the_scale_control_backs_off_where_a_level_overflows_the_path():
    """2 Mbit/s with a 20-packet buffer: 3.2 Mbit/s overflows it, so the
    control halves and climbs in turn, losing some packets and averaging
    below the capacity."""
    res = _two("paced", packet_bytes=1000, cc={"type": "scale", "levels_bps": LEVELS})
    f = res.flows.set_index("flow").loc["f"]
    assert f["lost"] > 0 and 0.2e6 < f["throughput_bps"] < 2e6
    assert res.paced.set_index("flow").loc["f", "final_target_bps"] in LEVELS
    assert_balanced(res)


def test_media_scaling_takes_the_highest_scale_within_a_rate_controllers_target():
    """MM_APP's scales send 300-1100 kbit/s on the wire; under a fixed
    750 kbit/s target it takes scale 2 (700 kbit/s) and stays there; its
    receiver sends no requests and has no control counters."""
    sc = line(1, rate_bps=10e6, delay_ms=20, duration_s=10)
    sc.flow("m", "media_scaling", src="n0", dst="n1", app="mm", cc={"type": "fixed", "rate_bps": 750e3})
    res = mediasim.run(sc, seed=1)
    row = res.media_scaling.set_index("flow").loc["m"]
    assert (row["mean_scale"], row["final_scale"], row["requests_sent"]) == (2.0, 2, 0)
    assert row[["missing_packets", "decreases", "srtt_ms"]].isna().all()
    gaps = res.packets[res.packets["flow"] == "m"]["sent_ns"].diff().dropna().unique()
    assert gaps.tolist() == [round(1500 * 8 / 700e3 * 1e9)]
    assert_balanced(res)


def test_every_controller_is_in_the_schema():
    defs = json.loads(_engine.schema())["$defs"]
    fixed = next(v for v in defs["CcSpec"]["oneOf"] if v["properties"]["type"]["const"] == "fixed")
    assert fixed["required"] == ["rate_bps", "type"] or set(fixed["required"]) == {"rate_bps", "type"}
    paced = next(v for v in defs["FlowSpec"]["oneOf"] if v["properties"]["type"]["const"] == "paced")
    assert {"cc", "packet_bytes", "feedback_bytes"} <= set(paced["properties"])


@pytest.mark.parametrize("cc,path,fragment", [
    ({"type": "bbr"}, "flows[0].cc.type", "must be one of tfrc, ppacc, fixed, scale, gcc, nada, scream (got bbr)"),
    ({"type": "fixed"}, "flows[0].cc.rate_bps", "must be given (this field has no default)"),
    ({"type": "fixed", "rate_bps": 0}, "flows[0].cc.rate_bps", "positive"),
    ({"type": "tfrc", "b": 0.5}, "flows[0].cc.b", "at least 1"),
    ({"type": "scale"}, "flows[0].cc.levels_bps", "required"),
    ({"type": "scale", "levels_bps": []}, "flows[0].cc.levels_bps", "give 1 to 256 levels"),
    ({"type": "scale", "levels_bps": [1e5, -1]}, "flows[0].cc.levels_bps[1]", "positive"),
    ({"type": "scale", "levels_bps": [1e5], "initial_level": 1}, "flows[0].cc.initial_level", "0..=0"),
])
def test_controller_errors_name_the_field(cc, path, fragment):
    sc = line(1, rate_bps=1e6, delay_ms=1)
    sc.flow("f", "paced", src="n0", dst="n1", cc=cc)
    assert_field_error(sc, path, fragment)


def test_a_paced_flow_needs_its_controller():
    sc = line(1, rate_bps=1e6, delay_ms=1)
    sc.flow("f", "paced", src="n0", dst="n1")
    assert_field_error(sc, "flows[0].cc", "must be given (this field has no default)")


def _call(cc=None, duration_s=20.0, queue_packets=20):
    """A two-member unicast RTP session over a 2 Mbit/s, 20 ms link:
    n0 sends media (1000-byte payload), n1 receives."""
    sc = line(1, rate_bps=2e6, delay_ms=20, duration_s=duration_s,
              queue={"type": "droptail", "limit_packets": queue_packets})
    sender = {"node": "n0", "media": True, **({"cc": cc} if cc else {})}
    sc.rtp_session("call", [sender, {"node": "n1"}], session_bw_bps=500e3, media_payload_bytes=1000,
                   transport="unicast")
    return mediasim.run(sc, seed=2)


def test_rtp_media_follows_a_fixed_rate_controller():
    """With cc = fixed at 1.04 Mbit/s, 1040-byte media packets (1000 +
    RTP, UDP, IP) leave 8 ms apart instead of at the session's 500 kbit/s:
    2500 packets in 20 s; no feedback flow traffic."""
    res = _call({"type": "fixed", "rate_bps": 1.04e6})
    rtp = res.rtp.set_index("flow")
    assert rtp.loc["call/n0/rtcp", "media_packets_sent"] == 2500
    f = res.flows.set_index("flow")
    assert f.loc["call/n1/fb", "sent"] == 0 and f.loc["call/n0/rtp", "sent"] == 2500
    gaps = res.packets[res.packets["flow"] == "call/n0/rtp"]["sent_ns"].diff().dropna().unique()
    assert gaps.tolist() == [8_000_000]
    assert_balanced(res)


def test_rtp_media_without_cc_keeps_its_fixed_rate():
    res = _call()
    assert "call/n1/fb" not in set(res.flows["flow"])
    # 500 kbit/s of 1040-byte packets: 16.64 ms apart, 1202 in 20 s.
    assert res.rtp.set_index("flow").loc["call/n0/rtcp", "media_packets_sent"] == 1202
    assert res.rtp_series.empty


def test_rtp_media_under_tfrc_backs_off_to_the_bottleneck():
    """TFRC on the media of a call over a 2 Mbit/s link with a 20-packet
    queue: the receiver returns feedback, the media settles near the
    link's rate (within TFRC's usual sawtooth) and the target series is
    recorded."""
    res = _call({"type": "tfrc"}, duration_s=60)
    f = res.flows.set_index("flow")
    assert f.loc["call/n1/fb", "sent"] > 100
    media = f.loc["call/n0/rtp"]
    assert 0.6 * 2e6 < media["throughput_bps"] <= 2e6
    assert media["lost"] > 0
    series = res.rtp_series[res.rtp_series["var"] == "target_bps"]
    assert len(series) > 10 and series["value"].max() > 1e6
    assert_balanced(res)


@pytest.mark.parametrize("session,path,fragment", [
    ({"members": [{"node": "n0", "cc": {"type": "tfrc"}}, {"node": "n1"}], "transport": "unicast"},
     "rtp_sessions[0].members[0].cc", "media = true"),
    ({"members": [{"node": "n0", "media": True, "cc": {"type": "tfrc"}}, {"node": "n1"}]},
     "rtp_sessions[0].members[0].cc", "unicast"),
    ({"members": [{"node": "n0", "media": True, "cc": {"type": "fixed", "rate_bps": 0}}, {"node": "n1"}],
      "transport": "unicast"}, "rtp_sessions[0].members[0].cc.rate_bps", "positive"),
])
def test_rtp_controller_errors_name_the_field(session, path, fragment):
    sc = line(1, rate_bps=1e6, delay_ms=1)
    sc.data.setdefault("rtp_sessions", []).append(
        {"name": "call", "session_bw_bps": 100e3, "media_payload_bytes": 200, **session})
    assert_field_error(sc, path, fragment)


def test_tcp_window_growth_is_a_registered_controller():
    """Reno's growth (RFC 5681) is the window controller TCP flows use by
    default: naming it changes nothing; an unknown one is an error at its
    field."""
    def tcp(**fields):
        sc = line(1, rate_bps=2e6, delay_ms=20, duration_s=10, queue={"type": "droptail", "limit_packets": 15})
        sc.flow("t", "tcp", src="n0", dst="n1", **fields)
        return sc
    a, b = mediasim.run(tcp(), seed=1), mediasim.run(tcp(cc={"type": "reno"}), seed=1)
    assert a.packets["recv_ns"].tolist() == b.packets["recv_ns"].tolist()
    assert a.tcp.equals(b.tcp) and a.flows.set_index("flow").loc["t", "lost"] > 0
    assert_field_error(tcp(cc={"type": "vegas"}), "flows[0].cc.type", "must be one of reno, cubic (got vegas)")


def test_media_scaling_under_tfrc_follows_its_rate_below_the_bottleneck():
    """TFRC's rate chooses MM_APP's scale: on a 600 kbit/s bottleneck the
    flow cannot stay at the 1.1 Mbit/s top scale; TFRC's feedback returns
    in the flow's feedback flow and its no-feedback timer is armed."""
    sc = line(1, rate_bps=600e3, delay_ms=20, duration_s=30, queue={"type": "droptail", "limit_packets": 20})
    sc.flow("m", "media_scaling", src="n0", dst="n1", app="mm", cc={"type": "tfrc"})
    res = mediasim.run(sc, seed=1)
    row = res.media_scaling.set_index("flow").loc["m"]
    assert row["mean_scale"] < 3.0 and row["requests_sent"] > 0
    f = res.flows.set_index("flow").loc["m"]
    assert f["throughput_bps"] <= 600e3
    assert_balanced(res)
