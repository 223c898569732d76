"""The RMTP study in quick mode (100 s, 2 replications): its tables and
plots, and the study's expected shapes that show at this length."""

import pandas as pd
import pytest

from mediasim.experiments import rmtp


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("rmtp")
    p = rmtp.Params().quick()
    rmtp.reproduce(p, out, workers=1, progress=False)
    return p, out


def test_quick_study_writes_its_tables_and_plots(quick):
    _, out = quick
    for f in ("report.md", "sender.csv", "subgroups.csv", "members.csv", "summary.png", "members_throughput.png",
              "members_delay.png", "replications.parquet"):
        assert (out / f).stat().st_size > 0
    m = pd.read_csv(out / "members.csv")
    # Every DR and receiver of every scenario has its row, for both DR
    # variants.
    assert len(m) == 2 * sum(len(rmtp.study_subgroups(rmtp.Params())[s]) * 51 for s in range(1, 9))
    assert set(m["agents"]) == {"original", "custodial"}


def _tables(out, agents):
    s = pd.read_csv(out / "sender.csv")
    g = pd.read_csv(out / "subgroups.csv")
    return (s[s["agents"] == agents].set_index("scenario"),
            g[g["agents"] == agents].set_index(["scenario", "subgroup"]))


def test_quick_study_shapes_with_the_original_agents(quick):
    """The original's behaviours that show at 100 s: the sender
    retransmits with losses at receivers only, several times what the DR
    lost with 5% loss there, more with longer delays, least on the fast
    tree; the DR repairs more than there were losses, and less of the
    repairs beside an unlike subgroup (7) than beside a like one (8); the
    slow tree is worst for throughput and delay."""
    _, out = quick
    s, g = _tables(out, "original")
    assert s.loc[2, "sender_retx_mean"] > 0 and s.loc[1, "dr_share_mean"] > 0.5
    assert s.loc[3, "sender_retx_mean"] >= 2 * s.loc[3, "dr_lost_total_mean"]
    retx = {k: s.loc[k, "sender_retx_mean"] for k in (3, 4, 5, 6)}
    assert min(retx, key=retx.get) == 4 and retx[6] > retx[3]
    assert g.loc[(2, 0), "dr_retx_per_loss_mean"] > 1.2
    assert s.loc[7, "dr_share_mean"] < s.loc[8, "dr_share_mean"] - 0.01
    thr = {k: s.loc[k, "throughput_pps_mean"] for k in range(1, 7)}
    assert max(thr, key=thr.get) == 1 and min(thr, key=thr.get) == 5
    delays = {k: g.loc[(k, 0), "rcv_delay_s_mean"] for k in range(1, 7)}
    assert max(delays, key=delays.get) == 5 and delays[4] < delays[2]
    # Scenario 7's subgroup as 4 runs at the slow one's pace; 8's two
    # identical subgroups get the same throughput.
    assert g.loc[(7, 0), "rcv_throughput_pps_mean"] < 0.8 * g.loc[(8, 0), "rcv_throughput_pps_mean"]
    a, b = g.loc[(8, 0), "rcv_throughput_pps_mean"], g.loc[(8, 1), "rcv_throughput_pps_mean"]
    assert abs(a - b) < 0.05 * a


def test_quick_study_shapes_with_custodial_drs(quick):
    """The custodial variant: with losses at receivers only the DR repairs
    everything and the sender nothing; each loss is repaired about once."""
    _, out = quick
    s, g = _tables(out, "custodial")
    for k in (1, 2):
        assert s.loc[k, "sender_retx_mean"] == 0 and s.loc[k, "dr_share_mean"] == 1
    assert s.loc[3, "dr_share_mean"] < s.loc[2, "dr_share_mean"]
    assert g.loc[(2, 0), "dr_retx_per_loss_mean"] < 1.1
    delays = {k: g.loc[(k, 0), "rcv_delay_s_mean"] for k in range(1, 7)}
    assert max(delays, key=delays.get) == 5
    # P' within the replications' interval of the model (scenarios 2, 3).
    for k in (2, 3):
        r = g.loc[(k, 0)]
        assert r["p_prime_sim_ci_low"] <= r["p_prime_model_mean"] <= r["p_prime_sim_ci_high"], k


def test_the_report_checks_the_study_statements_for_both_variants(quick):
    _, out = quick
    text = (out / "report.md").read_text()
    assert "DR agents: original" in text and "## The other DR variant: custodial" in text
    for statement in ("several times what the DR lost", "far more than the DR", "as heterogeneity grows"):
        assert text.count(statement) == 2, statement


def test_p_prime_model_is_the_study_formula():
    g = rmtp.study_subgroups(rmtp.Params())
    assert rmtp.p_prime_model(g[2][0], 50) == pytest.approx(1 - 0.99 ** 50)
    assert rmtp.p_prime_model(g[3][0], 50) == pytest.approx(1 - 0.95 * 0.99 ** 50)
    assert rmtp.p_prime_model(g[1][0], 50) == pytest.approx(0.10)


def test_scenario_6_values_follow_the_study_note_and_are_overridable():
    p = rmtp.Params()
    assert rmtp.study_subgroups(p)[6][0].sender_dr_delay_ms == 200
    assert rmtp.study_subgroups(p)[6][0].receiver_loss == 0.01
    q = p.with_overrides({"scenario6_sender_dr_delay_ms": "300", "scenario6_receiver_loss": "0.11"})
    g = rmtp.study_subgroups(q)[6][0]
    assert (g.sender_dr_delay_ms, g.receiver_loss) == (300, 0.11)


@pytest.mark.parametrize("name,value,fragment", [
    ("scenarios", "0,9", "scenarios must be 1..8"),
    ("window_growth", "cubic", "linear or doubling"),
    ("receivers_per_dr", "0", "at least 1"),
    ("dr_acknowledges", "all", "subgroup or custody"),
    ("scenario6_receiver_loss", "1.5", "scenario6_receiver_loss"),
])
def test_bad_study_parameters_are_named(name, value, fragment):
    with pytest.raises(ValueError, match=fragment):
        rmtp.Params().with_overrides({name: value})


def test_sensitivity_shows_custodial_drs_free_the_session_from_its_slow_subgroup(monkeypatch):
    # With the original agents the slow subgroup's unacknowledged packets
    # fill the sender's window with retransmissions for everyone; custodial
    # DRs acknowledge what they hold, and scenario 7's subgroup as 4 keeps
    # more of scenario 8's throughput.
    from mediasim.experiments import one_at_a_time as oat
    from mediasim.experiments import rmtp_sensitivity as sens

    monkeypatch.setattr(sens, "OPEN_VALUES", (("dr_acknowledges", "subgroup", "custody"),))
    monkeypatch.setattr(sens, "reduced", lambda p: rmtp.Params(scenarios=(3, 5, 6, 7, 8), duration_s=250.0,
                                                               duration_78_s=250.0, full_length_78=False,
                                                               replications=4))
    d = sens.run(rmtp.Params(), workers=2, progress=False)
    base = d[d["value"] == "default"].iloc[0]
    high = d[d["setting"].str.startswith("high")].iloc[0]
    noise = oat.noise(d, sens.HEADLINES)["worst_subgroup_ratio"]
    assert high["worst_subgroup_ratio"] > base["worst_subgroup_ratio"] + noise
    assert "dr_acknowledges" in "\n".join(sens.section(d))
