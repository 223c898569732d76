"""The RMCAT study's tables, plots and report (rmcat.py runs it).

RFC 8868's criteria per case, controller, one-way delay and queue, each a
mean over the replications with its 95% interval; the picture every RMCAT
paper shows (sending rate against the flow's share of the capacity over
time) per case; and the checks of the issue's expected shapes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..reporting.plots import subplots
from ..reporting.tables import ci_table, md_table
from ..stats import summarize
from .params import parameters_section
from .rmcat import CASE_NAMES, Params, cases, fair_share, legs, scaled

KEYS = ["case", "controller", "one_way_ms", "aqm"]
FLOW_METRICS = ["share_ratio", "settled_ratio", "settled_cv", "queuing_mean_ms", "queuing_p95_ms", "loss_pct",
                "converge_s", "rate_cv", "feedback_pct", "frame_delay_ms", "playout_delay_ms", "frames_late_pct",
                "freezes"]
RUN_METRICS = ["utilisation", "jain"]
SHOWN = ["share_ratio", "settled_ratio", "settled_cv", "utilisation", "queuing_mean_ms", "queuing_p95_ms", "loss_pct",
         "jain", "converge_s", "rate_cv", "feedback_pct", "frame_delay_ms", "playout_delay_ms", "freezes"]

CRITERIA = [
    ("share_ratio", "mean over the run of the flow's 1 s sending rate over its share (the bottleneck capacity over "
                    "the media flows sending then, at most R_max)"),
    ("settled_ratio", "the same over the second half of every stretch of constant share (without the transients "
                      "after a step)"),
    ("settled_cv", "coefficient of variation of the 1 s rate over the share in those same seconds: how far the "
                   "settled rate swings about its share (0: it holds it)"),
    ("utilisation", "bytes the forward bottleneck carried over what it could have carried"),
    ("queuing_mean_ms / queuing_p95_ms", "one-way delay over the flow's least (RFC 8868's queuing delay)"),
    ("loss_pct", "media packets lost"),
    ("jain", "Jain's index over the media flows' rates (cases with several flows)"),
    ("converge_s", "seconds from each change of the flow's share (a capacity step, a flow starting or stopping) "
                   "to the first second its rate is within 15% of the new share; steps it never reaches are "
                   "counted in `flows.csv` (unconverged_steps)"),
    ("rate_cv", "coefficient of variation of the 1 s rate over the second half of the flow's run (stability)"),
    ("feedback_pct", "feedback bytes over media payload bytes"),
    ("frame_delay_ms / playout_delay_ms / freezes", "the viewer's side: capture to each frame's last packet (RFC "
                                                    "8868's frame delay), capture to playout of the frames played, "
                                                    "and freezes (a gap over 5 s, such as 5.8's pause, is a pause, "
                                                    "not a freeze)"),
    ("frames_late_pct", "frames complete after their playout time, of every frame the receiver decided on (played, "
                        "late, lost, undecodable)"),
    ("resume_converge_s / resume_queue_peak_ms", "5.8: seconds from the resume to the first second the resumed flow "
                                                 "is within 15% of its share, and the bottleneck's largest queue "
                                                 "(as delay) in the 10 s after the resume"),
]
RESUME = ["resume_converge_s", "resume_queue_peak_ms"]
RUN_EXTRA = ["tcp_goodput_bps", "tcp_completion_s"] + RESUME


def per_replication(t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per run: the flows' figures averaged over its media flows, and the
    run's own."""
    flows = t["flows"]
    by = KEYS + ["replication"]
    f = flows.groupby(by)[FLOW_METRICS].mean().reset_index()
    return f.merge(t["runs"][by + RUN_METRICS + RUN_EXTRA], on=by)


