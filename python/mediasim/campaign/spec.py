"""A campaign defined in a file (TOML, YAML or JSON) instead of flags::

    scenario = "../examples/dumbbell.toml"   # relative to this file
    out = "out/background"                   # idem; --out overrides it
    replications = 10
    seed = 1
    workers = 2                              # optional: local processes
    # scheduler = "tcp://head:8786"          # optional: a Dask cluster

    [aliases]                                # short names, used as columns
    rate = "flows[name=background].rate_bps"

    [grid]                                   # alias or path -> values
    rate = [3e5, 5e5, 7e5]

    [set]                                    # fixed overrides, applied first
    duration_s = 30

Or over a reference study's parameters (``study = "iw10"`` instead of
``scenario``; see ``mediasim.campaign.study``), with ``quick``, ``cases``
and ``sensitivity`` as ``mediasim reproduce`` takes them.

Every problem is a CampaignError naming the file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from ..errors import CampaignError, ScenarioError, likely_meant

if TYPE_CHECKING:
    from ..sweep import Job
    from .study import StudyCampaign

COMMON = {"out", "replications", "seed", "workers", "scheduler", "aliases", "grid", "set"}
FIELDS = COMMON | {"scenario"}
STUDY_FIELDS = COMMON | {"study", "quick", "cases", "sensitivity"}


@dataclass(kw_only=True)
class CampaignBase:
    """What every campaign file gives: where, the grid, and where to run."""

    out: Path
    grid: dict[str, list[Any]]
    aliases: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    workers: int | None = None
    scheduler: str | None = None


@dataclass(kw_only=True)
class CampaignSpec(CampaignBase):
    """A campaign over a scenario's fields."""

    scenario: Path
    replications: int = 1
    seed: int = 0

    def jobs(self) -> list[Job]:
        """The campaign's runs; a bad override or value is a ScenarioError
        naming its field."""
        from ..scenario import load_scenario
        from ..sweep import grid

        sc = load_scenario(self.scenario).with_overrides(self.overrides)
        return grid(sc, self.grid, replications=self.replications, seed=self.seed, aliases=self.aliases)


@overload
def _int(d: dict[str, Any], name: str, where: str, default: int, low: int, problems: list[str]) -> int: ...
@overload
def _int(d: dict[str, Any], name: str, where: str, default: None, low: int,
         problems: list[str]) -> int | None: ...


def _int(d: dict[str, Any], name: str, where: str, default: int | None, low: int,
         problems: list[str]) -> int | None:
    """``d[name]`` as a whole number from ``low`` on (``default`` if it is
    absent, or, with its problem added to ``problems``, if it is bad: a
    null given in JSON or YAML too, as ``seed:`` with its value forgotten)."""
    if name not in d:
        return default
    v = d[name]
    if not isinstance(v, int) or isinstance(v, bool) or v < low:
        problems.append(f"{where}: {name}: must be an integer >= {low} (got {v!r})")
        return default
    return v


def _table(d: dict[str, Any], name: str, where: str, problems: list[str]) -> dict[str, Any]:
    """``d[name]`` as a table (empty if it is absent, or, with its problem
    added to ``problems``, if it is no table)."""
    v = d.get(name, {})
    if not isinstance(v, dict):
        problems.append(f"{where}: {name}: must be a table (got {type(v).__name__})")
        return {}
    return v


def _raise_any(problems: list[str]) -> None:
    """Every problem found, one per line, as one CampaignError."""
    if problems:
        raise CampaignError("\n".join(problems))


