"""Sensitivity of the SVC study's conclusions to the values it leaves open
(docs/experiments/svc.md, "Sensitivity").

Each chosen value is set low and high in turn, every other value at its
default, and a reduced grid of the study re-run: the smallest, a middle
and the largest AF1 buffer for both transports, and the FEC comparison
(no flow and every flow with FEC) at the smallest buffer. Headlines, one
per conclusion of the study:
- ``tfrc_loss_pct``, ``ppacc_loss_pct``: video byte loss at the smallest
  buffer;
- ``loss_ratio_largest``: PPACC's video byte loss over TFRC's at the
  largest buffer, where PPACC's loss is closest to TFRC's;
- ``af12_minus_af11_pct``: AF12's byte loss less AF11's, averaged over
  transports and buffers (DiffServ protecting the base layer);
- ``throughput_ratio``: TFRC's video throughput over PPACC's, averaged over
  buffers;
- ``p99_ratio``: PPACC's 99th-percentile delay over TFRC's, averaged over
  buffers;
- ``fec_cut_pct``: media loss after decoding without FEC less with it, at
  the smallest buffer.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..reporting.tables import md_table
from . import one_at_a_time as oat
from . import svc

# WRED profiles (min, max as fractions of the buffer; max_p) for AF11, AF12,
# AF13: the precedences' ranges overlapping, and fully separated.
WRED_OVERLAPPING = ((0.3, 1.0, 0.1), (0.2, 0.8, 0.2), (0.1, 0.6, 0.3))
WRED_SEPARATED = ((0.7, 1.0, 0.02), (0.3, 0.7, 0.2), (0.05, 0.3, 0.5))

OPEN_VALUES: tuple[oat.OpenValue, ...] = (
    ("bottleneck_delay_ms", 5.0, 60.0),
    ("access_delay_ms", 1.0, 20.0),
    ("wred_w_q", 0.002, 0.2),
    ("wred_profiles", WRED_OVERLAPPING, WRED_SEPARATED),
    ("af2_buffer_packets", 20, 100),
    ("tcp_flavor", "reno", "newreno"),
    ("start_spread_s", 0.0, 5.0),
    ("duration_s", 30.0, 120.0),
    ("warmup_s", 5.0, 20.0),
    ("packet_bytes", 1000, 1500),
    ("svc_layer_scale", 0.5, 2.0),
    ("svc_size_cv", 0.1, 0.6),
    ("ppacc_eps_bps", 2e3, 20e3),
    ("ppacc_kappa_bps", 10e3, 100e3),
    ("ppacc_a_weight", 0.01, 0.125),
    ("ppacc_short_timer_ms", 533.0, 5000.0),
    ("ppacc_long_timer_max_gops", 4, 32),
    ("ppacc_feedback_ms", 30.0, 300.0),
    ("ppacc_capacity_spacing", False, True),
)
HEADLINES = ("tfrc_loss_pct", "ppacc_loss_pct", "loss_ratio_largest", "af12_minus_af11_pct", "throughput_ratio",
             "p99_ratio", "fec_cut_pct")


def reduced(p: svc.Params) -> svc.Params:
    """The grid each setting runs."""
    b = sorted(p.buffers)
    return dataclasses.replace(p, buffers=tuple(sorted({b[0], b[len(b) // 2], b[-1]})), transports=("tfrc", "ppacc"),
                               compare_shaping=False, fec_shares=(0, p.video_flows), fec_buffers=(b[0],))


def headline(rows: pd.DataFrame) -> dict[str, float]:
    """One replication's headlines from its runs' rows."""
    tr = rows[rows["part"] == "transports"].set_index(["transport", "buffer"])
    b0, b1 = min(tr.index.get_level_values("buffer")), max(tr.index.get_level_values("buffer"))
    by_t = {t: tr.loc[t] for t in ("tfrc", "ppacc")}
    fec = rows[rows["part"] == "fec"].set_index("fec_flows")
    tfrc_largest = by_t["tfrc"].loc[b1, "byte_loss"]
    return {
        "tfrc_loss_pct": 100 * by_t["tfrc"].loc[b0, "byte_loss"],
        "ppacc_loss_pct": 100 * by_t["ppacc"].loc[b0, "byte_loss"],
        # Undefined (NaN) when TFRC loses nothing there.
        "loss_ratio_largest": (by_t["ppacc"].loc[b1, "byte_loss"] / tfrc_largest if tfrc_largest > 0
                               else float("nan")),
        "af12_minus_af11_pct": 100 * float(np.nanmean(tr["byte_loss_af12"] - tr["byte_loss_af11"])),
        "throughput_ratio": float((by_t["tfrc"]["video_kbps"] / by_t["ppacc"]["video_kbps"]).mean()),
        "p99_ratio": float((by_t["ppacc"]["delay_p99_ms"] / by_t["tfrc"]["delay_p99_ms"]).mean()),
        "fec_cut_pct": 100 * (fec.loc[0, "residual_loss_plain_flows"] - fec.loc[fec.index.max(), "residual_loss_fec_flows"]),
    }


def jobs(p: svc.Params) -> list[Any]:
    """Every run of the sensitivity settings, in the order ``run`` runs them."""
    return oat.set_jobs(oat.settings(reduced(p), OPEN_VALUES), svc.jobs)[0]


def run(p: svc.Params, workers: int | None = None, progress: bool = True, cache: Any = None) -> pd.DataFrame:
    """Per setting: each headline's mean and 95% half-width over replications."""
    return oat.run_sets(oat.settings(reduced(p), OPEN_VALUES), svc.jobs, svc.analyse, lambda part: [part["row"]],
                        headline, HEADLINES, "svc sensitivity", workers, progress, cache)


