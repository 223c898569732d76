"""Frame-based media through the Python package (docs/models/media.md):
today's RTP media and the frame path agree bit for bit; the playout
buffer's counts against a direct computation from the packet log; the
feedback's books against the flows table; voice quality; bad input named
at its field. The state machines' own tests (codec statistics, pacer,
playout, E-model, wire formats) are in the engine's unit tests."""

import math

import numpy as np
import pandas as pd
import pytest

import mediasim
from conftest import assert_balanced, pcap_records
from mediasim.errors import ScenarioError
from mediasim.experiments import quality


def call(duration_s=12.0, rate_bps=2e6, limit=30, cross_bps=0.0, loss=None, jitter=None, **sender):
    """alice -> router -> bob, a unicast RTP session from alice; bob's
    member fields in ``sender.pop("receiver", {})``; ``loss``: the loss
    model on the way to bob; ``jitter``: the router-bob link's."""
    receiver = sender.pop("receiver", {})
    sc = mediasim.Scenario("call", duration_s=duration_s)
    sc.measure(packets=True, series=True)
    for n in ("alice", "router", "bob"):
        sc.node(n)
    sc.link("alice", "router", rate_bps=100e6, delay_ms=5)
    sc.link("router", "bob", rate_bps=rate_bps, delay_ms=20,
            queue={"type": "droptail", "limit_packets": limit}, **({"ab": {"loss": loss}} if loss else {}),
            **({"jitter": jitter} if jitter else {}))
    if cross_bps:
        sc.flow("cross", "poisson", src="alice", dst="bob", payload_bytes=972, rate_bps=cross_bps,
                start_s=3, stop_s=8)
    stop = sender.pop("stop_s", None)
    fields = {"transport": "unicast"}
    if stop is not None:
        fields["stop_s"] = stop
    sc.rtp_session("v", [{"node": "alice", "media": True, **sender}, {"node": "bob", **receiver}],
                   session_bw_bps=1.5e6, media_payload_bytes=1000, **fields)
    return sc


def test_the_constant_source_is_todays_media_bit_for_bit():
    plain = mediasim.run(call())
    framed = mediasim.run(call(source={"type": "constant"}))
    for name in ("flows", "packets", "drops", "links", "queues", "rtp"):
        pd.testing.assert_frame_equal(plain.tables[name], framed.tables[name], check_exact=True)
    assert len(plain.tables["media"]) == 0
    m = framed.tables["media"].iloc[0]
    assert m["frames_sent"] == framed.rtp.set_index("flow").loc["v/alice/rtcp", "media_packets_sent"]


def frames_from_the_logs(res, max_packet_bytes=1200, overhead=40):
    """Each frame's capture time and its packets' sequence numbers, from the
    frame_bytes series and the packetiser's rule alone."""
    s = res.tables["media_series"]
    fb = s[s["var"].astype(str) == "frame_bytes"].sort_values("time_ns")
    payload = max_packet_bytes - overhead
    first = 0
    out = []
    for t, b in zip(fb["time_ns"].to_numpy(), fb["value"].to_numpy()):
        n = max(1, math.ceil(b / payload))
        out.append((int(t), range(first, first + n)))
        first += n
    return out


@pytest.mark.parametrize("pacer", [None, {"factor": 1.5, "burst_ms": 2}])
def test_late_and_lost_frames_equal_a_direct_computation_from_the_packet_log(pacer):
    delay_ms = 75.0
    sender = {"source": {"type": "synthetic", "fps": 30, "interval_noise": 0.01}, "stop_s": 9.0,
              "receiver": {"playout": {"delay_ms": delay_ms}}}
    if pacer:
        sender["pacer"] = pacer
    res = mediasim.run(call(cross_bps=0.8e6, **sender), seed=3)
    assert_balanced(res)
    pk = res.packets[res.packets["flow"].astype(str) == "v/alice/rtp"]
    recv = dict(zip(pk["seq"].to_numpy(), pk["recv_ns"].to_numpy()))
    dropped = set(res.drops[res.drops["flow"].astype(str) == "v/alice/rtp"]["seq"].to_numpy())
    played = late = lost = 0
    not_played = []
    for capture, seqs in frames_from_the_logs(res):
        if any(s in dropped or s not in recv for s in seqs):
            lost += 1
            not_played.append(True)
        elif max(recv[s] for s in seqs) > capture + delay_ms * 1e6:
            late += 1
            not_played.append(True)
        else:
            played += 1
            not_played.append(False)
    m = res.tables["media"].iloc[0]
    assert (m["frames_played"], m["frames_late"], m["frames_lost"]) == (played, late, lost)
    assert late > 10 and lost > 0 and played > 100  # the cross traffic made both happen
    assert played + late + lost == m["frames_sent"]
    # The IW10 study's loss-period levels, by the study's own code.
    levels = quality.run_lengths_to_levels(np.array(not_played))
    assert [m[f"frames_level_{k}"] for k in range(6)] == [int((levels == k).sum()) for k in range(6)]
    assert m["good_quality_pct"] == pytest.approx(100 * np.isin(levels, (0, 1)).mean())


def test_reference_decoding_and_key_frame_requests_equal_a_direct_computation():
    """Decoding by reference (docs/models/media.md): from the packet log
    and the frame sizes alone, each frame played, late, lost, or, after a
    lost frame and before the next key frame, undecodable; every PLI the
    receiver sent reaches the sender, which answers with key frames (told
    apart here by their size) at most every 300 ms."""
    delay_ms, i_bytes = 75.0, 12345
    sender = {"source": {"type": "synthetic", "fps": 30, "interval_noise": 0.01,
                         "size_noise": 1e-9, "i_frame_bytes": i_bytes},
              "stop_s": 9.0,
              "receiver": {"playout": {"delay_ms": delay_ms, "decode": "reference"}}}
    res = mediasim.run(call(cross_bps=0.8e6, **sender), seed=3)
    assert_balanced(res)
    pk = res.packets[res.packets["flow"].astype(str) == "v/alice/rtp"]
    recv = dict(zip(pk["seq"].to_numpy(), pk["recv_ns"].to_numpy()))
    dropped = set(res.drops[res.drops["flow"].astype(str) == "v/alice/rtp"]["seq"].to_numpy())
    s = res.tables["media_series"]
    sizes = s[s["var"].astype(str) == "frame_bytes"].sort_values("time_ns")["value"].to_numpy()
    counts = dict.fromkeys(("played", "late", "lost", "undecodable"), 0)
    chain, runs, run = False, [], 0
    for (capture, seqs), size in zip(frames_from_the_logs(res), sizes):
        key = size in (i_bytes - 1, i_bytes)
        if any(q in dropped or q not in recv for q in seqs):
            outcome, chain = "lost", False
        elif not (key or chain):
            outcome = "undecodable"
        else:
            chain = True
            outcome = "late" if max(recv[q] for q in seqs) > capture + delay_ms * 1e6 else "played"
        counts[outcome] += 1
        if outcome == "undecodable":
            run += 1
        elif run:
            runs, run = runs + [run], 0
    m = res.tables["media"].iloc[0]
    assert {k: m[f"frames_{k}"] for k in counts} == counts
    assert counts["lost"] > 5 and counts["undecodable"] > 5
    # A loss is seen at the next frame's first packet; the PLI, the key
    # frame captured after it and its packets take about two frame
    # intervals and a round trip (50 ms): a few frames, never many.
    assert 1 < np.mean(runs) < 6 and max(runs) < 12, runs
    keys = int(np.isin(sizes, (i_bytes - 1, i_bytes)).sum())
    assert m["key_frames"] == keys == 1 + m["key_frames_on_request"]
    # The reverse path loses nothing: every request arrives.
    assert m["pli_received"] == m["key_frame_requests"] >= m["key_frames_on_request"] > 0
    # A PLI is an RTCP packet of its own, beside the compounds, on bob's
    # RTCP flow.
    def rtcp_books(r):
        bob = r.rtp.set_index("flow").loc["v/bob/rtcp"]
        sent = r.flows.set_index("flow").loc["v/bob/rtcp", "sent"]
        return bob["rtcp_packets"] - bob["early_packets"] - bob["regular_packets"], sent - bob["rtcp_packets"]
    assert rtcp_books(res) == (m["key_frame_requests"], 0)
    independent = mediasim.run(call(cross_bps=0.8e6, **{**sender, "receiver": {"playout": {"delay_ms": delay_ms}}}),
                               seed=3)
    i = independent.tables["media"].iloc[0]
    assert (i["frames_undecodable"], i["key_frame_requests"], i["pli_received"]) == (0, 0, 0)
    assert rtcp_books(independent) == (0, 0)


