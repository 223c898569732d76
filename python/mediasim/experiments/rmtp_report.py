"""The RMTP study's tables, plots and report (rmtp.py runs it).

Every figure the report quotes is computed here from the runs; the
"expected shape" section checks the study's claims against them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..reporting.tables import ci_table, md_table
from ..stats import summarize
from .params import parameters_section
from .rmtp import Params

KEYS = ["scenario", "duration_s"]


def per_replication(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per run: the sender's figures; per run and subgroup: its DR's, its
    receivers' (mean, worst) and P'."""
    by = KEYS + ["replication"]
    s = rows[rows["role"] == "sender"][by + ["retx", "premature_retx", "new_sent"]].rename(
        columns={"retx": "sender_retx"})
    dr = rows[rows["role"] == "dr"].set_index(by + ["subgroup"])
    rc = rows[rows["role"] == "receiver"].groupby(by + ["subgroup"])
    sub = rows[rows["role"] == "subgroup"].set_index(by + ["subgroup"])
    g = pd.DataFrame({
        "dr_retx": dr["retx"], "dr_throughput_pps": dr["throughput_pps"], "dr_delay_s": dr["delay_s"],
        "rcv_throughput_pps": rc["throughput_pps"].mean(), "rcv_throughput_min_pps": rc["throughput_pps"].min(),
        "rcv_delay_s": rc["delay_s"].mean(), "rcv_delay_max_s": rc["delay_s"].max(),
        "p_prime_sim": sub["p_prime_sim"], "p_prime_any": sub["p_prime_any"], "p_prime_model": sub["p_prime_model"],
    }).reset_index()
    dr_total = g.groupby(by)["dr_retx"].sum().rename("dr_retx_total")
    s = s.merge(dr_total, on=by)
    s["dr_share"] = s["dr_retx_total"] / (s["dr_retx_total"] + s["sender_retx"]).replace(0, np.nan)
    s["throughput_pps"] = s["new_sent"] / s["duration_s"]
    return s, g


SENDER_METRICS = ["sender_retx", "premature_retx", "dr_retx_total", "dr_share", "throughput_pps"]
SUBGROUP_METRICS = ["dr_retx", "dr_throughput_pps", "rcv_throughput_pps", "rcv_throughput_min_pps", "dr_delay_s",
                    "rcv_delay_s", "rcv_delay_max_s", "p_prime_sim", "p_prime_any", "p_prime_model"]


