"""Links that change, through the Python package: trace files and the
project's generated traces, schedules given in TOML, the capacity table,
bad input named at its field, run keys covering a trace's contents, and
the pictures (docs/models/links.md). The engine's own analytic checks are
in crates/engine/tests/changing_links.rs."""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import mediasim
from conftest import assert_balanced, line
from mediasim import traces
from mediasim.campaign.keys import run_key
from mediasim.cli import main
from mediasim.errors import ScenarioError


def test_a_rate_schedule_from_python_is_followed_and_sampled():
    sc = line(1, rate_bps=[[0, 2e6], [2, 1e6]], delay_ms=5, duration_s=4.0,
              queue={"type": "droptail", "limit_packets": 5000})
    sc.flow("f", "cbr", src="n0", dst="n1", payload_bytes=972, rate_bps=3e6)
    res = mediasim.run(sc)
    assert_balanced(res)
    c = res.link_capacity
    fwd = c[c["link_dir"].astype(str) == "n0-n1:n0->n1"]
    assert len(fwd) == 40  # every 100 ms by default
    rate = fwd["capacity_bps"].to_numpy()
    assert np.allclose(rate[:20], 2e6) and np.allclose(rate[20:], 1e6)
    carried = fwd["carried_bytes"].to_numpy() * 8 / 0.1
    assert np.all(np.abs(carried - rate) <= 8000 / 0.1)  # within one 1000-byte packet
    # The links table: the mean capacity offered and the share carried.
    links = res.links.set_index("direction")
    assert links.loc["n0-n1:n0->n1", "rate_bps"] == pytest.approx(1.5e6)
    assert links.loc["n0-n1:n0->n1", "utilization"] > 0.99


def test_fixed_links_are_sampled_only_when_asked():
    sc = line(1, rate_bps=1e6, delay_ms=5, duration_s=1.0)
    sc.flow("f", "cbr", src="n0", dst="n1", payload_bytes=972, rate_bps=0.5e6)
    assert len(mediasim.run(sc).link_capacity) == 0
    sc.measure(capacity_interval_ms=250)
    c = mediasim.run(sc).link_capacity
    assert len(c) == 8  # two directions, four intervals
    assert np.allclose(c["capacity_bps"], 1e6)


def test_a_trace_file_beside_a_toml_scenario(tmp_path: Path):
    traces.write(tmp_path / "up.trace", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])  # 12.032 Mbit/s
    (tmp_path / "s.toml").write_text("""
name = "trace"
duration_s = 1.0
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
a = "a"
b = "b"
delay_ms = 0
queue = {type = "droptail", limit_packets = 10000}
trace = {file = "up.trace"}
[[flows]]
name = "f"
type = "cbr"
src = "a"
dst = "b"
payload_bytes = 1476
interval_ms = 0.5
""")
    res = mediasim.run(tmp_path / "s.toml", packets=True)
    assert_balanced(res)
    # Opportunities at 1, 2, ..., 1000 ms (relative to the scenario's
    # folder), one 1504-byte packet each.
    recv = res.packets["recv_ns"].to_numpy()
    assert list(recv[:3]) == [1_000_000, 2_000_000, 3_000_000]
    assert len(recv) == 1000


def test_the_run_key_covers_a_trace_files_contents(tmp_path: Path):
    f = tmp_path / "t.trace"
    traces.write(f, [5, 10])
    sc = line(1, rate_bps=None, delay_ms=1, trace={"file": str(f)})
    k1 = run_key(sc.to_dict(), 1, 0, "b")
    traces.write(f, [5, 10, 10])
    k2 = run_key(sc.to_dict(), 1, 0, "b")
    assert k1 != k2
    # What the key was computed from: the file's opportunities.
    assert traces.resolve(sc.to_dict())["links"][0]["trace"]["opportunities_ms"] == [5, 10, 10]


