"""Objective families with certified constants (Assumptions 1–3 of [Yang et al. 2022]).

``FAMILIES`` maps a short name to each ``Problem`` family (contract tests, sweep specs). Each family states in
its docstring which constants are exact and which are bounds, with a one-line proof.
"""

from .base import (
    Constants,
    GaussianNoise,
    LinearGaussianModel,
    LocalKernel,
    NoiseModel,
    NoNoise,
    Problem,
    as_noise,
)
from .curvature import HeterogeneousCurvatureQuadratic
from .drifting import AgentGaussianNoise, AgentSampleNoise, DriftingQuadratic, DriftingSlides
from .logistic import LogisticRegression
from .lower_bound import LowerBoundPair
from .noise import FiniteSumNoise
from .nonconvex import NonconvexSinusoidal
from .quadratic import HeterogeneousQuadratic, QuadraticProblem

FAMILIES = {
    "quadratic": HeterogeneousQuadratic,
    "curvature_quadratic": HeterogeneousCurvatureQuadratic,
    "nonconvex_sinusoidal": NonconvexSinusoidal,
    "lower_bound_pair": LowerBoundPair,
}
"""Problem families by short name. ``DriftingQuadratic`` is not a ``Problem`` (it yields one per round) and is
not listed; ``HeterogeneousQuadratic.finite_sum`` is a constructor of the "quadratic" family."""

__all__ = [
    "AgentGaussianNoise",
    "AgentSampleNoise",
    "Constants",
    "DriftingQuadratic",
    "DriftingSlides",
    "FAMILIES",
    "FiniteSumNoise",
    "GaussianNoise",
    "HeterogeneousCurvatureQuadratic",
    "HeterogeneousQuadratic",
    "LinearGaussianModel",
    "LocalKernel",
    "LogisticRegression",
    "LowerBoundPair",
    "NoNoise",
    "NoiseModel",
    "NonconvexSinusoidal",
    "Problem",
    "QuadraticProblem",
    "as_noise",
]