def load_campaign(path: str | Path, out: str | Path | None = None) -> CampaignSpec | StudyCampaign:
    """The campaign in ``path``: a CampaignSpec (over a scenario) or a
    ``study.StudyCampaign`` (over a study's parameters). ``out`` (the
    command line's) overrides the file's folder, which is then optional.
    Every problem the file has is said at once, one per line."""
    from ..plain import read_file

    path = Path(path)
    where = str(path)
    try:
        d = read_file(path)
    except FileNotFoundError:
        raise CampaignError(f"{where}: no such campaign file") from None
    except ScenarioError as e:  # the reader's problems, said of the campaign file (not "invalid scenario")
        raise CampaignError("\n".join(f"{where}: {m}" if p == where else f"{where}: {p}: {m}"
                                      for p, m in e.errors) or f"{where}: {e}") from e
    if ("scenario" in d) == ("study" in d):
        raise CampaignError(f"{where}: give exactly one of scenario (a file) and study (a reference study's name)")
    problems: list[str] = []
    allowed = sorted(STUDY_FIELDS if "study" in d else FIELDS)
    for name in (k for k in d if k not in allowed):
        # Worded as the engine words a scenario's unknown field.
        close = likely_meant(name, allowed)
        meant = f"; did you mean {close}?" if close else ""
        problems.append(f"{where}: {name}: unknown field{meant} (expected one of {', '.join(allowed)})")
    if out is None and (not isinstance(d.get("out"), str) or not d["out"]):
        problems.append(f"{where}: out: required, a path (in the file, or --out on the command line)")
    elif "out" in d and (not isinstance(d["out"], str) or not d["out"]):
        problems.append(f"{where}: out: must be a path (text)")
    aliases = _table(d, "aliases", where, problems)
    problems += [f"{where}: aliases.{k}: must be a field path (text)" for k, v in aliases.items()
                 if not isinstance(v, str)]
    grid = _table(d, "grid", where, problems)
    if not grid and isinstance(d.get("grid", {}), dict):
        problems.append(f"{where}: grid: required, at least one parameter with its values")
    problems += [f"{where}: grid.{k}: must be a non-empty list of values" for k, v in grid.items()
                 if not isinstance(v, list) or not v]
    scheduler = d.get("scheduler")
    if scheduler is not None and not (isinstance(scheduler, str) and scheduler.strip()):
        problems.append(f"{where}: scheduler: must be an address such as tcp://host:8786")
    common: dict[str, Any] = dict(grid=grid, aliases=aliases, overrides=_table(d, "set", where, problems),
                                  workers=_int(d, "workers", where, None, 1, problems), scheduler=scheduler)
    if "study" in d:
        return _study(d, where, common, problems, out, path)
    given = d["scenario"]
    scenario = (path.parent / given).resolve() if isinstance(given, str) and given else None
    if scenario is None:
        problems.append(f"{where}: scenario: required, a path")
    elif not scenario.is_file():
        problems.append(f"{where}: scenario: no such file: {scenario}")
    replications = _int(d, "replications", where, 1, 1, problems)
    seed = _int(d, "seed", where, 0, 0, problems)
    _raise_any(problems)
    assert scenario is not None  # else a problem was raised above
    return CampaignSpec(scenario=scenario, replications=replications, seed=seed,
                        out=_folder(path, d, out), **common)


def _folder(path: Path, d: dict[str, Any], out: str | Path | None) -> Path:
    """The campaign's folder: the command line's, else the file's (relative
    to the file)."""
    return Path(out).resolve() if out is not None else (path.parent / d["out"]).resolve()


def _study(d: dict[str, Any], where: str, common: dict[str, Any], problems: list[str],
           out: str | Path | None, path: Path) -> StudyCampaign:
    from .study import StudyCampaign

    for name in ("quick", "sensitivity"):
        if not isinstance(d.get(name, False), bool):
            problems.append(f"{where}: {name}: must be true or false")
    cases = d.get("cases")
    if cases is not None and (not isinstance(cases, list) or not all(isinstance(c, int) for c in cases)):
        problems.append(f"{where}: cases: must be a list of case numbers")
    if not isinstance(d["study"], str):
        problems.append(f"{where}: study: must be a study's name")
    replications = _int(d, "replications", where, None, 1, problems)
    seed = _int(d, "seed", where, None, 0, problems)
    _raise_any(problems)
    spec = StudyCampaign(study=d["study"], quick=d.get("quick", False), sensitivity=d.get("sensitivity", False),
                         cases=cases, replications=replications, seed=seed, where=where,
                         out=_folder(path, d, out), **common)
    spec.options()
    spec.points()  # every parameter and value checked now, before any run
    return spec
