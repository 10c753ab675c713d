"""Stich, "Local SGD Converges Fast and Communicates Little", ICLR 2019 (arXiv:1805.09767), Theorem 2.2.

Paper letters -> symbols: K (workers) -> ``M``; H (max gap between synchronisations) -> ``H``; T (total local
SGD steps per worker) -> ``T``; a (step-size shift) -> ``a_shift``.
"""

from __future__ import annotations

import sympy as sp

from ._statement import Statement
from .symbols import D0, S_T, G, H, L, M, T, a_shift, kappa, mu, sigma, t

__all__ = ["ETA_T", "STATEMENTS", "THM22", "WEIGHT_T"]

ETA_T = 4 / (mu * (a_shift + t))
WEIGHT_T = (a_shift + t) ** 2

THM22 = Statement(
    id="stich2019.thm2.2",
    title="Local SGD, identical data, strongly convex, decreasing steps",
    reference="Stich, ICLR 2019, Theorem 2.2",
    source=(
        "abstract (LaTeX) https://latex-in-arxiv.com/print?f=eceb1875f846f08b.tex (retrieved with the "
        "`search` tool, corpus pages); the theorem's constants from memory"
    ),
    excerpt=(
        "The number of communication rounds can be reduced up to a factor "
        "of $T^{1/2}$---where $T$ denotes the number of total steps"
    ),
    confidence="abstract read, statement from memory",
    reading=(
        "T counts local SGD steps per worker; η_t = 4/(μ(a+t)), t = 0..T−1, decays per "
        "local step; output x̂_T = (1/S_T) Σ_{t=0}^{T−1} w_t x̄_t with w_t = (a+t)² and "
        "x̄_t the (virtual) average of the workers' iterates, S_T = Σ w_t. G² bounds "
        "E‖∇f(x_t^k, ξ)‖² along the trajectory (read as the realised max); σ² the variance "
        "of one stochastic gradient. Identical data: every worker samples the same f."
    ),
    assumptions={
        "function": "strongly_convex",
        "noise": "variance σ² and second moment G²",
        "heterogeneity": "none (identical data)",
        "participation": "full",
        "weights": None,
    },
    algorithm="local SGD: M workers, η_t, average the iterates every ≤ H steps",
    measured="weighted_avg_iterate_gap: E f(x̂_T) − f*",
    bound={
        "init": mu * a_shift**3 / (2 * S_T) * D0,
        "noise": 4 * T * (T + 2 * a_shift) / (mu * M * S_T) * sigma**2,
        "drift": 256 * T / (mu**2 * S_T) * G**2 * H**2 * L,
    },
    conditions={"a": sp.Ge(a_shift, sp.Max(16 * kappa, H)), "kappa": sp.Eq(kappa, L / mu)},
    definitions={"eta_t": ETA_T, "w_t": WEIGHT_T, "S_T": sp.Sum(WEIGHT_T, (t, 0, T - 1))},
    notes="S_T ≥ T³/3. Condition read as a ≥ max(16κ, H) (the paper: a > 16κ and a ≥ H, from memory).",
)

STATEMENTS = (THM22,)
