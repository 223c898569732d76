"""Sensitivity of the RMTP study's conclusions to the values it leaves
open (docs/experiments/rmtp.md, "Sensitivity").

Each chosen value is set low and high in turn, every other value at its
default, on a reduced grid: scenarios 2, 3, 5, 6, 7 and 8, all for 250 s.
Headlines, one per conclusion:
- ``dr_share_3``: the DRs' share of all repairs in scenario 3;
- ``premature_share_3``: premature retransmissions over the sender's in 3;
- ``p_prime_gap_3``: simulated P' less the analytic value in 3;
- ``delay_5_s``, ``delay_6_s``: receivers' mean delay in 5 (the slowest
  tree) and 6 (the longest delays);
- ``worst_subgroup_ratio``: throughput of scenario 7's subgroup as 4 over
  scenario 8's (below 1: the slow subgroup holds the session back);
- ``dr_share_5``, ``dr_repeats_5``: on the slow tree (5), the DR's share of
  all repairs (at most 1/3 when the sender retransmits at least twice what
  the DR repairs, the study's "the sender carries the repairs") and its
  repairs per packet lost in the subgroup.

Besides the open values, the receivers' HACK period, which the study
states (0.3 s), is set low and high with the DR's repair round following
it (``STATED_VALUES``): the study blames the DR's failure on the slow tree
on that period being "badly matched to the RTT".
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import one_at_a_time as oat
from . import rmtp

OPEN_VALUES: tuple[oat.OpenValue, ...] = (
    ("data_packet_bytes", 300, 700),
    ("repair_interval_ms", 100.0, 800.0),
    ("dr_repair_holdoff_ms", 300.0, 1000.0),
    ("dr_acknowledges", "subgroup", "custody"),
    ("queue_limit_packets", 20, 500),
    ("window_growth", "linear", "doubling"),
    ("initial_window", 1, 5),
    ("scenario6_sender_dr_delay_ms", 200.0, 300.0),
)
# Stated by the study, varied to test its explanation of the slow tree: (field, low, high), with the DR's
# repair round (chosen: one per receivers' HACK round) set to the same period.
STATED_VALUES: tuple[oat.OpenValue, ...] = (("rcv_hack_interval_ms", 150.0, 600.0),)
HEADLINES = ("dr_share_3", "premature_share_3", "p_prime_gap_3", "delay_5_s", "delay_6_s", "worst_subgroup_ratio",
             "dr_share_5", "dr_repeats_5")


def reduced(p: rmtp.Params) -> rmtp.Params:
    """The grid each setting runs."""
    return dataclasses.replace(p, scenarios=(2, 3, 5, 6, 7, 8), duration_s=250.0, duration_78_s=250.0,
                               full_length_78=False)


def sets(p: rmtp.Params) -> list[tuple[str, str, Any]]:
    """Every setting: the default, each open value low and high, then each
    stated value low and high with the repair round following it."""
    q = reduced(p)
    out = oat.settings(q, OPEN_VALUES)
    for name, low, high in STATED_VALUES:
        for label, v in (("low", low), ("high", high)):
            if v != getattr(q, name):
                out.append((name, f"{label} (stated): {v}, repair round too",
                            dataclasses.replace(q, **{name: v, "repair_interval_ms": v})))
    return out


def _dr_share(rows: pd.DataFrame, scenario: int) -> float:
    dr = rows[(rows["scenario"] == scenario) & (rows["role"] == "dr")]["retx"].sum()
    total = dr + rows[(rows["scenario"] == scenario) & (rows["role"] == "sender")]["retx"].sum()
    return dr / total if total else np.nan


def headline(rows: pd.DataFrame) -> dict[str, float]:
    """One replication's headlines from its members' rows."""
    def one(scenario: int, role: str, col: str, subgroup: int | None = None) -> pd.Series:
        d = rows[(rows["scenario"] == scenario) & (rows["role"] == role)]
        return d[d["subgroup"] == subgroup][col] if subgroup is not None else d[col]

    sender3 = rows[(rows["scenario"] == 3) & (rows["role"] == "sender")].iloc[0]
    sub3 = rows[(rows["scenario"] == 3) & (rows["role"] == "subgroup")].iloc[0]
    sub5 = rows[(rows["scenario"] == 5) & (rows["role"] == "subgroup")].iloc[0]
    sender5 = rows[(rows["scenario"] == 5) & (rows["role"] == "sender")].iloc[0]
    lost5 = sub5["p_prime_sim"] * sender5["new_sent"]  # distinct packets lost at the subgroup's error models
    return {
        "dr_share_3": _dr_share(rows, 3),
        "premature_share_3": sender3["premature_retx"] / sender3["retx"] if sender3["retx"] else np.nan,
        "p_prime_gap_3": sub3["p_prime_sim"] - sub3["p_prime_model"],
        "delay_5_s": float(one(5, "receiver", "delay_s").mean()),
        "delay_6_s": float(one(6, "receiver", "delay_s").mean()),
        "worst_subgroup_ratio": float(one(7, "receiver", "throughput_pps", 0).mean()
                                      / one(8, "receiver", "throughput_pps", 0).mean()),
        "dr_share_5": _dr_share(rows, 5),
        "dr_repeats_5": float(one(5, "dr", "retx").sum() / lost5) if lost5 else np.nan,
    }


def jobs(p: rmtp.Params) -> list[Any]:
    """Every run of the sensitivity settings, in the order ``run`` runs them."""
    return oat.set_jobs(sets(p), rmtp.jobs)[0]


def run(p: rmtp.Params, workers: int | None = None, progress: bool = True, cache: Any = None) -> pd.DataFrame:
    """Per setting: each headline's mean and 95% half-width over replications."""
    return oat.run_sets(sets(p), rmtp.jobs, rmtp.analyse, lambda part: part,
                        headline, HEADLINES, "rmtp sensitivity", workers, progress, cache)


def plot(d: pd.DataFrame, path: Path) -> None:
    oat.plot(d, HEADLINES, path)


def section(d: pd.DataFrame) -> list[str]:
    return oat.section(
        "Each chosen value set low and high in turn (everything else at its default) on a reduced grid: "
        "scenarios 2, 3, 5, 6, 7 and 8, 250 s each. Headlines (rmtp_sensitivity.py): the DRs' share of repairs, "
        "the premature share of the sender's retransmissions and the P' gap (simulated less analytic) in "
        "scenario 3; receivers' mean delay in 5 and 6; scenario 7's good subgroup's throughput over scenario "
        "8's; on the slow tree (5) the DR's share of repairs (at most 1/3: the sender retransmits at least twice "
        "what the DR repairs) and its repairs per packet lost in the subgroup. Each with its 95% half-width over "
        "the replications. The receivers' HACK period, which the study states, is also set low and high (the "
        "DR's repair round with it): the study blames the slow tree's DR on that period being badly matched to "
        "the RTT. Plot: `sensitivity.png`.",
        d, HEADLINES)
