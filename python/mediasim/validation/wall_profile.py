"""Where the wall time of a media packet goes, by part of the simulator
(`mediasim bench --calls --profile`), sampled by Linux perf.

valgrind's counts (cache_counts.py) are exact but price nothing: a miss
or a mispredicted branch costs what the host makes it cost. This samples
the time itself: each workload runs in a fresh process under
``perf record -e cpu-clock -c PERIOD`` (a software clock, so it works in
guests without hardware counters), one sample every ``PERIOD_NS`` of CPU
time. Each sample is put in one part by the function it landed in
(`part_of`); code inlined into another function counts where it was
inlined (the event loop inlines the queues' and links' events). As for
the counts, every workload runs for two durations and the difference
between the two, divided by the media packets delivered between them, is
a media packet's time in steady state: Python, set-up and result tables
drop out.

Sampling has noise: a part's count moves by about its square root (at the
full size some 10,000 samples for the calls and 2,000 for the CBR flows,
a few percent of the smaller parts). It also slows a run by about a
tenth, the interrupts' own cost.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: chosen: one sample per 250 us of CPU time (4 kHz): at 20 kHz the
#: interrupts slowed the calls by more than half, at 4 kHz by about a tenth.
PERIOD_NS = 250_000

#: The parts, in the order they are tried: a function goes to the first
#: whose pattern matches its name (functions of the engine's library that
#: match none, the standard library's generic code among them, go to the
#: event loop and the network, `network`; functions outside it to libc or
#: outside). RTCP's wire code (`wire::rtcp`) counts as feedback: a
#: feedback message is an RTCP packet too, and it is what calls that code
#: most per media packet (without feedback, the calls spend under a tenth as
#: much there).
PARTS: tuple[tuple[str, str], ...] = (
    ("feedback", r"::proto::feedback::|FeedbackOut|RtpMember::on_control|::wire::rtcp::|::wire::twcc"),
    ("rtcp", r"::proto::rtp::avpf|::proto::rtp::rtcp_timing|::app::rtp::compound|RtpMember::send_rtcp"),
    ("receiver", r"::app::media::playout|RtpMember::release_held|::app::rtp::held|"
                 r"RtpMember as mediasim_engine::app::App>::on_packet|::measure::|::proto::rtp::stats|"
                 r"::app::rtp::viewer|::app::sink"),
    ("sender", r"mediasim_engine::app::|::net::payload::|RtpData"),
    ("network", r"."),
)
#: Where a sample outside the engine's library goes.
LIBC, OUTSIDE = "libc", "outside"
#: Every part, in the order of the table's columns.
PART_NAMES = tuple(p for p, _ in PARTS) + (LIBC, OUTSIDE)
#: The parts reported: the engine's and the C library's. Samples outside
#: (the interpreter's start-up, numpy's threads, the kernel) are not a
#: media packet's: their difference between two runs is start-up's noise.
ENGINE_PARTS = PART_NAMES[:-1]

_PATTERNS = tuple((name, re.compile(rx)) for name, rx in PARTS)


def perf_path() -> str:
    """perf's path, or a RuntimeError saying how to get it."""
    path = shutil.which("perf")
    if path is None:
        raise RuntimeError("--profile needs Linux perf on PATH (Debian: apt-get install linux-perf)")
    return path


def part_of(dso: str, symbol: str) -> str:
    """The part a sample in function ``symbol`` of library ``dso`` counts in."""
    if "_engine" in dso:
        return next(name for name, rx in _PATTERNS if rx.search(symbol))
    if dso.startswith("libc.") or dso.startswith("libc-"):
        return LIBC
    return OUTSIDE


