"""One run of a campaign, as a worker process (local or on a Dask
cluster) executes it: the engine's tables come back as Parquet bytes, so
that only the process that owns the campaign folder writes to it."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Task:
    key: str
    scenario: dict[str, Any]
    seed: int
    replication: int
    labels: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    key: str
    ok: bool
    tables: dict[str, bytes] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0
    error: str = ""
    traceback: str = ""


def execute(task: Task) -> Outcome:
    """Runs ``task``; an error becomes a failed Outcome, never an exception
    (one bad run must not stop a campaign)."""
    from .. import _engine
    from ..results import Results, parquet_tables
    from .keys import canonical

    t0 = time.perf_counter()
    try:
        raw, meta_json = _engine.run(canonical(task.scenario), seed=task.seed, replication=task.replication)
        res = Results.from_engine(raw, meta_json, extra={"labels": task.labels, "run_key": task.key})
        tables = parquet_tables(res)
        return Outcome(task.key, True, tables, res.meta, time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001 - recorded with its traceback
        return Outcome(task.key, False, wall_s=time.perf_counter() - t0, error=f"{type(e).__name__}: {e}",
                       traceback=traceback.format_exc())
