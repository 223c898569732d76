"""Each study's sensitivity headlines, computed from one replication's
rows made up by hand: which rows, scenarios, subgroups and windows each
headline reads, and how it averages them (the SVC study's are in
tests/test_svc_study.py)."""

import dataclasses
import math

import pandas as pd
import pytest


def _rmtp_rows(sender_retx=40, dr_retx=(35, 25), p_prime_5=0.05):
    # Scenario 2's sender and DR (first: the headlines find scenario 3's by
    # its number), and scenario 5's DR, are not read.
    rows = [{"scenario": 2, "role": "sender", "subgroup": -1, "retx": 1000, "premature_retx": 0},
            {"scenario": 2, "role": "dr", "subgroup": 0, "retx": 1000}]
    rows += [{"scenario": 3, "role": "sender", "subgroup": -1, "retx": sender_retx, "premature_retx": 10}]
    rows += [{"scenario": 3, "role": "dr", "subgroup": i, "retx": r} for i, r in enumerate(dr_retx)]
    rows += [{"scenario": 3, "role": "subgroup", "subgroup": 0, "p_prime_sim": 0.43, "p_prime_model": 0.42},
             {"scenario": 3, "role": "subgroup", "subgroup": 1, "p_prime_sim": 0.9, "p_prime_model": 0.1}]
    rows += [{"scenario": 5, "role": "receiver", "subgroup": 0, "delay_s": d} for d in (1.0, 3.0)]
    rows += [{"scenario": 5, "role": "dr", "subgroup": 0, "delay_s": 100.0, "retx": 30},
             {"scenario": 5, "role": "sender", "subgroup": -1, "retx": 90, "new_sent": 400},
             {"scenario": 5, "role": "subgroup", "subgroup": 0, "p_prime_sim": p_prime_5, "p_prime_model": 0.42}]
    rows += [{"scenario": 6, "role": "receiver", "subgroup": 0, "delay_s": d} for d in (0.5, 0.75)]
    for k, thr0, thr1 in ((7, (2.0, 2.2), (1.0,)), (8, (4.0, 4.4), (10.0,))):
        rows += [{"scenario": k, "role": "receiver", "subgroup": 0, "throughput_pps": t} for t in thr0]
        rows += [{"scenario": k, "role": "receiver", "subgroup": 1, "throughput_pps": t} for t in thr1]
        rows += [{"scenario": k, "role": "dr", "subgroup": 0, "throughput_pps": 50.0}]
    return pd.DataFrame(rows)


def test_rmtp_headlines_read_scenario_3s_repairs_and_the_receivers_of_5_to_8():
    from mediasim.experiments import rmtp_sensitivity as sens

    h = sens.headline(_rmtp_rows())
    assert list(h) == list(sens.HEADLINES)
    # Both DRs' repairs (60) against the sender's 40; 10 of its 40 premature;
    # P' of the first subgroup; receivers only; subgroup 0 of 7 over 8's.
    assert h["dr_share_3"] == pytest.approx(0.6) and h["premature_share_3"] == pytest.approx(0.25)
    assert h["p_prime_gap_3"] == pytest.approx(0.01)
    assert h["delay_5_s"] == pytest.approx(2.0) and h["delay_6_s"] == pytest.approx(0.625)
    assert h["worst_subgroup_ratio"] == pytest.approx(2.1 / 4.2)
    # The slow tree: the DR's 30 repairs against the sender's 90, and per
    # distinct loss (P' 0.05 of 400 new packets: 20).
    assert h["dr_share_5"] == pytest.approx(0.25) and h["dr_repeats_5"] == pytest.approx(1.5)
    # No loss on the slow tree: no repairs per loss.
    assert math.isnan(sens.headline(_rmtp_rows(p_prime_5=0.0))["dr_repeats_5"])
    # No retransmissions at all: no shares.
    h = sens.headline(_rmtp_rows(sender_retx=0, dr_retx=(0, 0)))
    assert math.isnan(h["dr_share_3"]) and math.isnan(h["premature_share_3"])
    # DRs alone: a share of 1 (and no sender retransmissions to be premature).
    h = sens.headline(_rmtp_rows(sender_retx=0))
    assert h["dr_share_3"] == 1.0 and math.isnan(h["premature_share_3"])


