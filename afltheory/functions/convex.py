"""The convex and L-smooth class: every Hessian's spectrum in [0, L].

It is the μ = 0 member of :mod:`afltheory.functions.strongly_convex` (same inequality, interpolator and
sampler, each stated there once):

    f_i − f_j ≥ ⟨g_j, x_i − x_j⟩ + ‖g_i − g_j‖²/(2L)          (Taylor, Hendrickx & Glineur 2017, Thm 4),

interpolated by h(x) = min_{λ∈simplex} (L/2)‖x − Sλ‖² − aᵀλ with s_p = x_p − g_p/L, a_p = ‖g_p‖²/(2L) − f_p
(inf h = min_p (f_p − ‖g_p‖²/(2L)), at s_p); sampled as strongly convex quadratics with μ = L/100.
"""

from __future__ import annotations

from .strongly_convex import StronglyConvexSmooth

__all__ = ["ConvexSmooth"]


class ConvexSmooth(StronglyConvexSmooth):
    """Every f convex and L-smooth (μ = 0)."""

    name = "convex and L-smooth"

    def __init__(self, L: float):
        super().__init__(L, 0.0)
