"""Each study page's figures, taken from the folder its full run wrote and
written as the page writes them (``study_pages`` checks that the page
does). One function per study, from ``folder`` to {figure name: text}; a
table row is a figure whole, prose a phrase long enough to say what its
numbers are."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..experiments import rmtp as rmtp_study

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

def _span(values: pd.Series, fmt: str) -> str:
    lo, hi = format(values.min(), fmt), format(values.max(), fmt)
    return lo if lo == hi else f"{lo}-{hi}"


def avpf(folder: Path) -> Figures:
    out = table_rows(folder, "The study's expected shapes", "expected shapes")
    both = pd.concat([_csv(folder, f"case{c}_total") for c in (1, 2)])
    share = both.set_index(["session_bw_bps", "profiles"])["rtcp_share_pct_mean"]
    three = _csv(folder, "case3_total")["rtcp_share_pct_mean"]
    top = both["session_bw_bps"].max()
    out["cases 1-3, RTCP shares"] = (
        f"use {_span(share.xs('both AVPF', level='profiles'), '.2f')}% (cases 1-2) and {_span(three, '.2f')}% "
        f"(case 3) of the session bandwidth for RTCP in every row. Both AVP at {top / 1e6:g} Mbit/s: "
        f"{_span(share.xs((top, 'both AVP')), '.3f')}%")
    c4 = _csv(folder, "case4_feedback").set_index(["session_bw_bps", "loss", "profile"])
    low, high = (c4.xs(b, level="session_bw_bps") for b in (c4.index.get_level_values(0).min(),
                                                             c4.index.get_level_values(0).max()))
    avpf_low = low.xs("AVPF", level="profile")
    waits = {k: f"{1000 * v:.0f}" for k, v in avpf_low["mwt_s_mean"].items()}
    discarded = avpf_low["fb_discarded_mean"] / avpf_low["fb_wanted_mean"]
    out["case 4, waits"] = (
        f"AVP feedback waits {_span(c4.xs('AVP', level='profile')['mwt_s_mean'], '.2f')} s, about half the 5 s "
        f"minimum (timer reconsideration makes AVP intervals average 5 s). AVPF waits {waits['plr 0.001']} to "
        f"{max(waits.values(), key=int)} ms: {waits['plr 0.001']} at 0.001")
    out["case 4, AVPF at the low rate"] = (
        f"{waits['plr 0.01']} ms at 0.01 and {waits['congestion']} ms under the moderate congestion")
    rates = sorted(c4.index.get_level_values(0).unique())
    congested = low.xs("congestion", level="loss")["media_loss_rate_mean"] * 100
    out["case 4, discarded"] = (
        f"{_span(discarded[discarded > 0] * 100, '.0f')}% of the feedback passes the 1 s bound and is discarded. "
        f"At {rates[-1] / 1e6:g} Mbit/s AVPF waits at most "
        f"{1000 * high.xs('AVPF', level='profile')['mwt_s_mean'].max():.0f} ms. The moderate congestion loses "
        f"{_span(congested, '.1f')}% of the media at {rates[0] / 1e3:g} kbit/s")
    out.update(_avpf_multicast(folder))
    out.update(_avpf_sensitivity(_csv(folder, "sensitivity")))
    return out


def _avpf_sensitivity(d: pd.DataFrame) -> Figures:
    """The sensitivity findings: what no setting moves, what the congestion
    set-up moves in case 4, the mobile links' delay, the overloaded
    low-bandwidth links."""
    seed, d = d[d["value"] == "seed"], d[d["value"] != "seed"]

    def at(rows: pd.DataFrame) -> pd.Series:
        return pd.concat([rows["at_default"], rows["at_low"], rows["at_high"]]).dropna()

    def change(rows: pd.DataFrame) -> pd.Series:
        return pd.concat([rows["change_low_pct"], rows["change_high_pct"]]).dropna()

    def metric(name: str, case: int, rows: pd.DataFrame = d) -> pd.DataFrame:
        return rows[(rows["metric"] == name) & (rows["case"] == case)]

    rtcp = d[d["metric"].str.startswith("RTCP share")]
    avp, avpf = metric("MWT AVP (s)", 4), metric("MWT AVPF (s)", 4)
    newpred = d[d["metric"] == "NEWPRED waiting time (s)"]
    noise = change(metric("MWT AVPF (s)", 4, seed)).abs().max()
    moved = avpf[(avpf[["change_low_pct", "change_high_pct"]].abs() > noise).any(axis=1)]
    beyond = change(moved).abs()
    beyond = beyond[beyond > noise]
    ratio = (avp.set_index("value")[["at_low", "at_high"]] / avpf.set_index("value")[["at_low", "at_high"]]).stack()
    mobile = d[d["value"] == "mobile_delay_ms"]
    lowbw = d[(d["value"] == "lowbw_bps")]
    collapse = lowbw[lowbw["metric"].isin(["failure rate", "suppression rate, shared losses"])]["change_low_pct"]

    def moves(name: str) -> str:
        r = metric(name, 7, mobile).iloc[0]
        return f"{r.change_low_pct:+.0f}% / {r.change_high_pct:+.0f}%"

    return {
        "sensitivity, unmoved": (
            f"(cases 1-3: {_span(at(rtcp), '.2f')}% at every setting, at most {change(rtcp).abs().max():.1f}% from "
            f"the default), AVP's waiting time (case 4: {_span(at(avp), '.2f')} s, within "
            f"{change(avp).abs().max():.1f}%, under the {change(metric('MWT AVP (s)', 4, seed)).abs().max():.0f}% "
            f"seed-to-seed change), and NEWPRED's waiting time (cases 9-10: within "
            f"{change(newpred).abs().max():.0f}%)"),
        "sensitivity, AVPF in case 4": (
            f"({1000 * avpf['at_default'].iloc[0]:.0f} ms at the defaults, noise {noise:.0f}%) moves by "
            f"{_span(beyond, '.0f')}% with the congestion set-up and the run length "
            f"({_span(at(moved) * 1000, '.0f')} ms). Every setting leaves it {_span(ratio, '.0f')} times below AVP's"),
        "sensitivity, mobile delay": (f"moves case 7's failure rate by {moves('failure rate')} and the loss report "
                                      f"delay by {moves('loss report delay (s)')}"),
        "sensitivity, overloaded links": (
            f"(case 7's loss report delay rises "
            f"{1 + metric('loss report delay (s)', 7, lowbw)['change_low_pct'].iloc[0] / 100:.0f}-fold) and its own "
            f"congestion losses, reported by it alone, swamp the shared ones (failure and suppression rates fall by "
            f"{-collapse.max():.0f}%)"),
    }


def _avpf_multicast(folder: Path) -> Figures:
    """Cases 6-10's findings: suppression with RTT-based dithers, the k and
    l grids of cases 7 and 8, and NEWPRED's waits."""
    out = {}
    c6 = _csv(folder, "case6_feedback").set_index(["losses", "member"])
    shared, spread = c6.loc["shared"], c6.loc["distributed"]
    suppressed = shared["fb_suppressed_mean"] / shared["fb_wanted_mean"] * 100
    out["case 6"] = (
        f"(A2) reports first ({1000 * shared.loc['A2', 'mwt_s_mean']:.0f} ms, suppressed "
        f"{suppressed['A2']:.0f}%); the far mobile members are suppressed {_span(suppressed.drop('A2'), '.0f')}%. "
        f"With distributed losses the RTT-based dither buys nothing: waits of {_span(spread['mwt_s_mean'], '.2f')} s "
        f"and {spread['fb_discarded_mean'].mean():.0f} of about {spread['fb_wanted_mean'].mean():.0f} reports past "
        f"the 1 s bound")
    k = _csv(folder, "case7_sender").set_index(["scenario", "k"])
    fail, delay = k["failure_rate_mean"], k["loss_report_delay_mean_s_mean"]
    one, two, three = (k.loc[s] for s in (1, 2, 3))
    flat = two.index[(two["failure_rate_mean"] == two["failure_rate_mean"].iloc[-1]).argmax()]
    best = three["failure_rate_mean"].idxmin()
    out["case 7"] = (
        f"the failure rate stays at {_span(one['failure_rate_mean'], '.2f')} for every k and the loss report delay "
        f"grows from {1000 * delay[(1, 0.1)]:.0f} to {1000 * delay[(1, 4.0)]:.0f} ms")
    out["case 7, scenario 2"] = (
        f"the failure rate falls from {fail[(2, 0.1)]:.2f} at k = 0.1 to {fail[(2, flat)]:.2f} at k >= {flat:g}, "
        f"the delay rising from {delay[(2, 0.1)]:.2f} to {delay[(2, flat)]:.2f} s; beyond k = {flat:g} nothing changes")
    out["case 7, scenario 3"] = (
        f"falls from {fail[(3, 0.1)]:.2f} to {fail[(3, best)]:.2f} at k = {best:g} (delay {delay[(3, 0.1)]:.2f} to "
        f"{delay[(3, best)]:.2f} s) and rises again to {fail[(3, 4.0)]:.2f} at k = 4")
    ls = _csv(folder, "case8_sender").set_index(["scenario", "l"])
    lfail = ls["failure_rate_mean"]

    def grows(s: int) -> str:
        before = lfail.loc[s][lfail.loc[s].index < 1]
        start = f"{before.iloc[0]:.2f}" if before.is_monotonic_decreasing else _span(before, ".2f")
        return f"{start} to {lfail[(s, 1.0)]:.2f}"

    out["case 8"] = (f"(scenario 1 {grows(1)}, scenario 2 {grows(2)}, scenario 3 {grows(3)})")
    ldelay = ls["loss_report_delay_mean_s_mean"]
    out["cases 7 against 8"] = (
        f"(scenario 1: {fail[(1, 1.0)]:.2f} against {lfail[(1, 0.5)]:.2f} at the defaults k = 1 and l = 0.5, "
        f"with a shorter delay; scenario 3: {fail[(3, 1.0)]:.2f} against {lfail[(3, 0.5)]:.2f} at "
        f"{delay[(3, 1.0)]:.2f} s against {ldelay[(3, 0.5)]:.2f} s). In scenario 2 the gain is smaller "
        f"({fail[(2, 1.0)]:.2f} at {delay[(2, 1.0)]:.2f} s against {lfail[(2, 1.0)]:.2f} at {ldelay[(2, 1.0)]:.2f} s "
        f"for l = 1)")
    c9 = _csv(folder, "case9_newpred").groupby("p2p_dither")["waiting_time_mean_s_mean"].mean()
    out["case 9, over the grid"] = (
        f"{c9['0 (RFC p2p)']:.3f} s against {c9['l*T_rr (study)']:.3f} s averaged over the grid")
    c10 = _csv(folder, "case10_newpred").groupby("p2p_dither")["waiting_time_mean_s_mean"]
    lo, hi, mean = (1000 * c10.min(), 1000 * c10.max(), 1000 * c10.mean())
    study, rfc = "l*T_rr (study)", "0 (RFC p2p)"
    out["case 10"] = (
        f"waiting times of {lo[study]:.0f}-{hi[study]:.0f} ms under the study's dither, {lo[rfc]:.0f}-{hi[rfc]:.0f} ms "
        f"under the RFC rule (means {mean[study]:.0f} and {mean[rfc]:.0f} ms)")
    return out


