"""The L-smooth (nonconvex) class: every Hessian's spectrum in [−L, L].

Interpolation inequality (Taylor, Hendrickx & Glineur 2017, Thm 3.10): data {(x_p, g_p, f_p)} are
interpolated by an L-smooth function iff for every ordered pair

    f_i − f_j ≥ −(L/4)‖x_i − x_j‖² + ½⟨g_i + g_j, x_i − x_j⟩ + ‖g_i − g_j‖²/(4L).

Interpolator (:class:`SmoothInterpolant`): f is L-smooth iff h = f + (L/2)‖·‖² is convex and 2L-smooth. Put
y_p = g_p + L x_p, s_p = x_p/2 − g_p/(2L), a_p = ‖y_p‖²/(4L) − f_p − (L/2)‖x_p‖²; then
    h(x) = min_{λ∈simplex} L‖x − Sλ‖² − aᵀλ,   f(x) = h(x) − (L/2)‖x‖²,   ∇f(x) = L x − 2L Sλ*(x)
is the conjugate of ‖y‖²/(4L) + max_p(affine_p(y)), so f is L-smooth for *any* data and interpolates data
satisfying the inequality. inf f = min_p (f_p − ‖g_p‖²/(2L)), attained at x_p − g_p/L.

Sampler: :class:`afltheory.problems.NonconvexSinusoidal` with curvatures in [−L/2, L].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_positive
from ._simplex import SimplexInterpolant
from .base import FunctionClass, _data

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..problems.base import Problem

__all__ = ["SmoothInterpolant", "SmoothNonconvex"]


class SmoothInterpolant(SimplexInterpolant):
    """The L-smooth function f(x) = min_{λ∈simplex} L‖x − Sλ‖² − aᵀλ − (L/2)‖x‖² built from data points
    ``X`` (P, d), gradients ``grads`` (P, d) and values ``values`` (P,) (module docstring). L-smooth for any
    data; interpolates the data when they satisfy the smooth interpolation conditions."""

    def __init__(self, X: np.ndarray, grads: np.ndarray, values: np.ndarray, L: float):
        X, Gr, F = _data(X, grads, values)
        L = check_positive("L", L)
        S = X / 2 - Gr / (2 * L)
        Y = Gr + L * X
        a = np.sum(Y * Y, axis=1) / (4 * L) - F - L / 2 * np.sum(X * X, axis=1)
        super().__init__(S, a, A=L, kappa=-L, beta=-L, L=L)


class SmoothNonconvex(FunctionClass):
    """Every f L-smooth: ‖∇f(x) − ∇f(y)‖ ≤ L‖x − y‖ (module docstring)."""

    name = "L-smooth"

    def __init__(self, L: float):
        self.L = check_positive("L", L)
        self.mu = None

    def rhs(self, dx: Any, g_i: Any, g_j: Any, inner: Callable[[Any, Any], Any]) -> Any:
        """−(L/4)‖dx‖² + ½⟨g_i + g_j, dx⟩ + ‖g_i − g_j‖²/(4L) (Taylor et al. 2017, Thm 3.10)."""
        L = self.L
        sg, dg = g_i + g_j, g_i - g_j
        return -L / 4 * inner(dx, dx) + 0.5 * inner(sg, dx) + inner(dg, dg) / (4 * L)

    def declare(self, pep: Any) -> Any:
        """PEPit's ``SmoothFunction`` with this L."""
        from PEPit.functions import SmoothFunction

        return pep.declare_function(SmoothFunction, L=self.L)

    def interpolator(self, X: np.ndarray, grads: np.ndarray, values: np.ndarray) -> SmoothInterpolant:
        """:class:`SmoothInterpolant` of the data."""
        return SmoothInterpolant(X, grads, values, self.L)

    def sample(
        self, dim: int, num_workers: int, sigma_G: float, seed: int = 0, *, sigma_L: float = 0.0
    ) -> Problem:
        """``NonconvexSinusoidal`` with curvatures in [−L/2, L] (nonconvex for every seed)."""
        from ..problems import NonconvexSinusoidal

        return NonconvexSinusoidal(
            dim=dim,
            num_workers=num_workers,
            L=self.L,
            mu=-self.L / 2,
            sigma_L=sigma_L,
            sigma_G=sigma_G,
            seed=seed,
        )
