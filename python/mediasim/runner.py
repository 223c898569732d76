"""Run one scenario."""

from __future__ import annotations

import warnings
from pathlib import Path

from . import _engine
from .errors import OutputTruncated, RunStoppedEarly
from .results import Results
from .log import get as _logger
from .scenario import Scenario, as_scenario

log = _logger("runner")


def run(
    scenario: Scenario | dict | str | Path,
    seed: int = 0,
    replication: int = 0,
    out: str | Path | None = None,
    pcap: bool = False,
    trace: bool = False,
    max_events: int | None = None,
    max_wall_s: float | None = None,
    max_memory_mb: float | None = None,
    progress: bool = False,
) -> Results:
    """Runs ``scenario`` (a Scenario, a dict, or a file path) once.

    ``seed`` and ``replication`` select the random streams: the same pair
    gives bit-identical results. With ``out``, tables are written there as
    Parquet (and pcap files under ``out/pcap`` when ``pcap`` is on or the
    scenario asks for it).

    ``max_events``, ``max_wall_s`` and ``max_memory_mb`` (resident memory
    of this process) end the run early and cleanly: the results cover the
    simulated time up to that point, ``meta["stopped_early"]`` says why,
    and a ``RunStoppedEarly`` warning is issued.

    ``progress=True`` shows a progress bar in simulated seconds (updated
    every 2^20 events, so only long runs show it moving).
    """
    sc = as_scenario(scenario)
    if seed < 0 or replication < 0:
        raise ValueError("seed and replication must be non-negative integers")
    pcap_dir = str(Path(out) / "pcap") if out is not None else None
    for name, v in (("max_events", max_events), ("max_wall_s", max_wall_s), ("max_memory_mb", max_memory_mb)):
        if v is not None and not v > 0:
            raise ValueError(f"{name} must be positive (got {v})")
    bar, report = _sim_time_bar(sc, progress)
    try:
        raw, meta = _engine.run(sc.to_json(), seed=seed, replication=replication, pcap_dir=pcap_dir, pcap=pcap,
                                trace=trace, max_events=max_events, max_wall_s=max_wall_s,
                                max_memory_mb=max_memory_mb, progress=report)
    finally:
        if bar is not None:
            bar.close()
    res = Results.from_engine(raw, meta)
    m = res.meta
    log.info("%s seed %d replication %d: %s s simulated, %d events in %.3f s; %d delivered, %d dropped",
             sc.name, seed, replication, m["duration_s"], m["events"], m["wall_s"], m["delivered"], m["dropped"])
    if res.meta.get("stopped_early"):
        warnings.warn(f"{sc.name}: run stopped early: {res.meta['stopped_early']}", RunStoppedEarly, stacklevel=2)
    for key, limit in (("trace_truncated", "limits.max_trace_rows"), ("pcap_truncated", "limits.max_pcap_bytes")):
        if res.meta.get(key):
            warnings.warn(f"{sc.name}: {key.split('_')[0]} stopped at {limit}; raise it in the scenario to keep more",
                          OutputTruncated, stacklevel=2)
    if out is not None:
        res.to_parquet(out)
    return res


def _sim_time_bar(sc: Scenario, on: bool):
    """A tqdm bar over the scenario's simulated seconds, and the engine's
    progress callback that moves it (None, None when off)."""
    if not on:
        return None, None
    from .log import bar as progress_bar

    try:
        total = float(sc.data.get("duration_s"))
    except (TypeError, ValueError):
        return None, None  # no or a bad duration_s: the engine names it
    if not total > 0:
        return None, None
    bar = progress_bar(total, sc.name, on, unit="sim s", unit_scale=True, leave=False,
                       bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.4g}/{total:.4g} simulated s [{elapsed}<{remaining}]")
    if bar.disable:
        return None, None

    def report(now_s: float, events: int) -> None:
        bar.update(now_s - bar.n)
        bar.set_postfix_str(f"{events:,} events", refresh=False)

    return bar, report
