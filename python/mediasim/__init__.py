"""mediasim: packet-level discrete-event network simulation for real-time media.

Build or load a scenario, run it, and get pandas tables back::

    import mediasim
    sc = mediasim.load_scenario("examples/dumbbell.toml")
    res = mediasim.run(sc, seed=1)
    print(res.flows)

Names are imported lazily, so ``import mediasim`` stays cheap.
"""

import os
from importlib import import_module

# mediasim does no linear algebra, and parallelism comes from running many
# simulations in processes: keep numpy's BLAS from starting (and spinning)
# a thread per core in every process. Set before numpy is first imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
from typing import Any

from ._engine import version as _engine_version

__version__ = _engine_version()

_EXPORTS = {
    "Results": "results",
    "Scenario": "scenario",
    "ScenarioError": "errors",
    "load_scenario": "scenario",
    "run": "runner",
    "run_many": "sweep",
    "replications": "sweep",
    "Job": "sweep",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'mediasim' has no attribute {name!r}")
    value = getattr(import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value
