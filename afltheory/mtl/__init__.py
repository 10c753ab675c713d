"""Federated multi-task learning: MOCHA [Smith et al. 2017] — problems with primal/dual/duality gap, the
distributed dual W-step with θ-approximate local solvers and stragglers, and the central Ω-step.

    prob = afltheory.mtl.synthetic_tasks(m=6, d=5, n=30, loss="squared", lam1=0.1, lam2=0.1)
    res = afltheory.mtl.mocha(prob, rounds=100, theta=0.3, drop=0.2, update_omega=False, seed=0)
    res.gap            # duality gap per round;  prob.solve_exact() → W* (squared loss, Ω fixed)

Rate statements: ``afltheory.theory.mocha``.
"""

from .mocha import MochaResult, arrival_probabilities, local_maximizer, mocha, omega_step, theta_bar
from .problem import LOSSES, MTLConstants, MultiTaskProblem, synthetic_tasks

__all__ = [
    "MultiTaskProblem",
    "MTLConstants",
    "LOSSES",
    "synthetic_tasks",
    "mocha",
    "MochaResult",
    "local_maximizer",
    "omega_step",
    "arrival_probabilities",
    "theta_bar",
]
