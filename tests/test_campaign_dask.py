"""The Dask executor against a real scheduler and two worker processes
started on loopback: the same campaign gives bit-identical tables to the
local process pool's."""

import sys

import pandas as pd
import pytest

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


def test_a_study_campaign_on_dask_gives_the_local_tables(tmp_path):
    """A study's runs go to the cluster through the campaign folder; the
    study's tables equal the local pool's."""
    from distributed import LocalCluster

    from mediasim.campaign.spec import load_campaign
    from mediasim.campaign.study_run import run_study_campaign

    f = tmp_path / "c.toml"
    f.write_text('study = "iw10"\nout = "local"\nquick = true\nreplications = 2\n[set]\nflows = [1]\naccesses = ["wired"]\n'
                 '[grid]\nbottleneck_rate_bps = [1e6, 2e6]\n')
    local = load_campaign(f)
    run_study_campaign(local, progress=False)
    on_dask = load_campaign(f)
    on_dask.out = tmp_path / "dask"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        ex = DaskExecutor(cluster.scheduler_address)
        try:
            report = run_study_campaign(on_dask, progress=False, executor=ex)
        finally:
            ex.close()
    assert (report.ran, report.runs_ran, report.failed) == (2, 8, [])
    for table in ("summary", "tcp"):
        pd.testing.assert_frame_equal(read_sweep(local.out, table), read_sweep(on_dask.out, table), check_exact=True)


def test_a_scheduler_address_that_cannot_be_used_is_named_before_the_folder_is_made(tmp_path, examples):
    from click.testing import CliRunner

    from mediasim.cli import main

    out = tmp_path / "sweep"
    r = CliRunner().invoke(main, ["-q", "sweep", str(examples / "dumbbell.toml"), "--vary", "duration_s=5",
                                  "--scheduler", "no-port-here", "--out", str(out)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "Dask scheduler 'no-port-here': missing port number" in r.output
    assert not out.exists()
    # A tls:// address without a TLS configuration: Dask's TypeError, named.
    r = CliRunner().invoke(main, ["-q", "sweep", str(examples / "dumbbell.toml"), "--vary", "duration_s=5",
                                  "--scheduler", "tls://127.0.0.1:1", "--out", str(out)])
    assert (r.exit_code, r.stdout) == (2, "") and not out.exists(), r.output
    assert r.stderr.startswith("error: Dask scheduler 'tls://127.0.0.1:1': TLS expects a `ssl_context` argument")


def test_an_empty_scheduler_address_is_refused_not_taken_for_the_local_pool(tmp_path, examples):
    from click.testing import CliRunner

    from mediasim.campaign.executors import make_executor
    from mediasim.cli import main

    f = tmp_path / "c.toml"
    f.write_text(f'scenario = "{examples / "dumbbell.toml"}"\nout = "o"\n[grid]\nduration_s = [5]\n')
    for args in (["sweep", str(examples / "dumbbell.toml"), "--vary", "duration_s=5", "--out", str(tmp_path / "s")],
                 ["campaign", str(f)]):
        for blank in ("", " "):
            r = CliRunner().invoke(main, [*args, "--scheduler", blank])
            assert r.exit_code == 2 and "Invalid value for '--scheduler': an empty address; give one such as " \
                                       "tcp://host:8786" in r.stderr, r.output
    f.write_text(f.read_text().replace("[grid]", 'scheduler = " "\n[grid]'))
    r = CliRunner().invoke(main, ["campaign", str(f)])
    assert (r.exit_code, r.stderr) == (2, f"error: {f}: scheduler: must be an address such as tcp://host:8786\n")
    with pytest.raises(ValueError) as e:
        make_executor(2, "")
    assert str(e.value) == "scheduler: an empty address (give one such as tcp://host:8786, or none)"
    assert not (tmp_path / "o").exists() and not (tmp_path / "s").exists()


def test_a_dry_run_names_a_scheduler_that_cannot_be_used(tmp_path, examples):
    from click.testing import CliRunner

    from mediasim.cli import main

    out = tmp_path / "sweep"
    r = CliRunner().invoke(main, ["sweep", str(examples / "dumbbell.toml"), "--vary", "duration_s=5", "--dry-run",
                                  "--scheduler", "no-port-here", "--out", str(out)])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == "error: Dask scheduler 'no-port-here': missing port number in address 'no-port-here'\n"
    assert not out.exists()
    f = tmp_path / "c.toml"
    f.write_text('study = "iw10"\nout = "o"\nquick = true\nscheduler = "no-port-here"\n[grid]\ninitial_windows = [[1]]\n')
    r = CliRunner().invoke(main, ["campaign", str(f), "--dry-run"])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == "error: Dask scheduler 'no-port-here': missing port number in address 'no-port-here'\n"
    assert not (tmp_path / "o").exists()


def test_a_client_given_is_used_and_left_open_and_without_dask_the_install_is_named(monkeypatch):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        ex = DaskExecutor(client)
        assert ex.client is client
        assert sorted(ex.map_unordered(abs, [-2, 1, -3])) == [1, 2, 3]
        ex.close()  # not this executor's to close
        assert client.status == "running"
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask were not installed
    with pytest.raises(ImportError, match=r"^the Dask executor needs dask\.distributed: pip install "
                                          r"'mediasim\[cluster\]'$"):
        DaskExecutor("tcp://127.0.0.1:8786")


def _tasks_left(client) -> dict[str, str]:
    """The scheduler's tasks and their states, polled until none is left
    or 2 s have passed (the tasks stopped sleep 3 s)."""
    import time

    end = time.monotonic() + 2
    while (left := client.run_on_scheduler(lambda dask_scheduler: {k: v.state for k, v in
                                                                    dask_scheduler.tasks.items()})) \
            and time.monotonic() < end:
        time.sleep(0.1)
    return left


def test_a_campaign_stopped_part_way_or_by_an_error_leaves_the_cluster_no_task():
    """Stopping (a run's error, a kill of the loop reading results) cancels
    what is still queued or running, so the cluster is free for the next
    campaign rather than busy with runs whose results nobody reads."""
    import time

    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        ex = DaskExecutor(cluster.scheduler_address)
        try:
            results = ex.map_unordered(time.sleep, [0] + [3] * 4)
            assert next(results) is None
            results.close()
            assert _tasks_left(ex.client) == {}
            with pytest.raises(ValueError, match="sleep length must be non-negative"):
                list(ex.map_unordered(time.sleep, [-1] + [3] * 4))
            assert _tasks_left(ex.client) == {}
        finally:
            ex.close()


def test_clients_that_fail_while_made_do_not_hang_the_next_one():
    """A client that fails while it is made (a malformed address) is closed
    at once: left to the garbage collector, its close ran inside the next
    client's start, which holds the lock that close waits for, and the
    process hung. A collection at every allocation makes that certain
    here; the process must end, and say each error."""
    import subprocess

    code = ("import gc\nfrom mediasim.campaign import DaskExecutor\nfrom mediasim.errors import CampaignError\n"
            "gc.set_threshold(1, 1, 1)\nfor _ in range(4):\n    try:\n        DaskExecutor('no-port-here')\n"
            "    except CampaignError as e:\n        print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Dask scheduler 'no-port-here': missing port number in address 'no-port-here'\n" * 4
