"""Lian, Huang, Li, Liu, "Asynchronous Parallel Stochastic Gradient for Nonconvex Optimization", NeurIPS 2015
(arXiv:1506.08272), Theorem 1 (AsySG-con, constant step).

Paper letters -> symbols: K (updates) -> ``T``; M (gradients per update, the minibatch) -> ``m``; T (delay
bound) -> ``tau``; γ (step) -> ``eta`` (the factor on the SUM of the m stale gradients).
"""

from __future__ import annotations

import sympy as sp

from ._statement import Statement
from .symbols import Delta, L, T, eta, m, sigma, tau

__all__ = ["STATEMENTS", "THM1"]

THM1 = Statement(
    id="lian2015.thm1",
    title="AsySG-con: asynchronous SGD, nonconvex, constant step",
    reference="Lian, Huang, Li, Liu, NeurIPS 2015, Theorem 1",
    source="from memory (searches for the statement returned only citing pages)",
    excerpt=None,
    confidence="from memory",
    reading=(
        "x_{k+1} = x_k − γ Σ_{m=1}^M G(x_{k−τ_{k,m}}; ξ_{k,m}): γ multiplies the SUM of the "
        "M stale gradients (afltheory's AsySG averages: γ = η η_L / m). Delays τ_{k,m} ≤ T. "
        "The left side averages E‖∇f(x_k)‖² over k = 1..K, the K iterates before the last "
        "(x_1 the start). σ² bounds the variance of one stochastic gradient; Δ = f(x_1) − f*."
    ),
    assumptions={
        "function": "smooth (nonconvex)",
        "noise": "variance σ²",
        "heterogeneity": None,
        "participation": "m stale gradients per update",
        "max_delay": "τ",
    },
    algorithm="AsySG-con (afltheory.algorithms.AsySG with η η_L = m γ)",
    measured="avg_grad_sq: (1/K) Σ_{k=1}^K E‖∇f(x_k)‖²",
    bound={
        "transient": 2 * Delta / (m * T * eta),
        "noise": sigma**2 * L * eta,
        "delay": 2 * sigma**2 * L**2 * m * tau * eta**2,
    },
    conditions={"step": sp.Le(L * m * eta + 2 * L**2 * m**2 * tau**2 * eta**2, 1)},
    notes="Corollary: γ ∝ 1/sqrt(MK) gives O(1/sqrt(MK)) when T ≤ O(sqrt(K/M)).",
)

STATEMENTS = (THM1,)
