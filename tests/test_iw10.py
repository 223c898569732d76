"""The IW10 study: metric code on hand-made sequences, and a quick run of
the whole study checking its tables and the shapes that must hold."""

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from mediasim import traces
from mediasim.cli import main
from mediasim.experiments import iw10
from mediasim.experiments.quality import base_delay, classify, quality_metrics, run_lengths_to_levels

NAN = float("nan")


def test_base_delay_is_the_minimum_in_the_window_before_observation():
    sent = np.array([7.9, 8.0, 8.5, 9.0, 9.99, 10.0, 10.5])
    delay = np.array([0.010, 0.030, NAN, 0.026, 0.028, 0.001, 0.002])
    # window [8, 10): 0.030, lost, 0.026, 0.028 -> 0.026 (7.9 and 10.x excluded)
    assert base_delay(sent, delay, 8.0, 10.0) == 0.026
    assert np.isnan(base_delay(sent, delay, 20.0, 22.0))


def test_delayed_loss_is_strictly_beyond_base_plus_buffer():
    delay = np.array([0.030, 0.070, 0.0701, NAN])
    pure, delayed = classify(delay, base_s=0.030, jitter_buffer_s=0.040)
    assert list(pure) == [False, False, False, True]
    assert list(delayed) == [False, False, True, False]


@pytest.mark.parametrize("run,level", [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (9, 4), (10, 5), (25, 5)])
def test_run_lengths_map_to_levels(run, level):
    lost = np.array([False] + [True] * run + [False])
    assert list(run_lengths_to_levels(lost)) == [0] + [level] * run + [0]


def test_levels_of_a_mixed_sequence_and_shares():
    lost = np.array([0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1], dtype=bool)
    assert list(run_lengths_to_levels(lost)) == [0, 1, 0, 2, 2, 0, 3, 3, 3, 3, 0, 4, 4, 4, 4, 4, 4]
    base = 0.050
    delay = np.where(lost, NAN, base)
    delay[[3, 4]] = base + 0.2  # two of the losses are late arrivals, not pure losses
    m = quality_metrics(delay, base, 0.060)
    assert m["packets"] == 17
    assert m["pure_loss"] == pytest.approx(11 / 17) and m["delayed_loss"] == pytest.approx(2 / 17)
    assert m["level_0"] == pytest.approx(4 / 17) and m["level_4"] == pytest.approx(6 / 17)
    assert sum(m[f"level_{lv}"] for lv in range(6)) == pytest.approx(1.0)
    assert m["good_quality"] == pytest.approx(5 / 17)


def test_base_delay_window_includes_its_start_and_excludes_its_end():
    sent = np.array([8.0, 9.0, 10.0])
    delay = np.array([0.010, 0.020, 0.005])
    assert base_delay(sent, delay, 8.0, 10.0) == 0.010


def test_an_empty_observation_period_has_no_shares():
    m = quality_metrics(np.array([]), 0.05, 0.06)
    assert m["packets"] == 0
    for k in ("level_0", "level_5", "good_quality", "pure_loss", "delayed_loss", "loss"):
        assert np.isnan(m[k]), k


def test_level_bounds_at_each_edge():
    # Runs of 1, 3, 5, 9 and 10 lost packets: the largest of each level and
    # the first of level 5.
    runs = [1, 3, 5, 9, 10]
    lost = np.concatenate([np.r_[np.ones(n, dtype=bool), False] for n in runs])
    levels = run_lengths_to_levels(lost)
    starts = np.cumsum([0] + [n + 1 for n in runs[:-1]])
    assert [int(levels[s]) for s in starts] == [1, 2, 3, 4, 5]


def test_scenario_matches_the_study_definition():
    p = iw10.Params()
    sc = iw10.scenario(p, 6, 10).to_dict()
    tcp = [f for f in sc["flows"] if f["type"] == "tcp"]
    assert len(tcp) == 6 and sum(f["bytes"] for f in tcp) == 372_000
    assert all(f["tcp"]["initial_window"] == 10 and f["tcp"]["flavor"] == "sack" for f in tcp)
    assert all(f["start_s"] == 10.0 and f["start_jitter_s"] == 2.0 for f in tcp)
    voice = sc["flows"][0]
    assert voice["payload_bytes"] == 52 and voice["interval_ms"] == 20  # 40 B + RTP 12 B: 16 kbit/s payload
    access = [l for l in sc["links"] if l.get("name") == "access"][0]
    assert access["rate_bps"] == 2e6 and access["queue"]["limit_packets"] == 50
    assert access["delay_ms"] + sc["links"][0]["delay_ms"] == 25.0
    # The cellular variant: the trace's downlink with its own buffer, the
    # same uplink and delays, and a run long enough to drain a full buffer
    # at the trace's slowest second (0.5 Mbit/s: 200 x 1500 B in 4.8 s).
    cell = iw10.scenario(p, 6, 10, "cellular").to_dict()
    access = [l for l in cell["links"] if l.get("name") == "access"][0]
    assert "rate_bps" not in access and access["ab"]["trace"] == {"builtin": "lte-2mbps"}
    assert access["ab"]["queue"]["limit_packets"] == 200 and access["ba"]["rate_bps"] == 512e3
    assert access["delay_ms"] == 24.0
    assert iw10.min_rate_bps(traces.builtin("lte-2mbps")) > 0.4e6
    assert cell["duration_s"] == 21.0 + math.ceil(200 * 12000 / iw10.min_rate_bps(traces.builtin("lte-2mbps")))


