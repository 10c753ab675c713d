"""Executors behind one interface: ``imap_unordered(fn, payloads)`` yields ``(payload, result, error)`` as
tasks finish (error is a string with the traceback, or None), with a bounded number of tasks in flight.

- ``LocalExecutor(jobs=1)`` runs in the calling process; ``jobs > 1`` uses a ProcessPoolExecutor with the
  ``forkserver`` start method (``spawn`` where unavailable): no fork of a threaded parent.
- ``DaskExecutor(scheduler=ADDR)`` submits to an existing Dask scheduler; without an address it starts a
  LocalCluster on 127.0.0.1 (``jobs`` single-threaded worker processes). dask is imported lazily.

``fn`` must be a module-level function (picklable by reference) taking and returning plain data.
"""

from __future__ import annotations

import multiprocessing as mp
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

__all__ = ["Executor", "LocalExecutor", "DaskExecutor", "make_executor"]


def _fmt(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).strip()


class Executor:
    name = "base"
    jobs = 1

    def imap_unordered(self, fn: Callable, payloads: Iterable[dict]) -> Iterator[tuple[dict, dict | None,
                                                                                        str | None]]:
        raise NotImplementedError

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, jobs: int = 1, *, start_method: str | None = None, window: int | None = None):
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs={jobs!r} must be an integer >= 1")
        self.jobs = jobs
        self.window = window or 2 * jobs
        self._pool = None
        if jobs > 1:
            if start_method is None:
                start_method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
            self._pool = ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context(start_method))

    def imap_unordered(self, fn, payloads):
        if self._pool is None:
            for p in payloads:
                try:
                    yield p, fn(p), None
                except Exception as exc:  # a failing task is reported, the sweep goes on
                    yield p, None, _fmt(exc)
            return
        it = iter(payloads)
        inflight = {}

        def fill():
            while len(inflight) < self.window:
                try:
                    p = next(it)
                except StopIteration:
                    return
                inflight[self._pool.submit(fn, p)] = p

        fill()
        while inflight:
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            for fut in done:
                p = inflight.pop(fut)
                exc = fut.exception()
                yield (p, None, _fmt(exc)) if exc is not None else (p, fut.result(), None)
            fill()

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(Executor):
    name = "dask"

    def __init__(self, scheduler: str | None = None, *, jobs: int = 2, client=None, window: int | None = None):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ImportError("executor='dask' needs the dask extra: pip install 'afltheory[dask]' "
                              "(dask[distributed])") from None
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs={jobs!r} must be an integer >= 1")
        self._cluster = None
        self._own_client = client is None
        if client is not None:
            self.client = client
        elif scheduler:
            self.client = Client(scheduler)
        else:
            self._cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, host="127.0.0.1",
                                         dashboard_address=None, processes=True)
            self.client = Client(self._cluster)
        nthreads = sum(self.client.nthreads().values()) or jobs
        self.jobs = nthreads
        self.window = window or 4 * nthreads

    def imap_unordered(self, fn, payloads):
        import uuid

        from dask.distributed import as_completed

        it = iter(payloads)
        futs = {}
        ac = as_completed()
        run = uuid.uuid4().hex[:8]  # distinct keys if the same task is submitted again on a shared scheduler

        def submit_one():
            try:
                p = next(it)
            except StopIteration:
                return False
            # pure=False: every payload is distinct anyway; key by task id for readable dashboards
            f = self.client.submit(fn, p, pure=False, key=f"afl-task-{p['id'][:16]}-{run}")
            futs[f.key] = p
            ac.add(f)
            return True

        for _ in range(self.window):
            if not submit_one():
                break
        for fut in ac:
            p = futs.pop(fut.key)
            if fut.status == "error":
                exc = fut.exception()
                yield p, None, _fmt(exc)
            else:
                yield p, fut.result(), None
            fut.release()
            submit_one()

    def close(self):
        if self._own_client:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_executor(executor: str | Executor = "local", *, jobs: int = 1, scheduler: str | None = None) -> Executor:
    if isinstance(executor, Executor):
        return executor
    if executor == "local":
        if scheduler:
            raise ValueError("scheduler= is only used with executor='dask'")
        return LocalExecutor(jobs)
    if executor == "dask":
        return DaskExecutor(scheduler, jobs=jobs)
    raise ValueError(f"executor={executor!r} must be 'local' or 'dask'")
