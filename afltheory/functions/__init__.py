"""Function classes as objects (PEPit style): each states its interpolation inequality, its interpolator and
its instance sampler once (:mod:`afltheory.functions.base`); the PEP formulations, the interpolant and the
property-test strategies read them.

``SmoothNonconvex(L)`` (smooth.py), ``ConvexSmooth(L)`` (convex.py), ``StronglyConvexSmooth(L, mu)``
(strongly_convex.py); ``function_class(L, mu)`` maps the older ``mu: float | None`` convention to the object
(None: nonconvex, 0: convex, μ > 0: strongly convex).
"""

from __future__ import annotations

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
]


def function_class(L: float, mu: float | None = None) -> FunctionClass:
    """The class of L-smooth functions (``mu`` None), convex L-smooth (``mu`` = 0) or μ-strongly convex
    L-smooth (0 < ``mu`` < L)."""
    if mu is None:
        return SmoothNonconvex(L)
    if mu == 0:
        return ConvexSmooth(L)
    return StronglyConvexSmooth(L, mu)
