"""A run split into partitions (``parallel.partitions``, docs/scenario.md
"Parallel runs") gives the results of the run in one piece: every count,
summary and application table the same to the bit, and the per-packet logs
the same rows (their order within one instant, and packet ids, may differ).
The oracle is the same scenario run in one piece."""

import warnings

import pandas as pd
import pytest

import mediasim
from mediasim.validation import bench

# Logs whose rows at one instant in two partitions may come in another
# order than in one piece (and whose packet ids are numbered per partition).
LOGS = {"packets", "drops", "trace"}


def split(scenario: dict, partitions: int = 2) -> dict:
    return {**scenario, "parallel": {"partitions": partitions}}


def lossy_dumbbell() -> dict:
    """The example dumbbell with losses drawn on the cut itself (a Gilbert-
    Elliott bottleneck: its loss runs mix queue drops on one side of the cut
    with wire losses on the other) and every measurement on."""
    sc = mediasim.load_scenario("examples/dumbbell.toml").to_dict()
    for link in sc["links"]:
        if link.get("name") == "bottleneck":
            link["loss"] = {"type": "gilbert_elliott", "p_good_to_bad": 0.01, "p_bad_to_good": 0.3}
    sc["measure"] = {"packets": True, "series": True, "trace": True, "queue_sample_ms": 10,
                     "capacity_interval_ms": 100, "warmup_s": 1, "windows_s": [[2, 5], [5, 20]]}
    return sc


SCENARIOS = {
    "tcp-dumbbell": lambda: bench.tcp_dumbbell(16, 10),
    # Ends mid-window, packets on the cut's wire.
    "tcp-dumbbell-ending-mid-window": lambda: bench.tcp_dumbbell(16, 5.013),
    "calls": lambda: bench.calls(8, 5),
    "gcc-calls-with-cubic": lambda: bench.gcc_calls(20, 5),
    "lossy-dumbbell-all-measured": lossy_dumbbell,
    # Multicast: RMTP's data down a tree of DRs cut at their 40 ms links,
    # and an RTP group whose RTCP rows are pooled over members in both
    # partitions.
    "rmtp-tree": lambda: bench.rmtp_tree(1000, 20),
    "rtp-group": lambda: bench.rtp_group(300, 20),
}


def same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = [c for c in a.columns if c != "packet_id"]
    assert list(a.columns) == list(b.columns)
    a, b = a[cols].astype(str), b[cols].astype(str)
    pd.testing.assert_frame_equal(a.sort_values(cols, ignore_index=True), b.sort_values(cols, ignore_index=True))
    if "time_ns" in cols:  # each log stays in time order
        assert list(a["time_ns"]) == list(b["time_ns"])


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_split_run_has_the_results_of_the_run_in_one_piece(name):
    sc = SCENARIOS[name]()
    one = mediasim.run(sc, seed=3)
    two = mediasim.run(split(sc), seed=3)
    assert set(one.tables) == set(two.tables)
    for t in one.tables:
        if t in LOGS:
            same_rows(one.tables[t], two.tables[t])
        else:
            pd.testing.assert_frame_equal(one.tables[t], two.tables[t], check_exact=True, obj=t)
    for key in ("delivered", "dropped", "in_flight", "originated", "loss_runs_late"):
        assert one.meta[key] == two.meta[key], key
    assert two.meta["partitions"] == 2 and "partitions" not in one.meta
    # The dumbbells' cut is their 20 ms bottleneck, the RMTP tree's its
    # 40 ms links to the DRs, the RTP group's its 5 ms links.
    window_ms = {"rmtp-tree": 40, "rtp-group": 5}.get(name, 20)
    assert two.meta["window_ns"] == window_ms * 1_000_000
    if name == "lossy-dumbbell-all-measured":
        assert one.links.loc[one.links.link == "bottleneck", "lost_packets"].sum() > 0
        assert len(one.loss_runs) > 0 and one.flows.lost.sum() > 0


