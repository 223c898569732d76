"""Sensitivity of the AVPF study's conclusions to the values the study
leaves open (docs/experiments/avpf.md, "Sensitivity").

Each open value is set one at a time to a low and a high setting, every
other value at its default, and the cases that depend on it are re-run on a
reduced grid. Each case is summarised by its headline metric (RTCP share,
mean waiting time, suppression rate, failure rate, loss report delay,
NEWPRED waiting time). The same reduced study under two other seeds is the
yardstick: a change no larger than the seed-to-seed change is noise.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..reporting.plots import subplots
from ..reporting.tables import md_table
from ..sweep import run_many
from . import avpf
from . import one_at_a_time as oat

SHARE, TREES, FEEDBACK = (1, 2, 3), (3, 5, 6, 7, 8), (5, 6, 7, 8)


@dataclass(frozen=True)
class OpenValue:
    """An open value, its low and high settings, and the cases that use it."""

    name: str
    low: Any
    high: Any
    cases: tuple[int, ...]


OPEN_VALUES = (
    OpenValue("duration_s", 150.0, 600.0, (1, 2, 3, 4, 5, 6, 7, 8)),
    OpenValue("unicast_link_bps", 10e6, 1e9, (1, 2, 4)),
    OpenValue("unicast_delay_ms", 1.0, 100.0, (1, 2, 4)),
    OpenValue("payload_200k", 250, 1000, (1, 2, 5, 6, 7, 8)),
    OpenValue("byte_error_rate", 3e-6, 3e-5, (2, 3)),
    OpenValue("congestion_factor", 0.8, 0.97, (3,)),
    OpenValue("congestion_buffer_packets", 5, 50, (3,)),
    OpenValue("case4_load", 0.85, 0.93, (4,)),
    OpenValue("case4_link_factor", 1.5, 4.0, (4,)),
    OpenValue("case4_buffer_packets", 3, 10, (4,)),
    OpenValue("core_bps", 2e6, 100e6, TREES),
    OpenValue("core_delay_ms", 1.0, 20.0, TREES),
    OpenValue("mobile_bps", 0.5e6, 10e6, TREES),
    OpenValue("mobile_delay_ms", 30.0, 300.0, TREES),
    OpenValue("lowbw_bps", 64e3, 1e6, TREES),
    OpenValue("lowbw_delay_ms", 5.0, 100.0, TREES),
    OpenValue("fast_bps", 2e6, 100e6, (3, 5, 6)),
    OpenValue("fast_delay_ms", 2.0, 50.0, (3, 5, 6)),
    OpenValue("feedback_bw_bps", 64e3, 1e6, FEEDBACK),
    OpenValue("feedback_byte_error_rate", 3e-6, 3e-5, FEEDBACK),
    OpenValue("newpred_link_bps", 4e6, 100e6, (9, 10)),
    OpenValue("newpred_duration_s", 30.0, 120.0, (9, 10)),
)


def reduced(p: avpf.Params) -> avpf.Params:
    """The grid each setting runs: the study's cases with their sweeps
    thinned (k and l at 0.5, 1, 2; a small NEWPRED grid under the study's
    dither rule); replications as given (default 5)."""
    return dataclasses.replace(
        p, k_values=(0.5, 1.0, 2.0), newpred_delays_ms=(10.0, 100.0), newpred_loss_rates=(0.01, 0.1),
        newpred_sessions=("32:4:3", "128:10:6", "2000:30:9"), newpred_dithers=(p.newpred_dithers[0],))


def _mean(d: pd.DataFrame, col: str) -> float:
    return float(d[col].mean()) if len(d) else float("nan")


def headline(t: dict[str, pd.DataFrame]) -> dict[tuple[int, str], float]:
    """Each case's headline metrics from the study's summary tables."""
    out: dict[tuple[int, str], float] = {}
    for case in (1, 2):
        if f"case{case}_total" in t:
            d = t[f"case{case}_total"]
            out[case, "RTCP share, all AVPF (%)"] = _mean(d[d["profiles"] == "both AVPF"], "rtcp_share_pct_mean")
    if "case3_total" in t:
        out[3, "RTCP share (%)"] = _mean(t["case3_total"], "rtcp_share_pct_mean")
    if "case4_feedback" in t:
        d = t["case4_feedback"]
        for prof in ("AVPF", "AVP"):
            out[4, f"MWT {prof} (s)"] = _mean(d[d["profile"] == prof], "mwt_s_mean")
    for case in (5, 6):
        if f"case{case}_feedback" in t:
            d = t[f"case{case}_feedback"]
            d = d[d["losses"] == "shared"]
            out[case, "suppression rate, shared losses"] = float(d["fb_suppressed_mean"].sum() / d["fb_wanted_mean"].sum())
    for case in (7, 8):
        if f"case{case}_sender" in t:
            s = t[f"case{case}_sender"]
            out[case, "failure rate"] = _mean(s, "failure_rate_mean")
            out[case, "loss report delay (s)"] = _mean(s, "loss_report_delay_mean_s_mean")
    for case in (9, 10):
        if f"case{case}_newpred" in t:
            out[case, "NEWPRED waiting time (s)"] = _mean(t[f"case{case}_newpred"], "waiting_time_mean_s_mean")
    return out


@dataclass
class Setting:
    name: str  # the open value, or "seed"
    which: str  # "base", "low", "high"
    value: Any
    params: avpf.Params
    cases: tuple[int, ...]


def settings(p: avpf.Params, cases: tuple[int, ...]) -> list[Setting]:
    base = reduced(p)
    out = [Setting("(base)", "base", None, base, cases)]
    for v in OPEN_VALUES:
        run = tuple(c for c in v.cases if c in cases)
        if not run:
            continue
        for which, x in (("low", v.low), ("high", v.high)):
            out.append(Setting(v.name, which, x, dataclasses.replace(base, **{v.name: x}), run))
    for which, k in (("low", 1), ("high", 2)):
        out.append(Setting("seed", which, p.seed + 1000 * k,
                           dataclasses.replace(base, seed=p.seed + 1000 * k), cases))
    return out


def jobs(p: avpf.Params, cases: tuple[int, ...]) -> list[Any]:
    """Every run of the sensitivity settings, in the order ``run`` runs them."""
    return _setting_jobs(settings(p, cases))[0]


def _setting_jobs(todo: list[Setting]) -> tuple[list[Any], list[tuple[int, int]]]:
    """Each setting's jobs (its parameters checked first) in one list, and
    each setting's span of it."""
    for s in todo:
        oat.check_setting(s.params, f"{s.name}, {s.which}" + ("" if s.value is None else f": {s.value}"))
    out: list[Any] = []
    spans: list[tuple[int, int]] = []
    for s in todo:
        js = avpf.build_jobs(s.params, s.cases)
        spans.append((len(out), len(out) + len(js)))
        out += js
    return out, spans


