"""Running a campaign: every job keyed by what determines its result,
runs already stored reused, the rest executed and stored as they finish,
failures recorded without stopping the others."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..log import bar as progress_bar
from ..log import get as _logger
from .atomic import write_json
from .executors import LocalExecutor, make_executor
from .keys import engine_identity, run_keys
from .store import RunStore
from .worker import Task, execute


log = _logger("campaign")


@dataclass
class CampaignReport:
    """What one invocation did."""

    folder: Path
    runs: int
    reused: int = 0
    ran: int = 0
    repaired: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        s = (f"{self.runs} runs: {self.reused} already stored, {self.ran} run now, {len(self.failed)} failed"
             + (f" ({self.repaired} damaged folders run again)" if self.repaired else ""))
        for f in self.failed[:10]:
            s += f"\n  failed {f['labels']} seed {f['seed']} replication {f['replication']}: {f['error']}"
        if len(self.failed) > 10:
            s += f"\n  ... and {len(self.failed) - 10} more (see {self.folder}/failed/)"
        return s


@dataclass
class CampaignPlan:
    """What a campaign would do, found without running or writing anything
    (``plan_campaign``, ``--dry-run``)."""

    folder: Path
    runs: int
    stored: int = 0
    damaged: int = 0

    @property
    def to_run(self) -> int:
        return self.runs - self.stored

    def __str__(self) -> str:
        damaged = f" (of which {self.damaged} damaged, to be run again)" if self.damaged else ""
        return (f"{self.runs} run{'s' * (self.runs != 1)}: {self.stored} already stored in {self.folder}, "
                f"{self.to_run} to run{damaged}; nothing was run or written (dry run)")


def plan_campaign(jobs: list[Any], out: str | Path) -> CampaignPlan:
    """What ``run_campaign(jobs, out)`` would run and reuse, with nothing
    run, made or changed: each distinct run's key looked up in the folder
    (which need not exist), a folder ``run_campaign`` would refuse refused
    the same way."""
    from ..sweep import checked_jobs

    engine = engine_identity()
    store = RunStore.check(out, engine)
    tasks = tasks_of(checked_jobs(jobs), engine["engine_build"])
    plan = CampaignPlan(store.root, len(tasks))
    for t in tasks:
        status = store.status(t.key)
        plan.stored += status == "done"
        plan.damaged += status == "damaged"
    return plan


def tasks_of(jobs: list[Any], engine_build: str) -> list[Task]:
    """One task per distinct run (identical jobs share one)."""
    seen: dict[str, Task] = {}
    for j, key in zip(jobs, run_keys(jobs, engine_build)):
        labels = {k: v for k, v in j.labels.items() if not k.startswith("_")}
        seen.setdefault(key, Task(key, j.scenario, j.seed, j.replication, labels))
    return list(seen.values())


def run_campaign(jobs: list[Any], out: str | Path, executor: Any = None, workers: int | None = None,
                 scheduler: str | None = None, progress: bool = True, aliases: dict[str, str] | None = None,
                 ) -> CampaignReport:
    """Runs ``jobs`` (``mediasim.Job``) into the campaign folder ``out``;
    see ``mediasim.campaign.store`` for the layout. Stored runs with the
    same key are reused; damaged ones are run again."""
    from ..sweep import checked_jobs

    jobs = checked_jobs(jobs)
    # The executor first: a cluster that cannot be reached is named before
    # the folder is made.
    ex = executor or make_executor(workers, scheduler)
    try:
        return _run_on(ex, jobs, out, progress, aliases)
    finally:
        if executor is None and hasattr(ex, "close"):
            ex.close()


def _run_on(ex: Any, jobs: list[Any], out: str | Path, progress: bool, aliases: dict[str, str] | None,
            ) -> CampaignReport:
    engine = engine_identity()
    store = RunStore.open(out, engine)
    tasks = tasks_of(jobs, engine["engine_build"])
    report = CampaignReport(store.root, len(tasks))
    todo = []
    for t in tasks:
        status = store.status(t.key)
        if status == "done":
            report.reused += 1
            continue
        if status == "damaged":
            store.discard(t.key)
            report.repaired += 1
        todo.append(t)
    _write_index(store, tasks, aliases or {})
    log.info("%s: %d runs, %d stored, %d to run (%d damaged)", store.root, len(tasks), report.reused, len(todo),
             report.repaired)
    by_key = {t.key: t for t in todo}
    bar = progress_bar(len(todo), "campaign runs", progress)
    try:
        for o in ex.map_unordered(execute, todo):
            task = by_key[o.key]
            if o.ok:
                store.save(task, o.tables, o.meta)
                log.debug("run %s (%s, seed %d, replication %d): %.3f s", o.key, task.labels, task.seed,
                          task.replication, o.wall_s)
                report.ran += 1
            else:
                log.warning("run %s (%s, seed %d, replication %d) failed: %s", o.key, task.labels, task.seed,
                            task.replication, o.error)
                store.save_failure(task, o.error, o.traceback)
                report.failed.append({"labels": task.labels, "seed": task.seed,
                                      "replication": task.replication, "error": o.error})
            bar.update()
    finally:
        bar.close()
    return report


def _write_index(store: RunStore, tasks: list[Task], aliases: dict[str, str]) -> None:
    """campaign.json: the engine and this campaign's runs (the folder may
    also hold runs of earlier campaigns; readers take these)."""
    write_json(store.root / "campaign.json", {
        **store.engine, "aliases": aliases,
        "runs": [{"key": t.key, "labels": t.labels, "seed": t.seed, "replication": t.replication} for t in tasks],
    })


@contextlib.contextmanager
def stored_runs(folder: str | Path, jobs: list[Any], workers: int | None = None) -> Iterator[Any]:
    """A ``RunCache`` over the campaign folder ``folder`` (made if needed)
    for ``jobs``, on ``workers`` local processes: each run is stored there
    as it finishes, and one already stored is read back instead of run
    again, so that work cut short (a kill, a failure after the runs) is
    not lost. campaign.json lists ``jobs``' runs: ``read_sweep(folder,
    table)`` reads them back. A folder of another engine build's runs is
    refused."""
    from .cache import RunCache

    engine = engine_identity()
    store = RunStore.open(folder, engine)
    _write_index(store, tasks_of(jobs, engine["engine_build"]), {})
    ex = make_executor(workers)
    try:
        yield RunCache(store, ex)
    finally:
        if hasattr(ex, "close"):
            ex.close()


__all__ = ["CampaignReport", "LocalExecutor", "run_campaign", "stored_runs", "tasks_of"]