def key_wait_requests(decoded, arrivals, key_arrivals, wait_ns, stop_ns):
    """When libwebrtc's rule asks for key frames (max_wait_for_frame
    ``wait_ns``), from (completion, decoded time) of each frame decoded, in
    order, and the arrival times of the stream's packets and of key-frame
    packets: the wait runs out ``wait_ns`` after the later of the last
    decoded time and the last time it ran out, and asks if a packet came
    within 5 s and no key-frame packet within 200 ms. Also the times it
    ran out with nothing for 5 s."""
    asked, idle, i, last, ran_out = [], [], 1, decoded[0][1], None
    while True:
        due = max(last, ran_out or last) + wait_ns
        if i < len(decoded) and decoded[i][0] < due:
            last, i = max(last, decoded[i][1]), i + 1
            continue
        if due >= stop_ns:
            return asked, idle
        ran_out = due
        active = arrivals[np.searchsorted(arrivals, due, side="right") - 1] > due - 5_000_000_000
        coming = np.any((key_arrivals <= due) & (key_arrivals > due - 200_000_000))
        if active and not coming:
            asked.append(due)
        idle += [] if active else [due]


def what_the_receiver_had(res, i_bytes, delay_ms):
    """From the packet log and the frame sizes alone (key frames are the
    ``i_bytes`` ones): (completion, decoded time) of each frame decoded by
    reference, in order (shown at capture + ``delay_ms``, or late when it
    completed); the arrival times of the stream's packets and of key-frame
    packets; the completion times of the complete frames with whether each
    is a key frame."""
    pk = res.packets[res.packets["flow"].astype(str) == "v/alice/rtp"]
    recv = dict(zip(pk["seq"].to_numpy(), pk["recv_ns"].to_numpy()))
    s = res.tables["media_series"]
    sizes = s[s["var"].astype(str) == "frame_bytes"].sort_values("time_ns")["value"].to_numpy()
    chain, decoded, keys, complete = False, [], [], []
    for (capture, seqs), size in zip(frames_from_the_logs(res), sizes):
        key = size in (i_bytes - 1, i_bytes)
        keys += [recv[q] for q in seqs if key and q in recv]
        if any(q not in recv for q in seqs):
            chain = False
            continue
        done = max(recv[q] for q in seqs)
        complete.append((done, key))
        if key or chain:
            chain = True
            decoded.append((done, max(done, capture + int(delay_ms * 1e6))))
    arrivals = np.sort(pk["recv_ns"].dropna().to_numpy())
    return decoded, arrivals, np.sort(np.array(keys)), sorted(complete)


def plis_sent(res):
    """When bob sent a PLI (a 40-byte RTCP packet alone), delivered or
    dropped."""
    sent = res.packets[(res.packets["flow"].astype(str) == "v/bob/rtcp") & (res.packets["size_bytes"] == 40)]
    d = res.tables["drops"]
    dropped = d[(d["flow"].astype(str) == "v/bob/rtcp") & (d["size_bytes"] == 40)]
    return np.sort(np.concatenate([sent["sent_ns"].to_numpy(), dropped["time_ns"].to_numpy()])).tolist()


def test_a_key_frame_wait_asks_when_no_frame_was_decoded_for_that_long():
    """``key_frame_wait_ms`` (libwebrtc's max_wait_for_frame, 3 s): from the
    packet log and the frame sizes alone, the PLIs (bob's 40-byte RTCP
    packets) go out exactly when libwebrtc's timer would ask
    (``key_wait_requests``): 3 s after the last frame decoded (shown, or
    late when it completed) or the last time the wait ran out, in a 7 s
    outage too (one request 3 s in, none while nothing came for 5 s, one
    after the packets came back but not at their return). A loss then
    freezes the picture for more than the wait, where asking at once ends
    each run of undecodable frames in a few."""
    delay_ms, i_bytes, wait_ms, stop_s = 75.0, 12345, 3000.0, 39.0
    source = {"type": "synthetic", "fps": 30, "interval_noise": 0.01, "size_noise": 1e-9, "i_frame_bytes": i_bytes}
    def run(wait):
        playout = {"delay_ms": delay_ms, "decode": "reference", **({"key_frame_wait_ms": wait} if wait else {})}
        sc = call(duration_s=40.0, loss={"type": "packet", "rate": 0.002}, source=source, stop_s=stop_s,
                  receiver={"playout": playout})
        sc.data["links"][-1]["ab"]["outages"] = {"down_s": [[20.0, 28.5]], "queued": "drop"}
        res = mediasim.run(sc, seed=4)
        assert_balanced(res)
        return res
    res = run(wait_ms)
    decoded, arrivals, keys, _ = what_the_receiver_had(res, i_bytes, delay_ms)
    plis = plis_sent(res)
    m = res.tables["media"].iloc[0]
    assert len(plis) == m["key_frame_requests"] == m["pli_received"] >= 4
    expected, idle = key_wait_requests(decoded, arrivals, keys, int(wait_ms * 1e6), int(stop_s * 1e9))
    assert plis == expected
    # The outage (20-28.5 s): a request with nothing arriving for a second
    # before it, the wait running out with nothing for 5 s (no request),
    # and a request after the packets came back, not at their return.
    back = arrivals[np.searchsorted(arrivals, 28.5e9)]
    assert any(20e9 < t < 25e9 and not np.any((arrivals > t - 1e9) & (arrivals <= t)) for t in expected)
    assert any(25e9 < t < 28.5e9 for t in idle)
    assert back + 1e9 < min(t for t in expected if t >= back) < back + wait_ms * 1e6
    assert m["freezes"] > 0 and m["freeze_total_s"] / m["freezes"] > wait_ms / 1e3
    at_once = run(None).tables["media"].iloc[0]
    assert at_once["frames_undecodable"] * 5 < m["frames_undecodable"]
    assert at_once["key_frame_requests"] > m["key_frame_requests"]


