"""Problem instances and adversarial arrival processes shared by the bound checks."""

from __future__ import annotations

import numpy as np

from afltheory.anarchy import BiasedArrivals
from afltheory.problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic, NonconvexSinusoidal


def families(sigma_L=0.5, sigma_G=1.0, dim=5, M=10, seed=1):
    """The three families with L = 1 (shared-Hessian and heterogeneous-curvature quadratics, nonconvex)."""
    return {
        "quadratic": HeterogeneousQuadratic(
            dim=dim, num_workers=M, L=1.0, mu=0.1, sigma_L=sigma_L, sigma_G=sigma_G, seed=seed
        ),
        "curvature": HeterogeneousCurvatureQuadratic(
            dim=dim, num_workers=M, L=1.0, mu=0.1, sigma_L=sigma_L, sigma_G=sigma_G, seed=seed
        ),
        "nonconvex": NonconvexSinusoidal(
            dim=dim, num_workers=M, L=1.0, mu=-0.5, sigma_L=sigma_L, sigma_G=sigma_G, seed=seed
        ),
    }


def adversarial_pair(problem):
    """The worker pair (i, j) maximizing ‖∇f_i(x*) + ∇f_j(x*)‖: if they (almost) alone arrive, AFA-CD settles
    where their average gradient vanishes, far from x* — the σ_G² floor of Theorem 2 is then large."""
    xs = problem.constants.x_star
    g = problem.local_grad(
        np.broadcast_to(xs, (problem.num_workers, problem.dim)), np.arange(problem.num_workers)
    )
    best, pair = -1.0, (0, 1)
    for i in range(problem.num_workers):
        for j in range(i + 1, problem.num_workers):
            v = float(np.linalg.norm(g[i] + g[j]))
            if v > best:
                best, pair = v, (i, j)
    return pair


def concentrated_arrivals(problem, m=2, mass=0.98):
    """Biased arrivals (without replacement) with probability ``mass`` on the adversarial pair."""
    i, j = adversarial_pair(problem)
    M = problem.num_workers
    p = np.full(M, (1 - mass) / (M - 2))
    p[[i, j]] = mass / 2
    return BiasedArrivals(m, p)
