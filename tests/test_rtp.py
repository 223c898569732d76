"""RTP sessions at scenario level: RTCP bandwidth share, AVP versus AVPF
feedback delay, suppression in multicast, RTT from LSR/DLSR, accounting."""

import math
import struct

import pytest

import mediasim
from conftest import assert_balanced, pcap_records


def unicast(profile, duration_s=120, loss=0.01, bw=200e3, payload=460):
    sc = mediasim.Scenario("u", duration_s=duration_s)
    sc.node("a1").node("a2").link("a1", "a2", rate_bps=10e6, delay_ms=10, ab={"loss": {"type": "packet", "rate": loss}})
    sc.data["rtp_sessions"] = [{
        "name": "s", "transport": "unicast", "session_bw_bps": bw, "media_payload_bytes": payload,
        "members": [{"node": "a1", "media": True, "profile": profile}, {"node": "a2", "profile": profile}],
    }]
    return mediasim.run(sc, seed=1)


def test_avpf_rtcp_stays_at_five_percent_avp_far_below():
    avpf = unicast("avpf")
    assert_balanced(avpf)
    total = avpf.tables["rtp"]["rtcp_share_pct"].sum()
    assert total == pytest.approx(5.0, abs=0.2)
    # AVP: the 5 s minimum dominates at 200 kbit/s. Without reconsideration
    # each member would send its mean packet every 5 s / (e - 3/2); timer
    # reconsideration only stretches that, so the share stays below it.
    r = unicast("avp").tables["rtp"]
    ceiling = (r["rtcp_bytes"] / r["rtcp_packets"] * 8 * (math.e - 1.5) / 5.0 / 200e3 * 100).sum()
    assert 0.5 * ceiling < r["rtcp_share_pct"].sum() <= ceiling
    assert ceiling < 0.2


def test_avp_feedback_waits_about_half_the_minimum_interval_avpf_ten_times_less():
    avp = unicast("avp").tables["rtp"].set_index("flow").loc["s/a2/rtcp"]
    avpf = unicast("avpf").tables["rtp"].set_index("flow").loc["s/a2/rtcp"]
    assert avp["fb_wanted"] > 30 and avp["fb_discarded"] == 0
    assert 2.0 < avp["mwt_s"] < 3.0
    assert avpf["mwt_s"] < 0.010
    assert avpf["mwt_s"] * 100 < avp["mwt_s"]
    assert avpf["fb_sent"] == avpf["fb_wanted"] - avpf["fb_discarded"]


def test_rtt_from_lsr_dlsr_and_loss_report_delay_at_the_sender():
    r = unicast("avpf").tables["rtp"].set_index("flow")
    # 2 x 10 ms propagation plus serialisation of the reports at 10 Mbit/s
    assert r.loc["s/a1/rtcp", "rtt_s"] == pytest.approx(0.020, abs=0.001)
    assert r.loc["s/a1/rtcp", "loss_reports"] > 30
    assert r.loc["s/a1/rtcp", "loss_report_delay_mean_s"] < 0.1
    avp = unicast("avp").tables["rtp"].set_index("flow")
    assert 2.0 < avp.loc["s/a1/rtcp", "loss_report_delay_mean_s"] < 3.0


