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

from .executors import DaskExecutor, LocalExecutor, available_cpus
from .read import parameters, read_sweep, summary, to_xarray
from .run import CampaignReport, run_campaign

__all__ = ["CampaignReport", "DaskExecutor", "LocalExecutor", "available_cpus", "parameters", "read_sweep",
           "run_campaign", "summary", "to_xarray"]
