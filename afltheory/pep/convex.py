"""A strongly convex claim with a step-size schedule, certified by PEP: local GD with decreasing steps.

Claim (full participation, K = 1, σ_L = 0; classical, e.g. the contraction step of Li et al. 2020's proof):
every f_i μ-strongly convex and L-smooth, x_{t+1} = x_t − η_t (1/M) Σ_i ∇f_i(x_t) (FedAvg with η = 1, every
worker arriving every round with no delay, η_L = η_t), η_t = 2/(μ(γ + t)) with γ ≥ 2L/μ (so η_t ≤ 1/L):

    f(x_T) − f(x_*) ≤ (L/2) ‖x_0 − x_*‖² (γ − 1)(γ − 2) / ((γ + T − 1)(γ + T − 2)).

Proof sketch: for η ≤ 1/L, ‖x − η∇f(x) − x_*‖² ≤ (1 − μη) ‖x − x_*‖² (strong convexity and the descent
lemma), the product Π_t (1 − 2/(γ + t)) telescopes, and f(x) − f_* ≤ (L/2)‖x − x_*‖².

:func:`certify` solves the PEP of the same skeleton (``worst_case(..., mu=μ, gap="distance",
metric="last_gap")`` on ``FedAvg(eta=1, eta_L=StepSize(2/(μ(γ + t))))``, a scheduled rule read round by round
through ``at_round``; symmetry-reduced: all M workers are interchangeable, so the SDP does
not grow with M), compares the certified upper value with the claim, and brackets it from below by
  - the recovered worst-case instance replayed through FedAvg's own ``aggregate`` (``replay``), and
  - the closed-form worst case over the quadratics f_i = f = (λ/2)‖x − x_*‖², λ ∈ [μ, L] (class members):
    max_λ (λ/2) Π_t (1 − η_t λ)² ‖x_0 − x_*‖².
With K > 1 local steps and σ_G > 0 the PEP value is still certified for the class with Assumption 3 at the
server iterates (there is no closed form to compare with; the replay is the lower side).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_int, check_real

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule

__all__ = ["SCCertificate", "certify", "claimed_bound", "full_participation", "quadratic_worst_case", "steps"]


def full_participation(T: int, M: int, K: int = 1) -> Schedule:
    """Every worker arrives every round with no delay and K local steps."""
    from ..anarchy import Schedule

    T, M, K = (
        check_int("T", T, low=1, high=1000),
        check_int("M", M, low=1, high=64),
        check_int("K", K, low=1, high=64),
    )
    W = np.tile(np.arange(M), (T, 1))
    return Schedule(W, np.zeros_like(W), np.full(W.shape, K), M, init_local_steps=np.full(M, K))


def steps(mu: float, gamma: float, T: int) -> np.ndarray:
    """η_t = 2/(μ(γ + t)), t < T."""
    return np.array([2.0 / (mu * (gamma + t)) for t in range(T)])


def claimed_bound(*, L: float, mu: float, gamma: float, T: int, R2: float = 1.0) -> float:
    """(L/2) R² (γ − 1)(γ − 2)/((γ + T − 1)(γ + T − 2))."""
    return 0.5 * L * R2 * (gamma - 1) * (gamma - 2) / ((gamma + T - 1) * (gamma + T - 2))


def quadratic_worst_case(
    etas: np.ndarray, *, L: float, mu: float, R2: float = 1.0, grid: int = 20001
) -> float:
    """max over λ ∈ [μ, L] of (λ/2) Π_t (1 − η_t λ)² R² (GD on (λ/2)‖x − x_*‖²; a grid of λ plus the ends)."""
    lam = np.concatenate([np.linspace(mu, L, grid), [mu, L]])
    vals = 0.5 * lam * np.prod((1 - np.outer(etas, lam)) ** 2, axis=0) * R2
    return float(vals.max())


@dataclass(frozen=True)
class SCCertificate:
    """``upper``: certified PEP value (None if not certified); ``replay``: the recovered instance's
    f(x_T) − f_* run through FedAvg's ``aggregate``; ``quadratic``: the closed-form quadratic worst case
    (K = 1 only, else None); ``bound``: the claim's right side (K = 1 only); ``holds``: upper ≤ bound."""

    T: int
    M: int
    K: int
    L: float
    mu: float
    gamma: float
    sigma_G: float
    upper: float | None
    primal: float
    replay: float
    quadratic: float | None
    bound: float | None
    gram: tuple
    seconds: float

    @property
    def holds(self) -> bool | None:
        """The claim is certified (PEP upper ≤ bound); None without a bound or a certified value."""
        if self.upper is None or self.bound is None:
            return None
        return self.upper <= self.bound


def certify(
    *,
    T: int,
    M: int = 2,
    K: int = 1,
    L: float = 1.0,
    mu: float = 0.1,
    gamma: float | None = None,
    sigma_G: float = 0.0,
    R2: float = 1.0,
    symmetry: bool = True,
) -> SCCertificate:
    """PEP certificate of the decreasing-step local GD claim (module docstring). ``gamma`` defaults to 2L/μ
    (η_0 = 1/L)."""
    from ..algorithms import FedAvg
    from .core import worst_case
    from .reproduce import replay

    L = check_real("L", L, low=1e-150, high=1e150)
    mu = check_real("mu", mu, low=0.0, high=L, low_open=True, high_open=True)
    gamma = 2 * L / mu if gamma is None else check_real("gamma", gamma, low=2.0, high=1e12, low_open=True)
    S = full_participation(T, M, K)
    etas = steps(mu, gamma, T)
    from ..algorithms.schedules import StepSize
    from ..algorithms.schedules import t as t_sym

    rule = FedAvg(eta=1.0, eta_L=StepSize(2 / (t_sym + gamma) / mu))  # a scheduled rule (at_round(t))
    r = worst_case(
        rule,
        S,
        dict(L=L, sigma_G=sigma_G),
        delta=R2,
        mu=mu,
        gap="distance",
        metric="last_gap",
        heterogeneity="server",
        symmetry=symmetry,
        max_gram=1000,
    )
    _, _, rep = replay(r)
    quad = quadratic_worst_case(etas / 1.0, L=L, mu=mu, R2=R2) if K == 1 else None
    bound = claimed_bound(L=L, mu=mu, gamma=gamma, T=T, R2=R2) if (K == 1 and gamma >= 2 * L / mu) else None
    return SCCertificate(
        T,
        M,
        K,
        L,
        mu,
        gamma,
        sigma_G,
        r.upper,
        r.primal,
        rep,
        quad,
        bound,
        tuple(r.constants.get("blocks", (r.gram_size,))),
        r.seconds,
    )


def _fmt(c: SCCertificate) -> str:  # pragma: no cover - used by docs/benchmarks
    up = "n/a" if c.upper is None else f"{c.upper:.6g}"
    return (
        f"T={c.T} M={c.M} K={c.K} mu={c.mu} gamma={c.gamma:g}: PEP {up}, replay {c.replay:.6g}, "
        f"quadratic {c.quadratic if c.quadratic is None else f'{c.quadratic:.6g}'}, bound "
        f"{c.bound if c.bound is None else f'{c.bound:.6g}'} holds={c.holds} ({c.seconds:.1f} s, "
        f"Gram {c.gram}); {math.nan if c.bound is None or c.upper is None else c.upper / c.bound:.3g}"
    )
