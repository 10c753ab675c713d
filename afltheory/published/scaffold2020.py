"""Karimireddy, Kale, Mohri, Reddi, Stich, Suresh, "SCAFFOLD: Stochastic Controlled Averaging for Federated
Learning", ICML 2020 (arXiv:1910.06378), Theorem III (strongly convex case).

Paper letters -> symbols: N (clients) -> ``M``; S (sampled clients) -> ``m``; K (local steps) -> ``K``; R
(rounds) -> ``R``; η_l, η_g -> ``eta_L``, ``eta_g``; β (smoothness) -> ``L``.
"""

from __future__ import annotations

import sympy as sp

from ._statement import Statement
from .symbols import D0, K, L, M, R, eta_g, eta_L, m, mu, sigma

__all__ = ["STATEMENTS", "THM3"]

THM3 = Statement(
    id="scaffold2020.thm3",
    title="SCAFFOLD, strongly convex, client sampling, global step",
    reference="Karimireddy et al., ICML 2020, Theorem III (μ > 0)",
    source=(
        "abstract https://www.scribd.com/document/536047228/ (arXiv:1910.06378v2 first page) and "
        "https://pdfslide.us/documents/scaffold-stochastic-controlled-averaging-for-federated-scaffold-"
        "stochastic.html (retrieved with the `search` tool, corpus pages); the theorem from memory"
    ),
    excerpt=(
        "We prove that SCAFFOLD requires significantly fewer communication "
        "rounds and is not affected by data heterogeneity or client sampling."
    ),
    confidence="abstract read, statement from memory",
    reading=(
        "Rate statement with constants hidden in Õ(·): E f(x̄_R) − f* ≤ Õ(σ²/(μRKS)(1 + S/η_g²) + "
        "μD̃² exp(−min{S/(30N), μ/(162β)} R)), with η̃ = Kη_lη_g ≤ min(1/(81β), S/(15μN)), η_g ≥ 1, "
        "and D̃² = ‖x0 − x*‖² + (1/(2Nβ²)) Σ‖c_i⁰ − ∇f_i(x*)‖². Checkable content: no heterogeneity "
        "term — with exact gradients (σ = 0) the error decays geometrically at rate ≥ min{S/(30N), "
        "μ/(162β)} per round whatever the heterogeneity (a constant prefactor is allowed)."
    ),
    assumptions={
        "function": "strongly_convex",
        "noise": "variance σ²",
        "heterogeneity": None,
        "participation": "uniform m of M",
    },
    algorithm="SCAFFOLD option II with server step η_g (afltheory: FedAvg(eta=η_g, worker=SCAFFOLD()))",
    measured="last_gap (the paper's x̄_R is a weighted average of past iterates)",
    bound={
        "noise": sigma**2 / (mu * R * K * m) * (1 + m / eta_g**2),
        "transient": mu * D0 * sp.exp(-sp.Min(m / (30 * M), mu / (162 * L)) * R),
    },
    conditions={
        "step": sp.Le(K * eta_L * eta_g, sp.Min(1 / (81 * L), m / (15 * mu * M))),
        "eta_g": sp.Ge(eta_g, 1),
    },
    constants_explicit=False,
)

STATEMENTS = (THM3,)