def test_members_without_media_get_their_rtt_from_rfc3611_extended_reports():
    # a2 sends no media and no SRs: no report block carries an LSR for it.
    # With xr_rtt its RRs carry an RRTR that a1 answers in a DLRR block.
    def run(xr):
        sc = mediasim.Scenario("u", duration_s=60)
        sc.node("a1").node("a2").link("a1", "a2", rate_bps=10e6, delay_ms=10)
        sc.data["rtp_sessions"] = [{
            "name": "s", "transport": "unicast", "session_bw_bps": 200e3, "media_payload_bytes": 460,
            "members": [{"node": "a1", "media": True}, {"node": "a2", "xr_rtt": xr}],
        }]
        res = mediasim.run(sc, seed=1)
        assert_balanced(res)
        return res.tables["rtp"].set_index("flow")
    r = run(True)
    a1, a2 = r.loc["s/a1/rtcp"], r.loc["s/a2/rtcp"]
    assert a2["rtt_s"] == pytest.approx(0.020, abs=0.001)
    # Every regular report of a2 is an RR with an RRTR; a1 answers each
    # one it hears, save those a newer one replaced before its next report.
    assert a2["rrtr_sent"] == a2["regular_packets"] > 40
    assert 0.5 * a2["rrtr_sent"] < a1["dlrr_sent"] <= a2["rrtr_sent"]
    assert a1["rrtr_sent"] == 0 and a2["dlrr_sent"] == 0
    plain = run(False)
    assert math.isnan(plain.loc["s/a2/rtcp", "rtt_s"])
    assert (plain[["rrtr_sent", "dlrr_sent"]] == 0).all().all()
    # The XR's bytes are counted: 20 per RR with an RRTR (8 + 12), at
    # least 24 per answer (8 + 4 + 12).
    extra = r["rtcp_bytes"] / r["rtcp_packets"] - plain["rtcp_bytes"] / plain["rtcp_packets"]
    assert extra["s/a2/rtcp"] == pytest.approx(20, abs=1)
    assert extra["s/a1/rtcp"] > 0


def rtcp_timestamps(pcap_path, ip_src):
    """{IP ident: (capture time in ns, the send time an SR or an RRTR block
    says, in ns)} of the RTCP compounds from ``ip_src`` in a pcap file."""
    out = {}
    for ns, _, ip in pcap_records(pcap_path):
        if ip[12:16] != bytes(ip_src) or struct.unpack("!H", ip[22:24])[0] % 2 == 0:
            continue
        at, rtcp = 0, ip[28:]
        while at < len(rtcp):
            pt, words = rtcp[at + 1], struct.unpack("!H", rtcp[at + 2:at + 4])[0]
            ntp = None
            if pt == 200:
                ntp = struct.unpack("!Q", rtcp[at + 8:at + 16])[0]
            elif pt == 207 and rtcp[at + 8] == 4:  # an XR with an RRTR first
                ntp = struct.unpack("!Q", rtcp[at + 12:at + 20])[0]
            if ntp is not None:
                out[struct.unpack("!H", ip[4:6])[0]] = (ns, (ntp >> 32) * 10**9 + ((ntp & 0xFFFFFFFF) * 10**9 >> 32))
            at += 4 * (words + 1)
    return out


def test_an_sr_or_rrtr_in_pcap_says_when_it_was_sent_wherever_captured(tmp_path):
    # RFC 3550 6.4.1 and RFC 3611 4.4: the timestamp is the send time. The
    # sender's own link records the packet as it starts on the wire (a's
    # RTCP may wait there behind a media packet; b sends nothing else); a
    # link further on records it a hop later, with the same stamp.
    sc = mediasim.Scenario("x", duration_s=5)
    sc.node("a").node("r").node("b")
    sc.link("a", "r", rate_bps=100e6, delay_ms=5).link("r", "b", rate_bps=4e6, delay_ms=20)
    sc.rtp_session("v", [{"node": "a", "media": True}, {"node": "b", "xr_rtt": True}],
                   session_bw_bps=1e6, media_payload_bytes=1000, transport="unicast")
    mediasim.run(sc, seed=1, out=tmp_path, pcap=True)
    a_ip, b_ip = [10, 0, 0, 1], [10, 0, 0, 3]
    for src, own, further, hop_ns in ((a_ip, "a-r", "r-b", 5e6), (b_ip, "r-b", "a-r", 20e6)):
        at_src = rtcp_timestamps(tmp_path / "pcap" / f"{own}.pcap", src)
        later = rtcp_timestamps(tmp_path / "pcap" / f"{further}.pcap", src)
        assert len(at_src) > 5 and set(later) <= set(at_src)
        waits = [ns - stamp for ns, stamp in at_src.values()]
        # The NTP fraction is truncated: up to 1 ns early.
        assert all(0 <= w <= (1 if src == b_ip else 1e6) for w in waits), waits
        for ident, (ns, stamp) in later.items():
            assert stamp == at_src[ident][1] and ns - stamp > hop_ns


