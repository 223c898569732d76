"""Scalable video over TFRC in whole runs: what is offered arrives and
decodes on a free path, the layer choice follows the path, the base layer
is marked AF11 and the enhancement AF12, and errors name the field."""

import numpy as np
import pytest

import mediasim
import mediasim.media
from conftest import assert_field_error, line


def svc_run(rate_bps, duration_s=30.0, **queue):
    classes = {"type": "drr", "classes": [
        {"name": "af11", "dscp": [10], "queue": {"type": "droptail", "limit_packets": 30}},
        {"name": "af12", "dscp": [12], "queue": {"type": "droptail", "limit_packets": 30}}]}
    sc = line(1, rate_bps=rate_bps, delay_ms=20, duration_s=duration_s, queue=queue or classes)
    sc.flow("v", "svc", src="n0", dst="n1", cc={"type": "tfrc"})
    return mediasim.run(sc, seed=1)


def point(res):
    s = res.svc_series
    return s[s["var"] == "operating_point"]["value"].mean()


def test_on_a_free_path_everything_offered_arrives_and_decodes():
    res = svc_run(10e6)
    s = res.svc.set_index("flow").loc["v"]
    for layer in ("base", "s0_fgs", "s1", "s1_fgs"):
        assert s[f"decodable_bytes_{layer}"] == s[f"offered_bytes_{layer}"], layer
    assert s["bytes_late"] == 0 and res.flows.set_index("flow").loc["v", "lost"] == 0
    # Nearly the whole stream (spatial 1 waits for the first IDR picture
    # after TFRC's start-up): operating point above s1, t2.
    assert point(res) > 6.5
    # Marking: the base layer's packets in class af11, the rest in af12;
    # their bytes are the offered bytes plus 40 bytes of headers a packet.
    cls = res.queue_classes[res.queue_classes["direction"] == "n0-n1:n0->n1"].set_index("class")
    base_bytes = cls.loc["af11", "departure_bytes"] - 40 * cls.loc["af11", "departures"]
    assert base_bytes == s["offered_bytes_base"]
    enh = s["offered_bytes_s0_fgs"] + s["offered_bytes_s1"] + s["offered_bytes_s1_fgs"]
    assert cls.loc["af12", "departure_bytes"] - 40 * cls.loc["af12", "departures"] == enh


def test_a_narrow_path_gets_fewer_layers_and_longer_delays():
    free, narrow = svc_run(10e6), svc_run(0.5e6)
    assert point(narrow) < point(free) - 1
    f, n = (r.flows.set_index("flow").loc["v"] for r in (free, narrow))
    # Waiting in the send buffer counts: the narrow path's delay is far
    # above its 20 ms of propagation.
    assert n["delay_mean_ms"] > 3 * f["delay_mean_ms"]
    s = narrow.svc.set_index("flow").loc["v"]
    assert s["decodable_bytes_base"] > 0.9 * s["offered_bytes_base"]


@pytest.mark.parametrize("fields,path,fragment", [
    ({"cc": {"type": "quic"}}, "flows[0].cc.type",
     "must be one of tfrc, ppacc, fixed, scale, gcc, nada, scream (got quic)"),
    ({"cc": {"type": "tfrc"}, "packet_bytes": 40}, "flows[0].packet_bytes", "41..=65535"),
    ({"cc": {"type": "tfrc"}, "base_dscp": 64}, "flows[0].base_dscp", "0..=63"),
    ({"cc": {"type": "tfrc"}, "nal_units": [[0.0, 100, 3, 0, 0]]}, "flows[0].nal_units", "spatial 0-1"),
    ({"cc": {"type": "tfrc"}, "idr_gops": 0}, "flows[0].idr_gops", "at least 1"),
    ({"cc": {"type": "tfrc"}, "fec": {"code": "rs", "k": 8, "n": 8}}, "flows[0].fec.n", "above k"),
    ({"cc": {"type": "tfrc"}, "fec": {"code": "rs", "k": 0}}, "flows[0].fec.k", "at least 1"),
    ({"cc": {"type": "tfrc"}, "fec": {"code": "xor", "k": 4, "n": 6}}, "flows[0].fec.n", "not used by"),
    ({"cc": {"type": "tfrc"}, "fec": {"code": "rs", "k": 4, "dscp": 70}}, "flows[0].fec.dscp", "0..=63"),
    ({"cc": {"type": "tfrc"}, "fec": {"code": "ldpc", "k": 4}}, "flows[0].fec.code",
     "must be one of rs, xor (got ldpc)"),
])
def test_svc_errors_name_the_field(fields, path, fragment):
    sc = line(1, rate_bps=1e6, delay_ms=1)
    sc.flow("v", "svc", src="n0", dst="n1", **fields)
    assert_field_error(sc, path, fragment)