def test_the_run_outlasts_a_judged_packets_base_delay_and_a_full_buffer(tmp_path):
    """1 s past the observation window at the defaults (25 ms + 50 x 1500 B
    at 2 Mbit/s = 0.325 s, with 0.5 s to spare); with a 2 s base delay,
    ceil(2 + 0.3 + 0.5) = 3 s past it, where the voice packets sent at its
    end were still in flight when the run ended and the study stopped."""
    assert iw10.Params().duration_s == 21.0
    assert iw10.Params(one_way_delay_ms=2000.0).duration_s == 23.0
    assert iw10.Params(bottleneck_rate_bps=2e5).duration_s == 20.0 + math.ceil(0.025 + 3.0 + 0.5)
    r = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "--set", "one_way_delay_ms=2000", "--set",
                                  "accesses=wired", "--set", "flows=1", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output




@pytest.fixture(scope="module")
def quick_study(tmp_path_factory):
    out = tmp_path_factory.mktemp("iw10")
    r = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "--out", str(out), "--workers", "2"])
    assert r.exit_code == 0, r.output
    return out


def test_one_long_transfers_standing_queue_outlasts_the_jitter_buffers_as_the_page_says():
    # docs/experiments/iw10.md: with the 50-packet buffer one 372 kB IW10
    # transfer keeps the voice packets late (or lost) past every jitter
    # buffer for over a second, longest for the smallest buffer; the page
    # quotes this run's spans.
    from pathlib import Path

    import mediasim

    p = iw10.Params()
    res = mediasim.run(iw10.scenario(p, 1, 10, "wired"), seed=1)
    sent_s, delay = iw10.voice_delays(res, p)
    t0, t1 = p.observation_s
    base = base_delay(sent_s, delay, t0 - p.base_window_s, t0)
    window = (sent_s >= t0) & (sent_s < t1)
    spans = {}
    for jb_ms in (min(p.jitter_buffers_ms), max(p.jitter_buffers_ms)):
        pure, late = classify(delay[window], base, jb_ms / 1e3)
        bad = sent_s[window][pure | late]
        # From the first packet judged late or lost to the end of the last; nearly all between are too.
        spans[jb_ms] = bad.max() - bad.min() + p.cbr_interval_ms / 1e3
        assert len(bad) > 0.9 * spans[jb_ms] * 1e3 / p.cbr_interval_ms
    assert 1 < spans[100.0] < spans[40.0] < 2
    page = " ".join((Path(__file__).parents[1] / "docs/experiments/iw10.md").read_text().split())
    assert (f"outlasts every jitter buffer for over a second ({spans[40.0]:.1f} s for the 40 ms one, "
            f"{spans[100.0]:.1f} s for the 100 ms one, in `mediasim.run(iw10.scenario(iw10.Params(), 1, 10, "
            f"\"wired\"), seed=1)`)") in page


def test_quick_study_writes_tables_plots_report(quick_study):
    for f in ("report.md", "summary.csv", "summary.parquet", "quality_levels.csv", "tcp.csv",
              "replications.parquet", "quality_levels.png", "good_quality.png"):
        assert (quick_study / f).stat().st_size > 0, f
    s = pd.read_csv(quick_study / "summary.csv")
    assert len(s) == 2 * 3 * 2 * 4 and (s["n"] == 4).all()
    assert set(s["access"]) == {"wired", "cellular"}
    c = pd.read_csv(quick_study / "conclusions.csv")
    assert len(c) == 6 and set(c["holds"]) <= {"yes", "no"}
    assert (quick_study / "cellular_trace.png").stat().st_size > 0
    lv = pd.read_csv(quick_study / "quality_levels.csv")
    sums = lv.groupby(["access", "flows", "iw", "jitter_buffer_ms"])["share_mean"].sum()
    assert np.allclose(sums, 1.0)
    assert (s["good_quality_ci_low"] <= s["good_quality_mean"]).all()
    tcp = pd.read_csv(quick_study / "tcp.csv")
    assert (tcp["tcp_completed_mean"] == 1.0).all(), "every transfer finishes inside the run"


