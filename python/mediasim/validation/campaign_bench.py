"""Campaign throughput: many short runs (runs per second) in one process
against the local process pool, as ``mediasim bench --campaign`` prints
it. Each run is the TCP dumbbell with 8 flows for 10 simulated seconds;
the pool's figure includes its start-up and the return of every run's
flows table to this process."""

from __future__ import annotations

import time
from typing import Any


def _jobs(runs: int, duration_s: float) -> list[Any]:
    from ..sweep import Job
    from .bench import tcp_dumbbell

    sc = tcp_dumbbell(8, duration_s)
    return [Job(sc, seed=1, replication=r) for r in range(runs)]


def _flows_rows(res: Any, job: Any) -> int:
    return len(res.flows)


def campaign_rate(runs: int = 40, duration_s: float = 10.0, workers: int | None = None) -> dict[str, Any]:
    """Runs/s on one process and on ``workers`` (default: the CPUs this
    process may use), and their ratio."""
    from ..campaign.executors import available_cpus
    from ..sweep import run_many

    workers = workers or available_cpus()
    jobs = _jobs(runs, duration_s)
    run_many(jobs[:2], workers=1, progress=False, analyse=_flows_rows)  # warm: imports, caches
    t0 = time.perf_counter()
    run_many(jobs, workers=1, progress=False, analyse=_flows_rows)
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_many(jobs, workers=workers, progress=False, analyse=_flows_rows)
    pool = time.perf_counter() - t0
    return {"runs": runs, "sim_s_per_run": duration_s, "workers": workers, "one_process_runs_per_s": runs / one,
            "pool_runs_per_s": runs / pool, "speedup": one / pool}
