"""Karimireddy, Kale, Mohri, Reddi, Stich, Suresh, "SCAFFOLD: Stochastic Controlled Averaging for Federated
Learning", ICML 2020 (arXiv:1910.06378): Theorem III (SCAFFOLD) and Theorem I (FedAvg) as printed in the
main text — ROUND COUNTS R = Õ(·) to reach expected error ε "for some values of η_l and η_g"; the step
sizes and constants are in the appendix, which was not read.

Paper letters -> symbols: N (clients) -> ``M``; S (sampled clients) -> ``m``; K (local steps) -> ``K``; R
(rounds) -> ``R``; β (smoothness) -> ``L``; ε (target error) -> ``eps``; D := ‖x⁰ − x*‖² -> ``D0``;
F := f(x⁰) − f* -> ``Delta``; G, B of (A1) -> ``G``, ``B_dis``; δ of (A2) -> ``delta``.

The explicit formula the package's SCAFFOLD check runs (η̃ = Kη_lη_g ≤ min(1/(81β), S/(15μN)),
μD̃² exp(−min{S/(30N), μ/(162β)} R)) is NOT printed in the main text: it is the package's own (from
memory, appendix-level at best), stated in ``PACKAGE_FORM`` and never the basis of a finding.
"""

from __future__ import annotations

import sympy as sp

from ._statement import Location, Statement, Transcription
from .symbols import D0, B_dis, Delta, G, K, L, M, m, mu, sigma

__all__ = [
    "PACKAGE_FORM",
    "STATEMENTS",
    "THM1_FEDAVG",
    "THM1_FEDAVG_CONVEX",
    "THM1_FEDAVG_NONCONVEX",
    "THM2_LOWER",
    "THM3",
    "THM3_CONVEX",
    "THM3_NONCONVEX",
    "THM4",
]

eps = sp.Symbol("epsilon", positive=True)  # target expected error ε
delta = sp.Symbol("delta", nonnegative=True)  # δ-bounded Hessian dissimilarity (A2)

_INDEX_ID = "54748797492"
_FOUND_BY = "Karimireddy 1 2 Satyen Kale 3"
SOURCE = (
    "main text, index id 54748797492 (a converted markdown copy): Sec. 3.1 Theorem I, Sec. 5 Theorem III, "
    "Sec. 6 Theorem IV, Algorithm 1; the appendix (explicit step sizes and constants) not read"
)
_LOC3 = Location(_INDEX_ID, 16000, "Theorem III", _FOUND_BY, section="Sec. 5")
_LOC1 = Location(_INDEX_ID, 16000, "Theorem I", _FOUND_BY, section="Sec. 3.1")
_LOC4 = Location(_INDEX_ID, 16000, "Theorem IV", _FOUND_BY, section="Sec. 6")

READINGS = {
    "scaffold.round_count": "the statement is a number of rounds R = Õ(·) (resp. O(·)) after which the "
    "expected error is ≤ ε, for SOME step sizes η_l, η_g given in the appendix: no explicit bound on the "
    "error after R rounds is printed",
    "scaffold.output": "'the output of SCAFFOLD': which iterate (last or a weighted average) is fixed in the "
    "appendix, not in the main text",
    "scaffold.D_squared": "D := ‖x⁰ − x*‖² (the text's definition; D² in the convex rate is then ‖·‖⁴ "
    "literally — read as the usual ‖x⁰ − x*‖², a typographical ambiguity)",
}

_SYM = {
    "sigma": sigma,
    "mu": mu,
    "K": K,
    "S": m,
    "epsilon": eps,
    "beta": L,
    "N": M,
    "D": sp.sqrt(D0),
    "F": Delta,
    "G": G,
    "B": B_dis,
    "delta": delta,
}
_NORM = "none beyond the symbol map (the printed formulas parse as they are, Õ(·)/O(·) dropped)"


def _thm(id_, title, ref, loc, assumptions, measured, bound, tex, readings=READINGS, **kw):
    return Statement(
        id=id_,
        title=title,
        reference=f"Karimireddy et al., ICML 2020, {ref}",
        source=SOURCE,
        excerpt=None,
        confidence="read",
        reading="Round count R to reach expected error ε, constants and log factors hidden; "
        + readings["scaffold.round_count"],
        assumptions=assumptions,
        algorithm=kw.pop("algorithm", "SCAFFOLD (Algorithm 1), local step η_l, global step η_g"),
        measured=measured,
        bound=bound,
        constants_explicit=False,
        location=loc,
        latex=Transcription(bound=tex, symbols=_SYM, normalisations=_NORM),
        readings=readings,
        why_not_a_claim="a round count with constants and step sizes hidden (Õ/O, 'for some' η_l, η_g)",
        **kw,
    )


_SC = {
    "function": "strongly_convex (β-smooth f_i, μ-strongly convex f)",
    "noise": "variance σ²",
    "heterogeneity": None,
    "participation": "uniform S of N",
}

