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
        assert avpf * 10 < avp, (bw, loss, avp, avpf)


def test_case_4_congestion_is_moderate_as_in_the_study(study):
    # About as many media losses as the 0.01 loss-rate case at 20 kbit/s,
    # and the same congestion for AVP and AVPF members (cross traffic).
    t = pd.read_csv(study / "case4_feedback.csv").set_index(["session_bw_bps", "loss", "profile"])
    for prof in ("AVP", "AVPF"):
        cong = t.loc[(20e3, "congestion", prof), "media_loss_rate_mean"]
        plr = t.loc[(20e3, "plr 0.01", prof), "media_loss_rate_mean"]
        assert 0.5 * plr < cong < 2 * plr, (prof, cong, plr)


def test_case_4_dithering_as_a_group_waits_hundreds_of_milliseconds(study, tmp_path):
    # RFC 4585's point-to-point T_dither_max is 0: AVPF's Early feedback
    # waits tens of milliseconds at most (the study's); with the group
    # rule l * T_rr (case4_dither = "multiparty") hundreds.
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--case", "4", "--set", "case4_dither=multiparty",
                                  "--out", str(tmp_path / "o"), "--workers", "2"])
    assert r.exit_code == 0, r.output
    at = {}
    for name, folder in (("zero", study), ("multiparty", tmp_path / "o")):
        t = pd.read_csv(folder / "case4_feedback.csv").set_index(["session_bw_bps", "loss", "profile"])
        at[name] = [t.loc[(20e3, loss, "AVPF"), "mwt_s_mean"] for loss in ("plr 0.001", "plr 0.01")]
    assert max(at["zero"]) < 0.1 < 0.2 < min(at["multiparty"])
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--set", "case4_dither=group", "--dry-run"])
    assert r.exit_code != 0 and 'case4_dither must be "multiparty" or "zero"' in r.output


@pytest.fixture(scope="module")
def multicast(tmp_path_factory):
    out = tmp_path_factory.mktemp("avpf_mc")
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--case", "5", "--case", "7", "--case", "8",
                                  "--out", str(out), "--workers", "2"])
    assert r.exit_code == 0, r.output
    return out


def test_scenarios_2_and_3_leave_a2_out_of_the_session(multicast):
    rows = pd.read_parquet(multicast / "replications.parquet")
    for case in (7, 8):
        for sid, members in ((1, {"A1", "A2", "A5", "A3", "A9"}), (2, {"A1", "A5", "A6", "A3", "A9"}),
                             (3, {"A1", "A5", "A6", "A3", "A9"})):
            got = set(rows[(rows["case"] == case) & (rows["scenario"] == sid)]["member"])
            assert got == members, (case, sid, got)


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
    draft = pd.read_csv(multicast / "case7_sender.csv").set_index(["scenario", "k"])
    rfc = pd.read_csv(multicast / "case8_sender.csv").set_index(["scenario", "l"])
    for sid in (1, 2, 3):
        assert draft.loc[sid, "failure_rate_mean"].mean() < rfc.loc[sid, "failure_rate_mean"].mean(), sid
    # Where An is nearer the source than Af (scenarios 1 and 3), the draft's
    # default (k = 1) fails less than the RFC's default (l = 0.5) at about
    # the same loss report delay. In scenario 2 (A5 and A6 at equal delays)
    # their RTT-based dithers are equal too, so the gain is smaller
    # (docs/experiments/avpf.md).
    for sid in (1, 3):
        d, r = draft.loc[(sid, 1.0)], rfc.loc[(sid, 0.5)]
        assert d["failure_rate_mean"] < 0.8 * r["failure_rate_mean"], (sid, d, r)
        assert d["loss_report_delay_mean_s_mean"] < 1.25 * r["loss_report_delay_mean_s_mean"], (sid, d, r)


