"""The statements the package states that no engine runs, as registered ``Claim``s (issue 38): Yang et al.'s
Theorem 1 (a lower bound given as a construction), Corollaries 1–3 (O(·) rates), Lemmas 1–2 and the local
drift bound (1), Dynamic FedAvg's steady-state MSD (the source's O(·) form and the explicit bound derived
from its recursion) and MOCHA's Theorem 1. Each bound is the theory module's own expression (or written
once here from the formula its theory function evaluates; a test compares the two at a point), located in
docs/theorems.md, and carries ``why_not_a_claim`` (``runnable`` is False: no engine form). The adversary
attaches its search specs cor1–cor3, lemma2 and drift to these claims (``Claim.setups["search"]``)."""

from __future__ import annotations

from typing import Any

import sympy as sp

from ..theory import corollaries, theorem1
from ..theory import symbols as S
from ._claim import Claim, Location

__all__ = [
    "COROLLARIES",
    "DRIFT",
    "DYNAMIC_MSD",
    "DYNAMIC_MSD_EXPLICIT",
    "LEMMA1",
    "LEMMA2",
    "MOCHA_THM1",
    "MOCHA_THM2",
    "STATED",
    "THEOREM1",
]

_YANG = (
    "Yang, Zhang, Khanduri, Liu, ICML 2022 (arXiv:2204.09364); read from the source documents, "
    "docs/theorems.md"
)
_RIZK = "[Rizk, Vlaski, Sayed 2020, Alg. 2 and the MSD analysis; the Dynamic FL slides [Rizk et al.]]"


def _at(offset: int, theorem: str, found_by: str, section: str) -> Location:
    """docs/theorems.md at character ``offset``, where the text ``found_by`` starts (in ``section``)."""
    return Location(None, offset, theorem, found_by, section, path="docs/theorems.md")


def _unmeasured(id: str, title: str, kind: str, **statement: Any) -> Claim:
    """A statement on no quantity the engines measure (``measured=None``) and in no searchable assumption
    class (``assumptions=None``): registered and checked by its own module, never run by an engine;
    ``statement``: the rest of the claim, as ``Claim``'s keywords."""
    return Claim(id=id, title=title, kind=kind, measured=None, assumptions=None, **statement)


THEOREM1 = _unmeasured(
    "yang2022.thm1",
    "lower bound for any AFL algorithm: E‖∇f(x̂)‖² ≥ σ_G² when only worker 1 participates",
    "theorem",
    bound={"floor": theorem1.lower_bound_expr()},
    lower_bound=True,
    reference=theorem1.CITATION,
    source=_YANG,
    confidence="read",
    location=_at(2242, "Theorem 1", "## Theorem 1 — lower bound for any AFL algorithm", ""),
    reading="two workers f_1 = (x + G)², f_2 = (x − G)², σ_G = 2G; any convergent algorithm returns "
    "E x̂ = −G, so E‖∇f(x̂)‖² ≥ 4(E x̂)² = σ_G² (equality in the noiseless limit)",
    notes="theory.theorem1: the construction, the limit point −G, the limit 4G² = σ_G² and AFA-CD's exact "
    "trajectory in it",
    why_not_a_claim="a lower bound stated as a construction (two workers, only worker 1 participates): an "
    "instance attaining Ω(σ_G²), not an inequality every run satisfies; theory.theorem1 builds the instance "
    "and its check runs it",
)

#: k -> (offset in docs/theorems.md, the text found there, its section, the step η, the printed rate)
_COR_AT = {
    1: (
        3063,
        "Corollary 1 (constant K, `η_L = 1/√T`",
        "## Theorem 2 — AFA-CD",
        "√(mK)",
        "O(1/√(mKT)) + O(τ²/T) + O(K²/T) + O(σ_G²)",
    ),
    2: (
        4564,
        "Corollary 2 (`η_L = 1/√T`, `η = √(mK)`)",
        "## Theorem 3 — AFA-CD",
        "√(mK)",
        "O(1/√(mKT)) + O(τ²/T) (+ O(K²/T))",
    ),
    3: (
        6530,
        "Corollary 3 (`η_L = 1/√T`, `η = √(MK)`)",
        "## Theorem 4 — AFA-CS",
        "√(MK)",
        "O(1/√(MKT)) + O(τ²(M − m')²/(M²T))",
    ),
}