def test_in_a_group_every_member_answers_the_rrtrs_it_hears():
    sc = star()
    for m in sc.data["rtp_sessions"][0]["members"][1:]:
        m["xr_rtt"] = True
    res = mediasim.run(sc, seed=2)
    assert_balanced(res)
    r = res.tables["rtp"].set_index("flow")
    rx = r.drop(index="g/a1/rtcp")
    # Every round trip between two members crosses the hub: 2 x (5 + 5) ms.
    assert ((rx["rtt_s"] - 0.020).abs() < 0.001).all(), rx["rtt_s"]
    assert (rx["rrtr_sent"] > 20).all() and (r["dlrr_sent"] > 20).all()


def test_every_loss_is_reported_once_across_sequence_wraps():
    # 3,571 packets a second for 40 s: the 16-bit sequence wraps twice. A
    # loss whose number an earlier loss had is still a new loss; only the
    # last round trip's losses are not yet reported at the end.
    res = unicast("avpf", duration_s=40, loss=0.05, bw=4e6, payload=100)
    rtp = res.tables["rtp"].set_index("flow").loc["s/a1/rtcp"]
    media = res.tables["flows"].set_index("flow").loc["s/a1/rtp"]
    assert rtp["media_packets_sent"] > 2 * 65536
    assert media["lost"] > 7000
    assert 0 <= media["lost"] - rtp["loss_reports"] <= 5
    assert rtp["loss_reports_unplaced"] == 0
    assert rtp["loss_report_delay_mean_s"] == pytest.approx(0.023, abs=0.002)


def star(dither=None, members=("a2", "a3", "a4")):
    sc = mediasim.Scenario("m", duration_s=120).measure(packets=True)
    sc.node("a1")
    for m in members:
        sc.node(m)
    sc.node("hub")
    sc.link("a1", "hub", rate_bps=10e6, delay_ms=5, ab={"loss": {"type": "packet", "rate": 0.01}})
    for m in members:
        sc.link("hub", m, rate_bps=10e6, delay_ms=5)
    sess = {"name": "g", "session_bw_bps": 200e3, "media_payload_bytes": 460,
            "members": [{"node": "a1", "media": True}] + [{"node": m} for m in members]}
    if dither:
        sess["avpf"] = dither
    sc.data["rtp_sessions"] = [sess]
    return sc


def test_shared_losses_are_suppressed_in_multicast():
    res = mediasim.run(star(), seed=2)
    assert_balanced(res)
    rtp = res.tables["rtp"].set_index("flow")
    rx = rtp.drop(index="g/a1/rtcp")
    # every receiver sees the same losses (upstream of the hub)
    assert rx["fb_wanted"].nunique() == 1 and rx["fb_wanted"].iloc[0] > 30
    assert rx["fb_suppressed"].sum() > 0.4 * rx["fb_wanted"].sum()
    assert (rx["fb_sent"] + rx["fb_suppressed"] + rx["fb_discarded"] <= rx["fb_wanted"]).all()
    assert rtp["rtcp_share_pct"].sum() == pytest.approx(5.0, abs=0.3)


def test_rtcp_packets_reach_every_member_and_members_learn_the_group():
    res = mediasim.run(star(), seed=3)
    assert (res.tables["rtp"]["members"] == 4).all()
    # One pooled row per member's RTCP: its copies to the three others.
    f = res.flows[res.flows["kind"] == "rtcp"].set_index("flow")
    assert len(f) == 4 and (f["receiver"] == "*").all()
    assert (f["sent"] == 3 * res.tables["rtp"].set_index("flow")["rtcp_packets"]).all()
    assert (f["received"] + f["lost"] + f["in_flight"] == f["sent"]).all()
    # The packets table still names the receiver of every copy: the three
    # others, never the sender.
    p = res.packets[res.packets["flow"].isin(f.index)]
    assert len(p) == f["received"].sum()
    for name, g in p.groupby("flow", observed=True):
        counts = g["receiver"].value_counts()
        counts = counts[counts > 0]
        assert name.split("/")[1] not in set(counts.index) and len(counts) == 3
        assert counts.max() <= f.loc[name, "sent"] // 3


