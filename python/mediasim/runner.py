"""Run one scenario."""

from __future__ import annotations

import math
import operator
import os
import warnings
from numbers import Real
from typing import TYPE_CHECKING, Any

from . import _engine
from .errors import OutputTruncated, RunStoppedEarly
from .log import get as _logger
from .scenario import Scenario, as_scenario

if TYPE_CHECKING:
    from pathlib import Path

    from .results import Results

log = _logger("runner")


def run(
    scenario: Scenario | dict | str | Path,
    seed: int = 0,
    replication: int = 0,
    out: str | Path | None = None,
    packets: bool = False,
    series: bool = False,
    trace: bool = False,
    pcap: bool = False,
    overwrite: bool = False,
    max_events: int | None = None,
    max_wall_s: float | None = None,
    max_memory_mb: float | None = None,
    progress: bool = False,
) -> Results:
    """Runs ``scenario`` (a Scenario, a dict, or a file path) once.

    ``seed`` and ``replication`` select the random streams: the same pair
    gives bit-identical results.

    ``packets``, ``series`` and ``trace`` record the per-packet tables
    (``packets``, ``drops``), the ``*_series`` tables and the per-hop
    ``trace``, as the command line's ``--packets``, ``--series`` and
    ``--trace`` do (and as ``measure.packets`` / ``measure.series`` /
    ``measure.trace`` in the scenario, which stay on if set there).

    With ``out``, tables are written there as Parquet with ``meta.json``
    (and pcap files under ``out/pcap`` when ``pcap`` is on or the
    scenario asks for it). The folder holds this run only: one that holds
    an earlier output is refused unless ``overwrite`` (then replaced whole
    once this run is complete; ``mediasim.outfolder``).

    ``max_events``, ``max_wall_s`` and ``max_memory_mb`` (resident memory
    of this process) end the run early and cleanly: the results cover the
    simulated time up to that point, ``meta["stopped_early"]`` says why,
    and a ``RunStoppedEarly`` warning is issued.

    ``progress=True`` shows a progress bar in simulated seconds (updated
    every 2^20 events, so only long runs show it moving).
    """
    for name, v in (("packets", packets), ("series", series), ("trace", trace), ("pcap", pcap),
                    ("overwrite", overwrite), ("progress", progress)):
        # A text "no" would count as on: only a bool says which.
        if not isinstance(v, bool):
            raise TypeError(f"{name} must be True or False (got {v!r})")
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a folder's path (got {out!r})")
    sc = with_recording(as_scenario(scenario), packets=packets, series=series)
    budgets: dict[str, Any] = dict(max_events=max_events, max_wall_s=max_wall_s, max_memory_mb=max_memory_mb)
    from .results import Results

    if out is None:
        raw, meta = engine_run(sc, seed, replication, pcap=pcap, trace=trace, progress=progress, **budgets)
        return Results.from_engine(raw, meta)
    from .outfolder import staged

    with staged(out, "run", overwrite) as stage:
        raw, meta = engine_run(sc, seed, replication, out=stage, pcap=pcap, trace=trace, progress=progress,
                               **budgets)
        res = Results.from_engine(raw, meta)
        res.write_tables(stage)
    return res


def with_recording(sc: Scenario, packets: bool = False, series: bool = False) -> Scenario:
    """``sc``, or a copy of it with ``measure.packets`` / ``measure.series``
    turned on (the caller's scenario is never changed)."""
    if not (packets or series):
        return sc
    sc = Scenario.from_dict(sc.data)
    if packets:
        sc.measure(packets=True)
    if series:
        sc.measure(series=True)
    return sc


def _u64(name: str, v: Any, least: int = 0) -> int:
    """``v`` as the engine's unsigned 64-bit integer, at least ``least``
    (any integer type, numpy's too; not a bool), or a ValueError naming
    ``name``."""
    try:
        i = operator.index(v)
    except TypeError:
        i = None
    if i is None or isinstance(v, bool) or not least <= i < 2 ** 64:
        raise ValueError(f"{name} must be an integer from {least} to 2**64 - 1 (got {v!r})")
    return i


