"""Plain-numpy replay of the Theorem 4 violation (instance.json), independent of afltheory.

AFA-CS on f_i(x) = x²/2 (d = 1, M = 20 workers, x* = 0), stochastic gradients g = x + ξ, ξ ~ N(0, 1), round
robin with one arrival per round (worker t mod M), no delay, K = 1: the arriving worker's slot gets its
gradient at x_t, then x_{t+1} = x_t − η η_L (1/M) Σ_i slot_i; every slot starts with a gradient at x_0 = x*.

Measured: (1/T) Σ_{t<T} E|∇f(x_t)|² = (1/T) Σ E x_t², (a) exactly by the second-moment recursion of the
linear state z = (x, slot_1..slot_M) and (b) by Monte Carlo. Bound (Theorem 4, σ_G = 0, f(x_0) = f*, K = 1):
α_L σ_L² with α_L = (4/T) Σ_t [5 L² η_L² K + (L/2 + γ (M − m'_t)² L² τ²/M²) · 2γ/(M K̄)], γ = η η_L,
τ = M − 1 (round robin: a slot is at most M − 1 rounds old), m'_t = 1 fresh slot (m'_0 = M).

    python experiments/thm4_violation/replay.py [--replicates 64] [--rounds 20000]
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def exact(M=20, eta=1.0, eta_L=1e-3, T=20000):
    g = eta * eta_L
    n = M + 1
    S = np.zeros((n, n))
    S[np.arange(1, n), np.arange(1, n)] = 1.0  # warm slots: x0 + ξ_j, x0 = 0
    out = np.empty(T)
    for t in range(T):
        out[t] = S[0, 0]
        i = 1 + t % M
        A = np.eye(n)
        A[i, :] = 0.0
        A[i, 0] = 1.0  # slot_i <- x (+ ξ)
        B = np.eye(n)
        B[0, 1:] -= g / M  # x <- x − γ mean(slots)
        b = np.zeros(n)
        b[i] = 1.0
        F = B @ A
        c = B @ b
        S = F @ S @ F.T + np.outer(c, c)
    return out.mean()


def monte_carlo(M=20, eta=1.0, eta_L=1e-3, T=20000, R=64, seed=0):
    rng = np.random.default_rng(seed)
    g = eta * eta_L
    x = np.zeros(R)
    slots = rng.standard_normal((R, M))
    acc = np.zeros(R)
    for t in range(T):
        acc += x * x
        slots[:, t % M] = x + rng.standard_normal(R)
        x = x - g * slots.mean(axis=1)
    per = acc / T
    return per.mean(), per.std(ddof=1) / np.sqrt(R)


def bound(M=20, m=1, eta=1.0, eta_L=1e-3, T=20000, L=1.0, K=1, sigma_L=1.0):
    g = eta * eta_L
    tau = -(-M // m) - 1
    mf = np.full(T, float(m))
    mf[0] = M
    q = ((M - mf) ** 2 / M**2).mean()
    alpha = 4 * (5 * L**2 * eta_L**2 * K + (L / 2) * 2 * g / M + g * q * L**2 * tau**2 * 2 * g / M)
    return alpha * sigma_L**2


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicates", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=20000)
    a = ap.parse_args()
    ex, b = exact(T=a.rounds), bound(T=a.rounds)
    mc, se = monte_carlo(T=a.rounds, R=a.replicates)
    print(
        json.dumps(
            {
                "measured_exact": ex,
                "measured_mc": mc,
                "mc_standard_error": se,
                "bound": b,
                "ratio_exact": ex / b,
                "mc_lcb99_minus_bound": mc - 2.326 * se - b,
            },
            indent=1,
        )
    )