THM3 = _thm(
    "scaffold2020.thm3",
    "SCAFFOLD, strongly convex, client sampling: rounds R = Õ(σ²/(μKSε) + β/μ + N/S)",
    "Theorem III (μ > 0)",
    _LOC3,
    _SC,
    "rounds_to_eps: R with E f(output) − f* ≤ ε",
    {"noise": sigma**2 / (mu * K * m * eps), "conditioning": L / mu, "sampling": M / m},
    r"\frac{\sigma^{2}}{\mu K S \epsilon}+\frac{\beta}{\mu}+\frac{N}{S}",
    notes="No heterogeneity term: the rounds do not depend on G or B (the checkable content).",
)
THM3_CONVEX = _thm(
    "scaffold2020.thm3_convex",
    "SCAFFOLD, general convex: rounds R = Õ(σ²D²/(KSε²) + βD²/ε + NF/S)",
    "Theorem III (general convex)",
    _LOC3,
    {**_SC, "function": "convex (β-smooth)"},
    "rounds_to_eps: R with E f(output) − f* ≤ ε",
    {"noise": sigma**2 * D0 / (K * m * eps**2), "smooth": L * D0 / eps, "sampling": M * Delta / m},
    r"\frac{\sigma^{2} D^{2}}{K S \epsilon^{2}}+\frac{\beta D^{2}}{\epsilon}+\frac{N F}{S}",
)
THM3_NONCONVEX = _thm(
    "scaffold2020.thm3_nonconvex",
    "SCAFFOLD, nonconvex: rounds R = O(βσ²F/(KSε²) + (N/S)^{2/3} βF/ε)",
    "Theorem III (non-convex)",
    _LOC3,
    {**_SC, "function": "smooth (β-smooth, nonconvex)"},
    "rounds_to_eps: R with E‖∇f(output)‖² ≤ ε",
    {
        "noise": L * sigma**2 * Delta / (K * m * eps**2),
        "sampling": (M / m) ** sp.Rational(2, 3) * L * Delta / eps,
    },
    r"\frac{\beta \sigma^{2} F}{K S \epsilon^{2}}"
    r"+\left(\frac{N}{S}\right)^{\frac{2}{3}} \frac{\beta F}{\epsilon}",
)
THM1_FEDAVG = _thm(
    "scaffold2020.thm1_fedavg",
    "FedAvg, strongly convex, (G, B)-dissimilarity: rounds R = Õ(σ²/(μKSε) + (1−S/N)G²/(μSε) + √β G/(μ√ε) "
    "+ B²β/μ)",
    "Theorem I (μ strongly convex)",
    _LOC1,
    {**_SC, "heterogeneity": "(G, B)-bounded gradient dissimilarity (A1)"},
    "rounds_to_eps: R with E f(output) − f* ≤ ε",
    {
        "noise": sigma**2 / (mu * K * m * eps),
        "sampling": (1 - m / M) * G**2 / (mu * m * eps),
        "drift": sp.sqrt(L) * G / (mu * sp.sqrt(eps)),
        "dissimilarity": B_dis**2 * L / mu,
    },
    r"\frac{\sigma^{2}}{\mu K S \epsilon}+\left(1-\frac{S}{N}\right) \frac{G^{2}}{\mu S \epsilon}"
    r"+\frac{\sqrt{\beta} G}{\mu \sqrt{\epsilon}}+\frac{B^{2} \beta}{\mu}",
    algorithm="FedAvg with local step η_l and global step η_g",
)
THM4 = _thm(
    "scaffold2020.thm4",
    "SCAFFOLD on δ-similar quadratics, strongly convex, S = N, η_g = 1: rounds R = Õ(βσ²/(μKNε) + "
    "(β+δK)/(μK))",
    "Theorem IV (strongly convex)",
    _LOC4,
    {
        **_SC,
        "function": "quadratic, strongly convex",
        "heterogeneity": "δ-bounded Hessian dissimilarity (A2)",
        "participation": "full",
    },
    "rounds_to_eps: R with E f(output) − f* ≤ ε",
    {"noise": L * sigma**2 / (mu * K * M * eps), "similarity": (L + delta * K) / (mu * K)},
    r"\frac{\beta \sigma^{2}}{\mu K N \epsilon}+\frac{\beta+\delta K}{\mu K}",
)

