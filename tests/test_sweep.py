"""mediasim sweep: a grid x replications, stored per run, resumable."""

import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner

from mediasim.cli import main
from mediasim.sweep import grid


def test_grid_is_the_product_of_the_axes(examples):
    jobs = grid(examples / "dumbbell.toml", {"flows[name=voice].interval_ms": [10, 20, 40], "duration_s": [5, 6]},
                replications=2)
    assert len(jobs) == 3 * 2 * 2
    assert {j.labels["duration_s"] for j in jobs} == {5, 6}
    assert {j.scenario["flows"][0]["interval_ms"] for j in jobs} == {10, 20, 40}


def test_sweep_writes_tables_and_resumes(examples, tmp_path):
    args = ["sweep", str(examples / "dumbbell.toml"), "--vary", "flows[name=voice].interval_ms=10,20",
            "--set", "duration_s=5", "--replications", "2", "--out", str(tmp_path), "--workers", "2"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    done = json.loads((tmp_path / "sweep.json").read_text())
    assert (done["runs"], done["reused"], done["newly_run"], done["failed"]) == (4, 0, 4, [])
    flows = pd.read_parquet(tmp_path / "flows.parquet")
    assert set(flows["flows[name=voice].interval_ms"]) == {10, 20}
    voice = flows[flows["flow"] == "voice"].groupby("flows[name=voice].interval_ms")["sent"].mean()
    assert voice[10] > voice[20]
    # Run again: everything is on disk, nothing runs.
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    done = json.loads((tmp_path / "sweep.json").read_text())
    assert (done["runs"], done["reused"], done["newly_run"]) == (4, 4, 0)
    assert (tmp_path / "summary.csv").exists()
    # No media streams: an empty media table, no media summary.
    assert pd.read_parquet(tmp_path / "media.parquet").empty and not (tmp_path / "media_summary.csv").exists()


def test_a_sweep_of_calls_summarises_what_the_viewers_saw_and_heard(examples, tmp_path):
    axis = "links[name=bottleneck].delay_ms"
    args = ["sweep", str(examples / "calls.toml"), "--vary", f"{axis}=25,150", "--set", "duration_s=8",
            "--replications", "2", "--out", str(tmp_path), "--workers", "1"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert re.search(rf"\n\nMedia:\n\| +{re.escape(axis)} \| flow ", r.stdout)
    assert r.stdout.endswith(f"tables in {tmp_path}/ (flows.parquet, summary.csv, media.parquet, media_summary.csv, "
                             "runs/)\n")
    media = pd.read_parquet(tmp_path / "media.parquet")
    assert len(media) == 2 * 2 * 2  # delays x replications x streams
    summary = pd.read_csv(tmp_path / "media_summary.csv").set_index([axis, "flow"])
    voice = media[media["flow"] == "voice/alice/rtp"].groupby(axis)
    assert summary.loc[(25, "voice/alice/rtp"), "mos_mean"] == pytest.approx(voice["mos"].mean()[25])
    assert summary.loc[(25, "voice/alice/rtp"), "mos_mean"] > 4
    # Past the fixed 60 ms playout delay nothing is heard: no mouth-to-ear
    # delay, a MOS near the floor.
    assert summary.loc[(150, "voice/alice/rtp"), "mos_mean"] < 1.5
    assert pd.isna(summary.loc[(150, "voice/alice/rtp"), "mouth_to_ear_ms_mean"])
    video = summary.loc[(150, "video/alice/rtp")]
    assert video["frame_delay_mean_ms_mean"] > summary.loc[(25, "video/alice/rtp"), "frame_delay_mean_ms_mean"] + 100
    # The same folder, a sweep without media: no summary of the calls' is left.
    r = CliRunner().invoke(main, ["sweep", str(examples / "dumbbell.toml"), "--vary", "duration_s=3,4",
                                  "--out", str(tmp_path), "--workers", "1"])
    assert r.exit_code == 0, r.output
    assert pd.read_parquet(tmp_path / "media.parquet").empty and not (tmp_path / "media_summary.csv").exists()


def test_a_sweeps_confidence_intervals_keep_to_each_figures_scale(examples, tmp_path):
    """Two replications with 1% random loss: Student's t interval of the
    lost frames reaches below zero and that of the voice MOS above 4.5;
    the summaries clip them to what the figures can be (as the loss rate's
    to [0, 1])."""
    from scipy import stats

    r = CliRunner().invoke(main, ["-q", "sweep", str(examples / "calls.toml"), "--vary",
                                  "links[name=bottleneck].delay_ms=25", "--set", "duration_s=4", "--set",
                                  'links[name=bottleneck].loss={"type": "packet", "rate": 0.01}',
                                  "--replications", "2", "--out", str(tmp_path), "--workers", "1"])
    assert r.exit_code == 0, r.output
    media = pd.read_parquet(tmp_path / "media.parquet").set_index("flow")
    summary = pd.read_csv(tmp_path / "media_summary.csv").set_index("flow")
    flows = pd.read_csv(tmp_path / "summary.csv")
    half = lambda x: stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / len(x) ** 0.5  # noqa: E731
    lost, mos = media.loc["video/alice/rtp", "frames_lost"], media.loc["voice/alice/rtp", "mos"]
    assert lost.mean() - half(lost) < 0 and summary.loc["video/alice/rtp", "frames_lost_ci_low"] == 0
    assert mos.mean() + half(mos) > 4.5 and summary.loc["voice/alice/rtp", "mos_ci_high"] == 4.5
    loss = pd.read_parquet(tmp_path / "flows.parquet").groupby(["flow", "receiver"])["loss_rate"]
    below_zero = [k for k, x in loss if x.mean() - half(x) < 0]
    assert below_zero and (flows.set_index(["flow", "receiver"]).loc[below_zero, "loss_rate_ci_low"] == 0).all()
    assert (flows["loss_rate_ci_low"] >= 0).all() and (flows["loss_rate_ci_high"] <= 1).all()
    assert list(pd.read_csv(tmp_path / "media_summary.csv").columns[:3]) == [
        "links[name=bottleneck].delay_ms", "flow", "n"]


def test_a_sweeps_loss_rate_interval_stops_at_one(examples, tmp_path):
    """Nearly every packet lost, two replications: the t interval of a
    flow's loss rate reaches past 1, and the summary stops it there."""
    from scipy import stats

    r = CliRunner().invoke(main, ["-q", "sweep", str(examples / "dumbbell.toml"), "--vary", "duration_s=3",
                                  "--set", 'links[name=bottleneck].loss={"type": "packet", "rate": 0.98}',
                                  "--replications", "2", "--out", str(tmp_path), "--workers", "1"])
    assert r.exit_code == 0, r.output
    half = lambda x: stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / len(x) ** 0.5  # noqa: E731
    loss = pd.read_parquet(tmp_path / "flows.parquet").groupby(["flow", "receiver"])["loss_rate"]
    past_one = [k for k, x in loss if x.mean() + half(x) > 1]
    summary = pd.read_csv(tmp_path / "summary.csv").set_index(["flow", "receiver"])
    assert past_one and (summary.loc[past_one, "loss_rate_ci_high"] == 1).all()


def test_sweep_reports_bad_values_with_the_field(examples, tmp_path):
    r = CliRunner().invoke(main, ["sweep", str(examples / "dumbbell.toml"), "--vary", "links[0].rate_bps=1e6,-5",
                                  "--out", str(tmp_path)])
    assert r.exit_code == 2
    assert "links[0].rate_bps: must be a positive number (got -5)" in r.output


def test_a_grids_problems_are_said_once_each_with_where_in_the_grid(examples, tmp_path):
    from mediasim.sweep import MAX_PROBLEMS_SAID, grid_problems

    axes = {"buffer": [10, 0, 50, -1], "load": [3e5, "x", 7e5]}
    aliases = {"buffer": "links[name=bottleneck].queue.limit_packets", "load": "flows[name=background].rate_bps"}
    assert grid_problems(grid(examples / "dumbbell.toml", {"buffer": [10, 50]}, replications=2, aliases=aliases),
                         2) is None
    jobs = grid(examples / "dumbbell.toml", axes, replications=2, aliases=aliases)
    base = grid_problems(jobs, 2)
    assert base == "\n".join([
        "invalid scenario at 8 of 12 grid points:",
        '  flows[2].rate_bps: must be a number (got "x") (where load = "x": 4 points)',
        "  links[3].queue.limit_packets: must be at least 1 (where buffer = 0: 3 points)",
        "  links[3].queue.limit_packets: must be a whole number, 0 or more (got -1) (where buffer = -1: 3 points)",
    ]), base
    # Not the grid's: at every point; one point: by its labels; points
    # that share no value: the first three, then how many more.
    jobs = grid(examples / "dumbbell.toml", {"duration_s": [-1], "buffer": [0, 10], "load": [3e5, 7e5]},
                aliases=aliases)
    said = grid_problems(jobs)
    assert said is not None and said.split("\n")[:3] == [
        "invalid scenario at 4 of 4 grid points:",
        "  duration_s: must be a positive number (got -1) (at every grid point)",
        "  links[3].queue.limit_packets: must be at least 1 (where duration_s = -1, buffer = 0: 2 points)"], said
    jobs = grid(examples / "dumbbell.toml", {"buffer": [0, 10]}, aliases=aliases)
    assert grid_problems(jobs) == ("invalid scenario at 1 of 2 grid points:\n"
                                   "  links[3].queue.limit_packets: must be at least 1 (where buffer = 0)")
    jobs = grid(examples / "dumbbell.toml", {"a": [0, 10, 20], "b": [1, 2, 3]},
                aliases={"a": "links[name=bottleneck].delay_ms", "b": "flows[name=background].rate_bps"})
    for j in jobs:
        a, b = j.labels["a"], j.labels["b"]
        # Four points that share no value.
        j.scenario["duration_s"] = -1 if (a // 10 + b) % 3 == 0 or (a, b) == (0, 1) else 10
    said = grid_problems(jobs)
    assert said == ("invalid scenario at 4 of 9 grid points:\n  duration_s: must be a positive number (got -1) "
                    "(at a = 0, b = 1; a = 0, b = 3; a = 10, b = 2; and 1 more)"), said
    # Points that share a value, but not all points with it: by the points.
    for j in jobs:
        j.scenario["duration_s"] = -1 if j.labels["a"] == 0 and j.labels["b"] < 3 else 10
    assert grid_problems(jobs) == ("invalid scenario at 2 of 9 grid points:\n  duration_s: must be a positive "
                                   "number (got -1) (at a = 0, b = 1; a = 0, b = 2)")
    # Exactly three points that share no value: all three, nothing more.
    for j in jobs:
        j.scenario["duration_s"] = -1 if (j.labels["a"] // 10 + j.labels["b"]) % 3 == 0 else 10
    assert grid_problems(jobs) == ("invalid scenario at 3 of 9 grid points:\n  duration_s: must be a positive "
                                   "number (got -1) (at a = 0, b = 3; a = 10, b = 2; a = 20, b = 1)")
    # Both points of a grid of two: every point.
    jobs = grid(examples / "dumbbell.toml", {"duration_s": [-1, -1.0]})
    assert grid_problems(jobs) == ("invalid scenario at 2 of 2 grid points:\n"
                                   "  duration_s: must be a positive number (got -1) (at every grid point)")
    # A grid of one point: by its values.
    jobs = grid(examples / "dumbbell.toml", {"buffer": [0]}, aliases=aliases)
    assert grid_problems(jobs) == ("invalid scenario at 1 of 1 grid points:\n"
                                   "  links[3].queue.limit_packets: must be at least 1 (where buffer = 0)")
    # At most MAX_PROBLEMS_SAID problems, then how many more.
    values = list(range(-MAX_PROBLEMS_SAID - 2, 0))
    said = grid_problems(grid(examples / "dumbbell.toml", {"duration_s": values}))
    assert said is not None
    lines = said.split("\n")
    assert len(lines) == MAX_PROBLEMS_SAID + 2 and lines[-1] == "  and 2 more problems", lines[-3:]
    said = grid_problems(grid(examples / "dumbbell.toml", {"duration_s": values[2:]}))
    assert said is not None and len(said.split("\n")) == MAX_PROBLEMS_SAID + 1, said[-200:]
    # The command says it before making its folder.
    out = tmp_path / "s"
    r = CliRunner().invoke(main, ["sweep", str(examples / "dumbbell.toml"), "--alias", f"buffer={aliases['buffer']}",
                                  "--vary", "buffer=10,0", "--out", str(out)])
    assert r.exit_code == 2 and r.output == ("error: invalid scenario at 1 of 2 grid points:\n"
                                             "  links[3].queue.limit_packets: must be at least 1 "
                                             "(where buffer = 0)\n"), r.output
    assert not out.exists()


def test_an_axis_without_values_is_an_error_not_an_empty_sweep(examples, tmp_path):
    import pytest

    from mediasim import ScenarioError

    with pytest.raises(ScenarioError) as e:
        grid(examples / "dumbbell.toml", {"rate": [], "duration_s": [5]}, aliases={"rate": "links[0].rate_bps"})
    assert e.value.errors == [("links[0].rate_bps", "no values to vary it over")]
    out = tmp_path / "s"
    r = CliRunner().invoke(main, ["sweep", str(examples / "dumbbell.toml"), "--vary", "links[0].rate_bps=",
                                  "--out", str(out)])
    assert r.exit_code == 2 and "links[0].rate_bps: no values to vary it over" in r.output
    assert not out.exists()


def test_replications_takes_a_count_of_at_least_one(examples):
    import pytest

    from mediasim import replications

    jobs = replications(examples / "dumbbell.toml", 3, seed=7, case="a")
    assert [(j.seed, j.replication, j.labels) for j in jobs] == [(7, r, {"case": "a"}) for r in range(3)]
    for bad in (0, -1, 1.5, True, 10**9):
        with pytest.raises(ValueError, match=f"n must be a whole number of replications from 1 to 1,000,000 "
                                             f"\\(got {bad!r}"):
            replications(examples / "dumbbell.toml", bad)


def test_grid_takes_lists_of_values_and_a_bounded_number_of_runs(examples):
    import pytest

    from mediasim import ScenarioError, grid

    sc = examples / "dumbbell.toml"
    # Text is not a list of values: "60" would vary the field over "6" and "0".
    for bad in ("60", 60, {"a": 1}):
        with pytest.raises(ScenarioError, match="duration_s: give a list of values"):
            grid(sc, {"duration_s": bad})
    # Any iterable of values is one (a tuple, a range, a numpy array).
    assert [j.labels["duration_s"] for j in grid(sc, {"duration_s": range(5, 7)})] == [5, 6]
    with pytest.raises(ValueError, match="the grid has 2,000,000 runs, more than 1,000,000"):
        grid(sc, {"duration_s": [5, 6]}, replications=1_000_000)
    with pytest.raises(ValueError, match="replications must be a whole number"):
        grid(sc, {"duration_s": [5]}, replications=0)


def test_run_many_names_what_is_not_a_job(examples):
    import pytest

    from mediasim import replications, run_many

    jobs = replications(examples / "dumbbell.toml", 1)
    with pytest.raises(TypeError, match=r"jobs\[1\] is not a Job \(got 5\)"):
        run_many([*jobs, 5], workers=1, progress=False)


def test_a_campaign_names_what_is_not_a_job_before_making_its_folder(examples, tmp_path):
    import pytest

    from mediasim import replications, run_campaign, run_sweep

    jobs = replications(examples / "dumbbell.toml", 1)
    for run in (run_sweep, run_campaign):
        with pytest.raises(TypeError) as e:
            run([*jobs, 5], tmp_path / "out", workers=1, progress=False)
        assert str(e.value) == "jobs[1] is not a Job (got 5): make jobs with replications() or grid()"
        assert not (tmp_path / "out").exists()


def test_a_grid_that_repeats_itself_is_refused(examples):
    import pytest
    from click.testing import CliRunner

    from mediasim import ScenarioError, grid
    from mediasim.cli import main

    sc = examples / "dumbbell.toml"
    # One field under two names: the later override would win, and the
    # runs would carry the other's label.
    with pytest.raises(ScenarioError, match=r"duration_s: varied twice \(as 'd' and 'duration_s'\)"):
        grid(sc, {"d": [5], "duration_s": [6]}, aliases={"d": "duration_s"})
    with pytest.raises(ScenarioError, match="duration_s: the value 5 is given twice"):
        grid(sc, {"duration_s": [5, 6, 5]})
    for args, problem in ((["--vary", "duration_s=5", "--vary", "duration_s=6"], "--vary duration_s: given twice"),
                          (["--alias", "d=duration_s", "--alias", "d=name", "--vary", "d=5"], "--alias d: given twice"),
                          (["--vary", "duration_s"], "--vary duration_s: expected PATH=V1,V2,..."),
                          (["--alias", "d", "--vary", "d=5"], "--alias d: expected NAME=PATH")):
        r = CliRunner().invoke(main, ["sweep", str(sc), *args, "--out", "never-made"])
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"error: {problem}\n")


@pytest.mark.parametrize("text, values", [
    ("1,2.5,x", ["1", "2.5", "x"]),
    (" 1 , 2 ,", ["1", "2"]),
    ("[1,2],[3,{\"a\": 1, \"b\": [4, 5]}],6", ["[1,2]", "[3,{\"a\": 1, \"b\": [4, 5]}]", "6"]),
    ("{\"type\": \"red\", \"min_th\": 5},{\"type\": \"droptail\"}", ["{\"type\": \"red\", \"min_th\": 5}",
                                                                   "{\"type\": \"droptail\"}"]),
    ("", []),
    # A comma, bracket or quote inside a JSON string is the string's.
    ('"a,b",c', ['"a,b"', "c"]),
    ('["x]",1],2', ['["x]",1]', "2"]),
    (r'"a\",b",c', [r'"a\",b"', "c"]),
    (r'"a\\",b', [r'"a\\"', "b"]),
    ('{"k": "}"},2', ['{"k": "}"}', "2"]),
])
def test_sweep_values_split_at_commas_outside_brackets_braces_and_strings(text, values):
    from mediasim.cli_commands import _split_values

    assert _split_values(text) == values


def test_jobs_start_from_seed_zero_and_label_what_is_not_a_plain_value_as_text(examples):
    from mediasim import replications

    sc = examples / "dumbbell.toml"
    assert [(j.seed, j.replication) for j in replications(sc, 2)] == [(0, 0), (0, 1)]
    jobs = grid(sc, {"measure.windows_s": [[[0, 1]], [[0, 2]]], "duration_s": [5]})
    assert [j.seed for j in jobs] == [0, 0]
    assert [j.labels for j in jobs] == [{"measure.windows_s": "[[0, 1]]", "duration_s": 5},
                                        {"measure.windows_s": "[[0, 2]]", "duration_s": 5}]
    assert [j.scenario["measure"]["windows_s"] for j in jobs] == [[[0, 1]], [[0, 2]]]


def test_grid_errors_name_the_field_an_alias_stands_for(examples):
    from mediasim import ScenarioError

    sc, aliases = examples / "dumbbell.toml", {"rate": "links[0].rate_bps"}
    with pytest.raises(ScenarioError) as e:
        grid(sc, {"rate": 5e6}, aliases=aliases)
    assert e.value.errors == [("links[0].rate_bps", "give a list of values (got 5000000.0)")]
    with pytest.raises(ScenarioError) as e:
        grid(sc, {"rate": [5e6, 5e6]}, aliases=aliases)
    assert e.value.errors == [("links[0].rate_bps", "the value 5000000.0 is given twice")]


def test_a_job_with_an_out_folder_writes_its_run_there_and_keeps_private_labels_out(examples, tmp_path):
    from mediasim import Job, Results, run_many
    from mediasim.scenario import load_scenario

    data = load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3}).to_dict()
    job = Job(data, seed=3, labels={"case": "a", "_params": object()}, out=str(tmp_path / "r"))
    (res,) = run_many([job], workers=1, progress=False)
    assert res.meta["labels"] == {"case": "a"}
    back = Results.read_parquet(tmp_path / "r")
    assert back.meta["seed"] == 3 and back.flows.equals(res.flows)


def test_combine_numbers_the_rows_afresh_and_takes_runs_without_labels(examples):
    from mediasim import replications, run, run_many
    from mediasim.scenario import load_scenario
    from mediasim.sweep import combine

    sc = load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 3})
    runs = run_many(replications(sc, 2, case="a"), workers=1, progress=False)
    flows = combine(runs, "flows")
    n = len(runs[0].flows)
    assert list(flows.index) == list(range(2 * n))
    assert list(flows.columns[:3]) == ["case", "seed", "replication"]
    assert list(flows["replication"]) == [0] * n + [1] * n
    plain = combine([run(sc, seed=1)], "flows")
    assert list(plain.columns[:2]) == ["seed", "replication"] and "case" not in plain
    assert combine([], "flows").empty


