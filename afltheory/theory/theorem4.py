"""AFA-CS: the server keeps every worker's latest update and aggregates all M [Yang et al. 2022, Thm 4].

Reading encoded (docs/theorems.md, Theorem 4): server step x_{t+1} = x_t − η η_L (1/M) Σ_{i∈[M]} G_i (#1);
memory as in ``Schedule.memory()`` (slot i holds worker i's latest update; warm start at x_0). m' = fresh
slots (computed at x_t); the other M − m' slots are stale by at most τ.

Conditions (worst case (1/M) Σ_i K_{t,i}² ≤ K_max²):
  (C1) 6 η_L² (2K² − 3K + 1) L² ≤ 1                                    for all t, i
  (C2) (L/2 + η η_L (M − m')² L² τ²/M²) η η_L ≤ 1/4                      [M]
  (C3) 30 L² η_L² τ (1/M) Σ_{i∈[M]} K_{t,i}² ≤ 1/4                       [H]
Bound (printed without E; numerator f(x_0) − f(x_T), bounded here by f_0 − f_* unless ``f_T`` is given):
  (1/T) Σ_t ‖∇f(x_t)‖² ≤ 4(f_0 − f(x_T))/(η η_L T) + α_L σ_L² + α_G σ_G²,
  α_L = (4/T) Σ_t [ 5 L² η_L² K^avg_t + (L/2 + η η_L (M − m'_t)² L² τ²/M²) · 2 η η_L/(M K̄_t) ]     [L]
  α_G = (120 L² η_L²/M)(1/T) Σ_t K̂_t²,  K̂_t² = Σ_{i∈[M]} K_slot(t,i)²  (a sum over all M slots)       [M]
where K^avg_t, 1/K̄_t are the mean and the mean inverse of the M memory slots' K (fresh: K_{t,i}; stale:
K_{t−τ_{t,i},i}). ``khat="mean"`` uses (1/M) Σ instead of Σ for K̂_t² (the "as in Theorem 2" reading).
m'_t is the realized number of fresh slots per round (the paper treats m' as a constant).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

from . import _afa as afa
from . import symbols as S
from ._condition import LOCAL_DRIFT_C1, ConditionSpec, check_m_M, int_ge, nonneg, real
from ._stats import check_f0, check_schedule, memory_stats

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule
    from ..problems.base import Constants

__all__ = [*afa.THEOREM_API, "KHATS", "realized"]

CITATION = "[Yang et al. 2022, Thm 4]"
KHATS = ("sum", "mean")

_stale_frac2 = (S.M - S.m_fresh) ** 2 / S.M**2

SPECS = (
    LOCAL_DRIFT_C1,
    ConditionSpec(
        "C2",
        (S.L / 2 + S.eta * S.eta_L * _stale_frac2 * S.L**2 * S.tau**2) * S.eta * S.eta_L,
        sp.Rational(1, 4),
        False,
        lambda L, eta, eta_L, K_max, tau, M, m_fresh, **_: (
            (L / 2 + eta * eta_L * (M - m_fresh) ** 2 * L**2 * tau**2 / M**2) * eta * eta_L,
            0.25,
        ),
        "server step condition in x = η η_L (stale slots)",
    ),
    ConditionSpec(
        "C3",
        30 * S.L**2 * S.eta_L**2 * S.tau * S.K**2,
        sp.Rational(1, 4),
        False,
        lambda L, eta, eta_L, K_max, tau, **_: (30 * L**2 * eta_L**2 * tau * K_max**2, 0.25),
        "delay-drift condition with (1/M) Σ_i K_{t,i}² ≤ K_max², all t",
    ),
)


def _extra_values(num_workers, m_fresh=None, m=None):
    """M and m' (``m_fresh``; if omitted, ``m``, the arrivals per round, checked against ``num_workers``)."""
    if m is not None:
        check_m_M(int_ge("m", m, 1), int_ge("num_workers", num_workers, 1))
    if m_fresh is None:
        m_fresh = m
    M = int_ge("num_workers", num_workers, 1)
    mf = real("m_fresh", m_fresh)
    if mf < 0 or mf > M:
        raise ValueError(f"m_fresh={m_fresh} is outside the allowed range [0, num_workers={M}]")
    return {"M": M, "m_fresh": mf}