def _corollary(k: int) -> Claim:
    """Corollary ``k``: Theorem k+1 at η_L = 1/√T, η = √(mK) (√(MK) for k = 3), constant K; the bound is the
    printed rate's orders ``corollaries.printed(k)`` (O(·) dropped: constants hidden)."""
    offset, found_by, section, eta, rate = _COR_AT[k]
    return Claim(
        id=f"yang2022.cor{k}",
        title=f"Corollary {k}: Theorem {k + 1} at η_L = 1/√T, η = {eta}, constant K: {rate}",
        kind="corollary",
        measured="avg_grad_sq",
        assumptions=None,
        bound={sp.sstr(t): t for t in corollaries.printed(k)},
        constant="hidden",
        constants_explicit=False,
        reference=f"[Yang et al. 2022, Cor {k}]",
        source=_YANG,
        confidence="read",
        location=_at(offset, f"Corollary {k}", found_by, section),
        readings={
            f"yang2022.cor{k}.orders": "the printed O(·) terms as their orders in T, m, K, M, τ, M − m' "
            "(L, σ_L, σ_G, f_0 − f_* and numeric factors set to 1: theory.corollaries.printed)"
        },
        notes="theory.corollaries.derive(k) substitutes the step sizes into the theorem's bound and compares "
        "term by term (documented mismatches #4, #5)",
        why_not_a_claim="an O(·) rate whose printed orders drop the constants and L, σ_L, σ_G, f_0 − f_*: no "
        "bound an engine can hold a run to; the derivation compares it with the theorem's bound at the "
        "corollary's step sizes, which the adversary searches (setups['search'])",
    )


COROLLARIES = tuple(_corollary(k) for k in (1, 2, 3))

#: ‖Σ_{i∈M_t} E G_i‖² (Lemma 2) and ‖∇f(x)‖² at the round's start (bound (1)): the lemmas' own symbols
MEAN_SQ = sp.Symbol("mean_sq", nonnegative=True)
GRAD_SQ = sp.Symbol("grad_sq", nonnegative=True)
_LEMMAS = "## Lemmas [H]"
_PER_ROUND = (
    "a per-round inequality on {what}, not a bound on a run's measured quantity; theory.lemmas evaluates it "
    "and its check holds Monte Carlo estimates to it"
)


def _per_round_lemma(
    id, title, bound, reference, location, what, *, reading="", definitions=None, conditions=None
):
    """One of Yang et al.'s per-round lemmas (read): an inequality on ``what``, no measured quantity of a run,
    so not a claim the engines run (theory.lemmas evaluates it)."""
    return _unmeasured(
        id,
        title,
        "lemma",
        bound=bound,
        definitions=definitions or {},
        conditions=conditions or {},
        reference=reference,
        source=_YANG,
        confidence="read",
        location=location,
        reading=reading,
        why_not_a_claim=_PER_ROUND.format(what=what),
    )