def test_a_sweep_s_combined_tables_name_their_campaign(examples, tmp_path):
    import pyarrow.parquet as pq

    from mediasim import run_sweep

    jobs = grid(examples / "dumbbell.toml", {"duration_s": [3]})
    run_sweep(jobs, tmp_path / "s", workers=1, progress=False)
    for name in ("flows", "media"):
        meta = json.loads(pq.read_schema(tmp_path / "s" / f"{name}.parquet").metadata[b"mediasim"])
        assert meta == {"campaign": str(tmp_path / "s")}


def test_a_sweep_prints_its_summary_and_names_each_failed_run(examples, tmp_path):
    """pcap without an output folder passes validation but fails each run
    that asks for it: the sweep summarises the runs that ran, names each
    failed one (labels, seed, replication, error) and ends with status 1."""
    out = tmp_path / "s"
    r = CliRunner().invoke(main, ["-q", "sweep", str(examples / "dumbbell.toml"), "--vary", "measure.pcap=false,true",
                                  "--set", "duration_s=3", "--replications", "2", "--seed", "5", "--out", str(out),
                                  "--workers", "1"])
    assert r.exit_code == 1, r.output
    error = ("ScenarioError: invalid scenario:\n"
             "  measure.pcap: pcap files need an output folder (run(..., out=FOLDER) or --out)")
    assert r.stderr == "".join(f"failed: {{'measure.pcap': True}} seed 5 replication {k}: {error}\n" for k in (0, 1)) \
        + f"2 runs failed; their errors are in {out}/failed/\n"
    assert r.stdout.endswith(f"\n\n4 runs: 0 already stored, 2 run now, 2 failed; tables in {out}/ "
                             "(flows.parquet, summary.csv, runs/)\n")
    flows = pd.read_parquet(out / "flows.parquet")
    summary = pd.read_csv(out / "summary.csv")
    metrics = ["loss_rate", "throughput_bps", "delay_mean_ms", "delay_p99_ms", "jitter_ms"]
    assert list(summary.columns) == ["measure.pcap", "flow", "receiver", "n"] + [
        f"{m}_{s}" for m in metrics for s in ("mean", "ci_low", "ci_high")]
    # A row per configuration, flow and receiver of the runs that ran, each
    # the mean over both replications; the printed table shows those rows.
    assert sorted(zip(summary["flow"], summary["receiver"])) == sorted(set(zip(flows["flow"], flows["receiver"])))
    assert (summary["n"] == 2).all() and not summary["measure.pcap"].any()
    by = flows.groupby(["flow", "receiver"])
    for row in summary.itertuples():
        for m in metrics:
            assert getattr(row, f"{m}_mean") == pytest.approx(by.get_group((row.flow, row.receiver))[m].mean())
    header = [c.strip() for c in r.stdout.splitlines()[0].strip("|").split("|")]
    printed = [dict(zip(header, (c.strip() for c in line.strip("|").split("|"))))
               for line in r.stdout.splitlines() if line.startswith("| False")]
    assert [p["flow"] for p in printed] == list(summary["flow"])
    # To 4 significant digits.
    assert [float(p["throughput_bps_mean"]) for p in printed] == [float(f"{x:.4g}")
                                                                 for x in summary["throughput_bps_mean"]]