@pytest.mark.parametrize("text, fragment", [
    ("", "empty trace"),
    ("5\n3\n", "line 2: the trace's times go back"),
    ("5\n\n7\n", "line 2: an empty line"),
    ("5\nten\n", "line 2: 'ten' is not a whole number"),
    ("0\n0\n", "must last a positive time"),
    ("\u00b2\n", "line 1: '\u00b2' is not a whole number"),
    ("1\n100000000001\n", "line 2: 100000000001 ms is beyond the longest run"),
    ("9" * 5000 + "\n", "line 1: " + "9" * 30 + " ms is beyond the longest run"),
])
def test_a_bad_trace_file_is_named_with_its_line(tmp_path: Path, text, fragment):
    f = tmp_path / "bad.trace"
    f.write_text(text)
    sc = line(1, rate_bps=None, delay_ms=1, trace={"file": str(f)})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert e.value.errors[0][0] == "links[0].trace.file"
    assert fragment in e.value.errors[0][1]


def test_the_longest_trace_is_the_engines_longest_run():
    for last, ok in ((traces.MAX_TRACE_MS, True), (traces.MAX_TRACE_MS + 1, False)):
        sc = line(1, rate_bps=None, delay_ms=1, trace={"opportunities_ms": [1, last]})
        if ok:
            sc.validate()
        else:
            with pytest.raises(ScenarioError, match="beyond the longest run"):
                sc.validate()


def test_a_missing_trace_or_builtin_is_named():
    sc = line(1, rate_bps=None, delay_ms=1, ab={"trace": {"file": "/no/such.trace"}}, ba={"rate_bps": 1e6})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert e.value.errors == [("links[0].ab.trace.file", "no such trace file: /no/such.trace")]
    sc = line(1, rate_bps=None, delay_ms=1, trace={"builtin": "lte-moon"})
    with pytest.raises(ScenarioError) as e:
        mediasim.run(sc)
    assert e.value.errors[0][0] == "links[0].trace.builtin" and "lte-walk" in e.value.errors[0][1]


def test_a_bad_schedule_is_named_by_the_engine():
    sc = line(1, rate_bps=[[0, 2e6], [5, 1e6], [3, 1e6]], delay_ms=1)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    assert ("links[0].rate_bps[2][0]" in [p for p, _ in e.value.errors])


def test_generated_traces_have_their_models_statistics():
    # Constant: N = round(duration x c) opportunities, the k-th at ceil(k / c).
    ms = traces.constant(2e6, 1000)
    assert len(ms) == 166 and ms[-1] == 999
    assert traces.mean_rate_bps(ms) == pytest.approx(2e6, rel=1e-3)
    assert traces.constant(12.032e6, 1000) == list(range(1, 1001))
    # Markov: the reflected birth-death chain spends half as long at each
    # end: on two levels the mean is their midpoint.
    ms = traces.markov([1e6, 3e6], dwell_s=0.05, duration_s=200, seed=9)
    assert traces.mean_rate_bps(ms) == pytest.approx(2e6, rel=0.03)
    assert ms == traces.markov([1e6, 3e6], dwell_s=0.05, duration_s=200, seed=9)
    assert ms != traces.markov([1e6, 3e6], dwell_s=0.05, duration_s=200, seed=10)
    # A millisecond's count is floor(c) or floor(c) + 1.
    per_ms = np.bincount(ms)[1:]
    assert set(per_ms) <= {0, 1, 2}
    # Five levels: (L0/2 + L1 + L2 + L3 + L4/2) / 4.
    levels = [1e6, 2e6, 4e6, 8e6, 12e6]
    ms = traces.markov(levels, dwell_s=0.05, duration_s=400, seed=1)
    assert traces.mean_rate_bps(ms) == pytest.approx(5.125e6, rel=0.04)


def test_every_builtin_trace_is_valid_and_as_described():
    for name, b in traces.BUILTIN.items():
        ms = traces.builtin(name)
        assert ms == sorted(ms) and ms[-1] == pytest.approx(b.duration_s * 1000, abs=1)
        rate = traces.mean_rate_bps(ms)
        assert min(b.levels_bps) * 0.99 <= rate <= max(b.levels_bps) * 1.01, name