def test_rmcat_headlines_average_each_controllers_flows_then_the_controllers():
    from mediasim.experiments import rmcat_sensitivity as sens

    rows = []
    for case in (1, 4, 6, 7, 8):
        # GCC with two flows, NADA with one: a controller counts once.
        for ctl, values in (("gcc", (0.8, 1.0)), ("nada", (0.6,))):
            for v in values:
                rows.append({"case": case, "controller": ctl, "share_ratio": v * case, "queuing_mean_ms": 10 * v,
                             "jain": v / 2, "resume_queue_peak_ms": 100 * v + case, "freezes": 10 * v + case,
                             "frames_late_pct": 4 * v, "playout_delay_ms": 100 * v + 2 * case})
    h = sens.headline(pd.DataFrame(rows))
    assert list(h) == list(sens.HEADLINES)
    assert h["c1_share"] == pytest.approx(0.75) and h["c1_queuing_ms"] == pytest.approx(7.5)
    assert h["c4_jain"] == pytest.approx(0.375) and h["c6_share"] == pytest.approx(4.5)
    assert h["c6_freezes"] == pytest.approx(13.5)
    assert h["c6_late_pct"] == pytest.approx(3.0) and h["c6_playout_ms"] == pytest.approx(87.0)
    assert h["c7_share"] == pytest.approx(5.25) and h["c8_resume_queue_ms"] == pytest.approx(83.0)
    # A run's figures reach each of its media flows' rows.
    part = {"run": {"jain": 0.9, "resume_queue_peak_ms": 42.0},
            "flows": [{"case": 4, "controller": "gcc", "share_ratio": 1.0}, {"case": 4, "controller": "gcc"}]}
    assert sens.rows_of(part) == [{"case": 4, "controller": "gcc", "share_ratio": 1.0, "jain": 0.9,
                                   "resume_queue_peak_ms": 42.0},
                                  {"case": 4, "controller": "gcc", "jain": 0.9, "resume_queue_peak_ms": 42.0}]


def test_media_scaling_headlines_read_the_last_window_against_its_fair_share():
    from mediasim.experiments import media_scaling as ms
    from mediasim.experiments import media_scaling_sensitivity as sens

    p = ms.Params()
    last = f"{p.windows_s[-2]:g}-{p.windows_s[-1]:g} s"
    tp = pd.DataFrame(
        [{"window": "5-15 s", "kind": k, "throughput_kbps": 1000.0, "fair_share_kbps": 50.0}
         for k in ("ftp", "mm", "mpeg")]
        + [{"window": last, "kind": k, "throughput_kbps": v, "fair_share_kbps": 200.0}
           for k, v in (("ftp", 100.0), ("ftp", 300.0), ("mm", 300.0), ("mpeg", 150.0))])
    jitter = pd.DataFrame({"kind": ["ftp", "ftp", "mm", "mm"], "interarrival_cv": [2.0, 4.0, 1.5, 2.5]})
    h = sens.headline({"throughput": tp, "jitter": jitter}, p)
    assert list(h) == list(sens.HEADLINES)
    assert h == {"ftp_share": 1.0, "mm_share": 1.5, "mpeg_share": 0.75, "jitter_ratio": 1.5}


def test_svc_conclusions_name_the_settings_under_which_each_fails():
    from mediasim.experiments import svc_sensitivity as sens

    good = {"tfrc_loss_pct": 3.0, "ppacc_loss_pct": 2.0, "loss_ratio_largest": 0.5, "af12_minus_af11_pct": 1.0,
            "throughput_ratio": 1.1, "p99_ratio": 0.5, "fec_cut_pct": 1.0}
    # Each setting puts one headline exactly at its conclusion's edge
    # (a tie holds no conclusion).
    edges = [("ppacc_loss_pct", 3.0), ("loss_ratio_largest", 1.0), ("af12_minus_af11_pct", 0.0),
             ("throughput_ratio", 1.0), ("p99_ratio", 1.0), ("fec_cut_pct", 0.0)]
    d = pd.DataFrame([{"value": "default", "setting": "-", **good}]
                     + [{"value": h, "setting": "low: x", **good, h: v} for h, v in edges]
                     + [{"value": "buffers", "setting": "high: y", **good, "ppacc_loss_pct": 3.5}])
    c = sens.conclusions(d)
    assert list(c.columns) == ["conclusion", "holds in", "fails under"]
    assert list(c["conclusion"]) == [
        "PPACC loses less than TFRC at the smallest buffer", "PPACC loses less than TFRC at the largest buffer",
        "AF12 loses more than AF11", "TFRC gets more throughput", "PPACC's delay tail is lighter",
        "FEC lowers the loss after decoding"]
    assert list(c["holds in"]) == ["6 of 8 settings"] + ["7 of 8 settings"] * 5
    assert list(c["fails under"]) == ["ppacc_loss_pct low: x; buffers high: y"] + [f"{h} low: x" for h, _ in edges[1:]]
    assert list(sens.conclusions(d.iloc[:1])["fails under"]) == ["-"] * 6


