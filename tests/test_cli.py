"""The mediasim command line."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from conftest import EXAMPLES

from mediasim.cli import main

DUMBBELL = str(EXAMPLES / "dumbbell.toml")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_run_prints_per_flow_table(examples, tmp_path):
    r = invoke("run", examples / "dumbbell.toml", "--seed", 2, "--out", tmp_path / "o", "--pcap")
    assert r.exit_code == 0, r.output
    for flow in ("voice", "video", "background"):
        assert f"| {flow}" in r.output
    assert "(balanced)" in r.output
    assert (tmp_path / "o" / "flows.parquet").exists()
    assert (tmp_path / "o" / "pcap" / "bottleneck.pcap").exists()


def test_run_prints_the_runs_own_tables_and_books_section_by_section(examples):
    """The printout of `mediasim run --seed S --replication R` is that run's:
    its heading, the flows table, a section per kind of flow it has, each
    after a blank line, and the packet and event books; errors go to
    stderr alone."""
    import mediasim
    from mediasim.run_report import printed_columns
    from mediasim.runner import run

    r = invoke("run", examples / "calls.toml", "--seed", 3, "--replication", 2)
    assert r.exit_code == 0 and r.stderr == "", r.output
    res = run(mediasim.load_scenario(examples / "calls.toml"), seed=3, replication=2)
    m, plain = res.meta, printed_columns(res.tables)
    assert r.stdout.startswith("# calls: 20.0 s simulated, seed 3, replication 2\n| flow ")
    sections = r.stdout.split("\n\n")
    books = (f"packets: originated {m['originated']}, multicast copies 0, delivered {m['delivered']}, "
             f"dropped {m['dropped']}, in flight {m['in_flight']} (balanced)")
    assert [s.split("\n", 1)[0] for s in sections[1:]] == ["RTP members:", "Media:", books]
    assert re.fullmatch(rf"events: {m['events']} in \d+\.\d{{3}} s wall\n", sections[-1].split("\n", 1)[1])
    # The tables are this seed's and replication's, not another's.
    from mediasim.reporting.plain_table import plain_table
    from mediasim.run_report import MEDIA, RTP, SUMMARY

    assert sections[0].split("\n", 1)[1] == plain_table({c: plain["flows"][c] for c in SUMMARY})
    assert sections[1].split("\n", 1)[1] == plain_table({c: plain["rtp"][c] for c in RTP})
    assert sections[2].split("\n", 1)[1] == plain_table({c: plain["media"][c] for c in MEDIA})
    other = invoke("run", examples / "calls.toml", "--seed", 3)
    assert other.stdout.split("\n\n")[2] != sections[2]
    bad = invoke("run", examples / "calls.toml", "--set", "duration_s=-1")
    assert (bad.exit_code, bad.stdout) == (2, "") and bad.stderr.startswith("error: invalid scenario:\n  duration_s")


def test_run_records_the_trace_and_series_asked_for_into_its_folder_and_refuses_them_without_one(tmp_path):
    from mediasim import Results

    r = invoke("run", DUMBBELL, "--trace", "--series", "--out", tmp_path / "on")
    assert r.exit_code == 0, r.output
    on = Results.read_parquet(tmp_path / "on")
    assert len(on.trace) > len(on.tables["flows"]) and on.meta["series_log"]
    assert invoke("run", DUMBBELL, "--out", tmp_path / "off").exit_code == 0
    assert {"trace.parquet", "tcp_series.parquet"} & {p.name for p in (tmp_path / "off").iterdir()} == set()
    for flag in ("--pcap", "--trace", "--series", "--overwrite"):
        r = invoke("run", DUMBBELL, flag)
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"error: {flag} needs --out DIR\n")


def test_run_shows_a_progress_bar_in_simulated_time_and_writes_the_runs_own_seed(tmp_path):
    """A bar from the engine's first report (2^20 events), with or without
    an output folder; the folder's run is the seed and replication asked for."""
    for out in ((), ("--out", tmp_path / "o")):
        r = invoke("run", EXAMPLES / "calls.toml", "--set", "duration_s=1000", "--seed", 3, "--replication", 2, *out)
        assert r.exit_code == 0 and re.search(r"calls: +\d+%\|.*\| [0-9.e+]+/1000 simulated s", r.stderr), r.stderr
    meta = json.loads((tmp_path / "o" / "meta.json").read_text())
    assert (meta["seed"], meta["replication"]) == (3, 2)


