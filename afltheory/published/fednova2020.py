"""Wang, Liu, Liang, Joshi, Poor, "Tackling the Objective Inconsistency Problem in Heterogeneous Federated
Optimization", NeurIPS 2020 (arXiv:2007.07481): Theorem 1 (objective inconsistency of FedAvg with
heterogeneous local steps) and FedNova's normalized averaging (its fix).

Paper letters -> symbols: τ_i (local steps of client i) -> ``K`` per client; m (clients) -> ``M``;
τ̄ -> ``tau_bar``.
"""

from __future__ import annotations

import sympy as sp

from ._statement import Location, Statement, Transcription

__all__ = ["FEDNOVA_CONSISTENT", "STATEMENTS", "THM1_INCONSISTENCY", "THM2_TRUE_OBJECTIVE"]

_INDEX_ID = "54497425936"
_FOUND_BY = "# Tackling the Objective Inconsistency Problem"
SOURCE = (
    "main text, index id 54497425936 (a converted markdown copy): Sec. 3 Lemma 1, Sec. 4.1 the update "
    "rule 4 and FedAvg's τ_eff, w_i, Sec. 4.2 Theorems 1-2, Sec. 5 FedNova and Theorem 3"
)
EXCERPT = None
LOC_LEMMA1 = Location(
    _INDEX_ID, 9000, "Lemma 1; Sec. 4.1 FedAvg's w_i; Theorem 1", _FOUND_BY, section="Secs. 3-4"
)
LOC_THM2 = Location(_INDEX_ID, 25000, "Theorem 2 (eq. 10)", _FOUND_BY, section="Sec. 4.2")
LOC_THM3 = Location(_INDEX_ID, 25000, "Sec. 5 update rule; Theorem 3", _FOUND_BY, section="Sec. 5")
READINGS = {
    "fednova.lemma1_quadratic": "Lemma 1 is stated for F_i = ½‖x − e_i‖², p_i = 1/m, deterministic "
    "gradients, 'sufficiently small' η; the package checks the general quadratic form (Sec. 4.1: w_i = "
    "p_i τ_i / Σ_j p_j τ_j) in the limit η_L → 0",
    "fednova.limit_not_rate": "Theorem 1's rate hides all constants (O(·) swallows L): only its limit "
    "(the stationary point of F̃) is checked",
}

THM1_INCONSISTENCY = Statement(
    id="fednova2020.thm1",
    title="FedAvg with heterogeneous local steps converges to a mismatched objective",
    reference="Wang, Liu, Liang, Joshi, Poor, NeurIPS 2020, Lemma 1 and Theorem 1 (w_i of Sec. 4.1)",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="read",
    location=LOC_LEMMA1,
    readings=READINGS,
    reading=(
        "FedAvg whose client i runs τ_i local SGD steps and the server averages Σ p_i Δ_i "
        "converges to a stationary point of F̃ = Σ_i w_i F_i with w_i = p_i τ_i / Σ_j p_j "
        "τ_j (the surrogate), not of F = Σ p_i F_i. Checked on quadratics with exact "
        "gradients: the fixed point x̂(η) of FedAvg tends to argmin F̃ as η_L → 0 (‖x̂(η) "
        "− argmin F̃‖ = O(η_L)) and stays at distance ‖argmin F̃ − argmin F‖ from x*."
    ),
    assumptions={
        "function": "smooth",
        "noise": "variance",
        "heterogeneity": "sigma_G",
        "participation": "full",
        "local steps": "fixed per client (τ_i)",
    },
    algorithm="FedAvg (x + η Σ p_i Δ_i, Δ_i = −η_L Σ_k g_k)",
    measured="limit_dist_sq: ‖lim_t x_t − argmin F̃‖² as η_L → 0",
    bound={"limit_gap": sp.Integer(0)},
    constants_explicit=False,
)

