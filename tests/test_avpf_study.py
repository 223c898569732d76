"""The AVPF study (cases built so far) in quick mode: the spec-level shapes."""

import pandas as pd
import pytest
from click.testing import CliRunner

from mediasim.cli import main


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("avpf")
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--out", str(out), "--workers", "2"])
    assert r.exit_code == 0, r.output
    return out


def test_writes_tables_plots_and_report(study):
    for f in ("report.md", "replications.parquet", "case1_total.csv", "case2_total.csv", "case3_total.csv",
              "case4_feedback.csv", "case1_rtcp_share.png", "case4_mwt.png"):
        assert (study / f).stat().st_size > 0, f
    assert len(pd.read_csv(study / "case1_total.csv")) == 18  # 3 bandwidths x 2 sender sets x 3 profile mixes


@pytest.mark.parametrize("case", [1, 2, 3])
def test_all_avpf_rtcp_share_is_five_percent_within_two_tenths(case, study):
    t = pd.read_csv(study / f"case{case}_total.csv")
    if case in (1, 2):
        t = t[t["profiles"] == "both AVPF"]
    assert len(t) > 0
    assert ((t["rtcp_share_pct_mean"] - 5.0).abs() <= 0.2).all(), t[["rtcp_share_pct_mean"]]


def test_avp_members_use_far_less_at_high_bandwidth(study):
    t = pd.read_csv(study / "case1_total.csv").set_index(["session_bw_bps", "senders", "profiles"])
    assert t.loc[(2e6, "A1", "both AVP"), "rtcp_share_pct_mean"] < 0.1


def test_avp_feedback_waits_half_the_minimum_interval_avpf_ten_times_less(study):
    t = pd.read_csv(study / "case4_feedback.csv")
    for (bw, loss), g in t.groupby(["session_bw_bps", "loss"]):
        avp = g[g["profile"] == "AVP"]["mwt_s_mean"].iloc[0]
        avpf = g[g["profile"] == "AVPF"]["mwt_s_mean"].iloc[0]
        # About half the 5 s minimum: with timer reconsideration (and its
        # e - 3/2 compensation) AVP intervals average Td = 5 s, so a loss
        # waits about 2.5 s (measured 2.54-2.56 s with hundreds of losses).
        # A handful of loss events makes a noisy mean.
        wanted = g[g["profile"] == "AVP"]["fb_wanted_mean"].iloc[0]
        lo, hi = (2.3, 2.8) if wanted >= 100 else (1.3, 3.7)
        assert lo < avp < hi, (bw, loss, avp, wanted)
        if loss.startswith("plr"):
            assert avpf * 10 < avp, (bw, loss, avp, avpf)
        else:
            # Under the chosen heavy congestion (about 10% loss) losses come
            # faster than allow_early permits Early packets, and at 20 kbit/s
            # the gap narrows (about 8x, docs/experiments/avpf.md).
            assert avpf * 5 < avp, (bw, loss, avp, avpf)


@pytest.fixture(scope="module")
def multicast(tmp_path_factory):
    out = tmp_path_factory.mktemp("avpf_mc")
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--case", "5", "--case", "7", "--case", "8",
                                  "--out", str(out), "--workers", "2"])
    assert r.exit_code == 0, r.output
    return out


def test_shared_losses_let_suppression_work_distributed_ones_do_not(multicast):
    f = pd.read_csv(multicast / "case5_feedback.csv")
    rate = f["fb_suppressed_mean"] / f["fb_wanted_mean"]
    assert (rate[f["losses"] == "shared"] > 0.3).all()
    assert (rate[f["losses"] == "distributed"] < 0.05).all()


def test_larger_dither_delays_loss_reports(multicast):
    for case, x, lo, hi in ((7, "k", 0.1, 4.0), (8, "l", 0.1, 1.0)):
        s = pd.read_csv(multicast / f"case{case}_sender.csv")
        for _, g in s.groupby("scenario"):
            d = g.set_index(x)["loss_report_delay_mean_s_mean"]
            assert d[hi] > d[lo], (case, d)


def test_l_beyond_one_changes_nothing_rfc_step_3a(multicast):
    # T_dither_max = l * T_rr >= T_rr puts t0 + T_dither_max past tn: the
    # feedback always rides the Regular packet, whatever l.
    s = pd.read_csv(multicast / "case8_sender.csv")
    for _, g in s.groupby("scenario"):
        d = g.set_index("l")["loss_report_delay_mean_s_mean"]
        assert d[1.0] == d[2.0] == d[4.0]


def test_an_rtt_estimate_improves_the_trade_off(multicast):
    draft = pd.read_csv(multicast / "case7_sender.csv")
    rfc = pd.read_csv(multicast / "case8_sender.csv")
    assert draft["failure_rate_mean"].mean() < 0.5 * rfc["failure_rate_mean"].mean()
    assert draft["loss_report_delay_mean_s_mean"].mean() < rfc["loss_report_delay_mean_s_mean"].mean()


@pytest.fixture(scope="module")
def newpred(tmp_path_factory):
    out = tmp_path_factory.mktemp("avpf_np")
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--case", "9", "--case", "10",
                                  "--out", str(out), "--workers", "2"])
    assert r.exit_code == 0, r.output
    return out


def test_newpred_recovery_is_round_trip_plus_waiting(newpred):
    d = pd.read_csv(newpred / "case9_newpred.csv")
    for (sess, plr), g in d.groupby(["session", "loss_rate"]):
        g = g.set_index("link2_delay_ms")
        extra = g.loc[500.0, "recovery_time_mean_s_mean"] - g.loc[10.0, "recovery_time_mean_s_mean"]
        # 490 ms more each way on link 2, for the feedback and the repair
        assert extra == pytest.approx(0.98, abs=0.1), (sess, plr, extra)
        assert (g["waiting_time_mean_s_mean"] < g["recovery_time_mean_s_mean"]).all()


def test_newpred_waiting_grows_with_loss_and_shrinks_with_bandwidth(newpred):
    d = pd.read_csv(newpred / "case9_newpred.csv")
    for (sess, delay), g in d.groupby(["session", "link2_delay_ms"]):
        w = g.set_index("loss_rate")["waiting_time_mean_s_mean"]
        assert w[0.1] > w[0.01], (sess, delay, w)
    by_bw = d.groupby("session_kbps")["waiting_time_mean_s_mean"].mean().sort_index()
    assert by_bw.iloc[0] > by_bw.iloc[-1]


def test_newpred_congested_by_tcp_recovers_losses(newpred):
    d = pd.read_csv(newpred / "case10_newpred.csv")
    short = d[d["link2_delay_ms"] == 10.0]
    assert (short["fb_wanted_mean"] > 0).all(), "64 TCP flows congest link 2"
    assert (short["recoveries_mean"] > 0).all()