def test_run_shows_tcp_and_rtp_tables(examples):
    r = invoke("run", examples / "tcp_web_and_voice.toml")
    assert r.exit_code == 0 and "TCP:" in r.output and "| web0" in r.output
    r = invoke("run", examples / "rtp_avpf_multicast.yaml")
    assert r.exit_code == 0 and "RTP members:" in r.output and "conf/A2/rtcp" in r.output


def test_run_shows_what_a_call_looked_and_sounded_like(examples):
    import mediasim

    r = invoke("run", examples / "calls.toml")
    assert r.exit_code == 0 and "Media:" in r.output
    cells = lambda line: [c.strip() for c in line.strip().strip("|").split("|")]  # noqa: E731
    header, _, *rows = [cells(x) for x in r.output.split("Media:")[1].strip().split("\n\n")[0].splitlines()]
    printed = {row[0]: dict(zip(header, row)) for row in rows}
    media = mediasim.run(str(examples / "calls.toml"), seed=0).tables["media"].set_index("flow")
    voice, video = media.loc["voice/alice/rtp"], media.loc["video/alice/rtp"]
    assert printed["voice/alice/rtp"]["mos"] == f"{voice['mos']:.4g}"
    assert printed["voice/alice/rtp"]["r_factor"] == f"{voice['r_factor']:.4g}"
    assert printed["video/alice/rtp"]["frames_late"] == str(int(video["frames_late"])) and video["frames_late"] > 0
    assert printed["video/alice/rtp"]["mos"] == ""  # the E-model is voice's


def test_run_with_override_and_error(examples):
    r = invoke("run", examples / "dumbbell.toml", "--set", "links[name=bottleneck].rate_bps=-5")
    assert r.exit_code == 2
    assert "links[3].rate_bps: must be a positive number (got -5)" in r.output
    r = invoke("run", examples / "dumbbell.toml", "--set", "nonsense")
    assert (r.exit_code, r.stderr) == (2, "error: --set nonsense: expected PATH=VALUE\n")
    r = invoke("run", "no/such/file.toml")
    assert r.exit_code == 2 and "not found" in r.output


@pytest.mark.parametrize("command, target, first, second, form", [
    ("run", "dumbbell.toml", "duration_s=5", "duration_s = 6", "PATH=VALUE"),
    ("sweep", "dumbbell.toml", "duration_s=5", "duration_s=6", "PATH=VALUE"),
    ("reproduce", "iw10", "flows=1", " flows=2", "NAME=VALUE"),
])
def test_a_set_given_twice_is_refused_not_replaced(examples, tmp_path, command, target, first, second, form):
    """The later --set of a name would silently replace the earlier: every
    command refuses it, as sweep's --vary and --alias do."""
    path = examples / target if target.endswith(".toml") else target
    extra = ["--vary", "seed=1,2"] if command == "sweep" else []
    r = invoke(command, path, "--set", first, "--set", second, *extra, "--out", tmp_path / "o")
    name = first.split("=")[0]
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"error: --set {name}: given twice\n"), r.output
    assert not (tmp_path / "o").exists()
    r = invoke(command, path, "--set", name, *extra, "--out", tmp_path / "o")
    assert (r.exit_code, r.stderr) == (2, f"error: --set {name}: expected {form}\n"), r.output


def test_validate_and_schema(examples):
    r = invoke("validate", examples / "multicast_tree.yaml")
    assert r.exit_code == 0 and "valid" in r.output
    r = invoke("schema")
    assert r.exit_code == 0
    schema = json.loads(r.output)
    assert schema["title"] == "Scenario"
    assert {"duration_s", "nodes", "links", "flows"} <= set(schema["properties"])
    assert "duration_s" in schema["required"]


@pytest.mark.parametrize("command", ["validate", "run"])
def test_allow_takes_fields_of_the_scenario_by_name_and_refuses_a_path_that_leads_nowhere(examples, command):
    # Its own process each time: a warning filter set by --allow lasts for the process.
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "mediasim", command, str(examples / "dumbbell.toml"),
                               "--set", "links[name=bottleneck].rate_bps=2000", "--set", "duration_s=3", *args],
                              capture_output=True, text=True)

    r = cli("--allow", "links[name=bottleneck].rate_bps")
    assert r.returncode == 0 and "ImplausibleValue" not in r.stderr, r.stderr
    r = cli()
    assert r.returncode == 0 and "links[3].rate_bps: 2000 bit/s is below 10 kbit/s" in r.stderr, r.stderr
    r = cli("--allow", "links[3].rate_bs", "--allow", "all")
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(
        "error: --allow links[3].rate_bs: no field 'rate_bs' (did you mean 'rate_bps'?"), r.stderr