def run(p: avpf.Params, cases: tuple[int, ...], workers: int | None = None, progress: bool = True,
        cache: Any = None) -> pd.DataFrame:
    """One row per (open value, case, metric): the base, low and high values
    and their relative change from the base."""
    todo = settings(p, cases)
    all_jobs, spans = _setting_jobs(todo)
    results = run_many(all_jobs, workers=workers, progress=progress, desc="avpf sensitivity runs", analyse=avpf.analyse,
                       cache=cache)
    metrics = []
    for s, (a, b) in zip(todo, spans):
        rows = pd.DataFrame([r for rs in results[a:b] for r in rs])
        metrics.append(headline(avpf.tables(rows)))
    return compare(todo, metrics)


def compare(todo: list[Setting], metrics: list[dict[tuple[int, str], float]]) -> pd.DataFrame:
    base = metrics[0]
    by_name: dict[str, dict[str, tuple[Any, dict]]] = {}
    for s, m in zip(todo[1:], metrics[1:]):
        by_name.setdefault(s.name, {})[s.which] = (s.value, m)
    default = todo[0].params
    rows = []
    for name, sides in by_name.items():
        (lo_v, lo), (hi_v, hi) = sides["low"], sides["high"]
        for key in sorted(set(lo) & set(hi) & set(base)):
            b = base[key]
            rows.append({"value": name, "default": getattr(default, name), "low": lo_v, "high": hi_v,
                         "case": key[0], "metric": key[1], "at_default": b, "at_low": lo[key], "at_high": hi[key],
                         "change_low_pct": _pct(lo[key], b), "change_high_pct": _pct(hi[key], b)})
    return pd.DataFrame(rows)


