"""Reference computations for the compression claims (afltheory.theory.compression): an independent plain
second-moment recursion for single-node compressed GD, and ζ*². (The exact engine's E‖x_t − x*‖² is
``afltheory.exact.exact_distance_sq``: the exact engine is a higher layer than compression.)"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from .._validation import check_array, check_int, check_positive, check_real
from .compressors import Compressor


class _WorkerGradients(Protocol):
    """What ``zeta_star_sq`` reads of a problem (e.g. ``problems.QuadraticProblem``, a peer room: not
    imported): its workers' gradients and its optimum ``constants.x_star``."""

    num_workers: int
    constants: Any

    def local_grad(self, x: np.ndarray, i: int) -> np.ndarray: ...


__all__ = ["compressed_gd_reference", "zeta_star_sq"]


def compressed_gd_reference(
    hessian: np.ndarray,
    x0_minus_xstar: np.ndarray,
    gamma: float,
    compressor: Compressor,
    rounds: int,
    *,
    scale: float = 1.0,
) -> np.ndarray:
    """E‖x_k − x*‖², k = 0..rounds, of x⁺ = x − γ s·M ∇f(x) on f(x) = ½(x − x*)ᵀH(x − x*), C(g) = Mg a linear
    compressor (E M = I, E[M X Mᵀ] = ``compressor.moment_map``) and ``scale`` s (s ≠ 1: a mis-scaled
    compressor, e.g. rand-k with the d/k factor dropped is s = k/d). Plain recursion (no engine):
    P⁺ = P − γs(HP + PH) + γ²s² E[M HPH Mᵀ]."""
    H = check_array("hessian", hessian, ndim=2)
    x = check_array("x0_minus_xstar", x0_minus_xstar, shape=(H.shape[0],))
    g = check_positive("gamma", gamma)
    s = check_real("scale", scale)
    rounds = check_int("rounds", rounds, low=0)
    P = np.outer(x, x)
    out = np.empty(rounds + 1)
    out[0] = np.trace(P)
    for k in range(rounds):
        HP = H @ P
        P = P - g * s * (HP + HP.T) + (g * s) ** 2 * compressor.moment_map(HP @ H)
        P = 0.5 * (P + P.T)
        out[k + 1] = np.trace(P)
    return out


def zeta_star_sq(problem: _WorkerGradients) -> float:
    """ζ*² = (1/M) Σ_i ‖∇f_i(x*)‖²: the heterogeneity at the optimum that compression turns into a floor."""
    xs = problem.constants.x_star
    g = np.stack([problem.local_grad(xs, i) for i in range(problem.num_workers)])
    return float(np.mean(np.sum(g**2, axis=1)))