@pytest.fixture(scope="module")
def newpred(tmp_path_factory):
    out = tmp_path_factory.mktemp("avpf_np")
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--case", "9", "--case", "10",
                                  "--out", str(out), "--workers", "2"])
    assert r.exit_code == 0, r.output
    return out


def test_newpred_recovery_is_round_trip_plus_waiting(newpred):
    d = pd.read_csv(newpred / "case9_newpred.csv")
    for (sess, plr, _), g in d.groupby(["session", "loss_rate", "p2p_dither"]):
        g = g.set_index("link2_delay_ms")
        extra = g.loc[500.0, "recovery_time_mean_s_mean"] - g.loc[10.0, "recovery_time_mean_s_mean"]
        # 490 ms more each way on link 2, for the feedback and the repair
        assert extra == pytest.approx(0.98, abs=0.1), (sess, plr, extra)
        assert (g["waiting_time_mean_s_mean"] < g["recovery_time_mean_s_mean"]).all()


def test_newpred_waiting_grows_with_loss_and_shrinks_with_bandwidth(newpred):
    d = pd.read_csv(newpred / "case9_newpred.csv")
    for (sess, delay, _), g in d.groupby(["session", "link2_delay_ms", "p2p_dither"]):
        w = g.set_index("loss_rate")["waiting_time_mean_s_mean"]
        assert w[0.1] > w[0.01], (sess, delay, w)
    by_bw = d.groupby("session_kbps")["waiting_time_mean_s_mean"].mean().sort_index()
    assert by_bw.iloc[0] > by_bw.iloc[-1]


def test_newpred_runs_the_study_dither_and_the_rfc_point_to_point_variant(newpred):
    # The study's agent dithered with l * T_rr in its two-member session;
    # the RFC's rule (T_dither_max = 0) sends Early feedback at once, so it
    # waits less on the same grid.
    d = pd.read_csv(newpred / "case9_newpred.csv")
    w = d.groupby("p2p_dither")["waiting_time_mean_s_mean"].mean()
    assert set(w.index) == {"l*T_rr (study)", "0 (RFC p2p)"}
    assert w["0 (RFC p2p)"] < w["l*T_rr (study)"]
    assert (newpred / "case9_dither_variants.png").stat().st_size > 0


def test_newpred_congested_by_tcp_recovers_losses(newpred):
    d = pd.read_csv(newpred / "case10_newpred.csv")
    short = d[d["link2_delay_ms"] == 10.0]
    assert (short["fb_wanted_mean"] > 0).all(), "64 TCP flows congest link 2"
    assert (short["recoveries_mean"] > 0).all()


@pytest.fixture(scope="module")
def sensitivity(tmp_path_factory):
    out = tmp_path_factory.mktemp("avpf_sens")
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--case", "4", "--sensitivity",
                                  "--out", str(out), "--workers", "2"])
    assert r.exit_code == 0, r.output
    return out


def test_sensitivity_varies_every_open_value_of_the_case(sensitivity):
    from mediasim.experiments.avpf_sensitivity import OPEN_VALUES

    d = pd.read_csv(sensitivity / "sensitivity.csv")
    want = {v.name for v in OPEN_VALUES if 4 in v.cases} | {"seed"}
    assert set(d["value"]) == want
    assert set(d["metric"]) == {"MWT AVP (s)", "MWT AVPF (s)"}
    assert "## Sensitivity" in (sensitivity / "report.md").read_text()
    assert (sensitivity / "sensitivity.png").stat().st_size > 0


def test_sensitivity_link_rate_far_above_the_session_changes_nothing(sensitivity):
    # 10 Mbit/s to 1 Gbit/s for a 2 Mbit/s session: serialisation changes
    # by microseconds, so the waiting times move by well under 1%.
    d = pd.read_csv(sensitivity / "sensitivity.csv").set_index(["value", "metric"])
    for m in ("MWT AVP (s)", "MWT AVPF (s)"):
        row = d.loc[("unicast_link_bps", m)]
        assert abs(row["change_low_pct"]) < 1 and abs(row["change_high_pct"]) < 1, row


