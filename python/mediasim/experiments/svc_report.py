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
from . import svc
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


def _max_delays(delays: dict[tuple[str, int], np.ndarray], transport: str, bs: list[int]) -> np.ndarray:
    return np.array([float(delays[(transport, b)].max()) if len(delays.get((transport, b), [])) else np.nan
                     for b in bs])


def _as_ppacc(t: pd.DataFrame, alt: str) -> pd.DataFrame:
    """The table with PPACC's variant ``alt`` in PPACC's place."""
    t = t[t["transport"] != "ppacc"].copy()
    t.loc[t["transport"] == alt, "transport"] = "ppacc"
    return t


def shape_checks(t: pd.DataFrame, delays: dict[tuple[str, int], np.ndarray] | None = None,
                 per_packet_ms: float = 5.0) -> pd.DataFrame:
    """The study's expected shapes (shared/experiments/svc-ppacc-tfrc.md,
    "Expected shape"), each with what this run measured and whether it
    holds. ``per_packet_ms``: one packet's transmission time at the AF1
    rate, the delay one more buffered packet adds."""
    if not {"tfrc", "ppacc"} <= set(t["transport"]):
        return pd.DataFrame()
    bs = sorted(int(b) for b in t["buffer"].unique())
    b0, b1 = bs[0], bs[-1]
    loss = {x: np.array([_at(t, x, b, "byte_loss") for b in bs]) for x in ("tfrc", "ppacc")}
    af11 = {x: np.array([_at(t, x, b, "byte_loss_af11") for b in bs]) for x in ("tfrc", "ppacc")}
    lt = loss["tfrc"][0]
    l12 = _at(t, "tfrc", b0, "byte_loss_af12")
    thr = [_ratio(_at(t, "tfrc", b, "video_kbps"), _at(t, "ppacc", b, "video_kbps")) for b in bs]
    kbps = t["video_kbps_mean"]
    p99 = [_ratio(_at(t, "ppacc", b, "delay_p99_ms"), _at(t, "tfrc", b, "delay_p99_ms")) for b in bs]
    p50 = [_ratio(_at(t, "ppacc", b, "delay_p50_ms"), _at(t, "tfrc", b, "delay_p50_ms")) for b in bs]
    rows = [
        ("With small AF1 buffers TFRC loses more than 10% of the video bytes",
         f"{lt:.2%} at {b0} packets", lt > 0.10),
        ("... more in AF12", f"AF12 {l12:.2%} against {lt:.2%} over both", l12 > lt),
        ("Larger buffers lower TFRC's loss",
         f"{' > '.join(f'{x:.2%}' for x in loss['tfrc'])} (buffers {', '.join(map(str, bs))})",
         bool(np.all(np.diff(loss["tfrc"]) < 0))),
        ("DiffServ keeps the base layer's (AF11) byte loss under 1% for both, at every buffer",
         f"AF11 at most {np.nanmax(af11['tfrc']):.2%} (TFRC), {np.nanmax(af11['ppacc']):.2%} (PPACC)",
         bool(np.nanmax(np.concatenate(list(af11.values()))) < 0.01)),
        ("... PPACC slightly better",
         f"PPACC's AF11 loss at most TFRC's at {int(np.sum(af11['ppacc'] <= af11['tfrc']))} of {len(bs)} buffers",
         bool(np.all(af11["ppacc"] <= af11["tfrc"]))),
        ("PPACC loses much less than TFRC at every buffer",
         f"TFRC / PPACC byte loss {', '.join(f'{a / b:.1f}x' if b > 0 else 'inf' for a, b in zip(loss['tfrc'], loss['ppacc']))}"
         f" (buffers {', '.join(map(str, bs))})",
         bool(np.all(loss["tfrc"] > 2 * loss["ppacc"]))),
        ("... never more than TFRC, at any buffer (a PPACC that does is not the original's)",
         f"PPACC's byte loss below TFRC's at {int(np.sum(loss['ppacc'] < loss['tfrc']))} of {len(bs)} buffers",
         bool(np.all(loss["ppacc"] < loss["tfrc"]))),
        ("TFRC gets somewhat more throughput",
         f"TFRC / PPACC video throughput {min(thr):.2f}-{max(thr):.2f} across buffers (mean {np.mean(thr):.2f}; "
         f"TFRC ahead at {sum(x > 1 for x in thr)} of {len(thr)})", float(np.mean(thr)) > 1.0),
        ("... both at roughly 300-450 kbit/s per video flow (within 10%)",
         f"{kbps.min():.0f}-{kbps.max():.0f} kbit/s", bool(kbps.min() >= 270 and kbps.max() <= 495)),
        ("PPACC has lower delay with a lighter tail, TFRC the higher 99th percentile",
         f"PPACC / TFRC: median {min(p50):.2f}-{max(p50):.2f}, 99th percentile {min(p99):.2f}-{max(p99):.2f}",
         max(p99) < 1.0 and max(p50) < 1.0),
    ]
    if delays is not None and len(bs) >= 3:
        mx = {x: _max_delays(delays, x, bs) for x in ("tfrc", "ppacc")}
        # A maximum that does not move has no correlation with the buffer.
        r = {x: float(np.corrcoef(bs, mx[x])[0, 1]) if np.std(mx[x]) > 0 else 0.0 for x in mx}
        grow = mx["ppacc"][-1] - mx["ppacc"][0]
        full = (b1 - b0) * per_packet_ms
        rows.append(
            ("PPACC's maximum delay grows about linearly with the buffer (router queueing only); TFRC's does not",
             f"PPACC max {mx['ppacc'][0]:.0f} -> {mx['ppacc'][-1]:.0f} ms from {b0} to {b1} packets "
             f"(+{grow:.0f} ms; a full buffer adds {full:.0f} ms), correlation with the buffer {r['ppacc']:.2f}; "
             f"TFRC {r['tfrc']:.2f}",
             r["ppacc"] >= 0.9 and grow > 0 and r["tfrc"] < r["ppacc"]))
    return pd.DataFrame(rows, columns=["expected (study)", "measured", "holds"])


