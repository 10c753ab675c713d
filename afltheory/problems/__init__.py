"""Objective families with certified constants (Assumptions 1–3 of [Yang et al. 2022])."""

from .base import (
    Constants,
    GaussianNoise,
    LinearGaussianModel,
    NoiseModel,
    NoNoise,
    Problem,
    as_noise,
)
from .lower_bound import LowerBoundPair
from .quadratic import HeterogeneousQuadratic, QuadraticProblem

__all__ = [
    "Constants", "GaussianNoise", "HeterogeneousQuadratic", "LinearGaussianModel", "LowerBoundPair",
    "NoNoise", "NoiseModel", "Problem", "QuadraticProblem", "as_noise",
]
