"""RMTP sessions end to end: loss-free delivery, local recovery, the
window's packet count, the analytic P' at the DR, accounting at the end,
DRs under DRs, and errors that name the field."""

import pytest

import mediasim
from conftest import assert_balanced, assert_field_error

SENDER_DR = {"rate_bps": 512e3, "delay_ms": 40}
DR_RECEIVER = {"rate_bps": 64e3, "delay_ms": 10}


def tree(n: int, duration_s: float = 100, dr_loss: float = 0.0, loss: dict | None = None, **session) -> mediasim.Scenario:
    """s -> d -> r0..r<n-1>, scenario 1's links; `loss` maps receivers to
    their loss rate."""
    sc = mediasim.Scenario("rmtp", duration_s=duration_s).measure(packets=True, series=True)
    sc.node("s")
    sc.node("d", **({"receiver_loss": {"type": "packet", "rate": dr_loss}} if dr_loss else {}))
    sc.link("s", "d", **SENDER_DR)
    rs = [f"r{i}" for i in range(n)]
    for r in rs:
        rate = (loss or {}).get(r, 0.0)
        sc.node(r, **({"receiver_loss": {"type": "packet", "rate": rate}} if rate else {}))
        sc.link("d", r, **DR_RECEIVER)
    sc.rmtp_session("m", "s", [{"dr": "d", "receivers": rs}], **session)
    return sc


def rows(res):
    t = res.rmtp.set_index("flow")
    return t.loc["m/data"], t[t["role"] == 1], t[t["role"] == 2]


def test_loss_free_run_delivers_everything_in_order_without_retransmissions():
    res = mediasim.run(tree(5), seed=1)
    s, drs, rcv = rows(res)
    # The window opens by one per 2 s interval up to 10: 1 + 2 + ... + 10,
    # then 10 per interval; 50 intervals in 100 s.
    assert s["new_sent"] == sum(range(1, 11)) + 10 * 40
    assert s["retx_sent"] == 0 and drs["local_retx"].sum() == 0
    for t in (drs, rcv):
        assert (t["delivered"] == s["new_sent"]).all()
        assert (t["waiting_at_end"] == 0).all() and (t["gaps_at_end"] == 0).all()
        assert (t["duplicates"] == 0).all()
    assert_balanced(res)
    # Delay from first transmission to delivery: at least the path's
    # propagation and serialisation (40 + 10 ms, 500 bytes at 512 and
    # 64 kbit/s: 7.8 and 62.5 ms).
    assert (rcv["delay_mean_s"] > 0.120).all()


def test_loss_at_one_receiver_is_repaired_by_its_custodial_dr_alone():
    res = mediasim.run(tree(5, duration_s=120, loss={"r0": 0.1}, stop_s=100, dr_acknowledges="custody",
                            dr_repair_holdoff_ms=1000), seed=2)
    s, drs, rcv = rows(res)
    assert s["retx_sent"] == 0
    r0 = rcv.loc["m/r0/hack"]
    assert drs["local_retx"].iloc[0] >= r0["recovered"] > 0.05 * s["new_sent"]
    # Everything is delivered once the sender has stopped.
    assert (rcv["delivered"] == s["new_sent"]).all()
    assert (rcv.drop(index="m/r0/hack")["recovered"] == 0).all()


def test_a_subgroup_dr_leaves_the_sender_retransmitting_what_a_receiver_still_misses():
    """The study's agents: the DR's HACK acknowledges a packet only once
    every receiver has it, so a packet r0 lost stays unacknowledged until
    the DR's repair reaches r0 and r0 says so, and a DR HACK in between
    makes the sender retransmit it too. The DR repairs every round what
    was asked, so it repairs more often than r0 lost packets."""
    res = mediasim.run(tree(5, duration_s=120, loss={"r0": 0.1}, stop_s=100), seed=2)
    s, drs, rcv = rows(res)
    r0 = rcv.loc["m/r0/hack"]
    assert 0 < s["retx_sent"] < r0["recovered"]
    assert s["premature_retx"] == 0, "every one was reported missing"
    assert drs["local_retx"].iloc[0] > r0["recovered"] > 0.05 * s["new_sent"]
    assert (rcv["delivered"] == s["new_sent"]).all()