# --- iw10 -----------------------------------------------------------------------------------------

def _holds(yes: bool) -> str:
    return "holds" if yes else "does not hold"


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

        out[f"conclusions, {access}"] = (
            f"| {labels[access]} "
            f"| {_holds(iw10_.mean() < iw3.mean())}: {iw3.mean():.3f} vs {iw10_.mean():.3f}, "
            f"IW10 lower in {lower} of {len(iw3)} pairs "
            f"| {_holds(six.mean() < one.mean())}: {one.mean():.3f} with {few} flow, {six.mean():.3f} with {many} "
            f"| {_holds(gain > 0)}: +{gain:.3f} from {small:g} to {large:g} ms |")
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
        fq1 = s[(s["aqm"] == "fq_codel") & (s["case"] == 1)]
        dt1 = drop[drop["case"] == 1]
        out["5.1 FQ-CoDel queuing"] = f"(5.1: {q1} ms) at a loss of {_span(fq1['loss_pct_mean'], '.1f')}%"
        out["5.1 FQ-CoDel swing"] = (f"(5.1's `settled_cv` {_span(fq1['settled_cv_mean'], '.2f')} against "
                                     f"{_span(dt1['settled_cv_mean'], '.2f')} behind drop-tail")
        nada = fq1[fq1["controller"] == "nada"]["settled_cv_mean"], dt1[dt1["controller"] == "nada"]["settled_cv_mean"]
        out["5.1 FQ-CoDel swing, NADA"] = f"{_span(nada[0], '.2f')} against {_span(nada[1], '.2f')})"
    six = ", ".join(f"{at.loc[(6, k), 'settled_ratio_mean']:.2f}" for k in ctls)
    out["5.6 drop-tail"] = f"(settled {six} at {first:g} ms)"
    edge = at.loc[(10, "nada")]
    out["lte-edge, NADA"] = (f"NADA keeps its rate ({edge.settled_ratio_mean:.2f} of the share) at "
                             f"{edge.queuing_mean_ms_mean:.0f} ms of queuing and {edge.frame_delay_ms_mean:.0f} ms "
                             f"of frame delay")

    out.update(_rmcat_sensitivity(folder, p))
    return out