def test_a_split_run_is_repeatable_to_the_packet_ids():
    sc = lossy_dumbbell()
    a = mediasim.run(split(sc), seed=5)
    b = mediasim.run(split(sc), seed=5)
    for t in a.tables:
        pd.testing.assert_frame_equal(a.tables[t], b.tables[t], check_exact=True, obj=t)
    ids = a.trace.packet_id.unique()
    assert len(ids) == a.meta["originated"]  # unique per packet across partitions


def test_more_partitions_than_the_cut_gives_groups_cut_the_next_longest_links():
    """Three partitions of a dumbbell cut its 1 ms access links too. Packets
    from two senders then reach the bottleneck's router at the same
    nanosecond from two partitions, and queue in partition order rather
    than in the order they were sent in: another, equally valid, order of
    a tie, after which the TCP flows take other courses. The run is still
    repeatable and its books close; the totals stay close."""
    sc = bench.tcp_dumbbell(8, 5)
    three = mediasim.run(split(sc, 3), seed=1)
    again = mediasim.run(split(sc, 3), seed=1)
    one = mediasim.run(sc, seed=1)
    pd.testing.assert_frame_equal(three.flows, again.flows, check_exact=True)
    assert three.meta["window_ns"] == 1_000_000  # the 1 ms access links
    f = three.flows
    assert (f.sent == f.received + f.lost + f.in_flight).all()
    assert three.meta["delivered"] == pytest.approx(one.meta["delivered"], rel=0.02)


@pytest.mark.parametrize("patch,says", [
    ({"parallel": {"partitions": 0}}, "must be from 1 to 16"),
    ({"parallel": {"partitions": 17}}, "must be from 1 to 16"),
    ({"parallel": {"partitions": 2, "threads": 2}}, "threads"),
    ({"parallel": {"partitions": 2}, "measure": {"pcap": True}}, "pcap"),
])
def test_bad_splits_are_errors_naming_the_field(patch, says):
    sc = {**mediasim.load_scenario("examples/dumbbell.toml").to_dict(), **patch}
    with pytest.raises(mediasim.ScenarioError) as e:
        mediasim.run(sc)
    assert "parallel" in str(e.value) and says in str(e.value)


def test_a_scenario_with_no_long_link_cannot_split():
    sc = mediasim.load_scenario("examples/dumbbell.toml").to_dict()
    for link in sc["links"]:
        link["delay_ms"] = 0.05
    with pytest.raises(mediasim.ScenarioError) as e:
        mediasim.run(split(sc))
    assert "parallel.partitions" in str(e.value) and "no split into 2 partitions" in str(e.value)


def test_a_multicast_example_splits_with_the_same_results():
    sc = mediasim.load_scenario("examples/multicast_tree.yaml").to_dict()
    sc["measure"] = {"packets": True}
    one, two = mediasim.run(sc, seed=2), mediasim.run(split(sc), seed=2)
    for t in ("flows", "loss_runs", "links", "queues"):
        pd.testing.assert_frame_equal(one.tables[t], two.tables[t], check_exact=True, obj=t)
    same_rows(one.packets, two.packets)
    assert two.meta["multicast_copies"] == one.meta["multicast_copies"] > 0


def test_an_event_budget_ends_a_split_run_at_a_window_with_its_books_closed():
    sc = bench.tcp_dumbbell(8, 10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = mediasim.run(split(sc), max_events=20_000)
    assert any(issubclass(w.category, mediasim.RunStoppedEarly) for w in caught)
    assert "max_events 20000 reached" in r.meta["stopped_early"]
    # Stopped at the end of a 20 ms window, within one window's events.
    assert r.meta["end_ns"] % 20_000_000 == 20_000_000 - 1
    assert 20_000 <= r.meta["events"] < 40_000
    f = r.flows
    assert (f.sent == f.received + f.lost + f.in_flight).all()


def test_pcap_asked_for_at_run_time_is_refused_for_a_split_run(tmp_path):
    sc = split(mediasim.load_scenario("examples/dumbbell.toml").to_dict())
    with pytest.raises(mediasim.ScenarioError, match="parallel.partitions"):
        mediasim.run(sc, pcap=True, out=tmp_path / "run")
    assert not (tmp_path / "run").exists()
