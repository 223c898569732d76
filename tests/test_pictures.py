"""mediasim show (a scenario's topology) and mediasim plot (a run's
throughput, delay, queues and windows)."""

import pytest
from click.testing import CliRunner

from conftest import figures_saved_by
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


def test_show_puts_the_flows_under_the_graph_not_over_a_node(examples, tmp_path):
    from matplotlib.collections import PathCollection

    from mediasim.reporting.topology import draw
    from mediasim.scenario import load_scenario

    fig = figures_saved_by(lambda: draw(load_scenario(examples / "calls.toml").to_dict(), tmp_path / "c.png"))[0]
    graph = next(ax for ax in fig.axes if any(isinstance(c, PathCollection) for c in ax.collections))
    listing = next(ax for ax in fig.axes for t in ax.texts if "video (RTP session): alice, bob" in t.get_text())
    assert listing is not graph
    assert listing.get_position().y1 <= graph.get_position().y0


def test_show_draws_members_addresses_capacity_and_at_most_twelve_flow_lines(tmp_path):
    from matplotlib.colors import to_hex

    from mediasim import Scenario
    from mediasim.reporting.topology import capacity_curves, draw

    sc = Scenario("demo", duration_s=2.0)
    for n in ("s", "r", "m1", "m2", "x"):
        sc.node(n)
    sc.link("s", "r", rate_bps=[[0, 2e6], [1, 1e6]], delay_ms=5).link("r", "m1", rate_bps=1e6, delay_ms=5)
    sc.link("r", "m2", rate_bps=1e6, delay_ms=5).link("r", "x", rate_bps=1e6, delay_ms=5)
    sc.group("g", ["m1", "m2"])
    for i in range(14):
        sc.flow(f"f{i:02d}", "cbr", src="s", dst="x", rate_bps=1e4, payload_bytes=100)
    data = sc.to_dict()
    fig = figures_saved_by(lambda: draw(data, tmp_path / "d.png"))[0]
    graph, listing, capacity = fig.axes
    assert graph.get_title() == "demo: 2.0 s (orange: group members)"
    nodes = graph.collections[-1]  # drawn after the edges
    face = {name: to_hex(c) for name, c in zip(("s", "r", "m1", "m2", "x"), nodes.get_facecolors())}
    assert face == {"s": "#8ecae6", "r": "#8ecae6", "m1": "#f4a261", "m2": "#f4a261", "x": "#8ecae6"}
    labels = {t.get_text() for t in graph.texts}
    assert "s\n10.0.0.1" in labels and "x\n10.0.0.5" in labels  # under 40 nodes: with addresses
    assert "2 Mbit/s > 1 Mbit/s, 5 ms" in labels
    text = listing.texts[0].get_text().splitlines()
    assert len(text) == 13 and text[0] == "f00 (cbr): s -> x" and text[11] == "f11 (cbr): s -> x"
    assert text[12] == "... and 2 more"
    assert (capacity.get_xlabel(), capacity.get_ylabel()) == ("time (s)", "capacity (Mbit/s)")
    assert capacity.get_ylim()[0] == 0
    (name, times, mbps), _ = capacity_curves(data)
    line = capacity.get_lines()[0]
    assert line.get_label() == name == "s->r" and list(line.get_ydata()) == mbps and list(line.get_xdata()) == times
    assert line.get_drawstyle() == "steps-post"
    assert [t.get_text() for t in capacity.get_legend().get_texts()] == ["s->r", "r->s"]


@pytest.mark.parametrize("flows, listed", [(12, 12), (13, 13)])
def test_show_lists_twelve_flows_whole_and_cuts_a_longer_list(tmp_path, flows, listed):
    from mediasim.reporting.topology import draw

    data = {"duration_s": 1.0, "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1}],
            "flows": [{"name": f"f{i}", "type": "cbr", "src": "a", "dst": "b"} for i in range(flows)]}
    fig = figures_saved_by(lambda: draw(data, tmp_path / "d.png"))[0]
    lines = fig.axes[1].texts[0].get_text().splitlines()
    assert len(lines) == listed and lines[-1] == ("f11 (cbr): a -> b" if flows == 12 else "... and 1 more")


def test_show_draws_a_scenario_without_links_and_its_edges_on_its_own_figure(tmp_path):
    from matplotlib.collections import LineCollection

    from mediasim.reporting.topology import draw

    alone = {"duration_s": 1.0, "nodes": [{"name": "a"}, {"name": "b"}], "links": []}
    fig = figures_saved_by(lambda: draw(alone, tmp_path / "d.png"))[0]
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["a\n10.0.0.1", "b\n10.0.0.2"]
    chain = {"duration_s": 1.0, "nodes": [{"name": n} for n in "abc"],
             "links": [{"a": "a", "b": "b", "rate_bps": 1e6, "delay_ms": 1},
                       {"a": "b", "b": "c", "rate_bps": 1e6, "delay_ms": 1}]}
    fig = figures_saved_by(lambda: draw(chain, tmp_path / "c.png"))[0]
    edges = [c for c in fig.axes[0].collections if isinstance(c, LineCollection)]
    assert len(edges) == 1 and len(edges[0].get_segments()) == 2


