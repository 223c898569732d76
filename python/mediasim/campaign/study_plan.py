"""What a study campaign's points would run, found without running any:
each point's runs made from its parameters (the study's ``study_jobs``),
every distinct scenario checked by the engine's own validation, every run
keyed as the campaign keys it. A dry run says what it found
(``plan_study_campaign``); a real run refuses, before it runs or writes
anything, a campaign that holds an invalid scenario (``point_runs``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import _engine
from ..errors import CampaignError, ScenarioError
from .keys import canonical, canonical_run_key, engine_identity
from .store import RunStore
from .study import Point, StudyCampaign, point_done, point_key

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


def points_to_run(spec: StudyCampaign, store: RunStore, points: list[Point]) -> list[Point]:
    """The ``points`` not already stored whole in ``store``."""
    options, build = spec.options(), store.engine["engine_build"]
    return [pt for pt in points if not point_done(store.root / "points" / pt.name,
                                                   point_key(spec.study, pt.params, options, build))]


class _Runs:
    """The runs of one study's parameter sets, found one set at a time;
    each distinct scenario checked once over them all."""

    def __init__(self, study: Any, options: dict[str, Any], engine_build: str):
        self.study, self.options, self.build = study, options, engine_build
        self.checked: dict[str, list[tuple[str, str]]] = {}  # canonical scenario -> its problems
        self.keys: set[str] = set()
        self.jobs = 0

    def problems(self, params: Any) -> list[tuple[str, str]]:
        """What stops the runs of ``params`` (``(where, problem)``, each
        once, in the order found); their runs counted and keyed."""
        mine: dict[tuple[str, str], None] = {}
        try:
            jobs = self.study.study_jobs(params, **self.options)
        except ValueError as e:  # a sensitivity setting's parameters the study refuses
            return [("parameters", str(e))]
        texts: dict[int, str] = {}  # a study's replications share one scenario
        for j in jobs:
            self.jobs += 1
            text = texts.get(id(j.scenario))
            if text is None:
                try:
                    text = texts[id(j.scenario)] = canonical(j.scenario)
                except ScenarioError as e:  # a trace file it names cannot be read
                    mine.update(dict.fromkeys(_errors(e)))
                    continue
            if text not in self.checked:
                self.checked[text] = _problems(text)
            mine.update(dict.fromkeys(self.checked[text]))
            self.keys.add(canonical_run_key(text, j.seed, j.replication, self.build))
        return list(mine)

    def found(self) -> PointRuns:
        return PointRuns(self.keys, len(self.checked), self.jobs)


def point_runs(spec: StudyCampaign, points: list[Point], engine_build: str) -> PointRuns:
    """The runs of ``points``; a CampaignError if some point's runs cannot
    be made or hold an invalid scenario, saying each problem once with the
    points where it is found."""
    runs = _Runs(spec.module(), spec.options(), engine_build)
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    bad = 0
    for pt in points:
        mine = runs.problems(pt.params)
        bad += bool(mine)
        for problem in mine:
            found.setdefault(problem, []).append(pt.labels)
    if found:
        from ..sweep import problems_by_point

        raise CampaignError(problems_by_point(
            f"{bad} of {len(points)} point{'s' * (len(points) != 1)} of {spec.study} would fail:", found,
            [pt.labels for pt in points]))
    return runs.found()


def study_runs(name: str, params: Any, options: dict[str, Any]) -> PointRuns:
    """The runs ``experiments.reproduce(name, params, **options)`` would
    make, every scenario checked; a ValueError saying each problem (at
    most ``MAX_PROBLEMS_SAID``) if some cannot be made or run."""
    from .. import experiments
    from ..sweep import MAX_PROBLEMS_SAID

    runs = _Runs(experiments.get(name), options, engine_identity()["engine_build"])
    if problems := runs.problems(params):
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
    engine = engine_identity()
    store = RunStore.check(spec.out, engine)
    points = spec.points()
    todo = points_to_run(spec, store, points)
    runs = point_runs(spec, todo, engine["engine_build"])
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
