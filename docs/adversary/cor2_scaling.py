"""How Corollary 2's missing sampling-variance term scales with L, T, K and m (docs/adversary.md, README).

Instance: HeterogeneousQuadratic(dim=2, num_workers=4, L=L, mu=L, sigma_L=0, sigma_G=1, seed=0) (Hessian L·I),
AFA-CD from x_0 = x*, uniform arrivals of m of M = 4, no delay, constant K, Corollary 2's steps η_L = 1/√T,
η = √(mK); error = (1/T) Σ_{t<T} E‖∇f(x_t)‖².

Part 1 (exact moments, T = 2000): error × √(mKT) for K = 1, 4, 16 and m = 1, 2, 4 — constant if the error were
O(1/√(mKT)). Part 2 (Monte Carlo, R = 64, seed 1, one-sided 99 % t-bounds): error vs Theorem 3's bound on the
realized schedules (Corollary 2's explicit form) for T up to 10⁵, at L = 1 and L = 0.05.

Run: OPENBLAS_NUM_THREADS=1 python docs/adversary/cor2_scaling.py (a few minutes on one core).
"""

import warnings

import numpy as np
from scipy import stats

import afltheory as aft
from afltheory.algorithms import AFACD
from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay, UniformArrivals
from afltheory.exact import moments
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory import theorem3

warnings.simplefilter("ignore")


def problem(L: float) -> HeterogeneousQuadratic:
    return HeterogeneousQuadratic(dim=2, num_workers=4, L=L, mu=L, sigma_L=0.0, sigma_G=1.0, seed=0)


for L in (1.0, 0.05):
    p = problem(L)
    for m in (1, 2, 4):
        row = []
        for K in (1, 4, 16):
            T = 2000
            a = AFACD(float(np.sqrt(m * K)), float(1 / np.sqrt(T)))
            ex = moments(
                p, a, Behaviour(UniformArrivals(m), NoDelay(), ConstantSteps(K)), T, x0=p.constants.x_star
            )
            row.append(float(np.mean(ex.grad_norm_sq[:T])) * np.sqrt(m * K * T))
        print(f"L={L} m={m}/4: error×√(mKT) for K=1,4,16 at T=2000:", [f"{x:.3g}" for x in row])

for L in (1.0, 0.05):
    p = problem(L)
    for T in (2000, 20000, 40000, 60000, 100000):
        a = AFACD(1.0, float(1 / np.sqrt(T)))
        R = 64
        tr = aft.simulate(
            p,
            a,
            Behaviour(UniformArrivals(1), NoDelay(), ConstantSteps(1)),
            rounds=T,
            replicates=R,
            seed=1,
            x0=p.constants.x_star,
        )
        s = tr.grad_norm_sq[:, :T].mean(axis=1)
        h = stats.t.ppf(0.99, R - 1) * s.std(ddof=1) / np.sqrt(R)
        b = float(
            np.mean(
                theorem3.bound(
                    tr.schedule,
                    p.constants,
                    eta=a.eta,
                    eta_L=a.eta_L,
                    f0=p.value(p.constants.x_star),
                    num_workers=4,
                    scope="ignore",
                )
            )
        )
        print(
            f"L={L} T={T}: error {s.mean():.3g} [99% LCB {s.mean() - h:.3g}, UCB {s.mean() + h:.3g}], "
            f"bound {b:.3g}, ratio {s.mean() / b:.2f}, error×√T {s.mean() * np.sqrt(T):.3g}"
        )