@pytest.mark.parametrize("kind,cross_bps,tolerance", [
    ("cbr", 0.4e6, 0.05), ("cbr", 0.8e6, 0.05), ("cbr", 1.2e6, 0.05),
    ("poisson", 0.4e6, 0.10), ("poisson", 0.8e6, 0.10),
])
def test_ppacc_estimates_the_bandwidth_cross_traffic_leaves(kind, cross_bps, tolerance):
    # A 2 Mbit/s link with cross traffic of known rate (500-byte packets):
    # the probe-gap estimate should average Cb - cross.
    sc = line(1, rate_bps=2e6, delay_ms=20, duration_s=60, queue={"type": "droptail", "limit_packets": 100})
    sc.flow("v", "svc", src="n0", dst="n1", cc={"type": "ppacc", "capacity_bps": 2e6})
    sc.flow("x", kind, src="n0", dst="n1", payload_bytes=472, rate_bps=cross_bps * 472 / 500)
    res = mediasim.run(sc, seed=1)
    s = res.svc_series
    a = s[(s["var"] == "available_bps") & (s["time_s"] > 10)]["value"]
    assert len(a) > 400  # a report every 100 ms
    assert a.mean() == pytest.approx(2e6 - cross_bps, rel=tolerance)


def test_ppacc_carries_the_video_on_a_free_path():
    sc = line(1, rate_bps=10e6, delay_ms=20, duration_s=30)
    sc.flow("v", "svc", src="n0", dst="n1", cc={"type": "ppacc", "capacity_bps": 10e6})
    res = mediasim.run(sc, seed=1)
    s = res.svc.set_index("flow").loc["v"]
    # All but the last frames (less than the last second's worth), still in
    # the send buffer or on the way when the run ends.
    for layer in ("base", "s0_fgs", "s1", "s1_fgs"):
        missing = s[f"offered_bytes_{layer}"] - s[f"decodable_bytes_{layer}"]
        assert 0 <= missing < s[f"offered_bytes_{layer}"] / 30, layer
    assert res.flows.set_index("flow").loc["v", "lost"] == 0
    # No loss: INCREASE all along. The estimate sits at Cb, so its slope is
    # nil and each GOP's step is eps (5 kbit/s): from 300 kbit/s the target
    # reaches the full quality (1.12 Mbit/s) only after about 40 s, and the
    # source climbs the operating points with it.
    target = res.svc_series[res.svc_series["var"] == "rate_bps"]["value"].to_numpy()
    assert len(target) == 112 and (np.diff(target) == 5e3).all() and target[0] == 305e3
    s = res.svc_series
    op = s[s["var"] == "operating_point"]
    assert op[op["time_s"] < 10]["value"].mean() < 6
    assert op[op["time_s"] > 20]["value"].mean() > 7


@pytest.mark.parametrize("fields,path,fragment", [
    ({"cc": {"type": "ppacc"}}, "flows[0].cc.capacity_bps", "must be given (this field has no default)"),
    ({"cc": {"type": "tfrc", "capacity_bps": 1e6}}, "flows[0].cc.capacity_bps", "unknown field"),
    ({"cc": {"type": "ppacc", "capacity_bps": 0}}, "flows[0].cc.capacity_bps", "positive"),
    ({"cc": {"type": "ppacc", "capacity_bps": 1e6, "a_weight": 2}}, "flows[0].cc.a_weight", "(0, 1]"),
    ({"cc": {"type": "fixed", "rate_bps": -1}}, "flows[0].cc.rate_bps", "positive"),
])
def test_ppacc_errors_name_the_field(fields, path, fragment):
    sc = line(1, rate_bps=1e6, delay_ms=1)
    sc.flow("v", "svc", src="n0", dst="n1", **fields)
    assert_field_error(sc, path, fragment)


