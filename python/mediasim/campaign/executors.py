"""Where a campaign's runs execute: a local process pool (the default) or
a Dask cluster. Both take a top-level function and a list of tasks and
yield the results as runs finish; neither changes a result (each run is
seeded by its own seed and replication)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask or cgroup share as
    the OS reports it), not the machine's count."""
    if hasattr(os, "process_cpu_count"):
        n = os.process_cpu_count()
    elif hasattr(os, "sched_getaffinity"):
        n = len(os.sched_getaffinity(0))
    else:
        n = os.cpu_count()
    return max(1, n or 1)


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class LocalExecutor:
    """A pool of ``workers`` processes (default: the CPUs available);
    ``workers=1`` runs in this process."""

    def __init__(self, workers: int | None = None):
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1 (got {workers})")
        self.workers = workers or available_cpus()

    def __repr__(self) -> str:
        return f"LocalExecutor(workers={self.workers})"

    def map_unordered(self, fn: Callable[[Any], Any], tasks: list[Any]) -> Iterator[Any]:
        if self.workers == 1 or len(tasks) <= 1:
            for t in tasks:
                yield fn(t)
            return
        import multiprocessing

        workers = min(self.workers, len(tasks))
        pool = multiprocessing.Pool(workers, initializer=_ignore_sigint)
        # Runs go out in chunks when there are many (at least 8 chunks per
        # worker, so the last ones still balance): one round trip per chunk
        # instead of per run, which counts for runs of a few milliseconds.
        chunk = max(1, len(tasks) // (8 * workers))
        finished = False
        try:
            yield from pool.imap_unordered(fn, tasks, chunksize=chunk)
            finished = True
        finally:
            # Ctrl-C (or any early exit): workers are stopped at once, queued
            # runs dropped; what was stored stays. Workers ignore SIGINT
            # themselves so that the terminal's Ctrl-C reaches only this
            # process, which decides.
            if finished:
                pool.close()
            else:
                pool.terminate()
            pool.join()


class DaskExecutor:
    """Runs on a dask.distributed cluster given its scheduler address
    (``tcp://host:8786``), or on a ``distributed.Client`` already made.
    Workers need mediasim installed; they send results back to this
    process, which alone writes the campaign folder (no shared file system
    needed)."""

    def __init__(self, address: Any):
        try:
            from distributed import Client
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ImportError("the Dask executor needs dask.distributed: pip install 'mediasim[cluster]'") from e
        self._own = not isinstance(address, Client)
        self.client = Client(address) if self._own else address

    def __repr__(self) -> str:
        return f"DaskExecutor({self.client.scheduler.address})"

    def map_unordered(self, fn: Callable[[Any], Any], tasks: list[Any]) -> Iterator[Any]:
        from distributed import as_completed

        futs = self.client.map(fn, tasks, pure=False)
        try:
            for fut in as_completed(futs):
                yield fut.result()
        finally:
            self.client.cancel(futs)

    def close(self) -> None:
        if self._own:
            self.client.close()


def make_executor(workers: int | None = None, scheduler: str | None = None) -> LocalExecutor | DaskExecutor:
    return DaskExecutor(scheduler) if scheduler else LocalExecutor(workers)