def test_avpf_settings_run_each_open_value_on_the_cases_that_use_it_and_two_other_seeds():
    from mediasim.experiments import avpf
    from mediasim.experiments import avpf_sensitivity as sens

    p = avpf.Params()
    s = sens.settings(p, (3, 4))
    assert (s[0].name, s[0].which, s[0].params, s[0].cases) == ("(base)", "base", sens.reduced(p), (3, 4))
    using = [v for v in sens.OPEN_VALUES if {3, 4} & set(v.cases)]
    assert [(x.name, x.which, x.value) for x in s[1:-2]] == [
        (v.name, which, x) for v in using for which, x in (("low", v.low), ("high", v.high))]
    for x in s[1:-2]:
        v = next(v for v in sens.OPEN_VALUES if v.name == x.name)
        assert x.cases == tuple(c for c in v.cases if c in (3, 4))
        assert x.params == dataclasses.replace(sens.reduced(p), **{x.name: x.value})
    assert [(x.name, x.which, x.value, x.cases) for x in s[-2:]] == [
        ("seed", "low", p.seed + 1000, (3, 4)), ("seed", "high", p.seed + 2000, (3, 4))]
    assert s[-1].params == dataclasses.replace(sens.reduced(p), seed=p.seed + 2000)


def test_avpf_headlines_read_each_cases_table():
    from mediasim.experiments import avpf_sensitivity as sens

    def total(rows):
        return pd.DataFrame(rows, columns=["profiles", "rtcp_share_pct_mean"])

    t = {"case1_total": total([("both AVPF", 5.0), ("both AVPF", 4.0), ("both AVP", 50.0)]),
         "case2_total": total([("both AVPF", 6.0), ("mixed", 60.0)]),
         "case3_total": pd.DataFrame({"rtcp_share_pct_mean": [5.0, 6.0]}),
         "case4_feedback": pd.DataFrame({"profile": ["AVPF", "AVPF", "AVP"], "mwt_s_mean": [0.1, 0.3, 2.0]}),
         "case5_feedback": pd.DataFrame({"losses": ["shared", "shared", "distributed"],
                                         "fb_wanted_mean": [10.0, 30.0, 100.0], "fb_suppressed_mean": [5.0, 5.0, 99.0]}),
         "case6_feedback": pd.DataFrame({"losses": ["shared"], "fb_wanted_mean": [8.0], "fb_suppressed_mean": [6.0]}),
         "case7_sender": pd.DataFrame({"failure_rate_mean": [0.1, 0.3], "loss_report_delay_mean_s_mean": [1.0, 2.0]}),
         "case8_sender": pd.DataFrame({"failure_rate_mean": [0.5], "loss_report_delay_mean_s_mean": [3.0]}),
         "case9_newpred": pd.DataFrame({"waiting_time_mean_s_mean": [0.5, 1.5]}),
         "case10_newpred": pd.DataFrame({"waiting_time_mean_s_mean": [4.0]})}
    h = sens.headline(t)
    assert h == {(1, "RTCP share, all AVPF (%)"): 4.5, (2, "RTCP share, all AVPF (%)"): 6.0,
                 (3, "RTCP share (%)"): 5.5, (4, "MWT AVPF (s)"): pytest.approx(0.2), (4, "MWT AVP (s)"): 2.0,
                 (5, "suppression rate, shared losses"): 0.25, (6, "suppression rate, shared losses"): 0.75,
                 (7, "failure rate"): pytest.approx(0.2), (7, "loss report delay (s)"): 1.5,
                 (8, "failure rate"): 0.5, (8, "loss report delay (s)"): 3.0,
                 (9, "NEWPRED waiting time (s)"): 1.0, (10, "NEWPRED waiting time (s)"): 4.0}
    # A case without rows of a profile: no figure (NaN), not an error.
    h = sens.headline({"case4_feedback": pd.DataFrame({"profile": ["AVP"], "mwt_s_mean": [2.0]})})
    assert math.isnan(h[4, "MWT AVPF (s)"]) and h[4, "MWT AVP (s)"] == 2.0


