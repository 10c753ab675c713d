"""Nguyen, Malik, Zhan, Yousefpour, Rabbat, Malek, Huba, "Federated Learning with Buffered Asynchronous
Aggregation" (FedBuff), AISTATS 2022 (arXiv:2106.06639), convergence theorem (non-convex).

Paper letters -> symbols: K (buffer size) -> ``m``; Q (local steps) -> ``K``; η_g, η_ℓ -> ``eta``, ``eta_L``;
τ_max -> ``tau``.
"""

from __future__ import annotations

from ._statement import Statement
from .symbols import Delta, K, L, T, eta, eta_L, m, sigma_G, sigma_L, tau

__all__ = ["STATEMENTS", "THM"]

THM = Statement(
    id="fedbuff2022.thm",
    title="FedBuff, non-convex, bounded staleness",
    reference="Nguyen et al., AISTATS 2022, main convergence theorem",
    source=(
        "abstract https://ai.meta.com/research/publications/federated-learning-with-buffered-asynchronous-"
        "aggregation/ (retrieved with the `search` tool, corpus pages); the bound's shape from memory"
    ),
    excerpt="We provide theoretical convergence guarantees for FedBuff in a non-convex setting.",
    confidence="from memory",
    reading=(
        "Rate shape only (constants and the exact staleness factor not retrieved): (1/T)Σ E‖∇f(x_t)‖² ≲ "
        "Δ/(η η_ℓ Q T) + L η η_ℓ Q (σ_ℓ² + σ_g²)/K + L² η_ℓ² Q² (1 + η² τ_max²)(σ_ℓ² + σ_g²). A uniform "
        "gradient bound is assumed in the original (removed by Toghani & Uribe 2022)."
    ),
    assumptions={
        "function": "smooth (nonconvex)",
        "noise": "variance σ_ℓ²",
        "heterogeneity": "sigma_G",
        "participation": "buffer of m arrivals",
        "max_delay": "τ",
    },
    algorithm="FedBuff (afltheory.algorithms.FedBuff)",
    measured="avg_grad_sq",
    bound={
        "transient": Delta / (eta * eta_L * K * T),
        "noise": L * eta * eta_L * K * (sigma_L**2 + sigma_G**2) / m,
        "staleness": (L**2 * eta_L**2 * K**2 * (1 + eta**2 * tau**2) * (sigma_L**2 + sigma_G**2)),
    },
    constants_explicit=False,
)

STATEMENTS = (THM,)
