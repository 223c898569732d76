"""What ``mediasim run`` prints: the per-flow summary, the TCP, RTP and
media tables when the run has such flows, and the packet books, from plain
columns (lists), so that the command needs neither pandas nor numpy when
it writes no files (python -c "import pandas" alone takes longer than a
small run)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .reporting.plain_table import plain_table

if TYPE_CHECKING:
    from .results import Tables

# The tables the printout reads (the engine converts only these).
TABLES = ["flows", "tcp", "rtp", "media"]
SUMMARY = ["flow", "receiver", "sent", "received", "lost", "in_flight", "loss_rate", "throughput_bps",
           "delay_mean_ms", "delay_p99_ms", "jitter_ms"]
TCP = ["flow", "bytes_delivered", "goodput_bps", "completion_time_s", "retransmissions", "timeouts",
       "fast_recoveries", "srtt_ms"]
RTP = ["flow", "avpf", "rtcp_share_pct", "early_packets", "fb_wanted", "fb_sent", "fb_suppressed", "fb_discarded",
       "mwt_s", "rtt_s", "loss_report_delay_mean_s"]
# A media stream's sender and viewer side: what the call looked and
# sounded like (frames for video, the E-model for voice).
MEDIA = ["flow", "frames_sent", "media_rate_bps", "pacer_delay_mean_ms", "frames_played", "frames_late",
         "frames_lost", "frames_undecodable", "frame_delay_mean_ms", "frame_delay_p95_ms", "freezes", "mouth_to_ear_ms",
         "r_factor", "mos"]


def _pick(table: dict[str, list[Any]], names: list[str]) -> dict[str, list[Any]]:
    return {n: table[n] for n in names if n in table}


def _rows(table: dict[str, list[Any]] | None) -> int:
    return len(next(iter(table.values()))) if table else 0


def run_text(name: str, seed: int, replication: int, tables: dict[str, dict[str, list[Any]]],
             meta: dict[str, Any]) -> str:
    """The printout of one run (``tables``: name -> column -> list)."""
    m = meta
    simulated = f"{m['duration_s']} s"
    if m.get("stopped_early"):  # at a budget: the tables cover the time up to there
        simulated = f"{m['end_ns'] / 1e9:g} of {m['duration_s']} s (stopped early)"
    out = [f"# {name}: {simulated} simulated, seed {seed}, replication {replication}",
           plain_table(_pick(tables["flows"], SUMMARY))]
    for title, table, cols in (("TCP", "tcp", TCP), ("RTP members", "rtp", RTP), ("Media", "media", MEDIA)):
        if _rows(tables.get(table)):
            out += ["", f"{title}:", plain_table(_pick(tables[table], cols))]
    out += ["", f"packets: originated {m['originated']}, multicast copies {m['multicast_copies']}, "
                f"delivered {m['delivered']}, dropped {m['dropped']}, in flight {m['in_flight']} (balanced)",
            f"events: {m['events']} in {m['wall_s']:.3f} s wall"]
    return "\n".join(out)


def printed_columns(tables: Tables) -> dict[str, dict[str, list[Any]]]:
    """The printed tables of a run's ``Results.tables`` as plain columns,
    as the lean path has them (``Tables.plain``), for ``run_text``."""
    return {n: tables.plain(n) for n in TABLES if n in tables}
