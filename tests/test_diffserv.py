"""DiffServ queues in whole runs: DRR shares, strict priority, WRED's drop
precedences, DSCP marking in the IPv4 header, and errors."""

import pytest

import mediasim
from mediasim import ScenarioError
from conftest import assert_balanced, line


def three_flows(queue, rate_bps=1e6, duration_s=20, dscps=(0, 10, 18), offered_bps=(1e6,) * 3, kind="cbr"):
    """Three flows into one link (offered: payload bit rates; the wire adds
    28 of every 1000 bytes)."""
    sc = line(1, rate_bps=rate_bps, delay_ms=1, duration_s=duration_s, queue=queue)
    for i, (d, r) in enumerate(zip(dscps, offered_bps)):
        sc.flow(f"f{i}", kind, src="n0", dst="n1", payload_bytes=972, rate_bps=r, dscp=d)
    sc.measure(windows_s=[[5, duration_s]])
    res = mediasim.run(sc, seed=1)
    assert_balanced(res)
    return res


def shares(res):
    w = res.throughput.groupby("flow", observed=True)["bytes"].sum()
    return (w / w.sum()).to_dict()


def drr(weights, limit=50):
    return {"type": "drr", "classes": [
        {"name": f"c{i}", "dscp": [d], "weight": w, "queue": {"type": "droptail", "limit_packets": limit}}
        for i, (d, w) in enumerate(zip((0, 10, 18), weights))]}


def test_drr_gives_each_saturated_class_its_weight_share_within_2_percent():
    res = three_flows(drr((1, 2, 3)))
    got = shares(res)
    for f, want in zip(("f0", "f1", "f2"), (1 / 6, 2 / 6, 3 / 6)):
        assert got[f] == pytest.approx(want, rel=0.02), got
    cls = res.queue_classes[res.queue_classes["direction"] == "n0-n1:n0->n1"].set_index("class")
    assert (cls["drops"] > 0).all() and list(cls.index) == ["c0", "c1", "c2"]


def test_drr_rate_reservations_share_like_weights():
    q = drr((1, 1, 1))
    for c, r in zip(q["classes"], (200e3, 300e3, 500e3)):
        del c["weight"]
        c["rate_bps"] = r
    got = shares(three_flows(q))
    for f, want in zip(("f0", "f1", "f2"), (0.2, 0.3, 0.5)):
        assert got[f] == pytest.approx(want, rel=0.02), got


def test_strict_priority_starves_the_lower_class():
    q = {"type": "priority", "classes": [
        {"name": "ef", "dscp": [46], "queue": {"type": "droptail", "limit_packets": 20}},
        {"name": "be", "queue": {"type": "droptail", "limit_packets": 20}}]}
    # EF offers the whole link (1000-byte packets, 1 Mbit/s on the wire):
    # it loses nothing, and the others get only what slips between its
    # packets (nothing).
    res = three_flows(q, dscps=(46, 0, 0), offered_bps=(0.972e6, 1e6, 1e6))
    f = res.flows.set_index("flow")
    assert f.loc["f0", "loss_rate"] == 0
    got = shares(res)
    assert got["f0"] > 0.99 and got["f1"] + got["f2"] < 0.01
    # With EF at half the link, the other two share the other half.
    res = three_flows(q, dscps=(46, 0, 0), offered_bps=(0.486e6, 1e6, 1e6))
    assert res.flows.set_index("flow").loc["f0", "loss_rate"] == 0
    assert shares(res)["f0"] == pytest.approx(0.5, rel=0.02)


def test_wred_drops_af13_more_than_af12_more_than_af11_under_load():
    prof = lambda d, lo, hi, p: {"dscp": [d], "min_th": lo, "max_th": hi, "max_p": p}  # noqa: E731
    q = {"type": "wred", "limit_packets": 100, "mean_packet_bytes": 1000,
         "profiles": [prof(10, 30, 60, 0.02), prof(12, 15, 45, 0.05), prof(14, 5, 30, 0.1)]}
    res = three_flows(q, dscps=(10, 12, 14), offered_bps=(0.5e6,) * 3, kind="poisson")
    loss = res.flows.set_index("flow")["loss_rate"]
    assert loss["f2"] > loss["f1"] > loss["f0"], loss
    row = res.queues.set_index("direction").loc["n0-n1:n0->n1"]
    assert row["kind"] == "wred" and row["wred_drops_2"] > row["wred_drops_0"]
    # Byte loss ratio per code point from the per-profile byte counts.
    ratio = [row[f"wred_drop_bytes_{i}"] / row[f"wred_arrival_bytes_{i}"] for i in range(3)]
    assert ratio[2] > ratio[1] > ratio[0]
    flows = res.flows.set_index("flow")
    for i, f in enumerate(("f0", "f1", "f2")):
        dropped = sum(flows.loc[f, c] for c in ("dropped_red_early", "dropped_red_forced", "dropped_queue_overflow"))
        assert row[f"wred_drop_bytes_{i}"] == 1000 * dropped, "1000-byte packets, one flow per profile"


