"""Same scenario and seed: bit-identical results. Random streams are per
component, so adding a component never shifts another one's numbers."""

import pandas as pd

import mediasim
from mediasim.sweep import Job, run_many


def logged(path) -> mediasim.Scenario:
    """An example with every per-packet table and series kept, so that the
    comparisons below cover them."""
    return mediasim.load_scenario(path).measure(packets=True, series=True)


def tables_equal(a, b) -> bool:
    for name in ("flows", "packets", "drops", "queues", "links", "queue_samples"):
        try:
            pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
        except AssertionError:
            return False
    return True


def test_same_seed_identical_other_seed_different(examples):
    a = mediasim.run(logged(examples / "dumbbell.toml"), seed=7)
    b = mediasim.run(logged(examples / "dumbbell.toml"), seed=7)
    assert tables_equal(a, b)
    c = mediasim.run(logged(examples / "dumbbell.toml"), seed=8)
    assert not tables_equal(a, c)
    d = mediasim.run(logged(examples / "dumbbell.toml"), seed=7, replication=1)
    assert not tables_equal(a, d)


def test_parallel_runs_equal_sequential_runs(examples):
    jobs = [Job(logged(examples / "dumbbell.toml").to_dict(), seed=3, replication=r) for r in range(4)]
    par = run_many(jobs, workers=2, progress=False)
    seq = run_many(jobs, workers=1, progress=False)
    assert all(tables_equal(x, y) for x, y in zip(par, seq))
    assert [r.meta["replication"] for r in par] == [0, 1, 2, 3]


def _lossy_line(extra_flow: bool) -> mediasim.Scenario:
    sc = mediasim.Scenario("iso", duration_s=5).measure(packets=True)
    for n in ("a", "b", "c", "d"):
        sc.node(n)
    sc.link("a", "b", rate_bps=10e6, delay_ms=1, loss={"type": "packet", "rate": 0.1})
    sc.link("c", "d", rate_bps=10e6, delay_ms=1, loss={"type": "packet", "rate": 0.3})
    sc.flow("main", "cbr", src="a", dst="b", payload_bytes=200, interval_ms=2)
    if extra_flow:
        sc.flow("other", "poisson", src="c", dst="d", payload_bytes=300, rate_pps=400)
    return sc


def test_adding_a_component_does_not_shift_other_streams():
    base = mediasim.run(_lossy_line(False), seed=1)
    more = mediasim.run(_lossy_line(True), seed=1)
    lost_base = base.drops[base.drops["flow"] == "main"]["seq"].tolist()
    lost_more = more.drops[more.drops["flow"] == "main"]["seq"].tolist()
    assert lost_base and lost_base == lost_more


def test_tcp_and_rtp_runs_are_bit_identical(examples):
    for name, extra in (("tcp_web_and_voice.toml", ("tcp", "tcp_series")), ("rtp_avpf_multicast.yaml", ("rtp",))):
        a = mediasim.run(logged(examples / name), seed=5)
        b = mediasim.run(logged(examples / name), seed=5)
        assert tables_equal(a, b), name
        for t in extra:
            pd.testing.assert_frame_equal(a.tables[t], b.tables[t], check_exact=True)
        c = mediasim.run(logged(examples / name), seed=6)
        assert not a.packets.equals(c.packets), name
