"""Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data", ICLR 2020 (arXiv:1907.02189):
Theorems 1 (full participation), 2 (partial, scheme I) and 3 (partial, scheme II).

Paper letters -> symbols: E (local steps per round) -> ``K``; N (devices) -> ``M``; K (sampled devices) ->
``m``; T (total number of local SGD steps, NOT rounds) -> ``T``; w_1 (start) -> x_0.
"""

from __future__ import annotations

import sympy as sp

from ._statement import Statement
from .symbols import D0, G, Gamma, K, L, M, T, gamma, kappa, m, mu, sum_p2_sigma2, t

__all__ = ["ETA_T", "GAMMA", "STATEMENTS", "THM1", "THM2", "THM3"]

SOURCE = (
    "abstract: https://www.arxiv-vanity.com/papers/1907.02189/ and "
    "https://paperswithcode.com/paper/on-the-convergence-of-fedavg-on-non-iid-data/review/ (retrieved with "
    "the `search` tool, corpus pages); theorem statements (Sec. 3.2 Thm 1, Sec. 3.3 Thms 2-3) from memory"
)
EXCERPT = (
    "establish a convergence rate of $\\mathcal{O}(\\frac{1}{T})$ for "
    "strongly convex and smooth problems, where $T$ is the number of SGDs"
)

#: the step size of the t-th local SGD step (t counts local steps across rounds, not rounds)
ETA_T = 2 / (mu * (gamma + t))
#: γ = max{8κ, E}
GAMMA = sp.Max(8 * kappa, K)

_B = sum_p2_sigma2 + 6 * L * Gamma + 8 * (K - 1) ** 2 * G**2
_PREFIX = kappa / (gamma + T - 1)

_READING = (
    "T counts local SGD steps (the abstract: 'T is the number of SGDs'); the step size decays "
    "per local step, η_t = 2/(μ(γ+t)), inside rounds too. Literal indexing: w_1 is the start and "
    "w_T the model after T−1 steps, evaluated at a synchronisation point (T−1 a multiple of E); "
    "the alternative reading (w_0 start, T steps) gives a larger bound, so checking the literal "
    "one is the stricter test. G² bounds E‖∇F_k(w, ξ)‖² for every device along the trajectory (a "
    "global G cannot exist for a strongly convex F_k on R^d): read as the max over the realised "
    "trajectory of the device iterates, E‖∇F_k(w_t^k)‖² + σ_k². Γ = F* − Σ p_k F_k*. σ_k² "
    "per-device variance (the bound uses Σ p_k² σ_k²). F = Σ p_k F_k with p_k the data fractions."
)

_ASSUME = {
    "function": "strongly_convex (each F_k L-smooth, μ-strongly convex)",
    "noise": "variance σ_k² and second moment G²",
    "heterogeneity": "Gamma",
    "weights": "data (p_k)",
}

THM1 = Statement(
    id="li2020.thm1",
    title="FedAvg, non-iid, strongly convex, full participation",
    reference="Li, Huang, Yang, Wang, Zhang, ICLR 2020, Theorem 1",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="abstract read, statement from memory",
    reading=_READING,
    assumptions={**_ASSUME, "participation": "full"},
    algorithm="FedAvg: every device runs E local SGD steps with η_t; server w = Σ_k p_k w^k",
    measured="last_gap: E F(w_T) − F*",
    bound={
        "noise": _PREFIX * 2 * sum_p2_sigma2 / mu,
        "heterogeneity": _PREFIX * 2 * 6 * L * Gamma / mu,
        "drift": _PREFIX * 2 * 8 * (K - 1) ** 2 * G**2 / mu,
        "init": _PREFIX * mu * gamma / 2 * D0,
    },
    conditions={"gamma": sp.Ge(gamma, GAMMA), "kappa": sp.Eq(kappa, L / mu)},
    definitions={"B": _B, "eta_t": ETA_T, "gamma": GAMMA},
    notes="B = Σ p_k²σ_k² + 6LΓ + 8(E−1)²G²; bound = κ/(γ+T−1) (2B/μ + μγ/2 ‖w_1 − w*‖²).",
)

_C1 = 4 * K**2 * G**2 / m
THM2 = Statement(
    id="li2020.thm2",
    title="FedAvg, non-iid, strongly convex, partial participation (scheme I)",
    reference="Li, Huang, Yang, Wang, Zhang, ICLR 2020, Theorem 2",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="abstract read, statement from memory",
    reading=_READING
    + (
        " Scheme I: each round K devices are drawn WITH replacement with probabilities p_k and the server "
        "takes their simple average."
    ),
    assumptions={**_ASSUME, "participation": "sampled with replacement by p_k (scheme I)"},
    algorithm="FedAvg, scheme I sampling, simple average of the sampled devices' models",
    measured="last_gap: E F(w_T) − F*",
    bound={**THM1.bound, "sampling": _PREFIX * 2 * _C1 / mu},
    conditions=THM1.conditions,
    definitions={**THM1.definitions, "C": _C1},
    notes="Theorem 1 with B replaced by B + C, C = 4E²G²/K.",
)

_C2 = (M - m) / (M - 1) * 4 * K**2 * G**2 / m
THM3 = Statement(
    id="li2020.thm3",
    title="FedAvg, non-iid, strongly convex, partial participation (scheme II)",
    reference="Li, Huang, Yang, Wang, Zhang, ICLR 2020, Theorem 3",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="abstract read, statement from memory",
    reading=_READING
    + (
        " Scheme II: K devices drawn uniformly WITHOUT replacement, server w = Σ_{k∈S} p_k (N/K) w^k; the "
        "theorem assumes balanced data p_k = 1/N (then the aggregate is the simple average)."
    ),
    assumptions={**_ASSUME, "participation": "uniform without replacement (scheme II), p_k = 1/N"},
    algorithm="FedAvg, scheme II sampling, aggregate Σ_{k∈S} p_k N/K w^k",
    measured="last_gap: E F(w_T) − F*",
    bound={**THM1.bound, "sampling": _PREFIX * 2 * _C2 / mu},
    conditions=THM1.conditions,
    definitions={**THM1.definitions, "C": _C2},
    notes="Theorem 1 with B replaced by B + C, C = (N−K)/(N−1) · 4E²G²/K.",
)

STATEMENTS = (THM1, THM2, THM3)
