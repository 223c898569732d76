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
from .rmtp import Params, other_variant, variant

KEYS = ["agents", "scenario", "duration_s"]


AGENTS = {
    "original": "each DR's HACK acknowledges what every member of its subgroup has, so the sender retransmits "
                "what any member still misses; a DR repairs on every round what was asked for since the last",
    "custodial": "each DR acknowledges what it holds and can repair itself; it does not repair a packet again "
                 "within 1 s",
}


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
        # By run and subgroup, as every column here: the rows come in the
        # order the runs were given, not sorted.
        "dr_lost": sub["dr_lost"],
    }).reset_index()
    dr_total = g.groupby(by)[["dr_retx", "dr_lost"]].sum().rename(
        columns={"dr_retx": "dr_retx_total", "dr_lost": "dr_lost_total"})
    s = s.merge(dr_total.reset_index(), on=by)
    s["dr_share"] = s["dr_retx_total"] / (s["dr_retx_total"] + s["sender_retx"]).replace(0, np.nan)
    s["sender_retx_per_dr_loss"] = s["sender_retx"] / s["dr_lost_total"].replace(0, np.nan)
    s["throughput_pps"] = s["new_sent"] / s["duration_s"]
    # Distinct packets lost at the subgroup's error models, and the DR's
    # repairs per such loss.
    g = g.merge(s[by + ["new_sent"]], on=by)
    g["lost_distinct"] = g["p_prime_sim"] * g["new_sent"]
    g["dr_retx_per_loss"] = g["dr_retx"] / g["lost_distinct"].replace(0, np.nan)
    g = g.drop(columns="new_sent")
    return s, g


SENDER_METRICS = ["sender_retx", "premature_retx", "dr_lost_total", "sender_retx_per_dr_loss", "dr_retx_total",
                  "dr_share", "throughput_pps"]
