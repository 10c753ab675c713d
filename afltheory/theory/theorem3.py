"""AFA-CD under uniformly distributed arrivals [Yang et al. 2022, Thm 3] (and Corollary 2, Remark 4).

M_t is a uniform m-subset of [M] drawn without replacement. Reading encoded (docs/theorems.md, Theorem 3):
server step x_{t+1} = x_t − η η_L G_t (#1); the printed left side's stray "2" (#2) is *not* applied — the
proof ends with (1/T) Σ E‖∇f(x_t)‖² ≤ RHS, which is what ``bound`` returns.

Conditions (worst case K_{t,i}, K̂_t² ≤ K_max²):
  (C1) 6 η_L² (2K² − 3K + 1) L² ≤ 1                       for all t, i
  (C2) L η η_L + L² η² η_L² τ² ≤ 1/(2M)                    [M]
  (C3) 120 L² K̂_t² η_L² τ < 1                              for all t
Bound: 4(f_0 − f_*)/(η η_L T) + 4(α_L σ_L² + α_G σ_G²),
  α_L = (L η η_L/m + 2τ² L² η² η_L²/m)(1/T) Σ_t 1/K̄_t + 5 η_L² L² (1/T) Σ_t K̃_t
  α_G = 30 L² η_L² (1/T) Σ_t K̂_t²         (no constant σ_G² floor)
Averages: ``averaging="statement"`` (default; "as in Theorem 2", i.e. over M_t) or ``"proof"`` (the proof's
(b9): K̃_t, K̂_t² over all M workers, using for a worker outside M_t its most recent K — the AFA-CS memory K
of ``Schedule.memory()``, warm start ``init_local_steps``). Inconsistency #3 is the gap between the two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _afa as afa
from . import symbols as S
from ._condition import LOCAL_DRIFT_C1, ConditionSpec, check_m_M, delay_drift, int_ge
from ._stats import check_schedule

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule

__all__ = [*afa.THEOREM_API, "AVERAGINGS", "k_averages"]

CITATION = "[Yang et al. 2022, Thm 3]"
AVERAGINGS = ("statement", "proof")

SPECS = (
    LOCAL_DRIFT_C1,
    ConditionSpec(
        "C2",
        S.L * S.eta * S.eta_L + S.L**2 * S.eta**2 * S.eta_L**2 * S.tau**2,
        1 / (2 * S.M),
        False,
        lambda L, eta, eta_L, K_max, tau, M, **_: (
            L * eta * eta_L + L**2 * eta**2 * eta_L**2 * tau**2,
            1.0 / (2 * M),
        ),
        "server step condition in x = η η_L (uniform arrivals)",
    ),
    delay_drift("C3", 120, "delay-drift condition with K̂_t² ≤ K_max², all t"),
)


def _extra_values(num_workers, m=None):
    """M = ``num_workers``; ``m`` (``conditions`` only) is only checked against it."""
    M = int_ge("num_workers", num_workers, 1)
    if m is not None:
        check_m_M(int_ge("m", m, 1), M)
    return {"M": M}


def _quad(v):
    L, tau = v["L"], v["tau"]
    return L**2 * tau**2, L, 1.0 / (2 * v["M"])


conditions, admissible_step_sizes, region = afa.condition_functions(
    "theorem3",
    __name__,
    SPECS,
    params=(afa.Param("num_workers"), afa.Param("m", admissible=False, region=False)),
    extra_values=_extra_values,
    quad=_quad,
    root=(S.L**2 * S.tau**2, S.L, 1 / (2 * S.M)),
    step="C2",
    run_values=lambda schedule: {"tau": float(schedule.delays.max()), "num_workers": schedule.num_workers},
    docs=(
        "(C1)–(C3) at the given numbers. ``m`` (optional) is only checked against ``num_workers``.",
        """Largest η for this η_L: positive root of L²τ² x² + L x = 1/(2M), x = η η_L; infeasible if (C1)/(C3)
    fail.""",
    ),
)


#: The bound's named terms, written ONCE (``_afa.cd_term_exprs``: sympy over the run averages Kbar, Ktilde,
#: Khat2 under the chosen ``averaging``, per-replicate τ): the σ_L² part of 4 α_L σ_L² split into server
#: (L η η_L/(m K̄_t)), delay (2τ²L²η²η_L²/(m K̄_t)) and local-drift (5 η_L² L² K̃_t) pieces;
#: 4 α_G σ_G² = 120 L² η_L² K̂_t² σ_G² (no floor). ``bound_terms``, ``bound_expr``, the claim and the adversary
#: evaluate these expressions.
TERM_EXPRS = afa.cd_term_exprs(delay=2, drift=5, khat=30)
#: Names of ``bound_terms`` in order.
TERMS = tuple(TERM_EXPRS)


def k_averages(schedule: Schedule, averaging: str = "statement") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(1/K̄_t, K̃_t, K̂_t²), each (replicates, rounds), under the chosen reading (see module docstring)."""
    if not isinstance(averaging, str) or averaging not in AVERAGINGS:
        raise ValueError(f"averaging={averaging!r} must be one of {AVERAGINGS}")
    check_schedule(schedule)
    inv_kbar = 1.0 / schedule.K_harmonic
    if averaging == "statement":
        return inv_kbar, schedule.K_mean, schedule.K_sq_mean
    _, Ks = schedule.memory()
    Ks = Ks.astype(float)
    return inv_kbar, Ks.mean(axis=-1), (Ks**2).mean(axis=-1)


alpha_exprs, bound_expr, rate, bound_terms, bound = afa.cd_functions(
    __name__,
    TERM_EXPRS,
    k_averages,
    """Right-hand side on each replicate's realized schedule, (replicates,): the ordered sum of
    ``bound_terms``.""",
    params=(afa.Param("averaging", "str", default="statement"),),
)