def test_show_names_forty_nodes_without_addresses_and_an_unnamed_scenario_as_such(tmp_path):
    from mediasim.reporting.topology import draw

    data = {"duration_s": 1.0, "nodes": [{"name": f"n{i}"} for i in range(40)],
            "links": [{"a": f"n{i}", "b": f"n{i + 1}", "rate_bps": 1e6, "delay_ms": 1} for i in range(39)]}
    fig = figures_saved_by(lambda: draw(data, tmp_path / "d.svg"))[0]
    graph = fig.axes[0]
    assert len(fig.axes) == 1 and graph.get_title() == "scenario: 1.0 s"
    assert sorted(t.get_text() for t in graph.texts) == sorted(f"n{i}" for i in range(40))  # no link labels
    svg = (tmp_path / "d.svg").read_text()
    assert "<text" in svg and "n39</text>" in svg  # text stays text (not paths with the text in a comment)


def test_a_large_scenario_is_laid_out_as_the_tree_a_breadth_first_search_finds():
    import networkx as nx

    from mediasim.reporting.topology import tree_positions

    # A source, two routers (of 2 and 3 receivers) listed after a leaf:
    # the root is the node of most links, r2 (4), not the first listed.
    g = nx.Graph([("a0", "r1"), ("r1", "a1"), ("r2", "r1"), ("r2", "b0"), ("r2", "b1"), ("r2", "b2")])
    pos = tree_positions(g)
    assert {v: x for v, (x, _) in pos.items()} == {"r2": 0, "r1": 0.5, "b0": 0.5, "b1": 0.5, "b2": 0.5,
                                                   "a0": 1, "a1": 1}
    # Leaves evenly spaced from the top in the search's order (r1's
    # children first: r1 is r2's first neighbour); a parent at its
    # children's mean height.
    leaves = ["a0", "a1", "b0", "b1", "b2"]
    assert [pos[v][1] for v in leaves] == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert pos["r1"][1] == 0.875 and pos["r2"][1] == (0.875 + 0.5 + 0.25 + 0.0) / 4
    # A chain of 5,000 nodes (no recursion) from its root, node 1 (the
    # first of two links): leaves 0 and 4999, each node of 2..4999 level
    # with its one child; parts stacked in order, a lone node a leaf of
    # its own at x = 0.
    chain = nx.path_graph(5000)
    chain.add_node("alone")
    pos = tree_positions(chain)
    assert (pos[1], pos[0], pos[4999], pos["alone"]) == ((0.0, 0.75), (1 / 4998, 1.0), (1.0, 0.5), (0.0, 0.0))
    assert {pos[i][1] for i in range(2, 5000)} == {0.5}


def test_show_draws_a_large_scenario_as_a_tree_without_names(tmp_path):
    from matplotlib.collections import PathCollection

    from mediasim.reporting import topology

    def star(n):
        return {"name": "s", "duration_s": 1.0, "nodes": [{"name": "hub"}] + [{"name": f"n{i}"} for i in range(n)],
                "links": [{"a": f"n{i}", "b": "hub", "rate_bps": 1e6, "delay_ms": 1} for i in range(n)]}

    assert (topology.MAX_KAMADA_KAWAI_NODES, topology.MAX_NAMED_NODES) == (200, 400)
    for nodes, tree, title in ((200, False, "s: 1.0 s"), (201, True, "s: 1.0 s"), (400, True, "s: 1.0 s"),
                               (401, True, "s: 1.0 s, 401 nodes (unnamed above 400)")):
        data = star(nodes - 1)
        fig = figures_saved_by(lambda: topology.draw(data, tmp_path / "d.png"))[0]
        graph = fig.axes[0]
        [dots] = [c for c in graph.collections if isinstance(c, PathCollection)]
        xs = [x for x, _ in dots.get_offsets()]
        # As a tree, the hub on the left and every leaf at the right;
        # Kamada-Kawai puts the hub among its leaves.
        assert (xs[0] == 0 and set(xs[1:]) == {1}) == tree, nodes
        assert len(graph.texts) == (nodes if nodes <= 400 else 0) and graph.get_title() == title


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

    assert panels(Results.read_parquet(run).tables) == ["throughput", "delay", "queues", "sojourn", "cwnd"]
    r = CliRunner().invoke(main, ["plot", str(run)])
    assert r.exit_code == 0, r.output
    assert (run / "plots.png").stat().st_size > 20_000


