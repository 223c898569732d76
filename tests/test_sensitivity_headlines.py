"""Each study's sensitivity headlines, computed from one replication's
rows made up by hand: which rows, scenarios, subgroups and windows each
headline reads, and how it averages them (the SVC study's are in
tests/test_svc_study.py)."""

import math

import pandas as pd
import pytest


def _rmtp_rows(sender_retx=40, dr_retx=(35, 25)):
    # Scenario 2's sender and DR (first: the headlines find scenario 3's by
    # its number), and scenario 5's DR, are not read.
    rows = [{"scenario": 2, "role": "sender", "subgroup": -1, "retx": 1000, "premature_retx": 0},
            {"scenario": 2, "role": "dr", "subgroup": 0, "retx": 1000}]
    rows += [{"scenario": 3, "role": "sender", "subgroup": -1, "retx": sender_retx, "premature_retx": 10}]
    rows += [{"scenario": 3, "role": "dr", "subgroup": i, "retx": r} for i, r in enumerate(dr_retx)]
    rows += [{"scenario": 3, "role": "subgroup", "subgroup": 0, "p_prime_sim": 0.43, "p_prime_model": 0.42},
             {"scenario": 3, "role": "subgroup", "subgroup": 1, "p_prime_sim": 0.9, "p_prime_model": 0.1}]
    rows += [{"scenario": 5, "role": "receiver", "subgroup": 0, "delay_s": d} for d in (1.0, 3.0)]
    rows += [{"scenario": 5, "role": "dr", "subgroup": 0, "delay_s": 100.0}]
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
                             "jain": v / 2, "resume_queue_peak_ms": 100 * v + case})
    h = sens.headline(pd.DataFrame(rows))
    assert list(h) == list(sens.HEADLINES)
    assert h["c1_share"] == pytest.approx(0.75) and h["c1_queuing_ms"] == pytest.approx(7.5)
    assert h["c4_jain"] == pytest.approx(0.375) and h["c6_share"] == pytest.approx(4.5)
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