def test_rtp_session_validation():
    sc = star()
    sc.data["rtp_sessions"][0]["transport"] = "unicast"
    sc.data["rtp_sessions"][0]["avpf"] = {"retention_ms": 500}
    sc.data["rtp_sessions"][0]["members"].append({"node": "a2"})
    with pytest.raises(mediasim.ScenarioError) as e:
        sc.validate()
    msgs = dict(e.value.errors)
    assert "exactly two members" in msgs["rtp_sessions[0].members"]
    assert "already a member" in msgs["rtp_sessions[0].members[4].node"]
    assert "at least 2000 ms" in msgs["rtp_sessions[0].avpf.retention_ms"]


def unicast_dither(rule, loss=0.003):
    sc = mediasim.Scenario("u", duration_s=300)
    sc.node("a1").node("a2").link("a1", "a2", rate_bps=10e6, delay_ms=10, ab={"loss": {"type": "packet", "rate": loss}})
    sc.data["rtp_sessions"] = [{
        "name": "s", "transport": "unicast", "session_bw_bps": 200e3, "media_payload_bytes": 460,
        "avpf": {"point_to_point_dither": rule},
        "members": [{"node": "a1", "media": True}, {"node": "a2"}],
    }]
    return mediasim.run(sc, seed=1).tables["rtp"].set_index("flow")


def test_point_to_point_dither_zero_by_rfc_or_multiparty_as_the_study_did():
    # RFC 4585 3.5.2 2b: two members, T_dither_max = 0: every report of a
    # rare loss leaves the moment the loss is seen.
    rfc = unicast_dither("zero").loc["s/a2/rtcp"]
    assert rfc["fb_sent"] > 40 and rfc["mwt_s"] == 0.0
    assert rfc["early_packets"] == rfc["fb_sent"]
    # The multiparty rule: te uniform in [t0, t0 + 0.5 T_rr], or the Regular
    # packet if that comes first (step 3a), so the mean wait is at most
    # T_dither_max / 2 = T_rr / 4. T_rr averages Td (A.7 randomisation with
    # the e - 3/2 compensation keeps the mean at Td).
    r = unicast_dither("multiparty")
    multi = r.loc["s/a2/rtcp"]
    avg_size = r["rtcp_bytes"].sum() / r["rtcp_packets"].sum()
    td = avg_size * 2 / (0.05 * 200e3 / 8)  # 1 sender of 2 members: no 25/75 split
    assert multi["fb_sent"] > 40
    assert 0.15 * td < multi["mwt_s"] < 0.25 * td * 1.5 / (math.e - 1.5)


def test_step_join_of_ten_thousand_members_stays_near_the_rtcp_share():
    # RFC 3550 6.3.6: 10,000 members join at 0 s. Without timer
    # reconsideration each would send its first report within 1.5 s (AVPF
    # initial Tmin 1 s): 10,000 packets. With it, the session's RTCP in the
    # first 10 s stays within 3x its 5% share, the bound the unit-level
    # 500-member step join checks too (rtcp_timing tests).
    from mediasim.validation.bench import GROUP_BW_BPS, rtp_group

    res = mediasim.run(rtp_group(10_000, 10.0), seed=1)
    rt = res.tables["rtp"]
    packets = rt["rtcp_packets"].sum()
    avg_bytes = rt["rtcp_bytes"].sum() / packets
    share_packets = 0.05 * GROUP_BW_BPS / 8 / avg_bytes * 10.0
    assert share_packets < packets < 3 * share_packets, (packets, share_packets)
    # Every member still learned of the group's senders: the media sender
    # reached all 9,999 receivers.
    media = res.flows[res.flows["kind"] == "rtp"]
    assert len(media) == 9_999 and (media["received"] > 0).all()