def parse_perf_report(text: str) -> dict[str, int]:
    """Samples per part from ``perf report -F sample,dso,sym -t ';'``
    (lines ``samples;dso;[.] symbol``; comments, blank lines and a call
    graph's lines, which do not start with a count, skipped)."""
    parts = dict.fromkeys(PART_NAMES, 0)
    for line in text.splitlines():
        if not line.strip()[:1].isdigit():
            continue
        fields = line.split(";")
        if len(fields) < 3:
            raise ValueError(f"not a perf report line (samples;dso;symbol): {line!r}")
        symbol = re.sub(r"^\s*\[[.k]\]\s*", "", fields[2]).strip()
        parts[part_of(fields[1].strip(), symbol)] += int(fields[0])
    return parts


@dataclass
class Profile:
    """One run's samples per part and the media packets it delivered."""
    samples: dict[str, int]
    media_delivered: int
    workload: str = ""


def profile_run(workload: str, n: int, duration_s: float, period_ns: int = PERIOD_NS) -> Profile:
    """One workload (from ``bench.WORKLOADS``) in a fresh process under perf."""
    perf = perf_path()
    with tempfile.TemporaryDirectory(prefix="mediasim-profile-") as tmp:
        data = Path(tmp) / "perf.data"
        cmd = [perf, "record", "-q", "-e", "cpu-clock", "-c", str(period_ns), "-o", str(data), "--",
               sys.executable, "-m", "mediasim.validation.bench", workload, str(n), str(duration_s), "1"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                              env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
        if proc.returncode != 0 or not data.exists():
            raise RuntimeError(f"perf record of {workload} with {n} flows for {duration_s} s failed:\n"
                               f"{proc.stderr[-2000:]}")
        report = subprocess.run([perf, "report", "-i", str(data), "--no-children", "--sort", "dso,symbol",
                                 "-F", "sample,dso,sym", "-t", ";", "--stdio"],
                                capture_output=True, text=True, check=False)
        if report.returncode != 0:
            raise RuntimeError(f"perf report failed:\n{report.stderr[-2000:]}")
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    return Profile(parse_perf_report(report.stdout), int(row["media_delivered"]), row["workload"])


def per_media_packet_us(short: Profile, long: Profile, period_ns: int = PERIOD_NS) -> dict[str, float]:
    """Each part's time per media packet delivered between the shorter
    run's end and the longer one's, in microseconds."""
    packets = long.media_delivered - short.media_delivered
    if packets <= 0:
        raise ValueError("the longer run delivered no more media packets than the shorter one")
    return {p: (long.samples[p] - short.samples[p]) * period_ns / 1e3 / packets for p in PART_NAMES}


def run_profiles(workloads: list[str], n: int, durations: tuple[float, float],
                 period_ns: int = PERIOD_NS) -> list[dict[str, Any]]:
    """Every workload at both durations, one after another (sampled time
    depends on the host's load, unlike the counts), one row each: a media
    packet's microseconds in each part and in all, and the ratio of each
    to the last row's (the CBR flows')."""
    from .bench import check_two_durations

    check_two_durations(workloads, durations)
    perf_path()
    rows = []
    for w in workloads:
        short, long = (profile_run(w, n, d, period_ns) for d in durations)
        per = per_media_packet_us(short, long, period_ns)
        row: dict[str, Any] = {"workload": long.workload, "flows": n, "sim_s": f"{durations[0]:g}-{durations[1]:g}",
                               "media_packets": long.media_delivered - short.media_delivered,
                               "samples": sum(long.samples[p] - short.samples[p] for p in ENGINE_PARTS)}
        row.update({f"{p}_us": round(per[p], 4) for p in ENGINE_PARTS})
        row["total_us"] = round(sum(per[p] for p in ENGINE_PARTS), 4)
        rows.append(row)
    base = rows[-1]
    for r in rows:
        # What the engine's whole run and its event loop and network alone
        # cost against the CBR flows' (the last row).
        r["total_x_cbr"] = round(r["total_us"] / max(base["total_us"], 1e-9), 2)
        r["network_x_cbr"] = round(r["network_us"] / max(base["network_us"], 1e-9), 2)
    return rows
