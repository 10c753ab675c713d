"""Drift in the exact engine, and Dynamic FedAvg's steady state [Rizk, Vlaski, Sayed 2020] (docs/dynamic.md).

**Drift hook.** With a drifting optimum (``DriftingQuadratic``: w°_{t+1} = w°_t + q_{t+1}, Cov q = Q) and
coordinates centred at the round's optimum, e_t = x_t − w°_t, a round updates from e_t − q_{t+1} (the
optimum moves first); q is independent and zero mean, so the exact second-moment recursion only replaces E
e eᵀ by E e eᵀ + Q before the round (``add_drift``); the first moment is unchanged. Needs no delays (a
stale model would see several increments) and no AFA-CS memory.

**Stein-type steady state** (``stein_steady_state``, an independent solver used to check the generic engine):
agent k maps the deviation ẽ = e − q to A_k ẽ + a_k + n_k (A_k = I − μ C_k, a_k = −μ c_k, Cov n_k = μ² Q_k,
from its E_k-step local map with step μ/E_k), and the server averages over the sampled multiset of L agents
(multiplicities N_k):

    P = (1/L²) Σ_{k,l} E[N_k N_l] (A_k (P + Q) A_lᵀ + A_k m a_lᵀ + a_k mᵀ A_lᵀ + a_k a_lᵀ) + (1/L²) Σ_k
    E[N_k] μ² Q_k,

with E N_k = L/K and, without replacement, E N_k² = π_kk = L/K, E N_k N_l = π_kl = L(L−1)/(K(K−1)) (with
replacement: L/K + L(L−1)/K² and L(L−1)/K²); m = (I − Ā)⁻¹ ā the steady mean. For one local step and a
shared Hessian this is docs/theorems.md's P = E[(I − μR̂)(P + Q)(I − μR̂)] + μ²(C_b + C_s). Solved as a d²×d²
linear system.

**First-order law** (``first_order``): MSD(μ) ≈ (μ/2) Tr(H̄⁻¹(C_b + C_s)) + Tr(H̄⁻¹Q)/(2μ), with
C_b = ((K−L)/(L(K−1))) (1/K) Σ_k b_k b_kᵀ (b_k = ∇P_k(w°)), C_s = (1/(LK)) Σ_k Cov(mini-batch gradient of
k)/E_k, minimized at μ* = sqrt(Tr(H̄⁻¹Q) / Tr(H̄⁻¹(C_b + C_s))).

**The seed's bound** (``seed_constants``, ``seed_bound``): the gradient-noise constants β_s², σ_s², ε² as the
seed states them, and the steady-state bound derived from its error recursion (not in the seed; derivation
in docs/dynamic.md): for E_k = 1 and λ(μ) = 1 − 2μν + μ²(δ² + β_s²) < 1, limsup E‖w°_i − w_i‖² ≤ [μ²(σ_s² +
ε²) + λ σ_q²] / (1 − λ) ≈ μ(σ_s² + ε²)/(2ν) + σ_q²/(2μν).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _faults
from .._validation import check_int
from .law import SIMULATE_HINT, ExactUnavailable
from .local import linear_model, local_maps

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..problems.base import Problem
    from ..problems.drifting import DriftingQuadratic

__all__ = [
    "SteinSteadyState",
    "add_drift",
    "check_supported",
    "engine_drift",
    "first_order",
    "sampling_moments",
    "seed_bound",
    "seed_constants",
    "stein_steady_state",
    "unwrap",
]


def unwrap(
    problem: Problem | DriftingQuadratic, algorithm: ServerRule | None = None
) -> tuple[Problem, np.ndarray | None]:
    """(round-0 problem, drift covariance Q or None): applies ``algorithm.prepare`` (mini-batch sizes) and
    unwraps a drifting problem (anything with ``base`` and ``drift_cov``)."""
    prepare = getattr(algorithm, "prepare", None)
    if prepare is not None:
        problem = prepare(problem)
    Q = getattr(problem, "drift_cov", None)
    if Q is not None and hasattr(problem, "base"):
        return problem.base, np.asarray(Q, dtype=float)
    return problem, None


def engine_drift(Q: np.ndarray | None, algorithm: ServerRule | None = None) -> tuple[np.ndarray | None, bool]:
    """(Q, drift_after) as the exact solvers apply the drift: Q and False (the optimum moves before the
    round), unless an engine fault is injected (``afltheory.mutants``; consulted only for a drifting
    problem, ``Q`` not None; ``algorithm``, the rule, is what a fault of the drift per round reads)."""
    if Q is None:
        return None, False
    fault = _faults.get(_faults.FaultPoint.EXACT_DRIFT_COV)
    if fault is not None:
        Q = fault(Q)
    Q = Q if (f := _faults.get(_faults.FaultPoint.EXACT_DRIFT_EPOCHS)) is None else f(Q, algorithm)
    return Q, bool(_faults.get(_faults.FaultPoint.EXACT_DRIFT_ORDER))


def check_supported(system: Any) -> None:
    """Drift needs no delays and no memory slots (ExactUnavailable otherwise)."""
    if system.drift_cov is None:
        return
    if system.Hn != 1:
        raise ExactUnavailable(
            f"a drifting optimum with delays (max_delay={system.Hn - 1}) is not "
            f"supported: a stale model sees several drift increments — {SIMULATE_HINT}"
        )
    if system.cs:
        raise ExactUnavailable(
            f"a drifting optimum with AFA-CS memory slots is not supported — {SIMULATE_HINT}"
        )


def add_drift(S: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """S + Q on the x̃ block: E (e − q)(e − q)ᵀ = E e eᵀ + Q (q independent, zero mean)."""
    d = Q.shape[0]
    S = np.array(S, copy=True)
    S[1 : 1 + d, 1 : 1 + d] += Q
    return S


# ------------------------------------------------------------------------------------ sampling and local maps
def sampling_moments(K: int, L: int, replace: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(E N_k (K,), E N_k N_l (K, K)) for L agents out of K, without (default) or with replacement."""
    K = check_int("K", K, low=1)
    L = check_int("L", L, low=1, high=None if replace else K)
    n1 = np.full(K, L / K)
    if replace:
        n2 = np.full((K, K), L * (L - 1) / K**2)
        np.fill_diagonal(n2, L / K + L * (L - 1) / K**2)
    else:
        n2 = np.full((K, K), L * (L - 1) / (K * (K - 1)) if K > 1 else 0.0)
        np.fill_diagonal(n2, L / K)
    return n1, n2


