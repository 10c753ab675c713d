"""Compressed gradient methods: compressed GD, distributed compressed GD, DIANA, variance identity, FedPAQ.

Encoded statements (docs/theorems.md "Compression"; C ∈ U(ω): E C(x) = x, E‖C(x) − x‖² ≤ ω‖x‖²):

* **Compressed GD** [Khirirat et al. 2018; Gorbunov et al. 2020]: f μ-strongly convex and L-smooth,
  x⁺ = x − γ C(∇f(x)), γ ≤ 1/((1 + ω)L)  ⇒  E‖x_k − x*‖² ≤ (1 − γμ)^k ‖x_0 − x*‖².
* **Distributed compressed GD** (n nodes, f = (1/n)Σf_i, f_i convex and L-smooth, independent C_i ∈ U(ω)),
  x⁺ = x − γ(1/n)Σ C_i(∇f_i(x)), γ ≤ 1/((1 + 2ω/n)L):
  E‖x_k − x*‖² ≤ (1 − γμ)^k ‖x_0 − x*‖² + 2γωζ*²/(μn),  ζ*² = (1/n)Σ‖∇f_i(x*)‖²   [M].
  Derivation (docs/compression.md): the variance identity below, ‖∇f_i(x)‖² ≤ 2‖∇f_i(x) − ∇f_i(x*)‖² +
  2‖∇f_i(x*)‖², (1/n)Σ‖∇f_i(x) − ∇f_i(x*)‖² ≤ 2L(f(x) − f*) and strong convexity. The floor is driven by the
  heterogeneity at x*; DIANA's learned shifts h_i → ∇f_i(x*) remove it (linear convergence to x* when the
  gradients are exact) [Mishchenko et al. 2019].
* **Variance identity** (exact): E‖(1/n)Σ C_i(g_i)‖² = ‖ḡ‖² + (1/n²) Σ E‖C_i(g_i) − g_i‖² for independent
  unbiased C_i.
* **FedPAQ's structural factors** [Reisizadeh et al. 2020, M]: r of n nodes sampled uniformly without
  replacement, each sending Q(Δ_i) with Q ∈ U(q):
  E‖(1/r)Σ_{i∈S} Q(Δ_i) − Δ̄‖² = (1/(rn))Σ E‖Q(Δ_i) − Δ_i‖² + ((n − r)/(r(n − 1))) (1/n)Σ‖Δ_i − Δ̄‖²
  (exact), so the quantization variance enters as q/n (at r = n) and the sampling variance as
  (n − r)/(r(n − 1)); E‖Q(x)‖² ≤ (1 + q)‖x‖² is the (1 + q) factor.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

from .._validation import check_alloc, check_array, check_int, check_nonnegative, check_positive
from ._condition import Condition

__all__ = [
    "CITATION",
    "compressed_gd_bound",
    "compressed_gd_condition",
    "diana_step",
    "distributed_bound",
    "distributed_condition",
    "distributed_floor",
    "fedpaq_factors",
    "fedpaq_variance",
    "sampling_factor",
    "symbols",
    "variance_identity",
]

CITATION = "[Khirirat et al. 2018; Gorbunov et al. 2020; Mishchenko et al. 2019; Reisizadeh et al. 2020]"

gamma, mu, L, omega, n, r, q, k, zeta2, D0 = sp.symbols(
    "gamma mu L omega n r q k zeta_star^2 D_0", positive=True
)
symbols = {
    "gamma": gamma,
    "mu": mu,
    "L": L,
    "omega": omega,
    "n": n,
    "r": r,
    "q": q,
    "k": k,
    "zeta2": zeta2,
    "D0": D0,
}

#: sympy forms
COMPRESSED_GD_STEP = 1 / ((1 + omega) * L)
COMPRESSED_GD_BOUND = (1 - gamma * mu) ** k * D0
DISTRIBUTED_STEP = 1 / ((1 + 2 * omega / n) * L)
DISTRIBUTED_FLOOR = 2 * gamma * omega * zeta2 / (mu * n)
DISTRIBUTED_BOUND = COMPRESSED_GD_BOUND + DISTRIBUTED_FLOOR
SAMPLING_FACTOR = (n - r) / (r * (n - 1))


def compressed_gd_condition(gamma_value: float, L_value: float, omega_value: float) -> Condition:
    """γ ≤ 1/((1 + ω)L) (compressed GD's step-size condition)."""
    g, Lv = check_positive("gamma", gamma_value), check_positive("L", L_value)
    w = check_nonnegative("omega", omega_value)
    return Condition(
        "step",
        sp.Le(gamma, COMPRESSED_GD_STEP),
        g,
        1.0 / ((1.0 + w) * Lv),
        False,
        "compressed GD: γ ≤ 1/((1+ω)L)",
        True,
    )


def compressed_gd_bound(
    rounds: int | ArrayLike, dist0_sq: float, gamma_value: float, mu_value: float
) -> np.ndarray:
    """(1 − γμ)^k ‖x_0 − x*‖² for k = 0..rounds."""
    rounds = check_int("rounds", rounds, low=0)
    check_alloc(f"rounds={rounds}", 8.0 * 2 * (rounds + 1))
    g, m = check_positive("gamma", gamma_value), check_positive("mu", mu_value)
    d0 = check_nonnegative("dist0_sq", dist0_sq)
    if d0 == 0.0:  # 0 · (1 − γμ)^k is 0 even where the power overflows (never 0 · inf = NaN)
        return np.zeros(rounds + 1)
    with np.errstate(over="ignore"):  # IEEE: beyond the float range the bound is ±inf
        return d0 * np.float64(1.0 - g * m) ** np.arange(rounds + 1)


def distributed_condition(gamma_value: float, L_value: float, omega_value: float, n_value: int) -> Condition:
    """γ ≤ 1/((1 + 2ω/n)L) (distributed compressed GD)."""
    g, Lv = check_positive("gamma", gamma_value), check_positive("L", L_value)
    w, nv = check_nonnegative("omega", omega_value), check_int("n", n_value, low=1)
    return Condition(
        "step",
        sp.Le(gamma, DISTRIBUTED_STEP),
        g,
        1.0 / ((1.0 + 2.0 * w / nv) * Lv),
        False,
        "distributed compressed GD: γ ≤ 1/((1+2ω/n)L)",
        True,
    )


def distributed_floor(
    gamma_value: float, mu_value: float, omega_value: float, n_value: int, zeta_star_sq: float
) -> float:
    """2γωζ*²/(μn): the neighbourhood left by compressing heterogeneous gradients, ζ*² = (1/n)Σ‖∇f_i(x*)‖²."""
    return (
        2.0
        * check_positive("gamma", gamma_value)
        * check_nonnegative("omega", omega_value)
        * check_nonnegative("zeta_star_sq", zeta_star_sq)
        / (check_positive("mu", mu_value) * check_int("n", n_value, low=1))
    )


def distributed_bound(
    rounds: int | ArrayLike,
    dist0_sq: float,
    gamma_value: float,
    mu_value: float,
    omega_value: float,
    n_value: int,
    zeta_star_sq: float,
) -> dict:
    """Named terms {"transient": (1 − γμ)^k D_0, "floor": 2γωζ*²/(μn)}, k = 0..rounds (sum = the bound)."""
    tr = compressed_gd_bound(rounds, dist0_sq, gamma_value, mu_value)
    fl = distributed_floor(gamma_value, mu_value, omega_value, n_value, zeta_star_sq)
    return {"transient": tr, "floor": np.full_like(tr, fl)}


def diana_step(omega_value: float) -> float:
    """DIANA's shift step α = 1/(1 + ω) [Mishchenko et al. 2019]."""
    return 1.0 / (1.0 + check_nonnegative("omega", omega_value))


def variance_identity(g: ArrayLike, err_sq: ArrayLike) -> float:
    """Right side ‖ḡ‖² + (1/n²)Σ_i E‖C_i(g_i) − g_i‖² for g (n, d) and per-node E‖C_i(g_i) − g_i‖² (n,)."""
    g = check_array("g", g, ndim=2)
    nn = g.shape[0]
    err_sq = check_array("err_sq", err_sq, shape=(nn,))
    if nn == 0 or np.any(err_sq < 0):
        raise ValueError(
            f"g must have at least one row and err_sq must be >= 0 (got n={nn}, "
            f"min err_sq={err_sq.min() if nn else None})"
        )
    gbar = g.mean(axis=0)
    with np.errstate(over="ignore"):
        return float(gbar @ gbar + err_sq.sum() / nn**2)


def sampling_factor(n_value: int, r_value: int) -> float:
    """(n − r)/(r(n − 1)): variance factor of the mean of r of n items drawn without replacement."""
    nv = check_int("n", n_value, low=1)
    rv = check_int("r", r_value, low=1, high=nv)
    return 0.0 if nv == 1 else (nv - rv) / (rv * (nv - 1))


def fedpaq_factors(q_value: float, n_value: int, r_value: int) -> dict:
    """FedPAQ's structural factors {"1+q", "q/n", "(n-r)/(r(n-1))"}."""
    qv, nv = check_nonnegative("q", q_value), check_int("n", n_value, low=1)
    return {"1+q": 1.0 + qv, "q/n": qv / nv, "(n-r)/(r(n-1))": sampling_factor(nv, r_value)}


def fedpaq_variance(deltas: ArrayLike, err_sq: ArrayLike, r_value: int) -> dict:
    """Exact E‖(1/r)Σ_{i∈S} Q(Δ_i) − Δ̄‖² split into {"quantization", "sampling"} for Δ (n, d), per-node
    E‖Q(Δ_i) − Δ_i‖² (n,), S a uniform r-subset (without replacement)."""
    deltas = check_array("deltas", deltas, ndim=2)
    nv = deltas.shape[0]
    rv = check_int("r", r_value, low=1, high=nv)
    err_sq = check_array("err_sq", err_sq, shape=(nv,))
    if np.any(err_sq < 0):
        raise ValueError(f"err_sq must be >= 0 (min {err_sq.min()})")
    with np.errstate(over="ignore"):
        spread = float(np.mean(np.sum((deltas - deltas.mean(axis=0)) ** 2, axis=1)))
    return {"quantization": float(err_sq.sum()) / (rv * nv), "sampling": sampling_factor(nv, rv) * spread}
