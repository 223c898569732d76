"""mediasim show (a scenario's topology) and mediasim plot (a run's
throughput, delay, queues and windows)."""

from click.testing import CliRunner

from mediasim.cli import main
from mediasim.reporting.run_plots import panels
from mediasim.reporting.topology import flow_lines, link_label


def test_link_labels_give_rate_and_delay_per_direction_when_they_differ():
    assert link_label({"rate_bps": 2e6, "delay_ms": 20}) == "2 Mbit/s, 20 ms"
    assert link_label({"rate_bps": 2e6, "delay_ms": 24, "ba": {"rate_bps": 512e3}}) == \
        "2 Mbit/s, 24 ms / 512 kbit/s, 24 ms"


def test_show_draws_nodes_links_and_flows(examples, tmp_path):
    svg = tmp_path / "d.svg"
    r = CliRunner().invoke(main, ["show", str(examples / "dumbbell.toml"), "--out", str(svg)])
    assert r.exit_code == 0, r.output
    text = svg.read_text()
    for s in ("r1", "r2", "2 Mbit/s, 20 ms", "voice (cbr): s1 -&gt; d1"):
        assert s in text, s
    r = CliRunner().invoke(main, ["show", str(examples / "rtp_avpf_multicast.yaml"), "--out", str(tmp_path / "r.png")])
    assert r.exit_code == 0 and (tmp_path / "r.png").stat().st_size > 10_000


def test_show_names_a_bad_field_or_file_type(examples, tmp_path):
    r = CliRunner().invoke(main, ["show", str(examples / "dumbbell.toml"), "--set", "links[0].rate_bps=-1"])
    assert r.exit_code == 2 and "links[0].rate_bps" in r.output
    r = CliRunner().invoke(main, ["show", str(examples / "dumbbell.toml"), "--out", str(tmp_path / "x.txt")])
    assert r.exit_code == 2 and "must end in .png, .svg or .pdf" in r.output


def test_flow_lines_cover_flows_and_sessions():
    data = {"flows": [{"name": "m", "type": "cbr", "src": "s", "group": "g"}],
            "rmtp_sessions": [{"name": "r", "sender": "s", "subgroups": [{"dr": "d", "receivers": ["a", "b"]}]}]}
    assert flow_lines(data) == ["m (cbr): s -> group g", "r (RMTP): s -> 1 DRs, 2 receivers"]


def test_plot_draws_every_panel_its_tables_allow(examples, tmp_path):
    run = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", str(examples / "tcp_web_and_voice.toml"), "--packets", "--series",
                                  "--out", str(run)])
    assert r.exit_code == 0, r.output
    from mediasim import Results

    assert panels(Results.read_parquet(run).tables) == ["throughput", "delay", "queues", "cwnd"]
    r = CliRunner().invoke(main, ["plot", str(run)])
    assert r.exit_code == 0, r.output
    assert (run / "plots.png").stat().st_size > 20_000


def test_plot_says_what_to_turn_on(examples, tmp_path):
    run = tmp_path / "run"
    assert CliRunner().invoke(main, ["run", str(examples / "dumbbell.toml"), "--set", "measure={}",
                                     "--out", str(run)]).exit_code == 0
    r = CliRunner().invoke(main, ["plot", str(run)])
    assert r.exit_code == 2 and "--packets" in r.output
    r = CliRunner().invoke(main, ["plot", str(tmp_path)])
    assert r.exit_code == 2 and "not a run folder" in r.output