def aggregate(t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    rep = per_replication(t)
    return summarize(rep, KEYS, FLOW_METRICS + RUN_METRICS + RUN_EXTRA,
                     bounds={"jain": (0.0, 1.0), "utilisation": (0.0, 1.0)})


def plot_case(p: Params, number: int, series: pd.DataFrame, path: Path) -> None:
    """Sending rate (1 s) of each flow against its share over time, one
    panel per controller (first replication, first delay, drop-tail)."""
    case = scaled(cases(p)[number], p.time_scale)
    s = series[(series["case"] == number) & (series["replication"] == 0) & (series["aqm"] == "droptail")]
    if s.empty:
        return
    s = s[s["one_way_ms"] == s["one_way_ms"].min()]
    ctls = [c for c in p.controllers if c in set(s["controller"])]
    fig, axes = subplots(1, len(ctls), figsize=(4.2 * len(ctls), 3.2), sharey=True, squeeze=False)
    t = np.arange(0, case.duration_s, 0.1)
    for ax, ctl in zip(axes[0], ctls):
        for name, g in s[s["controller"] == ctl].groupby("flow", sort=True):
            x, y = g["time_s"].to_numpy(), g["value"].to_numpy() / 1e6
            gap = np.flatnonzero(np.diff(x) > 1.5) + 1  # a pause: no line across it
            ax.plot(np.insert(x, gap, np.nan), np.insert(y, gap, np.nan), lw=1, label=f"{name}")
        if not case.trace:
            for backward in sorted({leg.backward for leg in legs(case)}):
                ax.step(t, fair_share(case, t, p, backward) / 1e6, where="post", color="k", lw=0.8,
                        ls="--" if backward else "-", label="share" + (" (backward)" if backward else ""))
        ax.set_title(ctl, fontsize=9)
        ax.set_xlabel("time (s)")
    axes[0][0].set_ylabel("sending rate (Mbit/s)")
    axes[0][-1].legend(fontsize=6, loc="upper right")
    fig.suptitle(CASE_NAMES[number], fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def shape_checks(a: pd.DataFrame, p: Params) -> pd.DataFrame:
    """The issue's expected shapes, checked on the runs: on case 5.1
    (drop-tail), each controller within 15% of its share on average,
    queuing under 100 ms (its own target at most: GCC and NADA aim lower,
    SCReAM at 100 ms), convergence after the steps, and no oscillation
    (the settled rate's coefficient of variation within the convergence
    band, 15%, at every one-way delay); 5.4's Jain index;
    5.8: the resumed flow back at its share; 5.6 reported whatever it is."""
    rows = []
    d = a[a["aqm"] == "droptail"]
    for ctl in p.controllers:
        c1 = d[(d["case"] == 1) & (d["controller"] == ctl)]
        if len(c1):
            share = float(c1["settled_ratio_mean"].mean())
            q = float(c1["queuing_mean_ms_mean"].max())
            rows.append({"check": f"5.1 {ctl}: settled rate within 15% of the share", "value": f"{share:.3f}",
                         "holds": bool(abs(share - 1) <= 0.15)})
            rows.append({"check": f"5.1 {ctl}: mean queuing delay under 100 ms", "value": f"{q:.1f} ms",
                         "holds": bool(q < 100)})
            conv = float(c1["converge_s_mean"].max())
            rows.append({"check": f"5.1 {ctl}: converges after the steps (mean s)", "value": f"{conv:.1f} s",
                         "holds": bool(np.isfinite(conv))})
            cv = float(c1["settled_cv_mean"].max())
            rows.append({"check": f"5.1 {ctl}: does not oscillate (settled rate's variation within "
                                  f"{p.converge_band:.0%} of the share)",
                         "value": f"{cv:.3f}", "holds": bool(cv <= p.converge_band)})
        c4 = d[(d["case"] == 4) & (d["controller"] == ctl)]
        if len(c4):
            j = float(c4["jain_mean"].min())
            rows.append({"check": f"5.4 {ctl}: self-fairness (Jain)", "value": f"{j:.3f}", "holds": bool(j > 0.9)})
        c8 = d[(d["case"] == 8) & (d["controller"] == ctl)]
        if len(c8):
            conv = float(c8["resume_converge_s_mean"].max())
            peak = float(c8["resume_queue_peak_ms_mean"].max())
            rows.append({"check": f"5.8 {ctl}: the resumed flow reaches its share (mean s; queue peak after)",
                         "value": f"{conv:.1f} s; {peak:.0f} ms", "holds": bool(np.isfinite(conv))})
        c6 = d[(d["case"] == 6) & (d["controller"] == ctl)]
        if len(c6):
            rows.append({"check": f"5.6 {ctl}: share against one long TCP flow (reported)",
                         "value": f"{float(c6['share_ratio_mean'].mean()):.3f}", "holds": "-"})
    return pd.DataFrame(rows)


def write(p: Params, t: dict[str, pd.DataFrame], out: Path, sens: pd.DataFrame | None = None) -> Path:
    """Tables (Parquet, CSV), plots (PNG) and report.md into ``out``."""
    for name in ("flows", "runs", "series"):
        t[name].to_parquet(out / f"{name}.parquet", index=False)
    t["flows"].to_csv(out / "flows.csv", index=False)
    a = aggregate(t)
    a.to_csv(out / "summary.csv", index=False)
    a.to_parquet(out / "summary.parquet", index=False)
    md = [
        "# Congestion control for interactive media: the IETF RMCAT test cases",
        "",
        "Study: shared/experiments/rmcat-test-cases.md. Choices: docs/experiments/rmcat.md. Controllers: "
        + ", ".join(p.controllers) + " (docs/models/gcc.md, nada.md, scream.md).",
        f"{p.replications} replications per case, controller, one-way delay and queue, seed {p.seed}; "
        "mean ± 95% Student-t half-width over the replications (each run's flows averaged first)."
        + (f" Every time in the cases is scaled by {p.time_scale:g} (quick mode)." if p.time_scale != 1 else ""),
        "",
        "## The criteria (RFC 8868)",
        "",
        md_table(pd.DataFrame(CRITERIA, columns=["column", "meaning"])),
        "",
    ]
    for number in p.cases:
        rows = a[a["case"] == number]
        if rows.empty:
            continue
        plot_case(p, number, t["series"], out / f"case{number}.png")
        extra = {6: ["tcp_goodput_bps"], 7: ["tcp_completion_s"], 8: RESUME}.get(number, [])
        md += [f"## Case {CASE_NAMES[number]}", "", md_table(ci_table(rows, KEYS[1:], SHOWN + extra)), "",
               f"Plot: `case{number}.png` (sending rate against the share, first replication, drop-tail).", ""]
    md += ["## Expected shapes", "", md_table(shape_checks(a, p)), ""]
    if sens is not None:
        from . import rmcat_sensitivity

        sens.to_csv(out / "sensitivity.csv", index=False)
        rmcat_sensitivity.plot(sens, out / "sensitivity.png")
        md += rmcat_sensitivity.section(sens)
    md += parameters_section(p)
    report = out / "report.md"
    report.write_text("\n".join(md))
    return report
