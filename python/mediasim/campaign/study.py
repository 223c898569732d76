"""A campaign over a reference study's parameters: the study's whole
pipeline (runs, analysis, tables, plots, report) once per point of a grid
over its ``Params`` fields, e.g. the IW10 study at three access rates::

    study = "iw10"
    out = "out/iw10-rates"
    quick = true                 # start from the study's quick parameters
    replications = 5             # the study's replications per configuration
    [grid]
    access_rate_bps = [1e6, 2e6, 4e6]

Layout of ``out`` (besides ``runs/``, ``failed/`` and ``campaign.json`` as
in any campaign)::

    points/<name>/               one grid point: the study's tables
                                 (<table>.parquet, .csv), plots, report.md
                                 and report.html, then point.json (written
                                 last: labels, parameters, key, files)
    points/.partial/             points being written (renamed whole)
    index.md                     the points, their status and reports

Every run of every point goes through the campaign folder
(``mediasim.campaign.cache``): a point cut short by a kill is redone from
its stored runs, and points that share a run run it once. A point is keyed
by the study, its parameters, its options, the engine build, its runs'
keys (a trace file it reads is keyed by its contents) and the package's
build (its analysis); a change to any of them is a new point, made from
the runs already stored where they are the same. ``read_sweep(out, table)`` returns one study
table over all points with a column per grid parameter.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CampaignError
from ..experiments.params import ParamsError, read_overrides
from .atomic import read_json
from .spec import CampaignBase

MARKER = "point.json"
#: chosen: the most points a study campaign's grid may have. Each point is
#: a whole study (its runs, tables, plots and report), so a grid beyond
#: this is surely mistyped, and its points are not listed one by one.
MAX_POINTS = 10_000


@dataclass
class Point:
    name: str
    labels: dict[str, Any]
    params: Any


@dataclass(kw_only=True)
class StudyCampaign(CampaignBase):
    """A campaign over a study's parameters (``aliases`` name Params
    fields; ``overrides`` are fixed Params values)."""

    study: str
    quick: bool = False
    replications: int | None = None
    seed: int | None = None
    cases: list[int] | None = None
    sensitivity: bool = False
    where: str = "campaign"

    def module(self) -> Any:
        from .. import experiments

        try:
            return experiments.get(self.study)
        except KeyError as e:
            raise CampaignError(f"{self.where}: study: {e.args[0]}") from None

    def options(self) -> dict[str, Any]:
        """The study's ``reproduce`` options besides its parameters
        (``mediasim.experiments.options``)."""
        from .. import experiments

        self.module()
        try:
            return experiments.options(self.study, self.cases, self.sensitivity)
        except experiments.OptionError as e:
            raise CampaignError(f"{self.where}: {e.option}: {e}") from None

    def base(self) -> Any:
        """The study's parameters before the grid: quick or not, then
        ``set``, replications and seed."""
        p = self.module().Params()
        if self.quick:
            p = p.quick()
        fixed = {k: _text(v) for k, v in self.overrides.items()}
        if self.replications is not None:
            fixed["replications"] = str(self.replications)
        if self.seed is not None:
            fixed["seed"] = str(self.seed)
        try:
            return p.with_overrides(fixed)
        except ParamsError as e:
            raise CampaignError("\n".join(f"{self.where}: set: {self.study}: {x}" for x in e.problems)) from None

    def points(self) -> list[Point]:
        """Every combination of the grid's values, in order; a bad
        parameter or value is a CampaignError naming it."""
        import itertools

        try:
            base = self.base()
        except CampaignError as e:  # the grid's unreadable names and values too, so one reading says both
            raise CampaignError("\n".join([str(e), *self._grid_reading_problems()])) from None
        keys = list(self.grid)
        size = math.prod(len(v) for v in self.grid.values())
        if size > MAX_POINTS:
            raise CampaignError(f"{self.where}: grid: {size:,} points, more than {MAX_POINTS:,}")
        out = []
        problems: dict[str, None] = {}  # each point's, each said once, in order
        for combo in itertools.product(*(self.grid[k] for k in keys)):
            labels = {k: (v if isinstance(v, (int, float, str, bool)) else _text(v)) for k, v in zip(keys, combo)}
            try:
                p = base.with_overrides({self.aliases.get(k, k): _text(v) for k, v in zip(keys, combo)})
            except ParamsError as e:
                problems.update(dict.fromkeys(f"{self.where}: grid: {self.study}: {x}" for x in e.problems))
                continue
            out.append(Point(_name(labels), labels, p))
        if problems:
            raise CampaignError("\n".join(problems))
        names = [pt.name for pt in out]
        if len(set(names)) != len(names):
            raise CampaignError(f"{self.where}: grid: two points have the same name; give distinct values")
        return out

    def _grid_reading_problems(self) -> list[str]:
        """Each grid name or value that does not read as the study's
        parameter, as ``points`` says it; the checks, which judge a point's
        values together, are left to ``points`` once ``set`` is right."""
        params = self.module().Params()
        problems: dict[str, None] = {}
        for k, values in self.grid.items():
            for v in values:
                found = read_overrides(params, {self.aliases.get(k, k): _text(v)})[1]
                problems.update(dict.fromkeys(f"{self.where}: grid: {self.study}: {x}" for x in found))
        return list(problems)


def _text(v: Any) -> str:
    """A grid or set value as the study's ``--set`` text (lists joined
    by commas, as tuple parameters take them; a list of lists as groups
    separated by ``;``, as a parameter of tuples takes them)."""
    if isinstance(v, (list, tuple)):
        return (";" if any(isinstance(x, (list, tuple)) for x in v) else ",").join(_text(x) for x in v)
    return str(v)


def _name(labels: dict[str, Any]) -> str:
    """A folder name that says which point it is (``rate=1e6,iw=10``),
    with characters other than letters, digits, ``.=,+-`` replaced."""
    text = ",".join(f"{k}={_text(v)}" for k, v in labels.items())
    text = re.sub(r"[^A-Za-z0-9._=,+-]", "_", text)
    if len(text) > 100:
        text = text[:80] + "-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    return text


def point_key(study: str, params: Any, options: dict[str, Any], engine_build: str, runs: list[str],
              package: str) -> str:
    """What identifies a point's outputs: the study, its parameters and
    options, the engine build, its runs' keys (which cover whatever the
    runs read, a trace file's contents too) and the package's build
    (``keys.package_build``: the analysis that makes the tables)."""
    blob = json.dumps([study, dataclasses.asdict(params), options, engine_build, sorted(runs), package],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


@dataclass
class StudyCampaignReport:
    folder: Path
    points: int
    reused: int = 0
    ran: int = 0
    runs_reused: int = 0
    runs_ran: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        s = (f"{self.points} points: {self.reused} already stored, {self.ran} run now, {len(self.failed)} failed "
             f"({self.runs_ran} simulation runs made, {self.runs_reused} read from the folder)")
        for f in self.failed:
            s += f"\n  failed {f['labels']}: {f['error']}"
        return s


def point_done(folder: Path, key: str) -> bool:
    info = read_json(folder / MARKER)
    if not isinstance(info, dict) or info.get("key") != key or not isinstance(info.get("files"), dict):
        return False
    return all((folder / n).is_file() and (folder / n).stat().st_size == size for n, size in info["files"].items())
