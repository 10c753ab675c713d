"""The μ-strongly convex and L-smooth class (0 ≤ μ < L): every Hessian's spectrum in [μ, L].

Interpolation inequality (Taylor, Hendrickx & Glineur 2017, Thm 4): data {(x_p, g_p, f_p)} are interpolated
by a μ-strongly convex L-smooth function iff for every ordered pair

    f_i − f_j ≥ ⟨g_j, x_i − x_j⟩ + ‖g_i − g_j‖²/(2L) + μ/(2(1 − μ/L)) ‖x_i − x_j − (g_i − g_j)/L‖².

Interpolator: h = f − (μ/2)‖·‖² is convex and L'-smooth (L' = L − μ) with data (x_p, g_p − μx_p,
f_p − (μ/2)‖x_p‖²). A convex L'-smooth interpolant of data (x_p, h_p, φ_p) is the conjugate of
‖y‖²/(2L') + max_p (affine pieces through (h_p, x_p − h_p/L')):
    h(x) = min_{λ∈simplex} (L'/2)‖x − Sλ‖² − aᵀλ,   s_p = x_p − h_p/L',   a_p = ‖h_p‖²/(2L') − φ_p,
convex and L'-smooth for any data, equal to φ_p with gradient h_p at x_p when the data are interpolable.
So f = h + (μ/2)‖·‖² (A = L'/2, κ = μ in :mod:`afltheory.functions._simplex`); inf f is a convex QP over
the simplex (a vertex for μ = 0).

Sampler: :class:`afltheory.problems.HeterogeneousQuadratic` with spectrum in [μ, L] (μ = 0: L/100, a
strongly convex member of the convex class).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_positive, check_real
from ._simplex import SimplexInterpolant
from .base import FunctionClass, _data

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..problems.base import Problem

__all__ = ["StronglyConvexSmooth"]


class StronglyConvexSmooth(FunctionClass):
    """Every f μ-strongly convex and L-smooth, 0 ≤ μ < L (module docstring)."""

    name = "mu-strongly convex and L-smooth"

    def __init__(self, L: float, mu: float):
        self.L = check_positive("L", L)
        self.mu = check_real("mu", mu, low=0.0, high=self.L, high_open=True)

    def rhs(self, dx: Any, g_i: Any, g_j: Any, inner: Callable[[Any, Any], Any]) -> Any:
        """⟨g_j, dx⟩ + ‖g_i − g_j‖²/(2L) + μ/(2(1 − μ/L))‖dx − (g_i − g_j)/L‖² (Taylor et al. 2017, Thm 4)."""
        L, mu = self.L, self.mu
        dg = g_i - g_j
        k = mu / (2 * (1 - mu / L))
        ex = dx - dg / L
        return inner(g_j, dx) + inner(dg, dg) / (2 * L) + k * inner(ex, ex)

    def declare(self, pep: Any) -> Any:
        """PEPit's ``SmoothStronglyConvexFunction`` with this (μ, L) (μ = 0 included)."""
        from PEPit.functions import SmoothStronglyConvexFunction

        return pep.declare_function(SmoothStronglyConvexFunction, mu=self.mu, L=self.L)

    def interpolator(self, X: np.ndarray, grads: np.ndarray, values: np.ndarray) -> SimplexInterpolant:
        """(μ/2)‖x‖² + the convex (L − μ)-smooth interpolant of the shifted data (module docstring)."""
        X, Gr, F = _data(X, grads, values)
        L, mu = self.L, self.mu
        Lp = L - mu
        H = Gr - mu * X
        phi = F - mu / 2 * np.sum(X * X, axis=1)
        S = X - H / Lp
        a = np.sum(H * H, axis=1) / (2 * Lp) - phi
        A = Lp / 2
        return SimplexInterpolant(S, a, A=A, kappa=mu, beta=A * mu / (2 * A + mu), L=L)

    @property
    def sample_curvatures(self) -> tuple[float, float]:
        """[max(μ, L/100), L]: the closed interval the sampler's smallest curvature ``lowest`` lies in."""
        return (max(self.mu, self.L / 100), self.L)

    def sample(
        self,
        dim: int,
        num_workers: int,
        sigma_G: float,
        seed: int = 0,
        *,
        sigma_L: float = 0.0,
        lowest: float | None = None,
    ) -> Problem:
        """``HeterogeneousQuadratic`` with spectrum in [``lowest``, L] (dim 1: the spectrum is {L}).

        ``lowest``: the instance's smallest curvature, in the closed interval ``sample_curvatures`` = [max(μ,
        L/100), L] (default its left end). μ = L is allowed here and not as the class's μ: the instances with
        spectrum {L} (the isotropic quadratics (L/2)‖x − c‖² + b) are members of this class for every μ < L,
        while the class μ = L itself has no interpolation *inequality* (Taylor et al.'s μ/(1 − μ/L) diverges:
        interpolation becomes the equalities g_i − g_j = L(x_i − x_j)), so it is not a
        ``StronglyConvexSmooth``."""
        from ..problems import HeterogeneousQuadratic

        floor = self.sample_curvatures[0]
        if lowest is not None:
            lowest = check_real("lowest", lowest, low=floor, high=self.L)
        mu = self.L if dim == 1 else (floor if lowest is None else lowest)
        return HeterogeneousQuadratic(
            dim=dim, num_workers=num_workers, L=self.L, mu=mu, sigma_L=sigma_L, sigma_G=sigma_G, seed=seed
        )
