"""Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data", ICLR 2020 (arXiv:1907.02189):
Theorems 1 (full participation), 2 (partial, scheme I) and 3 (partial, scheme II).

Paper letters -> symbols: E (local steps per round) -> ``K``; N (devices) -> ``M``; K (sampled devices) ->
``m``; T (total number of local SGD steps, NOT rounds) -> ``T``; w_1 (start) -> x_0.
"""

from __future__ import annotations

import sympy as sp

from ._statement import Location, Statement, Transcription
from .symbols import D0, G, Gamma, K, L, M, T, gamma, kappa, m, mu, sum_p2_sigma2, t

__all__ = ["ETA_T", "GAMMA", "STATEMENTS", "THM1", "THM2", "THM3", "THM4"]

#: the main text, a converted markdown copy (the same file also holds Khaled et al.'s workshop paper)
_INDEX_ID = "785123747"
_FOUND_BY = "\\frac{\\kappa}{\\gamma+T-1}"
SOURCE = (
    "main text, index id 785123747 (a converted markdown copy): Sec. 3.1 Assumptions 1-4, Sec. 3.2 "
    "Theorem 1, eqs. 4-5, Sec. 3.3 Assumptions 5-6 and Theorems 2-3, eq. 6"
)
EXCERPT = None
LOC1 = Location(_INDEX_ID, 15500, "Theorem 1 (eqs. 4-5)", _FOUND_BY, section="Sec. 3.2")
LOC2 = Location(_INDEX_ID, 15500, "Theorem 2 (eq. 6), Assumption 5", _FOUND_BY, section="Sec. 3.3")
LOC3 = Location(_INDEX_ID, 15500, "Theorem 3, Assumption 6", _FOUND_BY, section="Sec. 3.3")

#: the named readings (one line per ambiguity of the text)
READINGS = {
    "li.T_counts_steps": "T counts local SGD steps (Sec. 3.2: FedAvg 'terminates after T iterations'), "
    "η_t decays per local step",
    "li.indexing_w1": "the text starts at w_1 and requires T divisible by E; the package reads w_1 as the "
    "start and w_T as the model after T−1 steps at a synchronisation point (T−1 a multiple of E) — the "
    "alternative (w_0 start, T steps) gives a larger bound, so the package's reading is the stricter test",
    "li.G_along_trajectory": "Assumption 4 bounds E‖∇F_k(w_t^k, ξ)‖² ≤ G² for t = 1..T−1 along the run (not "
    "globally: no global G exists for strongly convex F_k); the engine form gives G the value σ_L, a lower "
    "bound of the true second moment (conservative)",
    "li.p_k_weights": "F = Σ p_k F_k with p_k the data fractions; B carries Σ p_k² σ_k²",
}
_LATEX_SYMBOLS = {
    "kappa": kappa,
    "gamma": gamma,
    "T": T,
    "mu": mu,
    "D": D0,
    "L": L,
    "Gamma": Gamma,
    "E": K,
    "G": G,
    "V": sum_p2_sigma2,
    "K": m,
    "N": M,
}
_NORMALISE = (
    "E‖w_1 − w*‖² written D; Σ_k p_k² σ_k² written V; E (local steps) kept as E; K (sampled "
    "devices) and N (devices) kept"
)
_ASSUME_TEX = {
    "A1": "F_k \\text{ is } L\\text{-smooth}",
    "A2": "F_k \\text{ is } \\mu\\text{-strongly convex}",
    "A3": "\\mathbb{E}\\|\\nabla F_k(w_t^k,\\xi_t^k)-\\nabla F_k(w_t^k)\\|^2 \\le \\sigma_k^2",
    "A4": "\\mathbb{E}\\|\\nabla F_k(w_t^k,\\xi_t^k)\\|^2 \\le G^2,\\ t=1,\\dots,T-1",
    "Gamma": "\\Gamma = F^* - \\sum_{k=1}^N p_k F_k^*",
}
_COND_TEX = {
    "kappa": "\\kappa = \\frac{L}{\\mu}",
    "gamma": "\\gamma = \\max\\{8\\kappa, E\\}",
    "eta_t": "\\eta_t = \\frac{2}{\\mu(\\gamma+t)}",
    "T": "E \\mid T",
}
_B_TEX = "V + 6 L \\Gamma + 8 (E-1)^{2} G^{2}"
LATEX1 = Transcription(
    bound="\\frac{\\kappa}{\\gamma+T-1}\\left(\\frac{2 B}{\\mu}+\\frac{\\mu \\gamma}{2} D\\right)",
    symbols=_LATEX_SYMBOLS,
    definitions={"B": _B_TEX},
    conditions=_COND_TEX,
    assumptions=_ASSUME_TEX,
    normalisations=_NORMALISE,
)
_BC_BOUND = "\\frac{\\kappa}{\\gamma+T-1}\\left(\\frac{2 (B+C)}{\\mu}+\\frac{\\mu \\gamma}{2} D\\right)"
LATEX2 = Transcription(
    bound=_BC_BOUND,
    symbols=_LATEX_SYMBOLS,
    definitions={"B": _B_TEX, "C": "\\frac{4}{K} E^{2} G^{2}"},
    conditions=_COND_TEX,
    assumptions={
        **_ASSUME_TEX,
        "A5": "S_t: K \\text{ indices with replacement by } p_k;\\ w_t = \\frac{1}{K}\\sum_{k\\in S_t} w_t^k",
    },
    normalisations=_NORMALISE,
)
LATEX3 = Transcription(
    bound=_BC_BOUND,
    symbols=_LATEX_SYMBOLS,
    definitions={"B": _B_TEX, "C": "\\frac{N-K}{N-1} \\frac{4}{K} E^{2} G^{2}"},
    conditions=_COND_TEX,
    assumptions={
        **_ASSUME_TEX,
        "A6": "S_t: K \\text{ of } [N] \\text{ uniformly without replacement}, "
        "p_k = \\frac{1}{N};\\ w_t = \\frac{N}{K}\\sum_{k\\in S_t} p_k w_t^k",
    },
    normalisations=_NORMALISE,
)

