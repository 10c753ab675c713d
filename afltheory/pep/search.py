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


def round_choices(t: int, M: int, m: int, tau: int,
                  first_fixed: bool = True) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
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


def worst_schedule(algorithm: ServerRule, constants: Any, *, num_workers: int, m: int, K: int, T: int,
                   tau: int, delta: float, metric: str = "average", mu: float | None = None,
                   heterogeneity: str = "server", max_solves: int = 64, beam: int = 2,
                   **kw: Any) -> ScheduleSearch:
    """Worst PEP value over the schedules of this size (see the module docstring). Exhaustive when the number
    of schedules is ≤ ``max_solves``, else beam search of width ``beam``; ``kw`` go to ``worst_case``."""
    import time

    from .core import worst_case

    M = check_int("num_workers", num_workers, low=1)
    m = check_int("m", m, low=1, high=M)
    K = check_int("K", K, low=1)
    T = check_int("T", T, low=1)
    tau = check_int("tau", tau, low=0)
    beam = check_int("beam", beam, low=1)
    t0 = time.perf_counter()
    solves = unc = 0

    def solve(rows):
        nonlocal solves, unc
        r = worst_case(algorithm, _schedule(rows, M, K), constants, delta=delta, metric=metric, mu=mu,
                       heterogeneity=heterogeneity, **kw)
        solves += 1
        unc += not r.certified
        return r

    count = schedule_count(M, m, T, tau)
    if count <= max_solves:
        method = "exhaustive"
        cands = [list(rows) for rows in itertools.product(*(round_choices(t, M, m, tau) for t in range(T)))]
        results = [(solve(rows), rows) for rows in cands]
    else:
        method = f"beam({beam})"
        prefixes = [[]]
        results = []
        for t in range(T):
            results = [(solve(p + [c]), p + [c]) for p in prefixes for c in round_choices(t, M, m, tau)]
            ok = sorted((r for r in results if r[0].certified), key=lambda r: -r[0].value)
            prefixes = [rows for _, rows in ok[:beam]]
            if not prefixes:
                break
    ok = [r for r in results if r[0].certified]
    if not ok:
        raise RuntimeError(f"no certified PEP solve among {solves} ({unc} uncertified)")
    best, rows = max(ok, key=lambda r: r[0].value)
    return ScheduleSearch(best, _schedule(rows, M, K), method, count, solves, unc, time.perf_counter() - t0)
