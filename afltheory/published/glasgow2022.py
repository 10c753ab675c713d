"""Glasgow, Yuan, Ma, "Sharp Bounds for Federated Averaging (Local SGD) and Continuous Perspective",
AISTATS 2022 (arXiv:2111.03741): lower bounds for FedAvg, homogeneous and heterogeneous (convex).
"""

from __future__ import annotations

import sympy as sp

from ._paper import Paper
from .symbols import D0, K, L, M, R, sigma, zeta_star

__all__ = ["HETEROGENEOUS_LB", "HOMOGENEOUS_LB", "STATEMENTS"]

SOURCE = (
    "abstract https://ar5iv.labs.arxiv.org/html/2111.03741 and https://virtual.aistats.org/virtual/2022/"
    "poster/3538 (retrieved with the `search` tool, corpus pages); the bound's terms from memory"
)
PAPER = Paper("Glasgow, Yuan, Ma, AISTATS 2022", SOURCE)
_B = sp.sqrt(D0)

HOMOGENEOUS_LB = PAPER.claim(
    "glasgow2022.homogeneous",
    "FedAvg lower bound, homogeneous, convex (matches the upper bound)",
    "homogeneous lower bound",
    excerpt=(
        "we first resolve this question by providing a lower bound for FedAvg that matches the existing "
        "upper bound"
    ),
    confidence="abstract read, statement from memory",
    reading=(
        "For every step size there is a convex L-smooth instance with bounded covariance on which FedAvg's "
        "error is ≥ c·(LB²/(KR) + σB/sqrt(MKR) + min(σB/sqrt(KR), (Lσ²B⁴)^{1/3}/(K^{1/3}R^{2/3}))). A "
        "lower bound: checked, if at all, by exhibiting an instance above it (not an upper-bound verdict)."
    ),
    assumptions_text={
        "function": "convex",
        "noise": "bounded covariance σ²",
        "heterogeneity": None,
        "participation": "full",
    },
    algorithm_text="FedAvg / local SGD with any constant step",
    measured_text="last_gap (worst instance)",
    bound={
        "optimisation": L * D0 / (K * R),
        "statistical": sigma * _B / sp.sqrt(M * K * R),
        "noise_drift": sp.Min(
            sigma * _B / sp.sqrt(K * R),
            (L * sigma**2 * D0**2) ** sp.Rational(1, 3) / (K ** sp.Rational(1, 3) * R ** sp.Rational(2, 3)),
        ),
    },
    constants_explicit=False,
    lower_bound=True,
    why_not_a_claim="a lower bound over EVERY algorithm of a class (min over algorithms, c "
    "hidden) on a hard instance not transcribed (abstract read, statement from memory): running one "
    "algorithm cannot check it",
)

HETEROGENEOUS_LB = PAPER.claim(
    "glasgow2022.heterogeneous",
    "FedAvg lower bound, heterogeneous, convex",
    "heterogeneous lower bound",
    excerpt="we establish a lower bound in a heterogeneous setting that nearly matches the existing "
    "upper bound",
    confidence="from memory",
    reading="The homogeneous bound plus c·min(ζ*B, (Lζ*²B⁴)^{1/3}/R^{2/3}) with ζ*² heterogeneity "
    "at the optimum.",
    assumptions_text={
        "function": "convex",
        "noise": "bounded covariance σ²",
        "heterogeneity": "zeta_star",
        "participation": "full",
    },
    algorithm_text="FedAvg / local SGD with any constant step",
    measured_text="last_gap (worst instance)",
    bound={
        **HOMOGENEOUS_LB.bound,
        "heterogeneity": sp.Min(
            zeta_star * _B, (L * zeta_star**2 * D0**2) ** sp.Rational(1, 3) / R ** sp.Rational(2, 3)
        ),
    },
    constants_explicit=False,
    lower_bound=True,
    why_not_a_claim="a lower bound over every algorithm of a class on a hard instance not "
    "transcribed (from memory, c hidden): running one algorithm cannot check it",
)

STATEMENTS = (HOMOGENEOUS_LB, HETEROGENEOUS_LB)
