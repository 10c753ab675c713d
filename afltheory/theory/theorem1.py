"""Lower bound for any AFL algorithm [Yang et al. 2022, Thm 1].

Reading encoded (docs/theorems.md, Theorem 1, [H]): two workers f_1(x) = (x + G)², f_2(x) = (x − G)², f =
x² + G²,
σ_G = 2G; if only worker 1 ever participates (``FixedArrivals(workers=[0])``), any convergent algorithm
returns E x̂ = −G and E‖∇f(x̂)‖² ≥ 4 (E x̂)² = σ_G² = 4G², with equality in the limit for the deterministic
case.

``expected_grad_norm_sq`` gives the exact trajectory of AFA-CD (τ = 0, K local steps, σ_L = 0) in this
construction, so a check can hold a simulated run against the closed form and against the limit σ_G².
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_alloc, check_int, check_positive, check_real
from . import symbols as S
from ._condition import check_K

if TYPE_CHECKING:
    import sympy as sp

    from ..anarchy.arrivals import FixedArrivals
    from ..problems.lower_bound import LowerBoundPair

__all__ = [
    "ARRIVALS",
    "arrivals",
    "CITATION",
    "construction",
    "contraction",
    "expected_grad_norm_sq",
    "limit_point",
    "lower_bound_expr",
    "ONLY_WORKER",
    "predicted_limit",
    "problem",
]

CITATION = "[Yang et al. 2022, Thm 1]"
ONLY_WORKER = 0
ARRIVALS = {
    "kind": "FixedArrivals",
    "workers": [ONLY_WORKER],
}  # description usable without the anarchy package


def problem(G: float = 1.0, sigma_L: float = 0.0) -> LowerBoundPair:
    """The construction's objective, ``afltheory.problems.LowerBoundPair(G, sigma_L)``."""
    from afltheory.problems import LowerBoundPair

    return LowerBoundPair(G=check_positive("G", G), sigma_L=sigma_L)


def arrivals() -> FixedArrivals:
    """``afltheory.anarchy.FixedArrivals(workers=[0])`` (imported lazily)."""
    from afltheory.anarchy import FixedArrivals  # noqa: WPS433 - optional at import time of theory

    return FixedArrivals(workers=[ONLY_WORKER])


def construction(G: float = 1.0, sigma_L: float = 0.0) -> tuple[LowerBoundPair, FixedArrivals]:
    """(problem, arrivals) of the lower-bound construction."""
    return problem(G, sigma_L), arrivals()


def limit_point(G: float = 1.0) -> float:
    """x̂ = −G: the minimizer of the only participating worker's f_1."""
    return -check_positive("G", G)


def predicted_limit(G: float = 1.0) -> float:
    """lim E‖∇f(x̂)‖² = 4G² = σ_G²."""
    G = check_positive("G", G)
    with np.errstate(over="ignore"):  # IEEE: beyond the float range the limit is inf, never an OverflowError
        return float(4.0 * np.float64(G) ** 2)


def lower_bound_expr() -> sp.Expr:
    """Ω(σ_G²): the sympy lower bound σ_G² (= 4G² in the construction)."""
    return S.sigma_G**2


def contraction(eta: float, eta_L: float, K: int | ArrayLike) -> float:
    """ρ with x_{t+1} + G = ρ (x_t + G) for AFA-CD on f_1 (τ = 0, K local steps, no noise).

    Local: e_k = q^k e_0, q = 1 − 2η_L; G_1 = (1/K) Σ 2 e_k = e_0 (1 − q^K)/(η_L K); server: e ← e − η η_L
    G_1.
    """
    eta = check_positive("eta", eta)
    eta_L = check_positive("eta_L", eta_L)
    K = check_K("K", K)
    q = np.float64(1.0 - 2.0 * eta_L)
    if q < 0 and K != int(K):
        raise ValueError(
            f"K={K} must be an integer when eta_L={eta_L} > 1/2 (q = 1 − 2 eta_L < 0: q^K is "
            f"undefined for non-integer K)"
        )
    with np.errstate(over="ignore"):  # IEEE: |q|^K beyond the float range is ±inf, never an OverflowError
        return float(1.0 - eta * (1.0 - q ** np.float64(K)) / K)


def expected_grad_norm_sq(x0: float, G: float, eta: float, eta_L: float, K: int, T: int) -> np.ndarray:
    """‖∇f(x_t)‖² = 4 x_t², t = 0..T, exact for σ_L = 0 (x_t = −G + ρ^t (x_0 + G))."""
    x0 = check_real("x0", x0)
    G = check_positive("G", G)
    T = check_int("T", T, low=1)
    check_alloc(f"T={T}", 8.0 * 3 * (T + 1))
    rho = np.float64(contraction(eta, eta_L, K))
    with np.errstate(over="ignore", invalid="ignore"):
        e0 = np.float64(x0) + G
        # e_t = ρ^t e_0; e_0 = 0 stays 0 (never inf · 0 = NaN when ρ^t overflows)
        x = -G + (rho ** np.arange(T + 1) * e0 if e0 != 0 else np.zeros(T + 1))
        return 4.0 * x**2
