"""Campaigns over a reference study's parameters: each grid point is the
study's whole pipeline, identical to running the study directly; runs go
through the campaign folder (shared between points, reused on resume); a
kill loses nothing; a failing point is recorded and the others go on."""

import html
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

from mediasim.campaign import read_sweep
from mediasim.errors import TableNotFound
from mediasim.campaign.spec import load_campaign
from mediasim.campaign.keys import package_build, run_key
from mediasim.campaign.study import point_key
from mediasim.campaign.study_plan import plan_study_campaign
from mediasim.campaign.study_run import run_study_campaign
from mediasim.errors import CampaignError
from mediasim.experiments import iw10

# One TCP flow's worth of IW10 runs on the wired access: 2 initial
# windows x 2 replications.
BASE = """
study = "iw10"
out = "out"
quick = true
replications = 2
seed = 3
workers = {workers}
[set]
flows = [1]
accesses = ["wired"]
"""


def campaign(tmp_path: Path, grid: str, workers: int = 2, extra: str = "") -> Path:
    f = tmp_path / "c.toml"
    f.write_text(BASE.format(workers=workers) + extra + "[grid]\n" + grid)
    return f


def test_points_are_the_study_run_directly_and_share_their_runs(tmp_path):
    # Jitter buffers are read by the analysis alone: the second point's
    # runs are the first one's.
    spec = load_campaign(campaign(tmp_path, "jitter_buffers_ms = [[40], [40, 100]]\n"))
    # The dry run counts each run once however many points share it, and
    # the campaign runs what it counted.
    assert "the points to run make 4 runs of 2 scenarios, every one valid: 0 already stored, 4 to run\n" in (
        plan_study_campaign(spec))
    r = run_study_campaign(spec, progress=False)
    assert (r.points, r.ran, r.reused, r.failed) == (2, 2, 0, [])
    assert (r.runs_ran, r.runs_reused) == (4, 4)
    direct = tmp_path / "direct"
    p = iw10.Params().quick().with_overrides({"flows": "1", "replications": "2", "seed": "3",
                                              "jitter_buffers_ms": "40,100", "accesses": "wired"})
    iw10.reproduce(p, direct, workers=2, progress=False)
    stored = spec.out / "points" / "jitter_buffers_ms=40,100"
    for table in ("summary", "quality_levels", "tcp"):
        pd.testing.assert_frame_equal(pd.read_parquet(stored / f"{table}.parquet"),
                                      pd.read_parquet(direct / f"{table}.parquet"))
    assert (stored / "report.md").is_file() and (stored / "report.html").is_file()
    assert "[report](points/jitter_buffers_ms=40,100/report.md)" in (spec.out / "index.md").read_text()
    # The marker, written last: the point's key (as campaign.json lists it), labels, parameters as text,
    # options, engine, and every file with its size; no wall time (the same point writes the same bytes).
    marker = json.loads((stored / "point.json").read_text())
    listed = json.loads((spec.out / "campaign.json").read_text())["points"]
    assert marker["key"] == next(pt["key"] for pt in listed if pt["name"] == stored.name)
    params = spec.points()[1].params
    runs = [run_key(j.scenario, j.seed, j.replication, marker["engine_build"]) for j in iw10.study_jobs(params)]
    assert marker["key"] == point_key("iw10", params, {}, marker["engine_build"], runs, package_build())
    assert marker["package_build"] == package_build()
    assert (marker["study"], marker["labels"], marker["options"]) == ("iw10", {"jitter_buffers_ms": "40,100"}, {})
    assert marker["params"]["jitter_buffers_ms"] == "(40.0, 100.0)" and marker["params"]["seed"] == "3"
    assert marker["files"] == {str(f.relative_to(stored)): f.stat().st_size for f in sorted(stored.rglob("*"))
                               if f.is_file() and f.name != "point.json"}
    assert "engine_build" in marker and not any("wall" in k or "time" in k for k in marker)
    stamp = html.escape("iw10 at {'jitter_buffers_ms': '40,100'}")
    assert f"{stamp}</p>" in (stored / "report.html").read_text()  # the stamp says which point
    # One table over the points, a column per grid parameter in front.
    s = read_sweep(spec.out, "summary")
    assert list(s.columns[:4]) == ["jitter_buffers_ms", "access", "flows", "iw"]
    assert s.groupby("jitter_buffers_ms").size().to_dict() == {"40": 2, "40,100": 4}
    with pytest.raises(TableNotFound, match="no table 'nope'.*summary"):
        read_sweep(spec.out, "nope")


