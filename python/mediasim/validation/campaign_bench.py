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


def campaign_rate(runs: int = 40, duration_s: float = 10.0, workers: int | None = None,
                  repeats: int = 3) -> dict[str, Any]:
    """Runs/s on one process and on ``workers`` (default: the CPUs this
    process may use), and their ratio: medians of ``repeats`` rounds, one
    process and the pool in alternation (so that a busy spell of a shared
    machine weighs on both)."""
    import statistics

    from ..campaign.executors import available_cpus
    from ..sweep import run_many

    workers = workers or available_cpus()
    jobs = _jobs(runs, duration_s)
    run_many(jobs[:2], workers=1, progress=False, analyse=_flows_rows)  # warm: imports, caches
    one, pool = [], []
    for _ in range(repeats):
        for n, walls in ((1, one), (workers, pool)):
            t0 = time.perf_counter()
            run_many(jobs, workers=n, progress=False, analyse=_flows_rows)
            walls.append(time.perf_counter() - t0)
    one_s, pool_s = statistics.median(one), statistics.median(pool)
    return {"runs": runs, "sim_s_per_run": duration_s, "workers": workers, "repeats": repeats,
            "one_process_runs_per_s": runs / one_s, "pool_runs_per_s": runs / pool_s, "speedup": one_s / pool_s}