def _rmcat_sensitivity(folder: Path, p: Any) -> Figures:
    """The RMCAT page's sensitivity figures: its prose and the table of
    changes beyond noise."""
    from ..experiments import rmcat as study

    out = {}
    sens = _csv(folder, "sensitivity").set_index(["value", "setting"])
    default = sens.loc[("default", "-")]
    fast = sens.loc[("feedback_interval_ms", "low: 20.0")]
    out["sensitivity, feedback every 20 ms"] = (
        f"every 20 ms instead of {p.feedback_interval_ms:g} adds {fast.c1_share - default.c1_share:.3f} "
        f"to 5.1's share ({default.c1_share:.2f})")
    restart = sens.loc[("case58_resume", "low: restart")].c8_resume_queue_ms
    short_q = sens.loc[("queue_ms", "low: 100.0")]
    short = short_q.c8_resume_queue_ms
    out["sensitivity, 5.8's queue"] = (
        f"5.8's queue after the resume ({default.c8_resume_queue_ms:.0f} ms, the mean over the controllers) falls "
        f"to {restart:.0f} ms with a fresh controller at the resume and to {short:.0f} ms behind a 100 ms queue")
    high = {v: sens.loc[(v, s)] for v, s in (("queue_ms", "high: 1000.0"), ("jitter_std_ms", "high: 15.0"),
                                             ("case57_file_kb", "high: (100.0, 1000.0)"),
                                             ("scream_pacing_factor", "high: 1.5"))}
    out["sensitivity, queue and jitter"] = (
        f"the queue size moves 5.1's queuing delay ({short_q.c1_queuing_ms - default.c1_queuing_ms:+.1f} ms at 100 ms "
        f"of queue, {high['queue_ms'].c1_queuing_ms - default.c1_queuing_ms:+.1f} ms at 1000); jitter of 15 ms adds "
        f"{high['jitter_std_ms'].c1_queuing_ms - default.c1_queuing_ms:.1f} ms to it")
    out["sensitivity, 5.7's files"] = (f"with 100-1000 kB transfers the media's share falls from "
                                       f"{default.c7_share:.2f} to {high['case57_file_kb'].c7_share:.2f}")
    out["sensitivity, SCReAM's pacing"] = (
        f"(5.1's queuing delay {high['scream_pacing_factor'].c1_queuing_ms - default.c1_queuing_ms:+.1f} ms, the "
        f"mean over the three controllers)")
    raw = sens.loc[("nada_rampup_delay", "low: raw")]
    out["sensitivity, NADA's raw ramp-up"] = (
        f"lowers 5.1's share by {default.c1_share - raw.c1_share:.3f}, the mean over the three controllers: NADA's "
        f"own by {3 * (default.c1_share - raw.c1_share):.2f}")
    at = {k: sens.loc[key] for k, key in {
        "reference": ("decode", "high: reference"), "deep": ("case56_queue_ms", "high: 1000.0"),
        "jitter": ("jitter_std_ms", "high: 15.0"), "reno": ("tcp_cc", "low: reno"),
        "fb20": ("feedback_interval_ms", "low: 20.0"), "fb100": ("feedback_interval_ms", "high: 100.0"),
        "nack": ("nack", "high: True"), "webrtc": ("playout_estimator", "high: webrtc")}.items()}
    out["sensitivity, freezes"] = (
        f"each media flow sees {default.c6_freezes:.1f} freezes on average (the mean over the controllers, "
        f"{study.cases(p)[6].duration_s:.0f} s), {default.c6_late_pct:.1f}% of its frames are late, and a frame "
        f"plays {default.c6_playout_ms:.0f} ms after its capture")
    out["sensitivity, freezes by reference"] = f"raises the freezes to {at['reference'].c6_freezes:.1f}"
    out["sensitivity, what freezes depend on"] = (
        f"{at['deep'].c6_freezes:.1f} behind 5.6's deep 1000 ms queue ({at['deep'].c6_late_pct:.1f}% of frames "
        f"late), {at['jitter'].c6_freezes:.1f} with 15 ms of jitter (the adaptive playout buffer then holds a larger "
        f"delay, {at['jitter'].c6_playout_ms:.0f} ms, and {at['jitter'].c6_late_pct:.1f}% of frames are late)")
    out["sensitivity, freezes by TCP and feedback"] = (
        f"{at['reno'].c6_freezes:.1f} beside Reno instead of CUBIC, {at['fb20'].c6_freezes:.1f} and "
        f"{at['fb100'].c6_freezes:.1f} with feedback every 20 and 100 ms")
    out["sensitivity, freezes with retransmission"] = (
        f"leaves the freezes {_noise_word(at['nack'], default, 'c6_freezes')} ({at['nack'].c6_freezes:.1f})")
    out["sensitivity, playout delay with retransmission"] = (
        f"raise the playout delay by {at['nack'].c6_playout_ms - default.c6_playout_ms:.1f} ms")
    out.update(_rmcat_playout_estimator(default, at["webrtc"]))
    out.update(table_rows(folder, "Sensitivity", "sensitivity, beyond noise", index=1))
    return out