def test_the_report_checks_each_expected_shape_and_every_one_holds(study):
    from mediasim.experiments.avpf import tables
    from mediasim.experiments.avpf_shapes import shape_checks

    c = shape_checks(tables(pd.read_parquet(study / "replications.parquet")))
    assert len(c) == 6 and c["holds"].all(), c[~c["holds"]]
    text = (study / "report.md").read_text()
    assert "## The study's expected shapes" in text
    for statement in c["expected (study)"]:
        assert statement in text, statement


def _shape_tables(share=5.05, avp_2m_share=0.012, avp_wait=2.5, avpf_wait=0.08, shared_supp=0.6,
                  draft_failure=0.07) -> dict[str, pd.DataFrame]:
    """Case tables as a run makes them, at figures like the full run's."""
    def total(rows):
        return pd.DataFrame(rows, columns=["session_bw_bps", "senders", "profiles", "rtcp_share_pct_mean"])

    t = {"case1_total": total([(2e6, "A1", "both AVPF", share), (2e6, "A1", "both AVP", avp_2m_share)]),
         "case2_total": total([(2e5, "A1+A2", "both AVPF", 5.0)]),
         "case3_total": pd.DataFrame({"topology": ["T-16"], "rtcp_share_pct_mean": [5.1]})}
    t["case4_feedback"] = pd.DataFrame(
        [(bw, "plr 0.01", prof, wanted, wait) for bw, wanted in ((2e6, 700.0), (2e4, 50.0))
         for prof, wait in (("AVP", avp_wait), ("AVPF", avpf_wait))],
        columns=["session_bw_bps", "loss", "profile", "fb_wanted_mean", "mwt_s_mean"])
    t["case5_feedback"] = pd.DataFrame(
        [("shared", m, 70.0, 70.0 * shared_supp) for m in ("A2", "A5")]
        + [("distributed", m, 75.0, 0.5) for m in ("A5", "A6")],
        columns=["losses", "member", "fb_wanted_mean", "fb_suppressed_mean"])
    for case, x, at_default, delay in ((7, "k", draft_failure, 0.09), (8, "l", 0.47, 0.12)):
        rows = [(sid, v, at_default if v == (1.0 if case == 7 else 0.5) else (0.1 if case == 7 else 0.5), delay)
                for sid in (1, 2, 3) for v in (0.5, 1.0)]
        t[f"case{case}_sender"] = pd.DataFrame(
            rows, columns=["scenario", x, "failure_rate_mean", "loss_report_delay_mean_s_mean"])
    return t


def test_each_shape_check_fails_alone_when_its_figure_says_otherwise():
    from mediasim.experiments.avpf_shapes import shape_checks

    base = shape_checks(_shape_tables())
    assert list(base.columns) == ["expected (study)", "measured", "holds"]
    assert len(base) == 6 and base["holds"].all(), base[~base["holds"]]
    statements = list(base["expected (study)"])
    for change, failing in [({"share": 5.4}, 0), ({"avp_2m_share": 0.5}, 1), ({"avp_wait": 4.0}, 2),
                            ({"avpf_wait": 0.5}, 3), ({"shared_supp": 0.2}, 4), ({"draft_failure": 0.45}, 5)]:
        c = shape_checks(_shape_tables(**change))
        assert list(c["expected (study)"]) == statements
        assert list(c.index[~c["holds"]]) == [failing], (change, c[~c["holds"]])