def binomial_residual(k, n, p_m, p_r, rs=True):
    """Media left missing per media packet, from the binomials by hand."""
    from math import comb

    def left(a, b):  # media still missing with a media and b repair packets in
        return 0 if (a + b >= k if rs else (a == k - 1 and b >= 1) or a == k) else k - a

    r = n - k
    return sum(comb(k, a) * (1 - p_m) ** a * p_m ** (k - a) * comb(r, b) * (1 - p_r) ** b * p_r ** (r - b)
               * left(a, b) for a in range(k + 1) for b in range(r + 1)) / k


@pytest.mark.parametrize("code,k,n,p_m,p_r", [("rs", 4, 6, 0.1, 0.1), ("rs", 8, 10, 0.02, 0.3),
                                              ("rs", 8, 10, 0.3, 0.0), ("xor", 2, 3, 0.5, 0.5),
                                              ("xor", 4, 5, 0.05, 0.2)])
def test_residual_model_matches_the_binomials(code, k, n, p_m, p_r):
    got = mediasim.media.fec_residual_loss(code, k, n, p_m, p_r)
    assert got == pytest.approx(binomial_residual(k, n, p_m, p_r, rs=code == "rs"), rel=1e-9)


@pytest.mark.parametrize("args,field,problem", [
    (("ldpc", 4, 6, 0.1, 0.1), "code", 'unknown "ldpc" (rs or xor)'),
    (("rs: 1", 4, 6, 0.1, 0.1), "code", 'unknown "rs: 1" (rs or xor)'),
    ((None, 4, 6, 0.1, 0.1), "code", "must be text, rs or xor (got None)"),
    (("rs", 6, 6, 0.1, 0.1), "k, n", "(6, 6) is not an rs block (1 <= k < n <= 255)"),
    (("rs", 4, 256, 0.1, 0.1), "k, n", "(4, 256) is not an rs block (1 <= k < n <= 255)"),
    (("xor", 4, 6, 0.1, 0.1), "k, n", "(4, 6) is not an xor block (k >= 1, n = k + 1)"),
    (("xor", 0, 1, 0.1, 0.1), "k, n", "(0, 1) is not an xor block (k >= 1, n = k + 1)"),
    (("rs", 4.5, 6, 0.1, 0.1), "k", "must be a whole number from 0 to 4294967295 (got 4.5)"),
    (("rs", 4, 2 ** 32, 0.1, 0.1), "n", "must be a whole number from 0 to 4294967295 (got 4294967296)"),
    (("rs", True, 6, 0.1, 0.1), "k", "must be a whole number from 0 to 4294967295 (got True)"),
    (("rs", 4, 6, 1.5, 0.1), "p_media", "1.5 is not a probability"),
    (("rs", 4, 6, 0.1, float("nan")), "p_repair", "NaN is not a probability"),
    (("rs", 4, 6, "0.1", 0.1), "p_media", "must be a number (got '0.1')"),
    (("rs", 4, 6, 0.1, None), "p_repair", "must be a number (got None)"),
])
def test_residual_model_names_the_argument_and_its_problem(args, field, problem):
    with pytest.raises(mediasim.ScenarioError) as e:
        mediasim.media.fec_residual_loss(*args)
    assert e.value.errors == [(field, problem)]


def test_fec_repairs_losses_as_the_model_says():
    # 10% random loss on every packet (media and repair alike), RS(6, 4):
    # the media lost after decoding, pooled over 8 runs, against the
    # analytic residual loss of the code.
    k, n, p = 4, 6, 0.1
    model = binomial_residual(k, n, p, p)
    sent = kept = recovered = repairs = repairs_in = 0
    for seed in range(1, 9):
        sc = line(1, rate_bps=20e6, delay_ms=20, duration_s=600, loss={"type": "packet", "rate": p})
        sc.flow("v", "svc", src="n0", dst="n1", cc={"type": "tfrc"}, fec={"code": "rs", "k": k, "n": n})
        sc.measure(packets=False)
        s = mediasim.run(sc, seed=seed).svc.set_index("flow").loc["v"]
        sent += s["media_packets"]
        kept += s["media_packets_kept"]
        recovered += s["fec_recovered_packets"]
        repairs += s["fec_repair_packets"]
        repairs_in += s["fec_repair_received"]
        assert s["media_packets_received"] + s["fec_recovered_packets"] >= s["media_packets_kept"]
    residual = 1 - kept / sent
    assert recovered > 0.8 * p * sent
    assert 1 - repairs_in / repairs == pytest.approx(p, rel=0.1)
    assert residual == pytest.approx(model, rel=0.25), (residual, model)


