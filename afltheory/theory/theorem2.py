"""AFA-CD under general worker-information arrival processes [Yang et al. 2022, Thm 2] (and Corollary 1).

Reading encoded (docs/theorems.md, Theorem 2): server step x_{t+1} = x_t − η η_L G_t (the proofs' step, not
Algorithm 2's printed η G_t — inconsistency #1); a worker returns the average of its K stochastic gradients.

Conditions, for all t, i (evaluated at the worst case K_{t,i} = K_max; every left side grows with K):
  (C1) 6 η_L² (2K² − 3K + 1) L² ≤ 1
  (C2) 180 η_L² K² L² τ < 1
  (C3) 2 L η η_L + 6 τ² L² η² η_L² ≤ 1
Bound:
  (1/T) Σ_{t<T} E‖∇f(x_t)‖² ≤ 4(f_0 − f_*)/(η η_L T) + 4(α_L σ_L² + α_G σ_G²),
  α_L = (1/T) Σ_t [ (L η η_L + 3τ² L² η² η_L²)/(m K̄_t) + (15/2) L² η_L² K̃_t ]    [M: K̃ term from the proof]
  α_G = 3/2 + 45 L² η_L² (1/T) Σ_t K̂_t²
with K̄_t the harmonic mean, K̃_t the mean and K̂_t² the mean square of K_{t,i} over the arrivals M_t.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

from . import _afa as afa
from . import symbols as S
from ._condition import LOCAL_DRIFT_C1, ConditionSpec, delay_drift
from ._stats import check_constants

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule
    from ..problems.base import Constants

__all__ = [*afa.THEOREM_API, "run_averages"]

CITATION = "[Yang et al. 2022, Thm 2]"

SPECS = (
    LOCAL_DRIFT_C1,
    delay_drift("C2", 180, "delay-drift condition, all t, i"),
    ConditionSpec(
        "C3",
        2 * S.L * S.eta * S.eta_L + 6 * S.tau**2 * S.L**2 * S.eta**2 * S.eta_L**2,
        sp.Integer(1),
        False,
        lambda L, eta, eta_L, K_max, tau, **_: (
            2 * L * eta * eta_L + 6 * tau**2 * L**2 * eta**2 * eta_L**2,
            1.0,
        ),
        "server step condition in x = η η_L",
    ),
)


def _quad(v):
    L, tau = v["L"], v["tau"]
    return 6 * tau**2 * L**2, 2 * L, 1.0  # a x² + b x ≤ c, x = η η_L


conditions, admissible_step_sizes, region = afa.condition_functions(
    "theorem2",
    __name__,
    SPECS,
    quad=_quad,
    root=(6 * S.tau**2 * S.L**2, 2 * S.L, sp.Integer(1)),
    step="C3",
    run_values=lambda schedule: {"tau": float(schedule.delays.max())},  # τ = the largest realized delay
    docs=(
        "The named conditions (C1)–(C3) evaluated at the given numbers (list of ``Condition``).",
        """Largest η with every condition holding for this η_L: η_max = x*/η_L, x* the positive root of
    6τ²L² x² + 2L x = 1. Infeasible (``feasible=False``, ``eta_max=None``) if (C1) or (C2) fail.""",
    ),
)


#: The bound's named terms, written ONCE (``_afa.cd_term_exprs``: sympy over the run averages of ``symbols``:
#: Kbar, Ktilde, Khat2, per-replicate τ). The σ_L² part of 4 α_L σ_L² is split into its server
#: (L η η_L/(m K̄_t)), delay (3τ²L²η²η_L²/(m K̄_t)) and local-drift ((15/2) L² η_L² K̃_t) pieces, 4 α_G σ_G² into
#: the constant floor 6 σ_G² and the drift part 180 L² η_L² K̂_t² σ_G². ``bound_terms``, ``bound_expr``, the
#: claim (``afltheory.claims.paper``) and the adversary all evaluate these expressions.
TERM_EXPRS = afa.cd_term_exprs(delay=3, drift=sp.Rational(15, 2), floor=sp.Rational(3, 2), khat=45)
#: Names of ``bound_terms`` in order.
TERMS = tuple(TERM_EXPRS)


def run_averages(
    schedule: Schedule,
    constants: Constants,
    *,
    eta: float,
    eta_L: float,
    f0: ArrayLike,
    tau: float | None = None,
) -> dict[str, np.ndarray]:
    """The values of ``TERM_EXPRS``' symbols on each replicate's realized schedule."""
    consts = check_constants(constants)
    return afa.cd_run_stats(schedule, consts, _k_averages(schedule), eta=eta, eta_L=eta_L, f0=f0, tau=tau)


def _k_averages(schedule):
    """Theorem 2's (1/K̄_t, K̃_t, K̂_t²) over the arrivals M_t, each (replicates, rounds)."""
    return 1.0 / schedule.K_harmonic, schedule.K_mean, schedule.K_sq_mean


alpha_exprs, bound_expr, rate, bound_terms, bound = afa.cd_functions(
    __name__,
    TERM_EXPRS,
    _k_averages,
    """The right-hand side on each replicate's realized schedule (T = schedule.rounds): shape
    (replicates,).

    ``tau`` defaults to each replicate's realized maximum delay; ``f0`` = f(x_0) (scalar or (replicates,)).
    Equals the ordered sum of ``bound_terms``.""",
)
