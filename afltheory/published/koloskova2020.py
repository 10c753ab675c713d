"""Koloskova, Loizou, Boreiri, Jaggi, Stich, "A Unified Theory of Decentralized SGD with Changing Topology and
Local Updates", ICML 2020 (arXiv:2003.10422): the strongly convex theorem, server special case (complete-graph
averaging every H steps = local SGD / FedAvg with full participation).
"""

from __future__ import annotations

import sympy as sp

from ._paper import Paper
from .symbols import D0, H, L, M, T, mu, sigma_star, zeta_star

__all__ = ["STATEMENTS", "THM_SC"]

PAPER = Paper(
    "Koloskova et al., ICML 2020",
    "abstract https://icml.cc/virtual/2020/poster/6533 (retrieved with the `search` tool, corpus "
    "pages); the rate from memory",
)

THM_SC = PAPER.claim(
    "koloskova2020.sc",
    "Local SGD (server case of decentralized SGD), strongly convex",
    "strongly convex theorem with p = 1, mixing every H steps",
    excerpt=(
        "recover (and improve) the best known complexity results for a host of important "
        "scenarios, such as for instance coorperative SGD and federated averaging (local SGD)."
    ),
    confidence="from memory",
    reading=(
        "Õ(·) rate: E f(x̄_T) − f* ≲ σ̄²/(μ M T) + L H (σ̄² + H ζ̄²)/(μ² T²) + (H L/μ) D0 exp(−μT/(H L)), "
        "with σ̄², ζ̄² measured AT THE OPTIMUM (ζ̄² = (1/M)Σ‖∇f_i(x*)‖²), T total local steps, weighted "
        "averaging of iterates and tuned constant step. Constants hidden: rate-only."
    ),
    assumptions_text={
        "function": "strongly_convex",
        "noise": "at the optimum",
        "heterogeneity": "zeta_star",
        "participation": "full",
    },
    algorithm_text="local SGD / FedAvg, full participation, constant tuned step",
    measured_text="weighted_avg_iterate_gap",
    bound={
        "noise": sigma_star**2 / (mu * M * T),
        "drift": L * H * (sigma_star**2 + H * zeta_star**2) / (mu**2 * T**2),
        "transient": H * L / mu * D0 * sp.exp(-mu * T / (H * L)),
    },
    constants_explicit=False,
    why_not_a_claim="from memory, constants hidden in O(·), a weighted iterate average over a gossip "
    "topology: no verdict until its text is read",
)

STATEMENTS = (THM_SC,)
