"""The SVC study's tables, plots and report (svc.py runs it).

Every figure the report's text quotes is computed here from the runs; the
"expected shape" section checks each of the study's claims against them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..reporting.tables import ci_table, md_table
from ..stats import summarize
from .params import parameters_section
from .svc import Params

METRICS = ["byte_loss", "byte_loss_af11", "byte_loss_af12", "video_kbps", "tcp_kbps", "delay_p50_ms",
           "delay_p99_ms", "decodable_share"]
FEC_METRICS = ["media_loss_fec_flows", "repair_loss_fec_flows", "residual_loss_fec_flows",
               "residual_model_fec_flows", "residual_loss_plain_flows", "goodput_kbps_fec_flows",
               "goodput_kbps_plain_flows", "byte_loss", "byte_loss_af13", "video_kbps", "tcp_kbps",
               "decodable_share"]
RATIOS = {m: (0.0, 1.0) for m in ("byte_loss", "byte_loss_af11", "byte_loss_af12", "byte_loss_af13",
                                   "decodable_share", "media_loss_fec_flows", "repair_loss_fec_flows",
                                   "residual_loss_fec_flows", "residual_model_fec_flows",
                                   "residual_loss_plain_flows")}


def aggregate(rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Mean and 95% interval per configuration of each part."""
    tr = rows[rows["part"] == "transports"]
    fec = rows[rows["part"] == "fec"]
    return {"transports": summarize(tr, ["transport", "buffer"], METRICS, bounds=RATIOS),
            "fec": summarize(fec, ["fec_flows", "buffer"], FEC_METRICS, bounds=RATIOS)}


def _errorbar(ax, g: pd.DataFrame, x: str, m: str, scale: float = 1.0, **kw) -> None:
    mean = g[f"{m}_mean"] * scale
    ax.errorbar(g[x], mean, yerr=[mean - g[f"{m}_ci_low"] * scale, g[f"{m}_ci_high"] * scale - mean],
                marker="o", capsize=3, **kw)


