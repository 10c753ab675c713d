"""Woodworth, Patel, Srebro, "Minibatch vs Local SGD for Heterogeneous Distributed Learning", NeurIPS 2020
(arXiv:2006.04735): the local-SGD upper bound under heterogeneity and the minibatch-SGD baseline (convex).

Paper letters -> symbols: M (machines) -> ``M``; K (local steps per round) -> ``K``; R (rounds) -> ``R``; B
(‖x0 − x*‖) -> sqrt(D0); ζ̄² (sup_x average squared gradient dissimilarity) -> ``zeta_bar``².
"""

from __future__ import annotations

import sympy as sp

from ._statement import Statement
from .symbols import D0, K, L, M, R, sigma, zeta_bar

__all__ = ["LOCAL_SGD", "MINIBATCH_SGD", "STATEMENTS"]

SOURCE = (
    "abstract https://www.sciencestack.ai/paper/2006.04735 (retrieved with the `search` tool, corpus "
    "pages); the bounds from memory"
)
EXCERPT = (
    "Minibatch SGD (even without acceleration) dominates all existing analysis of Local SGD in this setting"
)
_B = sp.sqrt(D0)

LOCAL_SGD = Statement(
    id="woodworth2020.local",
    title="Local SGD, heterogeneous, convex: upper bound",
    reference="Woodworth, Patel, Srebro, NeurIPS 2020, Local SGD upper bound",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="from memory",
    reading="Rate with an absolute constant c: c·(LB²/(KR) + σB/sqrt(MKR) + (Lσ²B⁴)^{1/3}/(K^{1/3}R^{2/3}) + "
    "(Lζ̄²B⁴)^{1/3}/R^{2/3}), averaged iterate, tuned constant step.",
    assumptions={
        "function": "convex",
        "noise": "variance σ²",
        "heterogeneity": "zeta_bar",
        "participation": "full",
    },
    algorithm="local SGD (K steps per round, R rounds)",
    measured="avg_iterate_gap",
    bound={
        "optimisation": L * D0 / (K * R),
        "statistical": sigma * _B / sp.sqrt(M * K * R),
        "noise_drift": (L * sigma**2 * D0**2) ** sp.Rational(1, 3)
        / (K ** sp.Rational(1, 3) * R ** sp.Rational(2, 3)),
        "heterogeneity": (L * zeta_bar**2 * D0**2) ** sp.Rational(1, 3) / R ** sp.Rational(2, 3),
    },
    constants_explicit=False,
)

MINIBATCH_SGD = Statement(
    id="woodworth2020.minibatch",
    title="Minibatch SGD, heterogeneous, convex: upper bound (no ζ term)",
    reference="Woodworth, Patel, Srebro, NeurIPS 2020, Minibatch SGD bound",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="abstract read, statement from memory",
    reading="c·(LB²/R + σB/sqrt(MKR)): independent of the heterogeneity (the abstract's point (i)).",
    assumptions={
        "function": "convex",
        "noise": "variance σ²",
        "heterogeneity": None,
        "participation": "full",
    },
    algorithm="minibatch SGD (one step per round with a K-sample minibatch per machine)",
    measured="avg_iterate_gap",
    bound={"optimisation": L * D0 / R, "statistical": sigma * _B / sp.sqrt(M * K * R)},
    constants_explicit=False,
)

STATEMENTS = (LOCAL_SGD, MINIBATCH_SGD)