def _noise_word(row: Any, default: Any, headline: str) -> str:
    """Whether a setting moved a headline beyond noise, by the report's
    own yardstick (``one_at_a_time.noise``)."""
    from ..experiments import one_at_a_time as oat

    n = oat.noise(pd.DataFrame([{"value": "default", **default}]), [headline])[headline]
    return "beyond noise" if abs(row[headline] - default[headline]) > n else "within noise"


def _rmcat_playout_estimator(default: Any, webrtc: Any) -> Figures:
    """What libwebrtc's video timing in place of the quantile estimator
    changes: the viewer's headlines, and (the buffer sends nothing back)
    none of the network's."""
    network = ["c1_share", "c1_queuing_ms", "c4_jain", "c6_share", "c7_share", "c8_resume_queue_ms"]
    same = all(webrtc[h] == default[h] and webrtc[f"{h}_half"] == default[f"{h}_half"] for h in network)
    return {
        "sensitivity, playout estimator, network": (
            "leaves every rate and network delay headline as it was, to the last digit" if same
            else "moves the network's headlines"),
        "sensitivity, playout estimator, viewer": (
            f"{webrtc.c6_late_pct:.1f}% of frames late at a playout delay of {webrtc.c6_playout_ms:.0f} ms, with "
            f"the freezes {_noise_word(webrtc, default, 'c6_freezes')} ({webrtc.c6_freezes:.1f})"),
        "sensitivity, playout estimator, spread": (
            f"the late share's 95% half-width over the replications is {webrtc.c6_late_pct_half:.1f} against "
            f"{default.c6_late_pct_half:.2f}"),
    }


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
    flows = _csv(folder, "throughput")
    windows = list(flows["window"].unique())
    share = flows.groupby("window")["share_of_fair"]
    out["fair shares"] = (f"Every flow is within {_span(flows['share_of_fair'], '.2f')} of its fair share; with "
                          f"{len(flows[flows['window'] == windows[0]]['flow'].unique())} flows all are within "
                          f"{_span(share.get_group(windows[0]), '.2f')}")
    last = k[k["window"] == windows[-1]].set_index("kind")["share_of_fair"]
    scale = _csv(folder, "scales")
    mm_scale = scale[(scale["window"] == windows[-1]) & (scale["kind"] == "mm")]["mean_scale_mean"].mean()
    out["greedier"] = f"MM_APP takes {last['mm']:.2f} fair shares, its scale averaging {mm_scale:.1f}"
    out["greedier, TCP"] = f"while TCP falls to {last['ftp']:.2f}"
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
    reps = pd.read_parquet(folder / "replications.parquet")
    reps = reps[(reps["part"] == "transports") & (reps["buffer"] == min(t.loc["ppacc"].index))]
    by_run = reps.pivot_table(index="replication", columns="transport", values="byte_loss")
    worse = by_run[by_run["ppacc"] > by_run["tfrc"]]["ppacc"]
    out["PPACC at the smallest buffer, runs above TFRC"] = (
        f"in {len(worse)} of {len(by_run)} it loses more than TFRC"
        + (f" ({_and([f'{100 * x:.1f}%' for x in worse])})" if len(worse) > 1 else
           f" ({100 * worse.iloc[0]:.1f}%)" if len(worse) else ""))
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
    ratio = t.loc["ppacc"]["byte_loss_mean"] / t.loc["tfrc"]["byte_loss_mean"]
    out["PPACC over TFRC, ends"] = (
        f"({ratio.iloc[0]:.2f} of TFRC's loss at {ratio.index[0]} packets, {_span(ratio.iloc[1:4], '.1f')} from "
        f"{ratio.index[1]} to {ratio.index[3]}, {ratio.iloc[-1]:.2f} at {ratio.index[-1]})")
    out.update(_svc_fec(f))
    out.update(_svc_sensitivity(_csv(folder, "sensitivity")))
    return out