def _avpf_compare():
    from mediasim.experiments import avpf
    from mediasim.experiments import avpf_sensitivity as sens

    p = avpf.Params()
    todo = [sens.Setting("(base)", "base", None, p, (1,)),
            sens.Setting("duration_s", "low", 150.0, dataclasses.replace(p, duration_s=150.0), (1,)),
            sens.Setting("duration_s", "high", 600.0, dataclasses.replace(p, duration_s=600.0), (1,)),
            sens.Setting("seed", "low", 1001, p, (1,)), sens.Setting("seed", "high", 2001, p, (1,))]
    a, b, z = (1, "RTCP share, all AVPF (%)"), (4, "MWT AVPF (s)"), (7, "failure rate")
    metrics = [{b: 0.2, a: 5.0, z: 0.0}, {a: 4.0, b: 0.3, z: 0.1}, {a: 6.0, b: 0.2, z: 0.2},
               {a: 5.1, b: 0.21, z: 0.0}, {a: 4.9, b: 0.19}]
    return p, sens.compare(todo, metrics)


def test_avpf_compare_gives_each_values_changes_from_the_default_in_percent():
    p, d = _avpf_compare()
    assert list(d.columns) == ["value", "default", "low", "high", "case", "metric", "at_default", "at_low",
                               "at_high", "change_low_pct", "change_high_pct"]
    # Sorted by case; a metric a setting lacks (case 7 with the second
    # seed) is left out; a base of 0 has no relative change.
    assert list(zip(d["value"], d["case"])) == [("duration_s", 1), ("duration_s", 4), ("duration_s", 7),
                                                ("seed", 1), ("seed", 4)]
    r = d.iloc[0]
    assert (r["default"], r["low"], r["high"], r["at_default"], r["at_low"], r["at_high"]) == (
        p.duration_s, 150.0, 600.0, 5.0, 4.0, 6.0)
    assert (r["change_low_pct"], r["change_high_pct"]) == (pytest.approx(-20.0), pytest.approx(20.0))
    assert d.iloc[1]["change_low_pct"] == pytest.approx(50.0) and d.iloc[1]["change_high_pct"] == pytest.approx(0.0)
    assert math.isnan(d.iloc[2]["change_low_pct"]) and math.isnan(d.iloc[2]["change_high_pct"])
    # A negative base: the change keeps the direction of the move.
    from mediasim.experiments.avpf_sensitivity import _pct
    assert _pct(-1.5, -2.0) == pytest.approx(25.0)


def test_avpf_section_names_what_moves_beyond_the_seeds_change_and_5_percent():
    from mediasim.experiments import avpf
    from mediasim.experiments import avpf_sensitivity as sens
    from mediasim.reporting.tables import md_table

    share, mwt, wait = "RTCP share, all AVPF (%)", "MWT AVPF (s)", "NEWPRED waiting time (s)"
    d = pd.DataFrame([  # (value, case, metric, at the default, change low, change high), in this order
        ("seed", 9, wait, 1.0, 3.0, -2.0),  # seeds alone: no line
        ("seed", 4, mwt, 0.2, 5.0, -5.0),
        ("duration_s", 4, mwt, 0.2, 50.0, 0.0),
        ("duration_s", 1, share, 5.12345, -5.0, 5.5),  # no seeds: the 5% floor
        ("payload_200k", 1, share, 5.12345, -5.0, 5.0),  # exactly 5%: not beyond
        ("unicast_link_bps", 1, share, 5.12345, 5.5, 0.0),
    ], columns=["value", "case", "metric", "at_default", "change_low_pct", "change_high_pct"])
    lines = sens.section(d, avpf.Params(replications=5))
    assert lines[:4] == ["## Sensitivity to the values the study leaves open", "", lines[2], ""]
    assert "(5 replications," in lines[2] and lines[2].endswith("changes within its size are noise.")
    # In the table's order, each (case, metric) once.
    assert lines[4:] == [
        "- Case 4, MWT AVPF (s) = 0.2 at the defaults (seed-to-seed 5%): moved beyond that and 5% by "
        "duration_s (+50% / +0%).",
        "- Case 1, RTCP share, all AVPF (%) = 5.123 at the defaults (seed-to-seed 0%): moved beyond that and 5% by "
        "duration_s (-5% / +6%), unicast_link_bps (+6% / +0%).",
        "", md_table(d, 4), "", "Plot: `sensitivity.png`", ""]
    assert "|        5.123 |" in lines[7] and "5.1235" not in lines[7]
    # Nothing beyond: "none".
    quiet = d[d["value"].isin(["seed", "payload_200k"])]
    assert sens.section(quiet, avpf.Params())[4].endswith("moved beyond that and 5% by none.")