def test_quick_study_shapes(quick_study):
    s = pd.read_csv(quick_study / "summary.csv")
    # Larger jitter buffers never hurt: the same delays judged against a
    # larger allowance lose fewer packets.
    for _, g in s.groupby(["access", "flows", "iw"]):
        g = g.sort_values("jitter_buffer_ms")
        assert g["good_quality_mean"].is_monotonic_increasing
        assert g["delayed_loss_mean"].is_monotonic_decreasing
        assert g["pure_loss_mean"].nunique() == 1
    # IW10 harms the voice flow more than IW3 (averaged over the configurations).
    wired = s[s["access"] == "wired"]
    by_iw = wired.groupby("iw")["good_quality_mean"].mean()
    assert by_iw[10] < by_iw[3]
    # The conclusions table says so, with its figures, and the third
    # conclusion holds on both accesses (a property of the metric).
    c = pd.read_csv(quick_study / "conclusions.csv").set_index(["access", "statement"])
    assert c.loc[("wired", "IW10 is more harmful than IW3"), "holds"] == "yes"
    for access in ("wired", "cellular"):
        assert c.loc[(access, "larger jitter buffers reduce the harm"), "holds"] == "yes"


def test_conclusions_follow_the_figures():
    # Hand-made summaries: IW10 worse, 6 flows worse than 1 with IW3,
    # buffers help: all three hold; flipped figures: none does.
    rows = []
    for f in (1, 6):
        for iw in (3, 10):
            for jb in (40, 100):
                gq = 0.99 - 0.02 * (iw == 10) - 0.01 * (f == 6) + 0.005 * (jb == 100)
                rows.append({"access": "wired", "flows": f, "iw": iw, "jitter_buffer_ms": jb, "good_quality_mean": gq})
    s = pd.DataFrame(rows)
    assert list(iw10.conclusions(s)["holds"]) == ["yes", "yes", "yes"]
    flipped = s.assign(good_quality_mean=1.98 - s["good_quality_mean"])
    c = iw10.conclusions(flipped)
    assert list(c["holds"]) == ["no", "no", "no"]
    assert "1 flow(s)" in c["figures"][1] and "6 flows" in c["figures"][1]






def test_reproduce_refuses_a_seed_or_replications_given_twice(tmp_path):
    from click.testing import CliRunner

    from mediasim.cli import main

    for args, name in ((["--seed", "5", "--set", "seed=6"], "seed"),
                       (["--replications", "2", "--set", "replications=3"], "replications")):
        r = CliRunner().invoke(main, ["reproduce", "iw10", "--quick", "--out", str(tmp_path / "x"), *args])
        assert r.exit_code == 2 and f"--{name} and --set {name}=...: give one of them" in r.output
    assert not (tmp_path / "x").exists()


def _summary(gq, access="wired", flows=(1, 6), iws=(3, 10), jbs=(40, 100)) -> pd.DataFrame:
    """A summary with good quality ``gq(flows, iw, jitter_buffer_ms)``."""
    return pd.DataFrame([{"access": access, "flows": f, "iw": iw, "jitter_buffer_ms": jb,
                          "good_quality_mean": gq(f, iw, jb)} for f in flows for iw in iws for jb in jbs])


def _base_gq(f, iw, jb):
    return 0.99 - 0.02 * (iw == 10) - 0.01 * (f == 6) + 0.005 * (jb == 100)


def test_conclusions_quote_their_figures_per_access_in_the_summarys_order():
    s = pd.concat([_summary(lambda f, iw, jb: _base_gq(f, iw, jb) - 0.1), _summary(_base_gq, "cellular")])
    c = iw10.conclusions(s)
    assert list(c.columns) == ["access", "statement", "holds", "figures"]
    assert list(c["access"]) == ["wired"] * 3 + ["cellular"] * 3
    assert list(c["statement"][:3]) == ["IW10 is more harmful than IW3",
                                        "many parallel flows are harmful even with IW3 (6 vs 1)",
                                        "larger jitter buffers reduce the harm"]
    assert list(c["figures"][:3]) == [
        "good quality 0.8875 (IW3) vs 0.8675 (IW10) on average; IW10 lower in 4 of 4 (flows, jitter buffer) pairs",
        "good quality 0.8925 (1 flow(s)) vs 0.8825 (6 flows) with IW3 on average; lower at 2 of 2 jitter buffers",
        "good quality up by 0.0050 on average from 40 to 100 ms (smallest change 0.0050)"]


