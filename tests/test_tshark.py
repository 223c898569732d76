"""Wireshark's dissectors (tshark) read mediasim's pcap files: no malformed
packets, checksums good, TCP retransmissions counted alike, a flow of TCP
transfers seen as one connection each, RTP and RTCP
(with Generic NACKs) decoded, transport-wide feedback and its RTP header
extension decoded, RFC 8888 feedback framed, PLIs decoded, NACKs and
RFC 4588 retransmissions decoded, RFC 3611 RRTR and DLRR blocks decoded.
Runs scripts/check-pcap-tshark.

scripts/setup installs tshark where it can (root with apt-get). In CI the
test requires it; elsewhere, without tshark, it is reported as not run,
with the reason, never passed."""

import re
import subprocess

from conftest import ROOT, require_tool


def test_tshark_decodes_every_pcap_cleanly():
    require_tool("tshark")
    out = subprocess.run([str(ROOT / "scripts" / "check-pcap-tshark")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "tshark check: OK"
    retx = next(line for line in lines if "retransmissions:" in line)
    assert "0 malformed" in retx
    # A flow of transfers: each connection its own on the wire.
    transfers = next(line for line in lines if "transfers:" in line)
    assert "mediasim 5, tshark 5 SYNs in 5 connections; 0 retransmissions; 0 malformed" in transfers
    rtp = next(line for line in lines if " RTP, " in line)
    assert "with NACK" in rtp and "0 malformed" in rtp
    assert sum("packets  0 expert warnings  0 bad checksums" in line for line in lines) >= 10
    # Per-packet feedback: tshark finds every message the sender received.
    for fmt in ("twcc", "rfc8888"):
        line = next(x for x in lines if f"calls/{fmt}/" in x)
        assert "0 malformed" in line and "feedback: mediasim" in line
    # GCC's probes: tshark finds every padding-only packet mediasim sent.
    line = next(x for x in lines if "calls/gcc/" in x)
    assert re.search(r"padding: mediasim (\d+), tshark \1 padding-only RTP packets; 0 malformed", line), line
    # Key-frame requests: tshark reads every PLI the sender received.
    line = next(x for x in lines if "calls/pli/" in x)
    assert re.search(r"PLI: mediasim (\d+) received of \d+ sent, tshark \1; 0 malformed", line), line
    # Retransmission: tshark reads every NACK the sender received and
    # every retransmission it sent, on a stream of their own.
    line = next(x for x in lines if "calls/nack/" in x)
    assert re.search(r"NACK: mediasim (\d+), tshark \1; RTX: mediasim (\d+), tshark \2, SSRC", line), line
    assert "0 OSNs not sent; 0 malformed" in line
    # Extended reports: every RRTR the receiver sent and every DLRR answer,
    # each naming an RRTR's time.
    line = next(x for x in lines if "calls/xr/" in x)
    assert re.search(r"RRTR: mediasim (\d+), tshark \1; DLRR: mediasim (\d+), tshark \2, 0 naming no RRTR; 0 malformed",
                     line), line
