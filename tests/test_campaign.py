"""Campaigns you can trust: a run is keyed by what determines its result,
finished runs are reused, damaged or partial ones run again, failures are
recorded without stopping the others, a kill at any moment loses and
duplicates nothing, and the tables read back with a column per
parameter."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import mediasim
from mediasim.campaign import read_sweep, run_campaign, summary, to_xarray
from mediasim.campaign.store import RunStore
from mediasim.errors import CampaignError
from mediasim.sweep import grid

ALIASES = {"interval": "flows[name=voice].interval_ms"}


def jobs(examples, duration_s=3, intervals=(10, 20), replications=2, **overrides):
    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": duration_s, **overrides})
    return grid(sc, {"interval": list(intervals)}, replications=replications, seed=1, aliases=ALIASES)


def _pid_after(ms):
    time.sleep(ms / 1000)
    return ms, os.getpid()


def _fail_in_helper(task):
    """Raises ``error`` (an exception type) in a helper; here, sleeps ``ms``."""
    error, ms = task
    if os.getpid() != MAIN_PID:
        raise error(f"task {ms} failed")
    time.sleep(ms / 1000)
    return ms


def _die_in_helper(marker):
    """A helper leaves ``marker`` and dies at its first task; this process
    waits in its task until a helper has (however slowly helpers start
    under load), so some task is always lost."""
    if os.getpid() != MAIN_PID:
        Path(marker).touch()
        os._exit(3)
    deadline = time.monotonic() + 60
    while not Path(marker).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return marker


MAIN_PID = os.getpid()


def test_the_local_pool_shares_runs_between_this_process_and_its_helpers(capfd):
    # This process and a helper claim tasks from one counter: every task
    # runs once, both run some, and the results come as runs end.
    from mediasim.campaign import LocalExecutor

    tasks = [10 + k for k in range(40)]
    out = list(LocalExecutor(2).map_unordered(_pid_after, tasks))
    assert sorted(ms for ms, _ in out) == tasks
    pids = {pid for _, pid in out}
    assert os.getpid() in pids and len(pids) == 2
    # Balanced to the last task: neither process did much more than half
    # the work (tasks of 10-49 ms, so a share within one task's length).
    mine = sum(ms for ms, pid in out if pid == os.getpid())
    assert abs(mine - sum(tasks) / 2) < 150
    # Two tasks are shared too (the helper takes the second while this
    # process runs the first); one runs here alone.
    two = list(LocalExecutor(2).map_unordered(_pid_after, [600, 601]))
    assert sorted(ms for ms, _ in two) == [600, 601] and len({pid for _, pid in two}) == 2
    assert list(LocalExecutor(2).map_unordered(_pid_after, [1])) == [(1, os.getpid())]
    assert list(LocalExecutor(1).map_unordered(_pid_after, [1, 2])) == [(1, os.getpid()), (2, os.getpid())]
    # The helpers end quietly once the tasks run out (a helper's traceback
    # would be on this process's stderr, which they share).
    assert capfd.readouterr().err == ""


def test_the_default_workers_are_the_cpus_this_process_may_use(monkeypatch):
    """The OS's count for this process (Python 3.13's process_cpu_count),
    else its affinity mask, else the machine's count; at least one."""
    from mediasim.campaign import LocalExecutor
    from mediasim.campaign.executors import available_cpus

    monkeypatch.setattr(os, "process_cpu_count", lambda: 3, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 4} if pid == 0 else set(), raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert available_cpus() == 3 and LocalExecutor().workers == 3
    monkeypatch.delattr(os, "process_cpu_count")
    assert available_cpus() == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {1} if pid == 0 else set())
    assert available_cpus() == 1
    monkeypatch.delattr(os, "sched_getaffinity")
    assert available_cpus() == 8
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # the OS cannot tell
    assert available_cpus() == 1
    monkeypatch.setattr(os, "process_cpu_count", lambda: None, raising=False)
    assert available_cpus() == 1
    assert LocalExecutor(5).workers == 5
    from mediasim.campaign.executors import make_executor

    assert isinstance(make_executor(5), LocalExecutor) and make_executor(5).workers == 5
    assert make_executor().workers == 1  # the CPUs available: unknown, as patched above
    import numpy as np

    assert LocalExecutor(np.int64(3)).workers == 3 and type(LocalExecutor(np.int64(3)).workers) is int
    for bad in (0, -1, 1.5, float("nan"), True, "2", [2]):
        for make in (LocalExecutor, make_executor, lambda w: make_executor(w, "tcp://127.0.0.1:1")):
            with pytest.raises(ValueError) as e:
                make(bad)
            assert str(e.value) == f"workers must be an integer from 1 to 2**64 - 1 (got {bad!r})"


def test_an_error_in_a_helper_is_raised_here_with_its_traceback():
    from mediasim.campaign import LocalExecutor

    with pytest.raises(ValueError, match=r"task \d+ failed") as e:
        list(LocalExecutor(2).map_unordered(_fail_in_helper, [(ValueError, 200)] * 4))
    assert "in a helper process" in str(e.value.__cause__) and "_fail_in_helper" in str(e.value.__cause__)


class _Unpicklable(Exception):
    """An exception that cannot cross a pipe: it holds a lock."""

    def __init__(self, msg):
        super().__init__(msg)
        import threading

        self.lock = threading.Lock()


def _helpers_end_apart(marker):
    """The first helper to start runs one long task; the other helper's
    tasks outlast this process's, so that it ends while this process
    waits for the first helper's result."""
    if os.getpid() == MAIN_PID:
        time.sleep(0.02)
    else:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            time.sleep(1.5)
        except FileExistsError:
            time.sleep(0.05)
    return os.getpid()


def test_a_helper_that_ends_first_does_not_end_the_wait_for_the_others(tmp_path):
    from mediasim.campaign import LocalExecutor

    pids = list(LocalExecutor(3).map_unordered(_helpers_end_apart, [str(tmp_path / "first")] * 20))
    assert len(pids) == 20 and os.getpid() in pids  # every result, none lost with the first helper's end


def _raise_here_or_mark(folder):
    if os.getpid() == MAIN_PID:
        raise ValueError("a task failed here")
    time.sleep(0.2)
    Path(folder, str(time.monotonic_ns())).touch()
    return 0


def test_an_error_here_stops_the_helpers_at_once(tmp_path):
    from mediasim.campaign import LocalExecutor

    with pytest.raises(ValueError, match="a task failed here"):
        list(LocalExecutor(3).map_unordered(_raise_here_or_mark, [str(tmp_path)] * 20))
    time.sleep(0.6)  # a helper left running would have finished a task or two by now
    assert not any(tmp_path.iterdir())