@dataclass(frozen=True)
class _Agents:
    H: np.ndarray  # (K, d, d) Hessians R_k
    Hbar: np.ndarray  # (d, d)
    b: np.ndarray  # (K, d): ∇P_k(w°) (gradient at the aggregate optimum)
    noise: np.ndarray  # (K, d, d): covariance of one mini-batch gradient
    A: np.ndarray  # (K, d, d): I − μ C_k
    a: np.ndarray  # (K, d): −μ c_k
    Qn: np.ndarray  # (K, d, d): μ² Cov n_k
    epochs: np.ndarray  # (K,)
    Q: np.ndarray  # (d, d) drift covariance (zeros if none)
    mu: float
    drifts: bool = False  # the problem has a drift law (Q given, possibly zero)


def _agents(problem, algorithm, *, drop_epoch_scaling: bool = False) -> _Agents:
    base, Q = unwrap(problem, algorithm)
    model = linear_model(base)
    K, d = model.b.shape
    mu = float(algorithm.mu)
    E = algorithm.worker.steps(K)
    steps = mu / E if not drop_epoch_scaling else np.full(K, mu)
    b_t = model.b - np.einsum("kij,j->ki", model.hessians, model.x_star)
    A, a, Qn = np.empty((K, d, d)), np.empty((K, d)), np.empty((K, d, d))
    for k in range(K):
        Ek = int(E[k])
        lm = local_maps(model.hessians[k], b_t[k], model.noise_cov[k], float(steps[k]), 0.0, {Ek})[Ek]
        # server: x_new = x − μ (1/L) Σ G_k (the model average); with the 1/E_k scaling dropped the agents
        # step μ and the server still averages their models: x_new − x = −(μ E_k) G_k
        g = mu * (E[k] if drop_epoch_scaling else 1.0)
        A[k] = np.eye(d) - g * lm.C
        a[k] = -g * lm.c
        Qn[k] = g * g * lm.Q
    return _Agents(
        model.hessians,
        model.hessian_mean,
        -b_t,
        model.noise_cov,
        A,
        a,
        Qn,
        E,
        np.zeros((d, d)) if Q is None else Q,
        mu,
        Q is not None,
    )


# ------------------------------------------------------------------------------------------ Stein steady
# state
@dataclass(frozen=True)
class SteinSteadyState:
    """Steady state of Dynamic FedAvg from the Stein-type equation: ``msd`` = tr P, ``P`` = lim E e eᵀ,
    ``mean`` = lim E e, ``spectral_radius`` of the linear map P ↦ (1/L²) Σ E[N_k N_l] A_k P A_lᵀ (stable
    iff < 1; else msd = inf and ``stable`` False)."""

    msd: float
    P: np.ndarray
    mean: np.ndarray
    spectral_radius: float
    stable: bool
    details: dict = field(default_factory=dict)


