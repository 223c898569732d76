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
    # Every DR and receiver of every scenario has its row.
    assert len(m) == sum(len(rmtp.study_subgroups(rmtp.Params())[s]) * 51 for s in range(1, 9))


def test_quick_study_shapes(quick):
    _, out = quick
    s = pd.read_csv(out / "sender.csv").set_index("scenario")
    g = pd.read_csv(out / "subgroups.csv").set_index(["scenario", "subgroup"])
    # Losses at receivers only: the DR repairs everything, the sender nothing.
    for k in (1, 2):
        assert s.loc[k, "sender_retx_mean"] == 0 and s.loc[k, "dr_share_mean"] == 1
    # Losses at the DR too: the sender repairs some.
    assert s.loc[3, "dr_share_mean"] < s.loc[2, "dr_share_mean"]
    # Delay: worst on the slowest tree, and the fast tree of 4 below 2's.
    delays = {k: g.loc[(k, 0), "rcv_delay_s_mean"] for k in range(1, 7)}
    assert max(delays, key=delays.get) == 5
    assert delays[4] < delays[2]
    # P' within the replications' interval of the model (scenarios 2, 3).
    for k in (2, 3):
        r = g.loc[(k, 0)]
        assert r["p_prime_sim_ci_low"] <= r["p_prime_model_mean"] <= r["p_prime_sim_ci_high"], k
    # Scenario 8's two identical subgroups get the same throughput.
    a, b = g.loc[(8, 0), "rcv_throughput_pps_mean"], g.loc[(8, 1), "rcv_throughput_pps_mean"]
    assert abs(a - b) < 0.05 * a


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
    ("scenario6_receiver_loss", "1.5", "scenario6_receiver_loss"),
])
def test_bad_study_parameters_are_named(name, value, fragment):
    with pytest.raises(ValueError, match=fragment):
        rmtp.Params().with_overrides({name: value})


def test_sensitivity_shows_the_repair_holdoff_setting_how_far_a_slow_subgroup_holds_back(monkeypatch):
    # With every request answered at once (hold-off 0) a DR on the slow
    # tree repeats repairs that are still queued; its links stay full
    # longer and the other subgroup's throughput falls further below
    # scenario 8's.
    from mediasim.experiments import one_at_a_time as oat
    from mediasim.experiments import rmtp_sensitivity as sens

    monkeypatch.setattr(sens, "OPEN_VALUES", (("dr_repair_holdoff_ms", 0.0, 3000.0),))
    monkeypatch.setattr(sens, "reduced", lambda p: rmtp.Params(scenarios=(3, 5, 6, 7, 8), duration_s=250.0,
                                                               duration_78_s=250.0, full_length_78=False,
                                                               replications=2))
    d = sens.run(rmtp.Params(), workers=2, progress=False)
    base = d[d["value"] == "default"].iloc[0]
    low = d[d["setting"].str.startswith("low")].iloc[0]
    noise = oat.noise(d, sens.HEADLINES)["worst_subgroup_ratio"]
    assert low["worst_subgroup_ratio"] < base["worst_subgroup_ratio"] - noise
    assert "dr_repair_holdoff_ms" in "\n".join(sens.section(d))
