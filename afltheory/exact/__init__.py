"""Exact first and second moments for linear-Gaussian problems: expectations without Monte Carlo error.

``moments(problem, algorithm, behaviour, rounds, x0=None)`` -> ``Moments`` (E‖∇f(x_t)‖², E f(x_t), E x_t for
t = 0..rounds); ``steady_state(...)`` -> ``SteadyState`` (the t → ∞ limit where it exists);
``rounds_to_epsilon(...)``; ``project_cost(...)`` / ``ExactSystem.projected_cost(rounds)``: the time and
memory a run will take, projected before it runs (``moments`` warns or refuses from it). Supported:
quadratic problems with additive noise of known covariance (``problem.linear_gaussian()``), AFA-CD / FedAvg /
FedBuff / AsySG / AFA-CS with SGD or FedProx workers, round-mode behaviours with exact inclusion
probabilities (uniform, biased, fixed arrivals), bounded i.i.d. delays (no, uniform, fixed, geometric,
per-worker) and finite per-worker local-step pmfs. Anything else raises
``TypeError`` / ``ExactUnavailable`` (a ``ValueError``) that says why and points to ``afltheory.simulate``.
"""

from .cost import ExactCost, available_memory, project_cost
from .distance import exact_distance_sq
from .law import ExactUnavailable, RoundLaw, round_law
from .local import IMPERATIVE_HOOKS
from .moments import (
    DEFAULT_MAX_MEMORY,
    ExactCostWarning,
    ExactSystem,
    Moments,
    SteadyState,
    estimate_memory,
    moments,
    rounds_to_epsilon,
    steady_state,
    zscores,
)

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "ExactCost",
    "ExactCostWarning",
    "ExactSystem",
    "ExactUnavailable",
    "IMPERATIVE_HOOKS",
    "Moments",
    "RoundLaw",
    "SteadyState",
    "available_memory",
    "estimate_memory",
    "exact_distance_sq",
    "moments",
    "project_cost",
    "round_law",
    "rounds_to_epsilon",
    "steady_state",
    "zscores",
]
