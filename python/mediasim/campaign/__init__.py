"""Campaigns: many runs (a grid of parameters times replications), stored
so that they can be trusted, resumed and read back.

- Each run is keyed by a hash of the canonical scenario (after every
  override), the seed, the replication and the engine build; a changed
  scenario is a new run (``keys``).
- Every file is written atomically and a run folder is complete or absent;
  damaged folders are run again, failures are recorded (``store``).
- Runs execute on a local process pool or a Dask cluster (``executors``).
- ``read_sweep`` returns one table over all runs with a column per
  parameter (``read``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

# Names are imported on first use, as the package's own: a run that writes
# its tables uses ``atomic`` alone, and ``read`` imports pandas.
_EXPORTS = {
    "CampaignPlan": "run",
    "CampaignReport": "run",
    "DaskExecutor": "executors",
    "LocalExecutor": "executors",
    "available_cpus": "executors",
    "parameters": "read",
    "plan_campaign": "run",
    "read_sweep": "read",
    "run_campaign": "run",
    "summary": "read",
    "to_xarray": "read",
}

__all__ = list(_EXPORTS)

if TYPE_CHECKING:
    from .executors import DaskExecutor, LocalExecutor, available_cpus
    from .read import parameters, read_sweep, summary, to_xarray
    from .run import CampaignPlan, CampaignReport, plan_campaign, run_campaign


__dir__, __getattr__ = lazy_exports(__name__, _EXPORTS, globals())
