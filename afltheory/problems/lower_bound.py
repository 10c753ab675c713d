"""Theorem 1's construction [Yang et al. 2022, Thm 1]: f_1(x) = (x + G)², f_2(x) = (x − G)²."""

from __future__ import annotations

import numpy as np

from .._validation import check_real
from .base import Constants, NoiseModel, as_noise, exact_certificates
from .quadratic import QuadraticProblem

__all__ = ["LowerBoundPair"]


class LowerBoundPair(QuadraticProblem):
    """Two scalar workers f_1 = (x + G)², f_2 = (x − G)², f = x² + G².

    Exact constants: L = μ = 2 (f_i'' = 2); ∇f_i − ∇f = ±2G at every x, so σ_G = 2G; x* = 0, f* = G².
    If only worker 1 ever participates, a convergent algorithm ends at x̂ = −G where ‖∇f(x̂)‖² = 4G² = σ_G².
    """

    def __init__(self, G: float = 1.0, sigma_L: float | NoiseModel = 0.0):
        # G² (f*) and 4G² (σ_G²) must be finite floats
        self.G = check_real("G", G, low=0.0, low_open=True, high=1e150)
        noise = as_noise(sigma_L)
        # (x ± G)² = ½ · 2 · (x ± G)²: Hessian 2, centres ∓G, no offsets.
        super().__init__(np.array([[2.0]]), np.array([[-self.G], [self.G]]), np.zeros(2), noise, kind="diag")
        self.constants = Constants(
            L=2.0,
            mu=2.0,
            sigma_L=noise.sigma_L,
            sigma_G=2.0 * self.G,
            f_star=self.G**2,
            x_star=np.zeros(1),
            certified=exact_certificates(noise),
        )

    def __repr__(self):
        return f"LowerBoundPair(G={self.G}, sigma_L={self.constants.sigma_L})"
