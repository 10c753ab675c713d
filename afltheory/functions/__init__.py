"""Function classes as objects (PEPit style): each states its interpolation inequality, its interpolator and
its instance sampler once (:mod:`afltheory.functions.base`); the PEP formulations, the interpolant and the
property-test strategies read them.

``SmoothNonconvex(L)`` (smooth.py), ``ConvexSmooth(L)`` (convex.py), ``StronglyConvexSmooth(L, mu)``
(strongly_convex.py); ``function_class(L, mu)`` maps the older ``mu: float | None`` convention to the object
(None: nonconvex, 0: convex, μ > 0: strongly convex).
"""

from __future__ import annotations

from .._validation import check_real
from .base import FunctionClass
from .convex import ConvexSmooth
from .smooth import SmoothInterpolant, SmoothNonconvex
from .strongly_convex import StronglyConvexSmooth

__all__ = [
    "ConvexSmooth",
    "FunctionClass",
    "SmoothInterpolant",
    "SmoothNonconvex",
    "StronglyConvexSmooth",
    "function_class",
    "resolve_class",
]


def function_class(L: float, mu: float | None = None) -> FunctionClass:
    """The class of L-smooth functions (``mu`` None), convex L-smooth (``mu`` = 0) or μ-strongly convex
    L-smooth (0 < ``mu`` < L)."""
    if mu is None:
        return SmoothNonconvex(L)
    if mu == 0:
        return ConvexSmooth(L)
    return StronglyConvexSmooth(L, mu)


def resolve_class(
    L: float, mu: float | None = None, functions: FunctionClass | None = None, *, L_name: str = "L"
) -> FunctionClass:
    """The class a caller names by ``functions`` (an object; its L must equal ``L``, named ``L_name`` in the
    error) or by ``mu`` in the older convention (``function_class``; μ in [0, L)); both only if they agree."""
    if functions is None:
        if mu is not None:
            mu = check_real("mu", mu, low=0.0, high=L, high_open=True)
        return function_class(L, mu)
    if not isinstance(functions, FunctionClass):
        raise ValueError(
            f"functions={functions!r} must be an afltheory.functions class (SmoothNonconvex, "
            f"ConvexSmooth, StronglyConvexSmooth)"
        )
    if mu is not None and mu != functions.mu:
        raise ValueError(f"mu={mu!r} contradicts functions={functions!r}: give one of them")
    if functions.L != L:
        raise ValueError(f"functions.L={functions.L} must equal {L_name}={L}")
    return functions