def _svc_sensitivity(d: pd.DataFrame) -> Figures:
    """What each open value moves (the page's sensitivity table, cell by
    cell) and the noise it is judged against."""
    rows = {(r.value, r.setting.split(":")[0]): r for r in d.itertuples()}
    base = rows[("default", "-")]

    def lo(v: str) -> Any:
        return rows[(v, "low")]

    def hi(v: str) -> Any:
        return rows[(v, "high")]

    quiet = [rows[(v, side)].loss_ratio_largest for v in ("ppacc_eps_bps", "ppacc_long_timer_max_gops",
                                                          "ppacc_feedback_ms") for side in ("low", "high")]
    bd, ad, wq, sz, sc, tm = (
        "bottleneck_delay_ms", "access_delay_ms", "wred_w_q", "packet_bytes", "svc_layer_scale", "ppacc_short_timer_ms")
    spacing = lo("ppacc_capacity_spacing")
    return {
        "sensitivity, noise": (f"(PPACC's loss at 5 packets: {np.sqrt(2) * base.ppacc_loss_pct_half:.2f} points; the "
                               f"loss ratio at 80: {np.sqrt(2) * base.loss_ratio_largest_half:.2f})"),
        "sensitivity, bottleneck delay": (
            f"TFRC's loss at 5 packets {lo(bd).tfrc_loss_pct:.1f}% / {hi(bd).tfrc_loss_pct:.1f}% (default "
            f"{base.tfrc_loss_pct:.1f}%)"),
        "sensitivity, bottleneck delay, PPACC": (
            f"PPACC's ({_span(pd.Series([lo(bd).ppacc_loss_pct, hi(bd).ppacc_loss_pct]), '.1f')}%) does not depend "
            f"on it. At 60 ms PPACC loses {hi(bd).loss_ratio_largest:.2f} times TFRC's loss at 80 packets"),
        "sensitivity, access delay": (f"TFRC {lo(ad).tfrc_loss_pct:.1f}% / {hi(ad).tfrc_loss_pct:.1f}%; the loss "
                                      f"ratio at 80 packets {hi(ad).loss_ratio_largest:.2f} at 20 ms"),
        "sensitivity, w_q low": f"at 0.002 PPACC loses {lo(wq).loss_ratio_largest:.2f} times TFRC's loss at 80 packets",
        "sensitivity, w_q high": (f"at 0.2, {hi(wq).loss_ratio_largest:.2f} times, and AF12 less AF11 "
                                  f"{hi(wq).af12_minus_af11_pct - base.af12_minus_af11_pct:+.1f} points"),
        "sensitivity, WRED profiles": (
            f"PPACC's loss ratio at 80 packets {hi('wred_profiles').loss_ratio_largest:.2f}; overlapping: FEC's cut "
            f"{lo('wred_profiles').fec_cut_pct - base.fec_cut_pct:+.1f} points"),
        "sensitivity, start spread": (f"PPACC loses {lo('start_spread_s').ppacc_loss_pct:.0f}% at 5 packets"),
        "sensitivity, packet size": (f"TFRC's loss {lo(sz).tfrc_loss_pct:.1f}% / {hi(sz).tfrc_loss_pct:.1f}%; "
                                     f"throughput ratio {lo(sz).throughput_ratio:.2f} at 1000"),
        "sensitivity, source rate": (
            f"TFRC's loss {lo(sc).tfrc_loss_pct:.1f}% / {hi(sc).tfrc_loss_pct:.1f}%; AF12 less AF11 "
            f"{lo(sc).af12_minus_af11_pct:.1f} / {hi(sc).af12_minus_af11_pct:.1f} points"),
        "sensitivity, kappa": (
            f"the loss ratio at 80 packets {lo('ppacc_kappa_bps').loss_ratio_largest:.2f} / "
            f"{hi('ppacc_kappa_bps').loss_ratio_largest:.2f} (default {base.loss_ratio_largest:.2f})"),
        "sensitivity, EWMA weight": (f"the loss ratio at 80 packets {lo('ppacc_a_weight').loss_ratio_largest:.2f} / "
                                     f"{hi('ppacc_a_weight').loss_ratio_largest:.2f}"),
        "sensitivity, short timer": (
            f"the loss ratio at 80 packets {lo(tm).loss_ratio_largest:.2f} / {hi(tm).loss_ratio_largest:.2f}; "
            f"throughput ratio {lo(tm).throughput_ratio:.2f} / {hi(tm).throughput_ratio:.2f} (default "
            f"{base.throughput_ratio:.2f})"),
        "sensitivity, quiet PPACC values": f"(the loss ratio at 80 packets {_span(pd.Series(quiet), '.2f')})",
        "sensitivity, capacity spacing, throughput": (
            f"TFRC's throughput over PPACC's, averaged over the buffers, rises from {base.throughput_ratio:.2f} to "
            f"{spacing.throughput_ratio:.2f}"),
        "sensitivity, capacity spacing": (
            f"off: PPACC's loss at 5 packets {spacing.ppacc_loss_pct:.1f}% (default {base.ppacc_loss_pct:.1f}%), "
            f"AF12 less AF11 {spacing.af12_minus_af11_pct - base.af12_minus_af11_pct:+.1f} points, throughput "
            f"ratio {spacing.throughput_ratio:.2f}"),
    }


