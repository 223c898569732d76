"""Media-scaling flows (MM_APP, MPEG_APP) and the media-scaling study: rates
by hand, the control's climb on a free path and its retreat on a congested
one, trace files, errors, and the study's expected shapes in quick mode."""

import pytest

import mediasim
from mediasim import ScenarioError, media
from mediasim.experiments import media_scaling as ms
from conftest import assert_balanced, line


def test_the_studys_mpeg_trace_gives_the_rates_its_arithmetic_does():
    # Per 0.3 s GOP of IBBPBBPBB (I 11000, P 8000, B 2000 bytes): scale 0
    # sends I (11000 B), 1 I+P, 2 I+2P, 3 I+2P+3B, 4 all (39000 B).
    want = [11000, 19000, 27000, 33000, 39000]
    rows = media.scale_rates(app="mpeg")
    for r, b in zip(rows, want):
        assert r["payload_kbps"] == pytest.approx(b * 8 / 0.3 / 1e3, rel=1e-6)
    # On the wire: 28 header bytes per packet of at most 1500 bytes (an I
    # frame is 8 packets, a P 6, a B 2): scale 4 adds (8 + 2x6 + 6x2) x 28 B.
    assert rows[4]["wire_kbps"] == pytest.approx((39000 + 32 * 28) * 8 / 0.3 / 1e3, rel=1e-6)
    mm = media.scale_rates(app="mm")
    assert [r["wire_kbps"] for r in mm] == pytest.approx([300, 500, 700, 900, 1100])
    # Fields that are wrong are named as a scenario's flow's would be.
    for fields, said in [({"app": "mm", "rates_bps": [1e5, "x"]}, ("flow.rates_bps[1]", 'must be a number (got "x")')),
                         ({"app": "mpeg", "gop": "I: P"},
                          ("flow.gop", 'must be I, P and B frames starting with I (got "I: P")')),
                         ({"app": "mm", "rates_bps": [1e5]},
                          ("flow.rates_bps", "give one rate per scale 0-4 (got 1)"))]:
        with pytest.raises(ScenarioError) as e:
            media.scale_rates(**fields)
        assert e.value.errors == [said]


def test_trace_files_round_trip_and_bad_lines_name_the_line(tmp_path):
    frames = media.study_trace("IBBPBBPBBPBB", gops=2)
    path = media.write_trace(tmp_path / "t.txt", frames)
    assert media.read_trace(path) == frames
    assert path.read_text().splitlines()[0] == (
        "# mediasim MPEG frame trace: <type> <payload bytes>, one frame per line")  # the format, skipped on reading
    assert media.scale_rates(app="mpeg", frames=frames) == media.scale_rates(app="mpeg", gop="IBBPBBPBBPBB")
    assert media.study_trace() == [[t, media.STUDY_SIZES[t]] for t in "IBBPBBPBB"]  # one GOP of the study's
    bad = tmp_path / "bad.txt"
    long = "P 12 " + "x" * 70
    for text, said in [("# trace\nI 11000 # a key frame # of 11 kB\nX 12\n", (f"{bad}:3", "expected '<I|P|B> <bytes>', "
                                                                               "got 'X 12'")),
                       (f"I 11000\n{long}\n", (f"{bad}:2", f"expected '<I|P|B> <bytes>', got {long[:60]!r}")),
                       ("# only a comment\n\n", (str(bad), "the trace holds no frames")),
                       ("B 2000\nI 11000\n", (f"{bad}:1", "the first frame must be an I frame"))]:
        bad.write_text(text)
        with pytest.raises(ScenarioError) as e:
            media.read_trace(bad)
        assert e.value.errors == [said]
    # Other scripts' digits and thousands of digits, which int() refuses.
    for size in ("\u00b2", "9" * 5000):
        bad.write_text(f"I {size}\n")
        with pytest.raises(ScenarioError) as e:
            media.read_trace(bad)
        assert e.value.errors[0][0] == f"{bad}:1"
    bad.write_bytes(b"I 11000\nP \xe9\n")
    for path, said in ((bad, "not UTF-8 text (byte 10: b'\\xe9')"), (tmp_path / "gone", "no such trace file"),
                       (tmp_path, "cannot read the trace: Is a directory")):
        with pytest.raises(ScenarioError) as e:
            media.read_trace(path)
        assert e.value.errors == [(str(path), said)]


