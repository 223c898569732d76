"""Results a researcher can trust at a glance: one run per output folder,
one API, errors that list what there is, every problem reported at once,
warnings for unit slips, same seed same bytes, and work bounded by the run."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import mediasim
from mediasim import ImplausibleValue, OutputFolderError, ScenarioError, TableNotFound
from mediasim.errors import OutputTruncated
from mediasim.results import HOST_FACTS


def _tcp(examples, **over):
    return mediasim.load_scenario(examples / "tcp_web_and_voice.toml").with_overrides(over)


# 1. An output folder belongs to one run.
def test_a_folder_holding_a_run_is_refused_and_overwrite_replaces_it_whole(examples, tmp_path):
    out = tmp_path / "run1"
    first = mediasim.run(_tcp(examples), seed=1, out=out, packets=True, series=True, pcap=True)
    assert (out / "packets.parquet").exists() and (out / "pcap").is_dir()
    with pytest.raises(OutputFolderError, match=r"run1: the folder already holds an earlier output.*--overwrite.* to "
                                                r"replace it whole \(the old folder stays until the new output is "
                                                r"complete\)$"):
        mediasim.run(_tcp(examples, duration_s=12), seed=5, out=out)
    assert (out / "packets.parquet").exists(), "a refused run leaves the old folder as it was"
    mediasim.run(_tcp(examples, duration_s=12), seed=5, out=out, overwrite=True)
    names = {p.name for p in out.iterdir()}
    assert not names & {"packets.parquet", "drops.parquet", "tcp_series.parquet", "pcap"}, names
    back = mediasim.Results.read_parquet(out)
    assert back.meta["seed"] == 5 and back.meta["packet_log"] is False
    with pytest.raises(TableNotFound, match=r"packets: not recorded \(measure.packets was off"):
        back.packets
    assert not list(tmp_path.glob(".run1*")), "no staging folder is left behind"


def test_overwrite_never_deletes_a_folder_mediasim_did_not_write(examples, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutputFolderError, match="not a mediasim output"):
        mediasim.run(_tcp(examples), seed=1, out=tmp_path, overwrite=True)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_failed_run_leaves_the_earlier_output_in_place(examples, tmp_path):
    out = tmp_path / "r"
    mediasim.run(_tcp(examples), seed=1, out=out)
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(ScenarioError):
        mediasim.run(_tcp(examples, duration_s=-1), seed=1, out=out, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == before


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_what_a_killed_run_left_beside_its_folder_is_put_right_by_the_next(examples, tmp_path):
    out = tmp_path / "r"
    mediasim.run(_tcp(examples), seed=1, out=out)
    before = sorted(p.name for p in out.iterdir())
    # Killed between the swap's two renames: the earlier output moved aside,
    # its complete replacement not yet in place; and a live process's
    # staging folder, which is left alone.
    dead, live = _dead_pid(), subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        out.rename(tmp_path / f".r.old-{dead}")
        (tmp_path / f".r.partial-{dead}").mkdir()
        (tmp_path / f".r.partial-{dead}" / "flows.parquet").write_bytes(b"PAR1")
        (tmp_path / f".r.partial-{live.pid}").mkdir()
        # The earlier output is back, so a run without overwrite is refused.
        with pytest.raises(OutputFolderError, match="already holds an earlier output"):
            mediasim.run(_tcp(examples), seed=2, out=out)
        assert sorted(p.name for p in out.iterdir()) == before
        assert sorted(p.name for p in tmp_path.iterdir()) == [f".r.partial-{live.pid}", "r"]
        # Killed after the swap, before deleting the earlier output.
        (tmp_path / f".r.old-{dead}").mkdir()
        mediasim.run(_tcp(examples), seed=2, out=out, overwrite=True)
        assert sorted(p.name for p in tmp_path.iterdir()) == [f".r.partial-{live.pid}", "r"]
        assert mediasim.Results.read_parquet(out).meta["seed"] == 2
        assert live.poll() is None, "the live process is asked whether it runs, not signalled"
    finally:
        live.kill()
        live.wait()


def test_a_process_that_cannot_be_asked_counts_as_running(monkeypatch):
    # Another user's process (kill answers EPERM), or a system where
    # asking has side effects: its folders are left alone.
    import os

    from mediasim import outfolder

    def denied(pid, sig):
        raise PermissionError(1, "Operation not permitted")

    assert outfolder._running(_dead_pid()) is False
    monkeypatch.setattr(outfolder.os, "kill", denied)
    assert outfolder._running(_dead_pid()) is True
    monkeypatch.undo()
    dead = _dead_pid()
    monkeypatch.setattr(os, "name", "nt")
    running = outfolder._running(dead)
    monkeypatch.undo()  # before any assertion: pytest's report needs the real os.name
    assert running is True


def test_a_run_folder_without_the_marker_counts_as_mediasims(examples, tmp_path):
    # A folder holding a run's meta.json (Results.write_tables writes no
    # marker) is mediasim's: overwrite replaces it; one without is refused.
    out = tmp_path / "r"
    out.mkdir()
    mediasim.run(_tcp(examples), seed=1).write_tables(out)
    assert (out / "meta.json").is_file() and not (out / ".mediasim-output.json").exists()
    mediasim.run(_tcp(examples), seed=2, out=out, overwrite=True)
    assert mediasim.Results.read_parquet(out).meta["seed"] == 2
    (out / "meta.json").unlink()
    (out / ".mediasim-output.json").unlink()
    with pytest.raises(OutputFolderError, match="not a mediasim output"):
        mediasim.run(_tcp(examples), seed=3, out=out, overwrite=True)


def test_an_earlier_output_that_cannot_be_put_back_is_named_not_lost(examples, tmp_path, monkeypatch):
    from mediasim import outfolder

    aside = tmp_path / f".r.old-{_dead_pid()}"
    aside.mkdir()
    (aside / "meta.json").write_text("{}")

    def no_rename(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(outfolder.os, "rename", no_rename)
    with pytest.raises(OutputFolderError, match=r"r: the earlier output a killed run moved aside is at .*\.r\.old-\d+ "
                                                r"and cannot be put back \(Permission denied\); move it back or "
                                                r"remove it$"):
        mediasim.run(_tcp(examples), seed=1, out=tmp_path / "r")
    assert (aside / "meta.json").exists()


def test_a_reader_ignores_a_table_file_the_run_did_not_write(examples, tmp_path):
    out = tmp_path / "r"
    mediasim.run(_tcp(examples), seed=1, out=out)
    (out / "packets.parquet").write_bytes((out / "flows.parquet").read_bytes())  # a stray file
    with pytest.raises(TableNotFound, match="not recorded"):
        mediasim.Results.read_parquet(out).packets


def test_the_cli_refuses_a_used_folder_with_a_message_and_replaces_it_with_overwrite(examples, tmp_path):
    from click.testing import CliRunner

    from mediasim.cli import main

    out = str(tmp_path / "o")
    r = CliRunner()
    assert r.invoke(main, ["run", str(examples / "dumbbell.toml"), "--out", out]).exit_code == 0
    again = r.invoke(main, ["run", str(examples / "dumbbell.toml"), "--out", out])
    assert again.exit_code == 2 and "already holds an earlier output" in again.output and "--overwrite" in again.output
    assert r.invoke(main, ["run", str(examples / "dumbbell.toml"), "--out", out, "--overwrite"]).exit_code == 0


def test_a_study_folder_is_refused_then_replaced_whole(tmp_path):
    from mediasim.experiments import iw10

    p = iw10.Params().quick().with_overrides({"replications": "1", "flows": "1"})
    out = tmp_path / "iw10"
    report = iw10.reproduce(p, out, workers=1, progress=False)
    assert report == out / "report.md" and report.exists()
    (out / "stale.png").write_bytes(b"old")
    with pytest.raises(OutputFolderError):
        iw10.reproduce(p, out, workers=1, progress=False)
    iw10.reproduce(p, out, workers=1, progress=False, overwrite=True)
    assert not (out / "stale.png").exists()


def test_one_output_stages_by_the_functions_own_out_and_overwrite_parameters(tmp_path):
    from mediasim.outfolder import one_output

    with pytest.raises(TypeError, match="write: one_output needs parameters 'out' and 'overwrite'"):
        @one_output("study")
        def write(out, quick=False):
            return out

    @one_output("study")
    def report(n, out, overwrite=False):
        assert out.name.startswith(".s.partial-")  # the staging folder
        (out / "report.md").write_text(f"{n}\n")
        return out / "report.md"

    assert report(1, tmp_path / "s") == tmp_path / "s" / "report.md"
    with pytest.raises(OutputFolderError):
        report(2, tmp_path / "s")
    assert report(3, out=tmp_path / "s", overwrite=True).read_text() == "3\n"


def test_a_campaign_refuses_a_folder_that_holds_other_files(examples, tmp_path):
    from mediasim.errors import CampaignError

    (tmp_path / "report.md").write_text("x")
    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 2})
    with pytest.raises(CampaignError, match="not a campaign"):
        mediasim.run_sweep(mediasim.replications(sc, 1), tmp_path, workers=1, progress=False)


# 2. One consistent API.
def test_run_takes_the_cli_flags_and_leaves_the_callers_scenario_alone(examples):
    import copy

    sc = _tcp(examples)
    before = copy.deepcopy(sc.data)
    res = mediasim.run(sc, seed=1, packets=True, series=True, trace=True)
    assert len(res.packets) > 0 and len(res.tcp_series) > 0 and len(res.trace) > 0
    assert sc.data == before


def test_the_readme_python_example_runs_as_written():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    code = code.replace('res.to_parquet("out/")', "")
    code = code.replace("workers=2", "workers=1")
    exec(compile(code, "README.md", "exec"), {})


def test_every_session_kind_has_a_builder_method():
    import mediasim._engine as eng

    schema = json.loads(eng.schema())
    kinds = [k for k in schema["properties"] if k.endswith("_sessions")]
    assert kinds
    for k in kinds:
        assert callable(getattr(mediasim.Scenario, k[:-1])), k
    sc = mediasim.Scenario("rtp", duration_s=5)
    sc.node("a").node("b").link("a", "b", rate_bps=2e6, delay_ms=20)
    sc.rtp_session("call", members=[{"node": "a", "media": True}, {"node": "b"}], session_bw_bps=64e3,
                   media_payload_bytes=160)
    assert len(mediasim.run(sc, seed=1).rtp) == 2


# 3. A misspelled or unrecorded table is an error that lists the tables.
def test_a_misspelled_table_name_lists_the_tables(examples):
    res = mediasim.run(examples / "dumbbell.toml", seed=1)
    with pytest.raises(TableNotFound, match=r"'flow' is not a mediasim table \(did you mean 'flows'.*the run has: flows"):
        res.table("flow")
    with pytest.raises(AttributeError):
        res.flow
    assert not hasattr(res, "flow")


def test_read_sweep_names_a_misspelled_or_unrecorded_table(examples, tmp_path):
    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides({"duration_s": 6})
    mediasim.run_sweep(mediasim.replications(sc, 2), tmp_path / "sw", workers=1, progress=False)
    assert len(mediasim.read_sweep(tmp_path / "sw", "flows")) > 0
    with pytest.raises(TableNotFound, match=r"did you mean 'flows'"):
        mediasim.read_sweep(tmp_path / "sw", "flow")
    with pytest.raises(TableNotFound, match=r"packets: not recorded"):
        mediasim.read_sweep(tmp_path / "sw", "packets")


# 4. Every problem in one pass.
def test_type_errors_and_unknown_fields_do_not_hide_the_other_problems(examples):
    sc = mediasim.load_scenario(examples / "dumbbell.toml")
    sc.set("links[0].delay_ms", "40ms")
    sc.set("links[1].colour", "red")
    sc.set("links[2].rate_bps", 0)
    sc.set("flows[0].payload_bytes", -5)
    sc.set("flows[1].dst", "nowhere")
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    paths = {p for p, _ in e.value.errors}
    assert {"links[0].delay_ms", "links[1].colour", "links[2].rate_bps", "flows[0].payload_bytes",
            "flows[1].dst"} <= paths, paths


# 5. Implausible values warn, naming the field; silenced per field or all.
def test_unit_slips_warn_at_their_field_and_can_be_silenced(examples):
    sc = mediasim.load_scenario(examples / "dumbbell.toml").with_overrides(
        {"links[name=bottleneck].rate_bps": 2000, "links[0].delay_ms": 0.04, "duration_s": 3})
    with pytest.warns(ImplausibleValue) as w:
        res = mediasim.run(sc, seed=1)
    msgs = [str(x.message) for x in w]
    assert any(m.startswith("links[3].rate_bps: 2000 bit/s is below 10 kbit/s") for m in msgs), msgs
    assert any(m.startswith("links[0].delay_ms: 0.04 ms") for m in msgs), msgs
    # Sent but nothing delivered: the loss rate is a number, not NaN.
    f = res.flows
    assert (f.loc[f["sent"] > 0, "loss_rate"].notna()).all()
    from mediasim.runner import allow

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        allow(["links[3].rate_bps", "links[0].delay_ms"])
        mediasim.run(sc, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        allow(["all"])
        sc.validate()
    # With the scenario, a path may select by name, and must lead somewhere.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        allow(["links[name=bottleneck].rate_bps", "links[0]"], sc)  # a link: every warning of it
        sc.validate()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        allow(["links[name=bottleneck].delay_ms", "links[0].rate_bps"], sc)
        sc.validate()
    assert sorted(str(x.message).split(":")[0] for x in w) == ["links[0].delay_ms", "links[3].rate_bps"]
    with pytest.raises(ScenarioError) as e:
        allow(["links[name=bottlenek].rate_bps", "all", "links[0].rate_bs"], sc)
    assert [p for p, _ in e.value.errors] == ["links[name=bottlenek].rate_bps", "links[0].rate_bs"]
    assert "did you mean 'rate_bps'" in e.value.errors[1][1]
    # A link's path silences its own fields, not another link's whose index it begins.
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        allow(["links[1]"])
        for path in ("links[1].rate_bps", "links[1].ab.delay_ms", "links[10].rate_bps", "links[1]x.y"):
            warnings.warn(f"{path}: slip", ImplausibleValue)
    assert [str(x.message) for x in w] == ["links[10].rate_bps: slip", "links[1]x.y: slip"]


# 8. Same seed, same bytes.
def test_the_same_run_writes_the_same_bytes_in_every_file(examples, tmp_path):
    sc = mediasim.load_scenario(examples / "tcp_web_and_voice.toml")
    digests = []
    for d in ("a", "b"):
        res = mediasim.run(sc, seed=3, out=tmp_path / d, packets=True, series=True, pcap=True)
        assert res.meta["wall_s"] > 0, "the run just made knows its wall time"
        files = sorted(p for p in (tmp_path / d).rglob("*") if p.is_file())
        digests.append({str(p.relative_to(tmp_path / d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files})
    assert digests[0] == digests[1] and len(digests[0]) > 10 and "meta.json" in digests[0]
    meta = json.loads((tmp_path / "a" / "meta.json").read_text())
    assert not set(meta) & set(HOST_FACTS), "no fact of the host is written"
    assert "wall_s" not in mediasim.Results.read_parquet(tmp_path / "a").meta


# 9. Work and memory bounded by the run, never a panic.
def test_a_stop_time_far_past_the_run_costs_nothing():
    sc = mediasim.Scenario.from_dict(_svc_scenario())
    sc.set("flows[0].stop_s", 9.2e18)
    res = mediasim.run(sc, seed=1, max_memory_mb=1500)
    assert not res.meta["stopped_early"] and res.svc["media_packets"].iloc[0] > 0


def _svc_scenario() -> dict:
    sc = mediasim.Scenario("svc", duration_s=2)
    sc.node("a").node("b").link("a", "b", rate_bps=2e6, delay_ms=10, queue={"type": "droptail", "limit_packets": 50})
    sc.flow("v", "svc", src="a", dst="b", cc={"type": "tfrc"})
    return sc.data


@pytest.mark.parametrize("path,value,fragment", [
    ("flows[0].layer_bps", [[1e100, 1e5], [1e5, 1e5]], "must be at most 1e12 bit/s"),
    ("flows[0].size_cv", 1e308, "must be at most 100"),
    ("flows[0].fps", 4294967296, "must be at most 1e6 per second"),
])
def test_rate_like_fields_share_one_bound_and_nothing_panics(path, value, fragment):
    sc = mediasim.Scenario.from_dict(_svc_scenario())
    sc.set(path, value)
    with pytest.raises(ScenarioError, match=re.escape(fragment)):
        sc.validate()


def test_a_minimum_rto_above_the_default_maximum_is_an_error_not_a_panic(examples):
    sc = _tcp(examples)
    sc.set("flows[name=web0].tcp", {"min_rto_ms": 65536})
    with pytest.raises(ScenarioError, match=r"min_rto_ms: must be at most max_rto_ms \(60000"):
        sc.validate()


def test_a_media_scaling_frame_rate_beyond_the_bound_is_refused():
    from mediasim.experiments import media_scaling as ms

    sc = ms.scenario(ms.Params().quick())
    i = next(i for i, f in enumerate(sc.data["flows"]) if f["type"] == "media_scaling")
    sc.set(f"flows[{i}].frame_rate", 4294967296)
    with pytest.raises(ScenarioError, match="frame_rate: must be at most 1e6"):
        sc.validate()


@pytest.mark.parametrize("example, measure, what, flag, table", [
    ("multicast_tree.yaml", {"measure.queue_sample_ms": 0.001}, "queue sampling", "queue_samples_truncated",
     "queue_samples"),
    ("calls.toml", {"measure.capacity_interval_ms": 1}, "capacity sampling", "capacity_truncated", "link_capacity"),
])
def test_samples_stop_at_their_row_limit_with_a_flag_and_a_warning(examples, example, measure, what, flag, table):
    sc = mediasim.load_scenario(examples / example).with_overrides(
        {"duration_s": 2, "limits.max_queue_sample_rows": 50, **measure})
    with pytest.warns(OutputTruncated, match=f"{what} stopped at limits.max_queue_sample_rows"):
        res = mediasim.run(sc, seed=1)
    assert res.meta[flag] is True
    assert len(getattr(res, table)) == 50


# 10. Docs and metadata.
def test_the_schema_bounds_every_dscp_at_63():
    schema = json.loads(mediasim._engine.schema())
    found = []

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if "dscp" in k.lower() and isinstance(v, dict) and k != "FrameDscp":
                    found.append((k, v))
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(schema)
    assert found
    for k, v in found:
        text = json.dumps(v)
        assert '"maximum": 63' in text or "$ref" in text, (k, v)


def test_node_addresses_are_in_the_metadata_and_match_show(examples):
    from mediasim.reporting.topology import node_addresses

    sc = mediasim.load_scenario(examples / "multicast_tree.yaml")
    res = mediasim.run(sc, seed=1)
    assert res.meta["addresses"]["nodes"] == node_addresses(sc.data)
    assert all(a.startswith("239.") for a in res.meta["addresses"]["groups"].values())


def test_the_package_lists_its_api():
    public = [n for n in dir(mediasim) if not n.startswith("_")]
    assert sorted(public) == sorted(n for n in mediasim.__all__ if not n.startswith("_"))
    for n in ("run", "Scenario", "Results", "TableNotFound", "OutputFolderError", "ImplausibleValue"):
        assert n in public and getattr(mediasim, n) is not None


# 6. Integer columns are integers, in every table.
SCHEMA = Path(__file__).parent / "data" / "table_dtypes.json"
_UNIT = re.compile(r"(_s|_ms|_ns|_bps|_pps|_pct|^p|_p|loss_rate|utilization|_mean|mean_[a-z]+|value|_ratio|^r_factor|^mos)$")


def test_every_table_holds_its_declared_dtypes_full_or_empty(examples):
    """tests/data/table_dtypes.json declares every table's columns and
    dtypes (counts int64, or nullable Int64 in the application tables;
    measures float64; text str or category); every example, with every
    log on, and a run without any application, give exactly those."""
    declared = json.loads(SCHEMA.read_text())
    for name, cols in declared.items():
        for col, dtype in cols.items():
            if dtype == "float64":
                assert _UNIT.search(col), f"{name}.{col}: a float without a unit in its name (a count?)"
    for ex in ("dumbbell.toml", "multicast_tree.yaml", "tcp_web_and_voice.toml", "rtp_avpf_multicast.yaml",
               "rmtp_tree.yaml"):
        sc = mediasim.load_scenario(examples / ex).with_overrides({"measure.queue_sample_ms": 100})
        res = mediasim.run(sc, seed=1, packets=True, series=True, trace=True)
        for name in res.tables:
            got = {c: str(d) for c, d in res.tables[name].dtypes.items()}
            want = declared[name]
            extra = {c: d for c, d in got.items() if c not in want}
            assert not extra, (ex, name, extra)
            assert {c: want[c] for c in got} == got, (ex, name)


def test_application_counts_read_back_from_parquet_as_integers(examples, tmp_path):
    res = mediasim.run(examples / "rtp_avpf_multicast.yaml", seed=1, out=tmp_path / "r")
    back = mediasim.Results.read_parquet(tmp_path / "r")
    assert str(back.rtp["ssrc"].dtype) == "Int64" and str(res.rtp["ssrc"].dtype) == "Int64"
    assert back.rtp["ssrc"].tolist() == res.rtp["ssrc"].tolist()
    assert float(res.rtp["ssrc"].iloc[0]).is_integer()


def test_time_series_stop_at_their_row_limit_with_a_flag_and_a_warning(examples):
    sc = _tcp(examples, **{"limits.max_series_rows": 50})
    with pytest.warns(OutputTruncated, match="a time series stopped at limits.max_series_rows"):
        res = mediasim.run(sc, seed=1, series=True)
    assert res.meta["series_truncated"] is True
    per_series = res.tcp_series.groupby(["flow", "var"], observed=True).size()
    assert per_series.max() == 50
    assert mediasim.run(_tcp(examples), seed=1, series=True).meta["series_truncated"] is False


def test_the_current_folder_is_never_an_output_folder(examples, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for target in (".", str(tmp_path), ".."):
        with pytest.raises(OutputFolderError, match="the current folder.*; name a new folder inside it$"):
            mediasim.run(_tcp(examples), seed=1, out=target, overwrite=True)
    assert list(tmp_path.iterdir()) == []
    # A file where the folder should be is named as such, and left alone.
    (tmp_path / "f").write_text("mine")
    with pytest.raises(OutputFolderError, match=r"^f: exists and is not a folder$"):
        mediasim.run(_tcp(examples), seed=1, out="f", overwrite=True)
    assert (tmp_path / "f").read_text() == "mine"


@pytest.mark.parametrize("field", ["max_queue_sample_rows", "max_series_rows"])
def test_a_row_limit_of_zero_is_refused(examples, field):
    sc = _tcp(examples, **{f"limits.{field}": 0})
    with pytest.raises(ScenarioError, match=rf"limits.{field}: must be at least 1"):
        sc.validate()
