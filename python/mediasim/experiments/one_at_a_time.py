"""One-at-a-time sensitivity of a study's headlines to the values it leaves
open: each value set to a low and a high setting in turn, every other value
at its default, the study (or a reduced grid of it) re-run.

The yardstick is the replications' own spread: a change is beyond noise
when it exceeds the 95% interval of a difference of two means, sqrt(2)
times the default's confidence half-width.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..reporting.plots import subplots
from ..reporting.tables import md_table
from ..stats import mean_ci

OpenValue = tuple[str, Any, Any]  # (Params field, low, high)


def settings(p: Any, open_values: Sequence[OpenValue]) -> list[tuple[str, str, Any]]:
    """(value, setting, params) of every run set: the default, then each
    open value low and high (skipping the default's own setting)."""
    out = [("default", "-", p)]
    for name, low, high in open_values:
        for label, v in (("low", low), ("high", high)):
            if v != getattr(p, name):
                out.append((name, f"{label}: {v}", dataclasses.replace(p, **{name: v})))
    return out


def set_jobs(sets: list[tuple[str, str, Any]], jobs_of: Callable[[Any], list]
             ) -> tuple[list[Any], list[tuple[int, int]]]:
    """Every setting's jobs (``jobs_of`` its parameters, each checked
    first) in one list, and each setting's span of it."""
    jobs: list[Any] = []
    spans: list[tuple[int, int]] = []
    for value, setting, q in sets:
        check_setting(q, f"{value}, {setting}")
        js = jobs_of(q)
        spans.append((len(jobs), len(jobs) + len(js)))
        jobs += js
    return jobs, spans


def check_setting(q: Any, setting: str) -> None:
    """``q.check()``, its problems said with the ``setting`` whose
    parameters they are (a value the user set may suit the study's
    default yet not a setting's low or high)."""
    from .params import ParamsError

    try:
        q.check()
    except ParamsError as e:
        raise ParamsError(q.study, [f"{pr} (sensitivity setting {setting})" for pr in e.problems]) from None


def run_sets(sets: list[tuple[str, str, Any]], jobs_of: Callable[[Any], list], analyse: Callable,
             rows_of: Callable[[Any], list[dict[str, Any]]], headline: Callable[[pd.DataFrame], dict[str, float]],
             headlines: Sequence[str], desc: str, workers: int | None, progress: bool,
             cache: Any = None) -> pd.DataFrame:
    """Runs every setting's jobs in one pool; each replication's rows (from
    ``rows_of`` each job's analysis) give its headlines; then as
    ``summarise``."""
    from ..sweep import run_many

    jobs, spans = set_jobs(sets, jobs_of)
    parts = run_many(jobs, workers=workers, progress=progress, desc=desc, analyse=analyse, cache=cache)
    per_rep = []
    for a, b in spans:
        rows = pd.DataFrame([r for part in parts[a:b] for r in rows_of(part)])
        per_rep.append([headline(g) for _, g in rows.groupby("replication")])
    return summarise(sets, per_rep, headlines)


def summarise(sets: list[tuple[str, str, Any]], per_replication: list[list[dict[str, float]]],
              headlines: Sequence[str]) -> pd.DataFrame:
    """Per setting: each headline's mean and 95% half-width over the
    replications' headline values."""
    rows = []
    for (value, setting, _), reps in zip(sets, per_replication):
        d = pd.DataFrame(reps)
        row: dict[str, Any] = {"value": value, "setting": setting}
        for h in headlines:
            m, lo, hi = mean_ci(d[h].to_numpy())
            row[h], row[f"{h}_half"] = m, (hi - lo) / 2
        rows.append(row)
    return pd.DataFrame(rows)


def noise(d: pd.DataFrame, headlines: Sequence[str]) -> pd.Series:
    """Per headline: the change two means of this many replications show
    by chance (95%), sqrt(2) x the default's half-width."""
    base = d[d["value"] == "default"].iloc[0]
    return pd.Series({h: 2 ** 0.5 * base[f"{h}_half"] for h in headlines})


def plot(d: pd.DataFrame, headlines: Sequence[str], path: Path,
         title: Callable[[str], str] = str) -> None:
    """Each setting's change from the default per headline, noise shaded."""
    base = d[d["value"] == "default"].iloc[0]
    rest = d[d["value"] != "default"]
    fig, axes = subplots(1, len(headlines), figsize=(4 * len(headlines), 0.35 * len(rest) + 1.5), sharey=True)
    labels = [f"{r.value} {r.setting}" for r in rest.itertuples()]
    n = noise(d, headlines)
    for ax, h in zip(axes, headlines):
        ax.barh(labels, rest[h] - base[h])
        ax.axvline(0, color="k", lw=0.8)
        ax.axvspan(-n[h], n[h], color="grey", alpha=0.2, label="noise (95%)")
        ax.set_title(f"{title(h)} (default {base[h]:.3g})", fontsize=9)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def beyond_noise(d: pd.DataFrame, headlines: Sequence[str]) -> pd.DataFrame:
    """Per setting, the headlines it moved by more than noise, and by how much."""
    base = d[d["value"] == "default"].iloc[0]
    n = noise(d, headlines)
    moved = []
    for r in d[d["value"] != "default"].itertuples():
        big = [f"{h} {getattr(r, h) - base[h]:+.3g}" for h in headlines if abs(getattr(r, h) - base[h]) > n[h]]
        moved.append({"value": r.value, "setting": r.setting, "beyond noise": ", ".join(big) or "-"})
    return pd.DataFrame(moved)


def noise_line(d: pd.DataFrame, headlines: Sequence[str]) -> str:
    n = noise(d, headlines)
    return ("Changes beyond noise (larger than sqrt(2) x the default's half-width: "
            + ", ".join(f"{h} {v:.3g}" for h, v in n.items()) + "):")


def section(intro: str, d: pd.DataFrame, headlines: Sequence[str]) -> list[str]:
    """The report's section: what was varied (``intro``), every setting's
    headlines, then what moved beyond noise."""
    return ["## Sensitivity to the values the study leaves open", "", intro, "", md_table(d, 3), "",
            noise_line(d, headlines), "", md_table(beyond_noise(d, headlines)), ""]
