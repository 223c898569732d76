"""The media-scaling study's expected shape (shared/experiments/
media-scaling.md), each statement checked against the study's tables
(``media_scaling.aggregate``): what was measured and whether it holds,
with the thresholds of the study-level tests (tests/test_media_scaling.py)."""

from __future__ import annotations

import pandas as pd

#: "Roughly fair": every flow's throughput within this range of its fair share.
FAIR_RANGE = (0.5, 1.6)
#: "Far higher" jitter: TCP's inter-arrival coefficient of variation over
#: MM_APP's at least this factor.
JITTER_FACTOR = 3.0


def shape_checks(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each statement of the expected shape: the statement, what was
    measured, whether it holds."""
    rows = []
    tp = tables["throughput"]
    lo, hi = tp["share_of_fair"].min(), tp["share_of_fair"].max()
    rows.append(("Roughly fair shares for all",
                 f"every flow {lo:.2f}-{hi:.2f} of its fair share in every window "
                 f"(roughly: {FAIR_RANGE[0]:g}-{FAIR_RANGE[1]:g})",
                 bool(tp["share_of_fair"].between(*FAIR_RANGE).all())))
    kinds = tables["throughput_by_kind"]
    # Heavy congestion: the window with the most flows under way.
    heavy = kinds.groupby("window", sort=False)["n"].sum().idxmax()
    k = kinds[kinds["window"] == heavy].set_index("kind")["share_of_fair"]
    media = [m for m in ("mm", "mpeg") if m in k.index]
    rows.append(("Media somewhat greedier than TCP under heavy congestion",
                 f"{heavy}: " + ", ".join(f"{m} {k[m]:.2f}" for m in media) + f" of the fair share, ftp {k['ftp']:.2f}",
                 bool(media) and all(k[m] > k["ftp"] for m in media)))
    j = tables["jitter"].set_index("kind")["interarrival_cv_mean"]
    rows.append(("TCP's inter-arrival jitter far higher than the media flows'",
                 f"coefficient of variation of inter-arrival times: ftp {j['ftp']:.2f}, mm {j['mm']:.2f} "
                 f"({j['ftp'] / j['mm']:.1f} times; far: at least {JITTER_FACTOR:g})",
                 bool(j["ftp"] > JITTER_FACTOR * j["mm"])))
    return pd.DataFrame(rows, columns=["expected (study)", "measured", "holds"])