def test_fec_packets_go_at_their_own_precedence():
    sc = line(1, rate_bps=10e6, delay_ms=20, duration_s=20, queue={"type": "drr", "classes": [
        {"name": "media", "dscp": [10, 12], "queue": {"type": "droptail", "limit_packets": 50}},
        {"name": "fec", "dscp": [14], "queue": {"type": "droptail", "limit_packets": 50}}]})
    sc.flow("v", "svc", src="n0", dst="n1", cc={"type": "tfrc"}, fec={"code": "xor", "k": 4})
    res = mediasim.run(sc, seed=1)
    cls = res.queue_classes[res.queue_classes["direction"] == "n0-n1:n0->n1"].set_index("class")
    s = res.svc.set_index("flow").loc["v"]
    assert cls.loc["fec", "arrivals"] == s["fec_repair_packets"] > 0
    # One parity packet per 4 media packets (the last block may be open).
    assert abs(4 * s["fec_repair_packets"] - s["media_packets"]) <= 4


def test_an_original_arriving_after_its_rebuild_is_kept_once():
    # Repair packets in a strict-priority class overtake the media queued
    # behind CBR traffic: blocks are rebuilt before their originals
    # arrive. Nothing is lost, so every media packet is kept exactly once.
    sc = line(1, rate_bps=2e6, delay_ms=10, duration_s=30, queue={"type": "priority", "classes": [
        {"name": "fec", "dscp": [14], "queue": {"type": "droptail", "limit_packets": 10000}},
        {"name": "media", "dscp": [0, 10, 12], "queue": {"type": "droptail", "limit_packets": 10000}}]})
    sc.flow("v", "svc", src="n0", dst="n1", cc={"type": "tfrc"}, stop_s=15, fec={"code": "rs", "k": 4, "n": 6})
    sc.flow("x", "cbr", src="n0", dst="n1", rate_bps=1.4e6, payload_bytes=1000)
    res = mediasim.run(sc, seed=1)
    s = res.svc.set_index("flow").loc["v"]
    assert res.meta["dropped"] == 0
    assert s["media_packets_received"] == s["media_packets"] > 0
    assert s["fec_recovered_packets"] > 0.2 * s["media_packets"]
    assert s["media_packets_kept"] == s["media_packets"]


def test_svc_trace_files_round_trip_and_drive_a_flow(tmp_path):
    from mediasim import ScenarioError, media

    # Two GOPs of 8 frames at 30 frames/s, base layer only, 1000 bytes.
    units = [[f / 30, 1000, 0, [0, 3, 2, 3, 1, 3, 2, 3][f % 8], 0] for f in range(16)]
    path = media.write_svc_trace(tmp_path / "t.txt", units)
    assert media.read_svc_trace(path) == units
    # The file says its format first, in a comment the reader skips.
    assert path.read_text().splitlines()[0] == (
        "# mediasim SVC trace: time_s bytes spatial temporal quality, one NAL unit per line")
    sc = line(1, rate_bps=10e6, delay_ms=10, duration_s=5)
    sc.flow("v", "svc", src="n0", dst="n1", cc={"type": "tfrc"}, nal_units=media.read_svc_trace(path))
    res = mediasim.run(sc, seed=1)
    s = res.svc.set_index("flow").loc["v"]
    assert s["offered_bytes_base"] <= 16 * 1000 and s["offered_bytes_s1"] == 0
    bad = tmp_path / "bad.txt"
    bad.write_text("0.0 1000 0 0\n")
    with pytest.raises(ScenarioError) as e:
        media.read_svc_trace(bad)
    assert e.value.errors[0][0] == str(bad) and "line 1" in e.value.errors[0][1]
