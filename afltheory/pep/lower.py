"""Lower bounds on the same worst case: concrete members of the class, simulated by the library's engine.

The PEP value bounds the worst case over the class from above; any concrete instance that satisfies every
assumption *everywhere* (not only at visited points) bounds it from below. This module searches a small family
whose constants are certified exactly (``problems.HeterogeneousQuadratic``, shared diagonal Hessian in d = 2):
  f_i(x) = ½ (x − c_i)ᵀ diag(a_1, a_2) (x − c_i),  0 < a_j ≤ L,   ‖diag(a)(c_i − c̄)‖ ≤ σ_G  (exact),
  heterogeneity along coordinate 2 in a sign pattern over the workers, x_0 placed so that f(x_0) − f_* = Δ
  (a fraction θ of Δ along each coordinate, both signs), run with ``simulate`` on the replayed schedule.
Quadratics are a small corner of the smooth class (the PEP worst cases are typically not quadratic), so the
bracket [lower, PEP upper] is honest but need not be tight; ``afltheory.adversary`` (if available) searches
wider classes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.schedule import Schedule
    from ..functions import FunctionClass

__all__ = ["LowerBound", "quadratic_lower_bound"]


@dataclass(frozen=True)
class LowerBound:
    """Best instance found: its metric ``value`` (a lower bound on the class's worst case), the curvatures,
    the heterogeneity pattern, the initial point and how many instances were simulated."""

    value: float
    hessian_diag: np.ndarray
    centers: np.ndarray
    x0: np.ndarray
    instances: int
    method: str = "quadratic family (HeterogeneousQuadratic, d = 2), engine simulate"


def _metric(gn, T, metric):
    if metric == "average":
        return gn[:, :T].mean(axis=1)
    if metric == "min":
        return gn.min(axis=1)
    return gn[:, T]


def quadratic_lower_bound(
    algorithm: ServerRule,
    schedule: Schedule,
    *,
    L: float,
    sigma_G: float,
    delta: float,
    metric: str = "average",
    mu: float | None = None,
    grid: int = 7,
    replicate: int = 0,
    functions: FunctionClass | None = None,
) -> LowerBound:
    """Largest ``metric`` over the quadratic family above on ``schedule`` (replicate ``replicate``).

    ``functions``: the class (``afltheory.functions``; its L must be ``L``), or ``mu`` in the older
    convention (None: L-smooth, 0: convex, (0, L): strongly convex) — not both unless they agree. The
    curvatures are restricted to the class's ``curvature`` interval intersected with [L/50, L] (a quadratic
    member with a minimizer). ``grid``: points per curvature axis (geometric between max(lowest curvature,
    L/50) and L); θ ∈ {0, ¼, ½, ¾, 1}; patterns: every sign vector of the M workers (up to 2^M, M ≤ 8)
    scaled to σ_G.
    """
    from .. import simulate
    from ..anarchy import Replay
    from ..functions import resolve_class
    from ..problems import HeterogeneousQuadratic

    functions = resolve_class(L, mu, functions)

    sched = schedule.replicate(replicate)
    M, T = sched.num_workers, sched.rounds
    if M > 8:
        raise ValueError(f"num_workers={M} is outside the allowed range [1, 8] for the pattern enumeration")
    lo = max(functions.curvature[0], L / 50)
    a_grid = np.geomspace(lo, L, grid) if lo < L else np.array([L])
    thetas = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    patterns = [np.zeros(M)] if sigma_G == 0 or M == 1 else []
    if M > 1 and sigma_G > 0:
        for signs in itertools.product((-1.0, 1.0), repeat=M - 1):
            p = np.array((1.0,) + signs)
            p = p - p.mean()
            if np.any(p != 0):
                patterns.append(p / np.abs(p).max())
    best, n = None, 0
    for a1, a2 in itertools.product(a_grid, a_grid):
        a = np.array([a1, a2])
        for p in patterns:
            C = np.zeros((M, 2))
            C[:, 1] = p * sigma_G / a2  # ‖A(c_i − c̄)‖ = σ_G |p_i| ≤ σ_G, c̄ = 0
            prob = HeterogeneousQuadratic.from_arrays(hessian_diag=a, centers=C)
            cs = prob.constants
            # f(x) = ½ Σ_j a_j x_j² + f_*  (c̄ = 0): split Δ between the coordinates, both signs
            x0 = []
            for th, s1, s2 in itertools.product(thetas, (1.0, -1.0), (1.0, -1.0)):
                x0.append([s1 * np.sqrt(2 * th * delta / a1), s2 * np.sqrt(2 * (1 - th) * delta / a2)])
            x0 = np.array(x0)
            tr = simulate(prob, algorithm, Replay(sched), rounds=T, replicates=len(x0), x0=x0)
            assert cs.sigma_G <= sigma_G * (1 + 1e-12) and cs.L <= L * (1 + 1e-12)
            vals = _metric(tr.grad_norm_sq, T, metric)
            n += len(x0)
            j = int(np.argmax(vals))
            if best is None or vals[j] > best[0]:
                best = (float(vals[j]), a, C, x0[j])
    return LowerBound(best[0], best[1], best[2], best[3], n)