def engine_run(sc: Scenario, seed: int = 0, replication: int = 0, out: str | Path | None = None,
               pcap: bool = False, trace: bool = False, max_events: int | None = None,
               max_wall_s: float | None = None, max_memory_mb: float | None = None, progress: bool = False,
               only: list[str] | None = None, lists: bool = False) -> tuple[dict, str]:
    """The engine's raw tables (``only`` those named; as lists with
    ``lists``: no numpy) and its metadata JSON, with the run logged and its
    warnings issued. ``run`` wraps them into Results."""
    import json

    seed, replication = _u64("seed", seed), _u64("replication", replication)
    pcap_dir = os.path.join(os.fspath(out), "pcap") if out is not None else None
    if max_events is not None:
        _u64("max_events", max_events, least=1)
    for name, v in (("max_wall_s", max_wall_s), ("max_memory_mb", max_memory_mb)):
        if v is not None and not (isinstance(v, Real) and not isinstance(v, bool) and 0 < v < math.inf):
            raise ValueError(f"{name} must be a positive, finite number (got {v!r})")
    bar, report = _sim_time_bar(sc, progress)
    try:
        raw, meta = _engine.run(sc.to_json(), seed=seed, replication=replication, pcap_dir=pcap_dir, pcap=pcap,
                                trace=trace, max_events=max_events, max_wall_s=max_wall_s,
                                max_memory_mb=max_memory_mb, progress=report, only=only, lists=lists)
    finally:
        if bar is not None:
            bar.close()
    m = json.loads(meta)
    from .errors import ImplausibleValue

    for path, msg in m.get("implausible", ()):
        warnings.warn(f"{path}: {msg}", ImplausibleValue, stacklevel=3)
    log.info("%s seed %d replication %d: %s s simulated, %d events in %.3f s; %d delivered, %d dropped",
             sc.name, seed, replication, m["duration_s"], m["events"], m["wall_s"], m["delivered"], m["dropped"])
    if m.get("stopped_early"):
        warnings.warn(f"{sc.name}: run stopped early: {m['stopped_early']}", RunStoppedEarly, stacklevel=3)
    for key, what, limit in (("trace_truncated", "trace", "limits.max_trace_rows"),
                             ("pcap_truncated", "pcap", "limits.max_pcap_bytes"),
                             ("queue_samples_truncated", "queue sampling", "limits.max_queue_sample_rows"),
                             ("capacity_truncated", "capacity sampling", "limits.max_queue_sample_rows"),
                             ("series_truncated", "a time series", "limits.max_series_rows")):
        if m.get(key):
            warnings.warn(f"{sc.name}: {what} stopped at {limit}; raise it in the scenario to keep more",
                          OutputTruncated, stacklevel=3)
    return raw, meta


def warn_implausible(scenario_json: str, stacklevel: int = 2) -> None:
    """An ``ImplausibleValue`` warning per probable unit slip of a valid
    scenario (none for an invalid one: validation names its errors). A
    run finds them itself, as it builds the world (``meta["implausible"]``),
    and warns after it."""
    from .errors import ImplausibleValue, ScenarioError

    try:
        found = _engine.implausible(scenario_json)
    except ScenarioError:
        return
    for path, msg in found:
        warnings.warn(f"{path}: {msg}", ImplausibleValue, stacklevel=stacklevel)


def allow(paths: tuple[str, ...] | list[str], scenario: Scenario | None = None) -> None:
    """Silences the ``ImplausibleValue`` warnings of these fields and of
    the fields under them (``links[3]``: every warning of link 3; ``all``:
    every one) in this process (``--allow`` on the command line). With
    ``scenario``, each path must lead to a field of it (a ScenarioError
    names every one that does not, before anything is silenced), and may
    select items by name (``links[name=bottleneck].rate_bps``)."""
    import re

    from .errors import ImplausibleValue, ScenarioError

    if scenario is not None:
        found: list[str] = []
        errors: list[tuple[str, str]] = []
        for p in paths:
            try:
                found.append(p if p == "all" else scenario.indexed_path(p))
            except ScenarioError as e:
                errors += e.errors
        if errors:
            raise ScenarioError("; ".join(f"{p}: {m}" for p, m in errors), errors)
        paths = found
    for p in paths:
        if p == "all":
            warnings.simplefilter("ignore", ImplausibleValue)
        else:
            # The message starts "PATH: " or, for a field under PATH, "PATH.x: " or "PATH[i]...: ".
            warnings.filterwarnings("ignore", message=re.escape(p) + r"([.\[][^:]*)?:", category=ImplausibleValue)


def _sim_time_bar(sc: Scenario, on: bool):
    """A tqdm bar over the scenario's simulated seconds, and the engine's
    progress callback that moves it (None, None when off). The bar (and
    tqdm) comes with the engine's first report, after 2^20 events: a short
    run never imports it."""
    if not on:
        return None, None
    duration = sc.data.get("duration_s")
    try:
        total = float(duration) if duration is not None else 0.0
    except (TypeError, ValueError):
        return None, None  # no or a bad duration_s: the engine names it
    if not total > 0:
        return None, None
    bar = _LazyBar(sc.name, total)
    return bar, bar.report


class _LazyBar:
    def __init__(self, name: str, total: float):
        self.name, self.total = name, total
        self.bar: Any = None  # a tqdm bar from the first report on

    def report(self, now_s: float, events: int) -> None:
        if self.bar is None:
            from .log import bar as progress_bar

            self.bar = progress_bar(self.total, self.name, True, unit="sim s", unit_scale=True, leave=False,
                                    bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.4g}/{total:.4g} simulated s "
                                               "[{elapsed}<{remaining}]")
        self.bar.update(now_s - self.bar.n)
        self.bar.set_postfix_str(f"{events:,} events", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
