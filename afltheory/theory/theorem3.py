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
import sympy as sp
from numpy.typing import ArrayLike

from . import _afa as afa
from . import symbols as S
from ._condition import LOCAL_DRIFT_C1, ConditionSpec, check_m_M, int_ge
from ._stats import check_f0, check_schedule, tau_for

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule
    from ..problems.base import Constants

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
    ConditionSpec(
        "C3",
        120 * S.L**2 * S.K**2 * S.eta_L**2 * S.tau,
        sp.Integer(1),
        True,
        lambda L, eta, eta_L, K_max, tau, **_: (120 * L**2 * K_max**2 * eta_L**2 * tau, 1.0),
        "delay-drift condition with K̂_t² ≤ K_max², all t",
    ),
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
        "Boolean (len(eta_L), len(eta)) grid: True where all of the theorem's conditions hold.",
    ),
)


#: The bound's named terms, written ONCE (sympy over the run averages Kbar, Ktilde, Khat2 under the chosen
#: ``averaging``, per-replicate τ): the σ_L² part of 4 α_L σ_L² split into server (L η η_L/(m K̄_t)), delay
#: (2τ²L²η²η_L²/(m K̄_t)) and local-drift (5 η_L² L² K̃_t) pieces; 4 α_G σ_G² = 120 L² η_L² K̂_t² σ_G² (no
#: floor). ``bound_terms``, ``bound_expr``, the claim and the adversary evaluate these expressions.
_x = S.eta * S.eta_L
TERM_EXPRS = {
    "transient": 4 * S.Delta / (_x * S.T),
    "sigma_L_server": 4 * S.sigma_L**2 * S.L * _x / (S.m * S.Kbar),
    "sigma_L_delay": 4 * S.sigma_L**2 * 2 * S.tau**2 * S.L**2 * _x**2 / (S.m * S.Kbar),
    "sigma_L_drift": 4 * S.sigma_L**2 * 5 * S.eta_L**2 * S.L**2 * S.Ktil,
    "sigma_G_drift": 4 * S.sigma_G**2 * 30 * S.L**2 * S.eta_L**2 * S.Khat2,
}
#: Names of ``bound_terms`` in order.
TERMS = tuple(TERM_EXPRS)


alpha_exprs, bound_expr, rate = afa.sympy_views(
    __name__,
    TERM_EXPRS,
    4 * S.sigma_L**2,
    4 * S.sigma_G**2,
    """(α_L, α_G) as sympy expressions in the run averages, read off ``TERM_EXPRS``.""",
)


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


def bound_terms(
    schedule: Schedule,
    constants: Constants,
    *,
    eta: float | None = None,
    eta_L: float | None = None,
    f0: float | ArrayLike | None = None,
    num_workers: int | None = None,
    tau: float | None = None,
    averaging: str = "statement",
    scope: str = "warn",
) -> dict[str, np.ndarray]:
    """The right-hand side split into its named terms (``TERMS``), each (replicates,); they sum to ``bound``
    exactly. Same arguments as ``bound``."""
    consts, eta, eta_L = afa.prepare(
        "theorem3", schedule, constants, eta=eta, eta_L=eta_L, num_workers=num_workers, scope=scope
    )
    f0 = check_f0(f0, consts[3], schedule.replicates)
    inv_kbar, ktil, khat2 = k_averages(schedule, averaging)
    stats = afa.run_stats(
        consts,
        T=schedule.rounds,
        tau=tau_for(schedule, tau),
        eta=eta,
        eta_L=eta_L,
        Delta=f0 - consts[3],
        m=float(schedule.m),
        Kbar=1.0 / inv_kbar.mean(axis=1),
        Ktilde=ktil.mean(axis=1),
        Khat2=khat2.mean(axis=1),
    )
    return afa.per_replicate(TERM_EXPRS, stats, schedule.replicates)


bound = afa.bound_from_terms(
    bound_terms,
    """Right-hand side on each replicate's realized schedule, (replicates,): the ordered sum of
    ``bound_terms``.``scope``: "warn" (default) / "raise" / "ignore" when the run is outside the theorem
    (wrong algorithm or arrivals, or (η, η_L) outside its conditions at the realized K_max and τ) — see
    ``theory._scope``.
    """,
)
