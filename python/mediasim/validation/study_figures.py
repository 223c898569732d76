"""Each study page's figures, taken from the folder its full run wrote and
written as the page writes them (``study_pages`` checks that the page
does). One function per study, from ``folder`` to {figure name: text}; a
table row is a figure whole, prose a phrase long enough to say what its
numbers are."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

Figures = dict[str, str]


def _csv(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / f"{name}.csv")


def _f(x: float, digits: int) -> str:
    return "-" if not np.isfinite(x) else f"{x:.{digits}f}"


def _and(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def report_table(folder: Path, heading: str, index: int = 0) -> list[list[str]]:
    """The cells of table ``index`` (0: the first) in the report's section
    whose heading starts with ``heading``, its header row first, each cell
    stripped of padding."""
    lines = (folder / "report.md").read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("#") and
                  line.lstrip("#").strip().startswith(heading)), None)
    if start is None:
        raise ValueError(f"{folder / 'report.md'}: no section {heading!r}")
    tables: list[list[list[str]]] = []
    inside = False
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            if not inside:
                tables.append([])
            tables[-1].append([c.strip() for c in line.strip().strip("|").split("|")])
        inside = line.startswith("|")
    if len(tables) <= index:
        raise ValueError(f"{folder / 'report.md'}: section {heading!r} has no table {index}")
    rows = tables[index]
    # A Markdown table's second line is its alignment row.
    if len(rows) > 1 and all(re.fullmatch(r":?-+:?", c) for c in rows[1]):
        del rows[1]
    return rows


def table_rows(folder: Path, heading: str, name: str, index: int = 0) -> Figures:
    """Every row of a report's table (the header too) as a figure: a page
    that quotes the table quotes it whole."""
    rows = report_table(folder, heading, index)
    return {f"{name}, {'header' if i == 0 else f'row {i}'}": _row(r) for i, r in enumerate(rows)}


# --- avpf ---------------------------------------------------------------------------------------

def avpf(folder: Path) -> Figures:
    return table_rows(folder, "The study's expected shapes", "expected shapes")


# --- iw10 -----------------------------------------------------------------------------------------

def iw10(folder: Path) -> Figures:
    from ..experiments import iw10 as study

    p = study.Params()
    s = _csv(folder, "summary")
    labels = {"wired": f"wired ({p.bottleneck_rate_bps / 1e6:g} Mbit/s, {p.buffer_packets} packets)",
              "cellular": f"cellular (`{p.cellular_trace}`, {p.cellular_buffer_packets} packets)"}
    out = {}
    for access in p.accesses:
        a = s[s["access"] == access]
        gq = a.set_index(["flows", "iw", "jitter_buffer_ms"])["good_quality_mean"]
        iw3, iw10_ = gq.xs(3, level="iw"), gq.xs(10, level="iw")
        lower = int((iw10_ < iw3).sum())
        few, many = min(p.flows), max(p.flows)
        one, six = gq.xs((few, 3), level=("flows", "iw")), gq.xs((many, 3), level=("flows", "iw"))
        small, large = min(p.jitter_buffers_ms), max(p.jitter_buffers_ms)
        gain = (gq.xs(large, level="jitter_buffer_ms") - gq.xs(small, level="jitter_buffer_ms")).mean()

        def holds(yes: bool) -> str:
            return "holds" if yes else "does not hold"

        out[f"conclusions, {access}"] = (
            f"| {labels[access]} "
            f"| {holds(iw10_.mean() < iw3.mean())}: {iw3.mean():.3f} vs {iw10_.mean():.3f}, "
            f"IW10 lower in {lower} of {len(iw3)} pairs "
            f"| {holds(six.mean() < one.mean())}: {one.mean():.3f} with {few} flow, {six.mean():.3f} with {many} "
            f"| {holds(gain > 0)}: +{gain:.3f} from {small:g} to {large:g} ms |")
    return out


# --- rmcat ----------------------------------------------------------------------------------------

RMCAT_NAMES = {"gcc": "GCC", "nada": "NADA", "scream": "SCReAM"}


def rmcat(folder: Path) -> Figures:
    from ..experiments import rmcat as study

    p = study.Params()
    s = _csv(folder, "summary")
    ctls = list(p.controllers)
    first = p.one_way_delays_ms[0]
    drop = s[s["aqm"] == "droptail"]
    at = drop[drop["one_way_ms"] == first].set_index(["case", "controller"])
    out = {}
    for case in p.cases:
        c = at.loc[case]
        label = study.CELLULAR.get(case, study.CASE_NAMES[case].split(" ")[0])
        settled = " | ".join(_f(c.loc[k, "settled_ratio_mean"], 3) for k in ctls)
        queuing = " / ".join(f"{c.loc[k, 'queuing_mean_ms_mean']:.0f}" for k in ctls)
        jain = c["jain_mean"]
        fair = "-" if not np.isfinite(jain).any() else " / ".join(_f(jain[k], 3) for k in ctls)
        out[f"results, case {label}"] = f"| {label} | {settled} | {queuing} | {fair} |"

    c1 = drop[drop["case"] == 1].groupby("controller")
    settled1, queue1 = c1["settled_ratio_mean"].mean(), c1["queuing_mean_ms_mean"].max()
    conv1, cv1 = c1["converge_s_mean"].max(), c1["settled_cv_mean"].max()
    named = [f"{RMCAT_NAMES[k]} {settled1[k]:.3f}" for k in ctls]
    out["5.1 settled, both delays"] = f"({', '.join(named)}, the mean over both delays)"
    out["5.1 queuing, worst delay"] = f"mean queuing delays of at most {_and([f'{queue1[k]:.0f}' for k in ctls])} ms"
    out["5.1 convergence"] = f"at most {_and([f'{conv1[k]:.1f}' for k in ctls])} s on average"
    out["5.1 settled swing"] = f"variation of at most {_and([f'{cv1[k]:.3f}' for k in ctls])} (`settled_cv`"
    c4 = drop[drop["case"] == 4].groupby("controller")["jain_mean"].min()
    out["5.4 Jain, worst delay"] = f"5.4's Jain index is at least {_and([f'{c4[k]:.3f}' for k in ctls])}"

    c8 = at.loc[8]
    conv = c8["resume_converge_s_mean"]
    out["5.8 resume"] = f"near its share within {conv.min():.1f}-{conv.max():.1f} s ({first:g} ms, drop-tail)"
    peaks = [f"{c8.loc[k, 'resume_queue_peak_ms_mean']:.0f}" for k in ctls]
    out["5.8 queue peak"] = (f"is {peaks[0]} ms for {RMCAT_NAMES[ctls[0]]}, "
                             + _and([f"{q} for {RMCAT_NAMES[k]}" for q, k in zip(peaks[1:], ctls[1:])]))
    fq = s[(s["aqm"] == "fq_codel") & (s["one_way_ms"] == first)].set_index(["case", "controller"])
    if len(fq):
        peaks_fq = ", ".join(f"{fq.loc[(8, k), 'resume_queue_peak_ms_mean']:.0f}" for k in ctls)
        out["5.8 queue peak, FQ-CoDel"] = f"(FQ-CoDel: {peaks_fq})"
        six = ", ".join(f"{fq.loc[(6, k), 'settled_ratio_mean']:.2f}" for k in ctls)
        out["5.6 FQ-CoDel"] = f"FQ-CoDel gives each about half of it ({six})"
        q1 = _and([f"{fq.loc[(1, k), 'queuing_mean_ms_mean']:.0f}" for k in ctls])
        out["5.1 FQ-CoDel queuing"] = f"(5.1: {q1} ms)"
    six = ", ".join(f"{at.loc[(6, k), 'settled_ratio_mean']:.2f}" for k in ctls)
    out["5.6 drop-tail"] = f"(settled {six} at {first:g} ms)"

    sens = _csv(folder, "sensitivity").set_index(["value", "setting"])
    default = sens.loc[("default", "-")]
    fast = sens.loc[("feedback_interval_ms", "low: 20.0")]
    out["sensitivity, feedback every 20 ms"] = (
        f"feedback every 20 ms instead of {p.feedback_interval_ms:g} adds {fast.c1_share - default.c1_share:.3f} "
        f"to 5.1's share ({default.c1_share:.2f})")
    restart = sens.loc[("case58_resume", "low: restart")].c8_resume_queue_ms
    short = sens.loc[("queue_ms", "low: 100.0")].c8_resume_queue_ms
    out["sensitivity, 5.8's queue"] = (
        f"5.8's queue after the resume ({default.c8_resume_queue_ms:.0f} ms, the mean over the controllers) falls "
        f"to {restart:.0f} ms with a fresh controller at the resume and to {short:.0f} ms behind a 100 ms queue")
    out.update(table_rows(folder, "Sensitivity", "sensitivity, beyond noise", index=1))
    return out


# --- media-scaling ------------------------------------------------------------------------------

def media_scaling(folder: Path) -> Figures:
    from ..experiments import media_scaling as study

    out = table_rows(folder, "The study's expected shape", "expected shape")
    k = _csv(folder, "throughput_by_kind")
    replications = study.Params().replications
    for window, w in k.groupby("window", sort=False):
        fair = float(w["fair_share_kbps"].iloc[0])
        flows = int(w["n"].sum()) // replications
        cells = [f"{r.share_of_fair:.2f} ({r.throughput_kbps_ci_low / fair:.2f}-{r.throughput_kbps_ci_high / fair:.2f})"
                 for r in w.set_index("kind").loc[["ftp", "mm", "mpeg"]].itertuples()]
        out[f"share by kind, {window}"] = _row([f"{window} ({flows} flows, {fair:.0f} kbit/s each)", *cells])
    out.update(table_rows(folder, "Sensitivity", "sensitivity, beyond noise", index=1))
    sens = _csv(folder, "sensitivity")
    default = sens.iloc[0]
    noise = [f"{np.sqrt(2) * default[f'{h}_half']:.{d}f}" for h, d in
             (("ftp_share", 3), ("mm_share", 3), ("mpeg_share", 3), ("jitter_ratio", 2))]
    out["sensitivity, noise"] = f"sqrt(2) times the default's 95% half-width ({', '.join(noise)})"
    lo, hi = sens.min(numeric_only=True), sens.max(numeric_only=True)
    out["sensitivity, ranges"] = (
        f"FTP stays at {lo.ftp_share:.2f}-{hi.ftp_share:.2f} of its share, MM_APP at "
        f"{lo.mm_share:.2f}-{hi.mm_share:.2f}, MPEG_APP at {lo.mpeg_share:.2f}-{hi.mpeg_share:.2f}, and TCP's "
        f"jitter at {lo.jitter_ratio:.2g}-{hi.jitter_ratio:.2g} times MM_APP's")
    return out


# --- svc ----------------------------------------------------------------------------------------

def _pct(x: float, fmt: str = ".2f") -> str:
    """A loss as the svc page writes it: per cent, and a plain 0."""
    return "0" if x == 0 else format(100 * x, fmt)


def svc(folder: Path) -> Figures:
    t = _csv(folder, "transports").set_index(["transport", "buffer"])
    out = {}
    pair = ("tfrc", "ppacc")
    for b in sorted(t.loc["tfrc"].index):
        r = [t.loc[(k, b)] for k in pair]
        out[f"results, buffer {b}"] = _row([
            str(b), " / ".join(_pct(x.byte_loss_mean) for x in r), " / ".join(_pct(x.byte_loss_af12_mean) for x in r),
            " / ".join(_pct(x.byte_loss_af11_mean) for x in r), " / ".join(f"{x.video_kbps_mean:.0f}" for x in r),
            " / ".join(f"{x.delay_p50_ms_mean:.0f}" for x in r), " / ".join(f"{x.delay_p99_ms_mean:.0f}" for x in r)])
    small = t.loc[("ppacc", min(t.loc["ppacc"].index))]
    out["PPACC at the smallest buffer"] = (
        f"({_pct(small.byte_loss_mean)} ± {100 * (small.byte_loss_ci_high - small.byte_loss_mean):.2g}%)")
    for heading, name in (("The study's expected shapes", "expected shapes"),
                          ("The same with PPACC shaping on", "expected shapes, shaping on")):
        rows = table_rows(folder, heading, name)
        out.update(rows)
        held = sum(r.endswith("| True |") for r in rows.values())
        out[f"{name}, held"] = f"{held} of {len(rows) - 1} hold"
    f = _csv(folder, "fec").set_index(["fec_flows", "buffer"])
    for b in sorted(f.loc[0].index):
        none, all4, two, one = (f.loc[(k, b)] for k in (0, 4, 2, 1))
        out[f"FEC, buffer {b}"] = _row([
            str(b), _pct(none.residual_loss_plain_flows_mean), _pct(all4.residual_loss_fec_flows_mean, "#.2g"),
            _pct(all4.residual_model_fec_flows_mean, "#.2g"), _pct(all4.repair_loss_fec_flows_mean, ".1f"),
            _pct(two.residual_loss_plain_flows_mean),
            f"{one.goodput_kbps_fec_flows_mean:.0f} / {one.goodput_kbps_plain_flows_mean:.0f}"])
    return out


# --- rmtp ---------------------------------------------------------------------------------------

def _count(x: float) -> str:
    """A count to three significant digits, with thousands separated."""
    return "-" if not np.isfinite(x) else f"{round(float(f'{x:.3g}')):,}"


def _two(x: float) -> str:
    """Two significant digits, a trailing zero kept (3.0), none added (45)."""
    return "-" if not np.isfinite(x) else f"{x:#.2g}".rstrip(".")


def rmtp(folder: Path) -> Figures:
    sender = _csv(folder, "sender").set_index(["agents", "scenario", "duration_s"])
    sub = _csv(folder, "subgroups").groupby(["agents", "scenario", "duration_s"])
    out = {}
    for scenario, duration in sender.loc["original"].index:
        label = f"{scenario}, {duration:.0f} s" if scenario in (7, 8) else str(scenario)
        o, c = sender.loc[("original", scenario, duration)], sender.loc[("custodial", scenario, duration)]

        def delay(agents: str) -> str:
            d = sub.get_group((agents, scenario, duration))["rcv_delay_s_mean"]
            return " / ".join(_two(x) for x in d) if scenario == 7 else _two(d.mean())

        half = o.sender_retx_ci_high - o.sender_retx_mean
        out[f"scenarios, {label}"] = _row([
            label, f"{_count(o.sender_retx_mean)} ± {_count(float(f'{half:.2g}'))}", _count(o.dr_lost_total_mean),
            _two(o.sender_retx_per_dr_loss_mean), _count(o.dr_retx_total_mean), f"{o.dr_share_mean:.2f}",
            f"{o.throughput_pps_mean:.2f}", delay("original"), _count(c.sender_retx_mean),
            _count(c.dr_retx_total_mean), f"{c.throughput_pps_mean:.2f}", delay("custodial")])
    original = report_table(folder, "The study's expected shapes")
    custodial = report_table(folder, "The other DR variant", 1)
    for i, (a, b) in enumerate(zip(original, custodial)):
        if a[0] != b[0]:
            raise ValueError(f"{folder}: the two variants' shape tables differ at row {i}: {a[0]!r}, {b[0]!r}")
        out[f"expected shapes, {'header' if i == 0 else f'row {i}'}"] = _row(
            [a[0], "original: measured", "holds", "custodial: measured", "holds"] if i == 0 else [*a, *b[1:]])
    held = [sum(r[2] == "True" for r in t[1:]) for t in (original, custodial)]
    out["expected shapes, held"] = (f"({held[0]} of {len(original) - 1} hold with the original agents, "
                                    f"{held[1]} of {len(custodial) - 1} with custodial DRs)")
    sens = _csv(folder, "sensitivity")
    d = sens.iloc[0]
    noise = {h: f"{np.sqrt(2) * d[f'{h}_half']:.2g}" for h in
             ("dr_share_3", "premature_share_3", "p_prime_gap_3", "delay_5_s", "delay_6_s", "worst_subgroup_ratio")}
    out["sensitivity, noise"] = (
        f"DR share {noise['dr_share_3']}, premature share {noise['premature_share_3']}, P' gap "
        f"{noise['p_prime_gap_3']}, delay in 5 {noise['delay_5_s']} s, in 6 {noise['delay_6_s']} s, the subgroup "
        f"ratio {noise['worst_subgroup_ratio']}.")
    out["sensitivity, defaults"] = (
        f"DR share {d.dr_share_3:.3f}, premature share {d.premature_share_3:.3f}, P' gap {d.p_prime_gap_3:+.3f}, "
        f"delay {d.delay_5_s:.2f} s (5) and {d.delay_6_s:.3f} s (6), subgroup ratio {d.worst_subgroup_ratio:.3f}.")
    out.update(table_rows(folder, "Sensitivity", "sensitivity, beyond noise", index=1))
    return out


FIGURES: dict[str, Callable[[Path], Figures]] = {
    "avpf": avpf,
    "iw10": iw10,
    "media-scaling": media_scaling,
    "rmcat": rmcat,
    "rmtp": rmtp,
    "svc": svc,
}
