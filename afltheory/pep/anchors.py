"""Sanity anchors for the PEP formulation: known values it must reproduce.

- Gradient descent on L-smooth nonconvex f, γ = 1/L: min_{t≤N} ‖∇f(x_t)‖² ≤ (4/(3N)) L (f(x_0) − f(x_N)),
  tight (PEPit's nonconvex gradient-descent example; Abbaszadehpeivasti, de Klerk & Zamani 2021). The AFA-CD
  skeleton with K = 1, τ = 0, η η_L = 1/L and σ_G = 0 (identical workers, any M and m) is this method.
- Delayed gradient descent x_{t+1} = x_t − γ ∇f(x_{t−τ_t}): the same PEP written directly in PEPit
  (``delayed_gd_reference``, a few lines independent of the skeleton code) must give the skeleton's value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule

__all__ = ["delayed_gd_reference", "gd_known_value", "gd_schedule"]


def gd_known_value(N: int, L: float = 1.0, delta: float = 1.0) -> float:
    """4 L Δ / (3 N): the exact worst case of min_{t≤N} ‖∇f(x_t)‖² for GD with γ = 1/L."""
    return 4 * L * delta / (3 * N)


def gd_schedule(T: int, tau: int = 0, num_workers: int = 1, m: int = 1) -> Schedule:
    """Delay min(t, τ), K = 1, ``m`` arrivals per round among ``num_workers`` workers (round t: workers
    (t + j) mod M, j < m): with σ_G = 0 (identical workers) the skeleton of (delayed) GD with γ = η η_L."""
    import numpy as np

    from .._validation import check_int
    from ..anarchy import Schedule

    M = check_int("num_workers", num_workers, low=1)
    m = check_int("m", m, low=1, high=M)
    W = (np.arange(T)[:, None] + np.arange(m)[None, :]) % M
    return Schedule(W, [[min(t, tau)] * m for t in range(T)], np.ones((T, m)), M)


def delayed_gd_reference(gamma: float, delays: Sequence[int], L: float = 1.0) -> float:
    """PEPit directly: x_{t+1} = x_t − γ ∇f(x_{t−τ_t}); worst min_{t≤T} ‖∇f(x_t)‖², f(x_0) − f(x_T) ≤ 1."""
    from PEPit import PEP
    from PEPit.functions import SmoothFunction

    from .core import SOLVER_SETTINGS

    pep = PEP()
    f = pep.declare_function(SmoothFunction, L=L)
    xs = [pep.set_initial_point()]
    for t, d in enumerate(delays):
        xs.append(xs[-1] - gamma * f.gradient(xs[t - d]))
    for x in xs:
        pep.set_performance_metric(f.gradient(x) ** 2)
    pep.set_initial_condition(f(xs[0]) - f(xs[-1]) <= 1)
    return float(pep.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0, **SOLVER_SETTINGS))
