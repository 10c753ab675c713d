"""Shared sympy symbols of the AFL theorems [Yang et al. 2022] and the local-SGD theorems [Yu et al. 2019].

All symbols are positive reals except ``tau`` and ``s_stale`` (nonnegative). Per-run averages of the local
step counts are symbols of their own (``Kbar`` harmonic mean, ``Ktil`` arithmetic mean, ``Khat2`` mean of
squares, each already averaged over the T rounds), so a bound is a closed expression in them.
"""

from __future__ import annotations

import sympy as sp

__all__ = [
    "afacd_bound",
    "BY_NAME",
    "CONSTANT_K",
    "Delta",
    "eta",
    "eta_L",
    "f0",
    "f_star",
    "G",
    "K",
    "Kbar",
    "Khat2",
    "Ktil",
    "L",
    "M",
    "m",
    "m_fresh",
    "N",
    "RUN",
    "s",
    "s_stale",
    "sigma",
    "sigma_G",
    "sigma_L",
    "T",
    "tau",
]

L = sp.Symbol("L", positive=True)  # smoothness (Assumption 1)
eta = sp.Symbol("eta", positive=True)  # server learning rate η
eta_L = sp.Symbol("eta_L", positive=True)  # worker learning rate η_L
K = sp.Symbol("K", positive=True)  # local steps (constant, or the worst case K_max)
tau = sp.Symbol("tau", nonnegative=True)  # maximum delay τ
m = sp.Symbol("m", positive=True)  # arrivals per round |M_t|
M = sp.Symbol("M", positive=True)  # total number of workers
m_fresh = sp.Symbol("m'", positive=True)  # fresh memory slots (Theorem 4)
s_stale = sp.Symbol("M_c", nonnegative=True)  # M − m', stale memory slots (used by the corollary algebra)
T = sp.Symbol("T", positive=True)  # rounds
sigma_L = sp.Symbol("sigma_L", nonnegative=True)  # local (stochastic) gradient variance bound
sigma_G = sp.Symbol("sigma_G", nonnegative=True)  # global (heterogeneity) variance bound
f0 = sp.Symbol("f_0", real=True)  # f(x_0)
f_star = sp.Symbol("f_*", real=True)  # inf f (or f(x_T) in Theorem 4)
Delta = sp.Symbol("Delta", nonnegative=True)  # f_0 − f_*
Kbar = sp.Symbol("Kbar", positive=True)  # (1/T Σ_t 1/K̄_t)^{-1}: run-average of the harmonic mean
Ktil = sp.Symbol("Ktilde", positive=True)  # (1/T) Σ_t K̃_t
Khat2 = sp.Symbol("Khat2", positive=True)  # (1/T) Σ_t K̂_t²

# Yu et al. local SGD
s = sp.Symbol("s", positive=True)  # step size
N = sp.Symbol("N", positive=True)  # workers
G = sp.Symbol("G", nonnegative=True)  # second-moment bound E‖∇F‖² ≤ G²
sigma = sp.Symbol("sigma", nonnegative=True)  # stochastic-gradient variance bound

BY_NAME = {
    str(v): v
    for v in (
        L,
        eta,
        eta_L,
        K,
        tau,
        m,
        M,
        m_fresh,
        T,
        sigma_L,
        sigma_G,
        f0,
        f_star,
        Delta,
        Kbar,
        Ktil,
        Khat2,
        s,
        N,
        G,
        sigma,
    )
}
BY_NAME["m_fresh"] = m_fresh
BY_NAME["s_stale"] = s_stale


#: The symbols whose values a run (its schedule, problem constants and step sizes) gives, each per replicate:
#: what a user's bound on (1/T) Σ E‖∇f(x_t)‖² may use (``checks.verify``).
RUN = (T, m, M, tau, K, Kbar, Ktil, Khat2, eta, eta_L, L, sigma_L, sigma_G, f0, f_star, Delta)

#: Constant local steps: the run averages K̄_t, K̃_t, K̂_t² all reduce to K (K² for K̂²).
CONSTANT_K = {Kbar: K, Ktil: K, Khat2: K**2}


def afacd_bound(aL: sp.Expr, aG: sp.Expr) -> sp.Expr:
    """The common right-hand side of Theorems 2 and 3: 4(f_0 − f_*)/(η η_L T) + 4(α_L σ_L² + α_G σ_G²)."""
    return 4 * Delta / (eta * eta_L * T) + 4 * (aL * sigma_L**2 + aG * sigma_G**2)
