"""Symbols of the published theorems (issue 26), defined in ONE place.

The shared symbols come from ``afltheory.theory.symbols`` (L, η, η_L, K, τ, m, M, T, σ_L, σ_G, G, Δ, …) and
``afltheory.claims.symbols`` (μ, κ, Γ, ζ*, D0, Σp_k², t); the ones defined below are new.

Mapping of each paper's own letters to these symbols is stated in the paper's module (e.g. Li et al. 2020
write E for the local steps — here ``K`` — N for the devices — ``M`` — and K for the sampled devices — ``m``).
"""

from __future__ import annotations

import sympy as sp

from ..claims.symbols import D0, Gamma, kappa, mu, sum_p2, t, zeta_star
from ..theory.symbols import Delta, G, K, L, M, T, eta, eta_L, m, sigma, sigma_G, sigma_L, tau  # noqa: F401

__all__ = [
    "B_dis",
    "D0",
    "G",
    "Gamma",
    "H",
    "K",
    "L",
    "M",
    "R",
    "S_T",
    "T",
    "Delta",
    "a_shift",
    "eta",
    "eta_L",
    "eta_g",
    "gamma",
    "gamma_inexact",
    "kappa",
    "m",
    "mu",
    "mu_prox",
    "sigma",
    "sigma_G",
    "sigma_L",
    "sigma_dif",
    "sigma_star",
    "sum_p2",
    "sum_p2_sigma2",
    "t",
    "tau",
    "tau_bar",
    "zeta_bar",
    "zeta_star",
]

zeta_bar = sp.Symbol("zeta_bar", nonnegative=True)  # sup_x sqrt((1/M) Σ ‖∇f_k(x) − ∇f(x)‖²)
sum_p2_sigma2 = sp.Symbol("sum_p2_sigma2", nonnegative=True)  # Σ p_k² σ_k²
gamma = sp.Symbol("gamma", positive=True)  # step-size shift γ in η_t = 2/(μ(γ+t)) (Li et al.)
a_shift = sp.Symbol("a", positive=True)  # step-size shift a in η_t = 4/(μ(a+t)) (Stich 2019)
H = sp.Symbol("H", positive=True)  # synchronisation interval (local SGD papers)
R = sp.Symbol("R", positive=True)  # communication rounds (when T counts local steps)
S_T = sp.Symbol("S_T", positive=True)  # Σ_t w_t, Stich's weight normaliser
eta_g = sp.Symbol("eta_g", positive=True)  # server (global) learning rate (SCAFFOLD)
sigma_star = sp.Symbol("sigma_star", nonnegative=True)  # noise at the optimum: E‖∇f(x*, ξ)‖² = σ*²
sigma_dif = sp.Symbol("sigma_dif", nonnegative=True)  # (1/M) Σ E‖∇f_m(x*, ξ_m)‖² (its square root; KMR)
B_dis = sp.Symbol("B", positive=True)  # B-local dissimilarity (FedProx)
gamma_inexact = sp.Symbol("gamma_inexact", nonnegative=True)  # γ-inexact local solver (FedProx)
mu_prox = sp.Symbol("mu_prox", positive=True)  # FedProx proximal weight μ
tau_bar = sp.Symbol("tau_bar", positive=True)  # mean local steps (FedNova's τ̄)
