"""Instructions, cache misses and mispredicted branches per delivered media
packet, counted by valgrind's cache and branch simulators (`mediasim bench
--calls --counts`).

Wall times on a shared host swing by a third between runs of one build;
these counts do not, so they judge a change to the engine where the wall
time cannot. Each workload runs in a fresh process under
``valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes``, collecting
only inside the engine's event loop (``run_until``: the scenario's set-up and result tables
drop out), for two durations; the difference between the two runs' counts,
divided by the media packets delivered between them, is the cost of a
media packet in steady state (start-up drops out too). The instructions
are also split into the parts of the wall-time profile (wall_profile.py:
event loop and network, sender, receiver, RTCP, feedback, libc), each
function's own instructions in the part its name puts it in.

The simulated caches default to this project's benchmark host's per-core
sizes (32 KiB first-level instruction and data caches, 512 KiB second
level, 8-way, 64-byte lines); valgrind's last level is that second level.
Valgrind's branch predictor is its own simple model (a table of two-bit
counters for conditional branches, the last target for indirect ones), not
the host's: its mispredictions compare workloads, they do not price them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .wall_profile import PART_NAMES, part_of

# chosen: the benchmark host's per-core caches (lscpu: 2 x 32 KiB L1d and
# L1i, 2 x 512 KiB L2); 8-way, 64-byte lines.
L1_BYTES = 32 * 1024
LL_BYTES = 512 * 1024
WAYS = 8
LINE_BYTES = 64

#: The counted events, in callgrind's names.
EVENTS = ("Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bcm", "Bim")


@dataclass(frozen=True)
class Counts:
    """One run's totals inside the event loop, its workload's name, its
    media packets and its instructions in each part of the simulator
    (`wall_profile.PART_NAMES`)."""

    events: dict[str, int]
    media_delivered: int
    workload: str = ""
    part_instructions: dict[str, int] = field(default_factory=dict)


def valgrind_path() -> str:
    """valgrind's path, or a RuntimeError saying how to get it."""
    path = shutil.which("valgrind")
    if path is None:
        raise RuntimeError("--counts needs valgrind on PATH (Debian: apt-get install valgrind)")
    return path


def parse_callgrind_totals(text: str) -> dict[str, int]:
    """The totals of a callgrind output file: its ``events:`` line names
    them, its ``summary:`` (or ``totals:``) line counts them."""
    names: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("events:"):
            names = line.split(":", 1)[1].split()
        elif line.startswith(("summary:", "totals:")) and names is not None:
            values = [int(v) for v in line.split(":", 1)[1].split()]
            # Trailing zero counts may be left off.
            values += [0] * (len(names) - len(values))
            return dict(zip(names, values))
    raise ValueError("not a callgrind output file: no 'events:' line followed by 'summary:' or 'totals:'")


_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


def _name(table: dict[str, str], value: str) -> str:
    """A compressed callgrind name: ``(id) name`` defines an id, ``(id)``
    refers to one defined before; anything else is the name itself."""
    m = _NAMED.match(value.strip())
    if m is None:
        return value.strip()
    if m.group(2) is not None:
        table[m.group(1)] = m.group(2)
    try:
        return table[m.group(1)]
    except KeyError:
        raise ValueError(f"callgrind name id ({m.group(1)}) used before it is defined") from None


def parse_callgrind_self_instructions(text: str) -> dict[tuple[str, str], int]:
    """Each function's own instructions (``Ir``, not those of the functions
    it calls) in a callgrind output file, by (object file, function). Code
    inlined into a function counts in it, as in a perf profile: a cost line
    belongs to the function of the last ``fn=`` whatever file it names
    (``fi=``, ``fe=``). The cost line after ``calls=`` is the callee's
    inclusive cost, so it is skipped."""
    objects: dict[str, str] = {}
    functions: dict[str, str] = {}
    n_positions, ir_at = 1, None
    ob = fn = ""
    skip_next = False
    out: dict[tuple[str, str], int] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head = line[0]
        if head.isdigit() or head in "+-*":
            if skip_next:
                skip_next = False
                continue
            if ir_at is None:
                raise ValueError("not a callgrind output file: a cost line before the 'events:' line")
            fields = line.split()
            values = fields[n_positions:]
            if ir_at < len(values):
                key = (ob, fn)
                out[key] = out.get(key, 0) + int(values[ir_at])
            continue
        field, _, value = line.partition("=")
        if line.startswith("positions:"):
            n_positions = len(line.split(":", 1)[1].split())
        elif line.startswith("events:"):
            names = line.split(":", 1)[1].split()
            if "Ir" not in names:
                raise ValueError("callgrind output without instruction counts (no Ir event)")
            ir_at = names.index("Ir")
        elif field == "ob":
            ob = _name(objects, value)
        elif field == "cob":
            _name(objects, value)
        elif field == "fn":
            fn = _name(functions, value)
        elif field == "cfn":
            _name(functions, value)
        elif field == "calls":
            skip_next = True
    return out


