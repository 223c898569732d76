"""pcap files parse with a standard reader (dpkt) and carry the right
addresses, ports, lengths and timestamps."""

import socket

import dpkt
import pytest

import mediasim


def read_pcap(path):
    with open(path, "rb") as fh:
        r = dpkt.pcap.Reader(fh)
        assert r.datalink() == dpkt.pcap.DLT_RAW or r.datalink() == 101
        return [(ts, buf) for ts, buf in r]


@pytest.fixture
def pcap_run(tmp_path, examples):
    res = mediasim.run(examples / "dumbbell.toml", seed=1, out=tmp_path, pcap=True)
    return res, tmp_path / "pcap"


def test_one_file_per_link_with_every_transmitted_packet(pcap_run):
    res, d = pcap_run
    files = sorted(p.name for p in d.glob("*.pcap"))
    assert files == sorted(f"{name}.pcap" for name in res.links["link"].unique())
    per_link = res.links.groupby("link")["tx_packets"].sum()
    for link, n in per_link.items():
        assert len(read_pcap(d / f"{link}.pcap")) == n


def test_headers_carry_addresses_ports_and_lengths(pcap_run):
    res, d = pcap_run
    nodes = res.meta["codes"]["node"]
    addr = {n: socket.inet_ntoa(bytes([10, 0, 0, 1 + i])) for i, n in enumerate(nodes)}
    flows = {f: i for i, f in enumerate(res.meta["codes"]["flow"])}
    pkts = read_pcap(d / "bottleneck.pcap")
    seen = set()
    for ts, buf in pkts:
        ip = dpkt.ip.IP(buf)
        assert ip.v == 4 and ip.p == dpkt.ip.IP_PROTO_UDP
        assert ip.len == len(buf)
        assert ip.sum == dpkt.ip.IP(bytes(ip)).sum  # header checksum as written
        udp = ip.data
        assert isinstance(udp, dpkt.udp.UDP)
        assert udp.ulen == ip.len - 20
        seen.add((socket.inet_ntoa(ip.src), socket.inet_ntoa(ip.dst), udp.sport, udp.dport, ip.len))
    f = res.flows.set_index("flow")
    for name in ("voice", "video", "background"):
        i = flows[name]
        payload = {"voice": 160, "video": 1200, "background": 1000}[name]
        key = (addr[f.loc[name, "src"]], addr[f.loc[name, "receiver"]], 10000 + i, 20000 + i, payload + 28)
        assert key in seen, key


def test_timestamps_are_transmission_starts_in_nanoseconds(tmp_path):
    sc = mediasim.Scenario("one", duration_s=1)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=10)
    sc.flow("f", "cbr", src="a", dst="b", payload_bytes=972, interval_ms=100, start_s=0.123456789, max_packets=2)
    mediasim.run(sc, out=tmp_path, pcap=True)
    with open(tmp_path / "pcap" / "a-b.pcap", "rb") as fh:
        r = dpkt.pcap.Reader(fh)
        ts = [float(t) for t, _ in r]  # dpkt gives Decimal for nanosecond files
    assert ts[0] == pytest.approx(0.123456789, abs=1e-9)
    assert ts[1] == pytest.approx(0.223456789, abs=1e-9)


def test_multicast_packets_carry_the_group_address(tmp_path, examples):
    mediasim.run(examples / "multicast_tree.yaml", out=tmp_path, pcap=True)
    pkts = read_pcap(tmp_path / "pcap" / "agg1-m1.pcap")
    assert pkts
    assert {socket.inet_ntoa(dpkt.ip.IP(b).dst) for _, b in pkts} == {"239.1.0.1"}


def test_snaplen_truncates_captures_but_keeps_original_length(tmp_path):
    sc = mediasim.Scenario("one", duration_s=1)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=10)
    sc.flow("f", "cbr", src="a", dst="b", payload_bytes=972, interval_ms=100, max_packets=3)
    sc.measure(pcap=True, pcap_snaplen=64)
    mediasim.run(sc, out=tmp_path)
    pkts = read_pcap(tmp_path / "pcap" / "a-b.pcap")
    assert [len(b) for _, b in pkts] == [64, 64, 64]
    assert dpkt.ip.IP(pkts[0][1]).len == 1000


def test_pcap_without_output_directory_is_a_clear_error():
    sc = mediasim.Scenario("one", duration_s=1)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=10)
    with pytest.raises(mediasim.ScenarioError, match="pcap files need an output folder"):
        mediasim.run(sc, pcap=True)


def recomputed_checksums(buf: bytes) -> tuple[int, int]:
    """The IPv4 header and UDP/TCP checksums dpkt computes itself for the
    packet in ``buf`` once both fields are zeroed (its own one's complement
    sum and pseudo-header, independent of mediasim's)."""
    ip = dpkt.ip.IP(buf)
    ip.sum = 0
    ip.data.sum = 0
    again = dpkt.ip.IP(bytes(ip))
    return again.sum, again.data.sum


@pytest.mark.parametrize("example,link,proto", [
    ("dumbbell.toml", "bottleneck", dpkt.ip.IP_PROTO_UDP),
    ("rtp_avpf_multicast.yaml", "hub-A2", dpkt.ip.IP_PROTO_UDP),
    ("tcp_web_and_voice.toml", "access", dpkt.ip.IP_PROTO_TCP),
])
def test_checksums_match_an_independent_computation(tmp_path, examples, example, link, proto):
    mediasim.run(examples / example, seed=1, out=tmp_path, pcap=True)
    pkts = read_pcap(tmp_path / "pcap" / f"{link}.pcap")
    protos = set()
    assert len(pkts) > 50
    for _, buf in pkts:
        ip = dpkt.ip.IP(buf)
        protos.add(ip.p)
        assert (ip.sum, ip.data.sum) == recomputed_checksums(buf)
        assert ip.data.sum != 0
    assert proto in protos


def test_dscp_of_a_flow_is_in_the_ip_header(tmp_path):
    sc = mediasim.Scenario("dscp", duration_s=1)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=1)
    sc.flow("ef", "cbr", src="a", dst="b", payload_bytes=100, interval_ms=50, dscp=46)
    sc.flow("af", "cbr", src="a", dst="b", payload_bytes=100, interval_ms=50, dscp=10, start_s=0.01)
    sc.flow("be", "cbr", src="a", dst="b", payload_bytes=100, interval_ms=50, start_s=0.02)
    mediasim.run(sc, out=tmp_path, pcap=True)
    by_port = {}
    for _, buf in read_pcap(tmp_path / "pcap" / "a-b.pcap"):
        ip = dpkt.ip.IP(buf)
        by_port.setdefault(ip.data.dport, set()).add(ip.tos)
    # DSCP is the upper six bits of the old TOS byte (RFC 2474); ECN bits 0.
    assert by_port == {20000: {46 << 2}, 20001: {10 << 2}, 20002: {0}}