SUBGROUP_METRICS = ["dr_retx", "dr_retx_per_loss", "dr_throughput_pps", "rcv_throughput_pps", "rcv_throughput_min_pps", "dr_delay_s",
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


def shape_checks(s: pd.DataFrame, g: pd.DataFrame, ceiling_pps: float) -> pd.DataFrame:
    """The study's expected shapes, each with what this run measured (``s``
    and ``g`` hold one DR variant)."""
    have = set(s["scenario"])
    rows = []

    def sv(m: str, k: int) -> float:
        return _get(s, m, k)

    if {1, 2} <= have:
        sh = [sv("dr_share", k) for k in (1, 2)]
        rows.append(("DR local recovery carries most repairs in good conditions",
                     f"DR share of repairs: scenario 1 {sh[0]:.2f}, 2 {sh[1]:.2f}", min(sh) > 0.5))
    if {2, 3} <= have:
        a, b = sv("dr_share", 2), sv("dr_share", 3)
        rows.append(("... and loses its grip as loss grows",
                     f"DR share: scenario 2 (1% at receivers) {a:.3f}, 3 (and 5% at the DR) {b:.3f}", b < a))
    if {3, 6} <= have:
        a, b = sv("dr_share", 3), sv("dr_share", 6)
        rows.append(("... and as delay grows",
                     f"DR share: scenario 3 {a:.3f}, 6 (same losses, longer delays) {b:.3f}", b < a - 0.01))
    if {7, 8} <= have:
        a, b = sv("dr_share", 8), sv("dr_share", 7)
        rows.append(("... and as heterogeneity grows",
                     f"DR share: scenario 8 (two subgroups as 4) {a:.3f}, 7 (one as 4, one as 5) {b:.3f}",
                     b < a - 0.01))
    if 2 in have:
        r = sv("sender_retx", 2)
        rows.append(("the sender retransmits even when only receivers lose packets (2)",
                     f"sender retransmissions in 2: {r:.0f}", r > 0))
    if 3 in have:
        r, lost, x = sv("sender_retx", 3), sv("dr_lost_total", 3), sv("sender_retx_per_dr_loss", 3)
        rows.append(("with 5% loss at the DR (3) the sender retransmits several times what the DR lost",
                     f"{r:.0f} retransmissions for {lost:.0f} packets lost at the DR: {x:.1f} times (at least 2)",
                     x >= 2))
    if {3, 6} <= have:
        a, b = sv("sender_retx", 3), sv("sender_retx", 6)
        rows.append(("more again with the longer delays of 6",
                     f"sender retransmissions: 3 {a:.0f}, 6 {b:.0f}", b > a))
    if {3, 4, 5, 6} <= have:
        retx = {k: sv("sender_retx", k) for k in (3, 4, 5, 6)}
        rows.append(("least on the fast tree (4)", ", ".join(f"{k}: {v:.0f}" for k, v in retx.items()),
                     min(retx, key=retx.__getitem__) == 4))
    if {2, 3} <= have:
        x2, x3 = _get(g, "dr_retx_per_loss", 2, 0), _get(g, "dr_retx_per_loss", 3, 0)
        rows.append(("a DR repairs many more packets than there were distinct losses",
                     f"DR repairs per packet lost in the subgroup: 2 {x2:.2f}, 3 {x3:.2f} (many: above 1.2)",
                     min(x2, x3) > 1.2))
    if {3, 4, 5} <= have:
        share = {k: sv("dr_share", k) for k in (3, 4, 5)}
        x3, x5 = _get(g, "dr_retx_per_loss", 3, 0), _get(g, "dr_retx_per_loss", 5, 0)
        rows.append(("in 5 the DR does not fulfil its local recovery role (its Rcv_hack_int badly matched to the RTT)",
                     f"DR share of repairs: 5 {share[5]:.2f} against 3 {share[3]:.2f} and 4 {share[4]:.2f} (same "
                     f"losses); DR repairs per packet lost in the subgroup: 5 {x5:.2f} against 3 {x3:.2f} (asked "
                     "again before its repair arrives)", share[5] < min(share[3], share[4]) - 0.01 and x5 > x3))
    if 5 in have:
        a, b = sv("sender_retx", 5), sv("dr_retx_total", 5)
        rows.append(("on the slow tree (5) the sender carries the repairs: it retransmits far more than the DR",
                     f"sender {a:.0f}, DR {b:.0f} (far more: at least twice)", a >= 2 * b))
    rows += _pace_and_delay_checks(s, g, ceiling_pps)
    return pd.DataFrame(rows, columns=["expected (study)", "measured", "holds"])


def _pace_and_delay_checks(s: pd.DataFrame, g: pd.DataFrame, ceiling_pps: float) -> list[tuple[str, str, bool]]:
    """The statements on throughput, the session's pace, delay and P', in
    the report's order (``shape_checks``' second half)."""
    have = set(s["scenario"])
    rows: list[tuple[str, str, bool]] = []

    def sv(m: str, k: int) -> float:
        return _get(s, m, k)

    single = [k for k in range(1, 7) if k in have]
    if {1, 2, 3, 4, 5} <= have:
        t = {k: sv("throughput_pps", k) for k in single}
        rows.append(("throughput: best in 1, a little lower in 2 (within 15%)",
                     f"1: {t[1]:.2f}, 2: {t[2]:.2f} packets/s", t[1] >= max(t.values()) - 1e-9
                     and 0.85 * t[1] <= t[2] < t[1]))
        rows.append(("... clearly lower with 5% loss at the DR (3), back near the ceiling on the fast tree (4)",
                     f"3: {t[3]:.2f}, 4: {t[4]:.2f} (ceiling {ceiling_pps:.1f}; clearly: 3 below 93% of 4; "
                     f"near: 4 above 85% of the ceiling)", t[3] < 0.93 * t[4] and t[4] >= 0.85 * ceiling_pps))
        rows.append(("... worst on the slow tree (5)", ", ".join(f"{k}: {v:.2f}" for k, v in t.items()),
                     min(t, key=t.__getitem__) == 5))
    if {7, 8} <= have:
        pairs = []
        for dur in sorted(set(g[g["scenario"] == 7]["duration_s"]) & set(g[g["scenario"] == 8]["duration_s"])):
            at = lambda sc, k: float(g[(g["scenario"] == sc) & (g["duration_s"] == dur) & (g["subgroup"] == k)]  # noqa: E731
                                     ["rcv_throughput_pps_mean"].iloc[0])
            pairs.append((dur, at(7, 0), at(8, 0), at(7, 1)))
        rows.append(("a session's throughput is set by its worst subgroup (7)",
                     "; ".join(f"{d:g} s: the subgroup as 4 gets {a:.2f} packets/s beside one as 5 (which gets "
                               f"{c:.2f}), {b:.2f} beside one as 4" for d, a, b, c in pairs),
                     bool(pairs) and all(a < 0.95 * b for _, a, b, _ in pairs)))
        if 4 in have:
            t4, t8 = _get(g, "rcv_throughput_pps", 4, 0), _get(g, "rcv_throughput_pps", 8, 0)
            rows.append(("two like subgroups (8) stay close to a single one (4)",
                         f"receivers: 4 {t4:.2f}, 8 {t8:.2f} packets/s (close: within 10%)", t8 >= 0.9 * t4))
    if {2, 3} <= have:
        d2, d3 = _get(g, "rcv_delay_s", 2, 0), _get(g, "rcv_delay_s", 3, 0)
        rows.append(("delay grows with loss", f"receivers' mean delay: scenario 2 {d2:.2f} s, 3 {d3:.2f} s", d3 > d2))
    if len(single) > 1 and 5 in have:
        delays = {k: _get(g, "rcv_delay_s", k, 0) for k in single}
        if 8 in have:
            delays[8] = _get(g, "rcv_delay_s", 8, 0)
        worst = max(delays, key=delays.__getitem__)
        lowest = sorted(delays, key=delays.__getitem__)[:2]
        rows.append(("delay is worst on the slowest tree (5)",
                     ", ".join(f"{k}: {v:.2f} s" for k, v in delays.items()), worst == 5))
        if {4, 8} <= set(delays):
            rows.append(("... and lowest in 4 and 8", f"lowest: {lowest[0]} and {lowest[1]}", set(lowest) == {4, 8}))
    inside = p_prime_table(g)
    inside = inside[inside["scenario"].isin([2, 3])].sort_values(["scenario", "duration_s", "subgroup"])
    if len(inside):
        rows.append(("P' matches 1 - (1-q)(1-r)^n (scenarios 2 and 3, the study's)",
                     ", ".join(f"{int(r.scenario)}: {r.p_prime_sim_mean:.4f} vs {r.p_prime_model_mean:.4f}"
                               for r in inside.itertuples()), bool(inside["model_inside_ci"].all())))
    return rows


def p_prime_table(g: pd.DataFrame) -> pd.DataFrame:
    t = g[["agents", "scenario", "duration_s", "subgroup", "n", "p_prime_model_mean", "p_prime_sim_mean", "p_prime_sim_ci_low",
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
    main = variant(p)
    both_s, both_g = t["sender"], t["subgroups"]
    s, g = both_s[both_s["agents"] == main], both_g[both_g["agents"] == main]
    ceiling = p.ws / (p.send_interval_ms / 1e3)
    plot_summary(s, g, out / "summary.png")
    members = t["members"][t["members"]["agents"] == main]
    plot_members(members, "throughput_pps", "throughput per DR and receiver (packets/s)",
                 out / "members_throughput.png")
    plot_members(members, "delay_s", "mean delay per DR and receiver (s)", out / "members_delay.png")
    md = [
        "# Tree-based reliable multicast (RMTP): the study's eight scenarios",
        "",
        "Study: shared/experiments/rmtp-multicast.md. Choices: docs/experiments/rmtp.md.",
        f"DR agents: {main} ({AGENTS[main]}).",
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
        md_table(shape_checks(s, g, ceiling)),
        "",
        "Plot: `summary.png` (retransmissions, throughput and delay per scenario).",
        "",
    ]
    other = variant(other_variant(p))
    os_, og = both_s[both_s["agents"] == other], both_g[both_g["agents"] == other]
    if len(os_):
        md += [
            f"## The other DR variant: {other}",
            "",
            f"The same runs with the {other} DRs ({AGENTS[other]}); `sender.csv` and `subgroups.csv` hold both "
            "(column `agents`).",
            "",
            md_table(ci_table(os_, KEYS, SENDER_METRICS)),
            "",
            md_table(shape_checks(os_, og, ceiling)),
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
