"""Campaign throughput: many short runs (runs per second) in one process
against the local process pool, as ``mediasim bench --campaign`` prints
it. Each run is the TCP dumbbell with 8 flows for 10 simulated seconds,
returning its flows table's row count; the pool's figure includes its
start-up.

On a shared host the same run can take half as long again from one
second to the next, on either core, which moves the speedup more than
anything the pool does. So each round times one process and the pool
back to back and the speedup is the median of the rounds' ratios; and the
pool's busy share (the time its processes spent inside runs over
``workers`` times its wall time) says what the pool itself costs,
whatever the host is doing: the speedup is about ``workers`` x busy share
x (a run's time alone / its time in the pool).

``cli_campaign_rate`` measures the same campaign as users run it: the
whole ``mediasim -q campaign FILE`` command, which also stores every run
(a dozen Parquet tables and its metadata, written durably) and prints a
summary, once with ``--workers 1`` and once on the pool, each into a
fresh folder; and the same command once more over the stored folder
(every run reused), which is what the command costs besides its runs."""

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


def _timed_run(job: Any) -> float:
    """One run as ``run_many`` does it (its analysis reads the flows
    table), returning its wall time in seconds."""
    from ..sweep import _run_job

    t0 = time.perf_counter()
    _run_job(job, _flows_rows)
    return time.perf_counter() - t0


def _campaign(jobs: list[Any], workers: int) -> tuple[float, float]:
    """(wall, seconds spent inside runs summed over processes)."""
    from ..campaign.executors import LocalExecutor

    t0 = time.perf_counter()
    inside = sum(LocalExecutor(workers).map_unordered(_timed_run, jobs))
    return time.perf_counter() - t0, inside


def _campaign_files(folder: Any, runs: int, duration_s: float) -> Any:
    """A campaign file over the dumbbell of ``_jobs``: ``runs``
    replications of one grid point."""
    import json

    from .bench import tcp_dumbbell

    (folder / "scenario.json").write_text(json.dumps(tcp_dumbbell(8, duration_s)))
    path = folder / "campaign.toml"
    path.write_text(f'scenario = "scenario.json"\nout = "out"\nreplications = {runs}\nseed = 1\n\n'
                    f"[grid]\nduration_s = [{duration_s!r}]\n")
    return path


def _cli_campaign(path: Any, out: Any, workers: int) -> float:
    """Wall time of ``mediasim -q campaign`` as a whole process."""
    import subprocess

    from .ns2_compare import _cli_command

    cmd = [*_cli_command(), "-q", "campaign", str(path), "--out", str(out), "--workers", str(workers)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"mediasim campaign failed:\n{proc.stderr[-2000:]}")
    return wall


def cli_campaign_rate(runs: int = 40, duration_s: float = 10.0, workers: int | None = None,
                      repeats: int = 3) -> dict[str, Any]:
    """The campaign as the ``mediasim campaign`` command runs it (module
    doc): runs/s of the whole command on one process and on ``workers``,
    medians of ``repeats`` rounds, the speedup as the median of the
    rounds' ratios, and the command's time with every run already stored
    (``fixed_s``: start-up, imports, reading the runs back, summary)."""
    import shutil
    import statistics
    import tempfile
    from pathlib import Path

    from ..campaign.executors import available_cpus

    workers = workers or available_cpus()
    one, pool, ratio, fixed = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        path = _campaign_files(Path(tmp), runs, duration_s)
        for r in range(repeats):
            out1, outw = Path(tmp) / f"one{r}", Path(tmp) / f"pool{r}"
            one.append(_cli_campaign(path, out1, 1))
            pool.append(_cli_campaign(path, outw, workers))
            ratio.append(one[-1] / pool[-1])
            fixed.append(_cli_campaign(path, outw, workers))
            shutil.rmtree(out1)
            shutil.rmtree(outw)
    return {"path": "mediasim campaign (whole command)", "runs": runs, "sim_s_per_run": duration_s,
            "workers": workers, "repeats": repeats, "one_process_runs_per_s": runs / statistics.median(one),
            "pool_runs_per_s": runs / statistics.median(pool), "speedup": statistics.median(ratio),
            "speedup_min": min(ratio), "speedup_max": max(ratio), "fixed_s": statistics.median(fixed)}


def campaign_rate(runs: int = 40, duration_s: float = 10.0, workers: int | None = None,
                  repeats: int = 3) -> dict[str, Any]:
    """Runs/s on one process and on ``workers`` (default: the CPUs this
    process may use), medians of ``repeats`` rounds; the speedup as the
    median, lowest and highest of the rounds' ratios; and the pool's busy
    share (median)."""
    import statistics

    from ..campaign.executors import available_cpus

    workers = workers or available_cpus()
    jobs = _jobs(runs, duration_s)
    _campaign(jobs[:2], 1)  # warm: imports, caches
    one, pool, ratio, busy = [], [], [], []
    for _ in range(repeats):
        one_s, _ = _campaign(jobs, 1)
        pool_s, inside_s = _campaign(jobs, workers)
        one.append(one_s)
        pool.append(pool_s)
        ratio.append(one_s / pool_s)
        busy.append(inside_s / (workers * pool_s))
    return {"path": "run_many (in one Python process)", "runs": runs, "sim_s_per_run": duration_s,
            "workers": workers, "repeats": repeats,
            "one_process_runs_per_s": runs / statistics.median(one),
            "pool_runs_per_s": runs / statistics.median(pool), "speedup": statistics.median(ratio),
            "speedup_min": min(ratio), "speedup_max": max(ratio), "pool_busy_share": statistics.median(busy)}
