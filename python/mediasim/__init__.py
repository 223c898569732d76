"""mediasim: packet-level discrete-event network simulation for real-time media.

Build or load a scenario, run it, and get pandas tables back::

    import mediasim
    sc = mediasim.load_scenario("examples/dumbbell.toml")
    res = mediasim.run(sc, seed=1)
    print(res.flows)

Names are imported lazily, so ``import mediasim`` stays cheap.

Importing mediasim (or any of its modules) changes nothing in the
importing process: no environment variables, no matplotlib backend.

Layout: the user API is here (``Scenario``, ``load_scenario``, ``run``,
``run_many``, ``replications``, ``grid``, ``run_sweep``, ``run_campaign``,
``read_sweep``, ``Results``); ``mediasim.campaign`` stores, resumes and
reads back campaigns (local pool or Dask);
``mediasim.experiments`` holds the reference studies and the demo;
``mediasim.validation`` the reference-simulator drivers, cross-checks,
benchmarks and the output-hash regression check; ``mediasim.reporting``
the shared table and plot helpers.
"""

from typing import TYPE_CHECKING

from ._engine import version as _engine_version
from ._lazy import lazy_exports

__version__ = _engine_version()

_EXPORTS = {
    "Results": "results",
    "Scenario": "scenario",
    "ScenarioError": "errors",
    "RunStoppedEarly": "errors",
    "OutputTruncated": "errors",
    "EngineFailure": "errors",
    "OutputFolderError": "errors",
    "ImplausibleValue": "errors",
    "TableNotFound": "errors",
    "load_scenario": "scenario",
    "run": "runner",
    "run_many": "sweep",
    "replications": "sweep",
    "Job": "sweep",
    "grid": "sweep",
    "run_sweep": "sweep",
    "run_campaign": "campaign",
    "read_sweep": "campaign",
    "CampaignError": "errors",
}

__all__ = [*_EXPORTS, "__version__"]


if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, imported on first use
    from .campaign import read_sweep, run_campaign
    from .errors import (CampaignError, EngineFailure, ImplausibleValue, OutputFolderError, OutputTruncated,
                         RunStoppedEarly, ScenarioError, TableNotFound)
    from .results import Results
    from .runner import run
    from .scenario import Scenario, load_scenario
    from .sweep import Job, grid, replications, run_many, run_sweep


__dir__, __getattr__ = lazy_exports(__name__, _EXPORTS, globals())