def test_before_the_first_decoded_frame_the_key_frame_wait_asks_every_200_ms():
    """Before its first decoded frame a receiver with ``key_frame_wait_ms``
    asks as libwebrtc's does while a key frame is required: at once if the
    first frame to complete is not a key frame (RtpVideoStreamReceiver2's
    OnAssembledFrame), then when its timer runs out every 200 ms
    (max_wait_for_keyframe) from the session's start (0.1 s), unless a
    key-frame packet came within 200 ms; never at a loss. Both paths are
    down for the first second (bob's PLIs until 1.4 s), so the first key frame is
    lost and the first frames to come are delta frames. From the packet
    log and the frame sizes alone, every PLI bob sends (dropped or not) is
    one of those, or one of the 3 s wait's once a frame is decoded."""
    delay_ms, i_bytes, wait_ms, stop_s, retry_ns, start_s = 75.0, 12345, 3000.0, 7.0, 200_000_000, 0.1
    source = {"type": "synthetic", "fps": 30, "interval_noise": 0.01, "size_noise": 1e-9, "i_frame_bytes": i_bytes}
    playout = {"delay_ms": delay_ms, "decode": "reference", "key_frame_wait_ms": wait_ms}
    sc = call(duration_s=8.0, loss={"type": "packet", "rate": 0.002}, source=source, stop_s=stop_s,
              receiver={"playout": playout})
    sc.data["rtp_sessions"][0]["start_s"] = start_s
    link = sc.data["links"][-1]
    link["ab"]["outages"] = {"down_s": [[0.0, 1.0]], "queued": "drop"}
    link["ba"] = {"outages": {"down_s": [[0.0, 1.4]], "queued": "drop"}}
    res = mediasim.run(sc, seed=4)
    assert_balanced(res)
    decoded, arrivals, keys, complete = what_the_receiver_had(res, i_bytes, delay_ms)
    first_done, first_is_key = complete[0]
    decoded_at = decoded[0][0]
    at_once = [] if first_is_key else [first_done]
    grid = range(int(start_s * 1e9) + retry_ns, decoded_at, retry_ns)
    timer = [g for g in grid if arrivals[0] < g
             and arrivals[np.searchsorted(arrivals, g, side="right") - 1] > g - 5_000_000_000
             and not np.any((keys <= g) & (keys > g - retry_ns))]
    after, _ = key_wait_requests(decoded, arrivals, keys, int(wait_ms * 1e6), int(stop_s * 1e9))
    plis = plis_sent(res)
    assert plis == sorted(at_once + timer) + after
    m = res.tables["media"].iloc[0]
    assert m["key_frame_requests"] == len(plis)
    # The first frame to come is a delta frame: a request at once, and the
    # timer's at 1.1 and 1.3 s (dropped) before one gets through at 1.5 s.
    assert not first_is_key and 1.0e9 < first_done < 1.1e9
    assert plis[:4] == [first_done, 1.1e9, 1.3e9, 1.5e9]
    assert m["pli_received"] == len(plis) - 3 and decoded_at > 1.5e9


def rtp_on_wire(pcap_path):
    """(time in ns, IP packet bytes, RTP packet) of each RTP packet to port
    5004 in a pcap file."""
    import struct

    for ns, size, buf in pcap_records(pcap_path):
        udp = buf[20:]
        if len(udp) >= 8 + 14 and struct.unpack("!H", udp[2:4])[0] == 5004:
            yield ns, size, udp[8:]


def rtx_osns(pcap_path, rtx_ssrc):
    """{retransmission's RTP sequence number: its OSN}, read off the wire:
    RTP packets of SSRC ``rtx_ssrc`` with payload type 97, the OSN the
    payload's first two bytes (RFC 4588 4)."""
    import struct

    out = {}
    for _, _, rtp in rtp_on_wire(pcap_path):
        pt, seq, ssrc = rtp[1] & 0x7F, struct.unpack("!H", rtp[2:4])[0], struct.unpack("!I", rtp[8:12])[0]
        if ssrc == rtx_ssrc:
            assert pt == 97
            at = 12 + (4 + 4 * struct.unpack("!H", rtp[14:16])[0] if rtp[0] & 0x10 else 0)
            out[seq] = struct.unpack("!H", rtp[at:at + 2])[0]
    return out


def test_a_trace_answers_key_frame_requests_with_its_mean_key_frame():
    """A frame trace (one GOP of 30 frames: key frames of 8000 and 10000
    bytes, 3000-byte delta frames, played as listed) decoding by reference
    at 1% packet loss: with ``key_on_request`` each answered request
    puts a 9000-byte key frame (the mean) in place of a listed delta
    frame, and a lost frame spoils fewer frames than when the receiver
    must wait for the trace's own key frames."""
    gop = [8000] + [3000] * 14 + [10000] + [3000] * 14
    def run(on_request):
        source = {"type": "trace", "fps": 30, "frames_bytes": gop, "key_frames": [0, 15],
                  "follow_target": False, "key_on_request": on_request}
        sc = call(loss={"type": "packet", "rate": 0.01}, source=source, stop_s=9.0,
                  receiver={"playout": {"delay_ms": 75.0, "decode": "reference"}})
        res = mediasim.run(sc, seed=3)
        assert_balanced(res)
        s = res.tables["media_series"]
        sizes = s[s["var"].astype(str) == "frame_bytes"].sort_values("time_ns")["value"].to_numpy()
        return res.tables["media"].iloc[0], sizes
    m, sizes = run(True)
    listed = np.resize(np.array(gop), len(sizes))
    answered = sizes != listed
    # A request the trace's own key frame came to answer is counted too.
    assert m["key_frames_on_request"] - (listed != 3000).sum() <= answered.sum() <= m["key_frames_on_request"]
    assert answered.sum() > 3
    assert set(sizes[answered]) == {9000} and set(listed[answered]) == {3000}
    assert m["key_frames"] == (listed != 3000).sum() + answered.sum()
    ignored, ignored_sizes = run(False)
    assert ignored["key_frames_on_request"] == 0 and (ignored_sizes == listed).all()
    assert ignored["pli_received"] > 0
    assert m["frames_undecodable"] < 0.5 * ignored["frames_undecodable"]


def frame_fates(res, arrived, delay_ms):
    """Frames played, late and lost with a fixed ``delay_ms``, each complete
    at the last of its packets' arrivals (``arrived``: time by sequence
    number), lost if one never arrived."""
    played = late = lost = 0
    for capture, seqs in frames_from_the_logs(res):
        if any(s not in arrived for s in seqs):
            lost += 1
        elif max(arrived[s] for s in seqs) > capture + delay_ms * 1e6:
            late += 1
        else:
            played += 1
    return played, late, lost


def test_retransmissions_equal_a_direct_computation_from_the_wire_and_the_packet_log(tmp_path):
    """NACK and RFC 4588 retransmission (docs/models/media.md): from the
    pcap (which packet each retransmission repeats) and the packet log
    alone, a frame completes when its last packet arrives, original or
    first retransmission; its played, late and lost counts equal the
    engine's. Every retransmission repeats a packet lost on the way;
    every one that arrives is taken in once, the rest are duplicates."""
    delay_ms = 150.0
    sender = {"source": {"type": "synthetic", "fps": 30, "interval_noise": 0.01}, "stop_s": 9.0, "pacer": {},
              "receiver": {"playout": {"delay_ms": delay_ms, "nack": True}}}
    loss = {"type": "packet", "rate": 0.1}
    res = mediasim.run(call(loss=loss, **sender), seed=3, out=tmp_path, pcap=True)
    assert_balanced(res)
    m = res.tables["media"].iloc[0]
    f = res.flows.set_index("flow")
    flow = res.packets["flow"].astype(str)
    media = res.packets[flow == "v/alice/rtp"]
    recv = dict(zip(media["seq"].to_numpy(), media["recv_ns"].to_numpy()))
    dropped = set(res.drops[res.drops["flow"].astype(str) == "v/alice/rtp"]["seq"].to_numpy())
    rtx = res.packets[flow == "v/alice/rtx"].sort_values("recv_ns")
    osn = rtx_osns(tmp_path / "pcap" / "alice-router.pcap", 1001 + 500)
    assert len(osn) == m["rtx_packets"] == f.loc["v/alice/rtx", "sent"] > 10
    # Only lost packets are repeated, and every loss before the last
    # arrival is repeated at least once (the reverse path loses nothing).
    assert set(osn.values()) <= dropped
    assert set(osn.values()) == {s for s in dropped if s < max(recv)}
    # The first copy of each to arrive is taken in.
    for seq, at in zip(rtx["seq"].to_numpy(), rtx["recv_ns"].to_numpy()):
        recv.setdefault(osn[seq], at)
    taken = len({osn[q] for q in rtx["seq"].to_numpy()})
    assert (m["packets_recovered"], m["rtx_duplicates"]) == (taken, len(rtx) - taken)
    assert m["packets_given_up"] == m["rtx_rate_limited"] == m["nack_spurious"] == 0
    assert m["nack_received"] == m["nack_sent"] > 0
    played, late, lost = frame_fates(res, recv, delay_ms)
    assert (m["frames_played"], m["frames_late"], m["frames_lost"]) == (played, late, lost)
    # Retransmissions were lost too, and asked for again.
    assert f.loc["v/alice/rtx", "lost"] > 0 and m["nack_requests"] > taken
    # NACKs are RTCP packets of their own on bob's RTCP flow, each naming
    # one or more packets; the books balance.
    bob = res.rtp.set_index("flow").loc["v/bob/rtcp"]
    assert bob["rtcp_packets"] - bob["early_packets"] - bob["regular_packets"] == m["nack_sent"]
    assert f.loc["v/bob/rtcp", "sent"] == bob["rtcp_packets"]
    assert m["nack_requests"] >= m["packets_recovered"] + m["packets_given_up"]
    # Each retransmission is its original's size and the 2-byte OSN.
    sizes = dict(zip(media["seq"].to_numpy(), media["size_bytes"].to_numpy()))
    drops = res.drops[res.drops["flow"].astype(str) == "v/alice/rtp"]
    sizes.update(zip(drops["seq"].to_numpy(), drops["size_bytes"].to_numpy()))
    for seq, size in zip(rtx["seq"].to_numpy(), rtx["size_bytes"].to_numpy()):
        assert size == sizes[osn[seq]] + 2
    without = mediasim.run(call(loss=loss, **{**sender, "receiver": {"playout": {"delay_ms": delay_ms}}}), seed=3)
    w = without.tables["media"].iloc[0]
    assert w["rtx_packets"] == w["nack_sent"] == 0
    assert lost <= 2 and late > 0 and w["frames_lost"] > 50 * max(lost, 1)
    assert "v/alice/rtx" not in set(without.flows["flow"].astype(str))


