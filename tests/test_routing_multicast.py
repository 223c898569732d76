"""Shortest-path unicast routing and multicast delivery along trees."""

import mediasim
from conftest import assert_balanced


def diamond(metric="hops", routes=None):
    # a - b - d is 2 hops of 50 ms; a - c1 - c2 - d is 3 hops of 1 ms.
    sc = mediasim.Scenario("diamond", duration_s=2)
    for n in ("a", "b", "c1", "c2", "d"):
        sc.node(n)
    sc.link("a", "b", rate_bps=10e6, delay_ms=50)
    sc.link("b", "d", rate_bps=10e6, delay_ms=50)
    sc.link("a", "c1", rate_bps=10e6, delay_ms=1)
    sc.link("c1", "c2", rate_bps=10e6, delay_ms=1)
    sc.link("c2", "d", rate_bps=10e6, delay_ms=1)
    sc.data["routing"] = {"metric": metric, "routes": routes or []}
    sc.flow("f", "cbr", src="a", dst="d", payload_bytes=100, interval_ms=10, max_packets=10)
    return sc


def carried(res, direction):
    return int(res.links.set_index("direction").loc[direction, "tx_packets"])


def test_hop_metric_takes_fewest_hops_and_delay_metric_fastest_path():
    hops = mediasim.run(diamond("hops"))
    assert carried(hops, "a-b:a->b") == 10 and carried(hops, "a-c1:a->c1") == 0
    fast = mediasim.run(diamond("delay"))
    assert carried(fast, "a-c1:a->c1") == 10 and carried(fast, "a-b:a->b") == 0
    assert fast.flows["delay_max_ms"].iloc[0] < 5 < hops.flows["delay_min_ms"].iloc[0]


def test_explicit_route_overrides_computed_one():
    res = mediasim.run(diamond("hops", routes=[{"node": "a", "dst": "d", "next_hop": "c1"}]))
    assert carried(res, "a-c1:a->c1") == 10
    assert carried(res, "c2-d:c2->d") == 10


def test_multicast_sends_one_copy_per_tree_link(examples):
    res = mediasim.run(examples / "multicast_tree.yaml", seed=2)
    assert_balanced(res)
    sent = int(res.flows["sent"].iloc[0])
    links = res.links.set_index("direction")
    tree_links = ["src-core:src->core", "core-agg1:core->agg1", "core-agg2:core->agg2",
                  "agg1-m1:agg1->m1", "agg2-m6:agg2->m6"]
    for d in tree_links:
        # every packet still in the pipeline at the end was sent at most once
        assert sent - 3 <= links.loc[d, "tx_packets"] <= sent
    reverse = [d for d in links.index if d.split(":")[1].split("->")[0] in ("m1", "m2", "m3", "m4", "m5", "m6")]
    assert all(links.loc[d, "tx_packets"] == 0 for d in reverse)
    assert sorted(res.flows["receiver"]) == ["m1", "m2", "m3", "m4", "m5", "m6"]
    # core splits in 2, agg1 and agg2 in 3: 5 extra copies, one per receiver beyond the first
    assert res.meta["multicast_copies"] == sent * 5


def test_multicast_drop_upstream_is_charged_to_every_receiver_below():
    sc = mediasim.Scenario("mc", duration_s=3).measure(packets=True)
    for n in ("s", "r", "x", "y", "z"):
        sc.node(n)
    sc.link("s", "r", rate_bps=10e6, delay_ms=1, loss={"type": "explicit", "ordinals": [3, 4]})
    sc.link("r", "x", rate_bps=10e6, delay_ms=1)
    sc.link("r", "y", rate_bps=10e6, delay_ms=1, ab={"loss": {"type": "explicit", "ordinals": [9]}})
    sc.link("s", "z", rate_bps=10e6, delay_ms=1)
    sc.group("g", ["x", "y", "z", "s"])
    sc.flow("m", "cbr", src="s", group="g", payload_bytes=100, interval_ms=10, max_packets=20)
    res = mediasim.run(sc)
    assert_balanced(res)
    f = res.flows.set_index("receiver")
    assert f.loc["x", "lost"] == 2 and f.loc["y", "lost"] == 3 and f.loc["z", "lost"] == 0
    assert f.loc["z", "received"] == 20
    assert "s" not in f.index  # the sender does not receive its own packets
    assert len(res.drops) == 3  # one copy dropped upstream, one on the y branch
