"""Executors behind one interface: ``imap_unordered(fn, payloads)`` yields ``(payload, result, error)`` as
tasks finish (error is a string with the traceback, or None), with a bounded number of tasks in flight.

- ``LocalExecutor(jobs=1)`` runs in the calling process; ``jobs > 1`` uses a ProcessPoolExecutor with the
  ``forkserver`` start method (``spawn`` where unavailable): no fork of a threaded parent. A pool worker that
  dies (SIGKILL, OOM kill) breaks the pool: it is rebuilt and the tasks that were in flight are resubmitted,
  up to ``retries`` times each; only then is a task reported failed ("worker process died"). A task's own
  exception is reported at once, never retried. Pool workers exit by themselves within ~0.5 s when the
  process that started them dies (they poll its pid), so killing a runner leaves no orphans.
- ``DaskExecutor(scheduler=ADDR)`` submits to an existing Dask scheduler; without an address it starts a
  LocalCluster on 127.0.0.1 (``jobs`` single-threaded worker processes). dask is imported lazily.

``fn`` must be a module-level function (picklable by reference) taking and returning plain data.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

__all__ = ["add_executor_arguments", "Executor", "LocalExecutor", "DaskExecutor", "make_executor"]


def _fmt(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).strip()


def _process_alive(pid: int) -> bool:
    """True while process ``pid`` exists and is not a zombie (exited, not yet reaped by its parent: a killed
    runner whose own parent does not wait for it stays a zombie, and ``kill(pid, 0)`` still succeeds)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pid reused by another user's process: the runner is gone
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(pid, 0) is all we have
    return state not in (b"Z", b"X")


def _watch_parent(pid: int, interval: float = 0.5) -> None:
    """Pool-worker initializer: a daemon thread that ends this process when process ``pid`` (the runner that
    started the pool) no longer exists or is a zombie — a killed runner must not leave workers behind."""

    def watch():
        while True:
            time.sleep(interval)
            if not _process_alive(pid):
                os._exit(3)

    threading.Thread(target=watch, name="afltheory-parent-watch", daemon=True).start()


