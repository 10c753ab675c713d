"""MOCHA's convergence theorems [Smith et al. 2017, Thms 1–2] (federated multi-task learning; Ω fixed).

Assumption (per node t and round h): P[θ_t^h = 1] ≤ p_max < 1 and E[θ_t^h | θ_t^h < 1] ≤ Θ_max < 1; Θ̄ = p_max
+ (1 − p_max) Θ_max.

Theorem 1 (smooth losses, ℓ (1/μ)-smooth) [M: the exact form of s]: with s ∈ (0, 1],
    E[D(α*) − D(α^{h+1})] ≤ (1 − (1 − Θ̄) s) · E[D(α*) − D(α^h)],
so H ≥ log(n/ε_D) / ((1 − Θ̄) s) rounds give E[D(α*) − D(α^H)] ≤ ε_D when D(α*) − D(α⁰) ≤ n.
s as derived here for our dual (CoCoA+ lineage, s = μ/(μ + σ' σ_max) with the local curvature of R*):
    s = μ / (μ + σ' max_t (C_tt/2) λ_max(X_tᵀX_t)),   C = (λ₁Ω + λ₂I)⁻¹
(derived, not transcribed: the seed gives only Definition 1; with exact local solves, decoupled tasks (λ₁ = 0)
and σ' = 1 the local subproblem *is* the dual restricted to the node, the contraction is exactly Θ̄ — a pinned
case — while this s is smaller, i.e. the bound is valid but not tight there).
Theorem 2 (L-Lipschitz losses) [L]: duality gap ≤ ε_G after O(1/((1 − Θ̄) ε_G)) rounds (constant not encoded).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_array, check_int, check_positive, check_real


class _MultiTask(Protocol):
    """What ``s_smooth`` reads of a ``mtl.MultiTaskProblem`` (a higher layer: not imported): the task
    relationship ``C``, the tasks' data ``X``, the loss name and ``constants`` (``mu``,
    ``sigma_prime_min``)."""

    C: np.ndarray
    X: Any
    loss: str
    constants: Any


__all__ = ["CITATION", "theta_bar", "s_smooth", "rate", "bound", "rounds_to_epsilon"]

CITATION = "[Smith et al. 2017, Thm 1]"


def theta_bar(p_max: float, theta_max: float) -> float:
    """Θ̄ = p_max + (1 − p_max) Θ_max."""
    p = check_real("p_max", p_max, low=0.0, high=1.0)
    th = check_real("theta_max", theta_max, low=0.0, high=1.0)
    return p + (1.0 - p) * th


def s_smooth(problem: _MultiTask, sigma_prime: float | None = None) -> float:
    """s = μ / (μ + σ' max_t (C_tt/2) λ_max(X_tᵀX_t)) for a smooth-loss ``MultiTaskProblem`` (see module
    docstring)."""
    c = problem.constants
    if c.mu <= 0:
        raise ValueError(f"Theorem 1 needs a smooth loss (mu > 0); loss={problem.loss!r} is only Lipschitz")
    sp = c.sigma_prime_min if sigma_prime is None else check_positive("sigma_prime", sigma_prime)
    C = problem.C
    smax = max(C[t, t] / 2 * float(np.linalg.eigvalsh(x.T @ x).max()) for t, x in enumerate(problem.X))
    return c.mu / (c.mu + sp * smax)


def rate(theta_bar_: float, s: float) -> float:
    """Per-round contraction factor 1 − (1 − Θ̄) s."""
    tb = check_real("theta_bar", theta_bar_, low=0.0, high=1.0)
    s = check_real("s", s, low=0.0, high=1.0, low_open=True)
    return 1.0 - (1.0 - tb) * s


def bound(h: int | ArrayLike, eps0: float, theta_bar_: float, s: float) -> np.ndarray:
    """(1 − (1 − Θ̄) s)^h · ε₀: Theorem 1's bound on E[D(α*) − D(α^h)] from the initial suboptimality ε₀."""
    h = check_array("h", h)
    if np.any(h < 0):
        raise ValueError(f"h={h!r} must be >= 0 (round counts)")
    return rate(theta_bar_, s) ** h * check_real("eps0", eps0, low=0.0)


def rounds_to_epsilon(n: int, eps: float, theta_bar_: float, s: float) -> float:
    """H = log(n/ε_D) / ((1 − Θ̄) s) (Theorem 1; inf if Θ̄ = 1)."""
    n = check_int("n", n, low=1)
    eps = check_positive("eps", eps)
    tb = check_real("theta_bar", theta_bar_, low=0.0, high=1.0)
    s = check_real("s", s, low=0.0, high=1.0, low_open=True)
    if tb >= 1.0:
        return math.inf
    return max(0.0, math.log(n / eps)) / ((1.0 - tb) * s)