def test_case_tables_follow_the_studys_definitions_by_hand():
    from mediasim.experiments.avpf import tables

    rows = []
    # Case 1: two members' RTCP shares per replication; the session's is
    # their sum.
    for rep, (a1, a2) in enumerate(((2.0, 3.0), (2.5, 2.5))):
        for m, v in (("A1", a1), ("A2", a2)):
            rows.append({"case": 1, "session_bw_bps": 2e6, "senders": "A1", "profiles": "both AVPF", "member": m,
                         "replication": rep, "rtcp_share_pct": v})
    # Cases 2 and 3: a share far apart in two replications, its interval
    # clipped to 0-100%.
    for rep, v in enumerate((1.0, 99.0)):
        rows.append({"case": 2, "session_bw_bps": 2e5, "senders": "A1+A2", "profiles": "both AVPF", "member": "A1",
                     "replication": rep, "rtcp_share_pct": v})
        for cond, w in (("errors", v), ("congested", 5.0)):
            rows.append({"case": 3, "topology": "T-16", "condition": cond, "member": "A1", "replication": rep,
                         "rtcp_share_pct": w})
    # Case 4: the receiver A2's feedback only (A1 has no waiting time).
    for m, wanted in (("A1", 99.0), ("A2", 10.0)):
        rows.append({"case": 4, "session_bw_bps": 2e6, "loss": "plr 0.01", "profile": "AVPF", "member": m,
                     "replication": 0, "media_loss_rate": 0.01, "fb_wanted": wanted, "fb_sent": 4.0,
                     "fb_discarded": 1.0, "mwt_s": 0.5 if m == "A2" else float("nan")})
    # Case 5: members that wanted no feedback are left out.
    for m, wanted in (("A2", 10.0), ("A3", 0.0), ("A4", 1.0)):
        rows.append({"case": 5, "losses": "shared", "member": m, "replication": 0, "fb_wanted": wanted,
                     "fb_sent": 2.0, "fb_suppressed": 8.0, "fb_discarded": 0.0, "mwt_s": 0.1})
    # Case 7: suppression per role (members without a role left out), and
    # the sender A1's failure rate: losses reported more than once over
    # loss reports.
    for m, role, wanted, supp in (("A1", "", 0.0, 0.0), ("A2", "lossy", 10.0, 4.0), ("A3", "lossy", 10.0, 6.0),
                                  ("A4", "", 50.0, 50.0)):
        rows.append({"case": 7, "scenario": 1.0, "k": 1.0, "role": role, "member": m, "replication": 0,
                     "fb_wanted": wanted, "fb_suppressed": supp, "losses_multiply_reported": 3.0 if m == "A1" else 0.0,
                     "loss_reports": 12.0 if m == "A1" else 0.0, "loss_report_delay_mean_s": 0.2})
    # Case 8 sweeps l; two replications far apart: rates clipped to 0-1.
    for rep, (supp, multi) in enumerate(((0.0, 0.0), (10.0, 12.0))):
        for m, role in (("A1", ""), ("A2", "lossy")):
            rows.append({"case": 8, "scenario": 2.0, "l": 0.5, "role": role, "member": m, "replication": rep,
                         "fb_wanted": 10.0, "fb_suppressed": supp, "losses_multiply_reported": multi,
                         "loss_reports": 12.0, "loss_report_delay_mean_s": 0.2})
    # Cases 9 and 10: the receiver C's NEWPRED figures (10 has no loss rate).
    for case in (9, 10):
        for m, wait in (("B", 9.0), ("C", 0.3)):
            rows.append({"case": case, "session": "32:4:3", "session_kbps": 32.0, "link2_delay_ms": 10.0,
                         "p2p_dither": 0.1, "member": m, "replication": 0, "fb_wanted": 1.0, "recoveries": 1.0,
                         "recovery_time_mean_s": 0.2, "waiting_time_mean_s": wait, "fb_discarded": 0.0}
                        | ({"loss_rate": 0.01} if case == 9 else {}))
    t = tables(pd.DataFrame(rows))
    assert sorted(t) == ["case10_newpred", "case1_members", "case1_total", "case2_members", "case2_total",
                         "case3_members", "case3_total", "case4_feedback", "case5_feedback", "case7_sender",
                         "case7_suppression", "case8_sender", "case8_suppression", "case9_newpred"]
    total = t["case1_total"].iloc[0]
    assert (total["n"], total["rtcp_share_pct_mean"]) == (2, 5.0)
    assert list(t["case1_total"].columns[:3]) == ["session_bw_bps", "senders", "profiles"]
    assert list(t["case3_total"].columns[:2]) == ["topology", "condition"]
    assert t["case3_total"].set_index("condition")["rtcp_share_pct_mean"].to_dict() == {"congested": 5.0,
                                                                                       "errors": 50.0}
    for case in (2, 3):
        for name in (f"case{case}_total", f"case{case}_members"):
            r = t[name].iloc[-1]  # case 3: the errors' row
            assert (r["rtcp_share_pct_ci_low"], r["rtcp_share_pct_ci_high"]) == (0.0, 100.0), name
    assert list(t["case4_feedback"].columns[:3]) == ["session_bw_bps", "loss", "profile"]
    assert list(t["case9_newpred"].columns[:5]) == ["session", "session_kbps", "link2_delay_ms", "loss_rate",
                                                    "p2p_dither"]
    assert "loss_rate" not in t["case10_newpred"].columns
    assert t["case10_newpred"]["waiting_time_mean_s_mean"].tolist() == [0.3]
    s8, r8 = t["case8_suppression"].iloc[0], t["case8_sender"].iloc[0]
    assert (s8["scenario"], s8["l"], s8["suppression_rate_mean"]) == (2, 0.5, 0.5)
    assert (s8["suppression_rate_ci_low"], s8["suppression_rate_ci_high"]) == (0.0, 1.0)
    assert (r8["failure_rate_mean"], r8["failure_rate_ci_low"], r8["failure_rate_ci_high"]) == (0.5, 0.0, 1.0)
    members = t["case1_members"].set_index("member")["rtcp_share_pct_mean"]
    assert members.to_dict() == {"A1": 2.25, "A2": 2.75}
    assert t["case4_feedback"]["fb_wanted_mean"].tolist() == [10.0]
    assert t["case5_feedback"]["member"].tolist() == ["A2", "A4"]
    supp = t["case7_suppression"].set_index("role")["suppression_rate_mean"]
    assert supp.to_dict() == {"lossy": 0.5}
    sender = t["case7_sender"].iloc[0]
    assert (sender["scenario"], sender["k"], sender["failure_rate_mean"]) == (1, 1.0, 0.25)
    assert t["case9_newpred"]["waiting_time_mean_s_mean"].tolist() == [0.3]


def test_a_run_with_nothing_to_report_or_wait_for_still_writes_its_report(tmp_path):
    """No feedback errors (cases 5 and 7: no member wants to send feedback,
    no loss is reported) and no FTP flows (case 10: nothing waits): the
    figures no run had stay in the tables as empty, the statement with no
    figure is left out and the waiting times' plot keeps a linear axis,
    where these ended in KeyErrors and a log axis over zeros."""
    r = CliRunner().invoke(main, ["reproduce", "avpf", "--quick", "--case", "5", "--case", "7", "--case", "10",
                                  "--set", "feedback_byte_error_rate=0", "--set", "ftp_flows_per_side=0",
                                  "--out", str(tmp_path), "--workers", "2"])
    assert r.exit_code == 0, r.output
    sender = pd.read_csv(tmp_path / "case7_sender.csv")
    assert len(sender) > 0 and sender["loss_report_delay_mean_s_mean"].isna().all()
    assert (pd.read_csv(tmp_path / "case10_newpred.csv")["waiting_time_mean_s_mean"].fillna(0) == 0).all()
    report = (tmp_path / "report.md").read_text()
    assert "Shared losses let suppression work" not in report
    assert (tmp_path / "case10_dither_variants.png").stat().st_size > 0
