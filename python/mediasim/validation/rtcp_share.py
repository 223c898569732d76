"""The RTCP share of a large RTP session over time (RFC 3550 6.2: the
session's RTCP stays at 5% of the session bandwidth once members know the
group). Runs the large-group bench workload with throughput windows on the
pooled RTCP rows.

    python -m mediasim.validation.rtcp_share MEMBERS DURATION_S
"""

from __future__ import annotations

import sys

import pandas as pd

from .bench import GROUP_BW_BPS, rtp_group

EDGES_S = (0, 5, 20, 50, 100, 200, 300, 400, 500, 600, 800, 1000, 1500, 2000, 3000, 4000, 5000)


def rtcp_share(members: int, duration_s: float, seed: int = 1) -> pd.DataFrame:
    """Per window: the session's RTCP bit rate as a percentage of the
    session bandwidth (IP and UDP included). A pooled row sums copies over
    the other members, so its bytes are divided by members - 1."""
    from .. import run

    sc = rtp_group(members, duration_s)
    edges = [e for e in EDGES_S if e < duration_s] + [duration_s]
    sc["measure"]["windows_s"] = [[a, b] for a, b in zip(edges, edges[1:])]
    t = run(sc, seed=seed).throughput
    t = t[t["flow"].str.endswith("/rtcp")]
    g = t.groupby(["window_start_s", "window_end_s"], as_index=False)["bytes"].sum()
    g["rtcp_pct"] = 100 * g["bytes"] * 8 / (members - 1) / (g["window_end_s"] - g["window_start_s"]) / GROUP_BW_BPS
    return g[["window_start_s", "window_end_s", "rtcp_pct"]]


if __name__ == "__main__":
    print(rtcp_share(int(sys.argv[1]), float(sys.argv[2])).to_string(index=False))
