"""Nguyen, Malik, Zhan, Yousefpour, Rabbat, Malek, Huba, "Federated Learning with Buffered Asynchronous
Aggregation" (FedBuff), AISTATS 2022 (arXiv:2106.06639), convergence theorem (non-convex).

Paper letters -> symbols: K (buffer size) -> ``m``; Q (local steps) -> ``K``; η_g, η_ℓ -> ``eta``, ``eta_L``;
τ_max -> ``tau``.
"""

from __future__ import annotations

from ..claims import Location
from ._paper import Paper
from .symbols import Delta, K, L, T, eta, eta_L, m, sigma_G, sigma_L, tau

__all__ = ["STATEMENTS", "THM"]

PAPER = Paper(
    "Nguyen et al., AISTATS 2022",
    "abstract https://ai.meta.com/research/publications/federated-learning-with-buffered-asynchronous-"
    "aggregation/ (retrieved with the `search` tool, corpus pages); the rate as restated by Koloskova, "
    "Stich, Jaggi, 'Sharper Convergence Guarantees for Asynchronous SGD for Distributed and Federated "
    "Learning' (anonymous-submission copy, index id 62037252991, Sec. 5.3); the primary text not found; "
    "the module's bound shape (step sizes, σ² in the staleness term) from memory",
)

THM = PAPER.claim(
    "fedbuff2022.thm",
    "FedBuff, non-convex, bounded staleness",
    "main convergence theorem",
    excerpt="We provide theoretical convergence guarantees for FedBuff in a non-convex setting.",
    confidence="read (secondary: Koloskova, Stich, Jaggi 2022, Sec. 5.3, the rate as an iteration count)",
    reading=(
        "Rate shape only (constants and the exact staleness factor not retrieved): (1/T)Σ E‖∇f(x_t)‖² ≲ "
        "Δ/(η η_ℓ Q T) + L η η_ℓ Q (σ_ℓ² + σ_g²)/K + L² η_ℓ² Q² (1 + η² τ_max²)(σ_ℓ² + σ_g²). A uniform "
        "gradient bound is assumed in the original (removed by Toghani & Uribe 2022). The secondary text "
        "restates only an iteration count, O(σ²/ε² + ζ²/ε² + (ζ²+1) τ_max G²/ε) under bounded gradients: its "
        "staleness term carries G², not the module's (σ_ℓ² + σ_g²) (docs/published_readings.md)."
    ),
    assumptions_text={
        "function": "smooth (nonconvex)",
        "noise": "variance σ_ℓ²",
        "heterogeneity": "sigma_G",
        "participation": "buffer of m arrivals",
        "max_delay": "τ",
    },
    algorithm_text="FedBuff (afltheory.algorithms.FedBuff)",
    measured_text="avg_grad_sq",
    bound={
        "transient": Delta / (eta * eta_L * K * T),
        "noise": L * eta * eta_L * K * (sigma_L**2 + sigma_G**2) / m,
        "staleness": (L**2 * eta_L**2 * K**2 * (1 + eta**2 * tau**2) * (sigma_L**2 + sigma_G**2)),
    },
    constants_explicit=False,
    location=Location(
        "62037252991",
        32000,
        "FedBuff's rate as restated (Comparison to other works) by Koloskova, Stich, Jaggi 2022",
        "# Sharper Convergence Guarantees for Asynchronous",
        section="Sec. 5.3 (secondary; FedBuff's own text not found)",
    ),
    readings={
        "fedbuff.secondary_complexity": "the only text read is a secondary restatement as an iteration count "
        "for (1/(T+1)) Σ_t ‖∇f(x_t)‖² ≤ ε: O(σ²/ε² + ζ²/ε² + (ζ²+1) τ_max G²/ε); step sizes, the buffer size "
        "K and the local steps Q do not appear in it, so the module's explicit shape is not checked by it",
        "fedbuff.bounded_gradient": "the restated rate assumes ‖∇f_i(x)‖² ≤ G² for all x; staleness enters "
        "as (ζ²+1) τ_max G², where the module's staleness term is L² η_ℓ² Q² (1 + η² τ²)(σ_ℓ² + σ_g²)",
        "fedbuff.uniform_arrivals": "per the secondary text, FedBuff's analysis assumes the client that "
        "finishes at each step is uniform over all clients (not the server's sampling of new clients)",
    },
    why_not_a_claim="from memory, constants hidden in O(·): no verdict until its text is read (a check "
    "of a recollection is no evidence)",
)

STATEMENTS = (THM,)