THM1_FEDAVG_CONVEX = _thm(
    "scaffold2020.thm1_fedavg_convex",
    "FedAvg, general convex, (G, B)-dissimilarity: R = O(σ²D²/(KSε²) + (1−S/N)G²D²/(Sε²) + √β G/ε^{3/2} "
    "+ B²βD²/ε)",
    "Theorem I (general convex)",
    _LOC1,
    {**_SC, "function": "convex (β-smooth)", "heterogeneity": "(G, B)-bounded gradient dissimilarity (A1)"},
    "rounds_to_eps: R with E f(output) − f* ≤ ε",
    {
        "noise": sigma**2 * D0 / (K * m * eps**2),
        "sampling": (1 - m / M) * G**2 * D0 / (m * eps**2),
        "drift": sp.sqrt(L) * G / eps ** sp.Rational(3, 2),
        "dissimilarity": B_dis**2 * L * D0 / eps,
    },
    r"\frac{\sigma^{2} D^{2}}{K S \epsilon^{2}}+\left(1-\frac{S}{N}\right) \frac{G^{2} D^{2}}{S \epsilon^{2}}"
    r"+\frac{\sqrt{\beta} G}{\epsilon^{\frac{3}{2}}}+\frac{B^{2} \beta D^{2}}{\epsilon}",
    algorithm="FedAvg with local step η_l and global step η_g",
)
THM1_FEDAVG_NONCONVEX = _thm(
    "scaffold2020.thm1_fedavg_nonconvex",
    "FedAvg, nonconvex, (G, B)-dissimilarity: rounds R = O(βσ²F/(KSε²) + (1−S/N)G²F/(Sε²) + √β G/ε^{3/2} "
    "+ B²βF/ε)",
    "Theorem I (non-convex)",
    _LOC1,
    {
        **_SC,
        "function": "smooth (β-smooth, nonconvex)",
        "heterogeneity": "(G, B)-bounded gradient dissimilarity (A1)",
    },
    "rounds_to_eps: R with E‖∇f(output)‖² ≤ ε",
    {
        "noise": L * sigma**2 * Delta / (K * m * eps**2),
        "sampling": (1 - m / M) * G**2 * Delta / (m * eps**2),
        "drift": sp.sqrt(L) * G / eps ** sp.Rational(3, 2),
        "dissimilarity": B_dis**2 * L * Delta / eps,
    },
    r"\frac{\beta \sigma^{2} F}{K S \epsilon^{2}}+\left(1-\frac{S}{N}\right) \frac{G^{2} F}{S \epsilon^{2}}"
    r"+\frac{\sqrt{\beta} G}{\epsilon^{\frac{3}{2}}}+\frac{B^{2} \beta F}{\epsilon}",
    algorithm="FedAvg with local step η_l and global step η_g",
)
_R = sp.Symbol("R", positive=True)
THM2_LOWER = Statement(
    id="scaffold2020.thm2_lower",
    title="FedAvg's client drift is unavoidable: f(x^r) − f* ≥ Ω(G²/(μR²)) (lower bound)",
    reference="Karimireddy et al., ICML 2020, Theorem II",
    source=SOURCE,
    excerpt=None,
    confidence="read",
    location=_LOC1,
    readings={
        "scaffold.thm2_exists": "there EXIST μ-strongly convex f_i satisfying (A1) (for any G, μ) on "
        "which FedAvg with K ≥ 2, σ = 0, N = S has this error; constants hidden in Ω(·)"
    },
    reading="For any G, μ > 0 there exist μ-strongly convex functions satisfying (A1) on which FedAvg with "
    "K ≥ 2, σ = 0, N = S has f(x^r) − f(x*) ≥ Ω(G²/(μR²)).",
    assumptions={**_SC, "noise": "none", "participation": "full", "heterogeneity": "(G, B) of (A1)"},
    algorithm="FedAvg, K ≥ 2 local steps, exact gradients, full participation",
    measured="last_gap: f(x^r) − f(x*)",
    bound={"drift": G**2 / (mu * _R**2)},
    constants_explicit=False,
    lower_bound=True,
    why_not_a_claim="lower bound on constructed functions (Ω(·)): an upper-bound verdict does not apply",
    latex=Transcription(bound=r"\frac{G^{2}}{\mu R^{2}}", symbols={"G": G, "mu": mu, "R": _R}),
)

#: the formula the package's SCAFFOLD check (``published.scaffold2020.thm3``) runs — the package's OWN,
#: not printed in the main text (see the module docstring)
PACKAGE_FORM = (
    "the package's own explicit form (NOT printed in the main text, which gives only Theorem III's round "
    "count; from memory, appendix-level at best): E f(x_R) − f* ≤ μD̃² exp(−min{S/(30N), μ/(162β)} R) with "
    "σ = 0, η̃ = Kη_lη_g ≤ min(1/(81β), S/(15μN)), η_g ≥ 1, D̃² = ‖x0 − x*‖² + (1/(2Nβ²)) Σ‖c_i⁰ − "
    "∇f_i(x*)‖², on the LAST iterate, hidden constant 1. A violation of it is a fact about this formula, "
    "never about the paper."
)

STATEMENTS = (
    THM3,
    THM3_CONVEX,
    THM3_NONCONVEX,
    THM1_FEDAVG,
    THM1_FEDAVG_CONVEX,
    THM1_FEDAVG_NONCONVEX,
    THM2_LOWER,
    THM4,
)