def test_every_lazy_command_loads_under_its_name():
    """The commands kept out of `mediasim run`'s imports are found under the
    names the group lists."""
    import click

    ctx = click.Context(main)
    names = main.list_commands(ctx)
    assert {"run", "validate", "sweep", "bench", "reproduce", "demo"} <= set(names)
    for name in names:
        cmd = main.get_command(ctx, name)
        assert isinstance(cmd, click.Command) and cmd.name == name


def test_bench_quick_prints_figures():
    r = invoke("bench", "--quick", "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert [(x["workload"], x["flows"]) for x in rows] == [("udp-dumbbell-1", 1), ("udp-dumbbell-8", 8), ("tcp-dumbbell-1", 1), ("tcp-dumbbell-8", 8)]
    for x in rows:
        assert x["events"] > 0 and x["delivered"] > 0
        assert x["events_per_s"] > 0 and x["peak_rss_mb"] > 0


def test_bench_rtp_group_quick_prints_the_large_group_workload():
    r = invoke("bench", "--rtp-group", "--quick", "--json")
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.output)
    assert row["workload"] == "rtp-group-1000" and row["sim_s"] == 50.0
    # Media alone: 999 receivers x about 7.5 packets/s x 50 s.
    assert row["delivered"] > 999 * 7 * 50
    assert row["events_per_s"] > 0 and row["peak_rss_mb"] > 0