def test_plot_draws_each_panel_from_its_table(examples, tmp_path):
    """Each panel's lines against the run's own tables: throughput per
    bin (each bin drawn to its end), delays, queue lengths, the sojourn
    they mean at the direction's rate, cwnd in kB; the title and axes."""
    import numpy as np

    import mediasim
    from mediasim.reporting import run_plots

    run = tmp_path / "run"
    res = mediasim.run(mediasim.load_scenario(examples / "tcp_web_and_voice.toml"), packets=True, series=True,
                       out=run)
    fig = figures_saved_by(lambda: run_plots.plot_run(run, bin_s=2.0))[0]
    axes = {ax.get_ylabel(): ax for ax in fig.axes}
    assert list(axes) == ["throughput (kbit/s, 2 s bins)", "one-way delay (ms)", "queue (packets)",
                          "queue sojourn time (ms)", "TCP cwnd (kB)"]
    assert fig._suptitle.get_text() == "tcp-web-and-voice: seed 0, replication 0"
    assert fig.axes[-1].get_xlabel() == "simulated time (s)"
    assert all(ax.get_xlim() == (0, 20.0) for ax in fig.axes)  # one time axis
    assert all(ax.get_ylim()[0] == 0 for ax in fig.axes)

    def line(ax, label):
        return next(ln for ln in ax.get_lines() if ln.get_label() == label)

    voice = line(axes["throughput (kbit/s, 2 s bins)"], "voice")
    bins = run_plots.throughput_series(res.packets, 2.0, 20.0)
    bins = bins[bins["flow"] == "voice"]
    assert list(voice.get_xdata()) == [*bins["time_s"], 20.0]  # the last bin drawn to its end
    assert list(voice.get_ydata()) == [*(bins["throughput_bps"] / 1e3), bins["throughput_bps"].iloc[-1] / 1e3]
    assert voice.get_drawstyle() == "steps-post"
    p = res.packets[res.packets["flow"] == "voice"]
    delay = line(axes["one-way delay (ms)"], "voice")
    assert list(delay.get_xdata()) == list(p["recv_s"]) and list(delay.get_ydata()) == list(p["delay_ms"])
    samples = res.tables["queue_samples"]
    # Only directions whose queue ever held a packet are drawn.
    busy = sorted(d for d, g in samples.groupby(samples["link_dir"].astype(str), observed=True)
                  if g["packets"].max() > 0)
    assert busy and [ln.get_label() for ln in axes["queue (packets)"].get_lines()] == busy
    assert len(busy) < samples["link_dir"].nunique()
    q = samples[samples["link_dir"] == "access:router->client"]
    queue = line(axes["queue (packets)"], "access:router->client")
    assert list(queue.get_xdata()) == list(q["time_s"]) and list(queue.get_ydata()) == list(q["packets"])
    sojourn = line(axes["queue sojourn time (ms)"], "access:router->client")
    assert np.allclose(sojourn.get_ydata(), q["bytes"].to_numpy(float) * 8 / 2e6 * 1e3)
    w = res.tables["tcp_series"]
    w = w[(w["var"] == "cwnd_bytes") & (w["flow"] == "web0")]
    cwnd = line(axes["TCP cwnd (kB)"], "web0")
    assert list(cwnd.get_ydata()) == list(w["value"] / 1e3) and list(cwnd.get_xdata()) == list(w["time_s"])


def test_plot_draws_a_changing_links_capacity_dashed_beside_what_it_carried(tmp_path):
    import mediasim
    from mediasim.reporting import run_plots

    sc = mediasim.Scenario("cap", duration_s=2.0)
    sc.node("a").node("b").link("a", "b", rate_bps=[[0, 2e6], [1, 1e6]], delay_ms=5)
    sc.flow("f", "cbr", src="a", dst="b", payload_bytes=972, rate_bps=1.5e6)
    res = mediasim.run(sc, packets=True, out=tmp_path / "run")
    fig = figures_saved_by(lambda: run_plots.plot_run(tmp_path / "run"))[0]
    ax = fig.axes[0]
    assert ax.get_ylabel() == "link (Mbit/s)"
    c = res.tables["link_capacity"]
    c = c[c["link_dir"].astype(str) == "a-b:a->b"]
    cap = next(ln for ln in ax.get_lines() if ln.get_label() == "a-b:a->b capacity")
    carried = next(ln for ln in ax.get_lines() if ln.get_label() == "a-b:a->b carried")
    assert cap.get_linestyle() == "--" and carried.get_linestyle() == "-" and cap.get_color() == carried.get_color()
    assert list(cap.get_ydata()) == list(c["capacity_bps"] / 1e6) and list(carried.get_xdata()) == list(c["time_s"])
    assert list(carried.get_ydata()) == list(c["carried_bps"] / 1e6) and cap.get_drawstyle() == "steps-pre"


