"""A campaign folder serving the runs of code that calls ``run_many``
(a study's ``reproduce``): given a ``RunCache`` as its ``cache``, a
``run_many`` call keys each job like a campaign run, reads a stored run
instead of running it again, and stores what it runs. The cache is passed
explicitly, down from the study campaign to each ``run_many``. A study campaign
killed half-way therefore loses no finished run, and two grid points that
share a run (a parameter the analysis alone reads) run it once.

The analysis always sees a run as read back from Parquet, whether it was
stored or has just run, so a study's tables do not depend on what was
stored before (``tests/test_study_campaign.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .keys import run_keys
from .store import RunStore
from .worker import Outcome, Task, execute

@dataclass
class RunCache:
    store: RunStore
    executor: Any
    ran: int = 0
    reused: int = 0

    def run_many(self, jobs: list[Any], analyse: Callable | None, progress: bool, desc: str) -> list[Any]:
        """``run_many`` through the store: results in job order."""
        from ..log import bar as progress_bar

        build = self.store.engine["engine_build"]
        items = []
        for i, (j, key) in enumerate(zip(jobs, run_keys(jobs, build))):
            labels = {k: v for k, v in j.labels.items() if not k.startswith("_")}
            task = Task(key, j.scenario, j.seed, j.replication, labels)
            items.append((i, j, task, analyse, str(self.store.root)))
        out: list[Any] = [None] * len(items)
        bar = progress_bar(len(items), desc, progress)
        try:
            for i, value, outcome in self.executor.map_unordered(_serve, items):
                if outcome is not None:
                    self.store.save(items[i][2], outcome.tables, outcome.meta)
                    self.ran += 1
                else:
                    self.reused += 1
                out[i] = value
                bar.update()
        finally:
            bar.close()
        return out


def _results_of(tables: dict[str, bytes], meta: dict[str, Any]) -> Any:
    from ..results import Results, Tables

    return Results(meta=meta, tables=Tables.from_parquet_bytes(tables, meta))


def _serve(item: tuple[int, Any, Task, Callable | None, str]) -> tuple[int, Any, Outcome | None]:
    """In a worker: the stored run if there is one (and this worker sees
    the folder), else a new run whose tables go back to be stored."""
    from ..results import Results

    i, job, task, analyse, root = item
    folder = Path(root) / "runs" / task.key
    store = RunStore(Path(root), {})
    outcome = None
    if store.status(task.key) == "done":
        res = Results.read_parquet(folder)
    else:
        outcome = execute(task)
        if not outcome.ok:
            raise RuntimeError(f"run {task.labels} seed {task.seed} replication {task.replication}: "
                               f"{outcome.error}")
        res = _results_of(outcome.tables, outcome.meta)
    return i, (res if analyse is None else analyse(res, job)), outcome
