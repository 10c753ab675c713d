"""Khaled, Mishchenko, Richtárik, "Tighter Theory for Local SGD on Identical and Heterogeneous Data", AISTATS
2020 (arXiv:1909.04746): the identical-data (strongly convex) and heterogeneous-data (convex) bounds.

Paper letters -> symbols: M (nodes) -> ``M``; H (max steps between synchronisations) -> ``H``; T (total local
steps) -> ``T``; γ (constant step) -> ``eta``.
"""

from __future__ import annotations

import sympy as sp

from ._statement import Statement
from .symbols import D0, H, L, M, T, eta, mu, sigma_dif, sigma_star

__all__ = ["HETEROGENEOUS", "IDENTICAL", "STATEMENTS"]

SOURCE = (
    "abstract https://ar5iv.labs.arxiv.org/html/1909.04746 and PMLR 108:4519-4529 page "
    "(retrieved with the `search` tool, corpus pages); theorem constants from memory"
)
EXCERPT = (
    "The tightness of our results is guaranteed by recovering known "
    "statements when we plug H=1, where H is the number of local steps."
)

IDENTICAL = Statement(
    id="khaled2020.identical",
    title="Local SGD, identical data, strongly convex, constant step",
    reference="Khaled, Mishchenko, Richtárik, AISTATS 2020, identical-data theorem (Sec. 3)",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="abstract read, statement from memory",
    reading=(
        "σ*² = E‖∇f(x*, ξ)‖², the noise AT THE OPTIMUM (not a uniform variance bound). x̄_T "
        "the average of the nodes' iterates after T local steps; constant step γ ≤ 1/(4L)."
    ),
    assumptions={
        "function": "strongly_convex",
        "noise": "variance at the optimum σ*²",
        "heterogeneity": "none (identical data)",
        "participation": "full",
    },
    algorithm="local SGD with constant step γ, synchronisation every ≤ H steps",
    measured="last_dist_sq: E‖x̄_T − x*‖²",
    bound={
        "init": (1 - eta * mu) ** T * D0,
        "noise": eta * sigma_star**2 / (mu * M),
        "drift": 2 * eta**2 * sigma_star**2 * (H - 1) * L / mu,
    },
    conditions={"step": sp.Le(eta, 1 / (4 * L))},
)

HETEROGENEOUS = Statement(
    id="khaled2020.heterogeneous",
    title="Local SGD, heterogeneous data, convex, constant step",
    reference="Khaled, Mishchenko, Richtárik, AISTATS 2020, heterogeneous-data theorem (Sec. 4)",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="from memory",
    reading=(
        "σ_dif² = (1/M) Σ_m E‖∇f_m(x*, ξ_m)‖² (heterogeneity and noise at the optimum together). Output "
        "the average of the virtual averages x̄_t over t = 0..T−1. The drift term's power of (H−1) and the "
        "step condition are from memory and uncertain (read here as (H−1)² and γ ≤ 1/(10L(H−1)) ∧ 1/(4L))."
    ),
    assumptions={
        "function": "convex",
        "noise": "at the optimum",
        "heterogeneity": "zeta_star (with noise)",
        "participation": "full",
    },
    algorithm="local SGD with constant step γ, synchronisation every H steps",
    measured="avg_iterate_gap: E f((1/T) Σ_t x̄_t) − f*",
    bound={
        "init": 4 * D0 / (eta * T),
        "noise": 20 * eta * sigma_dif**2 / M,
        "drift": 16 * eta**2 * L * (H - 1) ** 2 * sigma_dif**2,
    },
    conditions={"step": sp.Le(eta, 1 / (4 * L)), "step_H": sp.Le(10 * eta * L * (H - 1), 1)},
)

STATEMENTS = (IDENTICAL, HETEROGENEOUS)