def test_plot_says_what_to_turn_on(examples, tmp_path):
    run = tmp_path / "run"
    assert CliRunner().invoke(main, ["run", str(examples / "dumbbell.toml"), "--set", "measure={}",
                                     "--out", str(run)]).exit_code == 0
    r = CliRunner().invoke(main, ["plot", str(run)])
    assert r.exit_code == 2 and "--packets" in r.output
    r = CliRunner().invoke(main, ["plot", str(tmp_path)])
    assert r.exit_code == 2 and "not a run folder" in r.output


def test_throughput_has_every_bin_with_zero_where_nothing_arrived():
    import pandas as pd

    from mediasim.reporting.run_plots import throughput_series

    p = pd.DataFrame({"flow": ["a", "a", "b"], "recv_s": [0.5, 2.5, 1.2], "size_bytes": [125, 250, 125]})
    t = throughput_series(p, 1.0, end_s=4.0)
    a = t[t["flow"] == "a"]
    assert a["time_s"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert a["throughput_bps"].tolist() == [1000.0, 0.0, 2000.0, 0.0]
    assert t[t["flow"] == "b"]["throughput_bps"].tolist() == [0.0, 1000.0, 0.0, 0.0]


def test_plot_keeps_a_flows_colour_across_panels_and_shows_media_by_default(examples, tmp_path):
    from mediasim.reporting import run_plots

    run = tmp_path / "run"
    assert CliRunner().invoke(main, ["run", str(examples / "tcp_web_and_voice.toml"), "--packets", "--series",
                                     "--out", str(run)]).exit_code == 0
    fig = figures_saved_by(lambda: run_plots.plot_run(run))[0]
    colours = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            label = line.get_label()
            if label.startswith("_") or ":" in label:  # link directions are not flows
                continue
            assert "/" not in label, f"a derived flow is drawn by default: {label}"
            colours.setdefault(label, set()).add(line.get_color())
    assert {"voice", "web0", "bulk"} <= set(colours), colours
    assert all(len(c) == 1 for c in colours.values()), colours
    r = CliRunner().invoke(main, ["plot", str(run), "--flows", "voice", "--out", str(tmp_path / "v.png")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["plot", str(run), "--flows", "nope*"])
    assert r.exit_code == 2 and "no flow matches nope*" in r.output


def test_control_flows_are_left_out_by_default_and_media_flows_drawn():
    from mediasim.reporting.run_plots import shown

    for flow in ("voice", "video/alice/rtp", "m/data", "m/retx", "m/dr1/repair"):
        assert shown(flow, None), flow
    for flow in ("bulk/ack", "video/alice/rtcp", "video/bob/fb", "tfrc0/fb", "m/r1/hack"):
        assert not shown(flow, None), flow
    assert shown("video/bob/fb", ["*/fb"]) and not shown("voice", ["video*"])


def test_a_calls_run_plots_its_media_its_rates_pacer_and_frames(examples, tmp_path):
    from mediasim import Results
    from mediasim.reporting import run_plots

    run = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", str(examples / "calls.toml"), "--packets", "--series", "--out", str(run)])
    assert r.exit_code == 0, r.output
    res = Results.read_parquet(run)
    assert panels(res.tables) == ["throughput", "delay", "media_rate", "pacer", "frames"]
    fig = figures_saved_by(lambda: run_plots.plot_run(run))[0]
    axes = {ax.get_ylabel().split(" (")[0]: ax for ax in fig.axes}
    labels = {name: [line.get_label() for line in ax.get_lines()] for name, ax in axes.items()}
    assert labels["throughput"] == ["video/alice/rtp", "voice/alice/rtp"]
    assert not [lb for ls in labels.values() for lb in ls if lb.endswith(("/rtcp", "/fb"))], labels
    assert {"video/alice/rtp sent", "video/alice/rtp target", "video/alice/rtp codec"} <= set(labels["media rate"])
    end_s = res.meta["duration_s"]
    series = res.tables["media_series"]
    # A rate holds to the run's end; frames are drawn one point each.
    target = axes["media rate"].get_lines()[labels["media rate"].index("video/alice/rtp target")]
    assert target.get_xdata()[-1] == end_s
    frames = series[(series["var"] == "frame_bytes") & (series["flow"] == "video/alice/rtp")]
    drawn = axes["frame size"].get_lines()[labels["frame size"].index("video/alice/rtp")]
    assert len(drawn.get_xdata()) == len(frames) and drawn.get_xdata()[-1] < end_s
    assert labels["pacer queue"] == ["video/alice/rtp"]


def test_show_labels_each_node_with_its_address(examples, tmp_path):
    svg = tmp_path / "d.svg"
    assert CliRunner().invoke(main, ["show", str(examples / "dumbbell.toml"), "--out", str(svg)]).exit_code == 0
    assert "10.0.0.1" in svg.read_text()


def test_confidence_bounds_of_quantities_that_cannot_be_negative_stop_at_zero():
    import pandas as pd

    from mediasim.stats import summarize

    d = pd.DataFrame({"g": [1] * 3, "delay_mean_ms": [0.1, 0.1, 9.0], "shift": [-5.0, 0.0, 5.0]})
    t = summarize(d, ["g"], ["delay_mean_ms", "shift"])
    assert t["delay_mean_ms_ci_low"].iloc[0] == 0.0 and t["delay_mean_ms_mean"].iloc[0] > 0
    assert t["shift_ci_low"].iloc[0] < 0  # no unit: no bound


def test_avpf_session_labels_sort_as_numbers():
    from mediasim.experiments.avpf import _natural

    assert sorted(["128:10:6", "32:4:3", "64:5:3"], key=_natural) == ["32:4:3", "64:5:3", "128:10:6"]


def test_the_demo_axis_labels_the_buffers_plainly(tmp_path):
    from mediasim.experiments import demo

    ax = figures_saved_by(lambda: demo.run_demo(tmp_path / "demo", replications=2, workers=1))[0].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(b) for b in demo.BUFFERS]
    assert not [t.get_text() for t in ax.get_xticklabels(minor=True) if t.get_text()]


def test_the_rmtp_summary_turns_crowded_labels():
    import pandas as pd
    from matplotlib.figure import Figure

    from mediasim.experiments.rmtp_report import _bars

    ax = Figure().subplots()
    labels = [f"{i} (500 s)/{j}" for i in range(8) for j in (1, 2)]
    _bars(ax, labels, {"a": (pd.Series(range(16)).to_numpy(float), [[0.0] * 16, [1.0] * 16])})
    assert all(t.get_rotation() == 60 for t in ax.get_xticklabels())


def test_a_panels_legend_lists_twenty_entries_at_most_and_counts_the_rest(tmp_path):
    import json

    import mediasim
    from mediasim.reporting import run_plots

    assert run_plots.MAX_LEGEND == 20
    names = [f"f{i:02d}" for i in range(20)]
    for n, said in ((20, names), (21, names[:19] + ["... and 2 more"])):
        flows = [{"name": f"f{i:02d}", "type": "cbr", "src": "a", "dst": "b", "payload_bytes": 100,
                  "interval_ms": 100, "start_s": i / 1000} for i in range(n)]
        sc = tmp_path / f"s{n}.json"
        sc.write_text(json.dumps({"duration_s": 1, "nodes": [{"name": "a"}, {"name": "b"}],
                                  "links": [{"a": "a", "b": "b", "rate_bps": 1e7, "delay_ms": 1}], "flows": flows}))
        mediasim.run(sc, packets=True, out=tmp_path / f"r{n}")
        fig = figures_saved_by(lambda: run_plots.plot_run(tmp_path / f"r{n}"))[0]
        for ax in fig.axes:  # throughput and delay
            assert [t.get_text() for t in ax.get_legend().get_texts()] == said


def test_throughput_bins_stop_at_their_limit_before_any_grid_is_made():
    import pandas as pd

    from mediasim.reporting.run_plots import MAX_BINS, throughput_series

    assert MAX_BINS == 100_000
    p = pd.DataFrame({"flow": ["a"], "recv_s": [99.9], "size_bytes": [100]})
    assert len(throughput_series(p, 1e-3, end_s=100.0)) == 100_000
    with pytest.raises(ValueError) as e:
        throughput_series(p, 0.999e-3, end_s=100.0)
    assert str(e.value) == ("a throughput bin of 0.000999 s makes 1e+05 bins over 100 s; "
                            "at most 100,000 (bins of at least 0.001 s)")
    with pytest.raises(ValueError) as e:  # no end: the span is the last arrival's time
        throughput_series(p, 1e-300)
    assert str(e.value) == ("a throughput bin of 1e-300 s makes 9.99e+301 bins over 99.9 s; "
                            "at most 100,000 (bins of at least 0.000999 s)")


def test_throughput_bins_of_any_width_and_the_default_end():
    import pandas as pd

    from mediasim.reporting.run_plots import throughput_series

    p = pd.DataFrame({"flow": ["a", "a", "a"], "recv_s": [0.1, 0.6, 3.0], "size_bytes": [100, 50, 25]})
    half = throughput_series(p, 0.5, end_s=1.5)
    assert half["time_s"].tolist() == [0.0, 0.5, 1.0] and half.index.tolist() == [0, 1, 2]
    assert half["throughput_bps"].tolist() == [1600.0, 800.0, 0.0]  # bits / 0.5 s; the 3.0 s arrival is past the end
    wide = throughput_series(p, 2.0)  # no end: to the bin of the last arrival, which opens the bin at 2 s
    assert wide["time_s"].tolist() == [0.0, 2.0] and wide["throughput_bps"].tolist() == [600.0, 100.0]
    ints = throughput_series(p.astype({"size_bytes": "int16"}), 2.0)  # sizes summed past int16's range
    assert ints["throughput_bps"].dtype == float and ints["time_s"].dtype == float
    none = throughput_series(p.iloc[:0], 1.0)
    assert list(none.columns) == ["flow", "time_s", "throughput_bps"] and none.empty
    assert none["time_s"].dtype == float and none["throughput_bps"].dtype == float
    assert throughput_series(p, 1.0, end_s=0)["time_s"].tolist() == [0.0, 3.0]  # no grid: the bins with arrivals
    assert throughput_series(p, 0.5, end_s=0.75)["time_s"].tolist() == [0.0, 0.5]  # an end inside a bin
    gap = pd.DataFrame({"flow": ["b", "a", "a"], "recv_s": [0.2, 0.1, 2.5], "size_bytes": [10, 100, 100]})
    both = throughput_series(gap, 1.0)  # to the last arrival's bin, the empty one between at 0
    assert both[["flow", "time_s", "throughput_bps"]].values.tolist() == [
        ["a", 0.0, 800.0], ["a", 1.0, 0.0], ["a", 2.0, 800.0], ["b", 0.0, 80.0], ["b", 1.0, 0.0], ["b", 2.0, 0.0]]
    assert both.index.tolist() == list(range(6))  # one table, numbered through


def _categorical(values: list[str], extra: str = "unused") -> "object":
    """A column as the engine gives it: categories for every name of the
    run, some with no row here."""
    import pandas as pd

    return pd.Categorical(values, categories=sorted({*values, extra}))


def _panel(name: str, tables: dict, flows=None, end_s: float = 10.0, bin_s: float = 1.0, names=("p", "v", "w")):
    from matplotlib.figure import Figure

    from mediasim.reporting import run_plots

    ax = Figure().subplots()
    ctx = run_plots._Ctx(tables, bin_s, end_s, flows, run_plots.flow_colours(list(names)))
    run_plots._PANELS[name](ax, ctx)
    return ax, ctx


def _lines(ax) -> dict:
    return {ln.get_label(): ln for ln in ax.get_lines()}


def test_the_media_panels_draw_rates_pacer_and_frames_in_kilo_units_in_each_flows_colour():
    import pandas as pd

    rows = [("v", "send_bps", 0.0, 1e6), ("v", "send_bps", 1.0, 2e6), ("v", "target_bps", 0.0, 1.5e6),
            ("v", "codec_bps", 0.5, 1.2e6), ("v", "pacer_queue_bytes", 0.0, 3000.0),
            ("v", "pacer_queue_bytes", 2.0, 0.0), ("v", "frame_bytes", 0.1, 5000.0), ("v", "frame_bytes", 0.2, 6000.0),
            ("w", "send_bps", 0.0, 5e5), ("w", "send_bps", 10.0, 6e5)]
    media = pd.DataFrame(rows, columns=["flow", "var", "time_s", "value"])
    media["flow"] = _categorical(list(media["flow"]))
    paced = pd.DataFrame({"flow": _categorical(["p", "p"]), "var": ["rate_bps"] * 2, "time_s": [0.0, 3.0],
                          "value": [8e5, 4e5]})
    tables = {"media_series": media, "paced_series": paced}
    ax, ctx = _panel("media_rate", tables)
    lines = _lines(ax)
    assert list(lines) == ["v sent", "w sent", "v target", "v codec", "p target"]
    v = lines["v sent"]
    assert (list(v.get_xdata()), list(v.get_ydata())) == ([0, 1, 10], [1000, 2000, 2000])  # held to the end
    assert (list(lines["w sent"].get_xdata()), list(lines["w sent"].get_ydata())) == ([0, 10], [500, 600])
    assert [lines[k].get_linestyle() for k in ("v sent", "v target", "v codec", "p target")] == ["-", "--", ":", "--"]
    p = lines["p target"]
    assert (list(p.get_xdata()), list(p.get_ydata())) == ([0, 3, 10], [800, 400, 400])
    assert all(ln.get_drawstyle() == "steps-post" for ln in lines.values())
    assert {k: ln.get_color() for k, ln in lines.items()} == {
        "v sent": ctx.colour("v"), "w sent": ctx.colour("w"), "v target": ctx.colour("v"),
        "v codec": ctx.colour("v"), "p target": ctx.colour("p")}
    assert ax.get_ylabel() == "media rate (kbit/s)" and ax.get_ylim()[0] == 0
    assert list(_lines(_panel("media_rate", tables, flows=["w"])[0])) == ["w sent"]
    ax, ctx = _panel("pacer", tables)
    pacer = _lines(ax)["v"]
    assert (list(pacer.get_xdata()), list(pacer.get_ydata())) == ([0, 2, 10], [3, 0, 0])
    assert pacer.get_drawstyle() == "steps-post" and pacer.get_color() == ctx.colour("v")
    assert ax.get_ylabel() == "pacer queue (kB)" and ax.get_ylim()[0] == 0
    ax, ctx = _panel("frames", tables)
    frames = _lines(ax)["v"]
    assert (list(frames.get_xdata()), list(frames.get_ydata())) == ([0.1, 0.2], [5, 6])  # at capture, not held
    assert frames.get_marker() == "." and frames.get_linestyle() == "None" and frames.get_color() == ctx.colour("v")
    assert ax.get_ylabel() == "frame size (kB)" and ax.get_ylim()[0] == 0
    # A series whose last point is the run's end gets no point more; no table, or an empty one, draws nothing.
    assert list(_lines(_panel("media_rate", tables, end_s=1.0)[0])["v sent"].get_xdata()) == [0, 1]
    for empty in ({}, {"media_series": media.iloc[:0], "paced_series": paced.iloc[:0]}):
        assert not _lines(_panel("media_rate", empty)[0])


def test_dense_panels_draw_at_most_about_five_thousand_points_a_flow():
    import numpy as np
    import pandas as pd

    n = 12_000  # every second point: 6,000
    packets = pd.DataFrame({"flow": _categorical(["v"] * n), "recv_s": np.arange(n) / 1000.0,
                            "delay_ms": np.arange(n) % 7 + 20.0, "size_bytes": [100] * n})
    ax, _ = _panel("delay", {"packets": packets}, end_s=12.0)
    delay = _lines(ax)["v"]
    assert list(delay.get_xdata()) == list(packets["recv_s"][::2]) and len(delay.get_ydata()) == 6000
    assert delay.get_marker() == "." and ax.get_ylabel() == "one-way delay (ms)" and ax.get_ylim()[0] == 0
    media = pd.DataFrame({"flow": _categorical(["v"] * n), "var": ["frame_bytes"] * n,
                          "time_s": np.arange(n) / 30.0, "value": [4000.0] * n})
    frames = _lines(_panel("frames", {"media_series": media})[0])["v"]
    assert list(frames.get_xdata()) == list(media["time_s"][::2])
    few = packets.iloc[:4999]
    assert len(_lines(_panel("delay", {"packets": few})[0])["v"].get_xdata()) == 4999


def test_network_panels_follow_their_tables_and_the_flows_asked_for():
    import pandas as pd

    packets = pd.DataFrame({"flow": _categorical(["w", "v", "v"]), "recv_s": [0.5, 0.2, 1.5],
                            "delay_ms": [30.0, 20.0, 25.0], "size_bytes": [125, 250, 125]})
    ax, ctx = _panel("throughput", {"packets": packets}, end_s=3.0)
    v = _lines(ax)["v"]
    # Bins to the run's end, each drawn to its own end: the last value once more at 3 s.
    assert (list(v.get_xdata()), list(v.get_ydata())) == ([0, 1, 2, 3], [2, 1, 0, 0])
    assert v.get_drawstyle() == "steps-post" and v.get_color() == ctx.colour("v")
    assert ax.get_ylabel() == "throughput (kbit/s, 1 s bins)" and ax.get_ylim()[0] == 0
    assert list(_lines(_panel("throughput", {"packets": packets}, flows=["v"])[0])) == ["v"]
    assert list(_lines(_panel("delay", {"packets": packets}, flows=["w"])[0])) == ["w"]
    tcp = pd.DataFrame({"flow": _categorical(["a", "b", "b"]), "var": ["cwnd_bytes", "cwnd_bytes", "ssthresh"],
                        "time_s": [0.0, 1.0, 1.0], "value": [14600.0, 2920.0, 1e6]})
    ax, _ = _panel("cwnd", {"tcp_series": tcp}, flows=["b"])
    b = _lines(ax)["b"]  # a flow left out before it does not end the drawing
    assert list(_lines(ax)) == ["b"] and list(b.get_ydata()) == [2.92] and b.get_drawstyle() == "steps-post"
    assert ax.get_ylabel() == "TCP cwnd (kB)" and ax.get_ylim()[0] == 0
    q = pd.DataFrame({"link_dir": _categorical(["x", "x", "y", "y"]), "time_s": [0.0, 1.0, 0.0, 1.0],
                      "packets": [0, 1, 0, 0], "bytes": [0, 1500, 0, 0]})
    links = pd.DataFrame({"direction": ["x", "y"], "rate_bps": [2e6, 1e6]})
    ax, _ = _panel("queues", {"queue_samples": q, "links": links})
    assert list(_lines(ax)) == ["x"] and _lines(ax)["x"].get_drawstyle() == "steps-post"  # a queue of one is busy
    ax, _ = _panel("sojourn", {"queue_samples": q, "links": links})
    assert list(_lines(ax)["x"].get_ydata()) == [0, 6.0] and _lines(ax)["x"].get_drawstyle() == "steps-post"
    cap = pd.DataFrame({"link_dir": _categorical(["x", "x"]), "time_s": [0.5, 1.0],
                        "capacity_bps": [2e6, 1e6], "carried_bps": [1.5e6, 1e6]})
    ax, _ = _panel("capacity", {"link_capacity": cap})
    assert list(_lines(ax)) == ["x capacity", "x carried"] and ax.get_ylim()[0] == 0
    assert list(_lines(ax)["x capacity"].get_ydata()) == [2, 1]
    assert list(_lines(ax)["x carried"].get_xdata()) == [0.5, 1]


def test_panels_follow_what_the_tables_hold():
    import pandas as pd

    from mediasim.reporting.run_plots import panels

    q = pd.DataFrame({"link_dir": ["x"], "time_s": [0.0], "packets": [1], "bytes": [1500]})
    assert panels({"queue_samples": q}) == ["queues", "sojourn"]
    assert panels({"queue_samples": q.assign(packets=0)}) == []  # never a packet queued
    assert panels({"queue_samples": q.iloc[:0]}) == []
    tcp = pd.DataFrame({"flow": ["a"], "var": ["ssthresh"], "time_s": [0.0], "value": [1.0]})
    assert panels({"tcp_series": tcp}) == [] and panels({"tcp_series": tcp.assign(var="cwnd_bytes")}) == ["cwnd"]
    paced = pd.DataFrame({"flow": ["p"], "var": ["rate_bps"], "time_s": [0.0], "value": [1e6]})
    assert panels({"paced_series": paced}) == ["media_rate"]
    media = pd.DataFrame({"flow": ["v"], "var": ["pacer_queue_bytes"], "time_s": [0.0], "value": [1.0]})
    assert panels({"media_series": media}) == ["pacer"]
    assert panels({"media_series": media.assign(var="frame_bytes")}) == ["frames"]
    assert panels({"media_series": media.assign(var="codec_bps")}) == ["media_rate"]


def test_flow_colours_are_distinct_up_to_twenty_flows():
    from mediasim.reporting.run_plots import flow_colours

    ten = flow_colours([f"f{i}" for i in range(10)])
    assert len(set(ten.values())) == 10 and ten["f0"] == (0.12156862745098039, 0.4666666666666667, 0.7058823529411765,
                                                           1.0)  # tab10's first
    eleven = flow_colours([f"f{i}" for i in range(11)])
    assert len(set(eleven.values())) == 11 and eleven["f1"] != ten["f1"]  # tab20 past ten
    many = flow_colours([f"f{i}" for i in range(25)])
    assert many["f20"] == many["f0"] and len(set(many.values())) == 20  # round again past twenty


def test_plot_draws_the_flows_asked_for_up_to_where_the_run_ended_into_the_file_named(examples, tmp_path):
    import warnings

    import mediasim
    from mediasim.reporting import run_plots

    run = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mediasim.RunStoppedEarly)
        res = mediasim.run(mediasim.load_scenario(examples / "tcp_web_and_voice.toml"), packets=True, series=True,
                           out=run, max_events=5_000)
    end_s = res.meta["end_ns"] / 1e9
    assert 0 < end_s < 20
    fig = figures_saved_by(lambda: run_plots.plot_run(run, out=tmp_path / "v.png", flows=["voice"]))[0]
    assert (tmp_path / "v.png").is_file() and not (run / "plots.png").exists()
    drawn = {ln.get_label() for ax in fig.axes for ln in ax.get_lines()}
    assert {d for d in drawn if ":" not in d} == {"voice"}  # (the queues are link directions')
    assert all(ax.get_xlim() == (0, end_s) for ax in fig.axes)
    assert fig.axes[0].get_ylabel() == "throughput (kbit/s, 1 s bins)"  # 1 s bins by default
    with pytest.raises(ValueError) as e:
        run_plots.plot_run(run, flows=["nope", "none*"])
    flows = ", ".join(res.meta["codes"]["flow"])
    assert str(e.value) == f"no flow matches nope, none* (the run's flows: {flows})"