def one_flow(rate_bps: float, duration_s: float = 10.0, **fields):
    sc = line(1, rate_bps=rate_bps, delay_ms=20, duration_s=duration_s)
    sc.flow("m", "media_scaling", src="n0", dst="n1", **fields)
    res = mediasim.run(sc, seed=1)
    assert_balanced(res)
    return res


def test_on_a_free_path_the_control_climbs_one_scale_per_control_rtt_and_stays():
    res = one_flow(10e6, app="mm")
    row = res.media_scaling.set_index("flow").loc["m"]
    assert (row["final_scale"], row["increases"], row["decreases"]) == (4, 4, 0)
    # RTT on the path: 2 x 20 ms plus the 1500-byte packet's 1.2 ms and the
    # 40-byte request's; the control RTT is that (above MM's 40 ms).
    assert row["srtt_ms"] == pytest.approx(41.2, abs=0.1)
    ser = res.media_scaling_series
    up = ser[(ser["flow"] == "m") & (ser["var"] == "requested_scale")]["time_s"].diff().dropna()
    # The first step waits the longest interval (40 ms from the start; no
    # RTT sample yet): packet 1, sent at 40 ms, arrives at 61.2 ms. Later
    # steps come with the first packet at least a control RTT (40 ms, then
    # 41.2 once measured) after the last, at most one packet interval on.
    assert up.iloc[0] == pytest.approx(0.0612, abs=1e-6)
    assert (up.iloc[1:] >= 0.040 - 1e-9).all() and (up.iloc[1:] <= 0.0412 + 0.040).all(), up
    pk = res.packets[(res.packets["flow"] == "m") & (res.packets["recv_s"] >= 2)]
    assert pk["size_bytes"].sum() * 8 / 8 == pytest.approx(1.1e6, rel=0.01)


def test_mpeg_at_scale_4_sends_its_trace_rate():
    res = one_flow(10e6, app="mpeg", cc={"type": "scale", "initial_level": 4})
    row = res.media_scaling.set_index("flow").loc["m"]
    assert row["decreases"] == 0 and row["frames_skipped"] == 0
    pk = res.packets[(res.packets["flow"] == "m") & (res.packets["recv_s"] >= 0.9) & (res.packets["recv_s"] < 9.9)]
    assert pk["size_bytes"].sum() * 8 / 9.0 == pytest.approx(media.scale_rates(app="mpeg")[4]["wire_kbps"] * 1e3,
                                                             rel=0.01)


def test_on_a_congested_path_the_control_backs_off_below_the_capacity():
    # 600 kbit/s with a 10-packet drop-tail buffer: scales 2-4 (700-1100
    # kbit/s) overflow it, so the control halves and climbs in turn.
    sc = line(1, rate_bps=600e3, delay_ms=20, duration_s=60, queue={"type": "droptail", "limit_packets": 10})
    sc.flow("m", "media_scaling", src="n0", dst="n1", app="mm")
    res = mediasim.run(sc, seed=1)
    row = res.media_scaling.set_index("flow").loc["m"]
    assert row["decreases"] >= 10 and row["missing_packets"] > 0
    assert 1.0 <= row["mean_scale"] <= 2.5, row["mean_scale"]
    util = res.links.set_index("direction").loc["n0-n1:n0->n1", "utilization"]
    assert 0.7 < util <= 1.0


