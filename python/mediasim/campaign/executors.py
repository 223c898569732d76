"""Where a campaign's runs execute: a local process pool (the default) or
a Dask cluster. Both take a top-level function and a list of tasks and
yield the results as runs finish; neither changes a result (each run is
seeded by its own seed and replication)."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Generator, Iterator
from typing import Any

from ..runner import _u64


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


class WorkerDied(RuntimeError):
    """A helper process of the local pool ended without returning its run
    (killed, out of memory, or a crash in native code)."""


def _next(counter: Any) -> int:
    """Claims the next task: the index the shared counter held."""
    with counter.get_lock():
        i = counter.value
        counter.value = i + 1
    return i


def _reply(fn: Callable[[Any], Any], task: Any) -> bytes:
    """A task's result, or its exception with the helper's traceback (as
    ProcessPoolExecutor attaches it), pickled. Results are yielded as
    they come, in no order, so no task's index goes with them."""
    try:
        return pickle.dumps((True, fn(task)), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # noqa: BLE001 - raised again in the caller
        import traceback

        tb = traceback.format_exc()
        try:
            return pickle.dumps((False, (e, tb)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - the exception itself does not pickle
            return pickle.dumps((False, (RuntimeError(f"{type(e).__name__}: {e}"), tb)))


def _helper(fn: Callable[[Any], Any], tasks: list[Any], counter: Any, conn: Any) -> None:
    """A helper's life: claim, run, send, until the tasks run out. It
    ignores SIGINT, so that a terminal's Ctrl-C reaches only the main
    process, which decides (and terminates the helpers)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while (i := _next(counter)) < len(tasks):
        conn.send_bytes(_reply(fn, tasks[i]))
    conn.close()


def _read(conn: Any, inbox: Any) -> None:
    """Moves one helper's replies into ``inbox`` as they come (reading
    releases the GIL), so that a helper never waits for the main process
    to finish a run of its own; ``None`` marks the helper's end."""
    try:
        while True:
            inbox.put(conn.recv_bytes())
    except (EOFError, OSError):
        pass  # the helper ended (or was stopped)
    finally:
        # Whatever ended the reading, so that the main process never waits
        # on a helper nobody listens to.
        inbox.put(None)


class _Pool:
    """One ``map_unordered`` call's helpers, their pipes and readers."""

    def __init__(self, fn: Callable[[Any], Any], tasks: list[Any], helpers: int):
        import multiprocessing as mp
        import queue
        import threading

        ctx = mp.get_context()
        self.counter = ctx.Value("q", 0)
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.procs, conns = [], []
        # Every helper is started before any reader thread: forking a
        # process that runs threads is unsafe.
        try:
            for _ in range(helpers):
                r, w = ctx.Pipe(duplex=False)
                p = ctx.Process(target=_helper, args=(fn, tasks, self.counter, w), daemon=True)
                p.start()
                w.close()  # the helper's copy alone: its end is the pipe's end
                self.procs.append(p)
                conns.append(r)
        except BaseException:
            self.stop()  # a helper that could not start: none left behind
            raise
        self.running = helpers
        for r in conns:
            threading.Thread(target=_read, args=(r, self.inbox), daemon=True).start()

    def replies(self, block: bool) -> Iterator[Any]:
        """The replies in, waiting for every helper's end if ``block``."""
        import queue

        while self.running:
            try:
                data = self.inbox.get(block=block)
            except queue.Empty:
                return
            if data is None:
                self.running -= 1
                continue
            ok, value = pickle.loads(data)
            if not ok:
                err, tb = value
                raise err from _RemoteTraceback(tb)
            yield value

    def stop(self) -> None:
        for p in self.procs:
            if p.is_alive():
                p.terminate()
        for p in self.procs:
            p.join()

    def release(self) -> None:
        """After every helper has ended its work (its pipe closed): no
        waiting for their processes to exit. A helper's exit (the kernel
        tearing down its copy of this process) took 2-3 ms, a few percent
        of a campaign of short runs; multiprocessing reaps the ended
        helpers when it next starts or lists processes."""
        for p in self.procs:
            p.join(timeout=0)

    def exit_codes(self) -> list[int | None]:
        """The helpers' exit codes. Each has closed its pipe, so each is
        ending: wait for it (at most 5 s) so that its code is known, not
        None, when the pipe's end came before the kernel reaped it."""
        for p in self.procs:
            p.join(timeout=5)
        return [p.exitcode for p in self.procs]


class _RemoteTraceback(Exception):
    def __init__(self, tb: str):
        super().__init__(tb)

    def __str__(self) -> str:
        return f"\n(in a helper process)\n{self.args[0]}"


class LocalExecutor:
    """Runs on ``workers`` processes (default: the CPUs available): this
    one and ``workers - 1`` helpers; ``workers=1`` runs in this process
    alone.

    Every process claims the next task from one shared counter, runs it
    and claims again, so that the load balances to the last task whatever
    each run costs, and this process works too instead of waiting while
    the helpers start. Helpers send each result back as soon as it is
    done, on a pipe of their own that a thread of this process empties;
    this process yields them between its own runs. No task is queued
    ahead, so there is nothing to take back at the end, and no manager
    thread of this process contends for the GIL with its runs."""

    def __init__(self, workers: int | None = None):
        self.workers = available_cpus() if workers is None else _u64("workers", workers, least=1)

    def __repr__(self) -> str:
        return f"LocalExecutor(workers={self.workers})"

    def map_unordered(self, fn: Callable[[Any], Any], tasks: list[Any]) -> Generator[Any, None, None]:
        if self.workers == 1 or len(tasks) <= 1:
            for t in tasks:
                yield fn(t)
            return
        pool = _Pool(fn, tasks, min(self.workers, len(tasks)) - 1)
        done = 0
        ended = False
        try:
            while (i := _next(pool.counter)) < len(tasks):
                value = fn(tasks[i])
                for v in pool.replies(block=False):
                    done += 1
                    yield v
                done += 1
                yield value
            for v in pool.replies(block=True):
                done += 1
                yield v
            ended = done == len(tasks)
            if done < len(tasks):
                codes = ", ".join(str(c) for c in pool.exit_codes())
                raise WorkerDied(f"{len(tasks) - done} of {len(tasks)} runs lost: a helper process ended "
                                 f"without returning its run (exit codes {codes}; a negative code is the "
                                 "signal that ended it, -9 often the kernel's out-of-memory killer)")
        finally:
            # Ctrl-C or an error: helpers stop at once; what the caller
            # stored from earlier results stays.
            if ended:
                pool.release()
            else:
                pool.stop()


class DaskExecutor:
    """Runs on a dask.distributed cluster given its scheduler address
    (``tcp://host:8786``), or on a ``distributed.Client`` already made.
    Workers need mediasim installed; they send results back to this
    process, which alone writes the campaign folder (no shared file system
    needed)."""

    def __init__(self, address: Any):
        try:
            from distributed import Client
        except ImportError as e:
            raise ImportError("the Dask executor needs dask.distributed: pip install 'mediasim[cluster]'") from e
        self._own = not isinstance(address, Client)
        if not self._own:
            self.client = address
            return
        try:
            self.client = _client(address)
        except (ValueError, OSError, TimeoutError, TypeError) as e:
            # A malformed address, a cluster that does not answer, or a
            # tls:// address without a TLS configuration (Dask's TypeError):
            # name it, before any run is stored.
            from ..errors import CampaignError

            raise CampaignError(f"Dask scheduler {address!r}: {e}") from e

    def __repr__(self) -> str:
        return f"DaskExecutor({self.client.scheduler.address})"

    def map_unordered(self, fn: Callable[[Any], Any], tasks: list[Any]) -> Generator[Any, None, None]:
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


def _client(address: str) -> Any:
    """A ``distributed.Client`` of ``address``. One that fails while it is
    made (a malformed address, a scheduler that does not answer) is closed
    here: left to the garbage collector, its close could run inside the
    next client's start, which holds the lock that close waits for, and
    hang the process."""
    from distributed import Client

    class _Closing(Client):
        def __init__(self, address: str) -> None:
            try:
                super().__init__(address)
            except BaseException:
                self.close()
                raise

    return _Closing(address)


def make_executor(workers: int | None = None, scheduler: str | None = None) -> LocalExecutor | DaskExecutor:
    """The executor of ``scheduler`` (a Dask cluster), else of ``workers``
    local processes; ``workers`` is checked either way, so that a bad
    count is never passed over unseen."""
    if workers is not None:
        _u64("workers", workers, least=1)
    if isinstance(scheduler, str) and not scheduler.strip():
        raise ValueError("scheduler: an empty address (give one such as tcp://host:8786, or none)")
    return DaskExecutor(scheduler) if scheduler else LocalExecutor(workers)