def test_a_resumed_study_campaign_redoes_only_unfinished_points_from_stored_runs(tmp_path):
    spec = load_campaign(campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n"))
    first = run_study_campaign(spec, progress=False)
    assert (first.ran, first.runs_ran) == (2, 8)
    again = run_study_campaign(spec, progress=False)
    assert (again.reused, again.ran, again.runs_ran) == (2, 0, 0)
    # A point cut short (no marker) and a half-written one are redone, from
    # the stored runs.
    (spec.out / "points" / "bottleneck_rate_bps=2000000.0" / "point.json").unlink()
    (spec.out / "points" / ".partial" / "x").mkdir(parents=True)
    assert plan_study_campaign(spec).splitlines()[2:4] == [
        "the points to run make 4 runs of 2 scenarios, every one valid: 4 already stored, 0 to run",
        "nothing was run or written (dry run)"]
    resumed = run_study_campaign(spec, progress=False)
    assert (resumed.reused, resumed.ran, resumed.runs_ran, resumed.runs_reused) == (1, 1, 0, 4)
    assert not (spec.out / "points" / ".partial" / "x").exists()
    # A file where a point's folder should be is replaced by the point.
    point = spec.out / "points" / "bottleneck_rate_bps=2000000.0"
    import shutil

    shutil.rmtree(point)
    point.write_text("junk")
    resumed = run_study_campaign(spec, progress=False)
    assert (resumed.reused, resumed.ran, resumed.failed) == (1, 1, [])
    assert (point / "point.json").is_file()
    # A changed parameter is a new point with new runs.
    changed = load_campaign(campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n", extra="buffer_packets = 20\n"))
    r = run_study_campaign(changed, progress=False)
    assert (r.reused, r.ran, r.runs_ran) == (0, 2, 8)


def test_a_failing_point_is_recorded_and_the_others_go_on(tmp_path, monkeypatch, caplog):
    spec = load_campaign(campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n", workers=1))
    real = iw10.reproduce

    def flaky(p, out, **kw):
        if p.bottleneck_rate_bps == 1e6:
            out.mkdir(parents=True, exist_ok=True)
            (out / "half.png").write_bytes(b"x")  # written before it failed
            raise RuntimeError("disk on fire")
        return real(p, out, **kw)

    monkeypatch.setattr(iw10, "reproduce", flaky)
    with caplog.at_level("WARNING", logger="mediasim"):
        r = run_study_campaign(spec, progress=False)
    assert (r.ran, len(r.failed)) == (1, 1)
    assert "disk on fire" in r.failed[0]["error"]
    assert "iw10 point {'bottleneck_rate_bps': 1000000.0} failed: RuntimeError: disk on fire" in caplog.messages
    assert (spec.out / "failed" / "point-bottleneck_rate_bps=1000000.0.json").is_file()
    assert "| 1000000.0 | failed |" in (spec.out / "index.md").read_text()
    with pytest.warns(UserWarning) as w:
        assert set(read_sweep(spec.out, "summary")["bottleneck_rate_bps"]) == {2e6}
    assert [str(x.message) for x in w] == [
        f"{spec.out}: 1 of 2 points are not finished (failed or not run); they are left out"]
    record = json.loads((spec.out / "failed" / "point-bottleneck_rate_bps=1000000.0.json").read_text())
    assert record["labels"] == {"bottleneck_rate_bps": 1e6} and "disk on fire" in record["traceback"]
    assert record["error"] == "RuntimeError: disk on fire" and "engine_build" in record
    assert record["key"] == json.loads((spec.out / "campaign.json").read_text())["points"][0]["key"]
    assert not (spec.out / "points" / "bottleneck_rate_bps=1000000.0").exists()
    assert not any((spec.out / "points" / ".partial").iterdir())  # nothing half-written left
    # Run again once the cause is gone: the point is made and its failure record removed.
    monkeypatch.setattr(iw10, "reproduce", real)
    r = run_study_campaign(spec, progress=False)
    assert (r.reused, r.ran, r.failed) == (1, 1, [])
    assert not (spec.out / "failed" / "point-bottleneck_rate_bps=1000000.0.json").exists()
    assert "| 1000000.0 | done |" in (spec.out / "index.md").read_text()


def test_a_table_some_points_lack_is_read_from_the_points_that_have_it(tmp_path):
    from mediasim.campaign.read import parameters
    from mediasim.campaign.study import MARKER

    spec = load_campaign(campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n", extra="buffer_packets = 20\n"))
    run_study_campaign(spec, progress=False)
    # The grid's parameters, not the ones set for every point.
    assert parameters(spec.out) == ["bottleneck_rate_bps"]
    points = spec.out / "points"

    def without_tcp(point: Path) -> None:
        """The point as if its study had written no tcp table: the file
        gone and the marker listing the files it has."""
        (point / "tcp.parquet").unlink()
        marker = json.loads((point / MARKER).read_text())
        del marker["files"]["tcp.parquet"]
        (point / MARKER).write_text(json.dumps(marker))

    without_tcp(points / "bottleneck_rate_bps=1000000.0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # both points are finished: nothing is said
        t = read_sweep(spec.out, "tcp")
    kept = pd.read_parquet(points / "bottleneck_rate_bps=2000000.0" / "tcp.parquet")
    assert len(t) == len(kept) > 0 and set(t["bottleneck_rate_bps"]) == {2e6}
    pd.testing.assert_frame_equal(t.drop(columns="bottleneck_rate_bps"), kept)
    # The other tables are read from both points.
    assert set(read_sweep(spec.out, "summary")["bottleneck_rate_bps"]) == {1e6, 2e6}
    # No point has it: named, with the tables the points do have.
    without_tcp(points / "bottleneck_rate_bps=2000000.0")
    tables = sorted(p.stem for p in (points / "bottleneck_rate_bps=2000000.0").glob("*.parquet"))
    assert "summary" in tables and "tcp" not in tables
    with pytest.raises(TableNotFound) as e:
        read_sweep(spec.out, "tcp")
    assert str(e.value) == f"{spec.out}: the study wrote no table 'tcp' (its tables: {', '.join(tables)})"


def _point(folder: Path, name: str, key: str, tables: dict[str, pd.DataFrame] | None) -> dict:
    """A study campaign's point made by hand: its tables and marker
    (``tables`` None: a point not finished, no marker)."""
    from mediasim.campaign.study import MARKER

    d = folder / "points" / name
    d.mkdir(parents=True)
    files = {}
    for t, df in (tables or {}).items():
        df.to_parquet(d / f"{t}.parquet")
        files[f"{t}.parquet"] = (d / f"{t}.parquet").stat().st_size
    if tables is not None:
        (d / MARKER).write_text(json.dumps({"key": key, "files": files}))
    return {"name": name, "key": key, "labels": {"rate": float(name), "iw": 10}}


def test_reading_a_study_campaign_made_by_hand(tmp_path):
    """Points whose tables differ: a table is read from the points that
    have it, a column one point adds is null in the others' rows, the
    unfinished points are counted, and a table no point has is named
    with every table of every point."""
    from mediasim.campaign.read import parameters

    s1 = pd.DataFrame({"flow": ["a", "b"], "x": [1.0, 2.0]})
    s2 = pd.DataFrame({"flow": ["a"], "x": [3.0], "extra": [7]})
    points = [_point(tmp_path, "1", "k1", {"summary": s1, "tcp": pd.DataFrame({"cwnd": [5]})}),
              _point(tmp_path, "2", "k2", None),
              _point(tmp_path, "3", "k3", {"summary": s2}),
              _point(tmp_path, "4", "k4", None)]
    (tmp_path / "campaign.json").write_text(json.dumps({"kind": "study", "points": points}))
    assert parameters(tmp_path) == ["rate", "iw"]
    with pytest.warns(UserWarning) as w:
        s = read_sweep(tmp_path, "summary")
    assert [str(x.message) for x in w] == [
        f"{tmp_path}: 2 of 4 points are not finished (failed or not run); they are left out"]
    assert list(s.columns) == ["rate", "iw", "flow", "x", "extra"]
    assert s[["rate", "flow", "x"]].values.tolist() == [[1.0, "a", 1.0], [1.0, "b", 2.0], [3.0, "a", 3.0]]
    assert s["extra"].isna().tolist() == [True, True, False] and s["extra"].iloc[2] == 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert list(read_sweep(tmp_path, "summary", columns=["x"]).columns) == ["rate", "iw", "x"]
        assert read_sweep(tmp_path, "tcp")["cwnd"].tolist() == [5]
        with pytest.raises(CampaignError) as e:
            read_sweep(tmp_path, "summary", columns=["x", "nope", "zz"])
        assert str(e.value) == "table 'summary' has no column 'nope', 'zz' (its columns: flow, x)"
        # The last finished point has no tcp table; the first one does.
        with pytest.raises(TableNotFound) as e:
            read_sweep(tmp_path, "queues")
    assert str(e.value) == f"{tmp_path}: the study wrote no table 'queues' (its tables: summary, tcp)"
    # One point: its labels.
    (tmp_path / "campaign.json").write_text(json.dumps({"kind": "study", "points": points[:1]}))
    assert parameters(tmp_path) == ["rate", "iw"]


def test_a_study_campaign_without_points_has_no_parameters_and_reads_empty(tmp_path):
    from mediasim.campaign.read import parameters

    (tmp_path / "campaign.json").write_text(json.dumps({"kind": "study", "points": []}))
    assert parameters(tmp_path) == []
    assert read_sweep(tmp_path, "summary").empty


def test_a_killed_study_campaign_resumes_to_the_same_tables(tmp_path):
    f = campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n")
    cmd = [sys.executable, "-m", "mediasim", "-q", "campaign", str(f)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    runs = tmp_path / "out" / "runs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.is_dir() and sum(1 for d in runs.iterdir() if not d.name.startswith(".")) >= 3:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    clean = load_campaign(f)
    clean.out = tmp_path / "clean"
    run_study_campaign(clean, progress=False)
    pd.testing.assert_frame_equal(read_sweep(tmp_path / "out", "summary"), read_sweep(clean.out, "summary"))
    assert len(list(p for p in runs.iterdir() if not p.name.startswith("."))) == 8


@pytest.mark.parametrize("text, message", [
    ('study = "iw10"\nscenario = "x.toml"\nout = "o"\n[grid]\nseed = [1]\n', "exactly one of scenario"),
    ('study = "nope"\nout = "o"\n[grid]\nseed = [1]\n', "study: unknown study 'nope'"),
    ('study = "iw10"\nout = "o"\n[grid]\nnot_a_field = [1]\n', "grid: iw10: unknown parameter 'not_a_field'"),
    ('study = "iw10"\nout = "o"\n[grid]\nflows = ["x"]\n',
     "grid: iw10: flows='x': expected a comma-separated list, each a whole number"),
    ('study = "iw10"\nout = "o"\ncases = [1]\n[grid]\nseed = [1]\n', "cases: study 'iw10' has no cases"),
    ('study = "avpf"\nout = "o"\ncases = [99]\n[grid]\nseed = [1]\n', r"cases: \[99\] not among"),
    ('study = "iw10"\nout = "o"\nquick = "yes"\n[grid]\nseed = [1]\n', "quick: must be true or false"),
    ('study = "iw10"\nout = "o"\n[set]\nreplications = 0\n[grid]\nseed = [1]\n', "set: iw10: replications must"),
])
def test_study_campaign_files_are_checked_before_any_run(tmp_path, text, message):
    f = tmp_path / "c.toml"
    f.write_text(text)
    with pytest.raises(CampaignError, match=message) as e:
        load_campaign(f)
    assert str(e.value).startswith(f"{f}: ")  # the file first


def test_a_study_campaigns_parameter_problems_are_said_once_each_one_per_line(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('study = "iw10"\nout = "o"\n[aliases]\nrate = "bottleneck_rate_bpss"\n'
                 '[grid]\nrate = [1e6, 2e6]\nflows = [1, "x", "y"]\n[set]\nseed = 1\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(f)
    lines = str(e.value).split("\n")
    assert [line.split(" (known: ")[0] for line in lines] == [
        f"{f}: grid: iw10: unknown parameter 'bottleneck_rate_bpss'; did you mean 'bottleneck_rate_bps'?",
        f"{f}: grid: iw10: flows='x': expected a comma-separated list, each a whole number (e.g. 1,2,6)",
        f"{f}: grid: iw10: flows='y': expected a comma-separated list, each a whole number (e.g. 1,2,6)",
    ], lines
    # With ``set`` wrong, the grid's names and values that do not read are
    # said too (its checks, which judge a point's values together, wait).
    f.write_text('study = "iw10"\nout = "o"\n[aliases]\nb = "buffer_packetz"\n'
                 '[grid]\nflows = [0, "x", "x"]\nb = [1, 2]\n[set]\nseed = "x"\nflowz = 2\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(f)
    lines = str(e.value).split("\n")
    assert [line.split(" (known: ")[0] for line in lines] == [
        f"{f}: set: iw10: seed='x': expected a whole number",
        f"{f}: set: iw10: unknown parameter 'flowz'; did you mean 'flows'?",
        f"{f}: grid: iw10: flows='x': expected a comma-separated list, each a whole number (e.g. 1,2,6)",
        f"{f}: grid: iw10: unknown parameter 'buffer_packetz'; did you mean 'buffer_packets'?"], lines


def test_grid_values_that_name_the_same_folder_are_refused(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('study = "iw10"\nout = "o"\n[grid]\nflows = [[1], "1"]\n')  # both "flows=1"
    with pytest.raises(CampaignError) as e:
        load_campaign(f).points()
    assert str(e.value) == f"{f}: grid: two points have the same name; give distinct values"


def test_a_grid_of_more_points_than_the_limit_is_refused_before_any_point_is_made(tmp_path, monkeypatch):
    from mediasim.campaign import study

    assert study.MAX_POINTS == 10_000
    f = tmp_path / "c.toml"
    # 10,000 x 10,000 points: made one by one, this took minutes.
    values = ", ".join(str(1000 * (i + 1)) for i in range(10_000))
    f.write_text(f'study = "iw10"\nout = "o"\nquick = true\n[grid]\naccess_rate_bps = [{values}]\n'
                 f'bottleneck_rate_bps = [{values}]\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(f).points()
    assert str(e.value) == f"{f}: grid: 100,000,000 points, more than 10,000"
    monkeypatch.setattr(study, "MAX_POINTS", 6)
    f.write_text('study = "iw10"\nout = "o"\n[grid]\nflows = [1, 2, 3]\nseed = [1, 2]\n')
    assert len(load_campaign(f).points()) == 6
    f.write_text('study = "iw10"\nout = "o"\n[grid]\nflows = [1, 2, 3, 4]\nseed = [1, 2]\n')
    with pytest.raises(CampaignError) as e:
        load_campaign(f).points()
    assert str(e.value) == f"{f}: grid: 8 points, more than 6"


def test_a_study_campaign_file_gives_its_flags_and_counts(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('study = "iw10"\nout = "o"\n[grid]\nseed = [1]\n')
    spec = load_campaign(f)
    assert (spec.study, spec.quick, spec.sensitivity, spec.cases, spec.replications, spec.seed, spec.where) == (
        "iw10", False, False, None, None, None, str(f))
    f.write_text('study = "rmtp"\nout = "o"\nquick = true\nsensitivity = true\nreplications = 3\nseed = 5\n'
                 '[grid]\nseed = [1]\n')
    spec = load_campaign(f)
    assert (spec.quick, spec.sensitivity, spec.replications, spec.seed) == (True, True, 3, 5)
    # Its folder: the file's, relative to it, unless the command line gives one.
    assert spec.out == (tmp_path / "o").resolve()
    assert load_campaign(f, tmp_path / "elsewhere").out == (tmp_path / "elsewhere").resolve()


def test_grid_values_of_every_kind_reach_the_study_parameters(tmp_path):
    """A list of lists (a parameter of tuples), a list, a boolean and a
    number in a study campaign's grid and set are the values the study's
    parameters take, as --set would give them."""
    f = tmp_path / "c.toml"
    f.write_text('study = "svc"\nout = "o"\nquick = true\n[set]\nbuffers = [5, 20]\n[grid]\n'
                 'wred_profiles = [[[0.5, 1, 0.1], [0.2, 0.6, 0.2], [0.05, 0.3, 0.5]]]\n'
                 'ppacc_shaping = [true, false]\nbottleneck_rate_bps = [4e6]\n')
    points = load_campaign(f).points()
    assert [pt.params.ppacc_shaping for pt in points] == [True, False]
    for pt in points:
        assert pt.params.wred_profiles == ((0.5, 1.0, 0.1), (0.2, 0.6, 0.2), (0.05, 0.3, 0.5))
        assert (pt.params.buffers, pt.params.bottleneck_rate_bps) == ((5, 20), 4e6)
    assert points[0].name == ("wred_profiles=0.5,1,0.1_0.2,0.6,0.2_0.05,0.3,0.5,ppacc_shaping=True,"
                              "bottleneck_rate_bps=4000000.0")


def test_the_example_study_campaign_reads(examples):
    spec = load_campaign(examples / "campaigns" / "iw10_access_rate.toml")
    assert [pt.labels for pt in spec.points()] == [{"rate": 1e6}, {"rate": 2e6}, {"rate": 4e6}]
    assert spec.points()[2].params.bottleneck_rate_bps == 4e6
    assert spec.points()[0].params.jitter_buffers_ms == (40.0, 80.0)


def _labels_and_flows(res, job):
    return res.meta["labels"], job.seed, res.tables["flows"], res.tables["link_capacity"]


def test_the_run_cache_keys_stores_and_serves_runs_as_a_campaign_would(examples, tmp_path):
    # run_many through the folder: each job stored under the key a
    # campaign gives it, with its labels less the private ones; served
    # again from the folder as the same tables (coded columns of empty
    # tables included); a failing run named by its labels and seed.
    import json

    import mediasim
    from mediasim import Results
    from mediasim.campaign.cache import RunCache
    from mediasim.campaign.executors import LocalExecutor
    from mediasim.campaign.keys import engine_identity, run_key
    from mediasim.campaign.store import RunStore
    from mediasim.sweep import grid

    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3})
    jobs = grid(sc, {"interval": [10, 20]}, replications=1, seed=4,
                aliases={"interval": "flows[name=voice].interval_ms"})
    for j in jobs:
        j.labels["_note"] = "private"
    store = RunStore.open(tmp_path, engine_identity())
    served = RunCache(store, LocalExecutor(1))
    first = served.run_many(jobs, _labels_and_flows, False, "runs")
    assert (served.ran, served.reused) == (2, 0)
    build = store.engine["engine_build"]
    for j, (labels, seed, flows, capacity) in zip(jobs, first):
        key = run_key(j.scenario, j.seed, j.replication, build)
        assert len(key) == 20 and store.status(key) == "done"  # 80 bits of SHA-256: the folder names stored runs
        assert json.loads((tmp_path / "runs" / key / "run.json").read_text())["labels"] == labels
        assert labels == {"interval": j.labels["interval"]} and seed == 4 and len(flows) > 0
        # No link changes rate: no rows, and every direction's name kept.
        assert len(capacity) == 0 and len(capacity["link_dir"].cat.categories) > 0
    again = served.run_many(jobs, _labels_and_flows, False, "runs")
    assert (served.ran, served.reused) == (2, 2)
    for (l1, _, f1, d1), (l2, _, f2, d2) in zip(first, again):
        assert l1 == l2
        pd.testing.assert_frame_equal(f1, f2)
        pd.testing.assert_frame_equal(d1, d2)
    plain = served.run_many(jobs, None, False, "runs")
    assert all(isinstance(r, Results) for r in plain)
    assert [r.meta["labels"] for r in plain] == [l for l, *_ in first]
    bad = grid(sc.with_overrides({"duration_s": -1}), {"interval": [30]}, replications=1, seed=4,
               aliases={"interval": "flows[name=voice].interval_ms"})
    with pytest.raises(RuntimeError, match=r"run \{'interval': 30\} seed 4 replication 0: ScenarioError"):
        served.run_many(bad, None, False, "runs")


def test_the_campaign_command_runs_a_study_campaign_says_what_it_did_and_fails_with_a_point(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from mediasim.campaign import study_run
    from mediasim.cli import main

    f = campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n", workers=2)
    real = iw10.reproduce
    monkeypatch.setattr(iw10, "reproduce", lambda p, out, **kw: (
        real(p, out, **kw) if p.bottleneck_rate_bps != 1e6 else 1 / 0))
    r = CliRunner().invoke(main, ["-q", "campaign", str(f), "--workers", "1"])
    out = tmp_path / "out"
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines()[-1] == (f"written to {out}/ (index.md; points/<point>/report.md; read a table over "
                                         "all points with mediasim.read_sweep)")
    assert r.stdout.splitlines()[:2] == [
        "2 points: 0 already stored, 1 run now, 1 failed (4 simulation runs made, 0 read from the folder)",
        "  failed {'bottleneck_rate_bps': 1000000.0}: ZeroDivisionError: division by zero"], r.stdout
    # The command line's workers and scheduler win over the file's; a
    # campaign that cannot go on is named.
    seen = {}

    def refuse(spec, **kw):
        seen.update(workers=spec.workers, scheduler=spec.scheduler)
        raise CampaignError("no cluster at tcp://h:1")

    monkeypatch.setattr(study_run, "run_study_campaign", refuse)
    r = CliRunner().invoke(main, ["campaign", str(f), "--workers", "3", "--scheduler", "tcp://h:1"])
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", "error: no cluster at tcp://h:1\n")
    assert seen == {"workers": 3, "scheduler": "tcp://h:1"}
    r = CliRunner().invoke(main, ["campaign", str(f)])
    assert seen == {"workers": 2, "scheduler": None}


def test_a_study_campaigns_dry_run_names_the_points_to_run_and_writes_nothing(tmp_path):
    from click.testing import CliRunner

    from mediasim.campaign.study_plan import MAX_POINTS_NAMED
    from mediasim.cli import main

    out = tmp_path / "out"
    f = campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n")
    r = CliRunner().invoke(main, ["campaign", str(f), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert r.output == (f"2 points of iw10: 0 already stored in {out}, 2 to run\n"
                        "  to run: bottleneck_rate_bps=1000000.0\n  to run: bottleneck_rate_bps=2000000.0\n"
                        "the points to run make 8 runs of 4 scenarios, every one valid: 0 already stored, 8 to run\n"
                        "nothing was run or written (dry run)\n")
    assert not out.exists()
    run_study_campaign(load_campaign(campaign(tmp_path, "bottleneck_rate_bps = [1e6]\n")), progress=False)
    before = sorted((str(p), p.stat().st_size if p.is_file() else -1) for p in out.rglob("*"))
    plan = plan_study_campaign(load_campaign(campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n")))
    assert plan.splitlines() == [f"2 points of iw10: 1 already stored in {out}, 1 to run",
                                 "  to run: bottleneck_rate_bps=2000000.0",
                                 "the points to run make 4 runs of 2 scenarios, every one valid: 0 already stored, "
                                 "4 to run", "nothing was run or written (dry run)"]
    assert sorted((str(p), p.stat().st_size if p.is_file() else -1) for p in out.rglob("*")) == before
    # Past the points a dry run names, the rest are counted.
    many = plan_study_campaign(load_campaign(campaign(tmp_path, f"buffer_packets = {list(range(10, 22))}\n")))
    named = [line for line in many.splitlines() if line.startswith("  to run: ")]
    assert len(named) == MAX_POINTS_NAMED == 10 and named[-1] == "  to run: buffer_packets=19"
    assert f"  ... and {12 - MAX_POINTS_NAMED} more" in many.splitlines()
    ten = plan_study_campaign(load_campaign(campaign(tmp_path, f"buffer_packets = {list(range(10, 20))}\n")))
    assert len([line for line in ten.splitlines() if line.startswith("  to run: ")]) == 10 and "more" not in ten
    # A folder a campaign would refuse is refused, as a real run refuses it.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    r = CliRunner().invoke(main, ["campaign", str(f), "--out", str(tmp_path / "mine"), "--dry-run"])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr.startswith(f"error: {tmp_path / 'mine'} holds files that are not a campaign (no campaign.json)")
    one = plan_study_campaign(load_campaign(campaign(tmp_path, "bottleneck_rate_bps = [1e6]\n")))
    assert one == f"1 point of iw10: 1 already stored in {out}, 0 to run\nnothing was run or written (dry run)"
    # A point whose parameters the study refuses is said as a real run says it.
    r = CliRunner().invoke(main, ["campaign", str(campaign(tmp_path, "jitter_buffers_ms = [[-1]]\n")), "--dry-run"])
    assert r.exit_code == 2 and "grid: iw10: jitter_buffers_ms must be at least 0 (got -1)" in r.output, r.output


def test_the_points_to_run_make_at_most_as_many_runs_as_a_grid(tmp_path, monkeypatch):
    from mediasim.campaign import study_plan

    assert study_plan.MAX_JOBS == 1_000_000
    f = campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n")  # 4 runs a point
    monkeypatch.setattr(study_plan, "MAX_JOBS", 8)
    assert "make 8 runs of 4 scenarios" in plan_study_campaign(load_campaign(f))
    monkeypatch.setattr(study_plan, "MAX_JOBS", 7)
    with pytest.raises(CampaignError) as e:
        plan_study_campaign(load_campaign(f))
    assert str(e.value) == f"{f}: the points to run make more than 7 runs (a campaign's most, as a grid's)"
    # A point stored whole is not counted.
    monkeypatch.undo()
    run_study_campaign(load_campaign(campaign(tmp_path, "bottleneck_rate_bps = [1e6]\n")), progress=False)
    monkeypatch.setattr(study_plan, "MAX_JOBS", 4)
    f = campaign(tmp_path, "bottleneck_rate_bps = [1e6, 2e6]\n")
    assert "make 4 runs of 2 scenarios" in plan_study_campaign(load_campaign(f))


def test_a_scenario_the_engine_refuses_at_one_point_stops_the_campaign_before_anything_runs(tmp_path):
    """The study's parameters take the value; the scenario the study makes
    of it is refused, by the dry run and by a real run alike, before any
    point runs or anything is written."""
    from click.testing import CliRunner

    from mediasim.cli import main

    f = campaign(tmp_path, "mss_bytes = [1460, 100000]\n")
    said = ("1 of 2 points of iw10 would fail:\n"
            "  flows[1].tcp.mss_bytes: must be 1..=65495 (got 100000) (where mss_bytes = 100000)")
    for flags in ([], ["--dry-run"]):
        r = CliRunner().invoke(main, ["campaign", str(f), *flags])
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"error: {said}\n"), flags
    with pytest.raises(CampaignError) as e:
        run_study_campaign(load_campaign(f), progress=False)
    assert str(e.value) == said
    assert not (tmp_path / "out").exists()
    # A problem at every point is said so; the points already stored are
    # not made again.
    every = campaign(tmp_path, "buffer_packets = [20, 30]\n", extra="mss_bytes = 100000\n")
    with pytest.raises(CampaignError) as e:
        plan_study_campaign(load_campaign(every))
    assert str(e.value) == ("2 of 2 points of iw10 would fail:\n"
                            "  flows[1].tcp.mss_bytes: must be 1..=65495 (got 100000) (at every grid point)")
    run_study_campaign(load_campaign(campaign(tmp_path, "mss_bytes = [1460]\n")), progress=False)
    with pytest.raises(CampaignError, match="^1 of 1 point of iw10 would fail:\n  flows"):
        plan_study_campaign(load_campaign(campaign(tmp_path, "mss_bytes = [1460, 100000]\n")))


def test_a_scenario_that_cannot_be_read_in_and_a_problem_without_a_path_are_said(tmp_path, monkeypatch):
    """A trace file gone between the study's check of its parameters and
    the reading of its scenarios; the engine refusing a scenario without
    naming a field (it always names one today)."""
    from mediasim.campaign import study_plan
    from mediasim.errors import ScenarioError

    f = tmp_path / "c.toml"  # one run, said as one
    f.write_text('study = "iw10"\nout = "out"\nquick = true\nreplications = 1\n[set]\nflows = [1]\n'
                 'initial_windows = [10]\naccesses = ["wired"]\n[grid]\nbuffer_packets = [100]\n')
    spec = load_campaign(f)
    assert "\nthe points to run make 1 run of 1 scenario, every one valid: 0 already stored, 1 to run\n" in (
        plan_study_campaign(spec))

    read = []

    def unreadable(scenario):
        read.append(scenario)
        raise ScenarioError.at("links[1].ab.trace.file", f"no such trace file: gone-{len(read)}.trace")

    f.write_text(f.read_text().replace("initial_windows = [10]", "initial_windows = [3, 10]"))  # two scenarios
    with monkeypatch.context() as m:
        m.setattr(study_plan, "canonical", unreadable)
        with pytest.raises(CampaignError) as e:
            plan_study_campaign(load_campaign(f))
    # Each scenario's problem is said, not only the first's or the last's.
    assert str(e.value) == ("1 of 1 point of iw10 would fail:\n"
                            "  links[1].ab.trace.file: no such trace file: gone-1.trace (where buffer_packets = 100)\n"
                            "  links[1].ab.trace.file: no such trace file: gone-2.trace (where buffer_packets = 100)")

    def refuse(text):
        raise ScenarioError("refused, no field named")

    monkeypatch.setattr(study_plan._engine, "validate", refuse)
    with pytest.raises(CampaignError) as e:
        plan_study_campaign(spec)
    assert str(e.value) == ("1 of 1 point of iw10 would fail:\n"
                            "  scenario: refused, no field named (where buffer_packets = 100)")


def test_a_sensitivity_setting_the_study_refuses_is_named_with_the_point(tmp_path):
    """A value that suits the study's default but not one of its
    sensitivity settings (22.5 s + 1 s of spread ends inside the 25 s run,
    + 3 s does not)."""
    f = tmp_path / "c.toml"
    f.write_text('study = "media-scaling"\nout = "out"\nquick = true\nsensitivity = true\nreplications = 1\n'
                 "[grid]\njoin_s = [15, 22.5]\n")
    with pytest.raises(CampaignError) as e:
        plan_study_campaign(load_campaign(f))
    assert str(e.value) == (
        "1 of 2 points of media-scaling would fail:\n  parameters: media-scaling: start_spread_s must end before the "
        "run does (sensitivity setting start_spread_s, high: 3.0) (where join_s = 22.5)")


def test_a_study_campaign_with_sensitivity_runs_what_its_dry_run_counted(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('study = "media-scaling"\nout = "out"\nquick = true\nsensitivity = true\nreplications = 1\n'
                 "workers = 2\n[grid]\nseed = [4]\n")
    spec = load_campaign(f)
    plan = plan_study_campaign(spec)
    counted = int(re.search(r"make (\d+) runs of (\d+) scenarios", plan).group(1))
    assert counted > 10 and f"0 already stored, {counted} to run" in plan
    r = run_study_campaign(spec, progress=False)
    # Every counted run ran once; the sensitivity's default setting is the study's own run.
    assert (r.ran, r.failed, r.runs_ran, r.runs_reused) == (1, [], counted, 1)
    runs = [d for d in sorted((spec.out / "runs").iterdir()) if (d / "run.json").is_file()]
    assert len(runs) == counted
    # A damaged run (its marker gone) is counted as one to run again.
    run = runs[0]
    (run / "run.json").unlink()
    (spec.out / "points" / "seed=4" / "point.json").unlink()
    assert (f"{counted - 1} already stored, 1 to run (of which 1 damaged, to be run again)"
            in plan_study_campaign(spec))


def test_a_points_folder_name_says_its_labels_and_a_long_one_ends_in_a_hash():
    from mediasim.campaign.study import _name

    assert _name({"rate": 1e6, "buffers": [5, 20], "mix": [[1, 2], [3]]}) == "rate=1000000.0,buffers=5,20,mix=1,2_3"
    assert _name({"a b": "x/y:z", "ok": "A-b+c.d"}) == "a_b=x_y_z,ok=A-b+c.d"
    long = {"p": "v" * 120}
    name = _name(long)
    assert len(name) == 93 and name.startswith("p=" + "v" * 78 + "-")
    assert name != _name({"p": "v" * 119 + "w"}) and name == _name({"p": "v" * 120})  # the hash tells them apart
    assert len(_name({"p": "v" * 98})) == 100 and "-" not in _name({"p": "v" * 98})  # 100 characters: kept whole
    assert len(_name({"p": "v" * 99})) == 93  # 101: shortened


def test_a_point_is_done_only_with_its_key_and_every_file_at_its_size(tmp_path):
    from mediasim.campaign.study import MARKER, point_done

    (tmp_path / "a.csv").write_text("123")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.png").write_bytes(b"12")
    marker = {"key": "k1", "files": {"a.csv": 3, "sub/b.png": 2}}
    assert not point_done(tmp_path, "k1")  # no marker
    (tmp_path / MARKER).write_text(json.dumps(marker))
    assert point_done(tmp_path, "k1") and not point_done(tmp_path, "k2")
    (tmp_path / "a.csv").write_text("12")
    assert not point_done(tmp_path, "k1")  # a file cut short
    (tmp_path / "a.csv").write_text("123")
    (tmp_path / "sub" / "b.png").unlink()
    assert not point_done(tmp_path, "k1")  # a file gone
    (tmp_path / "sub" / "b.png").mkdir()
    assert not point_done(tmp_path, "k1")  # a folder where a file was
    for bad in ({"key": "k1"}, {"key": "k1", "files": ["a.csv"]}, ["k1"]):
        (tmp_path / MARKER).write_text(json.dumps(bad))
        assert not point_done(tmp_path, "k1"), bad
    (tmp_path / MARKER).write_text('{"key": "k1", "fi')  # a marker cut short
    assert not point_done(tmp_path, "k1")


def test_the_index_lists_each_point_with_its_status_and_report(tmp_path):
    from mediasim.campaign.study import MARKER, Point, StudyCampaign
    from mediasim.campaign.study_run import write_index

    spec = StudyCampaign(study="iw10", out=tmp_path, grid={"rate": [1, 2], "iw": [10]}, aliases={}, overrides={},
                         workers=None, scheduler=None, quick=True)
    points = [Point("rate=1,iw=10", {"rate": 1, "iw": 10}, None), Point("rate=2,iw=10", {"rate": 2, "iw": 10}, None)]
    done = tmp_path / "points" / "rate=2,iw=10"
    done.mkdir(parents=True)
    (done / MARKER).write_text(json.dumps({"key": "k2", "files": {}}))
    path = write_index(spec, points, {"rate=1,iw=10": "k1", "rate=2,iw=10": "k2"}, tmp_path)
    assert path.read_text() == (
        "# Study campaign: iw10\n\n2 points over rate, iw (quick parameters).\n\n"
        "| rate | iw | status | report |\n|---|---|---|---|\n"
        "| 1 | 10 | failed |  |\n"
        "| 2 | 10 | done | [report](points/rate=2,iw=10/report.md) |\n")
    spec.quick = False
    assert "2 points over rate, iw.\n" in write_index(spec, points, {"rate=1,iw=10": "k1", "rate=2,iw=10": "k2"},
                                                      tmp_path).read_text()


def test_a_study_campaign_report_says_what_was_done_and_each_failure():
    from mediasim.campaign.study import StudyCampaignReport

    r = StudyCampaignReport(Path("o"), 3, reused=1, ran=1, runs_reused=4, runs_ran=8,
                            failed=[{"labels": {"rate": 1}, "error": "E: x"}])
    assert str(r) == ("3 points: 1 already stored, 1 run now, 1 failed (8 simulation runs made, 4 read from the "
                      "folder)\n  failed {'rate': 1}: E: x")


def test_a_points_key_covers_its_study_parameters_options_engine_runs_and_package():
    from dataclasses import dataclass

    @dataclass
    class P:
        rate_bps: float = 1e6
        trace: Path = Path("traces/a.txt")  # not JSON by itself: keyed by its text
        sizes: tuple = (1, 2)

    opts = {"cases": [1], "sensitivity": False}
    key = point_key("iw10", P(), opts, "build-1", ["run-a", "run-b"], "package-1")
    # The same bytes as before: a changed rule would redo every stored point of every campaign folder.
    assert key == "ce6f38092f231d04ad5b"
    # Options in any order, runs in any order.
    assert key == point_key("iw10", P(), {"sensitivity": False, "cases": [1]}, "build-1", ["run-b", "run-a"],
                            "package-1")
    others = [point_key("svc", P(), opts, "build-1", ["run-a", "run-b"], "package-1"),
              point_key("iw10", P(rate_bps=2e6), opts, "build-1", ["run-a", "run-b"], "package-1"),
              point_key("iw10", P(trace=Path("b.txt")), opts, "build-1", ["run-a", "run-b"], "package-1"),
              point_key("iw10", P(), {"cases": [2], "sensitivity": False}, "build-1", ["run-a", "run-b"], "package-1"),
              point_key("iw10", P(), opts, "build-2", ["run-a", "run-b"], "package-1"),
              point_key("iw10", P(), opts, "build-1", ["run-a", "run-c"], "package-1"),
              point_key("iw10", P(), opts, "build-1", ["run-a"], "package-1"),
              point_key("iw10", P(), opts, "build-1", ["run-a", "run-b"], "package-2")]
    assert len({key, *others}) == 9


def test_the_package_build_covers_the_packages_code_and_data_not_its_caches_or_engine(tmp_path):
    import shutil

    import mediasim

    root = tmp_path / "mediasim"
    shutil.copytree(Path(mediasim.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    build = package_build(root)
    assert build == package_build(Path(mediasim.__file__).parent) and len(build) == 16
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"cache")
    (root / "_engine.abi3.so").write_bytes(b"another build of the engine")
    assert package_build.__wrapped__(root) == build
    for change in (lambda: (root / "experiments" / "iw10.py").write_text("# another analysis\n"),
                   lambda: (root / "data" / "dumbbell.toml").unlink(),
                   lambda: (root / "extra.py").write_text("")):
        change()
        assert package_build.__wrapped__(root) != build
        build = package_build.__wrapped__(root)


def test_a_point_is_made_again_when_a_trace_file_it_reads_or_the_package_changes(tmp_path, monkeypatch):
    """Its name and parameters the same: the point's key covers the trace's
    contents (through its runs' keys) and the analysis (the package's
    build); the analysis alone changed, the stored runs serve it again."""
    from mediasim.campaign import study_plan

    trace = tmp_path / "link.trace"
    trace.write_text("\n".join(str(t) for t in range(1, 1001)) + "\n")  # 12 Mbit/s
    f = tmp_path / "c.toml"
    f.write_text(f'study = "iw10"\nout = "out"\nquick = true\nreplications = 1\nworkers = 1\n[set]\n'
                 f'flows = [1]\ninitial_windows = [10]\naccesses = ["cellular"]\ncellular_trace = "{trace}"\n'
                 "[grid]\ncellular_buffer_packets = [100]\n")
    spec = load_campaign(f)
    first = run_study_campaign(spec, progress=False)
    assert (first.ran, first.runs_ran) == (1, 1)
    assert (run_study_campaign(spec, progress=False).reused) == 1
    trace.write_text("\n".join(str(t) for t in range(1, 1001, 2)) + "\n")  # half the rate, the same name
    again = run_study_campaign(spec, progress=False)
    assert (again.reused, again.ran, again.runs_ran) == (0, 1, 1)
    monkeypatch.setattr(study_plan, "package_build", lambda: "another analysis")
    analysed = run_study_campaign(spec, progress=False)
    assert (analysed.reused, analysed.ran, analysed.runs_ran, analysed.runs_reused) == (0, 1, 0, 1)


def test_each_point_reaches_the_study_with_the_campaigns_options_workers_and_progress(tmp_path, monkeypatch, caplog):
    """What run_study_campaign hands on, with the study itself stood in
    for: each point's parameters, the campaign's cases, sensitivity,
    workers and progress, and a stamp naming the point; the executor it
    makes from the file's workers and scheduler, closed at the end (one
    handed in is the caller's to close); campaign.json's fields."""
    import logging

    from mediasim import experiments
    from mediasim.campaign import study_run

    f = tmp_path / "c.toml"
    f.write_text('study = "avpf"\nout = "o"\nquick = true\ncases = [1]\nsensitivity = true\nworkers = 3\n'
                 'scheduler = "tcp://h:1"\n[grid]\nseed = [5, 6]\n')
    spec = load_campaign(f)
    calls = []

    def study(name, params, out, **kw):
        calls.append((name, params.seed, sorted(p.name for p in Path(out).glob("*")), kw))
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "report.md").write_text(f"# seed {params.seed}\n")
        return Path(out) / "report.md"

    class Executor:
        closed = 0

        def close(self):
            Executor.closed += 1

    made = []
    monkeypatch.setattr(experiments, "reproduce", study)
    monkeypatch.setattr(study_run, "make_executor", lambda workers, scheduler: made.append((workers, scheduler))
                        or Executor())
    with caplog.at_level(logging.INFO, logger="mediasim"):
        r = run_study_campaign(spec, progress=True)
    assert (r.folder, r.points, r.ran, r.failed) == (spec.out, 2, 2, [])
    assert made == [(3, "tcp://h:1")] and Executor.closed == 1
    assert [c[:3] for c in calls] == [("avpf", 5, []), ("avpf", 6, [])]  # each into a folder of its own
    kw = calls[0][3]
    assert (kw["cases"], kw["sensitivity"], kw["workers"], kw["progress"]) == ((1,), True, 3, True)
    assert kw["stamp"].endswith("avpf at {'seed': 5}") and isinstance(kw["cache"], study_run.cache.RunCache)
    assert kw["scenarios_checked"] is True  # by the campaign, every point's before any ran: not again per point
    assert "avpf: point {'seed': 5}" in caplog.messages and "avpf: point {'seed': 6}" in caplog.messages
    assert [m for m in caplog.messages if re.fullmatch(r"avpf point \{'seed': 6\}: \d+\.\d s", m)]  # its wall time
    info = json.loads((spec.out / "campaign.json").read_text())
    assert (info["kind"], info["study"], info["aliases"], info["runs"]) == ("study", "avpf", {}, [])
    assert info["options"] == {"cases": [1], "sensitivity": True} and "engine_build" in info
    assert [pt["labels"] for pt in info["points"]] == [{"seed": 5}, {"seed": 6}]
    # An executor handed in is used and left open.
    given = Executor()
    (spec.out / "points" / "seed=5" / "point.json").unlink()
    run_study_campaign(spec, executor=given)
    assert Executor.closed == 1 and len(made) == 1 and calls[-1][3]["progress"] is True  # bars by default
