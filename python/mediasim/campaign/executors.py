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


def _run_chunk(fn: Callable[[Any], Any], chunk: list[Any]) -> list[Any]:
    return [fn(t) for t in chunk]


def _chunks(tasks: list[Any], workers: int) -> list[list[Any]]:
    """Runs in chunks when there are many: one round trip per chunk instead
    of per run, which counts for runs of a few milliseconds. At least 32
    chunks per worker, so that the last ones still balance: a helper holds
    one chunk queued besides the one it runs, and at the end the main
    process may wait for both."""
    size = max(1, len(tasks) // (32 * workers))
    return [tasks[i:i + size] for i in range(0, len(tasks), size)]


def _stop_helpers(pool: Any) -> None:
    """Stops a process pool's workers at once (queued runs dropped).
    concurrent.futures has no public call for it before Python 3.14, and
    its shutdown forgets the processes: take them first."""
    helpers = list((getattr(pool, "_processes", None) or {}).values())
    for p in helpers:
        p.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for p in helpers:
        p.join()


class LocalExecutor:
    """Runs on ``workers`` processes (default: the CPUs available): this
    one and ``workers - 1`` helpers; ``workers=1`` runs in this process
    alone.

    This process works too, instead of waiting while the helpers start:
    the helpers take chunks of runs from the front of the list, this
    process takes them from the back, and a chunk is this process's only
    if it has not gone to a helper (its future can still be cancelled). A
    campaign of short runs thus loses little to starting the pool."""

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
        from concurrent.futures import ProcessPoolExecutor, as_completed

        workers = min(self.workers, len(tasks))
        chunks = _chunks(tasks, workers)
        pool = ProcessPoolExecutor(workers - 1, initializer=_ignore_sigint)
        finished = False
        try:
            # The last chunk is this process's whatever the helpers do (they
            # may have queued every submitted one before it gets to cancel).
            futures = [pool.submit(_run_chunk, fn, c) for c in chunks[:-1]]
            left = set(futures)
            yield from _run_chunk(fn, chunks[-1])
            for f, chunk in zip(reversed(futures), reversed(chunks[:-1])):
                for g in [g for g in left if g.done()]:
                    left.discard(g)
                    yield from g.result()
                if not f.cancel():
                    break  # the helpers have reached this far
                left.discard(f)
                yield from _run_chunk(fn, chunk)
            for g in as_completed(left):
                yield from g.result()
            finished = True
        finally:
            # Ctrl-C (or any early exit): helpers are stopped at once, queued
            # runs dropped; what was stored stays. Helpers ignore SIGINT
            # themselves so that the terminal's Ctrl-C reaches only this
            # process, which decides.
            if finished:
                pool.shutdown(wait=True)
            else:
                _stop_helpers(pool)


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