def test_bench_calls_quick_prints_the_calls_beside_rtp_and_cbr():
    r = invoke("bench", "--calls", "--quick", "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert [x["workload"] for x in rows] == ["calls-8", "calls-rtp-8", "calls-cbr-8"]
    # 8 calls of 1 Mbit/s for 5 s: about 8 x 5 x 104 media packets each way.
    assert all(x["media_delivered"] > 8 * 5 * 90 for x in rows)
    assert rows[-1]["cost_vs_cbr"] == 1.0 and all(x["cost_vs_cbr"] > 0 for x in rows)


def test_bench_gcc_calls_quick_prints_call_seconds_per_wall_second():
    r = invoke("bench", "--gcc-calls", "--quick", "--json")
    assert r.exit_code == 0, r.output
    row, cbr = json.loads(r.output)
    assert row["workload"] == "gcc-calls-50" and row["sim_s"] == 10.0
    # 50 calls from 300 kbit/s (GCC's start) for 10 s: at least 50 x 10 x
    # 30 packets of media, and the CUBIC flows' on top.
    assert row["media_delivered"] > 50 * 10 * 30
    assert row["call_s_per_wall_s"] == pytest.approx(500 / row["wall_s"], rel=0.01)
    # The network alone on the same paths: 50 CBR flows of 0.9 Mbit/s in
    # 1200-byte packets (about 94 a second each) beside the CUBIC flows.
    assert cbr["workload"] == "cbr-calls-50" and cbr["cost_vs_cbr"] == 1.0
    assert cbr["media_delivered"] > 50 * 10 * 90
    assert row["cost_vs_cbr"] == pytest.approx(row["wall_us_per_media_packet"] / cbr["wall_us_per_media_packet"],
                                               abs=0.01)


def test_bench_gcc_calls_split_in_two_delivers_what_one_piece_does():
    one = json.loads(invoke("bench", "--gcc-calls", "--quick", "--json").output)
    r = invoke("bench", "--gcc-calls", "--quick", "--json", "--partitions", "2")
    assert r.exit_code == 0, r.output
    two = json.loads(r.output)
    assert [x["partitions"] for x in two] == [2, 2] and [x["partitions"] for x in one] == [1, 1]
    # The split run gives the run in one piece's results (tests/test_partitions.py).
    for a, b in zip(one, two):
        assert (a["workload"], a["events"], a["delivered"], a["media_delivered"]) == \
            (b["workload"], b["events"], b["delivered"], b["media_delivered"])
    one, two = (json.loads(invoke("bench", "--rmtp", "--quick", "--json", *more).output)[0]
                for more in ((), ("--partitions", "2")))
    assert (one["events"], one["delivered"]) == (two["events"], two["delivered"]) and two["partitions"] == 2
    r = invoke("bench", "--calls", "--partitions", "2")
    assert r.exit_code != 0 and "--partitions goes with --gcc-calls or --rmtp or --rtp-group" in r.output


def test_bench_gcc_calls_mix_runs_the_three_controllers_in_turn():
    from mediasim.validation.bench import rmcat_calls

    sc = rmcat_calls(6, 1.0)
    kinds = [s["members"][0]["cc"]["type"] for s in sc["rtp_sessions"]]
    assert kinds == ["gcc", "nada", "scream"] * 2
    r = invoke("bench", "--gcc-calls", "--mix", "--quick", "--json")
    assert r.exit_code == 0, r.output
    row, cbr = json.loads(r.output)
    assert row["workload"] == "rmcat-calls-50" and row["media_delivered"] > 50 * 10 * 30
    assert cbr["workload"] == "cbr-calls-50"
    r = invoke("bench", "--mix")
    assert r.exit_code != 0 and "--mix goes with --gcc-calls" in r.output


def test_bench_calls_parts_switches_each_part_off():
    r = invoke("bench", "--calls", "--parts", "--quick", "--json")
    assert r.exit_code == 0, r.output
    rows = {x["workload"]: x for x in json.loads(r.output)}
    assert list(rows) == ["calls-8", "calls-8-no-feedback", "calls-8-no-playout", "calls-8-no-pacer",
                          "calls-8-no-feedback-playout-pacer-source", "calls-rtp-8", "calls-cbr-8"]
    full = rows["calls-8"]
    # Without feedback: fewer packets delivered (no feedback messages), the
    # same media within the transport-sequence extension's bytes; without
    # the playout buffer: the same events.
    assert rows["calls-8-no-feedback"]["delivered"] < full["delivered"]
    assert rows["calls-8-no-feedback"]["media_delivered"] == pytest.approx(full["media_delivered"], rel=0.01)
    assert rows["calls-8-no-playout"]["events"] == full["events"]
    assert invoke("bench", "--parts").exit_code != 0


def test_bench_campaign_quick_prints_both_rates():
    r = invoke("bench", "--campaign", "--quick", "--json")
    assert r.exit_code == 0, r.output
    api, cli = json.loads(r.output)
    assert api["path"].startswith("run_many") and cli["path"].startswith("mediasim campaign")
    for row in (api, cli):
        assert (row["runs"], row["sim_s_per_run"]) == (10, 10.0) and row["workers"] >= 1
        assert row["one_process_runs_per_s"] > 0 and row["pool_runs_per_s"] > 0
        # With one round, the speedup is that round's ratio of the two rates.
        assert row["speedup"] == pytest.approx(row["pool_runs_per_s"] / row["one_process_runs_per_s"])
        assert row["speedup_min"] == row["speedup"] == row["speedup_max"]
    # The time the pool's processes spent inside runs, over workers x wall.
    assert 0 < api["pool_busy_share"] <= 1
    # The command's time over a folder whose runs are all stored (a time,
    # not compared: speed is measured by the bench, not asserted by tests).
    assert cli["fixed_s"] > 0 and "pool_busy_share" not in cli


@pytest.mark.parametrize("value, problem", [("40,x", "expected comma-separated integers"),
                                            ("1", "at least 2 runs")])
def test_bench_campaign_runs_rejects_bad_sizes_by_name(value, problem):
    r = invoke("bench", "--campaign", "--campaign-runs", value)
    assert r.exit_code == 2
    assert f"--campaign-runs {value!r}" in r.output and problem in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("args, problem", [
    (("--sizes", "8"), "--sizes goes with --vs-ns2"),
    (("--ns3",), "--ns3 goes with --vs-ns2"),
    (("--calls", "--repeats", "3"), "--repeats goes with --vs-ns2 or --campaign"),
    (("--campaign-runs", "40"), "--campaign-runs goes with --campaign"),
    (("--calls", "--rmtp"), "--rmtp and --calls: choose one workload per run"),
    (("--vs-ns2", "--sizes", "0"), "--sizes '0': each must be from 1 to 200,000"),
    (("--vs-ns2", "--sizes", "8,8"), "--sizes '8,8': a size is given twice"),
    (("--vs-ns2", "--sizes", "1,x"), "--sizes '1,x': expected comma-separated integers"),
    (("--campaign", "--campaign-runs", "10,999999"), "each must be from 1 to 200,000"),
    (("--campaign", "--campaign-runs", "1,200001"), "--campaign-runs '1,200001': each must be from 1 to 200,000"),
])
def test_bench_refuses_options_it_would_ignore_and_bad_sizes(args, problem):
    # Checked before any workload runs (nothing here needs ns-2).
    r = invoke("bench", *args)
    assert r.exit_code == 2 and problem in r.output and "Traceback" not in r.output


def test_bench_sizes_take_each_whole_number_from_one_to_the_bound():
    from mediasim.cli_commands import BENCH_MAX_SIZE, _positive_ints

    assert _positive_ints("--sizes", f"1,{BENCH_MAX_SIZE},7") == (1, BENCH_MAX_SIZE, 7)


@pytest.mark.parametrize("args", [("run", DUMBBELL, "--max-wall", "nan"),
                                  ("run", DUMBBELL, "--max-memory", "inf"),
                                  ("plot", ".", "--bin", "nan")])
def test_float_options_take_finite_numbers_only(args):
    # click's ranges let nan through (no comparison with it holds).
    r = invoke(*args)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.stderr.endswith(f"\nError: Invalid value for '{args[-2]}': {args[-1]!r} is not a finite number.\n")
    assert r.stderr.startswith(f"Usage: main {args[0]} ")  # with the usage, as click says its own (prog "main" here)


def test_a_huge_value_is_named_in_exponent_form():
    r = invoke("run", DUMBBELL, "--set", "duration_s=1e300")
    assert r.exit_code == 2 and "duration_s: must be at most 100000000 s (got 1e300)" in r.output


def test_bench_campaign_names_a_failing_command_without_a_traceback(monkeypatch):
    import sys

    from mediasim.validation import ns2_compare

    fake = [sys.executable, "-c", "import sys; sys.exit('no such campaign folder')"]
    monkeypatch.setattr(ns2_compare, "_cli_command", lambda: fake)
    r = invoke("bench", "--campaign", "--quick")
    assert r.exit_code == 2
    assert "error: mediasim campaign failed" in r.output and "no such campaign folder" in r.output
    assert "Traceback" not in r.output


def test_bench_memory_quick_prints_a_packet_as_at_least_its_struct():
    """Slopes of peak RSS: a packet held costs at least the 80 bytes of
    the Packet struct (plus its slot's arrival time), and not three times
    that; a flow costs something."""
    r = invoke("bench", "--memory", "--quick", "--json")
    assert r.exit_code == 0, r.output
    rows = {x["figure"]: x["bytes"] for x in json.loads(r.output)}
    assert set(rows) == {"per TCP flow", "per packet queued", "per packet propagating"}
    assert 80 <= rows["per packet propagating"] < 300
    assert rows["per TCP flow"] > 1000


def test_demo_refuses_a_count_of_replications_beyond_the_studies_limit_before_writing(tmp_path):
    from mediasim.experiments.params import MAX_REPLICATIONS

    r = invoke("demo", "--out", tmp_path / "d", "--replications", MAX_REPLICATIONS + 1)
    assert r.exit_code == 2 and r.output == "error: demo: replications must be from 1 to 10,000 (got 10001)\n"
    assert not (tmp_path / "d").exists() and list(tmp_path.iterdir()) == []


def test_demo_writes_tables_plots_and_report(tmp_path):
    r = invoke("demo", "--out", tmp_path, "--replications", 2, "--workers", 2)
    assert r.exit_code == 0, r.output
    for f in ("report.md", "summary.csv", "summary.parquet", "buffer_tradeoff.png", "queue_length.png"):
        assert (tmp_path / f).stat().st_size > 0
    import pandas as pd

    s = pd.read_csv(tmp_path / "summary.csv")
    voice = s[s["flow"] == "voice"].sort_values("buffer_packets")
    # the shape the demo exists to show: bigger buffers, less loss, more delay
    assert voice["loss_rate_mean"].iloc[0] > voice["loss_rate_mean"].iloc[-1]
    assert voice["delay_p99_ms_mean"].iloc[0] < voice["delay_p99_ms_mean"].iloc[-1]


def test_the_side_by_side_times_the_engine_run_in_its_own_process():
    from mediasim.validation.ns2_compare import run_mediasim

    r = run_mediasim(2, 0.5)
    # The process includes Python's start-up and imports; the engine's
    # figure is its run alone.
    assert 0 < r["run_s"] < r["wall_s"]
    assert r["bottleneck_packets"] > 0 and r["delivered"] > r["bottleneck_packets"]


def test_the_side_by_side_runs_every_size_in_every_round(monkeypatch):
    # The growth of cost with size compares sizes: a spell of host load
    # must fall on all of them, so each round runs every size.
    from mediasim.validation import ns2_compare as nc

    calls = []

    def fake(tool, delivered_per_pkt=1.5):
        def run(n, duration_s, *_):
            calls.append((tool, n))
            r = len(calls)  # differs from call to call: medians are taken
            return {"wall_s": 0.1 * r, "run_s": 0.01 * n * r, "bottleneck_packets": 1000 * n,
                    "delivered": int(delivered_per_pkt * 1000 * n), "peak_rss_mib": 17.0}
        return run

    monkeypatch.setattr(nc.shutil, "which", lambda _: "/usr/bin/ns")
    monkeypatch.setattr(nc, "run_mediasim", fake("engine"))
    monkeypatch.setattr(nc, "run_cli", fake("cli"))
    monkeypatch.setattr(nc, "run_ns2", fake("ns2"))
    rows = nc.compare(sizes=(1, 8), repeats=3, duration_s=1.0)
    assert [n for tool, n in calls if tool == "engine"] == [1, 8, 1, 8, 1, 8]
    assert calls[:3] == [("engine", 1), ("cli", 1), ("ns2", 1)]
    assert [r["flows"] for r in rows] == [1, 8]
    # Size 1's engine runs were calls 1, 7 and 13 (median 7): 0.07 s.
    assert rows[0]["mediasim_engine_s"] == pytest.approx(0.07)
    assert rows[1]["engine_cost_per_delivered_vs_smallest"] == pytest.approx((0.08 * 10 / 12000) / (0.07 / 1500))
    # The fastest runs: size 1's call 1 (0.01 s), size 8's call 4 (0.32 s).
    assert rows[0]["mediasim_engine_s_min"] == pytest.approx(0.01)
    assert rows[1]["engine_cost_per_delivered_vs_smallest_min"] == pytest.approx((0.01 * 8 * 4 / 12000) / (0.01 / 1500))


def test_the_side_by_side_gives_cost_growth_per_bottleneck_and_per_delivered_packet():
    from mediasim.validation.ns2_compare import _cost_growth

    rows = [{"flows": 8, "mediasim_engine_us_per_pkt": 0.6, "mediasim_engine_us_per_delivered": 0.4},
            {"flows": 1, "mediasim_engine_us_per_pkt": 0.5, "mediasim_engine_us_per_delivered": 0.25},
            {"flows": 256, "mediasim_engine_us_per_pkt": 1.0, "mediasim_engine_us_per_delivered": 0.5}]
    _cost_growth(rows)
    assert [r["engine_cost_per_pkt_vs_smallest"] for r in rows] == pytest.approx([1.2, 1.0, 2.0])
    assert [r["engine_cost_per_delivered_vs_smallest"] for r in rows] == pytest.approx([1.6, 1.0, 2.0])


@pytest.mark.parametrize("out", [False, True])
def test_ctrl_c_ends_a_run_at_once_says_where_and_writes_nothing(tmp_path, out):
    """Every so many events a run lets the interpreter take a Ctrl-C, also
    when that lands while its progress bar draws (it is raised inside the
    bar's update, not left pending). The command ends with the shell's
    status for SIGINT and leaves no output folder."""
    args = [sys.executable, "-m", "mediasim", "run", DUMBBELL, "--set", "duration_s=1e6"]
    if out:
        args += ["--out", str(tmp_path / "run")]
    # As from a terminal: SIGINT at its default action (see the campaign's
    # Ctrl-C test).
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) as p:
        try:
            time.sleep(2)  # past start-up, into the run
            t0 = time.monotonic()
            p.send_signal(signal.SIGINT)
            stdout, stderr = p.communicate(timeout=20)
            waited_s = time.monotonic() - t0
        finally:  # a failure leaves no process behind for later tests
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert p.returncode == 130, stderr[-500:]
    assert waited_s < 5
    assert re.search(r"\nrun interrupted at simulated time \d+\.\d{3} s\n$", stderr), stderr[-500:]
    assert stdout == "" and "Traceback" not in stderr
    assert not (tmp_path / "run").exists()


