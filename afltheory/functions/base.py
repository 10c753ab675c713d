"""The function-class interface: one interpolation inequality, one interpolator, one instance sampler.

A class 𝓕 of functions R^d → R (L-smooth; convex and L-smooth; μ-strongly convex and L-smooth) enters a
performance-estimation problem only through its *interpolation inequality*: a finite set of triples
{(x_p, g_p, f_p)} is interpolated by some f ∈ 𝓕 (f(x_p) = f_p, ∇f(x_p) = g_p) iff for every ordered pair
(i, j)

    f_i − f_j ≥ q(x_i − x_j, g_i, g_j),

q a quadratic form fixed by the class (Taylor, Hendrickx & Glineur 2017, Thm 3.10 and Thm 4). Each class
states q once, in :meth:`FunctionClass.rhs`, over an abstract vector algebra: ``rhs(dx, g_i, g_j, inner)``
with vectors that support ``+``, ``−`` and scalar ``*``/``/`` and a bilinear ``inner(a, b)``. The same line
then builds the numpy check (vectors = arrays, ``inner`` = dot product), the dense SDP coefficients of the
orbit-reduced PEP (vectors = rows of coefficient arrays, ``inner`` = symmetrized outer product) and the
shared-function SDP of the interpolant — and the PEPit formulation declares the matching PEPit class
(:meth:`FunctionClass.declare`), so the two PEP formulations read one object.

Each class also gives its *interpolator* (:meth:`FunctionClass.interpolator`: an explicit member of the class
through interpolable data, used to turn an SDP solution into a runnable instance) and its *instance sampler*
(:meth:`FunctionClass.sample`: a library problem whose every f_i is in the class).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..problems.base import Problem
    from ._simplex import SimplexInterpolant

__all__ = ["FunctionClass"]


class FunctionClass:
    """A class of functions R^d → R given by its interpolation inequality (module docstring).

    Subclasses set ``name``, ``L`` (smoothness), ``mu`` (the lower curvature bound a PEP passes on: None for
    the nonconvex class, μ ≥ 0 for the convex classes) and implement :meth:`rhs`, :meth:`declare`,
    :meth:`interpolator` and :meth:`sample`."""

    name: str = "function class"
    L: float
    mu: float | None = None

    @property
    def convex(self) -> bool:
        """Every member is convex (the class has minimizers worth naming: x_* is a stationary point)."""
        return self.mu is not None

    @property
    def curvature(self) -> tuple[float, float]:
        """(lowest, highest) curvature of a member: the spectrum of every Hessian lies in this interval."""
        return (-self.L if self.mu is None else self.mu, self.L)

    def rhs(self, dx: Any, g_i: Any, g_j: Any, inner: Callable[[Any, Any], Any]) -> Any:
        """q(x_i − x_j, g_i, g_j): the interpolation inequality is f_i − f_j ≥ this (module docstring)."""
        raise NotImplementedError(f"{type(self).__name__} does not state its interpolation inequality")

    def declare(self, pep: Any) -> Any:
        """Declare one function of this class in a PEPit ``PEP`` (PEPit's class with the same inequality)."""
        raise NotImplementedError(f"{type(self).__name__} has no PEPit counterpart")

    def interpolator(self, X: np.ndarray, grads: np.ndarray, values: np.ndarray) -> SimplexInterpolant:
        """An explicit member of the class (for any data) that interpolates (X, grads, values) when the data
        satisfy the interpolation inequality: X, grads (P, d), values (P,)."""
        raise NotImplementedError(f"{type(self).__name__} has no interpolator")

    def sample(
        self, dim: int, num_workers: int, sigma_G: float, seed: int = 0, *, sigma_L: float = 0.0
    ) -> Problem:
        """A library problem with ``num_workers`` functions of the class on R^``dim`` (constants L of the
        class, Assumption 3 with ``sigma_G``, stochastic gradients of variance ``sigma_L``²), drawn with
        ``seed``."""
        raise NotImplementedError(f"{type(self).__name__} has no instance sampler")

    def slack(self, x_i: Any, g_i: Any, f_i: float, x_j: Any, g_j: Any, f_j: float) -> float:
        """f_i − f_j − q(x_i − x_j, g_i, g_j) for two data triples (numpy vectors): ≥ 0 iff the pair
        satisfies the interpolation inequality in the order (i, j)."""
        x_i, g_i, x_j, g_j = (np.asarray(v, dtype=float) for v in (x_i, g_i, x_j, g_j))
        return float(f_i) - float(f_j) - float(self.rhs(x_i - x_j, g_i, g_j, np.dot))

    def slacks(self, X: np.ndarray, grads: np.ndarray, values: np.ndarray) -> np.ndarray:
        """(P, P) matrix of :meth:`slack` over every ordered pair of data points (diagonal 0)."""
        X, Gr, F = _data(X, grads, values)
        P = X.shape[0]
        out = np.zeros((P, P))
        for i in range(P):
            for j in range(P):
                if i != j:
                    out[i, j] = self.slack(X[i], Gr[i], F[i], X[j], Gr[j], F[j])
        return out

    def interpolable(self, X: np.ndarray, grads: np.ndarray, values: np.ndarray, tol: float = 1e-9) -> bool:
        """Do the data satisfy every pairwise inequality, up to ``tol`` relative to the data's scale?"""
        X, Gr, F = _data(X, grads, values)
        scale = max(1.0, float(np.abs(F).max()), self.L * float(np.sum(X * X, axis=1).max()))
        return bool(self.slacks(X, Gr, F).min() >= -tol * scale)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (other.L, other.mu) == (self.L, self.mu)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.L, self.mu))

    def __repr__(self) -> str:
        mu = "" if self.mu is None or type(self).__name__ == "ConvexSmooth" else f", mu={self.mu!r}"
        return f"{type(self).__name__}(L={self.L!r}{mu})"


def _data(X, grads, values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated (P, d), (P, d), (P,) finite float arrays."""
    X, Gr, F = (np.asarray(a, dtype=float) for a in (X, grads, values))
    if X.ndim != 2 or Gr.shape != X.shape or F.shape != (X.shape[0],) or X.shape[0] < 1:
        raise ValueError(
            f"X {X.shape}, grads {Gr.shape}, values {F.shape} must be (P, d), (P, d), (P,) with P >= 1"
        )
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Gr)) and np.all(np.isfinite(F))):
        raise ValueError("X, grads and values must be finite")
    return X, Gr, F