def _one_dies_one_outlasts(folder):
    """The first helper to start dies at its first task; the other's tasks
    are long, so that its results come both while this process runs its
    own short tasks and after."""
    if os.getpid() == MAIN_PID:
        time.sleep(0.02)
        return 0
    try:
        os.close(os.open(Path(folder, "dies"), os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        time.sleep(0.3)
        return 1
    os._exit(3)


def test_a_run_lost_by_one_helper_is_reported_while_another_helper_returns_its_own(tmp_path):
    from mediasim.campaign import LocalExecutor
    from mediasim.campaign.executors import WorkerDied

    with pytest.raises(WorkerDied, match=r"^1 of 25 runs lost: a helper process ended without returning its run "
                                         r"\(exit codes (3, 0|0, 3); a negative code is the signal that ended it, -9 "
                                         r"often the kernel's out-of-memory killer\)$"):
        list(LocalExecutor(3).map_unordered(_one_dies_one_outlasts, [str(tmp_path)] * 25))


def test_a_helpers_error_that_cannot_be_pickled_comes_back_as_its_type_and_message_with_its_traceback():
    from mediasim.campaign import LocalExecutor

    with pytest.raises(RuntimeError, match=r"^_Unpicklable: task 200 failed$") as e:
        list(LocalExecutor(2).map_unordered(_fail_in_helper, [(_Unpicklable, 200)] * 4))
    assert "in a helper process" in str(e.value.__cause__) and "_fail_in_helper" in str(e.value.__cause__)


def test_a_helper_that_dies_is_reported_not_waited_for(tmp_path):
    from mediasim.campaign import LocalExecutor
    from mediasim.campaign.executors import WorkerDied

    marker = str(tmp_path / "helper-started")
    with pytest.raises(WorkerDied, match=r"runs lost: .*exit codes 3"):
        list(LocalExecutor(2).map_unordered(_die_in_helper, [marker] * 3))


def test_a_changed_scenario_is_a_new_run_and_an_unchanged_one_is_reused(examples, tmp_path):
    r1 = run_campaign(jobs(examples), tmp_path, workers=1, progress=False)
    assert (r1.runs, r1.ran, r1.reused) == (4, 4, 0)
    again = run_campaign(jobs(examples), tmp_path, workers=1, progress=False)
    assert (again.ran, again.reused) == (0, 4)
    # Same labels, seed and replications, another scenario: all new runs,
    # and reading back gives the new scenario's results, not the old ones.
    changed = run_campaign(jobs(examples, duration_s=4), tmp_path, workers=1, progress=False)
    assert (changed.ran, changed.reused) == (4, 0)
    flows = read_sweep(tmp_path)
    assert set(flows["interval"]) == {10, 20}
    voice = flows[flows["flow"] == "voice"]
    assert (voice["stop_s"] == 4.0).all()


def test_every_run_folder_describes_itself(examples, tmp_path):
    run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False)
    store = RunStore(tmp_path, {})
    folders = [d for d in store.runs.iterdir() if not d.name.startswith(".")]
    assert len(folders) == 2
    for d in folders:
        info = json.loads((d / "run.json").read_text())
        assert set(info) >= {"labels", "seed", "replication", "engine_version", "engine_build", "files"}
        sc = json.loads((d / "scenario.json").read_text())
        assert sc["flows"][0]["interval_ms"] == info["labels"]["interval"]
        # The run's metadata is embedded in each Parquet file too.
        assert mediasim.results.parquet_meta(d / "flows.parquet")["labels"] == info["labels"]


def test_the_same_campaign_writes_the_same_bytes(examples, tmp_path):
    digests = []
    for d in ("a", "b"):
        # The same folder name: the campaign's tables embed it.
        out = tmp_path / d / "out"
        run_campaign(jobs(examples, replications=1), out, workers=1, progress=False)
        files = sorted(p for p in out.rglob("*") if p.is_file())
        digests.append({str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files})
    assert digests[0] == digests[1]
    assert sum(name.endswith("run.json") for name in digests[0]) == 2


LOGS = {"measure.packets": True, "measure.trace": True, "measure.series": True}


@pytest.mark.parametrize("name, overrides", [
    ("dumbbell.toml", {}), ("tcp_web_and_voice.toml", {}), ("rtp_avpf_multicast.yaml", {}), ("rmtp_tree.yaml", {}),
    ("dumbbell.toml", {**LOGS, "duration_s": 4}), ("tcp_web_and_voice.toml", {**LOGS, "duration_s": 12}),
])
def test_stored_tables_are_the_bytes_pandas_and_pyarrow_make(examples, name, overrides, monkeypatch):
    """A campaign stores each table through kept schemas, converting the
    engine's columns without making DataFrames: the very bytes of
    ``pa.Table.from_pandas`` on the table's DataFrame, for a first run
    (nothing kept yet) and another (everything kept), whatever the number
    of rows; with every log on, so that coded columns (with their -1 for
    none), categorical text and derived columns are all converted."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from mediasim import _engine
    from mediasim.campaign.keys import canonical
    from mediasim import table_columns
    from mediasim.results import HOST_FACTS, META_KEY, Results, parquet_tables

    monkeypatch.setattr(table_columns, "_SCHEMAS", {})
    text = canonical(mediasim.load_scenario(examples / name).with_overrides(overrides).to_dict())
    for replication in (0, 1):
        raw, meta_json = _engine.run(text, seed=1, replication=replication)
        stored = parquet_tables(Results.from_engine(raw, meta_json))
        res = Results.from_engine(raw, meta_json)
        assert set(stored) == set(res.tables) and len(stored) > 10
        for table, df in res.tables.items():
            t = pa.Table.from_pandas(df, preserve_index=False)
            # The run's metadata without host facts (its wall time).
            meta = {k: v for k, v in res.meta.items() if k not in HOST_FACTS}
            t = t.replace_schema_metadata({**t.schema.metadata, META_KEY: json.dumps(meta, sort_keys=True)})
            buf = io.BytesIO()
            pq.write_table(t, buf)
            assert stored[table] == buf.getvalue(), (name, table)


def test_conversion_to_arrow_keeps_what_from_pandas_infers_from_values():
    """Kept schemas serve only frames whose types follow from their dtypes:
    a column of Python objects is typed by its values (all None: null),
    and an empty frame is kept apart from a full one."""
    import numpy as np
    import pyarrow as pa

    from mediasim.results import _arrow_table

    frames = [
        pd.DataFrame({"a": np.arange(3), "b": pd.Categorical(["x", "y", "x"]),
                      "c": pd.Series(["u", "v", "w"], dtype="str")}),
        pd.DataFrame({"a": np.arange(0), "b": pd.Categorical([]), "c": pd.Series([], dtype="str")}),
        pd.DataFrame({"a": np.arange(2), "b": pd.Categorical(["y", "y"]), "c": pd.Series(["s", "t"], dtype="str")}),
        pd.DataFrame({"o": ["p", None]}, dtype=object),
        pd.DataFrame({"o": [None, None]}, dtype=object),
        pd.DataFrame({"f": [1.5, np.nan], "t": [True, False]}),
        pd.DataFrame({"c": pd.Series(["u", None], dtype="str"), "i": pd.array([1, None], dtype="Int64")}),
    ]
    for df in frames + frames:
        want = pa.Table.from_pandas(df, preserve_index=False)
        got = _arrow_table(df)
        assert got.equals(want, check_metadata=True), df.dtypes
    assert _arrow_table(frames[4]).schema.field("o").type == pa.null()


def test_damaged_and_partial_runs_are_run_again_with_the_same_results(examples, tmp_path):
    run_campaign(jobs(examples), tmp_path, workers=1, progress=False)
    before = read_sweep(tmp_path)
    runs = sorted(d for d in (tmp_path / "runs").iterdir() if not d.name.startswith("."))
    # What a kill or a full disk can leave: a truncated table, an empty
    # marker, no marker, and a half-written folder under .partial.
    with open(runs[0] / "flows.parquet", "r+b") as f:
        f.truncate(100)
    (runs[1] / "run.json").write_text("")
    (runs[2] / "run.json").unlink()
    half = tmp_path / "runs" / ".partial" / "abc-1-2"
    half.mkdir()
    (half / "flows.parquet").write_bytes(b"PAR1")
    (tmp_path / "runs" / ".partial" / "stray").write_bytes(b"x")
    report = run_campaign(jobs(examples), tmp_path, workers=1, progress=False)
    assert (report.reused, report.ran, report.repaired) == (1, 3, 3)
    assert not any((tmp_path / "runs" / ".partial").iterdir())
    pd.testing.assert_frame_equal(read_sweep(tmp_path), before)


def test_a_campaign_killed_while_writing_its_index_resumes(examples, tmp_path):
    # A kill between the index's temporary file and its rename (the first
    # write of a new campaign) leaves that file beside runs/ and failed/,
    # and no campaign.json; a failure record's write can leave one too.
    (tmp_path / "runs" / ".partial").mkdir(parents=True)
    (tmp_path / "failed").mkdir()
    (tmp_path / ".campaign.json.tmp-12345").write_text('{"runs": [')
    (tmp_path / ".index.md.tmp-12345").write_text("# ")
    (tmp_path / "failed" / ".abc.json.tmp-12345").write_text("{")
    report = run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False)
    assert (report.ran, report.failed) == (2, [])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["campaign.json", "failed", "runs"]
    assert not any((tmp_path / "failed").iterdir())
    assert len(read_sweep(tmp_path)) > 0
    # Anything else of someone else's is still refused.
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "campaign.json").unlink()
    with pytest.raises(CampaignError, match="holds files that are not a campaign"):
        run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False)


def test_a_failing_run_is_recorded_and_does_not_stop_the_others(examples, tmp_path):
    good = jobs(examples, replications=1)
    # pcap without an output folder passes validation but fails at run time.
    bad = jobs(examples, replications=1, intervals=(40,), **{"measure.pcap": True})
    # The failing run first: the runs after it are still read.
    report = run_campaign(bad + good, tmp_path, workers=2, progress=False)
    assert (report.ran, len(report.failed)) == (2, 1)
    assert "measure.pcap" in report.failed[0]["error"]
    record = next((tmp_path / "failed").iterdir())
    failed = json.loads(record.read_text())
    assert failed["labels"] == {"interval": 40} and "Traceback" in failed["traceback"]
    # The record names the run as the campaign's index does, and its error.
    assert record.name == failed["key"] + ".json"
    assert (failed["seed"], failed["replication"]) == (1, 0)
    assert failed["error"] == report.failed[0]["error"]
    assert failed["engine_build"] == mediasim._engine.build_id()
    with pytest.warns(UserWarning) as w:
        flows = read_sweep(tmp_path)
    assert [str(x.message) for x in w] == [
        f"{tmp_path}: 1 of 3 runs are not finished (failed or not run); they are left out"]
    assert set(flows["interval"]) == {10, 20}
    assert "failed" in str(report)


def test_a_folder_of_another_engine_build_is_refused(examples, tmp_path):
    run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False)
    index = json.loads((tmp_path / "campaign.json").read_text())
    index["engine_build"] = "0000000000000000"
    (tmp_path / "campaign.json").write_text(json.dumps(index))
    with pytest.raises(CampaignError, match="another engine"):
        run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False)


def test_read_sweep_gives_parameter_columns_and_stable_dtypes(examples, tmp_path):
    run_campaign(jobs(examples), tmp_path, workers=2, progress=False)
    flows = read_sweep(tmp_path)
    assert list(flows.columns[:3]) == ["interval", "seed", "replication"]
    assert flows["interval"].dtype == "int64" and flows["replication"].dtype == "int64"
    assert len(flows) == 4 * len(read_sweep(tmp_path, "flows").query("interval == 10 and replication == 0"))
    only = read_sweep(tmp_path, "links", columns=["direction", "tx_packets"])
    assert list(only.columns) == ["interval", "seed", "replication", "direction", "tx_packets"]
    with pytest.raises(CampaignError, match=r"table 'links' has no column 'tx_pakets' \(its columns: link, "):
        read_sweep(tmp_path, "links", columns=["direction", "tx_pakets"])
    s = summary(flows, ["interval", "flow"], ["throughput_bps"])
    assert set(s.columns) >= {"throughput_bps_mean", "throughput_bps_ci_low", "throughput_bps_ci_high", "n"}
    assert (s["n"] == 2).all()
    ds = to_xarray(flows[flows["receiver"] != "*"], ["interval", "replication", "flow"], ["throughput_bps"])
    assert dict(ds.sizes) == {"interval": 2, "replication": 2, "flow": flows["flow"].nunique()}


def test_read_sweep_makes_label_columns_over_runs_of_mixed_kinds(examples, tmp_path):
    """A column per label over every run: integers and floats of one axis
    make a float column (a column per run would not concatenate), values
    of mixed kinds a text column, and a run without the label nulls."""
    import pyarrow as pa

    from mediasim.campaign.read import _with_front

    run_campaign(jobs(examples, intervals=(10, 12.5), replications=1), tmp_path, workers=1, progress=False)
    flows = read_sweep(tmp_path)
    assert flows["interval"].dtype == "float64" and set(flows["interval"]) == {10.0, 12.5}
    parts = [pa.table({"v": [1, 2]}), pa.table({"v": [3]}), pa.table({"v": [4]})]
    fronts = [{"x": 10, "seed": 1}, {"x": "auto", "seed": 1}, {"seed": 2}]
    t = _with_front(pa.concat_tables(parts), parts, fronts).to_pandas()
    assert list(t.columns) == ["x", "seed", "v"]
    assert t["x"].tolist()[:3] == ["10", "10", "auto"] and pd.isna(t["x"].iloc[3])
    assert t["seed"].tolist() == [1, 1, 1, 2] and t["v"].tolist() == [1, 2, 3, 4]


def test_a_run_whose_listed_file_is_missing_or_not_a_file_is_damaged(examples, tmp_path):
    run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False)
    store = RunStore(tmp_path, {})
    keys = sorted(d.name for d in (tmp_path / "runs").iterdir() if not d.name.startswith("."))
    assert [store.status(k) for k in keys] == ["done", "done"] and store.status("nokey") == "missing"
    (tmp_path / "runs" / keys[0] / "meta.json").unlink()
    (tmp_path / "runs" / keys[1] / "flows.parquet").unlink()
    (tmp_path / "runs" / keys[1] / "flows.parquet").mkdir()
    assert [store.status(k) for k in keys] == ["damaged", "damaged"]


def test_a_file_or_link_in_a_runs_place_is_replaced_by_the_run(examples, tmp_path):
    # Damage of another kind than a folder: the run is run again and
    # stored in its place, not lost behind a rename that cannot land.
    run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False)
    before = read_sweep(tmp_path)
    keys = sorted(d.name for d in (tmp_path / "runs").iterdir() if not d.name.startswith("."))
    for k in keys:
        shutil.rmtree(tmp_path / "runs" / k)
    (tmp_path / "runs" / keys[0]).write_text("junk")
    (tmp_path / "runs" / keys[1]).symlink_to(tmp_path / "nowhere")
    report = run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False)
    assert (report.reused, report.ran, report.repaired) == (0, 2, 2)
    store = RunStore(tmp_path, {})
    assert [store.status(k) for k in keys] == ["done", "done"]
    assert all((tmp_path / "runs" / k).is_dir() and not (tmp_path / "runs" / k).is_symlink() for k in keys)
    pd.testing.assert_frame_equal(read_sweep(tmp_path), before)


def test_a_run_stored_twice_keeps_the_first_and_one_in_a_damaged_runs_place_replaces_it(examples, tmp_path):
    # Two processes storing the same run: the second finds it done and
    # leaves it (identical by determinism). A damaged folder in its place
    # (found by a reader after the campaign checked it) is replaced.
    from mediasim.campaign.run import tasks_of
    from mediasim.campaign.worker import execute

    store = RunStore.open(tmp_path, {"engine_version": "v", "engine_build": "b"})
    task = tasks_of(jobs(examples, replications=1, intervals=(10,)), "b")[0]
    out = execute(task)
    store.save(task, out.tables, out.meta)
    marker = tmp_path / "runs" / task.key / "run.json"
    first = marker.stat().st_mtime_ns
    store.save(task, out.tables, out.meta)
    assert marker.stat().st_mtime_ns == first and store.status(task.key) == "done"
    (tmp_path / "runs" / task.key / "flows.parquet").unlink()
    assert store.status(task.key) == "damaged"
    store.save(task, out.tables, out.meta)
    assert store.status(task.key) == "done"
    assert not any(store.partial.iterdir())


def test_a_stored_run_s_files_are_canonical_and_one_that_cannot_be_stored_is_named(examples, tmp_path, monkeypatch):
    import errno

    from mediasim.campaign import store as store_module
    from mediasim.campaign.run import tasks_of
    from mediasim.campaign.worker import execute

    store = RunStore.open(tmp_path, {"engine_version": "v", "engine_build": "b"})
    task = tasks_of(jobs(examples, replications=1, intervals=(10,)), "b")[0]
    out = execute(task)
    store.save(task, out.tables, out.meta)
    d = tmp_path / "runs" / task.key
    # meta.json sorted and indented (the same run writes the same bytes);
    # the marker names its run.
    text = (d / "meta.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert list(json.loads(text)) == sorted(json.loads(text))
    marker = json.loads((d / "run.json").read_text())
    assert (marker["key"], marker["seed"], marker["replication"]) == (task.key, task.seed, task.replication)
    # A marker that is JSON but not a run's record: damaged, not a crash.
    kept = (d / "run.json").read_bytes()
    for bad in ("[1, 2]", '{"files": [1]}', "{}"):
        (d / "run.json").write_text(bad)
        assert store.status(task.key) == "damaged", bad
    (d / "run.json").write_bytes(kept)
    assert store.status(task.key) == "done"
    # A place that cannot take the run even once cleared: the error names
    # it and its cause, and nothing is left half-written.
    shutil.rmtree(d)

    def refuse(src, dst):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(store_module.os, "rename", refuse)
    with pytest.raises(CampaignError) as e:
        store.save(task, out.tables, out.meta)
    assert str(e.value) == f"{d}: cannot store the run there (Permission denied)"
    assert not any(store.partial.iterdir())


def test_a_folder_that_is_not_a_campaign_or_of_another_engine_is_refused_whole(tmp_path):
    engine = {"engine_version": "1.2", "engine_build": "b2"}
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(CampaignError) as e:
        RunStore.open(tmp_path, engine)
    assert str(e.value) == (f"{tmp_path} holds files that are not a campaign (no campaign.json): a campaign's "
                            "folder holds its runs only. Use a new or empty folder.")
    other = tmp_path / "other"
    other.mkdir()
    (other / "campaign.json").write_text(json.dumps({"engine_version": "1.1", "engine_build": "b1"}))
    with pytest.raises(CampaignError) as e:
        RunStore.open(other, engine)
    assert str(e.value) == (f"{other} holds runs of another engine (version 1.1, build b1); this is version 1.2, "
                            "build b2. Use a new folder, or remove the old runs to replace them.")


def _tree(root: Path) -> dict[str, int]:
    """Every file and folder under ``root`` with its size (folders -1)."""
    return {str(p.relative_to(root)): (p.stat().st_size if p.is_file() else -1) for p in root.rglob("*")}


def test_a_campaigns_plan_counts_its_runs_stored_damaged_and_to_run_and_changes_nothing(examples, tmp_path):
    from mediasim.campaign import plan_campaign

    out = tmp_path / "c"
    # Identical jobs are one run, as run_campaign counts them.
    plan = plan_campaign(jobs(examples) + jobs(examples), out)
    assert (plan.runs, plan.stored, plan.damaged, plan.to_run) == (4, 0, 0, 4)
    assert str(plan) == f"4 runs: 0 already stored in {out}, 4 to run; nothing was run or written (dry run)"
    assert not out.exists()  # no folder made
    run_campaign(jobs(examples, intervals=(10,)), out, workers=1, progress=False)
    stored = sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith("."))
    (out / "runs" / stored[0] / "run.json").unlink()  # a damaged run
    (out / ".campaign.json.tmp-1").write_text("{")  # a write cut short: the folder is still a campaign's
    before = _tree(out)
    plan = plan_campaign(jobs(examples), out)
    assert (plan.runs, plan.stored, plan.damaged, plan.to_run) == (4, 1, 1, 3)
    assert str(plan).endswith("3 to run (of which 1 damaged, to be run again); nothing was run or written (dry run)")
    assert _tree(out) == before  # nothing removed, repaired or written
    report = run_campaign(jobs(examples), out, workers=1, progress=False)
    assert (report.reused, report.repaired, report.ran) == (plan.stored, plan.damaged, plan.to_run)
    # A folder run_campaign refuses is refused, and left as it is.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    with pytest.raises(CampaignError, match="holds files that are not a campaign"):
        plan_campaign(jobs(examples), tmp_path / "mine")
    index = json.loads((out / "campaign.json").read_text())
    (out / "campaign.json").write_text(json.dumps({**index, "engine_build": "0000000000000000"}))
    with pytest.raises(CampaignError, match="holds runs of another engine"):
        plan_campaign(jobs(examples), out)


def test_a_dry_run_checks_every_point_says_what_would_run_and_writes_nothing(examples, tmp_path):
    from click.testing import CliRunner

    from mediasim.cli import main

    out = tmp_path / "out"
    sweep = ["sweep", str(examples / "dumbbell.toml"), "--set", "duration_s=3", "--vary", "links[0].delay_ms=5,10,20",
             "--replications", "2", "--out", str(out)]
    r = CliRunner().invoke(main, [*sweep, "--dry-run"])
    assert r.exit_code == 0, r.output
    assert r.output == (f"3 grid points x 2 replications: 6 runs: 0 already stored in {out}, 6 to run; "
                        "nothing was run or written (dry run)\n")
    assert not out.exists()
    # An invalid point is said as a real run says it, before anything.
    r = CliRunner().invoke(main, [*sweep[:4], "--vary", "links[0].delay_ms=5,-1", "--out", str(out), "--dry-run"])
    assert r.exit_code == 2 and "links[0].delay_ms: must be a non-negative number (got -1)" in r.output, r.output
    assert not out.exists()
    # A campaign file: what is stored already is counted.
    shutil.copy(examples / "dumbbell.toml", tmp_path / "x.toml")
    f = tmp_path / "c.toml"
    f.write_text('scenario = "x.toml"\nreplications = 1\n[set]\nduration_s = 3\n'
                 '[grid]\n"links[0].delay_ms" = [5, 10]\n')
    assert CliRunner().invoke(main, ["-q", "campaign", str(f), "--out", str(out)]).exit_code == 0
    f.write_text(f.read_text().replace("[5, 10]", "[5, 10, 20]"))
    before = _tree(out)
    r = CliRunner().invoke(main, ["campaign", str(f), "--out", str(out), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert r.output == (f"3 grid points x 1 replication: 3 runs: 2 already stored in {out}, 1 to run; "
                        "nothing was run or written (dry run)\n")
    assert _tree(out) == before
    r = CliRunner().invoke(main, [*sweep[:4], "--vary", "links[0].delay_ms=5", "--out", str(out), "--dry-run"])
    assert r.output.startswith("1 grid point x 1 replication: 1 run: 1 already stored"), r.output
    # A folder a campaign would refuse is refused, as a real run refuses it.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    r = CliRunner().invoke(main, ["campaign", str(f), "--out", str(tmp_path / "mine"), "--dry-run"])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr.startswith(f"error: {tmp_path / 'mine'} holds files that are not a campaign (no campaign.json)")


def test_killed_at_any_moment_a_campaign_resumes_losing_and_duplicating_nothing(examples, tmp_path):
    # The CLI is killed (SIGKILL) at several points while runs are being
    # executed and stored; then it runs to the end. The result must equal
    # a campaign that was never interrupted, with each run stored once.
    args = [sys.executable, "-m", "mediasim", "sweep", str(examples / "dumbbell.toml"),
            "--alias", "interval=flows[name=voice].interval_ms", "--vary", "interval=5,10,20,40",
            "--set", "duration_s=20", "--replications", "3", "--workers", "2"]
    clean = tmp_path / "clean"
    subprocess.run(args + ["--out", str(clean)], check=True, capture_output=True)
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    for delay in (0.3, 0.8, 1.2, 1.6, 2.0, 2.5):
        p = subprocess.Popen(args + ["--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=env, start_new_session=True)
        time.sleep(delay)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    r = subprocess.run(args + ["--out", str(killed)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    done = json.loads((killed / "sweep.json").read_text())
    assert done["failed"] == [] and done["runs"] == 12
    folders = [d.name for d in (killed / "runs").iterdir() if not d.name.startswith(".")]
    assert len(folders) == len(set(folders)) == 12
    pd.testing.assert_frame_equal(read_sweep(killed), read_sweep(clean))


def test_python_dash_m_mediasim_is_the_cli():
    out = subprocess.run([sys.executable, "-m", "mediasim", "--version"], capture_output=True, text=True, check=True)
    assert mediasim.__version__ in out.stdout


def test_a_campaign_file_runs_with_aliases_as_columns(examples, tmp_path):
    from click.testing import CliRunner

    from mediasim.cli import main

    r = CliRunner().invoke(main, ["campaign", str(examples / "campaigns" / "background_load.toml"),
                                  "--out", str(tmp_path), "--workers", "2"])
    assert r.exit_code == 0, r.output
    assert "30 runs: 0 already stored, 30 run now, 0 failed" in r.output
    flows = read_sweep(tmp_path)
    assert list(flows.columns[:4]) == ["load", "buffer", "seed", "replication"]
    lost = flows[flows["flow"] == "voice"].groupby(["buffer", "load"])["loss_rate"].mean()
    assert lost[(10, 7e5)] > lost[(50, 3e5)]


def test_a_campaign_file_without_out_takes_the_command_lines(examples, tmp_path):
    from click.testing import CliRunner

    from mediasim.campaign.spec import load_campaign
    from mediasim.cli import main

    shutil.copy(examples / "dumbbell.toml", tmp_path / "x.toml")
    f = tmp_path / "c.toml"
    f.write_text('scenario = "x.toml"\n[set]\nduration_s = 3\n[grid]\n"links[0].delay_ms" = [5, 10]\n')
    # Neither the file nor the command line names the folder.
    with pytest.raises(CampaignError, match="out: required, a path \\(in the file, or --out"):
        load_campaign(f)
    r = CliRunner().invoke(main, ["campaign", str(f)])
    assert r.exit_code != 0 and "--out on the command line" in r.output
    out = tmp_path / "here"
    assert load_campaign(f, out).out == out.resolve()
    r = CliRunner().invoke(main, ["campaign", str(f), "--out", str(out), "--workers", "1"])
    assert r.exit_code == 0, r.output
    assert "2 runs: 0 already stored, 2 run now, 0 failed" in r.output
    assert len(read_sweep(out)) > 0
    # A folder in the file is a path (text), and --out still overrides it.
    f.write_text('scenario = "x.toml"\nout = 5\n[grid]\n"links[0].delay_ms" = [5]\n')
    with pytest.raises(CampaignError, match="out: must be a path"):
        load_campaign(f, out)


def test_ctrl_c_stops_the_campaign_and_its_workers_at_once(examples, tmp_path):
    # Runs of 60,000 simulated seconds (several seconds each): a SIGINT to
    # the terminal's process group ends the command and its two workers
    # within a couple of seconds, without waiting for the runs in progress
    # or the queued ones.
    args = [sys.executable, "-m", "mediasim", "sweep", str(examples / "dumbbell.toml"),
            "--vary", "flows[name=voice].interval_ms=5,10,20,40", "--set", "duration_s=60000",
            "--workers", "2", "--out", str(tmp_path)]
    # As from a terminal: Ctrl-C at its default action, even where this test
    # runs in the background of a script (which starts its commands with
    # SIGINT ignored, and an ignored signal stays ignored across exec).
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        time.sleep(3)
        t0 = time.monotonic()
        os.killpg(p.pid, signal.SIGINT)
        p.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.killpg(p.pid, 0)  # any process of the group left?
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail("workers still running 5 s after Ctrl-C")
        assert time.monotonic() - t0 < 5
        assert p.returncode != 0
    finally:  # a failure leaves no process behind for later tests
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    assert not [d for d in (tmp_path / "runs").iterdir() if not d.name.startswith(".")]


def test_a_task_function_that_cannot_reach_a_spawned_helper_fails_at_once(monkeypatch):
    # Where helpers are spawned, not forked (macOS, Windows), the function
    # goes to them pickled: a lambda cannot, and the error says so at
    # once instead of leaving the campaign waiting.
    import multiprocessing
    import pickle

    from mediasim.campaign import LocalExecutor

    spawn = multiprocessing.get_context("spawn")
    monkeypatch.setattr(multiprocessing, "get_context", lambda *a: spawn)
    t0 = time.monotonic()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        list(LocalExecutor(3).map_unordered(lambda x: x, [1, 2, 3]))
    assert time.monotonic() - t0 < 10
    assert not multiprocessing.active_children()


def test_helpers_end_on_their_own_once_every_result_is_in():
    # A finished campaign returns without waiting for its helpers'
    # processes to exit; they exit at once, and none is left running.
    import multiprocessing

    from mediasim.campaign import LocalExecutor

    out = sorted(LocalExecutor(2).map_unordered(abs, list(range(-40, 0))))
    assert out == list(range(1, 41))
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not multiprocessing.active_children()


def test_a_grids_replications_share_their_points_scenario_and_its_canonical_text_is_made_once(monkeypatch):
    from mediasim.campaign import keys

    jobs = mediasim.grid(mediasim.Scenario("x", duration_s=1), {"duration_s": [1, 2]}, replications=3)
    assert [len({id(j.scenario) for j in jobs[i:i + 3]}) for i in (0, 3)] == [1, 1]
    assert jobs[0].scenario is not jobs[3].scenario and jobs[0].scenario == {**jobs[3].scenario, "duration_s": 1}
    made = []
    real = keys.canonical
    monkeypatch.setattr(keys, "canonical", lambda sc: made.append(sc) or real(sc))
    assert keys.run_keys(jobs, "b") == [keys.run_key(j.scenario, j.seed, j.replication, "b") for j in jobs]
    assert made[:2] == [jobs[0].scenario, jobs[3].scenario] and len(made) == 2 + len(jobs)  # then run_key's own
    # Equal scenarios held apart are each made once: keyed alike.
    twins = [mediasim.Job({"duration_s": 1}), mediasim.Job({"duration_s": 1})]
    assert len(set(keys.run_keys(twins, "b"))) == 1


def test_the_canonical_scenario_is_sorted_compact_and_finite():
    # The run key covers the scenario as this text: the same scenario with
    # its fields in another order is the same run; NaN has no JSON text.
    from mediasim.campaign.keys import canonical, run_key

    a = {"duration_s": 5, "links": [{"a": "x", "b": "y", "delay_ms": 1.5}]}
    b = {"links": [{"delay_ms": 1.5, "b": "y", "a": "x"}], "duration_s": 5}
    assert canonical(a) == canonical(b) == '{"duration_s":5,"links":[{"a":"x","b":"y","delay_ms":1.5}]}'
    assert run_key(a, 1, 0, "build") == run_key(b, 1, 0, "build")
    assert len({run_key(a, 1, 0, "build"), run_key(a, 2, 0, "build"), run_key(a, 1, 1, "build"),
                run_key(a, 1, 0, "other")}) == 4
    with pytest.raises(ValueError):
        canonical({"duration_s": float("nan")})


def test_stored_run_files_are_plain_readable_files(examples, tmp_path):
    # Written with mode 0644 (less the umask): readable by all, executable
    # by none.
    old = os.umask(0o022)
    try:
        run_campaign(jobs(examples, replications=1, intervals=(10,)), tmp_path, workers=1, progress=False)
    finally:
        os.umask(old)
    run = next(d for d in (tmp_path / "runs").iterdir() if not d.name.startswith("."))
    modes = {p.name: p.stat().st_mode & 0o777 for p in run.iterdir()}
    assert modes and set(modes.values()) == {0o644}, modes


_SCENARIO_FIELDS = "aliases, grid, out, replications, scenario, scheduler, seed, set, workers"
_STUDY_FIELDS = "aliases, cases, grid, out, quick, replications, scheduler, seed, sensitivity, set, study, workers"


@pytest.mark.parametrize("text, message", [
    ('scenario = "x.toml"\nstudy = "iw10"\nout = "o"\n[grid]\na = [1]',
     "give exactly one of scenario (a file) and study (a reference study's name)"),
    ('out = "o"\n[grid]\na = [1]', "give exactly one of scenario (a file) and study (a reference study's name)"),
    ('scenario = "x.toml"\nout = "o"\nfoo = 1\n[grid]\na = [1]',
     f"foo: unknown field (expected one of {_SCENARIO_FIELDS})"),
    ('study = "iw10"\nout = "o"\nbar = 1\n[grid]\na = [1]', f"bar: unknown field (expected one of {_STUDY_FIELDS})"),
    ('study = "iw10"\nout = "o"\nreplication = 2\n[grid]\na = [1]',
     f"replication: unknown field; did you mean replications? (expected one of {_STUDY_FIELDS})"),
    ('scenario = "x.toml"\nout = ""\n[grid]\na = [1]', "out: required, a path (in the file, or --out on the command line)"),
    ('scenario = "x.toml"\nout = "o"\naliases = 5\n[grid]\na = [1]', "aliases: must be a table (got int)"),
    ('scenario = "x.toml"\nout = "o"\n[aliases]\nx = 5\n[grid]\na = [1]', "aliases.x: must be a field path (text)"),
    ('scenario = "x.toml"\nout = "o"\n[grid]', "grid: required, at least one parameter with its values"),
    ('scenario = "x.toml"\nout = "o"\ngrid = 5', "grid: must be a table (got int)"),
    ('scenario = "x.toml"\nout = "o"\nreplications = 0\n[grid]\na = [1]', "replications: must be an integer >= 1 (got 0)"),
    ('scenario = "x.toml"\nout = "o"\n[grid]\na = 5', "grid.a: must be a non-empty list of values"),
    ('scenario = "x.toml"\nout = "o"\n[grid]\na = []', "grid.a: must be a non-empty list of values"),
    ('scenario = "x.toml"\nout = "o"', "grid: required, at least one parameter with its values"),
    ('scenario = "x.toml"\nout = "o"\nscheduler = 5\n[grid]\na = [1]',
     "scheduler: must be an address such as tcp://host:8786"),
    ('scenario = "x.toml"\nout = "o"\nworkers = 0\n[grid]\na = [1]', "workers: must be an integer >= 1 (got 0)"),
    ('scenario = "x.toml"\nout = "o"\nworkers = true\n[grid]\na = [1]', "workers: must be an integer >= 1 (got True)"),
    ('scenario = "x.toml"\nout = "o"\nworkers = 1.5\n[grid]\na = [1]', "workers: must be an integer >= 1 (got 1.5)"),
    ('scenario = "x.toml"\nout = "o"\nseed = -1\n[grid]\na = [1]', "seed: must be an integer >= 0 (got -1)"),
    ('scenario = "x.toml"\nout = "o"\nset = 3\n[grid]\na = [1]', "set: must be a table (got int)"),
    ('scenario = 5\nout = "o"\n[grid]\na = [1]', "scenario: required, a path"),
    ('scenario = ""\nout = "o"\n[grid]\na = [1]', "scenario: required, a path"),
    ('study = "iw10"\nout = "o"\nquick = 1\n[grid]\na = [1]', "quick: must be true or false"),
    ('study = "iw10"\nout = "o"\nsensitivity = "yes"\n[grid]\na = [1]', "sensitivity: must be true or false"),
    ('study = "iw10"\nout = "o"\ncases = 3\n[grid]\na = [1]', "cases: must be a list of case numbers"),
    ('study = "iw10"\nout = "o"\ncases = [1, "a"]\n[grid]\na = [1]', "cases: must be a list of case numbers"),
    ('study = 5\nout = "o"\n[grid]\na = [1]', "study: must be a study's name"),
    ('study = "iw10"\nout = "o"\nseed = -1\n[grid]\na = [1]', "seed: must be an integer >= 0 (got -1)"),
    ('study = "iw10"\nout = "o"\nreplications = 0\n[grid]\na = [1]', "replications: must be an integer >= 1 (got 0)"),
])
def test_campaign_file_errors_are_the_file_the_field_and_the_problem(examples, tmp_path, text, message):
    from mediasim.campaign.spec import load_campaign

    shutil.copy(examples / "dumbbell.toml", tmp_path / "x.toml")
    f = tmp_path / "c.toml"
    f.write_text(text)
    with pytest.raises(CampaignError) as e:
        load_campaign(f)
    assert str(e.value) == f"{f}: {message}"


@pytest.mark.parametrize("kind", ["scenario: x.toml", "study: iw10"])
def test_a_null_count_in_a_yaml_or_json_campaign_file_is_named_not_taken_as_absent(examples, tmp_path, kind):
    """``seed:`` with its value forgotten reads as null: named, where it
    once reached the run keys as None and raised a TypeError."""
    from mediasim.campaign.spec import load_campaign

    shutil.copy(examples / "dumbbell.toml", tmp_path / "x.toml")
    f = tmp_path / "c.yaml"
    f.write_text(f"{kind}\nout: o\nseed:\nreplications: null\nworkers: ~\ngrid:\n  duration_s: [5]\n")
    with pytest.raises(CampaignError) as e:
        load_campaign(f)
    assert str(e.value).split("\n") == [f"{f}: {name}: must be an integer >= {low} (got None)"
                                        for name, low in (("workers", 1), ("replications", 1), ("seed", 0))]


def test_any_json_campaign_file_is_planned_or_its_problems_named(tmp_path):
    """Hypothesis's campaign files (a valid one over a scenario or a study,
    one or two fields, known or not, given values of every JSON kind): the
    dry run's plan or a CampaignError or ScenarioError, never another
    exception."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from mediasim.campaign.run import plan_campaign
    from mediasim.campaign.spec import load_campaign
    from mediasim.campaign.study_plan import plan_study_campaign
    from mediasim.errors import ScenarioError

    (tmp_path / "x.toml").write_text('duration_s = 1\n[[nodes]]\nname = "a"\n')
    names = ["flows", "duration_s", "seed", "x", "bottleneck_rate_bps", "links[0].rate_bps", "replications"]
    leaf = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.floats() | st.text(max_size=8)
            | st.sampled_from(["iw10", "svc", "x.toml", "", *names]))
    value = st.sampled_from([None, 0, 1, 2, -1, True, "x", [1], {}]) | st.recursive(
        leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(names), c, max_size=3), max_leaves=8)
    fields = st.sampled_from(["out", "quick", "replications", "seed", "cases", "sensitivity", "aliases", "grid",
                              "set", "workers", "scheduler", "zzz"])

    @settings(max_examples=500, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.dictionaries(fields, value, min_size=1, max_size=2),
           st.sampled_from([("study", "iw10"), ("scenario", "x.toml")]))
    def check(changes, kind):
        # A valid file with one or two fields changed: most inputs get past
        # the file's own checks to the runs' making.
        d = {kind[0]: kind[1], "grid": {"seed" if kind[0] == "study" else "duration_s": [1]}, **changes}
        f = tmp_path / "c.json"
        f.write_text(json.dumps(d))
        try:
            spec = load_campaign(f, out=tmp_path / "o")
            plan = plan_study_campaign(spec) if kind[0] == "study" else plan_campaign(spec.jobs(), spec.out)
        except (CampaignError, ScenarioError):
            return
        assert isinstance(plan, str) or plan.to_run >= 0

    check()
    assert not (tmp_path / "o").exists()


