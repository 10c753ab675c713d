"""``run_sweep``: validate a spec, skip what the store already holds, run the rest on an executor and commit
each result in this (the parent) process as it arrives."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .executors import Executor, make_executor
from .progress import make_progress
from .spec import Spec, load_spec, parse_spec
from .store import Store
from .tasks import TASK_FUNCTIONS

__all__ = ["run_sweep", "SweepReport"]


@dataclass
class SweepReport:
    total: int
    skipped: int
    ran: int = 0
    failed: int = 0
    seconds: float = 0.0
    executor: str = "local"
    jobs: int = 1
    spec_hash: str = ""
    store_note: str | None = None
    failures: list = field(default_factory=list)
    waited_for: str | None = None  # the other runner this one waited for (two runners on one store)
    damage: list = field(default_factory=list)  # what the store's integrity check found and repaired
    pool_rebuilds: int = 0  # process pools rebuilt after a worker died

    @property
    def ok(self) -> bool:
        """True when no task failed."""
        return self.failed == 0


def _as_spec(spec, check_objects: bool) -> Spec:
    if isinstance(spec, Spec):
        return spec
    p = Path(spec)
    if isinstance(spec, (str, Path)) and p.suffix == ".toml" and p.exists():
        return load_spec(p, check_objects=check_objects)
    if isinstance(spec, str) and "\n" in spec:
        return parse_spec(spec, check_objects=check_objects)
    return load_spec(p, check_objects=check_objects)


def run_sweep(
    spec: Spec | str | os.PathLike,
    store: str | os.PathLike | Store,
    *,
    jobs: int = 1,
    executor: str | Executor = "local",
    scheduler: str | None = None,
    task: str = "simulate",
    progress: str | None = "none",
    extend: bool = False,
    max_tasks: int | None = None,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
) -> SweepReport:
    """Run every task of ``spec`` (a :class:`Spec`, a path to a TOML file, or TOML text) not yet in ``store``
    (a path or an open :class:`Store`).

    ``executor``: "local" (``jobs`` processes; 1 = in this process), "dask" (``scheduler`` address, or a
    LocalCluster of ``jobs`` workers on 127.0.0.1), or an :class:`Executor` instance (not closed here).
    ``task``: "simulate" (afltheory.simulate) or "synthetic" (machinery tests; skips object checks).
    ``progress``: "bar", "lines", "none" or None (auto: bar on a TTY). ``max_tasks`` caps this call.
    Results are identical whatever the executor, job count or order (seeds derive from task ids).

    One runner per store: the store's runner lock is held throughout; if another runner holds it, this one
    calls ``on_wait(holder)`` (default: a ``UserWarning``) and waits (``wait=False``: ``StoreBusyError``),
    then runs only the tasks still missing. Before running, the store is verified (``Store.verify``): damaged
    or untrusted rows are recomputed and ``SweepReport.damage`` says what was found.
    """
    if task not in TASK_FUNCTIONS:
        raise ValueError(f"task={task!r} must be one of {sorted(TASK_FUNCTIONS)}")
    spec = _as_spec(spec, check_objects=(task == "simulate"))
    own_store = not isinstance(store, Store)
    st = Store(store) if own_store else store
    waited = []

    def _on_wait(holder):
        waited.append(holder)
        if on_wait is not None:
            on_wait(holder)
        else:
            warnings.warn(
                f"store {st.path} is being written by {holder}; waiting for it to finish, then "
                f"running only the tasks still missing",
                stacklevel=3,
            )

    try:
        with st.runner_lock(wait=wait, on_wait=_on_wait):
            return _run_locked(
                spec,
                st,
                jobs=jobs,
                executor=executor,
                scheduler=scheduler,
                task=task,
                progress=progress,
                extend=extend,
                max_tasks=max_tasks,
                waited=waited[0] if waited else None,
            )
    finally:
        if own_store:
            st.close()


def _run_locked(spec, st, *, jobs, executor, scheduler, task, progress, extend, max_tasks, waited):
    st.verify()
    damage = list(st.damage)  # found when opening (salvage) or now
    st.damage.clear()
    for d in damage:
        warnings.warn(d, stacklevel=3)
    reg = st.register_spec(spec, extend=extend)
    if reg["mismatch"]:
        warnings.warn(
            f"store {st.path}: {reg['mismatch']} (was {reg['previous_hash'][:12]}, now {spec.hash[:12]})",
            stacklevel=3,
        )
    done = st.finished_ids()
    todo = [t for t in spec.tasks if t.id not in done]
    if max_tasks is not None:
        todo = todo[:max_tasks]
    rep = SweepReport(
        total=len(spec.tasks),
        skipped=sum(t.id in done for t in spec.tasks),
        spec_hash=spec.hash,
        store_note=reg["mismatch"],
        waited_for=waited,
        damage=damage,
    )
    if not todo:
        return rep
    by_id = {t.id: t for t in todo}
    fn = TASK_FUNCTIONS[task]
    own_exec = not isinstance(executor, Executor)
    ex = make_executor(executor, jobs=jobs, scheduler=scheduler)
    rep.executor, rep.jobs = ex.name, ex.jobs
    bar = make_progress(len(todo), rep.skipped, progress)
    t0 = time.perf_counter()
    aborted = True
    try:
        payloads = ({"id": t.id, "config": t.config, "seed": t.seed} for t in todo)
        for payload, result, error in ex.imap_unordered(fn, payloads):
            t = by_id[payload["id"]]
            if error is None:
                st.add_result(t, result, spec.hash)
                rep.ran += 1
            else:
                st.add_failure(t, error)
                rep.failed += 1
                rep.failures.append((t.id, error.strip().splitlines()[-1]))
            bar.update(t.id, ok=error is None)
        aborted = False
    finally:
        bar.close()
        rep.pool_rebuilds = getattr(ex, "rebuilds", 0)
        if own_exec:  # a signal or an error (disk full) stops the workers at once; else they finish
            ex.abort() if aborted else ex.close()
    rep.seconds = time.perf_counter() - t0
    return rep
