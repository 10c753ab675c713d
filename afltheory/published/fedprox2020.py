"""Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, "Federated Optimization in Heterogeneous Networks", MLSys 2020
(arXiv:1812.06127), Theorem 4 (FedProx, non-convex, B-local dissimilarity).

Paper letters -> symbols: μ (proximal weight) -> ``mu_prox``; K (sampled devices) -> ``m``; B -> ``B_dis``; γ
(inexactness) -> ``gamma_inexact``; L_− (lower curvature) -> 0 here (convex f_k), so μ̄ = μ.
"""

from __future__ import annotations

import sympy as sp

from ._statement import Statement
from .symbols import B_dis, L, gamma_inexact, m, mu_prox

__all__ = ["RHO", "STATEMENTS", "THM4"]

_g, _B, _mu, _K = gamma_inexact, B_dis, mu_prox, m
_mubar = mu_prox  # μ̄ = μ − L_− with L_− = 0 (convex local objectives)
#: the per-round decrease constant ρ of Theorem 4
RHO = (
    1 / _mu
    - _g * _B / _mu
    - _B * (1 + _g) * sp.sqrt(2) / (_mubar * sp.sqrt(_K))
    - L * _B * (1 + _g) / (_mubar * _mu)
    - L * (1 + _g) ** 2 * _B**2 / (2 * _mubar**2)
    - L * _B**2 * (1 + _g) ** 2 / (_mubar**2 * _K) * (2 * sp.sqrt(2 * _K) + 2)
)

THM4 = Statement(
    id="fedprox2020.thm4",
    title="FedProx sufficient decrease per round (non-convex, B-dissimilarity)",
    reference="Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, MLSys 2020, Theorem 4",
    source=(
        "abstract https://hf.adamo.dpdns.org/papers/1812.06127.md "
        "(retrieved with the `search` tool, corpus pages); ρ from memory"
    ),
    excerpt=(
        "Theoretically, we provide convergence guarantees for our framework when "
        "learning over data from non-identical distributions (statistical heterogeneity)"
    ),
    confidence="abstract read, statement from memory",
    reading=(
        "Per round: K devices drawn with replacement with probabilities p_k, each returns a γ-inexact "
        "minimiser of F_k(w) + μ/2‖w − w^t‖², the server averages them (simple mean). B-local dissimilarity "
        "E_k‖∇F_k(w)‖² ≤ B²‖∇f(w)‖² is read AT THE CURRENT ITERATE w^t (a global B is infinite whenever the "
        "F_k have different minimisers). Claim: E_S f(w^{t+1}) ≤ f(w^t) − ρ‖∇f(w^t)‖² when ρ > 0."
    ),
    assumptions={
        "function": "smooth, ∇²F_k ⪰ −L_− I (here convex, L_− = 0)",
        "noise": "none (exact prox)",
        "heterogeneity": "B-local dissimilarity",
        "participation": "m sampled with replacement by p_k",
    },
    algorithm="FedProx with an exact (γ = 0) or γ-inexact proximal local solver",
    measured="per_round_decrease: f(w^t) − E_S f(w^{t+1}) ≥ ρ ‖∇f(w^t)‖²",
    bound={"decrease": RHO},
    conditions={"rho": sp.Gt(RHO, 0)},
)

STATEMENTS = (THM4,)