LEMMA1 = _per_round_lemma(
    "yang2022.lemma1",
    "Lemma 1: E‖G_i − E G_i‖² ≤ σ_L²/K (G_i the mean of K stochastic gradients)",
    {"variance": S.sigma_L**2 / S.K},
    "[Yang et al. 2022, Lemma 1]",
    _at(8181, "Lemma 1", "Lemma 1: `E G_i = (1/K)", _LEMMAS),
    "one worker's update",
    reading="a worker's update is the average of its K stochastic gradients (theory.lemmas)",
)
LEMMA2 = _per_round_lemma(
    "yang2022.lemma2",
    "Lemma 2: E‖Σ_{i∈M_t} G_i‖² ≤ 2‖Σ_{i∈M_t} E G_i‖² + (2m/K̄_t) σ_L²",
    {"mean": 2 * MEAN_SQ, "sigma_L": 2 * S.m / S.Kbar * S.sigma_L**2},
    "[Yang et al. 2022, Lemma 2]",
    _at(8251, "Lemma 2", "Lemma 2: `E‖Σ_{i∈M_t} G_i‖²", _LEMMAS),
    "one round's aggregated updates",
    reading="m/K̄_t = Σ_{i∈M_t} 1/K_{t,i} (K̄_t the harmonic mean of the round's local steps)",
    definitions={"m/Kbar": "Σ_{i∈M_t} 1/K_{t,i}", "mean_sq": "‖Σ_{i∈M_t} E G_i‖²"},
)
DRIFT = _per_round_lemma(
    "yang2022.drift",
    "bound (1): E‖y_k − x‖² ≤ 5Kη_L²(σ_L² + 6Kσ_G²) + 30K²η_L²‖∇f(x)‖² for k ≤ K, under (C1)",
    {
        "sigma_L": 5 * S.K * S.eta_L**2 * S.sigma_L**2,
        "sigma_G": 30 * S.K**2 * S.eta_L**2 * S.sigma_G**2,
        "gradient": 30 * S.K**2 * S.eta_L**2 * GRAD_SQ,
    },
    "[Yang et al. 2022, bound (1)] (Reddi et al. 2021, Lemma 4)",
    _at(8322, "bound (1)", "Local drift (bound (1), Reddi et al. Lemma 4)", _LEMMAS),
    "one worker's local path",
    conditions={"C1": 6 * S.eta_L**2 * (2 * S.K**2 - 3 * S.K + 1) * S.L**2 <= 1},
)

#: Dynamic FedAvg's symbols (docs/theorems.md "Dynamic FedAvg — the claims to verify"; exact.drift)
mu, nu, delta = sp.symbols("mu nu delta", positive=True)
beta_s2, sigma_s2, eps2, sigma_q2 = sp.symbols("beta_s^2 sigma_s^2 epsilon^2 sigma_q^2", nonnegative=True)
#: λ = 1 − 2μν + μ²(δ² + β_s²): the contraction of the seed's error recursion
LAMBDA = 1 - 2 * mu * nu + mu**2 * (delta**2 + beta_s2)
_DYN = "## Dynamic FedAvg — the claims to verify"
_DYN_WHY = (
    "a steady-state (limsup) mean-square deviation from a drifting optimum (Trace.tracking_error, the exact "
    "engine's steady state), not one of the engines' measured quantities"
)

DYNAMIC_MSD = _unmeasured(
    "rizk2020.msd",
    "Dynamic FedAvg: limsup E‖w°_i − w_i‖² ≤ O(μ)(σ_s² + ε²) + O(σ_q²/μ)",
    "theorem",
    bound={"noise": mu * (sigma_s2 + eps2), "tracking": sigma_q2 / mu},
    constant="hidden",
    constants_explicit=False,
    reference=_RIZK,
    source="Rizk, Vlaski, Sayed, SPAWC 2020 (arXiv:2002.08782) and the talk slides; docs/theorems.md",
    confidence="read",
    location=_at(11269, "Theorem form", "Theorem form [M: constants not in the source]", _DYN),
    reading="constants not in the source [M]; σ_s², ε² the seed's gradient-noise moments "
    "(exact.drift.seed_constants)",
    why_not_a_claim=_DYN_WHY + "; constants hidden in O(·)",
)
DYNAMIC_MSD_EXPLICIT = _unmeasured(
    "rizk2020.msd_explicit",
    "Dynamic FedAvg, E_k = 1: limsup MSD ≤ [μ²(σ_s² + ε²) + λσ_q²]/(1 − λ), λ = 1 − 2μν + μ²(δ² + β_s²)",
    "proposition",
    bound={
        "data": mu**2 * sigma_s2 / (1 - LAMBDA),
        "model": mu**2 * eps2 / (1 - LAMBDA),
        "drift": LAMBDA * sigma_q2 / (1 - LAMBDA),
    },
    conditions={"contraction": LAMBDA < 1},
    definitions={"lambda": LAMBDA},
    reference=_RIZK,
    source="derived here from the seed's error recursion with its constants (docs/dynamic.md, "
    "exact.drift.seed_bound)",
    confidence="derived",
    reading="one epoch per agent (E_k = 1: the seed's incremental term vanishes); δ = max_k λ_max(R_k), "
    "ν = λ_min(H̄)",
    why_not_a_claim=_DYN_WHY + "; exact.drift.seed_bound evaluates it and its check holds the exact steady "
    "state to it",
)