def _ratio(a: float, b: float) -> float:
    """a / b; NaN where b is 0 (no video got through to compare)."""
    return a / b if b else float("nan")


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
         max(gain, key=gain.__getitem__) == bs[0]),
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
    per_packet = p.packet_bytes * 8 / p.af1_reserved_bps * 1e3
    plot_losses(t, out / "losses.png")
    plot_throughput(t, out / "throughput_delay.png")
    plot_delays(delays, out / "delays.png")
    if not f.empty:
        plot_fec(f, out / "fec.png")
    quart = pd.DataFrame([{"transport": k[0], "buffer": k[1], "packets": len(v),
                           **{f"p{q}_ms": float(np.percentile(v, q)) if len(v) else float("nan")
                              for q in (1, 25, 50, 75, 99)}}
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
        f"### The study's expected shapes (PPACC shaping {'on' if p.ppacc_shaping else 'off'})",
        "",
        md_table(shape_checks(t, delays, per_packet)),
        "",
    ]
    alt = svc.variant(p)
    if alt in set(t["transport"]):
        on = "on" if not p.ppacc_shaping else "off"
        md += [f"### The same with PPACC shaping {on} (transport `{alt}`)", "",
               md_table(shape_checks(_as_ppacc(t, alt), {("ppacc" if x == alt else x, b): v
                                                     for (x, b), v in delays.items() if x != "ppacc"},
                                     per_packet)),
               ""]
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
    else:  # fec_shares or fec_buffers left empty
        md += ["## FEC", "", "Not run: `fec_shares` or `fec_buffers` is empty.", ""]
    if sens is not None:
        from . import svc_sensitivity

        sens.to_csv(out / "sensitivity.csv", index=False)
        svc_sensitivity.plot(sens, out / "sensitivity.png")
        md += svc_sensitivity.section(sens)
    md += parameters_section(p)
    report = out / "report.md"
    report.write_text("\n".join(md))
    return report