def instructions_by_part(self_counts: dict[tuple[str, str], int]) -> dict[str, int]:
    """Own instructions summed over the simulator's parts, each function in
    the part `wall_profile.part_of` gives it (as the wall-time profile's
    samples), by its object file's name."""
    parts = dict.fromkeys(PART_NAMES, 0)
    for (ob, fn), ir in self_counts.items():
        parts[part_of(Path(ob).name, fn)] += ir
    return parts


def count_run(workload: str, n: int, duration_s: float, l1_bytes: int = L1_BYTES,
              ll_bytes: int = LL_BYTES, i1_bytes: int | None = None) -> Counts:
    """One workload (from ``bench.WORKLOADS``) under callgrind, collecting
    inside the event loop only. ``i1_bytes``: a first-level instruction
    cache of another size than the data cache's ``l1_bytes`` (a power of
    two), to see how much code a workload's packets run through."""
    valgrind = valgrind_path()
    with tempfile.TemporaryDirectory(prefix="mediasim-counts-") as tmp:
        out = Path(tmp) / "callgrind.out"
        cache = lambda size: f"{size},{WAYS},{LINE_BYTES}"  # noqa: E731
        cmd = [valgrind, "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes",
               f"--I1={cache(i1_bytes or l1_bytes)}", f"--D1={cache(l1_bytes)}", f"--LL={cache(ll_bytes)}", "--toggle-collect=*run_until*",
               f"--callgrind-out-file={out}", sys.executable, "-m", "mediasim.validation.bench",
               workload, str(n), str(duration_s), "1"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                              env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"callgrind run of {workload} with {n} flows for {duration_s} s failed:\n"
                               f"{proc.stderr[-2000:]}")
        text = out.read_text()
        events = parse_callgrind_totals(text)
        parts = instructions_by_part(parse_callgrind_self_instructions(text))
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    return Counts(events=events, media_delivered=int(row["media_delivered"]), workload=row["workload"],
                  part_instructions=parts)


def _packets_between(short: Counts, long: Counts) -> int:
    packets = long.media_delivered - short.media_delivered
    if packets <= 0:
        raise ValueError("the longer run delivered no more media packets than the shorter one")
    return packets


def per_media_packet(short: Counts, long: Counts) -> dict[str, float]:
    """Each event's count per media packet delivered between the shorter
    run's end and the longer one's."""
    packets = _packets_between(short, long)
    return {e: (long.events.get(e, 0) - short.events.get(e, 0)) / packets for e in EVENTS}


def parts_per_media_packet(short: Counts, long: Counts) -> dict[str, float]:
    """Each part's own instructions per media packet delivered between the
    shorter run's end and the longer one's (as `per_media_packet`)."""
    packets = _packets_between(short, long)
    names = dict.fromkeys([*long.part_instructions, *short.part_instructions])
    return {p: (long.part_instructions.get(p, 0) - short.part_instructions.get(p, 0)) / packets for p in names}


def row_of(workload_name: str, n: int, durations: tuple[float, float], per: dict[str, float],
           packets: int) -> dict[str, Any]:
    first_level = per["I1mr"] + per["D1mr"] + per["D1mw"]
    return {
        "workload": workload_name,
        "flows": n,
        "sim_s": f"{durations[0]:g}-{durations[1]:g}",
        "media_packets": packets,
        "instructions": round(per["Ir"], 1),
        "i1_misses": round(per["I1mr"], 2),
        "d1_misses": round(per["D1mr"] + per["D1mw"], 2),
        "first_level_misses": round(first_level, 2),
        "ll_misses": round(per["ILmr"] + per["DLmr"] + per["DLmw"], 2),
        "mispredicts": round(per["Bcm"] + per["Bim"], 2),
    }


def run_counts(workloads: list[str], n: int, durations: tuple[float, float],
               l1_bytes: int = L1_BYTES, ll_bytes: int = LL_BYTES,
               i1_bytes: int | None = None) -> list[dict[str, Any]]:
    """Every workload at both durations (as many runs at once as there are
    cores: the counts do not depend on load), one row each, with the last
    row's (the CBR flows') ratios beside."""
    from .bench import check_two_durations

    check_two_durations(workloads, durations)
    valgrind_path()
    jobs = [(w, d) for w in workloads for d in durations]
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        done = dict(zip(jobs, pool.map(lambda j: count_run(j[0], n, j[1], l1_bytes, ll_bytes, i1_bytes), jobs)))
    rows = []
    for w in workloads:
        short, long = done[(w, durations[0])], done[(w, durations[1])]
        row = row_of(long.workload, n, durations, per_media_packet(short, long), _packets_between(short, long))
        row.update({f"{p}_instructions": round(v, 1) for p, v in parts_per_media_packet(short, long).items()})
        rows.append(row)
    base = rows[-1]
    for r in rows:
        r["instructions_x_cbr"] = round(r["instructions"] / max(base["instructions"], 1e-9), 2)
        # Under one miss a packet (a few CBR flows whose state stays in the
        # caches), a ratio to it says nothing.
        r["misses_x_cbr"] = (round(r["first_level_misses"] / base["first_level_misses"], 2)
                             if base["first_level_misses"] >= 1 else None)
        r["mispredicts_x_cbr"] = round(r["mispredicts"] / max(base["mispredicts"], 1e-9), 2)
    return rows
