"""Every example scenario validates and runs, with conservation."""

import pytest

import mediasim
from conftest import EXAMPLES, assert_balanced


@pytest.mark.parametrize("path", sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".toml", ".yaml", ".json")))
def test_example_runs(path):
    sc = mediasim.load_scenario(EXAMPLES / path).validate()
    res = mediasim.run(sc, seed=1)
    assert_balanced(res)
    assert res.meta["delivered"] > 0


def test_tcp_example_transfers_complete():
    res = mediasim.run(EXAMPLES / "tcp_web_and_voice.toml", seed=1)
    t = res.tcp.set_index("flow")
    assert t.loc["web0", "bytes_delivered"] == 62000 and t.loc["web1", "bytes_delivered"] == 62000
    assert t.loc["bulk", "goodput_bps"] > 0


def test_rtp_example_mixes_avp_and_avpf():
    rtp = mediasim.run(EXAMPLES / "rtp_avpf_multicast.yaml", seed=1).tables["rtp"].set_index("flow")
    assert rtp.loc["conf/A4/rtcp", "avpf"] == 0 and rtp.loc["conf/A2/rtcp", "avpf"] == 1
    assert rtp.loc["conf/A4/rtcp", "early_packets"] == 0
    assert rtp.loc["conf/A2/rtcp", "fb_sent"] > 0
