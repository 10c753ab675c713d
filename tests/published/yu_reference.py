"""Independent plain-numpy reference for Yu, Yang, Zhu 2019 (AAAI), Theorem 1. NOTHING here imports afltheory.

``pr_sgd_loop`` is parallel restarted SGD literally as the lecture notes print it (shared seed 004,
"equivalent code for FedAvg"): for t = 1..T every worker observes G_i^t at its own x_i^{t−1}; if t mod K = 0
the node average ȳ = (1/N) Σ_i x_i^{t−1} is taken BEFORE the step and x_i^t = ȳ − s G_i^t, else x_i^t =
x_i^{t−1} − s G_i^t. The theorem's left side averages ‖∇f(x̄^{t−1})‖² over t = 1..T, x̄ the virtual average
at EVERY iteration (``yu_lhs``). ``yu_bound`` is the right side retyped from the notes (a second,
independent copy on purpose).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pr_sgd_loop", "yu_bound", "yu_lhs"]


def pr_sgd_loop(Q, x0, K, T, s, rng=None):
    """PR-SGD on ``Q`` (``reference_loops.Quadratics``, uniform weights): (virtual averages x̄^0..x̄^T, the
    largest ‖G_i^t‖² seen — a realized lower bound of the second moment G²)."""
    xs = np.tile(np.asarray(x0, dtype=float), (Q.N, 1))
    avgs = [xs.mean(axis=0)]
    g2max = 0.0
    for t in range(1, T + 1):
        g = np.stack([Q.grad_k(k, xs[k]) + Q.noise(k, rng) for k in range(Q.N)])
        g2max = max(g2max, float(np.max(np.sum(g * g, axis=1))))
        base = np.tile(xs.mean(axis=0), (Q.N, 1)) if t % K == 0 else xs
        xs = base - s * g
        avgs.append(xs.mean(axis=0))
    return avgs, g2max


def yu_lhs(Q, avgs, T):
    """(1/T) Σ_{t=1}^T ‖∇f(x̄^{t−1})‖² (f = the uniform average of the workers' f_k)."""
    return float(np.mean([np.sum(Q.grad(avgs[t]) ** 2) for t in range(T)]))


def yu_bound(*, T, s, L, K, N, sigma, G, Delta):
    """2Δ/(sT) + 4 s² K² G² L² + (L/N) s σ² (the notes' Theorem 1 [Yu et al. AAAI'19])."""
    return 2 * Delta / (s * T) + 4 * s**2 * K**2 * G**2 * L**2 + L / N * s * sigma**2