@pytest.mark.parametrize("fields,path,fragment", [
    ({"app": "mm", "rates_bps": [1, 2]}, "flows[0].rates_bps", "one rate per scale"),
    ({"app": "mm", "gop": "IBB"}, "flows[0].gop", 'not used by app = "mm"'),
    ({"app": "mpeg", "packet_bytes": 1000}, "flows[0].packet_bytes", 'not used by app = "mpeg"'),
    ({"app": "mpeg", "gop": "BBI"}, "flows[0].gop", "starting with I"),
    ({"app": "mpeg", "frames": [["I", 10], ["Q", 5]]}, "flows[0].frames[1]", "frame type"),
    ({"app": "mm", "cc": {"type": "scale", "initial_level": 5}}, "flows[0].cc.initial_level", "0..=4"),
    ({"app": "mm", "cc": {"type": "scale", "timeout_factor": 0.5}}, "flows[0].cc.timeout_factor", "at least 1"),
    ({"app": "mm", "initial_scale": 2}, "flows[0].initial_scale", "unknown field"),
    ({"app": "mm", "feedback_bytes": 10}, "flows[0].feedback_bytes", "28..=65535"),
    ({"app": "video"}, "flows[0].app", "must be one of mm, mpeg (got video)"),
])
def test_media_scaling_errors_name_the_field(fields, path, fragment):
    sc = line(1, rate_bps=1e6, delay_ms=1)
    sc.flow("m", "media_scaling", src="n0", dst="n1", **fields)
    with pytest.raises(ScenarioError) as e:
        sc.validate()
    assert any(p == path and fragment in m for p, m in e.value.errors), e.value.errors


@pytest.fixture(scope="module")
def quick_study(tmp_path_factory):
    out = tmp_path_factory.mktemp("media-scaling")
    p = ms.Params().quick()
    ms.reproduce(p, out, workers=1, progress=False)
    return p, out


def test_quick_study_every_flow_near_its_fair_share(quick_study):
    import pandas as pd

    p, out = quick_study
    tp = pd.read_csv(out / "throughput.csv")
    assert len(tp) == 7 + 10  # flows under way in 5-15 s, then all ten
    assert tp["share_of_fair"].between(0.5, 1.6).all(), tp[["window", "flow", "share_of_fair"]]
    kinds = pd.read_csv(out / "throughput_by_kind.csv").set_index(["window", "kind"])["share_of_fair"]
    # Media at least as greedy as TCP when all ten flows share the link.
    assert kinds[("15-25 s", "mm")] > kinds[("15-25 s", "ftp")]
    total = tp.groupby("window")["throughput_kbps_mean"].sum()
    assert (total <= p.bottleneck_rate_bps / 1e3).all() and (total > 0.9 * p.bottleneck_rate_bps / 1e3).all()


def test_quick_study_tcp_jitter_far_above_mm_app(quick_study):
    import pandas as pd

    _, out = quick_study
    j = pd.read_csv(out / "jitter.csv").set_index("kind")
    assert j.loc["ftp", "interarrival_cv_mean"] > 3 * j.loc["mm", "interarrival_cv_mean"]
    for f in ("report.md", "throughput.png", "interarrivals.png", "scales.png", "mpeg_rates.csv"):
        assert (out / f).stat().st_size > 0
    rates = pd.read_csv(out / "mpeg_rates.csv")
    assert rates["stated_kbps"].tolist() == list(ms.STATED_MPEG_KBPS)


def test_sensitivity_runs_every_open_value_and_a_long_rto_costs_tcp():
    from mediasim.experiments import media_scaling_sensitivity as sens
    from mediasim.experiments import one_at_a_time as oat

    p = ms.Params(replications=3)
    d = sens.run(p, workers=1, progress=False)
    names = set(d["value"])
    assert {name for name, _, _ in sens.OPEN_VALUES} <= names
    base = d[d["value"] == "default"].iloc[0]
    rto = d[(d["value"] == "tcp_min_rto_ms") & d["setting"].str.startswith("high")].iloc[0]
    # Time-outs of 1 s instead of 200 ms leave TCP idle longer after losses.
    assert rto["ftp_share"] < base["ftp_share"] - 3 * oat.noise(d, sens.HEADLINES)["ftp_share"]
    assert any("tcp_min_rto_ms" in line for line in sens.section(d))