def _svc_fec(f: pd.DataFrame) -> Figures:
    """The FEC findings: the gain by buffer, the flows without FEC, the
    flow that adds FEC alone, and all four with it."""
    none, one, two, four = (f.loc[k] for k in (0, 1, 2, 4))
    buffers = list(none.index)
    gain = (none["residual_loss_plain_flows_mean"] - four["residual_loss_fec_flows_mean"]) * 100
    others = pd.concat([none["residual_loss_plain_flows_mean"] - x["residual_loss_plain_flows_mean"]
                        for x in (one, two)]) * 100
    tcp = four["tcp_kbps_mean"] / none["tcp_kbps_mean"]
    fec = f.drop(index=0, level="fec_flows")
    model = fec["residual_loss_fec_flows_mean"] / fec["residual_model_fec_flows_mean"]
    alone = one["goodput_kbps_fec_flows_mean"], one["goodput_kbps_plain_flows_mean"]
    first, last = buffers[0], buffers[-1]
    return {
        "FEC gain by buffer": f"({gain[first]:.1f} points at {first} packets, {gain[last]:.1f} at {last})",
        "FEC, the others": (f"the others' media loss falls by {_span(others, '.1f')} points (beyond noise)"),
        "FEC, TCP": f"TCP, in its own DRR class, keeps {_span(tcp, '.2f')} of its throughput",
        "FEC, the model": (f"(median {model.median():.1f} times, up to {model.max():.0f} at large buffers"),
        "FEC alone, repairs lost": f"({_span(one['repair_loss_fec_flows_mean'] * 100, '.0f')}% of them are dropped)",
        "FEC alone, goodput": (f"its goodput is {_span(alone[0], '.0f')} kbit/s against {_span(alone[1], '.0f')} "
                               f"kbit/s for the flows without FEC"),
        "FEC, all four": (
            f"level with no FEC at {first} packets ({four.loc[first, 'goodput_kbps_fec_flows_mean']:.0f} against "
            f"{none.loc[first, 'goodput_kbps_plain_flows_mean']:.0f} kbit/s) and below it at {last} packets "
            f"({four.loc[last, 'goodput_kbps_fec_flows_mean']:.0f} against "
            f"{none.loc[last, 'goodput_kbps_plain_flows_mean']:.0f}), while the decodable share rises from "
            f"{_span(none['decodable_share_mean'] * 100, '.0f')}% to "
            f"{_span(four['decodable_share_mean'] * 100, '.0f')}%"),
    }


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
             ("dr_share_3", "premature_share_3", "p_prime_gap_3", "delay_5_s", "delay_6_s", "worst_subgroup_ratio",
              "dr_share_5", "dr_repeats_5")}
    out["sensitivity, noise"] = (
        f"DR share {noise['dr_share_3']}, premature share {noise['premature_share_3']}, P' gap "
        f"{noise['p_prime_gap_3']}, delay in 5 {noise['delay_5_s']} s, in 6 {noise['delay_6_s']} s, the subgroup "
        f"ratio {noise['worst_subgroup_ratio']}, DR share in 5 {noise['dr_share_5']}, repairs per loss in 5 "
        f"{noise['dr_repeats_5']}.")
    out["sensitivity, defaults"] = (
        f"DR share {d.dr_share_3:.3f}, premature share {d.premature_share_3:.3f}, P' gap {d.p_prime_gap_3:+.3f}, "
        f"delay {d.delay_5_s:.2f} s (5) and {d.delay_6_s:.3f} s (6), subgroup ratio {d.worst_subgroup_ratio:.3f}, "
        f"DR share in 5 {d.dr_share_5:.3f}, repairs per loss in 5 {d.dr_repeats_5:.2f}.")
    out.update(table_rows(folder, "Sensitivity", "sensitivity, beyond noise", index=1))
    r = {(x.value, x.setting.split(":")[0]): x for x in sens.itertuples()}
    small, large = r[("data_packet_bytes", "low")], r[("data_packet_bytes", "high")]
    fast, slow = r[("repair_interval_ms", "low")], r[("repair_interval_ms", "high")]
    hold, custody = r[("dr_repair_holdoff_ms", "high")], r[("dr_acknowledges", "high")]
    out["sensitivity, in absolute terms"] = (
        f"delay in 5 falls to {small.delay_5_s:.2f} s, the subgroup ratio rises to {small.worst_subgroup_ratio:.2f}; "
        f"at 700 bytes delay in 5 is {large.delay_5_s:.1f} s and the ratio {large.worst_subgroup_ratio:.2f}. - "
        f"**DR repair round**: delay in 5 {fast.delay_5_s:.1f} s at 100 ms, {slow.delay_5_s:.2f} s at 800 ms, where "
        f"the DR share in 3 falls to {slow.dr_share_3:.2f} and the ratio rises to {slow.worst_subgroup_ratio:.2f}. "
        f"- **DR repair hold-off**: 300 ms is the default (a round is 300 ms); at 1 s the DR share in 3 falls to "
        f"{hold.dr_share_3:.2f}, delay in 5 to {hold.delay_5_s:.2f} s, and the ratio rises to "
        f"{hold.worst_subgroup_ratio:.2f}. - **DR agents**: custodial DRs raise the DR share in 3 to "
        f"{custody.dr_share_3:.2f}, the premature share to {custody.premature_share_3:.2f}, delay in 5 to "
        f"{custody.delay_5_s:.0f} s (the repair storm) and the ratio to {custody.worst_subgroup_ratio:.2f}. - "
        f"**Scenario 6's sender-DR delay** at 300 ms: delay in 6 "
        f"{r[('scenario6_sender_dr_delay_ms', 'high')].delay_6_s:.2f} s ({d.delay_6_s:.2f} at 200 ms)")
    short, long = r[("rcv_hack_interval_ms", "low (stated)")], r[("rcv_hack_interval_ms", "high (stated)")]
    out["sensitivity, HACK period"] = (
        f"at 150 ms the DR repairs each loss {short.dr_repeats_5:.0f} times and its share rises to "
        f"{short.dr_share_5:.2f}; at 600 ms it repairs each about once ({long.dr_repeats_5:.2f}) and the sender "
        f"carries the repairs (DR share {long.dr_share_5:.2f}: the sender retransmits "
        f"{(1 - long.dr_share_5) / long.dr_share_5:.1f} times what the DR does), but scenario 3's DR share falls "
        f"to {long.dr_share_3:.2f}")
    out["sensitivity, hold-off on the slow tree"] = (
        f"with a 1 s repair hold-off the DR's share in 5 is {hold.dr_share_5:.2f} and each loss is repaired "
        f"{hold.dr_repeats_5:.2f} times")
    sub5 = sub.get_group(("original", 5, 500.0)).iloc[0]
    sub3 = sub.get_group(("original", 3, 500.0)).iloc[0]
    s5, s3, s4 = (sender.loc[("original", k, 500.0)] for k in (5, 3, 4))
    out["slow tree, repairs per loss"] = (
        f"repairs each lost packet {sub5.dr_retx_per_loss_mean:.1f} times ({sub3.dr_retx_per_loss_mean:.2f} in "
        f"scenario 3")
    q20 = r[("queue_limit_packets", "low")]
    out["sensitivity, short queues"] = f"its DR repairs more (share {q20.dr_share_5:.2f} in 5)"
    # What a window takes on the DR-receiver links of the slow tree (5) and of 3: the study's rates.
    params = rmtp_study.Params()
    bits = 8 * params.data_packet_bytes
    slow, three = (rmtp_study.study_subgroups(params)[k][0].dr_receiver_bps for k in (5, 3))
    out["slow tree, window crossing"] = (
        f"a {params.data_packet_bytes}-byte packet takes {1e3 * bits / slow:.0f} ms on a {slow / 1e3:g} kbit/s "
        f"link and a window of {params.ws} takes {params.ws * bits / slow:.2f} s, so a receiver asks again every "
        f"{params.rcv_hack_interval_ms / 1e3:g} s")
    out["slow tree, window crossing in 3"] = (
        f"where a window crosses a {three / 1e3:g} kbit/s link in {params.ws * bits / three:.3g} s")
    out["slow tree, DR share"] = (
        f"its share of repairs is {s5.dr_share_mean:.2f}, against {s3.dr_share_mean:.2f} and "
        f"{s4.dr_share_mean:.2f} on the trees with the same losses")
    original = sens[sens["value"] != "dr_acknowledges"]["worst_subgroup_ratio"]
    out["sensitivity, worst subgroup"] = f"holds under every setting (ratio {_span(original, '.2f')})"
    return out


