"""RED in whole runs: against ns-2's Queue/RED (stored figures, see
mediasim.validation.red_crosscheck), its statistics and samples, and clear
errors for impossible parameters."""

import pytest

import mediasim
from mediasim import ScenarioError
from mediasim.validation import red_crosscheck as rc
from conftest import assert_balanced, line


@pytest.mark.parametrize("setting", list(rc.SETTINGS))
def test_red_average_and_drops_within_10_percent_of_ns2(setting):
    ref = rc.stored_references()[setting]
    got = rc.mediasim_run(setting)
    for key in ("mean_avg_packets", "drops"):
        assert rc.relative_gap(got, ref, key) <= rc.TOLERANCE, (key, got, ref)


@pytest.mark.parametrize("setting", [s for s in rc.SETTINGS if not rc.open_loop(s)])
def test_red_queue_within_10_percent_of_ns3(setting):
    # ns-3's RedQueueDisc hides its average: the time-averaged queue instead.
    ref = rc.stored_references(simulator="ns-3")[setting]
    got = rc.mediasim_run(setting)
    assert rc.relative_gap(got, ref, "mean_queue_packets") <= rc.TOLERANCE, (got, ref)


def test_red_holds_the_average_between_the_thresholds_and_reports_it():
    # The study's RED set on a 2 Mbit/s link fed 2.4 Mbit/s of Poisson
    # traffic: RED must drop the excess (about 1/6) early, keeping the
    # average near max_th rather than letting the 100-packet buffer fill.
    queue = {"type": "red", "min_th": 5, "max_th": 15, "w_q": 0.002, "max_p": 0.1, "gentle": True,
             "limit_packets": 100, "mean_packet_bytes": 1000}
    sc = line(1, rate_bps=2e6, delay_ms=1, duration_s=60, queue=queue)
    sc.flow("p", "poisson", src="n0", dst="n1", payload_bytes=972, rate_bps=2.4e6 * 972 / 1000)
    sc.measure(queue_sample_ms=100)
    res = mediasim.run(sc, seed=3)
    assert_balanced(res)
    q = res.queues.set_index("direction").loc["n0-n1:n0->n1"]
    assert q["kind"] == "red"
    early, forced = q["dropped_red_early"], q.get("dropped_red_forced", 0)
    assert q["dropped_queue_overflow"] == 0
    assert early > 5 * forced, (early, forced)
    dropped = (early + forced) / q["arrivals"]
    assert abs(dropped - 1 / 6) < 0.02, dropped
    s = res.queue_samples[res.queue_samples["link_dir"] == "n0-n1:n0->n1"]
    late = s[s["time_s"] > 10]["red_avg"]
    assert 10 < late.mean() < 25, late.mean()
    assert q["red_avg"] == pytest.approx(s["red_avg"].iloc[-1], rel=0.2)
    other = res.queue_samples[res.queue_samples["link_dir"] == "n0-n1:n1->n0"]
    assert other["red_avg"].notna().all(), "both directions run RED"


@pytest.mark.parametrize("patch,field,fragment", [
    ({"min_th": 15, "max_th": 5}, "links[0].queue.max_th", "must be above min_th"),
    ({"max_p": 0}, "links[0].queue.max_p", "(0, 1]"),
    ({"max_p": 1.5}, "links[0].queue.max_p", "(0, 1]"),
    ({"w_q": 2}, "links[0].queue.w_q", "(0, 1]"),
    ({"limit_packets": None}, "links[0].queue", "red needs limit_packets or limit_bytes"),
    ({"mean_packet_bytes": 0}, "links[0].queue.mean_packet_bytes", "at least 1"),
])
def test_impossible_red_parameters_name_the_field(patch, field, fragment):
    queue = {"type": "red", "min_th": 5, "max_th": 15, "limit_packets": 50, **patch}
    queue = {k: v for k, v in queue.items() if v is not None}
    sc = line(1, rate_bps=1e6, delay_ms=1, queue=queue)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    assert any(p == field and fragment in m for p, m in e.value.errors), e.value.errors


def ecn_run(ecn: bool, duration_s: float = 60.0):
    sc = rc.scenario("gentle", duration_s)
    sc["measure"]["packets"] = True
    sc["links"][0]["queue"]["ecn"] = ecn
    for f in sc["flows"]:
        if f["type"] == "tcp":
            f["tcp"]["ecn"] = ecn
    return mediasim.run(sc, seed=1)


def test_with_ecn_red_marks_tcp_instead_of_dropping_it():
    off, on = ecn_run(False), ecn_run(True)
    q = on.queues.set_index("direction").loc[rc.BOTTLENECK]
    assert q["ecn_marks"] > 500
    # Every mark reaches a receiver (nothing downstream drops), and each
    # sender cuts at most once per window: fewer cuts than marks.
    assert on.tcp["ce_received"].sum() == q["ecn_marks"]
    assert 0 < on.tcp["ecn_reductions"].sum() <= q["ecn_marks"]
    # Early drops now fall on what is not ECN-capable: the CBR flow, and
    # TCP's retransmissions (RFC 3168 6.1.5).
    early = on.drops[on.drops["reason"] == "red_early"]
    assert (early["flow"] != "cbr").sum() <= on.tcp["retransmissions"].sum()
    assert (early["flow"] == "cbr").sum() > 0
    assert on.tcp["retransmissions"].sum() < 0.2 * off.tcp["retransmissions"].sum()
    util = on.links.set_index("direction").loc[rc.BOTTLENECK, "utilization"]
    assert util > 0.97


def test_ecn_is_on_the_wire(tmp_path):
    import dpkt

    sc = rc.scenario("gentle", 5.0)
    sc["links"][0]["queue"]["ecn"] = True
    sc["flows"] = [f for f in sc["flows"] if f["type"] == "tcp"][:2]
    for f in sc["flows"]:
        f["tcp"].update({"ecn": True, "handshake": True})
    sc["measure"] = {"pcap": True}
    res = mediasim.run(sc, seed=1, out=tmp_path)
    with open(tmp_path / "pcap" / "bottleneck.pcap", "rb") as fh:
        ips = [dpkt.ip.IP(buf) for _, buf in dpkt.pcap.Reader(fh)]
    data = [ip for ip in ips if isinstance(ip.data, dpkt.tcp.TCP) and len(ip.data.data) > 0]
    syns = [ip.data for ip in ips if isinstance(ip.data, dpkt.tcp.TCP) and ip.data.flags & dpkt.tcp.TH_SYN]
    # ECN-setup SYN (ECE and CWR) and SYN-ACK (ECE), data ECT(0) or CE.
    assert any(s.flags & dpkt.tcp.TH_ECE and s.flags & dpkt.tcp.TH_CWR for s in syns)
    assert any(s.flags & dpkt.tcp.TH_ECE and s.flags & dpkt.tcp.TH_ACK and not s.flags & dpkt.tcp.TH_CWR
               for s in syns)
    # Only retransmissions go out not ECN-capable (RFC 3168 6.1.5).
    not_ect = sum(1 for ip in data if ip.tos & 3 == 0)
    assert data and not_ect <= res.tcp["retransmissions"].sum()
    assert all(ip.tos & 3 in (0b00, 0b10, 0b11) for ip in data)
    assert any(ip.tos & 3 == 0b11 for ip in data), "some CE marks"
    acks = [ip.data for ip in ips if isinstance(ip.data, dpkt.tcp.TCP) and not ip.data.data]
    assert any(a.flags & dpkt.tcp.TH_ECE for a in acks)
    assert any(ip.data.flags & dpkt.tcp.TH_CWR for ip in data)