def test_on_a_path_that_reorders_each_packet_counts_once(tmp_path):
    """A path that reorders (jitter with ``reorder``, RFC 8867's 8 ms
    sigma at 4 Mbit/s, and 2% loss): a gap is asked for at once, as
    libwebrtc does, and the request ends when the original comes after
    all. From the pcap and the packet log alone: an original behind a
    newer one, its retransmission not yet in, is a spurious request; a
    retransmission that comes first is the recovery, the original after
    it a copy; each frame completes at its packets' first arrivals."""
    delay_ms = 150.0
    sender = {"source": {"type": "synthetic", "fps": 30}, "stop_s": 9.0, "pacer": {},
              "receiver": {"playout": {"delay_ms": delay_ms, "nack": True}}}
    res = mediasim.run(call(rate_bps=4e6, loss={"type": "packet", "rate": 0.02},
                            jitter={"std_ms": 8.0, "reorder": True}, **sender), seed=3, out=tmp_path, pcap=True)
    assert_balanced(res)
    m = res.tables["media"].iloc[0]
    flow = res.packets["flow"].astype(str)
    media = res.packets[flow == "v/alice/rtp"].sort_values("recv_ns")
    original = dict(zip(media["seq"].to_numpy(), media["recv_ns"].to_numpy()))
    rtx = res.packets[flow == "v/alice/rtx"].sort_values("recv_ns")
    osn = rtx_osns(tmp_path / "pcap" / "alice-router.pcap", 1001 + 500)
    first_rtx: dict[int, int] = {}
    for seq, at in zip(rtx["seq"].to_numpy(), rtx["recv_ns"].to_numpy()):
        first_rtx.setdefault(osn[seq], at)
    # Behind a newer one, and past the first to arrive (the numbers before
    # it were never missed).
    seqs = media["seq"].to_numpy()
    newest, behind = seqs[0], []
    for seq in seqs[1:]:
        if seqs[0] < seq < newest:
            behind.append(seq)
        newest = max(newest, seq)
    recovered = {s for s, at in first_rtx.items() if at < original.get(s, math.inf)}
    spurious = [s for s in behind if s not in recovered]
    assert len(behind) > 100 and len(spurious) > 100  # the path reorders a lot
    assert m["packets_given_up"] == m["rtx_rate_limited"] == 0
    assert (m["nack_spurious"], m["packets_recovered"]) == (len(spurious), len(recovered))
    assert m["rtx_duplicates"] == len(rtx) - len(recovered)
    assert m["nack_requests"] >= m["packets_recovered"] + m["nack_spurious"]
    arrived = {s: min(original.get(s, math.inf), first_rtx.get(s, math.inf)) for s in set(original) | set(first_rtx)}
    assert (m["frames_played"], m["frames_late"], m["frames_lost"]) == frame_fates(res, arrived, delay_ms)


def test_reference_decoding_on_a_path_that_reorders_asks_only_for_frames_lost():
    """Without loss, a path that reorders breaks no chain. A gap is taken
    for a loss (a key frame asked for) only until the first packet comes
    out of order; from then on only a frame declared lost asks."""
    sender = {"source": {"type": "synthetic", "fps": 30}, "stop_s": 9.0, "pacer": {},
              "receiver": {"playout": {"delay_ms": 150.0, "decode": "reference"}}}
    res = mediasim.run(call(rate_bps=4e6, jitter={"std_ms": 8.0, "reorder": True}, **sender), seed=3)
    assert_balanced(res)
    m = res.tables["media"].iloc[0]
    assert m["frames_played"] == m["frames_sent"] > 250
    assert m["frames_lost"] == m["frames_undecodable"] == 0
    assert m["key_frame_requests"] <= 1  # at most before the first packet out of order


def test_recovered_frames_can_be_left_out_of_the_adaptive_delay():
    """With an adaptive delay and NACK at 10% loss, a recovered frame took
    a round trip more. Counted (the default), those delays raise the
    playout delay; left out (skip_recovered), the delay is lower and more
    frames are late. The option changes the viewer only: every packet
    goes as before."""
    def run(skip):
        sc = call(loss={"type": "packet", "rate": 0.1}, source={"type": "synthetic", "fps": 30}, pacer={},
                  receiver={"playout": {"adaptive": True, "nack": True, "skip_recovered": skip}})
        res = mediasim.run(sc, seed=3)
        assert_balanced(res)
        return res
    counted, skipped = run(False), run(True)
    pd.testing.assert_frame_equal(counted.flows, skipped.flows, check_exact=True)
    a, b = counted.tables["media"].iloc[0], skipped.tables["media"].iloc[0]
    assert a["packets_recovered"] == b["packets_recovered"] > 50
    assert b["playout_delay_mean_ms"] < 0.8 * a["playout_delay_mean_ms"]
    assert b["frames_late"] > a["frames_late"] + 20
    total = ["frames_played", "frames_late", "frames_lost"]
    assert a[total].sum() == b[total].sum()


@pytest.mark.parametrize("decode_ms", [0.0, 5.0])
def test_libwebrtcs_timing_plays_a_steady_path_at_its_delay_plus_the_target(decode_ms):
    """libwebrtc's video timing (``estimator = "webrtc"``) on a path with
    no cross traffic: every frame takes the same time, so the jitter
    estimate is its floor, 1 ms of noise and 10 ms of OS jitter, and a
    frame plays at its completion plus that, the decode time and 10 ms of
    render delay (docs/models/media.md). Only the first frame, due on
    arrival before the fit has a frame, is late."""
    sc = call(source={"type": "constant"}, stop_s=9.0,
              receiver={"playout": {"adaptive": True, "estimator": "webrtc", "decode_ms": decode_ms}})
    res = mediasim.run(sc)
    assert_balanced(res)
    m = res.tables["media"].iloc[0]
    assert (m["frames_late"], m["frames_lost"]) == (1, 0) and m["frames_played"] > 200
    assert m["frame_delay_max_ms"] - m["frame_delay_mean_ms"] < 1.0  # a steady path
    gap = m["playout_delay_mean_ms"] - m["frame_delay_mean_ms"]
    assert gap == pytest.approx(21.0 + decode_ms, abs=0.5)