def stein_steady_state(
    problem: Problem | DriftingQuadratic,
    algorithm: ServerRule,
    L: int,
    *,
    replace: bool = False,
    drift_after: bool = False,
    drop_epoch_scaling: bool = False,
) -> SteinSteadyState:
    """lim_t E‖x_t − w°_t‖² of ``DynamicFedAvg`` on a (drifting) quadratic with L of K agents per round, by
    solving the Stein-type equation directly (module docstring). The keyword flags evaluate plausible wrong
    variants (the negative controls): agents sampled with replacement, the drift applied after the update
    (the error is then measured against an optimum the round never saw: P = 𝒯(P) + F + Q), the 1/E_k step
    scaling dropped."""
    ag = _agents(problem, algorithm, drop_epoch_scaling=drop_epoch_scaling)
    K, d = ag.b.shape
    L = check_int("L", L, low=1, high=None if replace else K)
    n1, n2 = sampling_moments(K, L, replace)
    Abar = np.einsum("k,kij->ij", n1, ag.A) / L
    abar = np.einsum("k,ki->i", n1, ag.a) / L
    # vec(A_k X A_lᵀ), row-major
    T = np.einsum("kl,kca,ldb->cdab", n2, ag.A, ag.A).reshape(d * d, d * d) / L**2
    rho = float(np.max(np.abs(np.linalg.eigvals(T))))
    if rho >= 1:
        return SteinSteadyState(np.inf, np.full((d, d), np.inf), np.full(d, np.nan), rho, False)
    m = np.linalg.solve(np.eye(d) - Abar, abar)
    Am = np.einsum("kij,j->ki", ag.A, m)
    F = (
        np.einsum("kl,ki,lj->ij", n2, Am, ag.a)
        + np.einsum("kl,ki,lj->ij", n2, ag.a, Am)
        + np.einsum("kl,ki,lj->ij", n2, ag.a, ag.a)
    ) / L**2 + np.einsum("k,kij->ij", n1, ag.Qn) / L**2
    Q, after = engine_drift(ag.Q, algorithm) if ag.drifts else (ag.Q, False)
    if drift_after or after:
        rhs = F + Q
    else:
        rhs = F + (T @ Q.ravel()).reshape(d, d)
    P = np.linalg.solve(np.eye(d * d) - T, rhs.ravel()).reshape(d, d)
    P = 0.5 * (P + P.T)
    return SteinSteadyState(
        float(np.trace(P)),
        P,
        m,
        rho,
        True,
        {
            "K": K,
            "L": L,
            "replace": replace,
            "drift_after": drift_after,
            "drop_epoch_scaling": drop_epoch_scaling,
        },
    )


# ------------------------------------------------------------------------------------------- first-order law
def first_order(
    problem: Problem | DriftingQuadratic, algorithm: ServerRule, L: int, *, replace: bool = False
) -> dict:
    """The first-order steady-state law (module docstring): a dict with ``C_b``, ``C_s``, ``Q``, ``Hbar``, the
    traces ``tr_b`` = Tr(H̄⁻¹C_b), ``tr_s`` = Tr(H̄⁻¹C_s), ``tr_q`` = Tr(H̄⁻¹Q), ``mu_star`` (inf when Q =
    0; 0 when C_b + C_s = 0) and ``msd``: a function μ ↦ (μ/2)(tr_b + tr_s) + tr_q/(2μ). ``replace``: the
    with-replacement variant (model-variability factor 1/L instead of (K − L)/(L(K − 1)))."""
    ag = _agents(problem, algorithm)
    K, d = ag.b.shape
    L = check_int("L", L, low=1, high=None if replace else K)
    factor = 1.0 / L if replace else ((K - L) / (L * (K - 1)) if K > 1 else 0.0)
    C_b = factor * np.einsum("ki,kj->ij", ag.b, ag.b) / K
    C_s = np.einsum("kij,k->ij", ag.noise, 1.0 / ag.epochs) / (L * K)
    Hinv = np.linalg.inv(ag.Hbar)
    tr_b, tr_s, tr_q = (float(np.trace(Hinv @ X)) for X in (C_b, C_s, ag.Q))
    tr_bs = tr_b + tr_s
    if tr_q == 0:
        mu_star = np.inf
    elif tr_bs == 0:
        mu_star = 0.0
    else:
        mu_star = float(np.sqrt(tr_q / tr_bs))
    return {
        "C_b": C_b,
        "C_s": C_s,
        "Q": ag.Q,
        "Hbar": ag.Hbar,
        "tr_b": tr_b,
        "tr_s": tr_s,
        "tr_q": tr_q,
        "mu_star": mu_star,
        "model_factor": factor,
        "msd": lambda mu: 0.5 * np.asarray(mu) * tr_bs + tr_q / (2.0 * np.asarray(mu)),
    }