def _run_values(schedule):
    """τ = the largest memory staleness, m' = the smallest number of fresh slots of the run."""
    stale, _, mf = memory_stats(schedule)
    return {"tau": float(stale.max()), "num_workers": schedule.num_workers, "m_fresh": float(mf.min())}


def _quad(v):
    L, tau, M, mf = v["L"], v["tau"], v["M"], v["m_fresh"]
    return (M - mf) ** 2 * L**2 * tau**2 / M**2, L / 2, 0.25


conditions, admissible_step_sizes, region = afa.condition_functions(
    "theorem4",
    __name__,
    SPECS,
    params=(afa.Param("num_workers"), afa.Param("m_fresh"), afa.Param("m", region=False)),
    extra_values=_extra_values,
    quad=_quad,
    root=(_stale_frac2 * S.L**2 * S.tau**2, S.L / 2, sp.Rational(1, 4)),
    step="C2",
    run_values=_run_values,
    docs=(
        "(C1)–(C3). ``m_fresh`` = m' (fresh slots); if omitted, ``m`` (arrivals per round) is used as m'.",
        "Largest η for this η_L: positive root of ((M−m')²L²τ²/M²) x² + (L/2) x = 1/4, x = η η_L.",
    ),
)


#: (1/T) Σ_t ((M − m'_t)/M)² / K̄_t: the run average the stale-memory term needs (realized m'_t)
Qstale = sp.Symbol("Qstale", nonnegative=True)

#: The bound's named terms, written ONCE (sympy over run averages: Ktilde = (1/T) Σ_t K^avg_t over the M
#: slots, Kbar = ((1/T) Σ_t 1/K̄_t)⁻¹ over the slots, Khat2 = (1/T) Σ_t K̂_t², ``Qstale``,
#: Delta = f_0 − f(x_T)): α_L σ_L² split into local drift (4·5 L² η_L² K^avg_t), server
#: (4·(L/2)·2 η η_L/(M K̄_t)) and stale-memory (4·η η_L (M − m'_t)² L² τ²/M² · 2 η η_L/(M K̄_t)) pieces;
#: α_G σ_G² = (120 L² η_L²/M) K̂_t² σ_G².
_x = S.eta * S.eta_L
TERM_EXPRS = {
    "transient": 4 * S.Delta / (_x * S.T),
    "sigma_L_drift": S.sigma_L**2 * 4 * 5 * S.L**2 * S.eta_L**2 * S.Ktil,
    "sigma_L_server": S.sigma_L**2 * 4 * (S.L / 2) * 2 * _x / (S.M * S.Kbar),
    "sigma_L_stale": S.sigma_L**2 * 4 * _x * S.L**2 * S.tau**2 * 2 * _x / S.M * Qstale,
    "sigma_G_drift": S.sigma_G**2 * 120 * S.L**2 * S.eta_L**2 / S.M * S.Khat2,
}
#: Names of ``bound_terms`` in order.
TERMS = tuple(TERM_EXPRS)


def alpha_exprs(khat: str = "sum") -> tuple[sp.Expr, sp.Expr]:
    """(α_L, α_G) for constant m' (Qstale = ((M − m')/M)²/K̄), read off ``TERM_EXPRS``; Kbar, Ktilde
    (= K^avg), Khat2 are run averages. ``khat`` as in ``bound``."""
    if khat not in KHATS:
        raise ValueError(f"khat={khat!r} must be one of {KHATS}")
    return afa.alphas(TERM_EXPRS, S.sigma_L**2, S.sigma_G**2, subs={Qstale: _stale_frac2 / S.Kbar})


