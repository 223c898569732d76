"""The AVPF study's expected shapes (shared/experiments/avpf-feedback.md),
each checked against the case tables of a run (``avpf.tables``): one row
per statement, with what was measured and whether it holds. A statement
whose cases did not run is left out. The thresholds are the ones the
study-level tests use (tests/test_avpf_study.py)."""

from __future__ import annotations

import math

import pandas as pd

#: RTCP's share of the session bandwidth (RFC 3550 6.2) and how far from it
#: "at or just above" may go.
SHARE_PCT, SHARE_TOLERANCE_PCT = 5.0, 0.2
#: "Far less" for AVP members at 2 Mbit/s: under this share.
AVP_FAR_LESS_PCT = 0.1
#: "About half the 5 s minimum": the range for a mean over at least
#: ``MANY_LOSSES`` losses, and the wider one for fewer (a noisy mean).
HALF_MINIMUM_S, HALF_MINIMUM_FEW_S, MANY_LOSSES = (2.3, 2.8), (1.3, 3.7), 100
#: Suppression "works" with shared losses above this rate, and not with
#: distributed ones (below the second).
SUPPRESSION_WORKS, SUPPRESSION_NONE = 0.3, 0.05


def _row(statement: str, measured: str, holds: bool) -> tuple[str, str, bool]:
    return statement, measured, bool(holds)


def rtcp_share(t: dict[str, pd.DataFrame]) -> list[tuple[str, str, bool]]:
    shares = []
    for case in (1, 2, 3):
        d = t.get(f"case{case}_total")
        if d is None:
            continue
        if case in (1, 2):
            d = d[d["profiles"] == "both AVPF"]
        shares += d["rtcp_share_pct_mean"].tolist()
    rows = []
    if shares:
        lo, hi = min(shares), max(shares)
        rows.append(_row("With every member AVPF, RTCP stays at or just above 5% of the session bandwidth in every "
                         "case, with or without loss",
                         f"{lo:.2f}-{hi:.2f}% in {len(shares)} configurations of cases 1-3 "
                         f"(within {SHARE_TOLERANCE_PCT:g} of 5%)",
                         all(abs(s - SHARE_PCT) <= SHARE_TOLERANCE_PCT for s in shares)))
    d = t.get("case1_total")
    if d is not None:
        avp = d[(d["session_bw_bps"] == 2e6) & (d["senders"] == "A1") & (d["profiles"] == "both AVP")]
        if len(avp):
            x = float(avp["rtcp_share_pct_mean"].iloc[0])
            rows.append(_row("AVP members use far less at high bandwidth (the 5 s minimum)",
                             f"{x:.3f}% at 2 Mbit/s, A1 sending, both AVP (far less: under {AVP_FAR_LESS_PCT:g}%)",
                             x < AVP_FAR_LESS_PCT))
    return rows


def waiting(t: dict[str, pd.DataFrame]) -> list[tuple[str, str, bool]]:
    d = t.get("case4_feedback")
    if d is None:
        return []
    half, orders = [], []
    for (bw, loss), g in d.groupby(["session_bw_bps", "loss"], sort=True):
        by = g.set_index("profile")
        if not {"AVP", "AVPF"} <= set(by.index):
            continue
        avp, avpf = float(by.loc["AVP", "mwt_s_mean"]), float(by.loc["AVPF", "mwt_s_mean"])
        lo, hi = HALF_MINIMUM_S if by.loc["AVP", "fb_wanted_mean"] >= MANY_LOSSES else HALF_MINIMUM_FEW_S
        half.append((avp, lo < avp < hi))
        orders.append(math.inf if avpf <= 0 else math.log10(avp / avpf))
    if not half:
        return []
    finite = [o for o in orders if math.isfinite(o)]
    spread = f"{min(finite):.1f}-{max(finite):.1f} orders" if finite else "no finite ratio"
    zero = len(orders) - len(finite)
    return [
        _row("AVP feedback waits on average about half the 5 s minimum interval",
             f"AVP waits {min(a for a, _ in half):.2f}-{max(a for a, _ in half):.2f} s in case 4 "
             f"(about half: {HALF_MINIMUM_S[0]:g}-{HALF_MINIMUM_S[1]:g} s over {MANY_LOSSES}+ losses, "
             f"{HALF_MINIMUM_FEW_S[0]:g}-{HALF_MINIMUM_FEW_S[1]:g} s over fewer)",
             all(ok for _, ok in half)),
        _row("AVPF cuts this by one to three orders of magnitude (at least one)",
             f"{spread}" + (f"; AVPF waits 0 s in {zero} of {len(orders)} rows" if zero else ""),
             all(o >= 1 for o in orders)),
    ]