class Executor:
    """Runs ``fn(payload)`` over payloads and yields (payload, result or None, error or None) as tasks
    finish."""

    name = "base"
    jobs = 1

    def imap_unordered(
        self, fn: Callable, payloads: Iterable[dict]
    ) -> Iterator[tuple[dict, dict | None, str | None]]:
        """Yield (payload, result or None, error text or None) for every payload, in completion order."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the executor's workers (idempotent)."""
        pass

    def abort(self) -> None:
        """Stop at once (a signal or an error in the runner): in-flight tasks are abandoned, not awaited."""
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class LocalExecutor(Executor):
    """Runs tasks in ``jobs`` local processes (``jobs=1``: in this process)."""

    name = "local"

    def __init__(
        self, jobs: int = 1, *, start_method: str | None = None, window: int | None = None, retries: int = 2
    ):
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs={jobs!r} must be an integer >= 1")
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 100:
            raise ValueError(f"retries={retries!r} must be an integer in [0, 100]")
        self.jobs = jobs
        self.window = window or 2 * jobs
        self.retries = retries
        self.rebuilds = 0  # pools rebuilt after a worker died (for reports and tests)
        self._pool = None
        self._ctx = None
        if jobs > 1:
            if start_method is None:
                start_method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
            self._ctx = mp.get_context(start_method)
            self._pool = self._new_pool()

    def _new_pool(self):
        return ProcessPoolExecutor(
            max_workers=self.jobs, mp_context=self._ctx, initializer=_watch_parent, initargs=(os.getpid(),)
        )

    def worker_pids(self) -> list[int]:
        """Pids of the live pool workers (empty for jobs=1)."""
        procs = getattr(self._pool, "_processes", None) or {}
        return [p.pid for p in procs.values() if p.is_alive()]

    def imap_unordered(
        self, fn: Callable, payloads: Iterable[dict]
    ) -> Iterator[tuple[dict, dict | None, str | None]]:
        if self._pool is None:
            for p in payloads:
                try:
                    yield p, fn(p), None
                except Exception as exc:  # a failing task is reported, the sweep goes on
                    yield p, None, _fmt(exc)
            return
        it = iter(payloads)
        inflight: dict = {}
        suspects: list = []  # tasks in flight when a worker died: rerun one at a time
        deaths: dict[str, int] = {}  # id -> deaths of a worker running this task *alone* (its own fault)

        def fill():
            while len(inflight) < (1 if suspects else self.window):
                if suspects:
                    p = suspects.pop(0)
                else:
                    try:
                        p = next(it)
                    except StopIteration:
                        return
                try:
                    inflight[self._pool.submit(fn, p)] = p
                except BrokenProcessPool:  # broke between two submissions: rebuild, try again
                    suspects.insert(0, p)
                    self._rebuild()

        fill()
        streak = 0  # consecutive pool breaks with no task finishing in between
        while inflight:
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            broken = [f for f in done if isinstance(f.exception(), BrokenProcessPool)]
            streak = streak + 1 if broken and len(broken) == len(done) else 0
            if streak > 3 * (self.retries + 1):
                raise RuntimeError(
                    f"the process pool broke {streak} times in a row without finishing a task "
                    f"(workers cannot start, or every task kills its worker); giving up"
                )
            for fut in done:
                if fut not in broken:
                    p = inflight.pop(fut)
                    exc = fut.exception()
                    yield (p, None, _fmt(exc)) if exc is not None else (p, fut.result(), None)
            if broken:
                lost = list(inflight.values())
                inflight.clear()
                self._rebuild()
                if len(lost) == 1:  # ran alone: the death is attributable to this task
                    p = lost[0]
                    key = str(p.get("id", id(p)))
                    deaths[key] = deaths.get(key, 0) + 1
                    if deaths[key] > self.retries:
                        yield (
                            p,
                            None,
                            (
                                "worker process died while running this task alone "
                                f"{deaths[key]} time(s) (killed by a signal or out of "
                                f"memory?); not retried further (retries={self.retries})"
                            ),
                        )
                        lost = []
                suspects.extend(lost)
            fill()

    def _rebuild(self):
        old = self._pool
        self._pool = self._new_pool()
        self.rebuilds += 1
        if old is not None:
            old.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def abort(self) -> None:
        """Terminate the pool's workers (SIGTERM) without waiting for their tasks, then release the pool."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for p in procs:
            try:
                p.terminate()
            except Exception:  # noqa: BLE001 - already gone
                pass
        pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + 5
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))


def _bounded_client(Client: Any, scheduler: str, timeout: float) -> Any:
    """``Client(scheduler)`` within ``timeout`` seconds, else OSError. dask's own ``timeout`` does not bound
    every stage: an address that accepts the TCP connection but never answers hangs ``Client()`` for good,
    so the client is made in a daemon thread and abandoned (never joined) when the deadline passes."""
    box: dict = {}

    def make():
        try:
            box["client"] = Client(scheduler, timeout=timeout)
        except BaseException as exc:  # noqa: BLE001 - reported to the caller below
            box["error"] = exc

    th = threading.Thread(target=make, name="afltheory-dask-connect", daemon=True)
    th.start()
    th.join(timeout + 5.0)
    if "client" in box:
        return box["client"]
    exc = box.get("error")
    why = f"{type(exc).__name__}: {exc}" if exc is not None else "no answer"
    raise OSError(f"cannot connect to the Dask scheduler {scheduler!r} within {timeout:g} s ({why})")


class DaskExecutor(Executor):
    """Runs tasks on a Dask cluster (``scheduler`` address, or a LocalCluster of ``jobs`` workers); at most
    ``window`` tasks in flight. ``timeout``: seconds to connect to ``scheduler`` (then an OSError)."""

    name = "dask"

    def __init__(
        self,
        scheduler: str | None = None,
        *,
        jobs: int = 2,
        client: Any = None,
        window: int | None = None,
        timeout: float = 20.0,
    ):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ImportError(
                "executor='dask' needs the dask extra: pip install 'afltheory[dask]' (dask[distributed])"
            ) from None
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs={jobs!r} must be an integer >= 1")
        self._cluster = None
        self._own_client = client is None
        if client is not None:
            self.client = client
        elif scheduler:
            if not (isinstance(timeout, (int, float)) and 0 < timeout <= 3600):
                raise ValueError(f"timeout={timeout!r} must be a number of seconds in (0, 3600]")
            self.client = _bounded_client(Client, scheduler, timeout)
        else:
            self._cluster = LocalCluster(
                n_workers=jobs, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, processes=True
            )
            self.client = Client(self._cluster)
        nthreads = sum(self.client.nthreads().values()) or jobs
        self.jobs = nthreads
        self.window = window or 4 * nthreads

    def imap_unordered(
        self, fn: Callable, payloads: Iterable[dict]
    ) -> Iterator[tuple[dict, dict | None, str | None]]:
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

    def close(self) -> None:
        if self._own_client:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def add_executor_arguments(
    parser: Any, *, jobs_help: str, executor_help: str, jobs_type: Callable[[str], int] = int
) -> None:
    """The command-line options saying where tasks run (read by ``make_executor``): ``--jobs`` (default 1),
    ``--executor`` local|dask (default local) and ``--scheduler`` ADDR, on an argparse ``parser``; each
    command says what runs there in ``jobs_help`` and ``executor_help``."""
    parser.add_argument("--jobs", type=jobs_type, default=1, help=jobs_help)
    parser.add_argument("--executor", choices=("local", "dask"), default="local", help=executor_help)
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address (with --executor dask)")


def make_executor(
    executor: str | Executor = "local", *, jobs: int = 1, scheduler: str | None = None
) -> Executor:
    """An executor from its name ("local" or "dask") or an Executor instance (returned as is)."""
    if isinstance(executor, Executor):
        return executor
    if executor == "local":
        if scheduler:
            raise ValueError("scheduler= is only used with executor='dask'")
        return LocalExecutor(jobs)
    if executor == "dask":
        return DaskExecutor(scheduler, jobs=jobs)
    raise ValueError(f"executor={executor!r} must be 'local' or 'dask'")