def test_the_trace_command(tmp_path: Path):
    r = CliRunner()
    out = r.invoke(main, ["trace", "list"])
    assert out.exit_code == 0 and "lte-walk" in out.output
    f = tmp_path / "w.trace"
    out = r.invoke(main, ["trace", "write", "constant-2mbps", str(f)])
    assert out.exit_code == 0 and traces.read(f) == traces.builtin("constant-2mbps")
    out = r.invoke(main, ["trace", "stats", str(f)])
    assert out.exit_code == 0 and "166 opportunities" in out.output and "mean 1.999 Mbit/s" in out.output
    # A sparse trace spanning the longest run: counted from its
    # opportunities, not second by second.
    f2 = traces.write(tmp_path / "sparse.trace", [1, 2500, traces.MAX_TRACE_MS])
    out = r.invoke(main, ["trace", "stats", str(f2)])
    assert out.exit_code == 0 and "1e+08 s, 3 opportunities" in out.output
    assert "per 1 s from 0.000 to 0.012 Mbit/s" in out.output
    out = r.invoke(main, ["trace", "stats", "nope"])
    assert (out.exit_code, out.output) == (2, "error: nope: no such trace file, nor a builtin trace (builtin: "
                                              "constant-12mbps, constant-2mbps, lte-2mbps, lte-drive, lte-edge, "
                                              "lte-walk)\n")
    # A file that is not a trace: its problem, said of the file alone.
    (tmp_path / "junk.trace").write_text("10\njunk\n")
    out = r.invoke(main, ["trace", "stats", str(tmp_path / "junk.trace")])
    assert out.exit_code == 2 and out.output == (
        f"error: {tmp_path / 'junk.trace'}, line 2: 'junk' is not a whole number of milliseconds\n"), out.output
    # Writing: a builtin's name, into a folder that exists; each mistake named.
    out = r.invoke(main, ["trace", "write", str(f), str(tmp_path / "x")])
    assert out.exit_code == 2 and "no builtin trace of that name" in out.output
    out = r.invoke(main, ["trace", "write", "lte-walk", str(tmp_path / "no" / "x.trace")])
    assert out.exit_code == 2 and "cannot write the trace (No such file or directory)" in out.output
    assert "Traceback" not in out.output


def test_an_outage_shows_in_the_tables_and_the_books_balance():
    sc = line(1, rate_bps=1e6, delay_ms=20, duration_s=3.0,
              outages={"down_s": [[1.0, 2.0]], "queued": "drop", "wire": "lose"})
    sc.flow("f", "cbr", src="n0", dst="n1", payload_bytes=972, interval_ms=10)
    res = mediasim.run(sc)
    assert_balanced(res)
    f = res.flows.iloc[0]
    # 100 packets sent while down, and those on the wire at 1.0 s (two:
    # one 8 ms into 20 ms of propagation, one just left) plus none under way.
    assert 100 <= f["dropped_link_down"] <= 103
    assert set(res.drops["reason"]) == {"link_down"}
    c = res.link_capacity
    fwd = c[c["link_dir"].astype(str) == "n0-n1:n0->n1"]
    down = fwd[(fwd["time_s"] > 1.0 + 1e-9) & (fwd["time_s"] <= 2.0 + 1e-9)]
    assert len(down) == 10 and (down["capacity_bps"] == 0).all() and (down["carried_bytes"] == 0).all()


def test_show_and_plot_draw_a_changing_link(tmp_path: Path):
    from mediasim.reporting.run_plots import panels, plot_run
    from mediasim.reporting.topology import capacity_curves, link_label

    sc = line(1, rate_bps=[[0, 2e6], [1, 1e6]], delay_ms=5, duration_s=2.0,
              ba={"trace": {"builtin": "constant-2mbps"}}, outages={"down_s": [[1.5, 1.6]]})
    sc.flow("f", "cbr", src="n0", dst="n1", payload_bytes=972, rate_bps=1.5e6)
    label = link_label(sc.to_dict()["links"][0])
    assert label.startswith("2 Mbit/s > 1 Mbit/s, 5 ms (outages)") and "trace constant-2mbps" in label
    curves = dict((n, (t, r)) for n, t, r in capacity_curves(sc.to_dict()))
    t, r = curves["n0->n1"]
    assert r[0] == 2 and r[12] == 1 and r[15] == 0 and r[17] == 1
    t, r = curves["n1->n0"]
    assert np.mean(r[:10]) == pytest.approx(2.0, rel=0.02)
    res = mediasim.run(sc, out=tmp_path / "run")
    assert "capacity" in panels(res.tables)
    assert plot_run(tmp_path / "run").exists()