# --------------------------------------------------------------------------------------- the seed's constants
def seed_constants(problem: Problem | DriftingQuadratic, algorithm: ServerRule, L: int) -> dict:
    """The seed's gradient-noise constants, transcribed (docs/theorems.md "Dynamic FedAvg — the claims"):
    τ_{s,k} =
    (N_k − B_k)/((N_k − 1) B_k E_k) (Gaussian data: 1/(B_k E_k)), τ_ε = (K − L)/(K − 1), β_s² = (1/(KL))
    Σ_k (6τ_{s,k} + 2τ_ε) δ², σ_s² = (3/(KL)) Σ_k τ_{s,k} E‖∇Q_k(w°; x) − ∇P_k(w°)‖², ε² = (2/(KL)) Σ_k
    τ_ε² ‖∇P_k(w°)‖²; δ = max_k λ_max(R_k) (Lipschitz gradients), ν = λ_min(H̄) (strong convexity of the
    aggregate risk). Also ``exact_noise_at_optimum`` = E‖s‖² at w = w° for one local step, Tr(C_b + C_s),
    which the seed's σ_s² + ε² must bound."""
    ag = _agents(problem, algorithm)
    base, _ = unwrap(problem, algorithm)
    K, d = ag.b.shape
    L = check_int("L", L, low=1, high=K)
    noise = base.noise
    if hasattr(noise, "sample_covariance"):
        per_sample = np.array([np.trace(noise.sample_covariance(k)) for k in range(K)])
        B = np.asarray(noise.batch, dtype=float)
        Nk = np.asarray(getattr(noise, "sizes", np.full(K, np.inf)), dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            pop = np.where(np.isfinite(Nk), (Nk - B) / np.maximum(Nk - 1, 1) / B, 1.0 / B)
    # a noise model without per-sample data: one "sample" is one stochastic gradient (B_k = 1, N_k = ∞)
    else:
        per_sample = np.einsum("kii->k", ag.noise)
        pop = np.ones(K)
    tau_s = pop / ag.epochs
    tau_e = (K - L) / (K - 1) if K > 1 else 0.0
    delta = float(max(np.linalg.eigvalsh(h)[-1] for h in ag.H))
    nu = float(np.linalg.eigvalsh(ag.Hbar)[0])
    beta2 = float(np.sum(6 * tau_s + 2 * tau_e) * delta**2 / (K * L))
    sigma_s2 = float(3.0 / (K * L) * np.sum(tau_s * per_sample))
    eps2 = float(2.0 / (K * L) * tau_e**2 * np.sum(ag.b**2))
    fo = first_order(problem, algorithm, L)
    exact0 = float(np.trace(fo["C_b"] + fo["C_s"]))
    return {
        "tau_s": tau_s,
        "tau_eps": tau_e,
        "beta_s2": beta2,
        "sigma_s2": sigma_s2,
        "eps2": eps2,
        "delta": delta,
        "nu": nu,
        "sigma_q2": float(np.trace(ag.Q)),
        "exact_noise_at_optimum": exact0,
        "exact_model_term": float(np.trace(fo["C_b"])),
        "exact_data_term": float(np.trace(fo["C_s"])),
    }


def seed_bound(problem: Problem | DriftingQuadratic, algorithm: ServerRule, L: int) -> dict:
    """The steady-state bound from the seed's error recursion with its constants (derived here,
    docs/dynamic.md): λ = 1 − 2μν + μ²(δ² + β_s²); if λ < 1, limsup MSD ≤ [μ²(σ_s² + ε²) + λσ_q²]/(1 − λ),
    split into the terms ``data`` μ²σ_s²/(1−λ), ``model`` μ²ε²/(1−λ), ``drift`` λσ_q²/(1−λ). ``inside``:
    E_k = 1 for every agent (the seed's incremental term d_i vanishes) and λ < 1. ``bound`` = inf when λ ≥
    1."""
    c = seed_constants(problem, algorithm, L)
    mu = float(algorithm.mu)
    lam = 1 - 2 * mu * c["nu"] + mu**2 * (c["delta"] ** 2 + c["beta_s2"])
    ones = bool(np.all(algorithm.worker.steps(problem.num_workers) == 1))
    if lam >= 1:
        return {**c, "lambda": lam, "bound": np.inf, "terms": {}, "inside": False, "one_step": ones}
    den = 1 - lam
    terms = {
        "data": mu**2 * c["sigma_s2"] / den,
        "model": mu**2 * c["eps2"] / den,
        "drift": lam * c["sigma_q2"] / den,
    }
    return {
        **c,
        "lambda": lam,
        "bound": float(sum(terms.values())),
        "terms": terms,
        "inside": ones,
        "one_step": ones,
    }
