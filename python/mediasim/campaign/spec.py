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

Every problem is a CampaignError naming the file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CampaignError, ScenarioError

FIELDS = {"scenario", "out", "replications", "seed", "workers", "scheduler", "aliases", "grid", "set"}


@dataclass
class CampaignSpec:
    scenario: Path
    out: Path
    grid: dict[str, list[Any]]
    aliases: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    replications: int = 1
    seed: int = 0
    workers: int | None = None
    scheduler: str | None = None

    def jobs(self) -> list[Any]:
        """The campaign's runs; a bad override or value is a ScenarioError
        naming its field."""
        from ..scenario import load_scenario
        from ..sweep import grid

        sc = load_scenario(self.scenario).with_overrides(self.overrides)
        return grid(sc, self.grid, replications=self.replications, seed=self.seed, aliases=self.aliases)


def _int(d: dict[str, Any], name: str, where: str, default: int | None, low: int) -> int | None:
    v = d.get(name, default)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < low:
        raise CampaignError(f"{where}: {name}: must be an integer >= {low} (got {v!r})")
    return v


def _table(d: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    v = d.get(name, {})
    if not isinstance(v, dict):
        raise CampaignError(f"{where}: {name}: must be a table (got {type(v).__name__})")
    return v


def load_campaign(path: str | Path) -> CampaignSpec:
    from ..plain import read_file

    path = Path(path)
    where = str(path)
    try:
        d = read_file(path)
    except ScenarioError as e:
        raise CampaignError(str(e)) from e
    if not isinstance(d, dict):
        raise CampaignError(f"{where}: a campaign file is a table of fields")
    unknown = sorted(set(d) - FIELDS)
    if unknown:
        raise CampaignError(f"{where}: {unknown[0]}: unknown field (expected one of {', '.join(sorted(FIELDS))})")
    for name in ("scenario", "out"):
        if not isinstance(d.get(name), str) or not d[name]:
            raise CampaignError(f"{where}: {name}: required, a path")
    aliases = _table(d, "aliases", where)
    bad = [k for k, v in aliases.items() if not isinstance(v, str)]
    if bad:
        raise CampaignError(f"{where}: aliases.{bad[0]}: must be a field path (text)")
    grid = _table(d, "grid", where)
    if not grid:
        raise CampaignError(f"{where}: grid: required, at least one parameter with its values")
    for k, v in grid.items():
        if not isinstance(v, list) or not v:
            raise CampaignError(f"{where}: grid.{k}: must be a non-empty list of values")
    scheduler = d.get("scheduler")
    if scheduler is not None and not isinstance(scheduler, str):
        raise CampaignError(f"{where}: scheduler: must be an address such as tcp://host:8786")
    scenario = (path.parent / d["scenario"]).resolve()
    if not scenario.is_file():
        raise CampaignError(f"{where}: scenario: no such file: {scenario}")
    return CampaignSpec(
        scenario=scenario, out=(path.parent / d["out"]).resolve(), grid=grid, aliases=aliases,
        overrides=_table(d, "set", where), replications=_int(d, "replications", where, 1, 1),
        seed=_int(d, "seed", where, 0, 0), workers=_int(d, "workers", where, None, 1), scheduler=scheduler)