def test_a_campaign_files_problems_are_said_together_one_per_line(examples, tmp_path):
    from mediasim.campaign.spec import load_campaign

    f = tmp_path / "c.toml"
    f.write_text('scenario = "dumbbel.toml"\nout = 5\nreplications = -5\nseeed = 1\nworkerz = 2\n'
                 '[aliases]\nload = 5\n[grid]\nload = [1]\nbuffer = []\nrate = 3\n')
    allowed = "aliases, grid, out, replications, scenario, scheduler, seed, set, workers"
    with pytest.raises(CampaignError) as e:
        load_campaign(f)
    assert str(e.value).split("\n") == [f"{f}: {m}" for m in [
        f"seeed: unknown field; did you mean seed? (expected one of {allowed})",
        f"workerz: unknown field; did you mean workers? (expected one of {allowed})",
        "out: required, a path (in the file, or --out on the command line)",
        "aliases.load: must be a field path (text)",
        "grid.buffer: must be a non-empty list of values",
        "grid.rate: must be a non-empty list of values",
        f"scenario: no such file: {(tmp_path / 'dumbbel.toml').resolve()}",
        "replications: must be an integer >= 1 (got -5)",
    ]]
    # A study's campaign alike, its own fields included; a grid that is
    # no table is not also said to be missing.
    f.write_text('study = "iw10"\nquick = 1\ncases = "all"\nseed = -1\nworkers = 0\ngrid = 5\nset = 1\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(f, tmp_path / "o")
    assert str(e.value).split("\n") == [f"{f}: {m}" for m in [
        "grid: must be a table (got int)", "set: must be a table (got int)",
        "workers: must be an integer >= 1 (got 0)", "quick: must be true or false",
        "cases: must be a list of case numbers", "seed: must be an integer >= 0 (got -1)",
    ]]


def test_campaign_files_defaults_and_paths(examples, tmp_path):
    from mediasim.campaign.spec import CampaignSpec, load_campaign

    shutil.copy(examples / "dumbbell.toml", tmp_path / "x.toml")
    f = tmp_path / "c.toml"
    f.write_text('scenario = "x.toml"\nout = "o"\n[grid]\n"links[0].delay_ms" = [5]\n')
    c = load_campaign(f)
    assert isinstance(c, CampaignSpec)
    assert (c.scenario, c.out) == ((tmp_path / "x.toml").resolve(), (tmp_path / "o").resolve())
    assert (c.replications, c.seed, c.workers, c.scheduler, c.aliases, c.overrides) == (1, 0, None, None, {}, {})
    f.write_text('scenario = "x.toml"\nout = "o"\nreplications = 3\nseed = 7\nworkers = 2\nscheduler = "tcp://h:1"\n'
                 '[aliases]\nd = "links[0].delay_ms"\n[set]\nduration_s = 2\n[grid]\nd = [5, 10]\n')
    c = load_campaign(f, tmp_path / "elsewhere")
    assert (c.replications, c.seed, c.workers, c.scheduler) == (3, 7, 2, "tcp://h:1")
    assert (c.aliases, c.overrides, c.grid, c.out) == ({"d": "links[0].delay_ms"}, {"duration_s": 2}, {"d": [5, 10]},
                                                       (tmp_path / "elsewhere").resolve())
    jobs = c.jobs()
    assert len(jobs) == 6
    assert [(j.labels, j.seed, j.replication) for j in jobs[:4]] == [
        ({"d": 5}, 7, 0), ({"d": 5}, 7, 1), ({"d": 5}, 7, 2), ({"d": 10}, 7, 0)]
    assert jobs[3].scenario["links"][0]["delay_ms"] == 10 and jobs[3].scenario["duration_s"] == 2
    # No such file: named as the campaign file (not a scenario file).
    with pytest.raises(CampaignError) as e:
        load_campaign(tmp_path / "gone.toml")
    assert str(e.value) == f"{tmp_path / 'gone.toml'}: no such campaign file"
    # A file that does not parse: the reader's message, as a campaign error.
    f.write_text('scenario = "x.toml\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(f)
    assert str(e.value).startswith(f"{f}: cannot parse: "), str(e.value)
    # A value the reader refuses: named with the file and the field.
    f.write_text('scenario = "x.toml"\nreplications = 99999999999999999999\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(f)
    assert str(e.value) == f"{f}: replications: 99999999999999999999 is too large (whole numbers stop below 2^64)"
    # A file that is no table of fields.
    listed = tmp_path / "c.json"
    listed.write_text("[1, 2]")
    with pytest.raises(CampaignError) as e:
        load_campaign(listed)
    assert str(e.value) == f"{listed}: must be a table of fields (got a list)"
    # A missing scenario file is named with its full path.
    f.write_text('scenario = "gone.toml"\nout = "o"\n[grid]\na = [1]\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(f)
    assert str(e.value) == f"{f}: scenario: no such file: {(tmp_path / 'gone.toml').resolve()}"


def test_reading_back_names_the_folder_the_parameters_and_refuses_what_is_not_a_campaign(examples, tmp_path):
    from mediasim.campaign.read import parameters

    for name, text in (("none", None), ("list", "[1]"), ("neither", '{"kind": "grid"}')):
        folder = tmp_path / name
        folder.mkdir()
        if text is not None:
            (folder / "campaign.json").write_text(text)
        with pytest.raises(CampaignError) as e:
            read_sweep(folder)
        assert str(e.value) == f"{folder}: not a campaign folder (no readable campaign.json)"
    out = tmp_path / "c"
    run_campaign(jobs(examples, replications=1), out, workers=1, progress=False)
    assert parameters(out) == ["interval"]
    flows = read_sweep(out, columns=["flow", "loss_rate"])
    assert list(flows.columns) == ["interval", "seed", "replication", "flow", "loss_rate"]


def test_summary_and_xarray_of_a_campaigns_table():
    df = pd.DataFrame({"rate": [1, 1, 1, 2, 2, 2], "replication": [0, 1, 2] * 2, "flow": ["a"] * 6,
                       "loss": [0.1, 0.2, 0.3, 0.5, 0.5, 0.5]})
    wide, narrow = summary(df, ["rate"], ["loss"]), summary(df, ["rate"], ["loss"], level=0.5)
    assert wide["loss_mean"].tolist() == pytest.approx([0.2, 0.5])
    # 1, 2, 3 tenths: half-width t(q, 2) x 0.1 / sqrt(3) at each level.
    assert wide["loss_ci_high"][0] - 0.2 == pytest.approx(4.302653 * 0.1 / 3 ** 0.5, rel=1e-5)
    assert narrow["loss_ci_high"][0] - 0.2 == pytest.approx(0.816497 * 0.1 / 3 ** 0.5, rel=1e-5)
    x = to_xarray(df, ["rate", "replication"])
    assert set(x.data_vars) == {"loss"} and dict(x.sizes) == {"rate": 2, "replication": 3}
    assert set(to_xarray(df.assign(other=1.0), ["rate", "replication"], ["loss"]).data_vars) == {"loss"}
    with pytest.raises(ValueError) as e:
        to_xarray(df, ["rate"])
    assert str(e.value) == "['rate'] do not identify the rows: add the columns that do (e.g. flow, receiver)"
    assert summary(df, "rate", "loss").equals(wide)  # one name for a list of one


def test_to_xarray_without_xarray_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "xarray", None)  # as if xarray were not installed
    with pytest.raises(ImportError) as e:
        to_xarray(pd.DataFrame({"rate": [1], "loss": [0.1]}), ["rate"])
    assert str(e.value) == "to_xarray needs xarray: pip install 'mediasim[xarray]'"


@pytest.mark.parametrize("call, message", [
    (lambda df: summary(df, ["rat"], ["loss"]), "by: no column 'rat' in the table"),
    (lambda df: summary(df, ["rate"], ["loss", "los", "x"]), "metrics: no column 'los', 'x' in the table"),
    (lambda df: to_xarray(df, ["rate", "replicaton"]), "dims: no column 'replicaton' in the table"),
    (lambda df: to_xarray(df, ["rate", "replication"], ["lost"]), "metrics: no column 'lost' in the table"),
])
def test_summary_and_xarray_name_a_column_the_table_lacks_with_those_it_has(call, message):
    df = pd.DataFrame({"rate": [1, 2], "replication": [0, 0], "flow": ["a", "b"], "loss": [0.1, 0.2]})
    with pytest.raises(ValueError) as e:
        call(df)
    assert str(e.value) == f"{message} (its columns: rate, replication, flow, loss)"


def test_summary_takes_numeric_metrics_at_a_level_between_0_and_1():
    df = pd.DataFrame({"rate": [1, 1], "flow": ["a", "b"], "loss": [0.1, 0.2]})
    with pytest.raises(ValueError) as e:
        summary(df, ["rate"], ["flow"])
    assert str(e.value) == "metrics: 'flow' not numeric: a metric is a number per row"
    with pytest.raises(ValueError) as e:
        summary(df.assign(kind="x"), ["rate"], ["flow", "loss", "kind"])
    assert str(e.value) == "metrics: 'flow', 'kind' not numeric: a metric is a number per row"
    with pytest.raises(ValueError) as e:
        to_xarray(df, ["flow"], ["flow"])
    assert str(e.value) == "metrics: 'flow' not numeric: a metric is a number per row"
    for level in (0, 1, 1.5, -0.5, float("nan"), "0.9"):
        with pytest.raises(ValueError) as e:
            summary(df, ["rate"], ["loss"], level=level)
        assert str(e.value) == f"level: a confidence level between 0 and 1, such as 0.95 (got {level!r})"


def test_reading_a_table_the_runs_did_not_record_says_how_to_record_it(examples, tmp_path):
    run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False)
    with pytest.raises(mediasim.TableNotFound) as e:
        read_sweep(tmp_path, "packets")
    have = mediasim.run(jobs(examples, replications=1)[0].scenario, seed=1).tables
    assert str(e.value) == (f"packets: not recorded (measure.packets was off; set it to true in the scenario, or run "
                            f"with --packets); {tmp_path}'s runs has: {', '.join(sorted(have))}")


def test_the_not_finished_warning_counts_every_run_left_out(examples, tmp_path):
    bad = jobs(examples, replications=1, intervals=(40, 80), **{"measure.pcap": True})
    run_campaign(bad + jobs(examples, replications=1, intervals=(10,)), tmp_path, workers=1, progress=False)
    with pytest.warns(UserWarning) as w:
        flows = read_sweep(tmp_path)
    assert [str(x.message) for x in w] == [
        f"{tmp_path}: 2 of 3 runs are not finished (failed or not run); they are left out"]
    assert set(flows["interval"]) == {10}


def test_a_table_some_runs_lack_is_read_from_every_run_that_has_it(examples, tmp_path):
    """Series are recorded only where measure.series is on: a run without
    the table between runs with it is passed over, not the end of the
    reading."""
    sc = mediasim.load_scenario(examples / "calls.toml")
    js = mediasim.grid(sc, {"duration_s": [3, 4], "measure.series": [True, False]}, replications=1, seed=1)
    assert [tuple(j.labels.values()) for j in js] == [(3, True), (3, False), (4, True), (4, False)]
    run_campaign(js, tmp_path, workers=1, progress=False)
    series = read_sweep(tmp_path, "media_series")
    direct = [mediasim.run(j.scenario, seed=1).tables["media_series"] for j in (js[0], js[2])]
    assert len(series) == sum(len(d) for d in direct) > 0
    assert series.groupby("duration_s").size().to_dict() == {3: len(direct[0]), 4: len(direct[1])}
    assert set(series["measure.series"]) == {True}


def test_each_stored_run_is_its_jobs_seed_and_replication(examples, tmp_path):
    """The dumbbell's Poisson flow draws from the run's random streams: a
    stored run equals the same job run alone, and replications differ."""
    js = jobs(examples, intervals=(10,), replications=2)
    run_campaign(js, tmp_path, workers=1, progress=False)
    store = RunStore(tmp_path, {})
    stored = {json.loads((d / "run.json").read_text())["replication"]: d
              for d in store.runs.iterdir() if not d.name.startswith(".")}
    assert sorted(stored) == [0, 1]
    received = {}
    for j in js:
        alone = mediasim.run(j.scenario, seed=j.seed, replication=j.replication).flows
        table = pd.read_parquet(stored[j.replication] / "flows.parquet")
        meta = mediasim.results.parquet_meta(stored[j.replication] / "flows.parquet")
        assert (meta["replication"], meta["run_key"]) == (j.replication, stored[j.replication].name)
        assert list(table["received"]) == list(alone["received"])
        received[j.replication] = list(table["received"])
    assert received[0] != received[1]


def test_a_run_key_covers_the_engine_build_and_labels_starting_with_an_underscore_stay_out(examples, tmp_path):
    from mediasim.campaign.keys import engine_identity, run_key
    from mediasim.campaign.run import tasks_of
    from mediasim.sweep import Job

    js = jobs(examples, replications=1)
    assert {t.key for t in tasks_of(js, "a")}.isdisjoint(t.key for t in tasks_of(js, "b"))
    report = run_campaign(js, tmp_path, workers=1, progress=False)
    assert report.folder == RunStore(tmp_path, {}).root
    build = engine_identity()["engine_build"]
    assert {d.name for d in RunStore(tmp_path, {}).runs.iterdir() if not d.name.startswith(".")} == {
        run_key(j.scenario, j.seed, j.replication, build) for j in js}
    [task] = tasks_of([Job(js[0].scenario, 1, 0, {"_out": "x", "rate": 5}), Job(js[0].scenario, 1, 0, {"rate": 5})],
                      "a")
    assert task.labels == {"rate": 5}  # identical jobs are one task


def test_a_campaign_closes_the_executor_it_made_and_only_that_one(examples, tmp_path, monkeypatch):
    from mediasim.campaign import executors, run as campaign_run

    class Counting(executors.LocalExecutor):
        closed = 0

        def close(self) -> None:  # as a Dask cluster's client has
            Counting.closed += 1

    given = Counting(1)
    run_campaign(jobs(examples, replications=1), tmp_path, executor=given, progress=False)
    assert Counting.closed == 0
    given.close()
    made = []
    monkeypatch.setattr(campaign_run, "make_executor", lambda workers, scheduler: made.append(
        (workers, scheduler)) or Counting(1))
    run_campaign(jobs(examples, replications=1), tmp_path, workers=3, progress=False)
    run_campaign(jobs(examples, replications=1), tmp_path, scheduler="tcp://127.0.0.1:8786", progress=False)
    assert Counting.closed == 3 and made == [(3, None), (None, "tcp://127.0.0.1:8786")]


def test_a_campaigns_index_keeps_its_aliases(examples, tmp_path):
    run_campaign(jobs(examples, replications=1), tmp_path, workers=1, progress=False, aliases=ALIASES)
    assert json.loads((tmp_path / "campaign.json").read_text())["aliases"] == ALIASES


def test_a_campaign_says_what_it_does_in_its_log_and_its_bar(examples, tmp_path, caplog, capsys):
    import logging

    caplog.set_level(logging.DEBUG, logger="mediasim.campaign")
    bad = jobs(examples, replications=1, intervals=(40,), **{"measure.pcap": True})
    js = jobs(examples, replications=1, intervals=(10,))
    report = run_campaign(bad + js, tmp_path, workers=1)
    [failed], [ran] = report.failed, [t for t in (tmp_path / "runs").iterdir() if not t.name.startswith(".")]
    said = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "mediasim.campaign"]
    assert said[0] == ("INFO", f"{report.folder}: 2 runs, 0 stored, 2 to run (0 damaged)")
    bad_key = next((tmp_path / "failed").iterdir()).stem
    assert ("WARNING", f"run {bad_key} ({{'interval': 40}}, seed 1, replication 0) failed: {failed['error']}") in said
    assert failed["error"].startswith("ScenarioError: ")
    [(level, msg)] = [s for s in said if s[1].startswith(f"run {ran.name} ")]
    assert level == "DEBUG" and msg.startswith(f"run {ran.name} ({{'interval': 10}}, seed 1, replication 0): ")
    assert float(msg.split(": ")[-1].removesuffix(" s")) > 0  # its wall time
    err = capsys.readouterr().err
    assert "campaign runs: 100%" in err and "| 2/2 [" in err
    run_campaign(jobs(examples, replications=1, intervals=(20,)), tmp_path, workers=1, progress=False)
    assert capsys.readouterr().err == ""  # no bar asked for, none shown


def test_a_campaigns_report_in_words():
    from mediasim.campaign.run import CampaignReport

    assert str(CampaignReport(Path("/c"), 4, reused=1, ran=3)) == "4 runs: 1 already stored, 3 run now, 0 failed"
    failed = [{"labels": {"rate": i}, "seed": 1, "replication": 0, "error": f"E{i}"} for i in range(12)]
    lines = str(CampaignReport(Path("/c"), 13, ran=1, repaired=2, failed=failed[:10])).split("\n")
    assert lines[0] == "13 runs: 0 already stored, 1 run now, 10 failed (2 damaged folders run again)"
    assert lines[1:] == [f"  failed {{'rate': {i}}} seed 1 replication 0: E{i}" for i in range(10)]
    lines = str(CampaignReport(Path("/c"), 13, ran=1, failed=failed[:11])).split("\n")
    assert len(lines) == 12 and lines[-1] == "  ... and 1 more (see /c/failed/)"
    assert str(CampaignReport(Path("/c"), 13, failed=failed)).endswith("\n  ... and 2 more (see /c/failed/)")
