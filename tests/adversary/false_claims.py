"""Deliberately false user claims, each false along ONE direction of its class, with their true counterparts
(used by test_false_claims.py; every hand-derived violation point is in the claim's ``reading``).

The base model (``TRUE_MM`` etc.): FedAvg with K = 1 and server step η = 1 is SGD with step γ = η_L on
f = (1/M) Σ f_i, the gradient the mean over the m arriving workers (m of M uniformly): unbiased, variance
V ≤ (σ_L² + σ_G²)/m. The descent lemma with γ ≤ 1/L gives, for any L-smooth f,
    (1/T) Σ_{t<T} E‖∇f(x_t)‖² ≤ 2Δ/(γT) + γ L (σ_L² + σ_G²)/m                                  (TRUE)
On the canonical instance (1-D, f_i = x²/2, L = μ = 1, σ_L = 1, σ_G = 0, x_0 = x*) the iterate is the AR(1)
chain x_{t+1} = (1 − γ) x_t − γ ξ̄_t, Var ξ̄ = 1/m, so E x_t² = γ/((2 − γ) m) · (1 − (1 − γ)^{2t}) —
``canonical_sgd`` below, a plain-loop reference."""

from __future__ import annotations

import sympy as sp

from afltheory.algorithms import AsySG, FedAvg
from afltheory.claims import Assumptions, Claim, Delta, K, L, M, T, eta, eta_L, m, sigma_G, sigma_L, tau

_SGD = Assumptions(participation="uniform", max_delay=0, max_local_steps=1)
_STEP = {"step": eta * eta_L * L <= 1}
_GAMMA = eta * eta_L
_V = sigma_L**2 + sigma_G**2


def _sgd(id, noise, reading, transient=None):
    return Claim(
        id=id,
        title=id,
        assumptions=_SGD,
        rule=FedAvg,
        eta=1.0,
        bound={"transient": transient if transient is not None else 2 * Delta / (_GAMMA * T), "noise": noise},
        conditions=_STEP,
        reading=reading,
        reference="tests/adversary/false_claims.py (deliberately false)"
        if "false" in id
        else "descent lemma",
    )


TRUE_SGD = _sgd("true.sgd", _GAMMA * L * _V / m, "the descent-lemma bound (TRUE)")

FALSE_MM = _sgd(
    "false.M_over_m",
    4 * _GAMMA * L * _V / M,
    "false along large M/m: the noise term over M, not m (≥ TRUE while M/m ≤ 4). Hand-derived violation: M = "
    "8, m = 1, T = 20, γ = 1, x_0 = x*: measured (1/20) Σ_{1≤t<20} 1 = 0.95 vs bound 4/8 = 0.5 (ratio 1.9)",
)
FALSE_STEP = _sgd(
    "false.small_steps",
    4 * (_GAMMA * L) ** 2 * _V / m,
    "false along small steps: the noise term in γ², not γ (≥ TRUE while γ ≥ 1/4). Hand-derived violation: "
    "M = 2, m = 1, T = 20, η_L = 1/16: measured (1/20) Σ_{t<20} (1/31)(1 − (15/16)^{2t}) = 0.01994 vs bound "
    "4/256 = 0.015625 (ratio 1.276)",
)
FALSE_T = _sgd(
    "false.long_horizon",
    8 * _GAMMA * L * _V / (m * sp.sqrt(T)),
    "false along long horizons: the noise term decays as 1/√T (≥ TRUE while T ≤ 64). Hand-derived "
    "violation: M = 2, m = 1, γ = 1, T = 80: measured 79/80 = 0.9875 vs bound 8/√80 = 0.8944 (ratio 1.104)",
)
FALSE_X0 = _sgd(
    "false.x0_at_optimum",
    4 * Delta * _GAMMA * L * _V / m,
    "false at x_0 = x*: the noise term scaled by Δ = f(x_0) − f* (≥ TRUE while Δ ≥ 1/4), so it vanishes at "
    "the optimum. Hand-derived violation: M = 2, m = 1, T = 20, γ = 1, x_0 = x*: measured 0.95 vs bound 0",
)