def test_libwebrtcs_timing_changes_the_viewer_only():
    """The estimator is the receiver's: with cross traffic every packet
    goes as with the quantile estimator, and the frames are the same,
    played, late or lost. libwebrtc's target stays under the path's worst
    delay variation (it accepts a 1% chance of a 30 ms late frame), so on
    this path some frames are late."""
    def run(estimator):
        sc = call(cross_bps=0.8e6, source={"type": "synthetic", "fps": 30}, stop_s=9.0,
                  receiver={"playout": {"adaptive": True, "estimator": estimator}})
        res = mediasim.run(sc, seed=3)
        assert_balanced(res)
        return res
    quantile, webrtc = run("quantile"), run("webrtc")
    pd.testing.assert_frame_equal(quantile.flows, webrtc.flows, check_exact=True)
    a, b = quantile.tables["media"].iloc[0], webrtc.tables["media"].iloc[0]
    total = ["frames_played", "frames_late", "frames_lost"]
    assert a[total].sum() == b[total].sum() and a["frames_lost"] == b["frames_lost"]
    assert b["frames_late"] > 1 and b["playout_delay_mean_ms"] != a["playout_delay_mean_ms"]


@pytest.mark.parametrize("down_s,wait_ms", [(5.0, None), (8.5, None), (8.5, 3000.0)])
def test_a_gap_too_long_for_the_retransmission_list_asks_for_a_key_frame(down_s, wait_ms):
    """libwebrtc's NACK list holds at most 1000 packets: a gap that would
    take it past that clears it and asks for a key frame instead of the
    packets. An outage of the path to bob drops about 150 packets a
    second: after 5 s every one of them is asked for; after 8.5 s none is,
    and bob sends a PLI at the first packet after the outage. With
    ``key_frame_wait_ms`` that PLI can only be the full list's (the wait's
    timer asks at 3 s after the last decoded frame, and nothing while the
    stream has been silent for 5 s)."""
    playout = {"delay_ms": 100.0, "decode": "reference", "nack": True,
               **({"key_frame_wait_ms": wait_ms} if wait_ms else {})}
    sc = call(duration_s=16.0, source={"type": "synthetic", "fps": 30}, stop_s=15.0, receiver={"playout": playout})
    sc.data["links"][-1]["ab"] = {"outages": {"down_s": [[4.0, 4.0 + down_s]], "queued": "drop"}}
    res = mediasim.run(sc, seed=2)
    assert_balanced(res)
    m = res.tables["media"].iloc[0]
    pk = res.packets[res.packets["flow"].astype(str) == "v/alice/rtp"].dropna(subset=["recv_ns"])
    pk = pk.sort_values("recv_ns")
    back = pk[pk["recv_ns"] > (4.0 + down_s) * 1e9].iloc[0]
    before = pk[pk["recv_ns"] < 4.0e9]["seq"].max()
    gap = int(back["seq"]) - int(before) - 1
    plis = plis_sent(res)
    assert int(back["recv_ns"]) in plis
    if gap <= 1000:
        assert gap > 700 and m["nack_requests"] >= gap and m["rtx_packets"] > 0
    elif wait_ms:
        assert gap < 1500 and m["nack_requests"] == m["rtx_packets"] == m["packets_given_up"] == 0
        # The wait's one request in the outage: 3 s after the last frame
        # decoded, shown within 200 ms of the outage's start.
        earlier = [t for t in plis if t < back["recv_ns"]]
        assert len(earlier) == 1 and 3.9e9 + wait_ms * 1e6 < earlier[0] < 4.2e9 + wait_ms * 1e6
    else:
        assert gap < 1500 and m["nack_requests"] == m["rtx_packets"] == m["packets_given_up"] == 0
        assert plis == [int(back["recv_ns"])] and m["key_frame_requests"] == m["pli_received"] == 1
        assert m["key_frames_on_request"] == 1


def nacks_on_wire(pcap_path):
    """(time in ns, sequence numbers) of each Generic NACK (RTCP PT 205,
    FMT 1: RFC 4585 6.2.1) in a pcap file, each FCI entry's PID and BLP
    unpacked."""
    import struct

    for ns, _, buf in pcap_records(pcap_path):
        rtcp = buf[28:]
        if len(rtcp) >= 16 and rtcp[1] == 205 and rtcp[0] & 0x1F == 1:
            words, seqs = struct.unpack("!H", rtcp[2:4])[0], []
            for at in range(12, 4 + 4 * words, 4):
                pid, blp = struct.unpack("!HH", rtcp[at:at + 4])
                seqs += [pid] + [pid + i + 1 for i in range(16) if blp >> i & 1]
            yield ns, seqs


def test_a_complete_key_frame_ends_the_requests_for_older_packets(tmp_path):
    """libwebrtc's NackRequester::ClearUpTo: with reference decoding, once
    a key frame is complete the packets before it are no longer asked
    for. At 20% loss on the way to bob, retransmissions are lost too and
    bob asks for key frames. From the pcap and the packet log alone (a
    frame completes when the first copy of its last missing packet
    arrives): no NACK names a packet at or before the last packet of a key
    frame complete before the NACK went out, while packets asked for
    before such a key frame completed, with retries left and never
    recovered, exist: without the rule they would have been asked again a
    round trip later."""
    i_bytes = 12345
    source = {"type": "synthetic", "fps": 30, "i_frame_bytes": i_bytes, "size_noise": 1e-9,
              "interval_noise": 0.01}
    playout = {"delay_ms": 150.0, "decode": "reference", "nack": True}
    sc = call(loss={"type": "packet", "rate": 0.2}, source=source, stop_s=9.0, receiver={"playout": playout})
    res = mediasim.run(sc, seed=3, out=tmp_path, pcap=True)
    assert_balanced(res)
    m = res.tables["media"].iloc[0]
    flow = res.packets["flow"].astype(str)
    media, rtx = res.packets[flow == "v/alice/rtp"], res.packets[flow == "v/alice/rtx"]
    arrived = {int(q): int(t) for q, t in zip(media["seq"], media["recv_ns"]) if t == t}
    osn = rtx_osns(tmp_path / "pcap" / "alice-router.pcap", 1001 + 500)
    for q, t in sorted(zip(rtx["seq"], rtx["recv_ns"]), key=lambda x: x[1]):
        if t == t:
            arrived.setdefault(osn[int(q)], int(t))
    s = res.tables["media_series"]
    sizes = s[s["var"].astype(str) == "frame_bytes"].sort_values("time_ns")["value"].to_numpy()
    keys = [(max(arrived[q] for q in seqs), seqs[-1]) for (_, seqs), size in zip(frames_from_the_logs(res), sizes)
            if size in (i_bytes - 1, i_bytes) and all(q in arrived for q in seqs)]
    assert len(keys) >= 3
    nacks = list(nacks_on_wire(tmp_path / "pcap" / "router-bob.pcap"))
    assert len(nacks) == m["nack_sent"] and sum(len(q) for _, q in nacks) == m["nack_requests"]
    asked = {}
    for ns, seqs in nacks:
        cleared = max((last for done, last in keys if done < ns), default=-1)
        assert min(seqs) > cleared
        for q in seqs:
            asked.setdefault(q, []).append(ns)
    cut = [q for q, times in asked.items() if q not in arrived and len(times) < 10
           and any(last > q and times[-1] < done < 8e9 for done, last in keys)]
    assert len(cut) >= 5 and m["packets_given_up"] >= len(cut)