def aggregate(rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    s, g = per_replication(rows)
    members = rows[rows["role"].isin(["dr", "receiver"])]
    return {
        "sender": summarize(s, KEYS, SENDER_METRICS, bounds={"dr_share": (0.0, 1.0)}),
        "subgroups": summarize(g, KEYS + ["subgroup"], SUBGROUP_METRICS,
                               bounds={"p_prime_sim": (0.0, 1.0), "p_prime_any": (0.0, 1.0)}),
        "members": summarize(members, KEYS + ["subgroup", "member", "role"], ["throughput_pps", "delay_s", "retx"]),
    }


def _label(r) -> str:
    return f"{int(r.scenario)}" + ("" if r.scenario not in (7, 8) else f" ({r.duration_s:g} s)")


def _bars(ax, labels, series: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    x = np.arange(len(labels))
    w = 0.8 / len(series)
    for j, (name, (mean, err)) in enumerate(series.items()):
        ax.bar(x + (j - (len(series) - 1) / 2) * w, mean, w, yerr=err, capsize=2, label=name)
    # Many bars: labels turned so that neighbours never overlap.
    ax.set_xticks(x, labels, fontsize=7, rotation=60 if len(labels) > 10 else 0,
                  ha="right" if len(labels) > 10 else "center")
    ax.legend(fontsize=7)


def _mh(t: pd.DataFrame, m: str) -> tuple[np.ndarray, np.ndarray]:
    """The mean and its error bars down to the interval's (clipped) low
    end and up to its high end."""
    mean = t[f"{m}_mean"].to_numpy()
    return mean, np.vstack([mean - t[f"{m}_ci_low"].to_numpy(), t[f"{m}_ci_high"].to_numpy() - mean])


def plot_summary(s: pd.DataFrame, g: pd.DataFrame, path: Path) -> None:
    from ..reporting.plots import subplots

    fig, axes = subplots(3, 1, figsize=(12, 10))
    _bars(axes[0], [_label(r) for r in s.itertuples()],
          {"sender": _mh(s, "sender_retx"), "DRs": _mh(s, "dr_retx_total"), "premature": _mh(s, "premature_retx")})
    axes[0].set_title("retransmissions per run")
    gl = [_label(r) + f"/{int(r.subgroup)}" for r in g.itertuples()]
    _bars(axes[1], gl, {"DR": _mh(g, "dr_throughput_pps"), "receivers": _mh(g, "rcv_throughput_pps")})
    axes[1].set_title("throughput (packets/s), per scenario/subgroup")
    _bars(axes[2], gl, {"DR": _mh(g, "dr_delay_s"), "receivers": _mh(g, "rcv_delay_s")})
    axes[2].set_title("mean delay (s), per scenario/subgroup")
    for ax in axes:
        ax.set_xlabel("scenario")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_members(m: pd.DataFrame, metric: str, title: str, path: Path) -> None:
    """One panel per run length of each scenario: a bar per DR and receiver."""
    from ..reporting.plots import subplots

    keys = sorted(set(zip(m["scenario"], m["duration_s"])))
    cols = 4
    rows = -(-len(keys) // cols)
    fig, axes = subplots(rows, cols, figsize=(4 * cols, 2.6 * rows), squeeze=False)
    for ax, (sc, dur) in zip(axes.flat, keys):
        d = m[(m["scenario"] == sc) & (m["duration_s"] == dur)]
        colors = ["tab:red" if r == "dr" else "tab:blue" for r in d["role"]]
        ax.bar(range(len(d)), d[f"{metric}_mean"], color=colors)
        ax.set_title(f"scenario {sc}, {dur:g} s (red: DRs)", fontsize=8)
        ax.set_xticks([])
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _get(t: pd.DataFrame, m: str, scenario: int, subgroup: int | None = None) -> float:
    d = t[t["scenario"] == scenario]
    d = d[d["duration_s"] == d["duration_s"].min()]
    if subgroup is not None:
        d = d[d["subgroup"] == subgroup]
    return float(d[f"{m}_mean"].iloc[0]) if len(d) else float("nan")


def shape_checks(s: pd.DataFrame, g: pd.DataFrame) -> pd.DataFrame:
    """The study's expected shapes, each with what this run measured."""
    have = set(s["scenario"])
    rows = []
    if {1, 2} <= have:
        sh = [_get(s, "dr_share", k) for k in (1, 2)]
        rows.append(("DR local recovery carries most repairs in good conditions",
                     f"DR share of repairs: scenario 1 {sh[0]:.2f}, 2 {sh[1]:.2f}", min(sh) > 0.5))
    if {2, 3} <= have:
        a, b = _get(s, "dr_share", 2), _get(s, "dr_share", 3)
        rows.append(("... and loses its grip as loss grows",
                     f"DR share: scenario 2 (1% at receivers) {a:.3f}, 3 (and 5% at the DR) {b:.3f}", b < a))
    if {3, 6} <= have:
        a, b = _get(s, "dr_share", 3), _get(s, "dr_share", 6)
        rows.append(("... and as delay grows",
                     f"DR share: scenario 3 {a:.3f}, 6 (same losses, longer delays) {b:.3f}", b < a - 0.01))
    if {7, 8} <= have:
        pairs = []
        for dur in sorted(set(g[g["scenario"] == 7]["duration_s"]) & set(g[g["scenario"] == 8]["duration_s"])):
            at = lambda sc, k: float(g[(g["scenario"] == sc) & (g["duration_s"] == dur) & (g["subgroup"] == k)]  # noqa: E731
                                     ["rcv_throughput_pps_mean"].iloc[0])
            pairs.append((dur, at(7, 0), at(8, 0), at(7, 1)))
        rows.append(("a session's throughput is set by its worst subgroup",
                     "; ".join(f"{d:g} s: the subgroup as 4 gets {a:.2f} packets/s beside one as 5 (which gets "
                               f"{c:.2f}), {b:.2f} beside one as 4" for d, a, b, c in pairs),
                     bool(pairs) and all(a < 0.95 * b for _, a, b, _ in pairs)))
    if {2, 3} <= have:
        d2, d3 = _get(g, "rcv_delay_s", 2, 0), _get(g, "rcv_delay_s", 3, 0)
        rows.append(("delay grows with loss", f"receivers' mean delay: scenario 2 {d2:.2f} s, 3 {d3:.2f} s", d3 > d2))
    single = [k for k in range(1, 7) if k in have]
    if len(single) > 1 and 5 in have:
        delays = {k: _get(g, "rcv_delay_s", k, 0) for k in single}
        worst = max(delays, key=delays.get)
        rows.append(("delay is worst on the slowest tree (scenario 5)",
                     ", ".join(f"{k}: {v:.2f} s" for k, v in delays.items()), worst == 5))
    inside = p_prime_table(g)
    inside = inside[inside["scenario"].isin([2, 3])]
    if len(inside):
        rows.append(("P' matches 1 - (1-q)(1-r)^n (scenarios 2 and 3, the study's)",
                     ", ".join(f"{int(r.scenario)}: {r.p_prime_sim_mean:.4f} vs {r.p_prime_model_mean:.4f}"
                               for r in inside.itertuples()), bool(inside["model_inside_ci"].all())))
    return pd.DataFrame(rows, columns=["expected (study)", "measured", "holds"])


def p_prime_table(g: pd.DataFrame) -> pd.DataFrame:
    t = g[["scenario", "duration_s", "subgroup", "n", "p_prime_model_mean", "p_prime_sim_mean", "p_prime_sim_ci_low",
           "p_prime_sim_ci_high", "p_prime_any_mean"]].copy()
    t["model_inside_ci"] = (t["p_prime_model_mean"] >= t["p_prime_sim_ci_low"] - 1e-12) & (
        t["p_prime_model_mean"] <= t["p_prime_sim_ci_high"] + 1e-12)
    return t


def write(p: Params, rows: pd.DataFrame, out: Path, sens: pd.DataFrame | None = None) -> Path:
    """Tables (Parquet, CSV), plots (PNG) and report.md into ``out``."""
    rows.to_parquet(out / "replications.parquet", index=False)
    t = aggregate(rows)
    for name, df in t.items():
        df.to_csv(out / f"{name}.csv", index=False)
        df.to_parquet(out / f"{name}.parquet", index=False)
    s, g = t["sender"], t["subgroups"]
    plot_summary(s, g, out / "summary.png")
    plot_members(t["members"], "throughput_pps", "throughput per DR and receiver (packets/s)",
                 out / "members_throughput.png")
    plot_members(t["members"], "delay_s", "mean delay per DR and receiver (s)", out / "members_delay.png")
    md = [
        "# Tree-based reliable multicast (RMTP): the study's eight scenarios",
        "",
        "Study: shared/experiments/rmtp-multicast.md. Choices: docs/experiments/rmtp.md.",
        f"{p.replications} replications per scenario, seed {p.seed}; mean ± 95% Student-t half-width. "
        f"Scenarios 1-6 run {p.duration_s:g} s; 7 and 8 run {p.duration_78_s:g} s as in the study"
        + (f", and {p.duration_s:g} s." if p.full_length_78 else "."),
        "",
        "## Sender: retransmissions and throughput",
        "",
        "sender_retx: the sender's retransmissions (premature_retx of them for packets not yet covered by a HACK "
        "and never reported missing); dr_retx_total: local repairs by the DRs; dr_share: the DRs' part of all "
        "repairs; throughput: new packets per second.",
        "",
        md_table(ci_table(s, KEYS, SENDER_METRICS)),
        "",
        "## Subgroups: DR and receivers",
        "",
        "Throughput: packets delivered in order per second over the whole run; delay: from the first "
        "transmission to in-order delivery. rcv_*: the mean over the subgroup's receivers (min / max: the "
        "worst one). Per member: `members.csv`, `members_throughput.png`, `members_delay.png`.",
        "",
        md_table(ci_table(g, KEYS + ["subgroup"], SUBGROUP_METRICS[:-3])),
        "",
        "## P': at least one loss indication per packet at the DR",
        "",
        "P' = 1 - (1 - q)(1 - r)^n (the study's formula; q the DR's loss, r each receiver's, n receivers) "
        "against the share of packets whose first transmission was lost at the DR's or one of its "
        "receivers' error models (from the runs' drop logs); p_prime_any also counts first transmissions "
        "lost in the subgroup's link queues, which the formula leaves out.",
        "",
        md_table(p_prime_table(g), 4),
        "",
        "## The study's expected shapes",
        "",
        md_table(shape_checks(s, g)),
        "",
        "Plot: `summary.png` (retransmissions, throughput and delay per scenario).",
        "",
    ]
    if sens is not None:
        from . import rmtp_sensitivity

        sens.to_csv(out / "sensitivity.csv", index=False)
        rmtp_sensitivity.plot(sens, out / "sensitivity.png")
        md += rmtp_sensitivity.section(sens)
    md += [
        *parameters_section(p),
    ]
    report = out / "report.md"
    report.write_text("\n".join(md))
    return report