def test_the_sweep_command_hands_its_options_to_the_campaign_and_names_its_refusal(examples, tmp_path, monkeypatch):
    from mediasim import sweep
    from mediasim.errors import CampaignError

    seen = {}

    def refuse(jobs, out, **kw):
        seen.update(jobs=jobs, out=out, **kw)
        raise CampaignError("no cluster at tcp://h:1")

    monkeypatch.setattr(sweep, "run_sweep", refuse)
    r = CliRunner().invoke(main, ["sweep", str(examples / "dumbbell.toml"), "--alias", "d=duration_s",
                                  "--vary", "d=3,4", "--replications", "2", "--seed", "9", "--workers", "3",
                                  "--scheduler", "tcp://h:1",
                                  "--out", str(tmp_path / "s")])
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", "error: no cluster at tcp://h:1\n")
    assert (seen["out"], seen["workers"], seen["scheduler"], seen["aliases"]) == (str(tmp_path / "s"), 3, "tcp://h:1",
                                                                                {"d": "duration_s"})
    assert [(j.labels, j.seed, j.replication) for j in seen["jobs"]] == [
        ({"d": d}, 9, k) for d in (3, 4) for k in (0, 1)]


def test_a_sweep_names_its_first_ten_failed_runs_and_counts_them_all(examples, tmp_path):
    r = CliRunner().invoke(main, ["-q", "sweep", str(examples / "dumbbell.toml"), "--vary", "measure.pcap=true",
                                  "--replications", "12", "--out", str(tmp_path), "--workers", "1"])
    lines = r.stderr.splitlines()
    assert r.exit_code == 1
    assert [line.split(":", 1)[0] for line in lines if not line.startswith("  ")] == ["failed"] * 10 + [
        f"12 runs failed; their errors are in {tmp_path}/failed/"]
    assert len(list((tmp_path / "failed").iterdir())) == 12


@pytest.mark.parametrize("raised, said", [(KeyboardInterrupt(), "interrupted"),
                                          (KeyboardInterrupt("run interrupted at simulated time 2.000 s"),
                                           "run interrupted at simulated time 2.000 s")])
def test_a_command_interrupted_says_where_if_it_knows_and_ends_with_the_status_of_sigint(examples, tmp_path,
                                                                                         monkeypatch, raised, said):
    from mediasim import sweep

    def interrupted(*a, **kw):
        raise raised

    monkeypatch.setattr(sweep, "run_sweep", interrupted)
    r = CliRunner().invoke(main, ["sweep", str(examples / "dumbbell.toml"), "--vary", "duration_s=3",
                                  "--out", str(tmp_path / "s")])
    assert (r.exit_code, r.stdout, r.stderr) == (130, "", f"\n{said}\n")
