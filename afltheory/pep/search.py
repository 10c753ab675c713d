"""Worst case over schedules for tiny sizes: exhaustive enumeration, or beam search, of the PEP value.

A round is a choice of the arrival set M_t (an m-subset of the M workers) and of each arrival's delay
τ_{t,i} ∈ [0, min(t, τ)]; K is fixed per arrival. The class of functions is invariant under relabelling the
workers, so the first round's set is fixed to {0, …, m−1}. Exhaustive enumeration returns the exact maximum of
the PEP value over all schedules (each a certified upper bound on its own schedule, so the maximum is a
certified upper bound over every schedule of that size); beam search keeps the ``beam`` best prefixes per
round (ranked by the prefix's PEP value) and returns the worst schedule *found* — a heuristic, labelled as
such.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_int

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule

__all__ = ["ScheduleSearch", "round_choices", "schedule_count", "worst_schedule"]


@dataclass(frozen=True)
class ScheduleSearch:
    """``best``: PEPResult of the worst schedule found; ``method``: "exhaustive" (a certified maximum over all
    ``count`` schedules) or "beam(B)" (heuristic); ``solves``: PEPs solved; ``uncertified``: solves whose
    status was not certified (never counted as the maximum)."""

    best: object
    schedule: object
    method: str
    count: int
    solves: int
    uncertified: int
    seconds: float

    @property
    def certified_max(self) -> bool:
        """True when ``best.value`` is a certified upper bound over *every* schedule of this size (exhaustive
        search with every solve certified)."""
        return self.method == "exhaustive" and self.uncertified == 0


def round_choices(
    t: int, M: int, m: int, tau: int, first_fixed: bool = True
) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """All (workers, delays) pairs for round t."""
    sets = [tuple(range(m))] if (t == 0 and first_fixed) else list(itertools.combinations(range(M), m))
    dmax = min(t, tau)
    return [(s, d) for s in sets for d in itertools.product(range(dmax + 1), repeat=m)]


def schedule_count(M: int, m: int, T: int, tau: int) -> int:
    """Number of distinct schedules enumerated (first round's set fixed)."""
    return math.prod(len(round_choices(t, M, m, tau)) for t in range(T))


def _schedule(rows, M, K):
    from ..anarchy import Schedule

    W = np.array([r[0] for r in rows], dtype=np.int64)
    D = np.array([r[1] for r in rows], dtype=np.int64)
    return Schedule(W, D, np.full(W.shape, K, dtype=np.int64), M, init_local_steps=np.full(M, K))


def worst_schedule(
    algorithm: ServerRule,
    constants: Any,
    *,
    num_workers: int,
    m: int,
    K: int,
    T: int,
    tau: int,
    delta: float,
    metric: str = "average",
    mu: float | None = None,
    heterogeneity: str = "server",
    max_solves: int = 64,
    beam: int = 2,
    executor: str | Any = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    journal: str | Any = None,
    progress: Any = None,
    **kw: Any,
) -> ScheduleSearch:
    """Worst PEP value over the schedules of this size (see the module docstring). Exhaustive when the number
    of schedules is ≤ ``max_solves``, else beam search of width ``beam``; ``kw`` go to ``worst_case``.
    The solves of one search step (all schedules, or one round's extensions of the beam) are independent:
    ``executor`` "local" runs them in ``jobs`` processes (1: in this one), "dask" on a Dask scheduler at
    ``scheduler`` (or a LocalCluster of ``jobs`` workers); an ``afltheory.sweep.executors.Executor`` is used
    as is. The result does not depend on the executor (results are ordered as the sequential run's).

    ``journal``: a JSON-lines file recording each solve's value and certification as it completes
    (``afltheory.adversary.journal.SearchJournal``); rerunning the same search with it reads the recorded
    solves instead of repeating them (the search is deterministic), so an interrupted search resumes where it
    stopped, and only the worst schedule is solved again for its full result. ``progress(solves, best)``, if
    given, is called after every search step (``best``: the largest certified value so far)."""
    import time

    from ..sweep.executors import make_executor

    M = check_int("num_workers", num_workers, low=1)
    m = check_int("m", m, low=1, high=M)
    K = check_int("K", K, low=1)
    T = check_int("T", T, low=1)
    tau = check_int("tau", tau, low=0)
    beam = check_int("beam", beam, low=1)
    jobs = check_int("jobs", jobs, low=1)
    if isinstance(executor, str) and executor not in ("local", "dask"):
        raise ValueError(f"executor={executor!r} must be 'local' or 'dask' (or an Executor instance)")
    t0 = time.perf_counter()
    solves = unc = 0
    common = dict(
        algorithm=algorithm,
        constants=constants,
        M=M,
        K=K,
        kw=dict(kw, delta=delta, metric=metric, mu=mu, heterogeneity=heterogeneity),
    )
    local = executor == "local" and jobs == 1
    jr = None
    if journal is not None:
        from .journal import SearchJournal

        jr = SearchJournal(
            journal,
            dict(
                search="pep.worst_schedule",
                algorithm=repr(algorithm),
                constants=repr(constants),
                M=M,
                m=m,
                K=K,
                T=T,
                tau=tau,
                delta=delta,
                metric=metric,
                mu=mu,
                heterogeneity=heterogeneity,
                max_solves=max_solves,
                beam=beam,
                kw=repr(sorted(kw.items())),
            ),
        )
    ex = None if local else make_executor(executor, jobs=jobs, scheduler=scheduler)
    counter = [0]
    best_seen = [-math.inf]

    def solve_all(cands):
        """Solve ``cands`` (reading the journal's recorded solves); pairs (result, rows) in order."""
        keys = list(range(counter[0], counter[0] + len(cands)))
        counter[0] += len(cands)
        known: dict = {}
        if jr is not None:
            from .journal import digest

            for j, rows in enumerate(cands):
                rec = jr.get(keys[j], digest(repr(rows)))
                if rec is not None:
                    known[j] = _Recorded(
                        math.inf if rec["value"] in ("inf", None) else float(rec["value"]),
                        bool(rec["certified"]),
                    )
        fresh = [j for j in range(len(cands)) if j not in known]
        out = _solve_many([cands[j] for j in fresh])
        res = [None] * len(cands)
        for j, r in known.items():
            res[j] = r
        for j, r in zip(fresh, out, strict=True):
            res[j] = r
            if jr is not None:
                from .journal import digest

                jr.record(keys[j], digest(repr(cands[j])), dict(value=r.value, certified=bool(r.certified)))
        pairs = _count(res)
        best_seen[0] = max([best_seen[0]] + [r.value for r in res if r.certified])
        if progress is not None:
            progress(solves, best_seen[0])
        return list(zip(pairs, cands, strict=True))

    def _count(res):
        nonlocal solves, unc
        solves += len(res)
        unc += sum(not r.certified for r in res)
        return res

    def _solve_many(cands):
        if not cands:
            return []
        if ex is None:
            res = [_solve({**common, "rows": rows}) for rows in cands]
        else:
            import hashlib

            pay = [
                {
                    **common,
                    "rows": rows,
                    "index": j,
                    "id": hashlib.sha1(f"{j}|{rows}".encode()).hexdigest()[:16],
                }
                for j, rows in enumerate(cands)
            ]
            res = [None] * len(cands)
            for p, r, err in ex.imap_unordered(_solve, pay):
                if err is not None:
                    raise RuntimeError(
                        f"PEP solve of schedule {p['rows']} failed on the {ex.name} executor:\n{err}"
                    )
                res[p["index"]] = r
        return res

    try:
        count = schedule_count(M, m, T, tau)
        if count <= max_solves:
            method = "exhaustive"
            cands = [
                list(rows) for rows in itertools.product(*(round_choices(t, M, m, tau) for t in range(T)))
            ]
            results = solve_all(cands)
        else:
            method = f"beam({beam})"
            prefixes = [[]]
            results = []
            for t in range(T):
                results = solve_all([p + [c] for p in prefixes for c in round_choices(t, M, m, tau)])
                ok = sorted((r for r in results if r[0].certified), key=lambda r: -r[0].value)
                prefixes = [rows for _, rows in ok[:beam]]
                if not prefixes:
                    break
    finally:
        if ex is not None and ex is not executor:
            ex.close()
    ok = [r for r in results if r[0].certified]
    if not ok:
        raise RuntimeError(f"no certified PEP solve among {solves} ({unc} uncertified)")
    best, rows = max(ok, key=lambda r: r[0].value)
    if isinstance(best, _Recorded):  # read from the journal: solve the worst schedule again for its result
        best = _solve({**common, "rows": rows})
    return ScheduleSearch(best, _schedule(rows, M, K), method, count, solves, unc, time.perf_counter() - t0)


@dataclass(frozen=True)
class _Recorded:
    """A solve read from the journal: what the search's decisions use."""

    value: float
    certified: bool


def _solve(task: dict) -> Any:
    """One schedule's PEP (``worst_schedule``'s task; module level so executors can pickle it)."""
    from .core import worst_case

    return worst_case(
        task["algorithm"], _schedule(task["rows"], task["M"], task["K"]), task["constants"], **task["kw"]
    )
