"""Woodworth, Patel, Srebro, "Minibatch vs Local SGD for Heterogeneous Distributed Learning", NeurIPS 2020
(arXiv:2006.04735): the local-SGD upper bound under heterogeneity and the minibatch-SGD baseline (convex).

Paper letters -> symbols: M (machines) -> ``M``; K (local steps per round) -> ``K``; R (rounds) -> ``R``; B
(‖x0 − x*‖) -> sqrt(D0); ζ̄² (sup_x average squared gradient dissimilarity) -> ``zeta_bar``².
"""

from __future__ import annotations

import sympy as sp

from ._paper import Paper
from .symbols import D0, K, L, M, R, sigma, zeta_bar

__all__ = ["LOCAL_SGD", "MINIBATCH_SGD", "STATEMENTS"]

SOURCE = (
    "abstract https://www.sciencestack.ai/paper/2006.04735 (retrieved with the `search` tool, corpus "
    "pages); the bounds from memory"
)
PAPER = Paper("Woodworth, Patel, Srebro, NeurIPS 2020", SOURCE)
EXCERPT = (
    "Minibatch SGD (even without acceleration) dominates all existing analysis of Local SGD in this setting"
)
_B = sp.sqrt(D0)

LOCAL_SGD = PAPER.claim(
    "woodworth2020.local",
    "Local SGD, heterogeneous, convex: upper bound",
    "Local SGD upper bound",
    excerpt=EXCERPT,
    confidence="from memory",
    reading="Rate with an absolute constant c: c·(LB²/(KR) + σB/sqrt(MKR) + (Lσ²B⁴)^{1/3}/(K^{1/3}R^{2/3}) + "
    "(Lζ̄²B⁴)^{1/3}/R^{2/3}), averaged iterate, tuned constant step.",
    assumptions_text={
        "function": "convex",
        "noise": "variance σ²",
        "heterogeneity": "zeta_bar",
        "participation": "full",
    },
    algorithm_text="local SGD (K steps per round, R rounds)",
    measured_text="avg_iterate_gap",
    bound={
        "optimisation": L * D0 / (K * R),
        "statistical": sigma * _B / sp.sqrt(M * K * R),
        "noise_drift": (L * sigma**2 * D0**2) ** sp.Rational(1, 3)
        / (K ** sp.Rational(1, 3) * R ** sp.Rational(2, 3)),
        "heterogeneity": (L * zeta_bar**2 * D0**2) ** sp.Rational(1, 3) / R ** sp.Rational(2, 3),
    },
    constants_explicit=False,
    why_not_a_claim="from memory, an absolute constant c hidden: only a rate could be checked, and "
    "not until its text is read",
)

MINIBATCH_SGD = PAPER.claim(
    "woodworth2020.minibatch",
    "Minibatch SGD, heterogeneous, convex: upper bound (no ζ term)",
    "Minibatch SGD bound",
    excerpt=EXCERPT,
    confidence="abstract read, statement from memory",
    reading="c·(LB²/R + σB/sqrt(MKR)): independent of the heterogeneity (the abstract's point (i)).",
    assumptions_text={
        "function": "convex",
        "noise": "variance σ²",
        "heterogeneity": None,
        "participation": "full",
    },
    algorithm_text="minibatch SGD (one step per round with a K-sample minibatch per machine)",
    measured_text="avg_iterate_gap",
    bound={"optimisation": L * D0 / R, "statistical": sigma * _B / sp.sqrt(M * K * R)},
    constants_explicit=False,
    why_not_a_claim="abstract read, statement from memory, constant c hidden: no verdict until "
    "its text is read",
)

STATEMENTS = (LOCAL_SGD, MINIBATCH_SGD)