def test_media_rates_command_prints_each_scale():
    from click.testing import CliRunner

    from mediasim.cli import main

    out = CliRunner().invoke(main, ["media-rates"])
    assert out.exit_code == 0, out.output
    assert "293.3" in out.output and "1040" in out.output
    bad = CliRunner().invoke(main, ["media-rates", "--gop", "PBB"])
    assert bad.exit_code == 2 and bad.output.startswith("error: --gop: must be I, P and B frames starting with I")


@pytest.mark.parametrize("args, problem", [
    (("--frame-rate", "nan"), "'nan' is not a finite number"),
    (("--frame-rate", "1e300"), "error: --frame-rate: the frame rate is 1.000e300 packets/s, more than 1e6"),
    (("--mm", "--gop", "IBP"), "--gop: MM_APP (--mm) has fixed rates, no frames"),
    (("--mm", "--frame-rate", "25"), "--frame-rate: MM_APP (--mm) has fixed rates, no frames"),
    (("--trace", "frames.txt", "--gop", "IBP"), "--gop: the trace (--trace) gives the frames"),
])
def test_media_rates_refuses_options_it_would_ignore_and_impossible_rates(args, problem):
    from click.testing import CliRunner

    from mediasim.cli import main

    out = CliRunner().invoke(main, ["media-rates", *args])
    assert out.exit_code == 2 and problem in out.output and "Traceback" not in out.output
    assert "invalid scenario" not in out.output


def test_media_rates_names_a_bad_trace_file_and_line_without_calling_it_a_scenario(tmp_path):
    from click.testing import CliRunner

    from mediasim.cli import main

    bad = tmp_path / "frames.txt"
    bad.write_text("I 1000\nP x\n")
    for path, said in ((bad, f"error: {bad}:2: expected '<I|P|B> <bytes>', got 'P x'\n"),
                       (tmp_path / "none.txt", f"error: {tmp_path / 'none.txt'}: no such trace file\n")):
        out = CliRunner().invoke(main, ["media-rates", "--trace", str(path)])
        assert (out.exit_code, out.output) == (2, said)


@pytest.mark.parametrize("name,value,fragment", [
    ("join_s", "30", "join_s must be inside the run"),
    ("late_ftp", "9", "late_ftp"),
    ("windows_s", "5,3", "increasing"),
])
def test_bad_study_parameters_are_named(name, value, fragment):
    with pytest.raises(ValueError, match=fragment):
        ms.Params().with_overrides({name: value})


def test_quick_study_report_checks_the_expected_shape(quick_study):
    import pandas as pd

    from mediasim.experiments.media_scaling_shapes import shape_checks

    _, out = quick_study
    tables = {n: pd.read_csv(out / f"{n}.csv") for n in ("throughput", "throughput_by_kind", "jitter")}
    c = shape_checks(tables)
    assert len(c) == 3 and c["holds"].all(), c[~c["holds"]]
    text = (out / "report.md").read_text()
    assert "## The study's expected shape" in text
    for statement in c["expected (study)"]:
        assert statement in text


def _shape_tables(flow_share=1.0, mpeg_share=0.95, ftp_cv=2.0):
    import pandas as pd

    return {
        "throughput": pd.DataFrame({"window": ["5-15 s", "15-25 s"], "flow": ["ftp0", "mm0"],
                                    "share_of_fair": [0.97, flow_share]}),
        "throughput_by_kind": pd.DataFrame({"window": ["5-15 s"] * 3 + ["15-25 s"] * 3,
                                            "kind": ["ftp", "mm", "mpeg"] * 2, "n": [5, 1, 1, 6, 2, 2],
                                            "share_of_fair": [0.97, 1.08, 0.87, 0.86, 1.33, mpeg_share]}),
        "jitter": pd.DataFrame({"kind": ["ftp", "mm"], "interarrival_cv_mean": [ftp_cv, 0.5]}),
    }