#: MOCHA's symbols (theory.mocha): rounds h, initial suboptimality ε₀, Θ̄ and s
h, eps0 = sp.symbols("h epsilon_0", nonnegative=True)
theta_bar, s_mocha = sp.symbols("Theta_bar s", positive=True)
p_max, theta_max = sp.symbols("p_max Theta_max", nonnegative=True)

MOCHA_THM1 = _unmeasured(
    "smith2017.mocha_thm1",
    "MOCHA, smooth losses, Ω fixed: E[D(α*) − D(α^h)] ≤ (1 − (1 − Θ̄)s)^h ε₀",
    "theorem",
    bound={"contraction": (1 - (1 - theta_bar) * s_mocha) ** h * eps0},
    conditions={"s_range": s_mocha <= 1, "theta_bar_range": theta_bar < 1},
    definitions={"Theta_bar": p_max + (1 - p_max) * theta_max},
    reference="[Smith et al. 2017, Thm 1]",
    source="Smith, Chiang, Sanjabi, Talwalkar, NeurIPS 2017, as surveyed in the survey slides (X. Wang); "
    "docs/theorems.md",
    confidence="read (secondary: the survey slides)",
    location=_at(
        14045, "Theorem 1", "Theorem 1 [M: s's exact form]", "## Federated multi-task learning, MOCHA"
    ),
    readings={
        "smith2017.s_derived": "s = μ/(μ + σ' max_t (C_tt/2) λ_max(X_tᵀX_t)) derived here (CoCoA+ lineage, "
        "theory.mocha.s_smooth), not transcribed [M]"
    },
    why_not_a_claim="a bound on the dual suboptimality of MOCHA's W-step (afltheory.mtl), not a quantity the "
    "engines measure; theory.mocha evaluates it and its check holds MOCHA's runs (a 99 % upper confidence "
    "bound) to it",
)

#: MOCHA Thm 2's target duality gap ε_G
eps_G = sp.Symbol("epsilon_G", positive=True)

MOCHA_THM2 = _unmeasured(
    "smith2017.mocha_thm2",
    "MOCHA, L-Lipschitz losses, Ω fixed: duality gap ≤ ε_G after O(1/((1 − Θ̄) ε_G)) rounds",
    "theorem",
    bound={"rounds": 1 / ((1 - theta_bar) * eps_G)},
    constant="hidden",
    constants_explicit=False,
    conditions={"theta_bar_range": theta_bar < 1},
    definitions={"Theta_bar": p_max + (1 - p_max) * theta_max},
    reference="[Smith et al. 2017, Thm 2]",
    source=MOCHA_THM1.source,
    confidence="read (secondary: the survey slides)",
    readings={
        "smith2017.thm2_order": "the survey gives the order only, tagged [L] (low confidence): no constant"
    },
    location=_at(
        14210, "Theorem 2", "Theorem 2 [L] (Lipschitz losses)", "## Federated multi-task learning, MOCHA"
    ),
    why_not_a_claim="a bound on the number of rounds to reach duality gap ε_G, with its constant hidden in "
    "O(·) and confidence [L] (the survey states the order only); afltheory.mtl runs hinge losses, but a "
    "rounds-to-accuracy O-statement is not a quantity the claims' engines measure",
)

#: the stated claims in registration order
STATED = (
    THEOREM1,
    *COROLLARIES,
    LEMMA1,
    LEMMA2,
    DRIFT,
    DYNAMIC_MSD,
    DYNAMIC_MSD_EXPLICIT,
    MOCHA_THM1,
    MOCHA_THM2,
)