def test_retransmissions_are_held_to_the_senders_target_over_500_ms(tmp_path):
    """At 60% loss the NACKs ask for more than the media's own rate; the
    sender retransmits within its wire target (no controller: the
    session's 1.5 Mbit/s), measured over 500 ms as libwebrtc's
    retransmission rate limiter does (docs/models/media.md). Without a
    pacer each is admitted when it joins alice's interface queue: at most
    1 ms before the pcap sees it leave (checked from the pcap's busy
    periods at 100 Mbit/s), in order. So in every window (t - 499 ms, t]
    ending at a retransmission, the retransmissions' wire bytes read off
    the pcap are within 1.5 Mbit/s x 500 ms: all were admitted within
    500 ms of each other."""
    import struct

    sender = {"source": {"type": "synthetic", "fps": 30}, "stop_s": 9.0,
              "receiver": {"playout": {"delay_ms": 150.0, "nack": True}}}
    res = mediasim.run(call(loss={"type": "packet", "rate": 0.6}, **sender), seed=3, out=tmp_path, pcap=True)
    assert_balanced(res)
    m = res.tables["media"].iloc[0]
    sent = [(ns, size) for ns, size, rtp in rtp_on_wire(tmp_path / "pcap" / "alice-router.pcap")
            if struct.unpack("!I", rtp[8:12])[0] == 1001 + 500]
    assert len(sent) == m["rtx_packets"] and sum(b for _, b in sent) == m["rtx_bytes"]
    # A busy period on alice's interface starts less than 1 ms before
    # each retransmission leaves: it joined the queue within it.
    busy_from, free_at, queued_ns = 0, 0, {}
    for ns, size, _ in pcap_records(tmp_path / "pcap" / "alice-router.pcap"):
        busy_from = busy_from if ns <= free_at else ns
        free_at = ns + size * 80  # 100 Mbit/s: 80 ns a byte
        queued_ns[ns] = ns - busy_from
    assert max(queued_ns[t] for t, _ in sent) < 1_000_000
    window_ns, cap_bytes = 500_000_000, 1.5e6 * 0.5 / 8
    times = np.array([t for t, _ in sent])
    cum = np.concatenate([[0], np.cumsum([b for _, b in sent])])
    last = np.searchsorted(times, times, side="right")
    first = np.searchsorted(times, times - window_ns + 1_000_000, side="right")
    in_window = cum[last] - cum[first]
    assert (in_window <= cap_bytes).all()
    # The limit binds: most windows are within 5% of it, and it refused
    # most of what was asked.
    assert np.median(in_window) > 0.95 * cap_bytes
    assert m["rtx_rate_limited"] > m["rtx_packets"] and m["rtx_refused"] > m["rtx_rate_limited"]


def test_held_media_packets_give_the_per_packet_figures():
    """A receiving member holds media packets that arrive in order and
    takes them in at its next other event (app/rtp/held.rs). The figures
    below are those of the same calls taken in on arrival, as the engine
    ran before holding: playout, per-packet feedback (transport-wide and
    RFC 8888, per interval and per frame), Generic NACKs and RTCP, under
    random loss, queueing and media both ways, come out the same."""
    from mediasim.validation import bench

    sc = bench.calls(4, 20.0)
    sc["links"][0]["rate_bps"] = 3.9e6  # 4 calls of ~1 Mbit/s: queueing
    sc["links"][0]["queue"] = {"type": "droptail", "limit_packets": 30}
    sc["links"][0]["ab"] = {"loss": {"type": "packet", "rate": 0.02}}
    s = sc["rtp_sessions"]
    s[1]["members"][0]["feedback"] = {"format": "rfc8888", "interval_ms": 20}
    s[2]["members"][0]["feedback"] = {"per_frame": True}
    s[3]["members"][1].update({"media": True, "source": {"type": "synthetic", "fps": 25}, "pacer": {},
                               "feedback": {"format": "twcc", "interval_ms": 100}})
    s[3]["members"][0]["playout"] = {"adaptive": True}
    res = mediasim.run(sc, seed=2)
    m, r = res.tables["media"], res.tables["rtp"]
    assert list(m["frames_played"]) == [520, 514, 519, 530, 469]
    assert list(m["frames_late"]) == [40, 36, 36, 33, 32]
    assert list(m["frames_lost"]) == [39, 52, 43, 30, 0]
    assert list(m["frame_delay_p95_ms"].round(3)) == [51.234, 51.331, 51.285, 47.327, 34.423]
    assert list(m["feedback_sent"]) == [398, 851, 710, 397, 199]
    assert list(m["packets_reported_lost"]) == [39, 55, 43, 30, 0]
    # Every packet lost on the way is reported lost, in either format (none
    # was still unreported at the end here): transport-wide feedback too
    # reports the losses that start a message's range.
    f = res.tables["flows"].set_index("flow")
    assert list(m["packets_reported_lost"][:4]) == [f.loc[f"c{i}/s{i}/rtp", "lost"] for i in range(4)]
    assert list(r["fb_sent"]) == [0, 39, 0, 54, 0, 43, 0, 30]
    assert list(r["early_packets"]) == [0, 38, 0, 48, 0, 42, 0, 28]
    assert list(r["regular_packets"]) == [29, 30, 30, 35, 30, 30, 29, 30]
    assert list(r["loss_reports"]) == [39, 0, 55, 0, 43, 0, 30, 0]


@pytest.mark.parametrize("fmt", ["rfc8888", "twcc"])
def test_feedback_is_counted_on_both_sides_and_reports_every_packet(fmt):
    res = mediasim.run(call(source={"type": "synthetic"}, pacer={},
                            feedback={"format": fmt, "interval_ms": 50}, stop_s=10.0))
    assert_balanced(res)
    f = res.flows.set_index("flow")
    m = res.tables["media"].iloc[0]
    assert m["feedback_sent"] == f.loc["v/bob/fb", "sent"]
    assert m["feedback_bytes_sent"] == f.loc["v/bob/fb", "sent_bytes"]
    assert m["feedback_received"] == f.loc["v/bob/fb", "received"]
    # No loss on this path: every media packet is reported received once.
    assert m["packets_reported_lost"] == 0
    assert m["packets_reported_received"] == f.loc["v/alice/rtp", "received"]
    # About one report per 50 ms while media flows (10 s).
    assert 180 <= m["feedback_sent"] <= 201
    per_packet = 2 if fmt == "rfc8888" else 1  # bytes per packet reported, roughly
    assert m["feedback_bytes_sent"] < 100 * m["feedback_sent"] + per_packet * m["packets_reported_received"]


@pytest.mark.parametrize("fmt", ["rfc8888", "twcc"])
def test_feedback_reports_a_late_packet_again(fmt):
    """On a path that reorders (RFC 8867's 8 ms sigma with ``reorder``, no
    loss), a packet that arrives after a feedback message reported it lost
    is reported again, received. From the packet log alone: a packet is
    late if the last message sent before it arrived had reported a newer
    one (and it is not older than the first to arrive, which the log
    starts at). Each is reported lost once and recovered once; every
    packet from the first to arrive on is reported received once."""
    res = mediasim.run(call(rate_bps=4e6, jitter={"std_ms": 8.0, "reorder": True}, source={"type": "synthetic"},
                            pacer={}, feedback={"format": fmt, "interval_ms": 50}, stop_s=9.0), seed=3)
    assert_balanced(res)
    m = res.tables["media"].iloc[0]
    flow = res.packets["flow"].astype(str)
    media = res.packets[flow == "v/alice/rtp"].sort_values("recv_ns")
    sends = np.sort(res.packets[flow == "v/bob/fb"]["sent_ns"].to_numpy())
    seqs, arrivals = media["seq"].to_numpy(), media["recv_ns"].to_numpy()
    newest = np.maximum.accumulate(seqs)  # the newest arrived by each arrival
    late = 0
    for seq, at in zip(seqs, arrivals):
        before = np.searchsorted(sends, at) - 1  # the last message sent before it arrived
        if before < 0 or seq < seqs[0]:
            continue
        reported_to = newest[np.searchsorted(arrivals, sends[before], side="right") - 1]
        late += int(reported_to > seq)
    assert late > 50  # the path reorders a lot
    assert m["feedback_late_packets"] == m["packets_reported_recovered"] == m["packets_reported_lost"] == late
    assert m["packets_reported_received"] == (seqs >= seqs[0]).sum()  # those before the first never are