# large K: FedAvg, full participation, identical workers, η = 1, K local steps with η_L K L ≤ 1. On identical
# quadratics the averaged local iterate is minibatch SGD with step η_L (variance σ_L²/M), sampled every K
# steps, so at x_0 = x* and η_L = 1/K (1-D, H = 1): E x_t² = (η_L/(2 − η_L)) (1 − q^{2t}) / M,
# q = (1 − η_L)^K; the bound below with c = 1 is TRUE on that class (noise: the SGD floor at step η_L;
# transient: (1 − η_L λ)^{2K} summed, ≤ 4Δ/(η_L K T)). Read for quadratics with identical workers.
_LOCAL = Assumptions(participation="full", heterogeneity="iid", max_delay=0)


def _local(id, c, reading):
    return Claim(
        id=id,
        title=id,
        assumptions=_LOCAL,
        rule=FedAvg,
        eta=1.0,
        bound={"transient": 4 * Delta / (_GAMMA * K * T), "noise": c * _GAMMA * L * sigma_L**2 / M},
        conditions={"step": eta * eta_L * K * L <= 1},
        reading=reading,
    )


TRUE_K = _local("true.local_steps", 1, "the minibatch-SGD floor at step η_L (TRUE on identical quadratics)")
FALSE_K = _local(
    "false.large_K",
    2 / K,
    "false along large K: the noise term × 2/K (≥ TRUE while K ≤ 2). Hand-derived violation: M = 2, K = 4, "
    "η_L = 1/4, T = 20, x_0 = x*: measured (1/20) Σ_{t<20} (1/7)(1 − 0.3164^{2t})/2 = 0.06744 vs bound "
    "2·(1/4)/(4·2) = 0.0625 (ratio 1.079)",
)

# large τ: delayed SGD (AsySG, every worker's gradient applied with delay τ), identical workers. Lian et al.
# 2015 Thm 1 with one gradient per update (their M = 1, σ² an upper bound of the averaged noise):
#   (1/T) Σ E‖∇f‖² ≤ 2Δ/(γT) + σ²Lγ + 2σ²L²τγ²  if  Lγ + 2L²τ²γ² ≤ 1          (TRUE, as the tutorial reads it)
_ASYNC = Assumptions(participation="full", heterogeneity="iid", max_local_steps=1)
_LIAN = {
    "transient": 2 * Delta / (_GAMMA * T),
    "noise": sigma_L**2 * L * _GAMMA,
    "delay": 2 * sigma_L**2 * L**2 * tau * _GAMMA**2,
}


def _async(id, bound, conditions, reading):
    return Claim(
        id=id,
        title=id,
        assumptions=_ASYNC,
        rule=AsySG,
        eta=1.0,
        bound=bound,
        conditions=conditions,
        reading=reading,
    )


TRUE_TAU = _async(
    "true.delays", _LIAN, {"step": L * _GAMMA + 2 * L**2 * tau**2 * _GAMMA**2 <= 1}, "Lian et al. 2015 Thm 1"
)
FALSE_TAU = _async(
    "false.large_tau",
    {k: 2 * v for k, v in _LIAN.items()},
    {"step": L * _GAMMA <= 1},
    "false along large τ: the step condition without its τ part (twice the bound; = TRUE's class at τ = 0). "
    "Hand-derived violation: τ = 1, γ = 1, σ_L = 0, x_0 − x* = √2 (Δ = 1), T = 20: x_{t+1} = x_t − x_{t−1} "
    "cycles through x_0, 0, −x_0, −x_0, 0, x_0, …, so (1/20) Σ x_t² = 26/20 = 1.3 vs bound 4/20 = 0.2",
)

FALSE = (FALSE_MM, FALSE_STEP, FALSE_T, FALSE_K, FALSE_TAU, FALSE_X0)
TRUE = {
    FALSE_MM.id: TRUE_SGD,
    FALSE_STEP.id: TRUE_SGD,
    FALSE_T.id: TRUE_SGD,
    FALSE_X0.id: TRUE_SGD,
    FALSE_K.id: TRUE_K,
    FALSE_TAU.id: TRUE_TAU,
}
