"""Run many scenarios or replications in parallel on a local process pool.

Each job is independent (its own process, its own random streams derived
from seed and replication), so results do not depend on the number of
workers or the order in which jobs finish.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._budget import made
from .results import Results
from .runner import _u64, run
from .errors import ScenarioError
from .scenario import Scenario, as_scenario

if TYPE_CHECKING:
    from .campaign.cache import RunCache


@dataclass
class Job:
    """One run: a scenario, its seed and replication, and labels that
    identify it in combined tables (e.g. the swept parameters). The seed
    and replication are checked when the job is made (the engine's 64-bit
    unsigned integers, numpy's too; a ValueError naming the field)."""

    scenario: dict[str, Any]
    seed: int = 0
    replication: int = 0
    labels: dict[str, Any] = field(default_factory=dict)
    out: str | None = None

    def __post_init__(self) -> None:
        # Said when the job is made, not when a campaign keys or runs it.
        self.seed, self.replication = _u64("seed", self.seed), _u64("replication", self.replication)
        made("runs")

    @property
    def key(self) -> str:
        parts = [f"{k}={v}" for k, v in self.labels.items()]
        parts += [f"seed={self.seed}", f"rep={self.replication}"]
        return ",".join(parts)


#: Most jobs one call of `replications` or `grid` makes (chosen: each job
#: holds its scenario in memory; a million runs is far beyond a campaign).
MAX_JOBS = 1_000_000


def _count(name: str, n: Any) -> int:
    """``n`` as a count of replications from 1 to MAX_JOBS, or a
    ValueError naming ``name``."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_JOBS:
        raise ValueError(f"{name} must be a whole number of replications from 1 to {MAX_JOBS:,} (got {n!r})")
    return n


def replications(scenario: Scenario | dict | str | Path, n: int, seed: int = 0, **labels: Any) -> list[Job]:
    """``n`` replications of one scenario: same seed, replication 0..n-1
    (``n`` from 1 to ``MAX_JOBS``)."""
    _count("n", n)
    data = as_scenario(scenario).to_dict()
    return [Job(data, seed=seed, replication=r, labels=dict(labels)) for r in range(n)]


def _run_job(job: Job, analyse: Callable[[Results, Job], Any] | None = None) -> Any:
    res = run(job.scenario, seed=job.seed, replication=job.replication, out=job.out)
    res.meta["labels"] = {k: v for k, v in job.labels.items() if not k.startswith("_")}
    return res if analyse is None else analyse(res, job)


def _run_indexed(item: tuple[int, Job, Callable[[Results, Job], Any] | None]) -> tuple[int, Any]:
    i, job, analyse = item
    return i, _run_job(job, analyse)


def run_many(
    jobs: Iterable[Job],
    workers: int | None = None,
    progress: bool = True,
    desc: str = "runs",
    analyse: Callable[[Results, Job], Any] | None = None,
    cache: "RunCache | None" = None,
) -> list[Any]:
    """Runs ``jobs`` on ``workers`` processes (default: the CPUs this process
    may use) and returns their Results in job order. ``workers=1`` runs in
    this process. Ctrl-C stops the workers at once.

    With ``analyse`` (a top-level function, so it can be sent to workers),
    each worker returns ``analyse(results, job)`` instead of the Results:
    only the analysis crosses process boundaries.

    With ``cache`` (a study campaign's ``mediasim.campaign.cache.RunCache``),
    runs come from and go to that campaign's folder and executor instead
    (``workers`` is then the campaign's)."""
    from .log import bar as progress_bar
    from .campaign.executors import LocalExecutor

    jobs = checked_jobs(jobs)
    if cache is not None:
        return cache.run_many(jobs, analyse, progress, desc)
    ex = LocalExecutor(workers)
    bar = progress_bar(len(jobs), desc, progress)
    out: list[Any] = [None] * len(jobs)
    try:
        for i, res in ex.map_unordered(_run_indexed, [(i, j, analyse) for i, j in enumerate(jobs)]):
            out[i] = res
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


def grid(scenario: Scenario | dict | str | Path, vary: Mapping[str, Iterable[Any]], replications: int = 1,
         seed: int = 0, aliases: dict[str, str] | None = None) -> list[Job]:
    """Jobs for every combination of the values in ``vary`` times
    ``replications``. A key of ``vary`` is an override path, or an alias
    of one in ``aliases`` (``{"rate": "links[name=bottleneck].rate_bps"}``),
    its value a list of values (any iterable but text); labels are the keys
    as given and the values. At most ``MAX_JOBS`` jobs in all."""
    import itertools

    aliases = aliases or {}
    _count("replications", replications)
    # Text is iterable too: "60" would vary a field over "6" and "0".
    scalar = [k for k, values in vary.items()
              if isinstance(values, (str, bytes, dict)) or not isinstance(values, Iterable)]
    if scalar:
        raise ScenarioError("an axis without a list of values",
                            [(aliases.get(k, k), f"give a list of values (got {vary[k]!r})") for k in scalar])
    axes = {k: list(values) for k, values in vary.items()}
    problems = []
    fields: dict[str, str] = {}
    for k in axes:
        path = aliases.get(k, k)
        if path in fields:
            # The later override would win and label its runs wrongly.
            problems.append((path, f"varied twice (as {fields[path]!r} and {k!r})"))
        fields.setdefault(path, k)
    for k, values in axes.items():
        seen = set()
        for v in values:
            key = repr(v)
            if key in seen:
                problems.append((aliases.get(k, k), f"the value {v!r} is given twice"))
            seen.add(key)
    if problems:
        raise ScenarioError("a grid that repeats itself", problems)
    empty = [k for k, values in axes.items() if not values]
    if empty:
        # A grid with an axis of no values has no runs: surely a mistake.
        raise ScenarioError("an axis without values",
                            [(aliases.get(k, k), "no values to vary it over") for k in empty])
    size = math.prod(len(v) for v in axes.values()) * replications
    if size > MAX_JOBS:
        raise ValueError(f"the grid has {size:,} runs, more than {MAX_JOBS:,}")
    base = as_scenario(scenario)
    keys = list(axes)
    jobs = []
    for combo in itertools.product(*(axes[k] for k in keys)):
        sc = base.with_overrides({aliases.get(k, k): v for k, v in zip(keys, combo)})
        labels = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in zip(keys, combo)}
        data = sc.to_dict()  # one copy per point, its replications' to share (as replications() does)
        jobs += [Job(data, seed=seed, replication=r, labels=dict(labels)) for r in range(replications)]
    return jobs


#: Most problems `grid_problems` says; then how many more there are.
MAX_PROBLEMS_SAID = 30


def grid_problems(jobs: list[Job], replications: int = 1) -> str | None:
    """What is wrong with the scenarios of a grid's points (``jobs`` as
    `grid` makes them, ``replications`` of each point), or None if every
    point's scenario is valid. Each problem is said once, with where it
    is: at every point (the grid is not its cause), where some axes take
    some values (``where buffer = 0: 3 points``), or at the points
    themselves (the first three)."""
    first = jobs[:: max(1, replications)]  # each point's first replication
    points = [job.labels for job in first]
    at: dict[tuple[str, str], list[dict[str, Any]]] = {}
    bad = 0
    for job in first:
        try:
            Scenario.from_dict(job.scenario).validate()
        except ScenarioError as e:
            bad += 1
            for path, message in e.errors:
                at.setdefault((path, message), []).append(job.labels)
    if not at:
        return None
    return problems_by_point(f"invalid scenario at {bad} of {len(points)} grid points:", at, points)


def problems_by_point(heading: str, at: dict[tuple[str, str], list[dict[str, Any]]],
                      points: list[dict[str, Any]]) -> str:
    """``heading``, then each problem (``(path, message)``) of ``at`` on a
    line of its own with where it was found among ``points`` (each by its
    labels); at most ``MAX_PROBLEMS_SAID`` of them."""
    lines = [heading]
    lines += [f"  {p}: {m} ({_where(found, points)})" for (p, m), found in list(at.items())[:MAX_PROBLEMS_SAID]]
    if len(at) > MAX_PROBLEMS_SAID:
        lines.append(f"  and {len(at) - MAX_PROBLEMS_SAID} more problems")
    return "\n".join(lines)


def _where(found: list[dict[str, Any]], points: list[dict[str, Any]]) -> str:
    """Where in the grid (``points``, each by its labels) a problem was
    ``found``, in the fewest words."""
    import json

    def text(labels: dict[str, Any]) -> str:
        return ", ".join(f"{k} = {json.dumps(v)}" for k, v in labels.items())

    if len(points) > 1 and len(found) == len(points):
        return "at every grid point"
    same = {k: v for k, v in found[0].items() if all(json.dumps(f[k]) == json.dumps(v) for f in found)}
    if same:
        matching = [p for p in points if all(json.dumps(p[k]) == json.dumps(v) for k, v in same.items())]
        if len(matching) == len(found):
            return f"where {text(same)}" + (f": {len(found)} points" if len(found) > 1 else "")
    more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
    return "at " + "; ".join(text(f) for f in found[:3]) + more


def checked_jobs(jobs: Any) -> list[Job]:
    """``jobs`` as a list, each a Job; anything else is a TypeError naming
    the item, before any run or folder is made."""
    jobs = list(jobs)
    for i, j in enumerate(jobs):
        if not isinstance(j, Job):
            raise TypeError(f"jobs[{i}] is not a Job (got {j!r}): make jobs with replications() or grid()")
    return jobs


def run_sweep(jobs: list[Job], out: str | Path, workers: int | None = None, progress: bool = True,
              scheduler: str | None = None, aliases: dict[str, str] | None = None) -> "Any":
    """Runs ``jobs`` as a campaign in folder ``out`` (``mediasim.campaign``:
    each run keyed by its canonical scenario, seed, replication and engine
    build; stored runs reused, damaged ones run again, failures recorded).
    Returns the combined flows table, also written to
    ``out/flows.parquet``; the media table of every run (the senders' and
    viewers' side of media streams; no rows without them) goes to
    ``out/media.parquet``; ``out/sweep.json`` says what this invocation
    did."""
    import warnings

    from .campaign import read_sweep, run_campaign
    from .campaign.atomic import write_bytes, write_json
    from .results import parquet_bytes

    report = run_campaign(jobs, out, workers=workers, scheduler=scheduler, progress=progress, aliases=aliases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # failures are in the report
        flows = read_sweep(out, "flows")
        media = read_sweep(out, "media")
    out = Path(out)
    write_bytes(out / "flows.parquet", parquet_bytes(flows, {"campaign": str(out)}))
    # Written even without rows, so that no earlier sweep's is left beside.
    write_bytes(out / "media.parquet", parquet_bytes(media, {"campaign": str(out)}))
    write_json(out / "sweep.json", {"runs": report.runs, "reused": report.reused, "newly_run": report.ran,
                                    "repaired": report.repaired, "failed": report.failed})
    return flows
