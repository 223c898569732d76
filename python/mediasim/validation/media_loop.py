"""The path both media controller cross-checks run (``gcc_rate_crosscheck``,
``scream_crosscheck``): RFC 8867 case 5.1's pattern, shortened. One call
from s to r over one link of 1 Mbit/s, 0.6 at 30 s and 1 again at 50 s
(70 s in all), 50 ms one way, 300 ms (37,500 bytes) of drop-tail queue.
Also what the two compare: figures over the last 10 s of each capacity
stretch, the back-off after the drop, and the printed table of
differences."""

from __future__ import annotations

import math
from typing import Any, Iterator

DURATION_S = 70.0
ONE_WAY_MS = 50.0
QUEUE_BYTES = 37_500  # 300 ms at 1 Mbit/s (RFC 8867)
CAPS = [(0.0, 1e6), (30.0, 0.6e6), (50.0, 1e6)]

#: (figure, mediasim, reference, tolerance, within)
Row = tuple[str, float, float, float, bool]


def call_scenario(name: str, sender: dict[str, Any], session_bw_bps: float) -> dict[str, Any]:
    """The path with one RTP session: ``sender`` (a member on node s) to a
    plain receiver on r; series and the packets table on."""
    link = {"a": "s", "b": "r", "rate_bps": CAPS[0][1], "delay_ms": ONE_WAY_MS,
            "ab": {"rate_bps": [[t, c] for t, c in CAPS]},
            "queue": {"type": "droptail", "limit_bytes": QUEUE_BYTES}}
    return {"name": name, "duration_s": DURATION_S, "measure": {"series": True, "packets": True},
            "nodes": [{"name": "s"}, {"name": "r"}], "links": [link],
            "rtp_sessions": [{"name": "c", "transport": "unicast", "session_bw_bps": session_bw_bps,
                              "media_payload_bytes": 1160, "avpf": {"trr_interval_ms": 1000},
                              "members": [{"node": "s", **sender}, {"node": "r"}]}]}


def stretches() -> Iterator[tuple[float, float, float]]:
    """(from_s, to_s, capacity_bps): the last 10 s of each capacity stretch."""
    ends = [at for at, _ in CAPS[1:]] + [DURATION_S]
    for (_, cap), end in zip(CAPS, ends):
        yield end - 10.0, end, cap


def backoff_s(samples: list[dict[str, float]], key: str) -> float:
    """Time after the drop to the first sample of ``key`` under the new capacity."""
    drop_at, drop_cap = CAPS[1]
    return next((s["t"] - drop_at for s in samples if s["t"] > drop_at and s[key] < drop_cap), math.nan)


def within(name: str, ours: float, ref: float, tolerance: float) -> Row:
    return name, ours, ref, tolerance, abs(ours - ref) <= tolerance


def print_rows(rows: list[Row], reference: str) -> None:
    print(f"{'figure':<26}{'mediasim':>10}{reference:>11}{'tolerance':>11}  within")
    for name, a, b, tol, ok in rows:
        print(f"{name:<26}{a:>10.3f}{b:>11.3f}{tol:>11.3f}  {'yes' if ok else 'NO'}")