def test_dscp_is_carried_in_the_ipv4_header(tmp_path):
    import dpkt

    sc = line(1, rate_bps=1e6, delay_ms=1, duration_s=0.5)
    sc.flow("af", "cbr", src="n0", dst="n1", payload_bytes=100, interval_ms=100, dscp=12)
    sc.measure(pcap=True)
    mediasim.run(sc, seed=1, out=tmp_path)
    pcap = tmp_path / "pcap" / "n0-n1.pcap"
    with open(pcap, "rb") as fh:
        tos = [dpkt.ip.IP(buf).tos for _, buf in dpkt.pcap.Reader(fh)]
    assert tos and all(t >> 2 == 12 for t in tos)


@pytest.mark.parametrize("queue,field,fragment", [
    ({"type": "drr", "classes": []}, "links[0].queue.classes", "at least one class"),
    ({"type": "drr", "classes": [{"name": "a"}]}, "links[0].queue.classes[0].queue", "must be given"),
    ({"type": "drr", "classes": [{"name": "a", "weight": 1, "queue": {"type": "droptail", "limit_packets": 5}},
                                 {"name": "b", "queue": {"type": "droptail", "limit_packets": 5}}]},
     "links[0].queue.classes", "give every class a weight"),
    ({"type": "drr", "classes": [{"name": "a", "rate_bps": 2e6, "queue": {"type": "droptail", "limit_packets": 5}}]},
     "links[0].queue.classes", "more than the link's"),
    ({"type": "drr", "classes": [{"name": "a", "queue": {"type": "red", "min_th": 5, "max_th": 2,
                                                         "limit_packets": 5}}]},
     "links[0].queue.classes[0].queue.max_th", "must be above min_th"),
    ({"type": "wred", "limit_packets": 5, "profiles": [{"dscp": [10], "min_th": 1, "max_th": 2, "max_p": 2}]},
     "links[0].queue.profiles[0].max_p", "(0, 1]"),
])
def test_diffserv_errors_name_the_field(queue, field, fragment):
    sc = line(1, rate_bps=1e6, delay_ms=1, queue=queue)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    assert any(p == field and fragment in m for p, m in e.value.errors), e.value.errors


def test_mpeg_frames_marked_per_type_and_wred_drops_b_frames_first():
    # Application-layer marking: I frames AF11, P AF12, B AF13, into a
    # 0.9 Mbit/s link with WRED (the flow starts at scale 4, 1.06 Mbit/s;
    # its control then backs off and climbs again). Whatever the scale,
    # the queue's drops must fall on B frames first.
    prof = lambda d, lo, hi, p: {"dscp": [d], "min_th": lo, "max_th": hi, "max_p": p}  # noqa: E731
    q = {"type": "wred", "limit_packets": 60, "mean_packet_bytes": 1500, "w_q": 0.02,
         "profiles": [prof(10, 40, 50, 0.02), prof(12, 20, 40, 0.1), prof(14, 2, 10, 0.5)]}
    sc = line(1, rate_bps=0.9e6, delay_ms=10, duration_s=30, queue=q)
    sc.flow("v", "media_scaling", src="n0", dst="n1", app="mpeg", cc={"type": "scale", "initial_level": 4},
            frame_dscp={"I": 10, "P": 12, "B": 14})
    res = mediasim.run(sc, seed=1)
    assert_balanced(res)
    row = res.queues.set_index("direction").loc["n0-n1:n0->n1"]
    af11, af12, af13 = row["wred_drops_0"], row["wred_drops_1"], row["wred_drops_2"]
    assert af13 > 0 and af13 > af12 >= af11, (af11, af12, af13)


def test_frame_dscp_errors():
    sc = line(1, rate_bps=1e6, delay_ms=1)
    sc.flow("v", "media_scaling", src="n0", dst="n1", app="mpeg", frame_dscp={"I": 70})
    sc.flow("w", "media_scaling", src="n0", dst="n1", app="mm", frame_dscp={"I": 10})
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    errs = dict(e.value.errors)
    assert "0..=63" in errs["flows[0].frame_dscp.I"]
    assert "not used by app" in errs["flows[1].frame_dscp"]


def test_a_class_discipline_reports_its_own_values_per_class():
    prof = lambda d, lo, hi, p: {"dscp": [d], "min_th": lo, "max_th": hi, "max_p": p}  # noqa: E731
    wred = {"type": "wred", "limit_packets": 40, "mean_packet_bytes": 1000,
            "profiles": [prof(10, 20, 35, 0.02), prof(12, 5, 20, 0.1)]}
    q = {"type": "drr", "classes": [
        {"name": "af1", "dscp": [10, 12], "weight": 2, "queue": wred},
        {"name": "be", "weight": 1, "queue": {"type": "droptail", "limit_packets": 20}}]}
    res = three_flows(q, dscps=(10, 12, 0), offered_bps=(0.5e6,) * 3, kind="poisson")
    cls = res.queue_classes[res.queue_classes["direction"] == "n0-n1:n0->n1"].set_index("class")
    af1 = cls.loc["af1"]
    assert af1["wred_drop_bytes_1"] > af1["wred_drop_bytes_0"] >= 0
    assert af1["drops"] == af1["wred_drops_0"] + af1["wred_drops_1"]
    assert cls["wred_drops_0"].isna()["be"], "drop-tail reports no WRED values"
