"""Run many scenarios or replications in parallel on a local process pool.

Each job is independent (its own process, its own random streams derived
from seed and replication), so results do not depend on the number of
workers or the order in which jobs finish.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .results import Results
from .runner import run
from .scenario import Scenario, as_scenario


@dataclass
class Job:
    """One run: a scenario, its seed and replication, and labels that
    identify it in combined tables (e.g. the swept parameters)."""

    scenario: dict[str, Any]
    seed: int = 0
    replication: int = 0
    labels: dict[str, Any] = field(default_factory=dict)
    out: str | None = None

    @property
    def key(self) -> str:
        parts = [f"{k}={v}" for k, v in self.labels.items()]
        parts += [f"seed={self.seed}", f"rep={self.replication}"]
        return ",".join(parts)


def replications(scenario: Scenario | dict | str | Path, n: int, seed: int = 0, **labels: Any) -> list[Job]:
    """``n`` replications of one scenario: same seed, replication 0..n-1."""
    data = as_scenario(scenario).to_dict()
    return [Job(data, seed=seed, replication=r, labels=dict(labels)) for r in range(n)]


def _run_job(job: Job, analyse: Callable[[Results, Job], Any] | None = None) -> Any:
    res = run(job.scenario, seed=job.seed, replication=job.replication, out=job.out)
    res.meta["labels"] = {k: v for k, v in job.labels.items() if not k.startswith("_")}
    return res if analyse is None else analyse(res, job)


def run_many(
    jobs: Iterable[Job],
    workers: int | None = None,
    progress: bool = True,
    desc: str = "runs",
    analyse: Callable[[Results, Job], Any] | None = None,
) -> list[Any]:
    """Runs ``jobs`` on ``workers`` processes (default: all cores) and returns
    their Results in job order. ``workers=1`` runs in this process.

    With ``analyse`` (a top-level function, so it can be sent to workers),
    each worker returns ``analyse(results, job)`` instead of the Results:
    only the analysis crosses process boundaries."""
    jobs = list(jobs)
    if workers is None:
        workers = os.cpu_count() or 1
    if workers < 1:
        raise ValueError(f"workers must be at least 1 (got {workers})")
    bar = tqdm(total=len(jobs), desc=desc, disable=not progress, unit="run")
    out: list[Any] = [None] * len(jobs)
    try:
        if workers == 1 or len(jobs) <= 1:
            for i, job in enumerate(jobs):
                out[i] = _run_job(job, analyse)
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
                futs = {pool.submit(_run_job, job, analyse): i for i, job in enumerate(jobs)}
                for fut in as_completed(futs):
                    out[futs[fut]] = fut.result()
                    bar.update()
    finally:
        bar.close()
    return out


def combine(results: list[Results], table: str) -> "Any":
    """Concatenates one table over runs, with label, seed and replication
    columns in front."""
    import pandas as pd

    frames = []
    for r in results:
        df = getattr(r, table).copy()
        lab = {**r.meta.get("labels", {}), "seed": r.meta["seed"], "replication": r.meta["replication"]}
        for i, (k, v) in enumerate(lab.items()):
            df.insert(i, k, v)
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def grid(scenario: Scenario | dict | str | Path, vary: dict[str, list[Any]], replications: int = 1,
         seed: int = 0) -> list[Job]:
    """Jobs for every combination of the values in ``vary`` (override path
    -> values) times ``replications``. Labels are the paths and values."""
    import itertools

    base = as_scenario(scenario)
    keys = list(vary)
    jobs = []
    for combo in itertools.product(*(vary[k] for k in keys)):
        sc = base.with_overrides(dict(zip(keys, combo)))
        labels = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in zip(keys, combo)}
        jobs += [Job(sc.to_dict(), seed=seed, replication=r, labels=dict(labels)) for r in range(replications)]
    return jobs


def _run_key(job: Job) -> str:
    import hashlib
    import json as _json

    blob = _json.dumps([job.labels, job.seed, job.replication], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def run_sweep(jobs: list[Job], out: str | Path, workers: int | None = None, progress: bool = True) -> "Any":
    """Runs ``jobs``, storing each run's tables under ``out/runs/<key>/``
    (key: a hash of labels, seed and replication). Runs already stored are
    skipped, so an interrupted sweep resumes where it stopped and a failure
    never loses finished runs. Returns the combined flow table, also
    written to ``out/flows.parquet``."""
    import json as _json

    import pandas as pd

    from .results import Results

    out = Path(out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    todo = []
    for job in jobs:
        d = out / "runs" / _run_key(job)
        if not (d / "meta.json").exists():
            job.out = str(d)
            todo.append(job)
    if todo:
        run_many(todo, workers=workers, progress=progress, desc="sweep runs", analyse=_discard)
    results = []
    for job in jobs:
        d = out / "runs" / _run_key(job)
        r = Results.read_parquet(d)
        r.meta["labels"] = job.labels
        results.append(r)
    flows = combine(results, "flows")
    flows.to_parquet(out / "flows.parquet", index=False)
    (out / "sweep.json").write_text(_json.dumps({"runs": len(jobs), "newly_run": len(todo)}, indent=2))
    return flows


def _discard(res: Results, job: Job) -> None:
    """Analysis for stored runs: the tables are on disk already."""
    return None
