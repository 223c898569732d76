"""The one-at-a-time sensitivity runs every study's report uses: which
settings run, each headline's mean and 95% half-width over replications,
the noise yardstick (sqrt(2) times the default's half-width) and which
changes the report calls beyond it."""

import dataclasses
import math

import pandas as pd
import pytest

from mediasim.experiments import one_at_a_time as oat
from mediasim.reporting.tables import md_table


@dataclasses.dataclass(frozen=True)
class P:
    buffer: int = 20
    rate: float = 1.0
    name: str = "a"


def test_settings_are_the_default_then_each_value_low_and_high_alone():
    sets = oat.settings(P(), [("buffer", 5, 80), ("rate", 1.0, 2.0), ("name", "b", "c")])
    assert [(v, s) for v, s, _ in sets] == [("default", "-"), ("buffer", "low: 5"), ("buffer", "high: 80"),
                                            ("rate", "high: 2.0"), ("name", "low: b"), ("name", "high: c")]
    # Each set changes its own value only; a setting equal to the default
    # (rate's low) is not run twice.
    assert [q for _, _, q in sets] == [P(), P(buffer=5), P(buffer=80), P(rate=2.0), P(name="b"), P(name="c")]
    assert oat.settings(P(), []) == [("default", "-", P())]


def _summary() -> pd.DataFrame:
    sets = [("default", "-", None), ("buffer", "low: 5", None), ("buffer", "high: 80", None)]
    reps = [[{"loss": 1.0, "delay": 10.0}, {"loss": 2.0, "delay": 10.0}, {"loss": 3.0, "delay": 10.0}],
            [{"loss": 6.0, "delay": 10.0}, {"loss": 6.0, "delay": 12.0}, {"loss": 6.0, "delay": 14.0}],
            [{"loss": 2.0 + 2.4841, "delay": 9.0}, {"loss": 2.0 + 2.4841, "delay": 9.0},
             {"loss": 2.0 + 2.4841, "delay": 9.0}]]
    return oat.summarise(sets, reps, ["loss", "delay"])


def test_each_setting_gets_its_headlines_mean_and_half_width():
    d = _summary()
    assert list(d.columns) == ["value", "setting", "loss", "loss_half", "delay", "delay_half"]
    assert list(d["value"]) == ["default", "buffer", "buffer"] and list(d["setting"]) == ["-", "low: 5", "high: 80"]
    # 1, 2, 3: mean 2, half-width t(0.975, 2) s / sqrt(3) = 4.3027 / sqrt(3).
    assert d["loss"][0] == 2.0 and d["loss_half"][0] == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert d["delay"][1] == 12.0 and d["delay_half"][1] == pytest.approx(4.302653 * 2 / math.sqrt(3), rel=1e-6)
    assert d["delay_half"][0] == 0.0 and d["loss_half"][1] == 0.0


def test_noise_is_sqrt_2_times_the_defaults_half_width():
    d = _summary()
    n = oat.noise(d, ["loss", "delay"])
    assert list(n.index) == ["loss", "delay"]
    assert n["loss"] == pytest.approx(math.sqrt(2) * 4.302653 / math.sqrt(3), rel=1e-6)  # 3.513
    assert n["delay"] == 0.0
    # The default is found by its name, wherever its row is.
    assert oat.noise(d.iloc[::-1], ["loss"])["loss"] == n["loss"]


def test_changes_beyond_noise_are_named_with_their_size_and_sign():
    d = _summary()
    b = oat.beyond_noise(d, ["loss", "delay"])
    assert list(b.columns) == ["value", "setting", "beyond noise"]
    # Low: loss +4 (beyond 3.51), delay +2 (beyond 0); high: loss +2.48
    # (within), delay -1 (beyond 0).
    assert b.to_dict("records") == [
        {"value": "buffer", "setting": "low: 5", "beyond noise": "loss +4, delay +2"},
        {"value": "buffer", "setting": "high: 80", "beyond noise": "delay -1"}]
    # A change exactly at the noise is not beyond it; nothing moved is "-".
    at = d.copy()
    at.loc[1, "loss"] = at.loc[0, "loss"] + oat.noise(d, ["loss"])["loss"]
    assert oat.beyond_noise(at, ["loss"])["beyond noise"].tolist() == ["-", "-"]
    at.loc[1, "loss"] = at.loc[0, "loss"] - 1.001 * oat.noise(d, ["loss"])["loss"]
    assert oat.beyond_noise(at, ["loss"])["beyond noise"].tolist() == ["loss -3.52", "-"]


def test_the_report_section_gives_the_settings_the_yardstick_and_what_moved():
    d = _summary()
    assert oat.noise_line(d, ["loss", "delay"]) == (
        "Changes beyond noise (larger than sqrt(2) x the default's half-width: loss 3.51, delay 0):")
    s = oat.section("Each value low and high.", d, ["loss", "delay"])
    assert s[:4] == ["## Sensitivity to the values the study leaves open", "", "Each value low and high.", ""]
    assert s[4:] == [md_table(d, 3), "", oat.noise_line(d, ["loss", "delay"]), "",
                     md_table(oat.beyond_noise(d, ["loss", "delay"])), ""]
    # Figures to three significant digits.
    assert "| buffer  | low: 5" in s[4] and "|   4.48 |" in s[4] and "4.484" not in s[4]
    assert "loss +4, delay +2" in s[8]