def test_a_large_session_settles_at_five_percent_rtcp():
    # RFC 3550 6.2: once the members know the group (about one interval
    # Td, here 200 x ~80 B / 300 B/s = about 50 s) the session's RTCP
    # stays at 5% of the session bandwidth; the step join's first seconds
    # run above it.
    from mediasim.validation.rtcp_share import rtcp_share

    s = rtcp_share(200, 400.0)
    late = s[s["window_start_s"] >= 100]
    assert len(late) == 3 and ((late["rtcp_pct"] - 5.0).abs() <= 0.2).all(), s
    assert s["rtcp_pct"].iloc[0] > 5.5, s


def test_quiet_avpf_slots_run_late_give_the_per_slot_figures():
    """With T_rr_interval a member wakes once for a stretch of Regular
    slots that are certainly suppressed and runs them late, in order
    (RtcpScheduler::catch_up). The figures below are those of the same run
    with a timer event per slot, as the engine ran before: the counts of
    every kind of RTCP packet and slot, under losses that trigger Early
    feedback, come out the same."""
    from mediasim.validation import bench

    sc = bench.calls_rtp(4, 20.0)
    sc["links"][0]["rate_bps"] = 2.5e6  # 4 calls of 1 Mbit/s: losses
    for s in sc["rtp_sessions"]:
        s["avpf"]["trr_interval_ms"] = 300.0
    r = mediasim.run(sc, seed=2).tables["rtp"]
    assert list(r["regular_suppressed"]) == [776, 760, 768, 725, 748, 429, 768, 718]
    assert list(r["regular_packets"]) == [83, 83, 81, 85, 80, 220, 81, 81]
    assert list(r["early_packets"]) == [0, 4, 0, 48, 0, 199, 0, 55]
    assert list(r["fb_sent"]) == [0, 4, 0, 52, 0, 426, 0, 57]


def newpred_session(windows=None, duration_s=55.0):
    # 1,000 frames a second of 3 segments: the 16-bit sequence wraps every
    # 21.8 s, and 65,536 is not a multiple of 3.
    sc = mediasim.Scenario("np", duration_s=duration_s).measure(packets=True)
    sc.node("S").node("C")
    ab = {"loss": {"type": "explicit", "windows_s": windows}} if windows else {}
    sc.link("S", "C", rate_bps=100e6, delay_ms=10, ab=ab)
    sc.data["rtp_sessions"] = [{"name": "s", "transport": "unicast", "session_bw_bps": 2e6,
                                "media_payload_bytes": 80,
                                "newpred": {"frames_per_s": 1000, "segments_per_frame": 3},
                                "members": [{"node": "S", "media": True}, {"node": "C"}]}]
    return mediasim.run(sc, seed=3)


def test_newpred_feedback_groups_losses_by_frame_across_sequence_wraps():
    # Lose the last two segments of frame f and the first of f + 1, before
    # the first wrap, after it and after the second: each time two frames
    # have lost segments, so two feedback messages. Grouped by the 16-bit
    # number, after the first wrap the three would fall in one frame.
    base = newpred_session().packets
    recv = base[base.flow == "s/S/rtp"].sort_values("sent_ns").recv_ns.to_numpy()
    firsts = [3 * f + 1 for f in (10_000, 30_000, 50_000)]
    # Windows around the three packets' arrivals (6.6 us apart in a frame).
    windows = [[(recv[a] - 2000) / 1e9, (recv[a + 2] + 2000) / 1e9] for a in firsts]
    res = newpred_session(windows)
    dropped = res.drops[res.drops.flow == "s/S/rtp"]
    assert sorted(dropped.seq) == sorted(x % 65536 for a in firsts for x in range(a, a + 3))
    rx = res.tables["rtp"].set_index("flow").loc["s/C/rtcp"]
    assert (rx["fb_wanted"], rx["fb_sent"], rx["recoveries"]) == (6, 6, 9)
