"""The Dask executor against a real scheduler and two worker processes
started on loopback: the same campaign gives bit-identical tables to the
local process pool's."""

import pandas as pd

import mediasim
from mediasim.campaign import DaskExecutor, read_sweep, run_campaign
from mediasim.sweep import grid


def test_dask_results_equal_local_results(examples, tmp_path):
    from distributed import LocalCluster

    sc = mediasim.load_scenario(examples / "tcp_web_and_voice.toml").with_overrides({"duration_s": 15})
    jobs = grid(sc, {"bulk_window": [10, 20]}, replications=2, seed=3,
                aliases={"bulk_window": "flows[name=bulk].tcp.max_window_packets"})
    run_campaign(jobs, tmp_path / "local", workers=2, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        ex = DaskExecutor(cluster.scheduler_address)
        try:
            report = run_campaign(jobs, tmp_path / "dask", executor=ex, progress=False)
        finally:
            ex.close()
    assert (report.ran, report.failed) == (4, [])
    for table in ("flows", "tcp", "links", "queue_samples"):
        a, b = read_sweep(tmp_path / "local", table), read_sweep(tmp_path / "dask", table)
        assert len(a) > 0, table
        pd.testing.assert_frame_equal(a, b, check_exact=True)