# --- variants: runs with values set otherwise, which the pages quote --------------------------------

@dataclass(frozen=True)
class Variant:
    """A study run at full size with ``settings`` (field, value) in place of
    its defaults, on ``cases`` (all if empty), whose figures its page quotes."""

    study: str
    settings: tuple[tuple[str, Any], ...]
    cases: tuple[int, ...] = ()
    quick: bool = False  # the study's quick size, the settings on top


def rmcat_restart(folder: Path) -> Figures:
    """5.8 with a fresh session at the resume: how long each controller
    takes to reach its share, how many runs never do, the queue's peak."""
    runs = pd.read_parquet(folder / "runs.parquet")
    c8 = runs[runs["case"] == 8].groupby("controller", sort=False)
    conv, peak = c8["resume_converge_s"].mean(), c8["resume_queue_peak_ms"].mean()
    never = c8["resume_converge_s"].apply(lambda x: int(x.isna().sum()))
    n = int(c8.size().iloc[0])
    ctls = list(conv.index)
    missed = [f"{never[k]} of {RMCAT_NAMES[k]}'s {n} runs" if i == 0 else f"{never[k]} of {RMCAT_NAMES[k]}'s"
              for i, k in enumerate(k for k in ctls if never[k])]
    return {"5.8 restart": (
        f"{_and([f'{conv[k]:.0f}' for k in ctls])} s on average to reach its share ({_and(missed)} never reach it), "
        f"with peaks of {_and([f'{peak[k]:.0f}' for k in ctls])} ms")}


def rmcat_gcc_cut_every_pool(folder: Path) -> Figures:
    """5.1 with GCC cutting for every pool over 10% lost: how far its
    settled rate swings at each one-way delay."""
    s = _csv(folder, "summary")
    cv = s[(s["case"] == 1) & (s["aqm"] == "droptail")].set_index("one_way_ms")["settled_cv_mean"]
    return {"5.1, GCC cutting for every pool": (
        f"(`gcc_loss_decrease_interval_ms = 0`) its rate at {cv.index[-1]:g} ms one way swings {cv.iloc[-1]:.3f}, "
        f"past the band"),
        "5.1, GCC cutting for every pool, first delay": (
            f"at {cv.index[0]:g} ms one way, where its settled swing is {cv.iloc[0]:.3f}")}


def _shape_measured(folder: Path, heading: str, starts: str) -> str:
    rows = report_table(folder, heading)
    return next(r[1] for r in rows if r[0].startswith(starts))