def plot(d: pd.DataFrame, path: Path) -> None:
    oat.plot(d, HEADLINES, path)


def section(d: pd.DataFrame) -> list[str]:
    return [
        *oat.section(
            "Each chosen value set low and high in turn (everything else at its default) on a reduced grid: the "
            "smallest, a middle and the largest buffer for both transports, and FEC for no flow and for every flow "
            "at the smallest buffer. Headlines (svc_sensitivity.py): video byte loss of TFRC and of PPACC at the "
            "smallest buffer (%), PPACC's loss over TFRC's at the largest buffer, AF12's loss less AF11's "
            "(points), TFRC's throughput over PPACC's, PPACC's 99th-percentile delay over TFRC's, and the cut in "
            "media loss FEC brings at the smallest buffer (points); each with its 95% half-width over the replications. Plot: `sensitivity.png`.",
            d, HEADLINES),
        "Each conclusion of the study across the settings (in the mean over replications):",
        "",
        md_table(conclusions(d)),
        "",
    ]


def conclusions(d: pd.DataFrame) -> pd.DataFrame:
    """For each study conclusion, the settings under which it no longer
    holds (in the mean)."""
    tests: dict[str, Any] = {
        "PPACC loses less than TFRC at the smallest buffer": lambda r: r.ppacc_loss_pct < r.tfrc_loss_pct,
        "PPACC loses less than TFRC at the largest buffer": lambda r: r.loss_ratio_largest < 1,
        "AF12 loses more than AF11": lambda r: r.af12_minus_af11_pct > 0,
        "TFRC gets more throughput": lambda r: r.throughput_ratio > 1,
        "PPACC's delay tail is lighter": lambda r: r.p99_ratio < 1,
        "FEC lowers the loss after decoding": lambda r: r.fec_cut_pct > 0,
    }
    rows = []
    for name, holds in tests.items():
        fails = [f"{r.value} {r.setting}" for r in d.itertuples() if not holds(r)]
        rows.append({"conclusion": name, "holds in": f"{len(d) - len(fails)} of {len(d)} settings",
                     "fails under": "; ".join(fails) or "-"})
    return pd.DataFrame(rows)