def test_every_packet_is_accounted_for_at_every_receiver():
    res = mediasim.run(tree(20, duration_s=60, dr_loss=0.05, loss={f"r{i}": 0.05 for i in range(20)}), seed=3)
    s, drs, rcv = rows(res)
    for t in (drs, rcv):
        not_arrived = s["new_sent"] - t["highest_received"]
        assert (not_arrived >= 0).all()
        assert ((t["delivered"] + t["waiting_at_end"] + t["gaps_at_end"] + not_arrived) == s["new_sent"]).all()
    assert s["retx_sent"] > 0 and drs["local_retx"].iloc[0] > 0
    assert_balanced(res)


def test_loss_indication_at_the_dr_matches_the_analytic_probability():
    # P' = 1 - (1 - q)(1 - r)^n: the first transmission of a packet lost at
    # the DR (q) or at one of its n receivers (r). Scenario 3's losses.
    n, q, r = 50, 0.05, 0.01
    sc = tree(n, duration_s=500, dr_loss=q, loss={f"r{i}": r for i in range(n)})
    res = mediasim.run(sc, seed=4)
    s, _, _ = rows(res)
    d = res.drops
    lost = d[(d["flow"] == "m/data") & (d["reason"] == "receiver_loss")]
    sent = int(s["new_sent"])
    p_sim = lost["seq"].nunique() / sent
    p_model = 1 - (1 - q) * (1 - r) ** n
    sd = (p_model * (1 - p_model) / sent) ** 0.5
    assert abs(p_sim - p_model) < 4 * sd, (p_sim, p_model, sent)


def test_a_dr_under_a_dr_repairs_its_own_subgroup():
    sc = mediasim.Scenario("two-level", duration_s=120)
    for n in ("s", "d0", "d1", "a", "b"):
        sc.node(n, **({"receiver_loss": {"type": "packet", "rate": 0.1}} if n == "b" else {}))
    sc.link("s", "d0", **SENDER_DR).link("d0", "a", **DR_RECEIVER).link("d0", "d1", **SENDER_DR)
    sc.link("d1", "b", **DR_RECEIVER)
    sc.rmtp_session("m", "s", [{"dr": "d0", "receivers": ["a"]}, {"dr": "d1", "receivers": ["b"], "parent": "d0"}],
                    stop_s=100, dr_acknowledges="custody", dr_repair_holdoff_ms=1000)
    res = mediasim.run(sc, seed=5)
    t = res.rmtp.set_index("flow")
    s = t.loc["m/data"]
    assert s["retx_sent"] == 0
    assert t.loc["m/d1/hack", "local_retx"] > 0 and t.loc["m/d0/hack", "local_retx"] == 0
    for f in ("m/a/hack", "m/b/hack", "m/d0/hack", "m/d1/hack"):
        assert t.loc[f, "delivered"] == s["new_sent"], f


def test_a_full_dr_buffer_leaves_repairs_to_the_sender():
    res = mediasim.run(tree(5, duration_s=120, loss={"r0": 0.1}, stop_s=100, dr_buffer_packets=1), seed=2)
    s, drs, rcv = rows(res)
    assert drs["dr_buffer_overflows"].iloc[0] > 0
    assert s["retx_sent"] > 0
    assert (rcv["delivered"] == s["new_sent"]).all()


def test_doubling_window_option():
    res = mediasim.run(tree(2, duration_s=20, window_growth="doubling"), seed=1)
    s, _, _ = rows(res)
    # 1, 2, 4, 8, 10, 10, ... over 10 intervals.
    assert s["new_sent"] == 1 + 2 + 4 + 8 + 10 * 6
    cw = res.rmtp_series
    cw = cw[(cw["flow"] == "m/data") & (cw["var"] == "cwnd")]
    assert cw["value"].tolist()[:6] == [1, 2, 4, 8, 10, 10]
    assert cw["time_s"].tolist()[:3] == [0, 2, 4]


