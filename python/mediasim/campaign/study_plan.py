"""What a study campaign's points would run, found without running any:
each point's runs made from its parameters (the study's ``study_jobs``),
every run keyed as the campaign keys it, and every distinct scenario of
the points to run checked by the engine's own validation. A point's key
covers its runs' keys, so a point is made again when anything its runs
read changes (a trace file's contents too). A dry run says what it found
(``plan_study_campaign``); a real run refuses, before it runs or writes
anything, a campaign that holds an invalid scenario (``plan_points``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from .. import _engine
from .._budget import TooMany, making_at_most
from ..errors import CampaignError, ScenarioError
from ..sweep import MAX_JOBS
from .keys import canonical, canonical_run_key, engine_identity, package_build
from .store import RunStore
from .study import Point, StudyCampaign, point_done, point_key

#: chosen: the most scenarios one study's parameters may make (its most
#: runs are a grid's, ``MAX_JOBS``). The most any study makes is 2,940
#: (RMCAT's with its sensitivity; AVPF's 2,762); AVPF's NEWPRED
#: scenarios took about 100 kB each while its runs were made.
MAX_STUDY_SCENARIOS = 30_000

#: The points to run that a dry run names; the rest are counted.
MAX_POINTS_NAMED = 10


@dataclass
class PointRuns:
    """The distinct runs of some points (their campaign keys) and how many
    distinct scenarios those runs hold, every one of them valid; ``jobs``
    counts every run asked for, those that points share each time."""

    keys: set[str]
    scenarios: int
    jobs: int = 0


@dataclass
class PointsPlan:
    """Every point's key, the points not stored whole, and the runs of
    those (``PointRuns``)."""

    keys: dict[str, str]
    todo: list[Point]
    runs: PointRuns


class _Runs:
    """The runs of one study's parameter sets, found one set at a time;
    each distinct scenario checked once over them all."""

    def __init__(self, study: Any, options: dict[str, Any], engine_build: str):
        self.study, self.options, self.build = study, options, engine_build
        self.checked: dict[bytes, list[tuple[str, str]]] = {}  # canonical scenario's digest -> its problems
        self.keys: set[str] = set()
        self.jobs = 0

    def made(self, params: Any) -> tuple[list[str], list[str], list[tuple[str, str]]]:
        """The runs of ``params`` unchecked: their keys and distinct
        scenarios (canonical), and what stopped some being made."""
        try:
            with making_at_most(runs=MAX_JOBS, scenarios=MAX_STUDY_SCENARIOS):
                jobs = self.study.study_jobs(params, **self.options)
        except TooMany as e:
            return [], [], [("parameters", f"they make {e} (a study's most)")]
        except ValueError as e:  # a sensitivity setting's parameters the study refuses
            return [], [], [("parameters", str(e))]
        keys: list[str] = []
        texts: dict[int, str] = {}  # a study's replications share one scenario
        problems: list[tuple[str, str]] = []
        for j in jobs:
            text = texts.get(id(j.scenario))
            if text is None:
                try:
                    text = texts[id(j.scenario)] = canonical(j.scenario)
                except ScenarioError as e:  # a trace file it names cannot be read
                    problems += _errors(e)
                    continue
            keys.append(canonical_run_key(text, j.seed, j.replication, self.build))
        return keys, list(dict.fromkeys(texts.values())), problems

    def checked_runs(self, keys: list[str], texts: list[str], problems: list[tuple[str, str]]
                     ) -> list[tuple[str, str]]:
        """What stops runs ``made`` (each once, in the order found), every
        scenario checked; the runs counted."""
        mine = dict.fromkeys(problems)
        for text in texts:
            # By digest: a campaign's points may hold many scenarios of tens of kB each.
            digest = hashlib.sha256(text.encode()).digest()
            if digest not in self.checked:
                self.checked[digest] = _problems(text)
            mine.update(dict.fromkeys(self.checked[digest]))
        self.jobs += len(keys)
        self.keys.update(keys)
        return list(mine)

    def found(self) -> PointRuns:
        return PointRuns(self.keys, len(self.checked), self.jobs)


def plan_points(spec: StudyCampaign, store: RunStore, points: list[Point]) -> PointsPlan:
    """Each point's key, the points not stored whole in ``store``, and the
    runs of those; a CampaignError if some point to run cannot be made or
    holds an invalid scenario, saying each problem once with the points
    where it is found."""
    options, build = spec.options(), store.engine["engine_build"]
    runs = _Runs(spec.module(), options, build)
    keys: dict[str, str] = {}
    todo: list[Point] = []
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    bad = 0
    for pt in points:
        made = runs.made(pt.params)
        keys[pt.name] = point_key(spec.study, pt.params, options, build, made[0], package_build())
        if point_done(store.root / "points" / pt.name, keys[pt.name]):
            continue
        todo.append(pt)
        problems = runs.checked_runs(*made)
        if runs.jobs > MAX_JOBS:
            raise CampaignError(f"{spec.where}: the points to run make more than {MAX_JOBS:,} runs "
                                "(a campaign's most, as a grid's)")
        bad += bool(problems)
        for problem in problems:
            found.setdefault(problem, []).append(pt.labels)
    if found:
        from ..sweep import problems_by_point

        raise CampaignError(problems_by_point(
            f"{bad} of {len(todo)} point{'s' * (len(todo) != 1)} of {spec.study} would fail:", found,
            [pt.labels for pt in todo]))
    return PointsPlan(keys, todo, runs.found())


def study_runs(name: str, params: Any, options: dict[str, Any]) -> PointRuns:
    """The runs ``experiments.reproduce(name, params, **options)`` would
    make, every scenario checked; a ValueError saying each problem (at
    most ``MAX_PROBLEMS_SAID``) if some cannot be made or run."""
    from .. import experiments
    from ..sweep import MAX_PROBLEMS_SAID

    runs = _Runs(experiments.get(name), options, engine_identity()["engine_build"])
    if problems := runs.checked_runs(*runs.made(params)):
        lines = [f"  {where}: {problem}" for where, problem in problems[:MAX_PROBLEMS_SAID]]
        more = len(problems) - MAX_PROBLEMS_SAID
        raise ValueError("\n".join([f"{name} would fail:", *lines] + [f"  and {more} more problems"] * (more > 0)))
    return runs.found()


def _problems(text: str) -> list[tuple[str, str]]:
    try:
        _engine.validate(text)
    except ScenarioError as e:
        return _errors(e)
    return []


def _errors(e: ScenarioError) -> list[tuple[str, str]]:
    return e.errors or [("scenario", str(e))]


def plan_study_campaign(spec: StudyCampaign) -> str:
    """What ``run_study_campaign(spec)`` would do, with nothing run, made
    or changed: its points (every one's study parameters checked), those
    already stored and those to run, and the runs of the points to run
    (every scenario checked; runs that points share and runs already
    stored counted once)."""
    store = RunStore.check(spec.out, engine_identity())
    points = spec.points()
    plan = plan_points(spec, store, points)
    todo, runs = plan.todo, plan.runs
    s = (f"{len(points)} point{'s' * (len(points) != 1)} of {spec.study}: {len(points) - len(todo)} already stored "
         f"in {store.root}, {len(todo)} to run")
    for pt in todo[:MAX_POINTS_NAMED]:
        s += f"\n  to run: {pt.name}"
    if len(todo) > MAX_POINTS_NAMED:
        s += f"\n  ... and {len(todo) - MAX_POINTS_NAMED} more"
    if todo:
        status = [store.status(k) for k in sorted(runs.keys)]
        n, stored, damaged = len(status), status.count("done"), status.count("damaged")
        s += (f"\nthe points to run make {n} run{'s' * (n != 1)} of {runs.scenarios} scenario"
              f"{'s' * (runs.scenarios != 1)}, every one valid: {stored} already stored, {n - stored} to run"
              + (f" (of which {damaged} damaged, to be run again)" if damaged else ""))
    return s + "\nnothing was run or written (dry run)"