def test_ctrl_c_while_the_command_line_loads_ends_quietly_with_status_130(monkeypatch, capsys):
    """The console script and ``python -m mediasim`` import the command
    line inside a guard: a Ctrl-C during that import (stood in for by a
    module whose loading is interrupted) ends with the shell's status for
    SIGINT and a word, not a traceback."""
    import types

    from mediasim import __main__ as start

    class Interrupted(types.ModuleType):
        def __getattr__(self, name):
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "mediasim.cli", Interrupted("mediasim.cli"))
    with pytest.raises(SystemExit) as e:
        start.entry()
    assert e.value.code == 130 and e.value.__suppress_context__
    assert capsys.readouterr() == ("", "\ninterrupted\n")


def test_the_console_script_is_the_guarded_entry():
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"mediasim": "mediasim.__main__:entry"}


def test_crosscheck_prints_the_comparison_says_what_it_compared_with_and_names_what_is_missing(monkeypatch, tmp_path):
    """The command's own part, with the reference simulators stood in for
    (the comparisons themselves: test_crosscheck_references.py, test_red.py)."""
    import pandas as pd

    from mediasim.validation import crosscheck as tcp
    from mediasim.validation import red_crosscheck as red

    asked = []
    monkeypatch.setattr(tcp, "compare", lambda **kw: asked.append(kw) or pd.DataFrame(
        [{"simulator": "mediasim", "goodput_mbps": 9.87654, "flows": 8}]))
    monkeypatch.setattr(tcp, "ns3_python", lambda: None)
    r = invoke("crosscheck", "--impatient")
    assert r.exit_code == 0 and asked == [{"newreno_timer": "impatient", "with_ns3": True}]
    assert r.stdout.splitlines()[2] == "| mediasim    |          9.877 |       8 |"
    assert r.stdout.endswith("compared with ns-2 only\n")
    r = invoke("crosscheck", "--no-ns3")
    assert asked[-1] == {"newreno_timer": "slow_but_steady", "with_ns3": False}
    assert r.stdout.endswith("compared with ns-2 only\n")
    monkeypatch.setattr(tcp, "ns3_python", lambda: "/opt/ns3/bin/python")
    r = invoke("crosscheck")
    assert r.exit_code == 0 and r.stdout.endswith("of at least one reference\n")
    monkeypatch.setattr(tcp, "compare", lambda **kw: (_ for _ in ()).throw(RuntimeError("ns-2 not found")))
    r = invoke("crosscheck")
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", "error: ns-2 not found\n")

    # A column of figures and verdicts (text): the figures to 4 digits.
    monkeypatch.setattr(red, "compare", lambda: [{"simulator": "ns-2", "setting": "gentle", "drops": 12.3456},
                                                 {"simulator": "gap", "setting": "gentle", "drops": "4.0%"}])
    r = invoke("crosscheck", "--red")
    assert r.exit_code == 0 and r.stdout.splitlines()[2:4] == ["| ns-2        | gentle    | 12.35   |",
                                                                "| gap         | gentle    | 4.0%    |"]
    monkeypatch.setattr(red, "compare", lambda: (_ for _ in ()).throw(OSError("ns: cannot execute")))
    r = invoke("crosscheck", "--red")
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", "error: ns: cannot execute\n")
    monkeypatch.setattr(red, "REFERENCES", tmp_path / "red.json")
    monkeypatch.setattr(red, "reference_runs", lambda: {"runs": [{"setting": "gentle"}]})
    r = invoke("crosscheck", "--red", "--save-references")
    assert (r.exit_code, r.stdout) == (0, f"reference figures written to {tmp_path / 'red.json'}\n")
    assert (tmp_path / "red.json").read_text() == '{\n "runs": [\n  {\n   "setting": "gentle"\n  }\n ]\n}\n'


def test_a_run_printing_into_a_closed_pipe_ends_quietly_with_status_1(examples):
    """`mediasim run ... | head -0`: the output cannot be written; the
    command says nothing more (no traceback) and fails."""
    with subprocess.Popen([sys.executable, "-m", "mediasim", "run", str(examples / "calls.toml")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        p.stdout.close()
        stderr = p.stderr.read()
    assert (p.returncode, stderr) == (1, "")