@pytest.mark.parametrize("change,path,fragment", [
    (lambda d: d.update(sender="nowhere"), "rmtp_sessions[0].sender", "unknown node"),
    (lambda d: d["subgroups"][0]["receivers"].append("s"), "rmtp_sessions[0].subgroups[0].receivers[2]",
     "already has a role"),
    (lambda d: d["subgroups"][0].update(parent="r0"), "rmtp_sessions[0].subgroups[0].parent", "not a DR"),
    (lambda d: d["subgroups"][0].update(parent="d"), "rmtp_sessions[0].subgroups[0].parent", "cycle"),
    (lambda d: d.update(cong_a=40), "rmtp_sessions[0].cong_a", "at most cong_c"),
    (lambda d: d.update(initial_window=11), "rmtp_sessions[0].initial_window", "at most ws"),
    (lambda d: d.update(ws=0), "rmtp_sessions[0].ws", "at least 1"),
    (lambda d: d.update(data_packet_bytes=20), "rmtp_sessions[0].data_packet_bytes", "bytes on the wire"),
    (lambda d: d.update(send_interval_ms=0), "rmtp_sessions[0].send_interval_ms", "positive"),
    (lambda d: d.update(subgroups=[]), "rmtp_sessions[0].subgroups", "at least one DR"),
    (lambda d: d.update(window_growth="cubic"), "rmtp_sessions[0].window_growth",
     "must be one of linear, doubling (got cubic)"),
])
def test_errors_name_the_field(change, path, fragment):
    sc = tree(2)
    change(sc.data["rmtp_sessions"][0])
    assert_field_error(sc, path, fragment)


def test_unreachable_receiver_is_an_error():
    sc = tree(2)
    sc.node("island")
    sc.data["rmtp_sessions"][0]["subgroups"][0]["receivers"].append("island")
    with pytest.raises(mediasim.ScenarioError, match="island"):
        mediasim.run(sc, seed=1)


def test_pcap_carries_the_documented_rmtp_header(tmp_path):
    import struct

    import dpkt

    res = mediasim.run(tree(2, duration_s=30, loss={"r0": 0.3}), seed=1, out=tmp_path, pcap=True)
    kinds, hacks = {}, []
    with open(tmp_path / "pcap" / "d-r0.pcap", "rb") as fh:
        for ts, buf in dpkt.pcap.Reader(fh):
            ip = dpkt.ip.IP(buf)
            rm = bytes(ip.data.data)
            version, kind = rm[0] >> 4, rm[0] & 0x0F
            assert version == 1
            child, seq, word = struct.unpack("!HQI", rm[2:16])
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == 3:  # a HACK from r0 to d: its bitmap follows
                bits = rm[16:16 + (word + 7) // 8]
                hacks.append((child, seq, word, bits))
            else:
                assert len(buf) == 500
                assert word <= ts * 1000 + 1  # first sent (ms) before capture
    assert kinds[1] > 0 and kinds[2] > 0 and kinds[3] > 0
    # HACKs name r0 as child 0, and their size is the header plus the bitmap.
    assert all(c == 0 for c, *_ in hacks)
    sizes = {len(b) for *_, b in hacks}
    assert sizes and max(sizes) >= 1
    # Every HACK r0 sent crossed this link (its loss applies on delivery).
    assert kinds[3] == res.rmtp.set_index("flow").loc["m/r0/hack", "hacks_sent"]
    # A HACK reporting gaps carries one bit per number from its base.
    gappy = [(seq, word, bits) for _, seq, word, bits in hacks if word > 0]
    assert gappy and all(len(bits) == (word + 7) // 8 and not bits[0] >> 7 for seq, word, bits in gappy)