def bound_expr(khat: str = "sum") -> sp.Expr:
    """Right-hand side as a sympy expression (``khat``: see ``alpha_exprs``)."""
    if khat not in KHATS:
        raise ValueError(f"khat={khat!r} must be one of {KHATS}")
    return afa.bound_sum(TERM_EXPRS, subs={Qstale: _stale_frac2 / S.Kbar})


def rate(khat: str = "sum") -> sp.Expr:
    """Constant K: K̄ = K^avg = K and K̂² = M K² (``khat="sum"``) or K² (``"mean"``)."""
    if khat not in KHATS:
        raise ValueError(f"khat={khat!r} must be one of {KHATS}")
    k2 = S.M * S.K**2 if khat == "sum" else S.K**2
    return bound_expr(khat).subs({**S.CONSTANT_K, S.Khat2: k2})


def realized(schedule: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(staleness, K, m'_t, τ) of the AFA-CS memory: (R,T,M), (R,T,M), (R,T), (R,)."""
    check_schedule(schedule)
    stale, Ks, mf = memory_stats(schedule)
    return stale, Ks, mf, stale.max(axis=(1, 2)).astype(float)


def _memory_terms(schedule, tau):
    """(K of each memory slot (R, T, M), realized m'_t (R, T), τ per replicate (R,)): τ = the realized maximum
    memory staleness unless ``tau`` is given (which must not be below it)."""
    _, Ks, mf, tau_mem = realized(schedule)
    if tau is None:
        return Ks, mf, tau_mem
    t = nonneg("tau", tau)
    if np.any(tau_mem > t):
        raise ValueError(f"tau={t} is below the realized maximum memory staleness {tau_mem.max()}")
    return Ks, mf, np.full(schedule.replicates, t)


def bound_terms(
    schedule: Schedule,
    constants: Constants,
    *,
    eta: float | None = None,
    eta_L: float | None = None,
    f0: float | ArrayLike | None = None,
    num_workers: int | None = None,
    tau: float | None = None,
    f_T: float | ArrayLike | None = None,
    khat: str = "sum",
    scope: str = "warn",
) -> dict[str, np.ndarray]:
    """The right-hand side split into its named terms (``TERMS``), each (replicates,); they sum to ``bound``
    exactly. Same arguments as ``bound``."""
    if khat not in KHATS:
        raise ValueError(f"khat={khat!r} must be one of {KHATS}")
    consts, eta, eta_L = afa.prepare(
        "theorem4", schedule, constants, eta=eta, eta_L=eta_L, num_workers=num_workers, scope=scope
    )
    fs = consts[3]
    R = schedule.replicates
    fT = np.full(R, fs) if f_T is None else check_f0(f_T, fs, R, name="f_T")
    f0 = check_f0(f0, fT, R)
    Ks, mf, tau_r = _memory_terms(schedule, tau)
    M = schedule.num_workers
    inv_kbar = (1.0 / Ks).mean(axis=-1)  # 1/K̄_t over the M slots, (R, T)
    khat2 = (Ks**2).sum(axis=-1) if khat == "sum" else (Ks**2).mean(axis=-1)
    frac2 = (M - mf) ** 2 / M**2  # (R, T), realized m'_t
    stats = afa.run_stats(
        consts,
        T=schedule.rounds,
        tau=tau_r,
        eta=eta,
        eta_L=eta_L,
        Delta=f0 - fT,
        M=float(M),
        Ktilde=Ks.mean(axis=-1).mean(axis=1),
        Kbar=1.0 / inv_kbar.mean(axis=1),
        Khat2=khat2.mean(axis=1),
        Qstale=(frac2 * inv_kbar).mean(axis=1),
    )
    return afa.per_replicate(TERM_EXPRS, stats, R)


bound = afa.bound_function(
    bound_terms,
    """Right-hand side on each replicate's realized schedule (stale slots' K from ``schedule.memory()``,
    realized m'_t, τ = realized maximum memory staleness unless given): (replicates,). The ordered sum of
    ``bound_terms``.

    ``f_T`` = f(x_T) (scalar or (replicates,)); default ``constants.f_star`` (a valid, weaker numerator).""",
)