def suppression(t: dict[str, pd.DataFrame]) -> list[tuple[str, str, bool]]:
    d = t.get("case5_feedback")
    if d is None or d.empty:  # no member wanted to send feedback
        return []
    rate = d["fb_suppressed_mean"] / d["fb_wanted_mean"]
    shared, spread = rate[d["losses"] == "shared"], rate[d["losses"] == "distributed"]
    if not len(shared) or not len(spread):
        return []
    return [_row("Shared losses let suppression work",
                 f"case 5 suppression rate: shared losses {shared.min():.2f}-{shared.max():.2f} per member "
                 f"(works: above {SUPPRESSION_WORKS:g}), distributed {spread.min():.3f}-{spread.max():.3f} "
                 f"(none: under {SUPPRESSION_NONE:g})",
                 (shared > SUPPRESSION_WORKS).all() and (spread < SUPPRESSION_NONE).all())]


def rtt_trade_off(t: dict[str, pd.DataFrame]) -> list[tuple[str, str, bool]]:
    """The draft's RTT-based dither (case 7, k) against the RFC's (case 8,
    l): fewer suppression failures over the grid in every scenario, and at
    the defaults (k = 1, l = 0.5), where the nearer member is nearer the
    source (scenarios 1 and 3), under 0.8 times the RFC's failures at
    under 1.25 times its loss report delay."""
    draft, rfc = t.get("case7_sender"), t.get("case8_sender")
    if draft is None or rfc is None:
        return []
    draft, rfc = draft.set_index(["scenario", "k"]), rfc.set_index(["scenario", "l"])
    scenarios = sorted(set(draft.index.get_level_values(0)) & set(rfc.index.get_level_values(0)))
    parts, ok = [], True
    for sid in scenarios:
        fd, fr = draft.loc[sid, "failure_rate_mean"].mean(), rfc.loc[sid, "failure_rate_mean"].mean()
        ok &= fd < fr
        text = f"scenario {sid}: failures {fd:.2f} against {fr:.2f} over the grid"
        if sid in (1, 3) and (sid, 1.0) in draft.index and (sid, 0.5) in rfc.index:
            d, r = draft.loc[(sid, 1.0)], rfc.loc[(sid, 0.5)]
            ok &= (d["failure_rate_mean"] < 0.8 * r["failure_rate_mean"]
                   and d["loss_report_delay_mean_s_mean"] < 1.25 * r["loss_report_delay_mean_s_mean"])
            text += (f", {d['failure_rate_mean']:.2f} against {r['failure_rate_mean']:.2f} at k = 1, l = 0.5 "
                     f"with delays {d['loss_report_delay_mean_s_mean']:.3f} and "
                     f"{r['loss_report_delay_mean_s_mean']:.3f} s")
        parts.append(text)
    if not parts:
        return []
    return [_row("An RTT estimate improves the trade-off (draft k rule against the RFC's l)", "; ".join(parts),
                 ok)]


def shape_checks(t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each expected statement the run's cases can check: the statement,
    what was measured, whether it holds."""
    rows = [*rtcp_share(t), *waiting(t), *suppression(t), *rtt_trade_off(t)]
    return pd.DataFrame(rows, columns=["expected (study)", "measured", "holds"])