def test_each_conclusion_needs_a_majority_and_compares_the_extremes():
    # IW10 far worse in two pairs, a little better in the other two: lower
    # on average but not in most pairs.
    def iw_half(f, iw, jb):
        return 0.99 + (iw == 10) * (-0.05 if f == 1 else 0.001)

    assert list(iw10.conclusions(_summary(iw_half))["holds"])[0] == "no"
    # A tie is not lower: IW10 lower in two pairs, level in two.
    assert iw10.conclusions(_summary(lambda f, iw, jb: 0.99 - 0.05 * (iw == 10) * (f == 1)))["holds"][0] == "no"
    # Lower in three pairs but level on average (exact in binary).
    level = {(1, 40): 0.25, (1, 100): 0.25, (6, 40): 0.25, (6, 100): 1.25}
    c = iw10.conclusions(_summary(lambda f, iw, jb: level[(f, jb)] if iw == 10 else 0.5))
    assert c["holds"][0] == "no" and "IW10 lower in 3 of 4" in c["figures"][0]
    # ... in three of four: it holds.
    assert list(iw10.conclusions(_summary(
        lambda f, iw, jb: 0.99 + (iw == 10) * (0.001 if (f, jb) == (6, 100) else -0.05)))["holds"])[0] == "yes"
    # With 1, 2 and 6 flows the most (6) are compared with the fewest (1):
    # 2 flows being the worst does not make 6 harmful.
    c = iw10.conclusions(_summary(lambda f, iw, jb: 0.99 - 0.1 * (f == 2) + 0.001 * (f == 6), flows=(1, 2, 6)))
    assert c["holds"][1] == "no" and c["statement"][1].endswith("(6 vs 1)")
    # Six flows worse at one of two buffers (and on average) is not "at
    # most jitter buffers".
    assert iw10.conclusions(_summary(lambda f, iw, jb: 0.99 - (f == 6) * (0.05 if jb == 40 else -0.001)))[
        "holds"][1] == "no"
    # ... nor is being level at one of two, or on average.
    assert iw10.conclusions(_summary(lambda f, iw, jb: 0.99 - 0.05 * (f == 6) * (jb == 40)))["holds"][1] == "no"
    level = {40: 0.25, 60: 0.25, 100: 1.0}  # lower at two of three buffers, level on average
    c = iw10.conclusions(_summary(lambda f, iw, jb: level[jb] if f == 6 else 0.5, jbs=(40, 60, 100)))
    assert c["holds"][1] == "no" and "lower at 2 of 3" in c["figures"][1]
    # Larger buffers: no change for one (flows, IW) and a gain elsewhere
    # holds; a loss anywhere, or no gain at all, does not; only the
    # smallest and largest buffers count.
    for gq, holds in [(lambda f, iw, jb: 0.9 + 0.01 * (jb == 100) * (f == 6), "yes"),
                      (lambda f, iw, jb: 0.9 + 0.01 * (jb == 100) * (f == 6) - 0.001 * (jb == 100) * (f == 1), "no"),
                      (lambda f, iw, jb: 0.9, "no"),
                      (lambda f, iw, jb: 0.9 + 0.01 * (jb == 100) - 0.1 * (jb == 60), "yes")]:
        assert iw10.conclusions(_summary(gq, jbs=(40, 60, 100)))["holds"][2] == holds


def test_a_summary_checks_only_the_conclusions_its_configurations_decide():
    def statements(**kw):
        return list(iw10.conclusions(_summary(_base_gq, **kw))["statement"])

    assert statements(iws=(3,)) == ["many parallel flows are harmful even with IW3 (6 vs 1)",
                                    "larger jitter buffers reduce the harm"]
    assert statements(iws=(10,)) == ["larger jitter buffers reduce the harm"]
    assert statements(flows=(6,)) == ["IW10 is more harmful than IW3", "larger jitter buffers reduce the harm"]
    assert statements(jbs=(60,)) == ["IW10 is more harmful than IW3",
                                     "many parallel flows are harmful even with IW3 (6 vs 1)"]
    none = iw10.conclusions(_summary(_base_gq, flows=(1,), iws=(10,), jbs=(60,)))
    assert none.empty and list(none.columns) == ["access", "statement", "holds", "figures"]
