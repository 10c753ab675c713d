"""Wang, Liu, Liang, Joshi, Poor, "Tackling the Objective Inconsistency Problem in Heterogeneous Federated
Optimization", NeurIPS 2020 (arXiv:2007.07481): Theorem 1 (objective inconsistency of FedAvg with
heterogeneous local steps) and FedNova's normalized averaging (its fix).

Paper letters -> symbols: τ_i (local steps of client i) -> ``K`` per client; m (clients) -> ``M``;
τ̄ -> ``tau_bar``.
"""

from __future__ import annotations

import sympy as sp

from ._statement import Statement

__all__ = ["FEDNOVA_CONSISTENT", "STATEMENTS", "THM1_INCONSISTENCY"]

SOURCE = (
    "abstract https://papers.nips.cc/paper_files/paper/2020/hash/564127c03caab942e503ee6f810f54fd-"
    "Abstract.html (retrieved with the `search` tool, corpus pages); the surrogate weights from memory"
)
EXCERPT = (
    "Naive weighted aggregation of such models causes objective inconsistency, "
    "that is, the global model converges to a stationary point of a mismatched "
    "objective function which can be arbitrarily different from the true objective."
)

THM1_INCONSISTENCY = Statement(
    id="fednova2020.thm1",
    title="FedAvg with heterogeneous local steps converges to a mismatched objective",
    reference="Wang, Liu, Liang, Joshi, Poor, NeurIPS 2020, Theorem 1",
    source=SOURCE,
    excerpt=EXCERPT,
    confidence="abstract read, statement from memory",
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
    reference="Wang, Liu, Liang, Joshi, Poor, NeurIPS 2020, Sec. 5 (FedNova) and Theorem 2",
    source=SOURCE,
    excerpt=(
        "we propose FedNova, a normalized averaging method that eliminates objective "
        "inconsistency while preserving fast error convergence."
    ),
    confidence="abstract read, statement from memory",
    reading=(
        "FedNova: x_{t+1} = x_t − η τ_eff Σ_i p_i d_i with d_i = Δ_i/(η_L τ_i) (the average local "
        "gradient) and τ_eff = Σ_i p_i τ_i. Its fixed point tends to argmin F as η_L → 0, whatever the τ_i."
    ),
    assumptions=THM1_INCONSISTENCY.assumptions,
    algorithm="FedNova (afltheory.algorithms.published.FedNova)",
    measured="limit_dist_sq: ‖lim_t x_t − x*‖² as η_L → 0",
    bound={"limit_gap": sp.Integer(0)},
    constants_explicit=False,
)

STATEMENTS = (THM1_INCONSISTENCY, FEDNOVA_CONSISTENT)