def test_each_shape_check_fails_alone_when_its_figure_says_otherwise():
    from mediasim.experiments.media_scaling_shapes import shape_checks

    base = shape_checks(_shape_tables())
    assert base["holds"].all(), base
    # Heavy congestion is the window with the most flows (15-25 s): mpeg
    # under ftp there fails the second statement alone.
    for change, failing in (({"flow_share": 1.7}, 0), ({"mpeg_share": 0.8}, 1), ({"ftp_cv": 1.4}, 2)):
        c = shape_checks(_shape_tables(**change))
        assert list(c.index[~c["holds"]]) == [failing], (change, c)


def test_the_shape_checks_quote_their_figures_and_fail_at_their_thresholds():
    from mediasim.experiments.media_scaling_shapes import shape_checks

    c = shape_checks(_shape_tables())
    assert list(c.columns) == ["expected (study)", "measured", "holds"]
    assert list(zip(c["expected (study)"], c["measured"])) == [
        ("Roughly fair shares for all", "every flow 0.97-1.00 of its fair share in every window (roughly: 0.5-1.6)"),
        ("Media somewhat greedier than TCP under heavy congestion",
         "15-25 s: mm 1.33, mpeg 0.95 of the fair share, ftp 0.86"),
        ("TCP's inter-arrival jitter far higher than the media flows'",
         "coefficient of variation of inter-arrival times: ftp 2.00, mm 0.50 (4.0 times; far: at least 3)"),
    ]
    # At the edges of the fair range a share is roughly fair; MPEG level
    # with FTP is not greedier; jitter exactly three times is not "far".
    for change, holds in [({"flow_share": 1.6}, [True, True, True]), ({"flow_share": 0.5}, [True, True, True]),
                          ({"mpeg_share": 0.86}, [True, False, True]), ({"ftp_cv": 1.5}, [True, True, False])]:
        assert list(shape_checks(_shape_tables(**change))["holds"]) == holds, change


def test_flows_fair_shares_and_mean_scales_by_hand():
    import numpy as np
    import pandas as pd

    p = ms.Params()
    # 6 FTP (the last joining at 15 s), 2 MM and 2 MPEG (the second of
    # each joining at 15 s).
    f = ms.flows(p)
    assert [(n, k) for n, k, _ in f] == [(f"ftp{i}", "ftp") for i in range(6)] + [
        ("mm0", "mm"), ("mm1", "mm"), ("mpeg0", "mpeg"), ("mpeg1", "mpeg")]
    assert [s for _, _, s in f] == [0.0] * 5 + [15.0, 0.0, 15.0, 0.0, 15.0]
    # 6 Mbit/s over the flows under way: 7 before 15 s, all 10 from then on.
    assert ms.fair_share_kbps(p, 5.0) == pytest.approx(6000 / 7)
    assert ms.fair_share_kbps(p, 15.0) == pytest.approx(600.0)
    # A step series' time-weighted mean over [a, b): the value in force at
    # a counts from a; a change after b does not count; nothing before b: NaN.
    s = pd.DataFrame({"time_s": [0.0, 10.0, 14.0, 30.0], "value": [1.0, 3.0, 5.0, 9.0]})
    assert ms.mean_scale(s, 5.0, 15.0) == pytest.approx((5 * 1 + 4 * 3 + 1 * 5) / 10)
    assert ms.mean_scale(s, 14.0, 20.0) == pytest.approx(5.0)
    assert np.isnan(ms.mean_scale(s.iloc[:0], 0.0, 5.0))
    assert np.isnan(ms.mean_scale(s.iloc[3:], 5.0, 15.0))
    assert np.isnan(ms.mean_scale(s.iloc[2:], 5.0, 14.0))  # starting at the window's end
    # A series starting inside the window: the time before it counts as 0.
    assert ms.mean_scale(s.iloc[1:], 5.0, 15.0) == pytest.approx((4 * 3 + 1 * 5) / 10)