def test_the_synthetic_codec_follows_its_target_on_the_wire():
    res = mediasim.run(call(source={"type": "synthetic"}, pacer={}, duration_s=30.0))
    m = res.tables["media"].iloc[0]
    # The member's share is 1.5 Mbit/s on the wire; the payload rate is
    # that less the headers (40 of 1200 bytes per full packet).
    assert m["media_rate_bps"] == pytest.approx(1.5e6 * 1160 / 1200, rel=0.03)
    assert m["key_frames"] == 1 and m["frames_sent"] == pytest.approx(30 * 25, rel=0.03)
    s = res.tables["media_series"]
    assert set(s["var"].astype(str)) == {"target_bps", "send_bps", "codec_bps", "frame_bytes", "pacer_queue_bytes"}
    # The sending rate per 100 ms averages to what the flows table counts.
    send = s[s["var"].astype(str) == "send_bps"]
    sent = res.flows.set_index("flow").loc["v/alice/rtp", "sent_bytes"]
    assert send["value"].sum() * 0.1 / 8 == pytest.approx(sent, rel=0.01)


def test_voice_quality_comes_from_the_e_model():
    res = mediasim.run(call(source={"type": "voice", "codec": "g711", "vad": True},
                            receiver={"playout": {"delay_ms": 60}}, duration_s=30.0))
    m = res.tables["media"].iloc[0]
    assert m["frames_lost"] == 0 and m["frames_late"] == 0
    assert m["mouth_to_ear_ms"] == pytest.approx(80.0)  # 60 ms playout + a 20 ms frame
    # G.107 Annex B from the reported R.
    r = m["r_factor"]
    assert m["mos"] == pytest.approx(1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6)
    # No loss, 80 ms: only the default impairments and the delay's echo
    # terms (Idte, Idle); R stays above 90.
    assert 90 < r < 93.2
    assert m["freezes"] == 0  # silences are not freezes


def test_a_voice_call_nobody_heard_has_no_mouth_to_ear_delay():
    """A fixed playout delay shorter than the path's: every frame is
    late. The delay is not the codec's 20 ms alone; R counts the loss
    (G.107 with Ppl 100%, G.711's Bpl 25.1: Ie,eff = 95 * 100 / (100 + 25.1))."""
    sc = call(source={"type": "voice", "codec": "g711"}, receiver={"playout": {"delay_ms": 10}}, duration_s=10.0)
    m = mediasim.run(sc).tables["media"].iloc[0]
    assert m["frames_played"] == 0 and m["frames_late"] >= m["frames_sent"] - 2  # the last may be on their way
    assert m["voice_loss_pct"] == 100.0 and math.isnan(m["mouth_to_ear_ms"])
    ie_eff = 95 * 100 / (100 + 25.1)
    # Id at the codec's 20 ms (its echo terms) is under 1; at the path's
    # 30 ms and more it would be larger.
    assert 0 < (93.2 - ie_eff) - m["r_factor"] < 1
    assert m["mos"] < 1.5


@pytest.mark.parametrize("member,field,words", [
    ({"media": True, "feedback": {}}, "members[0].feedback", "needs a source"),
    ({"media": True, "pacer": {}}, "members[0].pacer", "needs a source"),
    ({"media": True, "source": {"type": "synthetic", "fps": 0}}, "members[0].source.fps", "positive"),
    ({"media": True, "source": {"type": "trace", "fps": 25, "frames_bytes": [100], "key_frames": [3]}},
     "members[0].source.key_frames", "not a frame index"),
    ({"media": True, "source": {"type": "trace", "fps": 25, "frames_bytes": [100], "key_on_request": True}},
     "members[0].source.key_on_request", "needs key frames"),
    ({"media": True, "source": {"type": "synthetic"}, "feedback": {"interval_ms": -1}},
     "members[0].feedback.interval_ms", "positive"),
    ({"media": True, "source": {"type": "synthetic"}, "cc": {"type": "tfrc"}, "feedback": {}},
     "members[0].feedback", "feedback of its own"),
    ({"media": True, "source": {"type": "synthetic"}, "pacer": {"factor": 0}}, "members[0].pacer.factor",
     "positive"),
    ({"media": True, "source": {"type": "nonsense"}}, "members[0].source.type", "nonsense"),
])
def test_bad_media_fields_are_named(member, field, words):
    sc = call()
    sc.data["rtp_sessions"][0]["members"][0] = {"node": "alice", **member}
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert field in str(e.value) and words in str(e.value)


@pytest.mark.parametrize("source,playout,field,words", [
    ({"type": "voice", "codec": "g711"}, {"decode": "reference"}, "members[1].playout.decode", "for video"),
    ({"type": "synthetic"}, {"decode": "chained"}, "decode", "chained"),
    ({"type": "synthetic"}, {"decode": "reference", "key_frame_retry_ms": 0}, "members[1].playout.key_frame_retry_ms",
     "positive"),
    ({"type": "synthetic"}, {"key_frame_retry_ms": 1e9}, "members[1].playout.key_frame_retry_ms", "at most"),
    ({"type": "synthetic"}, {"nack": True, "nack_retries": 0}, "members[1].playout.nack_retries", "1 to 100"),
    ({"type": "synthetic"}, {"nack": True, "nack_rtt_ms": 0}, "members[1].playout.nack_rtt_ms", "positive"),
    ({"type": "synthetic"}, {"nack": "yes"}, "members[1].playout.nack", "true or false"),
    ({"type": "synthetic"}, {"nack": True, "skip_recovered": True}, "members[1].playout.skip_recovered",
     "adaptive = true and nack = true"),
    ({"type": "synthetic"}, {"adaptive": True, "skip_recovered": True}, "members[1].playout.skip_recovered",
     "adaptive = true and nack = true"),
    ({"type": "synthetic"}, {"estimator": "webrtc"}, "members[1].playout.estimator", "adaptive = true"),
    ({"type": "synthetic"}, {"adaptive": True, "estimator": "netEQ"}, "members[1].playout.estimator", "quantile"),
    ({"type": "synthetic"}, {"adaptive": True, "estimator": "webrtc", "render_delay_ms": -1},
     "members[1].playout.render_delay_ms", "non-negative"),
    ({"type": "voice"}, {"adaptive": True, "estimator": "webrtc"}, "members[1].playout.estimator", "NetEQ"),
])
def test_bad_decoding_fields_are_named(source, playout, field, words):
    sc = call(source=source, receiver={"playout": playout})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert field in str(e.value) and words in str(e.value)


def test_a_paused_source_sends_no_frames_while_rtcp_and_the_sequence_carry_on():
    """RFC 8867 5.8's pause: from 4 to 9 s no frame is captured (the next
    is at 9 s exactly) and no media packet leaves, RTCP goes on, the
    per-packet feedback stops with the packets it reports, the sequence
    numbers run on without a gap (RFC 7728), the media rate counts the
    active time only, and the receiver counts one pause of the 5 s, not a
    freeze."""
    sc = call(duration_s=14.0, rate_bps=5e6, source={"type": "synthetic"}, pacer={}, feedback={"format": "twcc"},
              cc={"type": "gcc"}, pauses=[[4.0, 9.0]], receiver={"playout": {"adaptive": True}})
    res = mediasim.run(sc)
    assert_balanced(res)
    s = res.tables["media_series"]
    frames = s[s["var"] == "frame_bytes"]["time_s"]
    assert not ((frames >= 4.0) & (frames < 9.0)).any() and (frames == 9.0).sum() == 1
    pk = res.tables["packets"]
    rtp = pk[pk["flow"] == "v/alice/rtp"].sort_values("sent_ns")
    assert not ((rtp["sent_s"] >= 4.0) & (rtp["sent_s"] < 9.0)).any()
    assert (np.diff(rtp["seq"].to_numpy()) == 1).all() and len(res.tables["drops"]) == 0
    quiet = pk[(pk["sent_s"] >= 4.5) & (pk["sent_s"] < 9.0)]
    assert (quiet["flow"] == "v/alice/rtcp").sum() > 0 and (quiet["flow"] == "v/bob/fb").sum() == 0
    m = res.tables["media"].set_index("flow").loc["v/alice/rtp"]
    assert m["paused_s"] == 5.0
    assert m["media_rate_bps"] == pytest.approx(m["media_payload_bytes"] * 8 / (14.0 - 5.0), rel=1e-12)
    assert (m["pauses"], m["freezes"]) == (1, 0) and 5.0 <= m["pause_total_s"] < 5.1


