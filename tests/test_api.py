"""The Python API: building, loading, results, Parquet."""

import mediasim
from mediasim import Results
from mediasim.sweep import combine, replications, run_many


def test_builder_and_file_give_the_same_results(examples, tmp_path):
    sc = mediasim.Scenario("pair", duration_s=3).measure(packets=True)
    sc.node("a").node("b").link("a", "b", rate_bps=1e6, delay_ms=5)
    sc.flow("f", "poisson", src="a", dst="b", payload_bytes=500, rate_pps=100)
    import json

    path = tmp_path / "pair.json"
    path.write_text(json.dumps(sc.to_dict()))
    a = mediasim.run(sc, seed=2)
    b = mediasim.run(path, seed=2)
    assert a.packets.equals(b.packets)


def test_parquet_round_trip(examples, tmp_path):
    sc = mediasim.load_scenario(examples / "multicast_tree.yaml").measure(packets=True)
    res = mediasim.run(sc, seed=1, out=tmp_path / "r")
    back = Results.read_parquet(tmp_path / "r")
    assert back.meta["delivered"] == res.meta["delivered"]
    assert set(back.tables) == set(res.tables)
    assert back.flows.equals(res.flows)
    assert list(back.packets["receiver"].cat.categories) == list(res.packets["receiver"].cat.categories)


def test_replications_and_combine(examples):
    jobs = replications(examples / "dumbbell.toml", 3, seed=5, variant="base")
    results = run_many(jobs, workers=2, progress=False)
    flows = combine(results, "flows")
    assert list(flows.columns[:3]) == ["variant", "seed", "replication"]
    assert sorted(flows["replication"].unique()) == [0, 1, 2]
    assert len(flows) == 3 * 3
