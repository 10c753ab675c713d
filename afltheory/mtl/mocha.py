"""MOCHA [Smith et al. 2017, Algorithm 1]: the W-step as a CoCoA-style distributed dual method with
θ-approximate local solvers, stragglers from the anarchy components, and the central Ω-step.

Round h (Ω fixed within the round): the server sends w_t = W(α)[:, t]; node t approximately maximizes its
local subproblem (the seed's G_t^{σ'}, written here as a maximization of the dual's separable lower model)

    G_t(Δα_t) = −Σ_i ℓ*(−α_t^i − Δα_t^i) − w_tᵀ X_tᵀΔα_t − (σ' C_tt / 4) ‖X_tᵀΔα_t‖²,

and the server adds the returned updates (α ← α + Δα: "adding", γ = 1). With σ' ≥ σ'_min (``constants``),
D(α + Δα) − D(α) ≥ Σ_t [G_t(Δα_t) − G_t(0)], so every round is an ascent step.

Per-node accuracy θ_t^h (the seed's Definition 1): θ = (G(Δ*) − G(Δ))/(G(Δ*) − G(0)). It is an *input*:
- squared loss: G_t is a concave quadratic, so Δ = (1 − √θ) Δ* has relative suboptimality exactly θ;
- hinge / smoothed hinge: Δ* is computed by ``local_passes`` passes of coordinate ascent (SDCA) and
  Δ = (1 − θ) Δ*; by concavity the realized θ is at most θ (``MochaResult.theta`` holds the realized values).
A node that does not arrive in a round (the behaviour's arrivals, or an independent ``drop`` probability)
contributes θ = 1 (Δ = 0). θ may be a number or a pair (low, high): θ ~ U[low, high] per node and round.
Delays of the behaviour are not used (the W-step is synchronous; lateness is expressed as θ = 1).

Ω-step (``update_omega=True``, after each W-step): the seed's closed form Σ = (WᵀW)^{1/2}/tr((WᵀW)^{1/2}) is
the task *covariance* that minimizes tr(W Σ⁻¹ Wᵀ) over {Σ ≻ 0, tr Σ = 1}; the regularizer λ₁ tr(WΩWᵀ) then
uses Ω = Σ⁻¹ (computed with WᵀW + ε'I, ε' = ``omega_eps``·max(1, tr WᵀW), so Σ stays invertible). With this
reading the Ω-step never increases the primal objective (a test); the seed prints Ω in the regularizer and the
covariance's closed form for the Ω-step, which are only consistent under this inverse relation (docs/mtl.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .. import _faults
from .._validation import check_array, check_int, check_positive, check_real
from ..theory.mocha import theta_bar
from .problem import MultiTaskProblem

if TYPE_CHECKING:
    from ..anarchy.behaviour import BehaviourLike

__all__ = ["mocha", "MochaResult", "local_maximizer", "omega_step", "arrival_probabilities", "theta_bar"]


@dataclass(frozen=True)
class MochaResult:
    """``W`` (d × m), ``Omega`` (the matrix in the regularizer), ``alpha`` (list of (n_t,)), per-round
    ``primal``/``dual``/``gap`` (rounds + 1,), realized ``theta`` (rounds, m; 1 for absent nodes), ``arrived``
    (rounds, m), ``problem`` (with the final Ω)."""

    W: np.ndarray
    Omega: np.ndarray
    alpha: list
    primal: np.ndarray
    dual: np.ndarray
    gap: np.ndarray
    theta: np.ndarray
    arrived: np.ndarray
    problem: MultiTaskProblem
    sigma_prime: float


def _G(problem: MultiTaskProblem, t: int, alpha_t, w_t, delta, q: float) -> float:
    x, y = problem.X[t], problem.y[t]
    u = x.T @ delta
    return float(-problem._conj(alpha_t + delta, y).sum() - w_t @ u - q * (u @ u))


def local_maximizer(
    problem: MultiTaskProblem,
    t: int,
    alpha_t: np.ndarray,
    w_t: np.ndarray,
    sigma_prime: float,
    *,
    local_passes: int = 50,
) -> np.ndarray:
    """Δα_t* = argmax G_t (closed form for the squared loss, ``local_passes`` SDCA passes otherwise)."""
    x, y = problem.X[t], problem.y[t]
    q = sigma_prime * problem.C[t, t] / 4.0  # G's quadratic coefficient on ‖X_tᵀΔ‖²
    if problem.loss == "squared":
        n = len(y)
        try:
            return np.linalg.solve(np.eye(n) + 2 * q * (x @ x.T), y - alpha_t - x @ w_t)
        except np.linalg.LinAlgError:
            raise ValueError(
                f"sigma_prime={sigma_prime}: the local subproblem of task {t} is numerically "
                f"singular (I + 2q XXᵀ with q = {q:.3g}); use a smaller sigma_prime"
            ) from None
    gam = 0.0 if problem.loss == "hinge" else problem.gamma
    beta = alpha_t * y  # β ∈ [0, 1]
    beta0 = beta.copy()
    u = np.zeros(problem.d)  # X_tᵀΔ
    sq = np.einsum("ij,ij->i", x, x)
    for _ in range(local_passes):
        for i in range(len(y)):
            # maximize β − (γ/2)β² − g·y·(β − β_i) − q_i (β − β_i)² over β ∈ [0, 1]
            g = x[i] @ (w_t + 2 * q * u)  # derivative of the linear + coupling terms in Δ_i
            qi = q * sq[i]
            den = gam + 2 * qi
            new = (
                (1.0 - g * y[i] + 2 * qi * beta[i]) / den if den > 0 else (1.0 if 1.0 - g * y[i] > 0 else 0.0)
            )
            new = min(1.0, max(0.0, new))
            if new != beta[i]:
                u += (new - beta[i]) * y[i] * x[i]
                beta[i] = new
    return (beta - beta0) * y


def arrival_probabilities(
    behaviour: BehaviourLike, m: int, drop: float = 0.0, rounds: int = 2000, seed: int = 0
) -> np.ndarray:
    """P[node t arrives in a round] for each t: exact from the arrivals' inclusion probabilities when
    available, else the frequency over ``rounds`` sampled rounds; times (1 − drop)."""
    m = check_int("m", m, low=1)
    drop = check_real("drop", drop, low=0.0, high=1.0, high_open=True)
    rounds, seed = check_int("rounds", rounds, low=1), check_int("seed", seed, low=0)
    if behaviour is not None and not callable(getattr(behaviour, "sample", None)):
        raise TypeError(
            f"behaviour={behaviour!r} (type {type(behaviour).__name__}) must be an "
            f"afltheory.anarchy behaviour (Behaviour, Replay, EventDriven, Synchronous) or None"
        )
    if behaviour is None:
        pi = np.ones(m)
    else:
        arr = getattr(behaviour, "arrivals", None)
        inc = arr.inclusion(m) if arr is not None and hasattr(arr, "inclusion") else None
        if inc is not None:
            pi = np.asarray(inc[0], dtype=float)
        else:
            s = behaviour.sample(rounds, 1, m, seed)
            pi = np.bincount(s.workers.ravel(), minlength=m) / rounds
    return pi * (1.0 - drop)


def omega_step(W: np.ndarray, eps: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """(Ω, Σ): Σ = (WᵀW + ε' I)^{1/2}/tr(·) and Ω = Σ⁻¹, ε' = ε · max(1, tr WᵀW) (relative, so identical task
    columns give a large but finite Ω; see the module docstring)."""
    W = check_array("W", W, ndim=2)
    if W.shape[1] < 1:
        raise ValueError(f"W has shape {W.shape}; expected (d, m) with m >= 1 task columns")
    eps = check_real("eps", eps, low=0.0, high=1.0, low_open=True)  # relative to tr WᵀW
    m = W.shape[1]
    with np.errstate(over="ignore"):
        G = W.T @ W
        eps = eps * max(1.0, float(np.trace(G)))
    if not (np.all(np.isfinite(G)) and np.isfinite(eps)):
        raise ValueError(f"W is too large: WᵀW overflows (max |W| = {np.abs(W).max():.3g})")
    ev, U = np.linalg.eigh(G + eps * np.eye(m))
    root = (U * np.sqrt(np.maximum(ev, 0.0))) @ U.T
    Sigma = root / np.trace(root)
    Omega = (U * (np.trace(root) / np.sqrt(np.maximum(ev, eps)))) @ U.T
    return (Omega + Omega.T) / 2, Sigma


def _theta_law(theta):
    if isinstance(theta, (tuple, list)):
        if len(theta) != 2:
            raise ValueError(f"theta={theta!r} must be a number in [0, 1] or a pair (low, high)")
        lo = check_real("theta[0]", theta[0], low=0.0, high=1.0)
        hi = check_real("theta[1]", theta[1], low=lo, high=1.0)
        return lo, hi
    th = check_real("theta", theta, low=0.0, high=1.0)
    return th, th


def mocha(
    problem: MultiTaskProblem,
    rounds: int,
    *,
    theta: float | tuple[float, float] = 0.0,
    behaviour: BehaviourLike | None = None,
    drop: float = 0.0,
    update_omega: bool = True,
    seed: int = 0,
    sigma_prime: float | None = None,
    local_passes: int = 50,
    omega_eps: float = 1e-4,
    alpha0: Sequence[ArrayLike] | None = None,
) -> MochaResult:
    """Run MOCHA for ``rounds`` W-steps (each followed by an Ω-step if ``update_omega``).

    ``theta``: per-node accuracy θ ∈ [0, 1] or (low, high); ``behaviour``: an ``afltheory.anarchy`` behaviour
    whose arrivals decide which nodes participate (the m tasks are its workers); ``drop`` ∈ [0, 1):
    independent per-node, per-round drop probability; ``sigma_prime``: default the current problem's smallest
    safe value σ'_min (recomputed after each Ω-step; ``MochaResult.sigma_prime`` is the last one used)."""
    if not isinstance(problem, MultiTaskProblem):
        raise ValueError(f"problem={problem!r} must be a MultiTaskProblem")
    rounds = check_int("rounds", rounds, low=0)
    lo, hi = _theta_law(theta)
    drop = check_real("drop", drop, low=0.0, high=1.0, high_open=True)
    local_passes = check_int("local_passes", local_passes, low=1)
    sp = (
        problem.constants.sigma_prime_min
        if sigma_prime is None
        else check_positive("sigma_prime", sigma_prime)
    )
    rng = np.random.default_rng(np.random.SeedSequence([check_int("seed", seed, low=0), 0x40C4A]))
    m = problem.m
    if behaviour is not None:
        if not callable(getattr(behaviour, "sample", None)):
            raise TypeError(
                f"behaviour={behaviour!r} (type {type(behaviour).__name__}) must be an "
                "afltheory.anarchy behaviour (Behaviour, Replay, EventDriven, Synchronous) or None"
            )
        if getattr(behaviour, "m", 1) > m:
            raise ValueError(f"the behaviour's m={behaviour.m} exceeds the number of tasks {m}")
        sched = behaviour.sample(max(rounds, 1), 1, m, int(rng.integers(2**31)))
        arrived = np.zeros((max(rounds, 1), m), dtype=bool)
        np.put_along_axis(arrived, sched.workers[0], True, axis=1)
        arrived = arrived[:rounds]
    else:
        arrived = np.ones((rounds, m), dtype=bool)
    if drop > 0:
        arrived &= rng.random((rounds, m)) >= drop
    alpha = problem.zero_alpha() if alpha0 is None else [a.copy() for a in problem._alpha_check(alpha0)]
    prob = problem
    P, D, T = np.empty(rounds + 1), np.empty(rounds + 1), np.ones((rounds, m))

    def record(h):
        W = prob.primal_point(alpha)
        P[h], D[h] = prob.primal(W), prob.dual(alpha)
        return W

    W = record(0)
    for h in range(rounds):
        C = prob.C
        if sigma_prime is None:  # Ω may have changed: keep σ' safe for the current C
            sp = prob.constants.sigma_prime_min
        deltas = []
        for t in range(m):
            if not arrived[h, t]:
                deltas.append(None)
                continue
            th = lo if lo == hi else float(rng.uniform(lo, hi))
            dstar = local_maximizer(prob, t, alpha[t], W[:, t], sp, local_passes=local_passes)
            scale = (1.0 - np.sqrt(th)) if prob.loss == "squared" else (1.0 - th)
            delta = scale * dstar
            q = sp * C[t, t] / 4.0
            g0, gs, gd = (_G(prob, t, alpha[t], W[:, t], v, q) for v in (0 * dstar, dstar, delta))
            T[h, t] = (gs - gd) / (gs - g0) if gs - g0 > 1e-300 else 0.0
            deltas.append(delta)
        for t, dl in enumerate(deltas):
            if dl is not None:
                alpha[t] = alpha[t] + dl
        if update_omega:
            Wn = prob.primal_point(alpha)
            Omega, Sigma = omega_step(Wn, omega_eps)
            fault = _faults.get(_faults.FaultPoint.MTL_OMEGA)  # None unless a MOCHA mutant is injected
            if fault is not None:
                Omega = fault(Omega, Sigma)
            prob = prob.with_omega(Omega)
        W = record(h + 1)
    return MochaResult(
        W=W,
        Omega=prob.Omega,
        alpha=alpha,
        primal=P,
        dual=D,
        gap=P - D,
        theta=T,
        arrived=arrived,
        problem=prob,
        sigma_prime=float(sp),
    )