FEDNOVA_CONSISTENT = Statement(
    id="fednova2020.fednova",
    title="FedNova's normalized averaging removes the inconsistency",
    reference="Wang, Liu, Liang, Joshi, Poor, NeurIPS 2020, Sec. 5 (FedNova) and Theorem 3",
    source=SOURCE,
    excerpt=None,
    confidence="read",
    location=LOC_THM3,
    readings=READINGS,
    reading=(
        "FedNova (Sec. 5): x^{(t+1,0)} − x^{(t,0)} = (Σ_i p_i τ_i) Σ_i p_i Δ_i/τ_i, i.e. x_{t+1} = x_t − η "
        "τ_eff Σ_i p_i d_i with d_i = −Δ_i/(η τ_i) (the average local gradient; Δ_i = −η G_i a_i) and "
        "τ_eff = Σ_i p_i τ_i. Its fixed point tends to argmin F as η_L → 0, whatever the τ_i. (Before this "
        "text was read the module wrote d_i = Δ_i/(η_L τ_i): a sign slip in the prose, not in the rule.)"
    ),
    assumptions=THM1_INCONSISTENCY.assumptions,
    algorithm="FedNova (afltheory.algorithms.published.FedNova)",
    measured="limit_dist_sq: ‖lim_t x_t − x*‖² as η_L → 0",
    bound={"limit_gap": sp.Integer(0)},
    constants_explicit=False,
)

chi2 = sp.Symbol("chi2", nonnegative=True)  # χ²_{p‖w} = Σ_i (p_i − w_i)²/w_i
beta2 = sp.Symbol("beta2", positive=True)  # β² ≥ 1 of Assumption 3
kappa2 = sp.Symbol("kappa2", nonnegative=True)  # κ² of Assumption 3 (not L/μ)
eps_opt = sp.Symbol("eps_opt", nonnegative=True)  # the vanishing optimization error of (8)

THM2_TRUE_OBJECTIVE = Statement(
    id="fednova2020.thm2",
    title="Convergence in terms of the true objective: a non-vanishing floor 2χ²κ²",
    reference="Wang, Liu, Liang, Joshi, Poor, NeurIPS 2020, Theorem 2 (eq. 10)",
    source=SOURCE,
    excerpt=None,
    confidence="read",
    location=LOC_THM2,
    readings={
        **READINGS,
        "fednova.eps_opt_hidden": "ε_opt is the right-hand side of (8), whose constants O(·) hides: only "
        "the floor 2χ²κ² is explicit",
    },
    reading=(
        "Under Theorem 1's conditions, min_t ‖∇F(x^{(t,0)})‖² ≤ 2[χ²(β² − 1) + 1] ε_opt + 2χ²κ² with "
        "χ² = Σ_i (p_i − w_i)²/w_i; (β², κ²) of Assumption 3 (bounded dissimilarity for any weights w)."
    ),
    assumptions={
        "function": "smooth (Assumption 1)",
        "noise": "unbiased, variance σ² (Assumption 2)",
        "heterogeneity": "β², κ² bounded dissimilarity (Assumption 3)",
        "participation": "full",
    },
    algorithm="any rule of the form (4) (FedAvg: w_i = p_i τ_i / Σ_j p_j τ_j)",
    measured="min_grad_sq: min_{t ≤ T} ‖∇F(x^{(t,0)})‖²",
    bound={"optimisation": 2 * (chi2 * (beta2 - 1) + 1) * eps_opt, "inconsistency": 2 * chi2 * kappa2},
    constants_explicit=False,
    why_not_a_claim="ε_opt hides its constants (O(·)); the floor 2χ²κ² is checked qualitatively by the "
    "FedNova claim's control",
    latex=Transcription(
        bound=r"2\left(X \cdot (\beta^{2}-1)+1\right) \epsilon + 2 X \kappa^{2}",
        symbols={"X": chi2, "beta": sp.sqrt(beta2), "kappa": sp.sqrt(kappa2), "epsilon": eps_opt},
        assumptions={
            "A3": r"\sum_i w_i\|\nabla F_i(x)\|^2 \le \beta^2 \|\sum_i w_i \nabla F_i(x)\|^2 + \kappa^2",
            "chi2": r"\chi^2_{p\|w} = \sum_{i=1}^m (p_i - w_i)^2 / w_i",
        },
        normalisations="χ²_{p‖w} written X; ε_opt written ε",
    ),
)

STATEMENTS = (THM1_INCONSISTENCY, FEDNOVA_CONSISTENT, THM2_TRUE_OBJECTIVE)
