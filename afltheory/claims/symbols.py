"""The open, documented symbol set of a claim's bound and conditions (``SYMBOLS``).

A bound is one sympy expression (or a dict of named terms) over these symbols plus the claim's own symbols
(``Claim.values``: numbers or expressions in the symbols below, e.g. Li et al.'s γ = max(8κ, E)). Each is
evaluated per replicate on the realized schedule of a run (``verify``) or on expected schedule statistics
(the adversary) — from the same expression.

==========  ==============================================================================================
symbol      value
==========  ==============================================================================================
T           rounds (server steps) of the run
t           the round index (step-size schedules only)
s           the global local-step counter s = tE + k (a step size decaying per local step: Li et al. 2020's
            iteration index at E > 1; ``afltheory.algorithms.schedules``)
m, M        arrivals per round, number of workers
tau         the largest realized delay (per replicate)
K           the largest realized number of local steps (per replicate); ``E`` is a synonym
Kbar        (1/T Σ_t 1/K̄_t)⁻¹, K̄_t the harmonic mean of K over round t's arrivals
Ktilde      (1/T) Σ_t K̃_t, K̃_t the mean;   Khat2: (1/T) Σ_t K̂_t², K̂_t² the mean square
eta, eta_L  the server and local step sizes (a schedule: its value at t = 0)
L, mu       the problem's certified smoothness and strong-convexity constants; kappa = L/mu
sigma_L     local gradient noise: E‖∇F_i(x, ξ) − ∇f_i(x)‖² ≤ σ_L² (the problem's certified value)
sigma_G     heterogeneity, max reading: max_i sup_x ‖∇f_i(x) − ∇f(x)‖ ≤ σ_G (the problem's certified value)
            ``sigma_G_mean``: the mean reading, σ_G,mean² = sup_x (1/M) Σ_i ‖∇f_i(x) − ∇f(x)‖² — certified
            where ∇f_i − ∇f does not depend on x (quadratics with one shared Hessian: computed exactly);
            elsewhere a claim using it must give its value
G           bounded second moment E‖∇F_i(x, ξ)‖² ≤ G²: certified where the family allows it (a quadratic
            with a certified ball ‖x − x*‖ ≤ r: G² = σ_L² + max_i (‖∇f_i(x*)‖ + ‖A_i‖₂ r)²,
            ``_values.certified_G``); else, when the claim gives no value, ``verify`` ESTIMATES it on the
            realized trajectory (σ_L² + max_t,i ‖∇f_i(x_t)‖², ``_values.estimate_G``) and says so in the notes
Gamma       Γ = f* − Σ_k p_k f_k* (Li et al. 2020), computed from the problem's local minima
zeta_star   ζ* with ζ*² = Σ_k p_k ‖∇f_k(x*)‖² (heterogeneity at the optimum)
f_0, f_*    f(x_0), f* = min f;  Delta = f_0 − f_*;  D0 = ‖x_0 − x*‖²
sum_p2      Σ_k p_k² (client weights p: the problem's ``weights``, uniform 1/M when None)
==========  ==============================================================================================
"""

from __future__ import annotations

import sympy as sp

from ..algorithms.schedules import s, t
from ..theory import symbols as S

__all__ = ["D0", "E", "G", "Gamma", "SYMBOLS", "kappa", "mu", "s", "sigma_G_mean", "sum_p2", "t", "zeta_star"]

mu = sp.Symbol("mu", positive=True)  # strong convexity
kappa = sp.Symbol("kappa", positive=True)  # L/μ
G = S.G  # second-moment bound (Yu et al. symbol)
Gamma = sp.Symbol("Gamma", nonnegative=True)  # f* − Σ p_k f_k*
zeta_star = sp.Symbol("zeta_star", nonnegative=True)  # ζ*
D0 = sp.Symbol("D0", nonnegative=True)  # ‖x_0 − x*‖²
sum_p2 = sp.Symbol("sum_p2", positive=True)  # Σ p_k²
E = sp.Symbol("E", positive=True)  # local steps (Li et al.'s name for K)
sigma_G_mean = sp.Symbol("sigma_G_mean", nonnegative=True)  # σ_G, mean-over-workers reading

#: name -> symbol: every symbol a claim may use without giving its value
SYMBOLS: dict[str, sp.Symbol] = {
    str(s): s
    for s in (
        S.T,
        t,
        S.m,
        S.M,
        S.tau,
        S.K,
        E,
        S.Kbar,
        S.Ktil,
        S.Khat2,
        S.eta,
        S.eta_L,
        S.L,
        mu,
        kappa,
        S.sigma_L,
        S.sigma_G,
        sigma_G_mean,
        G,
        Gamma,
        zeta_star,
        S.f0,
        S.f_star,
        S.Delta,
        D0,
        sum_p2,
        s,
    )
}