@pytest.mark.parametrize("pauses, field, words", [
    ([[5, 4]], "members[0].pauses[0]", "must end after it begins"),
    ([[1, 3], [2, 4]], "members[0].pauses[1]", "previous pause's end 3"),
    ([[-1, 2]], "members[0].pauses[0]", "start_s"),
    ([[1, 2, 3]], "members[0].pauses[0]", "must be a list of fewer values (got 3)"),
    ([[1]], "members[0].pauses[0]", "must be a list of 2 values (got 1)"),
])
def test_bad_pauses_are_named(pauses, field, words):
    sc = call(source={"type": "synthetic"}, pauses=pauses)
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert field in str(e.value) and words in str(e.value), str(e.value)


def test_a_bad_pause_threshold_is_named():
    sc = call(source={"type": "synthetic"}, receiver={"playout": {"pause_ms": 0}})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert "members[1].playout.pause_ms" in str(e.value) and "positive" in str(e.value), str(e.value)


def test_pauses_need_frame_based_media():
    with pytest.raises(ScenarioError) as e:
        mediasim.run(call(pauses=[[1, 2]]))
    assert "members[0].pauses" in str(e.value) and "frame-based media" in str(e.value)


def test_playout_needs_a_unicast_peer_with_frames():
    sc = call()
    sc.data["rtp_sessions"][0]["members"][1]["playout"] = {}
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert "members[1].playout" in str(e.value) and "no frame-based media" in str(e.value)


def test_the_calls_example_runs_and_its_video_mostly_plays():
    res = mediasim.run(mediasim.load_scenario("examples/calls.toml"))
    assert_balanced(res)
    m = res.tables["media"].set_index("flow")
    video, voice = m.loc["video/alice/rtp"], m.loc["voice/alice/rtp"]
    assert video["frames_played"] > 0.8 * video["frames_sent"]
    assert voice["mos"] > 4.0
    assert pd.isna(video["mos"])


def test_a_frame_trace_file_is_read_beside_its_scenario_and_keyed_by_contents(tmp_path):
    from mediasim.campaign.keys import canonical

    (tmp_path / "frames.txt").write_text("# bytes type\n6000 I\n2000 P\n2000 P\n\n2000 P  # a comment\n")
    sc_file = tmp_path / "call.toml"
    sc_file.write_text("""
name = "trace-call"
duration_s = 4.0
nodes = [{ name = "a" }, { name = "b" }]
links = [{ a = "a", b = "b", rate_bps = 10e6, delay_ms = 10 }]
[[rtp_sessions]]
name = "v"
transport = "unicast"
session_bw_bps = 1e6
media_payload_bytes = 1000
members = [{ node = "a", media = true, source = { type = "trace", fps = 25, file = "frames.txt", follow_target = false } },
           { node = "b", playout = {} }]
""")
    sc = mediasim.load_scenario(sc_file)
    m = mediasim.run(sc).tables["media"].iloc[0]
    # 4 s at 25 fps: 100 frames, a key frame every 4, 3000 bytes a frame.
    assert m["frames_sent"] == 100 and m["key_frames"] == 25
    assert m["media_payload_bytes"] == 100 * 3000
    assert m["frames_played"] == 100
    before = canonical(sc.data)
    (tmp_path / "frames.txt").write_text("6000 I\n2000 P\n")
    assert canonical(sc.data) != before  # the key covers the trace's contents


@pytest.mark.parametrize("text,words", [("100\nabc\n", "line 2"), ("", "no frames"), ("0 I\n", "line 1"),
                                        ("100\n\u00b2 P\n", "line 2"), ("9" * 5000 + " I\n", "line 1")])
def test_a_bad_frame_trace_is_named_at_its_field_and_line(tmp_path, text, words):
    (tmp_path / "f.txt").write_text(text)
    sc = call(source={"type": "trace", "fps": 25, "file": str(tmp_path / "f.txt")})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert "rtp_sessions[0].members[0].source.file" in str(e.value) and words in str(e.value)


def _svc_units(seconds: float, fps: float = 30.0) -> list[list]:
    """A dyadic GOP-of-8 trace: per frame 1000 bytes of base (s0 q0), 500 of
    its FGS, 2000 of spatial 1 and 1000 of its FGS."""
    levels = [0, 3, 2, 3, 1, 3, 2, 3]
    units = []
    for f in range(round(seconds * fps)):
        t, lv = f / fps, levels[f % 8]
        units += [[t, 1000, 0, lv, 0], [t, 500, 0, lv, 1], [t, 2000, 1, lv, 0], [t, 1000, 1, lv, 1]]
    return units


def test_an_svc_trace_file_plays_its_chosen_layers(tmp_path):
    from mediasim import media

    path = media.write_svc_trace(tmp_path / "svc.txt", _svc_units(2.0))
    # Base spatial layer, temporal levels 0-1, half the FGS: frames of
    # 1250 bytes. The 2 s trace (60 frames) has 7 full GOPs with two such
    # frames each (the level-0 one a key frame) and a half GOP with one
    # key frame: 15 frames per loop, 8 of them key frames, 4 loops.
    sc = call(duration_s=8.0, source={"type": "svc_trace", "file": str(path), "follow_target": False,
                                      "spatial": 0, "temporal": 1, "fgs": 0.5}, receiver={"playout": {}})
    m = mediasim.run(sc).tables["media"].iloc[0]
    assert m["frames_sent"] == 60 and m["key_frames"] == 32
    assert m["media_payload_bytes"] == 60 * 1250
    assert m["frames_played"] == 60
    # Following the target (the member's share of a 600 kbit/s session,
    # less headers: about 18 kB per GOP): spatial 1 at levels 0-2 (12 kB of
    # base) and all their FGS, 4500 bytes in 4 frames per GOP (2 in the
    # half GOP): 30 frames per loop. At 1.5 Mbit/s, all 60 frames.
    sc = call(duration_s=8.0, source={"type": "svc_trace", "file": str(path)})
    sc.data["rtp_sessions"][0]["session_bw_bps"] = 0.6e6
    m = mediasim.run(sc).tables["media"].iloc[0]
    assert m["frames_sent"] == 120 and m["media_payload_bytes"] == 120 * 4500
    sc.data["rtp_sessions"][0]["session_bw_bps"] = 1.5e6
    assert mediasim.run(sc).tables["media"].iloc[0]["frames_sent"] == 240


@pytest.mark.parametrize("units,field,words", [
    ([[0.0, 1000, 0, 2, 0], [0.1, 1000, 0, 3, 0]], "source.nal_units", "starts a GOP"),
    ([[0.0, 1000, 1, 0, 0], [0.1, 1000, 0, 3, 0]], "source.nal_units", "no base-layer unit"),
    ([[0.1, 1000, 0, 0, 0], [0.0, 1000, 0, 3, 0]], "source.nal_units", "unit 2: times must not go back"),
])
def test_a_bad_svc_trace_is_named(units, field, words):
    sc = call(source={"type": "svc_trace", "nal_units": units})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert f"rtp_sessions[0].members[0].{field}" in str(e.value) and words in str(e.value)


def test_a_bad_svc_trace_file_is_named_at_its_line(tmp_path):
    (tmp_path / "s.txt").write_text("0.0 1000 0 0 0\n0.03 1000 0 3\n")
    sc = call(source={"type": "svc_trace", "file": str(tmp_path / "s.txt")})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert "members[0].source.file" in str(e.value) and "line 2" in str(e.value)