def _pct(x: float, base: float) -> float:
    return 100.0 * (x - base) / abs(base) if base else float("nan")


def plot(d: pd.DataFrame, out: Path) -> str:
    """One panel per (case, metric): the change at the low and high setting
    of each open value, the seed-to-seed change shaded as noise."""
    keys = list(dict.fromkeys(zip(d["case"], d["metric"])))
    cols = 3
    rows = (len(keys) + cols - 1) // cols
    fig, axes = subplots(rows, cols, figsize=(5.2 * cols, 0.32 * 10 * rows + 1), squeeze=False)
    for ax, (case, metric) in zip(axes.flat, keys):
        g = d[(d["case"] == case) & (d["metric"] == metric)]
        noise = g[g["value"] == "seed"][["change_low_pct", "change_high_pct"]].abs().to_numpy().max(initial=0.0)
        g = g[g["value"] != "seed"]
        y = range(len(g))
        ax.axvspan(-noise, noise, color="0.85", label="seed-to-seed")
        ax.barh([i - 0.2 for i in y], g["change_low_pct"], height=0.4, label="low")
        ax.barh([i + 0.2 for i in y], g["change_high_pct"], height=0.4, label="high")
        ax.set_yticks(list(y), g["value"], fontsize=6)
        ax.axvline(0, color="k", linewidth=0.8)
        ax.set_title(f"case {case}: {metric}", fontsize=8)
        ax.set_xlabel("change from the default (%)", fontsize=7)
        ax.tick_params(axis="x", labelsize=7)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "sensitivity.png", dpi=110)
    return "sensitivity.png"


def section(d: pd.DataFrame, p: avpf.Params) -> list[str]:
    """The report's sensitivity section: per metric, what moves it beyond
    the seed-to-seed change, then the full table."""
    md = ["## Sensitivity to the values the study leaves open", "",
          f"One value at a time at a low and a high setting, the rest at their defaults; reduced grid "
          f"({p.replications} replications, k and l at 0.5/1/2, a 3 x 2 x 2 NEWPRED grid). "
          "\"seed\" runs the default at two other seeds: changes within its size are noise.", ""]
    for (case, metric), g in d.groupby(["case", "metric"], sort=False):
        noise = g[g["value"] == "seed"][["change_low_pct", "change_high_pct"]].abs().to_numpy().max(initial=0.0)
        g = g[g["value"] != "seed"]
        if g.empty:
            continue
        big = g[g[["change_low_pct", "change_high_pct"]].abs().max(axis=1) > max(noise, 5.0)]
        movers = ", ".join(f"{r.value} ({r.change_low_pct:+.0f}% / {r.change_high_pct:+.0f}%)"
                           for r in big.itertuples()) or "none"
        md.append(f"- Case {case}, {metric} = {g['at_default'].iloc[0]:.4g} at the defaults "
                  f"(seed-to-seed {noise:.0f}%): moved beyond that and 5% by {movers}.")
    md += ["", md_table(d, 4), "", "Plot: `sensitivity.png`", ""]
    return md