def svc_paced(folder: Path) -> Figures:
    """PPACC shaped and paced at 2.5 times its target."""
    t = _csv(folder, "transports").set_index(["transport", "buffer"]).loc["ppacc"]
    first, last = t.index[0], t.index[-1]
    shapes = report_table(folder, "The study's expected shapes")
    held = sum(r[2] == "True" for r in shapes[1:])
    grows = re.search(r"max (\d+) -> (\d+) ms .* correlation with the buffer ([-\d.]+)",
                      _shape_measured(folder, "The study's expected shapes", "PPACC's maximum delay"))
    if grows is None:
        raise ValueError(f"{folder}: PPACC's maximum delay not found in the expected shapes")
    return {"PPACC paced": (
        f"keeps the loss low at small buffers ({_pct(t.loc[first, 'byte_loss_mean'])}% at {first} packets, "
        f"{t.loc[first, 'video_kbps_mean']:.0f} kbit/s a flow) and the 99th percentile at "
        f"{_span(t['delay_p99_ms_mean'], '.0f')} ms, but the send buffer still sets the maximum delay "
        f"({grows[1]} to {grows[2]} ms, correlation with the buffer {grows[3]}), and the loss at {last} packets is "
        f"{_pct(t.loc[last, 'byte_loss_mean'])}%, near TFRC's: {held} of {len(shapes) - 1} hold")}


def svc_probing(folder: Path) -> Figures:
    """PPACC with larger steps, a quicker estimate and shorter timers."""
    t = _csv(folder, "transports").set_index(["transport", "buffer"])
    last = t.loc["tfrc"].index[-1]
    return {"PPACC probing": (f"({_pct(t.loc[('ppacc', last), 'byte_loss_mean'])}% against "
                              f"{_pct(t.loc[('tfrc', last), 'byte_loss_mean'])}% at {last};")}


def avpf_core_delay(folder: Path) -> Figures:
    """Case 7 on the quick grid with 20 ms core links, against the quick
    default beside it (``avpf-quick``): the loss report delay and failure
    rate over the k grid."""
    base, far = (_csv(f, "case7_sender").set_index(["scenario", "k"]) for f in (folder.parent / "avpf-quick", folder))
    delay, fail = "loss_report_delay_mean_s_mean", "failure_rate_mean"
    growth = far[delay] / base[delay]
    return {
        "core delay, scenario 1": (
            f"({_span(base.loc[1, delay], '.3f')} s to {_span(far.loc[1, delay], '.3f')} s over the k grid), grows "
            f"{_span(growth.loc[3], '.1f')} times in scenario 3, and moves by at most "
            f"{100 * (growth.loc[2] - 1).abs().max():.0f}% in scenario 2"),
        "core delay, failures": (f"raises scenario 1's failure rate ({_span(base.loc[1, fail], '.2f')} to "
                                 f"{_span(far.loc[1, fail], '.2f')})"),
    }


NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 10: "ten"}


def iw10_small_buffer(folder: Path) -> Figures:
    """The wired access with a small buffer: which case harms the voice most."""
    s = _csv(folder, "summary")
    wired = s[s["access"] == "wired"].groupby(["flows", "iw"])["good_quality_mean"].mean()
    flows, iw = wired.idxmin()
    return {"small buffer, most harmful": (
        f"{NUMBER_WORDS.get(flows, str(flows))} parallel IW{iw} flows become the most harmful case")}


def avpf_case4_dither(folder: Path) -> Figures:
    """Case 4 on the quick grid with its two members dithering as a group
    would (``case4_dither = "multiparty"``): the mean wait at the least
    bandwidth, AVPF, at two loss rates."""
    t = _csv(folder, "case4_feedback")
    least = t["session_bw_bps"].min()
    wait = t[(t["profile"] == "AVPF") & (t["session_bw_bps"] == least)].set_index("loss")["mwt_s_mean"]
    return {"case 4 dithering point-to-point": (
        f"the mean wait at {least / 1e3:g} kbit/s with 0.001 loss becomes {wait['plr 0.001']:.2f} s, and "
        f"{wait['plr 0.01']:.2f} s at 0.01")}


#: Each variant's folder name, the run, and its figures (which its study's page quotes).
VARIANTS: dict[str, tuple[Variant, Callable[[Path], Figures]]] = {
    "rmcat-restart": (Variant("rmcat", (("case58_resume", "restart"), ("one_way_delays_ms", (50.0,)),
                                        ("aqm_variant", False)), cases=(8,)), rmcat_restart),
    "rmcat-gcc-cut-every-pool": (Variant("rmcat", (("gcc_loss_decrease_interval_ms", 0.0), ("controllers", ("gcc",)),
                                                   ("aqm_variant", False)), cases=(1,)), rmcat_gcc_cut_every_pool),
    "svc-paced": (Variant("svc", (("ppacc_shaping", True), ("ppacc_pacing_factor", 2.5), ("fec_shares", ()))),
                  svc_paced),
    "svc-probing": (Variant("svc", (("ppacc_eps_bps", 10e3), ("ppacc_kappa_bps", 100e3), ("ppacc_a_weight", 0.125),
                                    ("ppacc_short_timer_ms", 533.0), ("ppacc_long_timer_max_gops", 4),
                                    ("fec_shares", ()))), svc_probing),
    "iw10-small-buffer": (Variant("iw10", (("buffer_packets", 10),)), iw10_small_buffer),
    "avpf-quick": (Variant("avpf", (), cases=(7,), quick=True), lambda folder: {}),
    "avpf-quick-core-delay": (Variant("avpf", (("core_delay_ms", 20.0),), cases=(7,), quick=True), avpf_core_delay),
    "avpf-quick-case4-dither": (Variant("avpf", (("case4_dither", "multiparty"),), cases=(4,), quick=True),
                                avpf_case4_dither),
}


FIGURES: dict[str, Callable[[Path], Figures]] = {
    "avpf": avpf,
    "iw10": iw10,
    "media-scaling": media_scaling,
    "rmcat": rmcat,
    "rmtp": rmtp,
    "svc": svc,
}