def plot_losses(t: pd.DataFrame, path: Path) -> None:
    from ..reporting.plots import subplots

    fig, axes = subplots(1, 3, figsize=(12, 3.5), sharey=True)
    for ax, m, title in zip(axes, ("byte_loss", "byte_loss_af11", "byte_loss_af12"), ("all video", "AF11", "AF12")):
        for tp, g in t.groupby("transport"):
            _errorbar(ax, g, "buffer", m, 100, label=tp)
        ax.set_title(f"byte loss ratio, {title}")
        ax.set_xlabel("AF1 buffer (packets)")
    axes[0].set_ylabel("%")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_throughput(t: pd.DataFrame, path: Path) -> None:
    from ..reporting.plots import subplots

    fig, axes = subplots(1, 2, figsize=(9, 3.5))
    for ax, m, title in zip(axes, ("video_kbps", "delay_p99_ms"),
                            ("throughput per video flow (kbit/s)", "99th percentile of video delay (ms)")):
        for tp, g in t.groupby("transport"):
            _errorbar(ax, g, "buffer", m, label=tp)
        ax.set_title(title)
        ax.set_xlabel("AF1 buffer (packets)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_delays(delays: dict[tuple[str, int], np.ndarray], path: Path) -> None:
    from ..reporting.plots import subplots

    keys = sorted(delays)
    fig, ax = subplots(figsize=(max(6, len(keys) * 0.6), 4))
    ax.boxplot([delays[k] for k in keys], whis=(1, 99), showfliers=False)
    ax.set_xticks(range(1, len(keys) + 1), [f"{t}\n{b}" for t, b in keys], fontsize=7)
    ax.set_ylabel("one-way delay (ms)")
    ax.set_title("video one-way delay, all replications (box: quartiles; whiskers: 1st and 99th percentiles)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_fec(f: pd.DataFrame, path: Path) -> None:
    from ..reporting.plots import subplots

    fig, axes = subplots(1, 3, figsize=(13, 3.5))
    for k, g in f[f["fec_flows"] > 0].groupby("fec_flows"):
        line = axes[0].plot(g["buffer"], g["residual_model_fec_flows_mean"] * 100, ls="--")[0]
        _errorbar(axes[0], g, "buffer", "residual_loss_fec_flows", 100, color=line.get_color(),
                  label=f"{k} flows with FEC")
    axes[0].set_title("media loss after decoding, FEC flows (%)\n(dashed: analytic, independent losses)",
                      fontsize=9)
    for k, g in f.groupby("fec_flows"):
        if g["residual_loss_plain_flows_mean"].notna().any():
            _errorbar(axes[1], g, "buffer", "residual_loss_plain_flows", 100, label=f"{k} flows with FEC")
        _errorbar(axes[2], g, "buffer", "tcp_kbps", label=f"{k} flows with FEC")
    axes[1].set_title("media loss of the flows without FEC (%)", fontsize=9)
    axes[2].set_title("throughput per TCP flow (kbit/s)", fontsize=9)
    for ax in axes:
        ax.set_xlabel("AF1 buffer (packets)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


PCT = {m: 100.0 for m in RATIOS}


def _at(t: pd.DataFrame, transport: str, buffer: int, m: str) -> float:
    r = t[(t["transport"] == transport) & (t["buffer"] == buffer)]
    return float(r[f"{m}_mean"].iloc[0]) if len(r) else float("nan")


def shape_checks(t: pd.DataFrame) -> pd.DataFrame:
    """The study's expected shapes, each with what this run measured."""
    if not {"tfrc", "ppacc"} <= set(t["transport"]):
        return pd.DataFrame()
    bs = sorted(t["buffer"].unique())
    b0 = bs[0]
    lt, lp = _at(t, "tfrc", b0, "byte_loss"), _at(t, "ppacc", b0, "byte_loss")
    d11 = _at(t, "tfrc", b0, "byte_loss_af11") - _at(t, "ppacc", b0, "byte_loss_af11")
    d12 = _at(t, "tfrc", b0, "byte_loss_af12") - _at(t, "ppacc", b0, "byte_loss_af12")
    more = [int(b) for b in bs if _at(t, "tfrc", b, "byte_loss") > _at(t, "ppacc", b, "byte_loss")]
    protected = (t["byte_loss_af11_mean"] <= t["byte_loss_af12_mean"]).sum()
    thr = [_at(t, "tfrc", b, "video_kbps") / _at(t, "ppacc", b, "video_kbps") for b in bs]
    p99 = [_at(t, "ppacc", b, "delay_p99_ms") / _at(t, "tfrc", b, "delay_p99_ms") for b in bs]
    p50 = [_at(t, "ppacc", b, "delay_p50_ms") / _at(t, "tfrc", b, "delay_p50_ms") for b in bs]
    rows = [
        ("TFRC loses far more video bytes than PPACC with small buffers",
         f"at {b0} packets {lt:.2%} against {lp:.2%} ({lt / lp:.1f}x); TFRC loses more at buffers {', '.join(map(str, more)) or 'none'}",
         lt > 2 * lp),
        ("... especially in AF12", f"difference at {b0} packets: AF12 {d12:+.2%}, AF11 {d11:+.2%}", d12 > d11),
        ("DiffServ protects the base layer for both",
         f"AF11 loss at most AF12's in {protected} of {len(t)} configurations", protected == len(t)),
        ("TFRC gets somewhat more throughput",
         f"TFRC / PPACC video throughput {min(thr):.2f}-{max(thr):.2f} across buffers (mean {np.mean(thr):.2f}; "
         f"TFRC ahead at {sum(x > 1 for x in thr)} of {len(thr)})", float(np.mean(thr)) > 1.0),
        ("PPACC has lower delay with a lighter tail",
         f"PPACC / TFRC: median {min(p50):.2f}-{max(p50):.2f}, 99th percentile {min(p99):.2f}-{max(p99):.2f}",
         max(p99) < 1.0 and max(p50) < 1.0),
    ]
    return pd.DataFrame(rows, columns=["expected (study)", "measured", "holds"])


def fec_checks(f: pd.DataFrame) -> pd.DataFrame:
    """The FEC part's claims, each with what this run measured."""
    if f.empty or 0 not in set(f["fec_flows"]) or f["fec_flows"].max() == 0:
        return pd.DataFrame()
    full = f["fec_flows"].max()
    by = f.set_index(["fec_flows", "buffer"])
    bs = sorted(f["buffer"].unique())
    gain = {b: by.loc[(0, b), "residual_loss_plain_flows_mean"] - by.loc[(full, b), "residual_loss_fec_flows_mean"]
            for b in bs}
    mixed = [k for k in sorted(f["fec_flows"].unique())
             if 0 < k < full and pd.notna(by.loc[(k, bs[0]), "residual_loss_plain_flows_mean"])]

    def half(k: int, b: int) -> float:
        r = by.loc[(k, b)]
        return (r["residual_loss_plain_flows_ci_high"] - r["residual_loss_plain_flows_ci_low"]) / 2

    # A rise counts as harm beyond noise when it exceeds the 95% interval of
    # the difference of the two means.
    harm = {k: [(by.loc[(k, b), "residual_loss_plain_flows_mean"] - by.loc[(0, b), "residual_loss_plain_flows_mean"],
                 (half(k, b) ** 2 + half(0, b) ** 2) ** 0.5) for b in bs] for k in mixed}
    tcp = [by.loc[(full, b), "tcp_kbps_mean"] / by.loc[(0, b), "tcp_kbps_mean"] for b in bs]
    rows = [
        ("FEC lowers the media loss after decoding",
         ", ".join(f"{b}: {by.loc[(0, b), 'residual_loss_plain_flows_mean']:.2%} -> "
                   f"{by.loc[(full, b), 'residual_loss_fec_flows_mean']:.2%}" for b in bs), min(gain.values()) > 0),
        ("the benefit is largest with small router buffers",
         f"reduction (percentage points) per buffer: " + ", ".join(f"{b}: {100 * g:.2f}" for b, g in gain.items()),
         max(gain, key=gain.get) == bs[0]),
        ("the overhead does not raise the loss of flows without FEC",
         "; ".join(f"{k} flows with FEC: change " + ", ".join(f"{100 * h:+.2f} (±{100 * n:.2f})" for h, n in hs)
                   + " points" for k, hs in harm.items()) or "no mixed configuration run",
         all(h <= n for hs in harm.values() for h, n in hs) if harm else False),
        ("TCP (another class) is not harmed",
         f"TCP throughput with {full} FEC flows / without: {min(tcp):.2f}-{max(tcp):.2f}", min(tcp) > 0.95),
    ]
    return pd.DataFrame(rows, columns=["claim", "measured", "holds"])


def model_gap(f: pd.DataFrame) -> str:
    """How far the simulated residual loss is from the independent-loss
    model, over the configurations with FEC."""
    g = f[f["fec_flows"] > 0]
    if g.empty:
        return ""
    r = (g["residual_loss_fec_flows_mean"] / g["residual_model_fec_flows_mean"]).replace(np.inf, np.nan).dropna()
    if r.empty:
        return ""
    return (f"Simulated over analytic residual loss: {r.min():.2f}-{r.max():.2f}x (median {r.median():.2f}). "
            "The model takes each packet's loss as independent, with the measured media and repair loss rates; "
            "a WRED queue drops in bursts when it overflows, so losses within a block are correlated and a "
            "ratio above 1 measures that correlation.")


def write(p: Params, rows: pd.DataFrame, delays: dict, out: Path, sens: pd.DataFrame | None = None) -> Path:
    """Tables (Parquet, CSV), plots (PNG) and report.md into ``out``."""
    rows.to_parquet(out / "replications.parquet", index=False)
    tables = aggregate(rows)
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
        df.to_parquet(out / f"{name}.parquet", index=False)
    t, f = tables["transports"], tables["fec"]
    plot_losses(t, out / "losses.png")
    plot_throughput(t, out / "throughput_delay.png")
    plot_delays(delays, out / "delays.png")
    if not f.empty:
        plot_fec(f, out / "fec.png")
    quart = pd.DataFrame([{"transport": k[0], "buffer": k[1], "packets": len(v),
                           **{f"p{q}_ms": float(np.percentile(v, q)) for q in (1, 25, 50, 75, 99)}}
                          for k, v in sorted(delays.items())])
    quart.to_csv(out / "delay_quantiles.csv", index=False)
    md = [
        "# Scalable video over DiffServ: TFRC against PPACC, and FEC",
        "",
        "Study: shared/experiments/svc-ppacc-tfrc.md. Choices: docs/experiments/svc.md.",
        f"{p.replications} replications per configuration, seed {p.seed}, {p.duration_s:g} s runs with the first "
        f"{p.warmup_s:g} s left out; mean ± 95% Student-t half-width. Loss ratios in %.",
        "",
        "## TFRC and PPACC across AF1 buffer sizes",
        "",
        md_table(ci_table(t, ["transport", "buffer"], METRICS, PCT)),
        "",
        "Plots: `losses.png` (byte loss ratio: all video, AF11, AF12), `throughput_delay.png` (throughput per "
        "video flow, 99th percentile of delay), `delays.png` (delay box plots pooled over replications).",
        "",
        "One-way delay of the video packets, pooled over replications (ms):",
        "",
        md_table(quart, 4),
        "",
        "### The study's expected shapes",
        "",
        md_table(shape_checks(t)),
        "",
    ]
    if not f.empty:
        md += [
            f"## FEC: RS({p.fec_n}, {p.fec_k}) at AF13 for a share of the video flows, {p.fec_transport.upper()}",
            "",
            "media_loss: lost before decoding; residual_loss: lost after decoding (simulated); residual_model: the "
            "analytic residual for the measured media and repair loss rates; goodput: decodable bytes per second "
            "per flow. Plot: `fec.png`.",
            "",
            md_table(ci_table(f, ["fec_flows", "buffer"], FEC_METRICS, PCT)),
            "",
            model_gap(f),
            "",
            md_table(fec_checks(f)),
            "",
        ]
    if sens is not None:
        from . import svc_sensitivity

        sens.to_csv(out / "sensitivity.csv", index=False)
        svc_sensitivity.plot(sens, out / "sensitivity.png")
        md += svc_sensitivity.section(sens)
    md += parameters_section(p)
    report = out / "report.md"
    report.write_text("\n".join(md))
    return report