#: the step size of the t-th local SGD step (t counts local steps across rounds, not rounds)
ETA_T = 2 / (mu * (gamma + t))
#: γ = max{8κ, E}
GAMMA = sp.Max(8 * kappa, K)

_B = sum_p2_sigma2 + 6 * L * Gamma + 8 * (K - 1) ** 2 * G**2
_PREFIX = kappa / (gamma + T - 1)

_READING = (
    "T counts local SGD steps (Sec. 3.2: T iterations, T divisible by E); the step size decays "
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
    confidence="read",
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
    location=LOC1,
    latex=LATEX1,
    readings=READINGS,
)

_C1 = 4 * K**2 * G**2 / m
THM2 = Statement(
    id="li2020.thm2",
    title="FedAvg, non-iid, strongly convex, partial participation (scheme I)",
    reference="Li, Huang, Yang, Wang, Zhang, ICLR 2020, Theorem 2",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="read",
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
    location=LOC2,
    latex=LATEX2,
    readings=READINGS,
)

_C2 = (M - m) / (M - 1) * 4 * K**2 * G**2 / m
THM3 = Statement(
    id="li2020.thm3",
    title="FedAvg, non-iid, strongly convex, partial participation (scheme II)",
    reference="Li, Huang, Yang, Wang, Zhang, ICLR 2020, Theorem 3",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="read",
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
    location=LOC3,
    latex=LATEX3,
    readings={
        **READINGS,
        "li.scheme2_balanced": "Theorem 3 assumes p_k = 1/N (the text's transformation "
        "F̃_k = p_k N F_k for unbalanced data is not checked)",
    },
)

_eta = sp.Symbol("eta", positive=True)  # the constant step size of Theorem 4
_wstar = sp.Symbol("w_star_norm", nonnegative=True)  # ‖w*‖₂
THM4 = Statement(
    id="li2020.thm4",
    title="FedAvg with E > 1 and a fixed step converges to a sub-optimal point (lower bound)",
    reference="Li, Huang, Yang, Wang, Zhang, ICLR 2020, Theorem 4",
    source=SOURCE.replace("Sec. 3.1 Assumptions 1-4", "Sec. 4 Theorem 4; Sec. 3.1 Assumptions 1-4"),
    excerpt=None,
    confidence="read",
    location=Location(_INDEX_ID, 15500, "Theorem 4", _FOUND_BY, section="Sec. 4"),
    readings={
        "li.thm4_constructed": "the lower bound holds for ONE constructed ridge-regression problem (full "
        "batch, E > 1, small enough constant η), with problem-dependent constants hidden in Ω(·)",
    },
    reading="On a constructed strongly convex, smooth problem, FedAvg with full gradients, E > 1 and a small "
    "enough constant η converges to w̃* with ‖w̃* − w*‖₂ = Ω((E − 1)η)·‖w*‖₂.",
    assumptions={
        "function": "strongly_convex (a constructed ridge regression)",
        "noise": "none (full batch)",
        "heterogeneity": "non-iid (constructed)",
        "participation": "full",
    },
    algorithm="FedAvg, E > 1 local full-gradient steps, constant step η",
    measured="limit_dist: ‖lim_t w_t − w*‖₂",
    bound={"bias": (K - 1) * _eta * _wstar},
    constants_explicit=False,
    lower_bound=True,
    why_not_a_claim="lower bound on one constructed problem (Ω(·), constants hidden): an upper-bound verdict "
    "does not apply",
    latex=Transcription(
        bound=r"(E-1) \eta W",
        symbols={"E": K, "eta": _eta, "W": _wstar},
        normalisations="‖w*‖₂ written W; Ω(·) dropped",
    ),
)

STATEMENTS = (THM1, THM2, THM3, THM4)
