"""Lemmas of [Yang et al. 2022, Lemma 1, Lemma 2, bound (1)] as numeric evaluators.

Reading encoded (docs/theorems.md, Lemmas, [H]); a worker's update is the *average* of its K stochastic
gradients.
  Lemma 1: E G_i = (1/K) Σ_j ∇f_i(y_j),  E‖G_i − E G_i‖² ≤ σ_L²/K.
  Lemma 2: E‖Σ_{i∈M_t} G_i‖² ≤ 2‖Σ_{i∈M_t} E G_i‖² + (2m/K̄_t) σ_L²,  with m/K̄_t = Σ_{i∈M_t} 1/K_{t,i}.
  Bound (1) (Reddi et al. Lemma 4), valid under (C1) 6 η_L²(2K² − 3K + 1)L² ≤ 1:
      E‖y_k − x‖² ≤ 5 K η_L² (σ_L² + 6 K σ_G²) + 30 K² η_L² ‖∇f(x)‖²   for every k ≤ K.
Inputs broadcast over leading axes (replicates, workers, ...).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_array, check_nonnegative, check_positive
from ._stats import bound_from_terms

__all__ = [
    "CITATION",
    "drift_bound",
    "drift_bound_terms",
    "drift_condition",
    "lemma1_mean",
    "lemma1_variance_bound",
    "lemma2_bound",
    "lemma2_bound_terms",
    "local_drift",
]

CITATION = "[Yang et al. 2022, Lemma 1, Lemma 2, bound (1)]"


def _arr(name, v, low=None):
    a = check_array(name, v)
    if a.size == 0:
        raise ValueError(f"{name} is empty; expected a number or a non-empty array")
    if low is not None and np.any(a < low):
        raise ValueError(f"{name} has entries below {low} (min {a.min()})")
    return a


def _together(**arrays) -> None:
    """ValueError naming the arguments when their shapes do not broadcast together."""
    try:
        np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(a)}" for k, a in arrays.items())
        raise ValueError(f"shapes do not broadcast together: {shapes}") from None


def lemma1_mean(true_grads: ArrayLike) -> np.ndarray:
    """E G_i = (1/K) Σ_j ∇f_i(y_j); ``true_grads`` (..., K, d) the exact gradients along the local path."""
    g = _arr("true_grads", true_grads)
    if g.ndim < 2:
        raise ValueError(f"true_grads must have shape (..., K, d), got {g.shape}")
    return g.mean(axis=-2)


def lemma1_variance_bound(sigma_L: float | ArrayLike, K: int | ArrayLike) -> np.ndarray:
    """σ_L²/K: the bound on E‖G_i − E G_i‖²."""
    s = _arr("sigma_L", sigma_L, 0.0)
    k = _arr("K", K, 1.0)
    _together(sigma_L=s, K=k)
    with np.errstate(over="ignore"):
        return s**2 / k


def lemma2_bound_terms(
    expected_updates: ArrayLike, local_steps: ArrayLike, sigma_L: float
) -> dict[str, np.ndarray]:
    """Lemma 2's right-hand side by term: ``"mean"`` 2‖Σ_i E G_i‖² and ``"sigma_L"`` 2 (Σ_i 1/K_i) σ_L²
    (= (2m/K̄_t) σ_L²); they sum to ``lemma2_bound`` exactly."""
    e = _arr("expected_updates", expected_updates)
    k = _arr("local_steps", local_steps, 1.0)
    s = check_nonnegative("sigma_L", sigma_L)
    if e.ndim < 2 or k.shape != e.shape[:-1]:
        raise ValueError(f"local_steps shape {k.shape} must equal expected_updates.shape[:-1]={e.shape[:-1]}")
    with np.errstate(over="ignore"):  # IEEE: beyond the float range a term is inf
        tot = e.sum(axis=-2)
        return {
            "mean": 2.0 * np.sum(tot**2, axis=-1),
            "sigma_L": 2.0 * np.sum(1.0 / k, axis=-1) * np.float64(s) ** 2,
        }


def lemma2_bound(expected_updates: ArrayLike, local_steps: ArrayLike, sigma_L: float) -> np.ndarray:
    """2‖Σ_i E G_i‖² + 2 (Σ_i 1/K_i) σ_L²; ``expected_updates`` (..., m, d), ``local_steps`` (..., m)."""
    t = lemma2_bound_terms(expected_updates, local_steps, sigma_L)
    return t["mean"] + t["sigma_L"]


def drift_condition(L: float, eta_L: float, K: int | ArrayLike) -> bool:
    """(C1): 6 η_L² (2K² − 3K + 1) L² ≤ 1, the validity condition of bound (1)."""
    L = check_positive("L", L)
    eta_L = check_positive("eta_L", eta_L)
    k = _arr("K", K, 1.0)
    with np.errstate(over="ignore"):  # IEEE arithmetic: an overflow is inf (the condition fails), no error
        return bool(np.all(6 * np.float64(eta_L) ** 2 * (2 * k**2 - 3 * k + 1) * np.float64(L) ** 2 <= 1))


def drift_bound_terms(
    grad_norm_sq: ArrayLike,
    K: int | ArrayLike,
    eta_L: float,
    sigma_L: float,
    sigma_G: float,
    *,
    L: float | None = None,
) -> dict[str, np.ndarray]:
    """Bound (1) by term: ``"sigma_L"`` 5Kη_L²σ_L², ``"sigma_G"`` 30K²η_L²σ_G²,
    ``"gradient"`` 30K²η_L²‖∇f(x)‖² (in this order; they sum to ``drift_bound`` exactly).
    ``L`` as in ``drift_bound``."""
    g = _arr("grad_norm_sq", grad_norm_sq, 0.0)
    k = _arr("K", K, 1.0)
    eta_L = check_positive("eta_L", eta_L)
    sL = check_nonnegative("sigma_L", sigma_L)
    sG = check_nonnegative("sigma_G", sigma_G)
    if L is not None and not drift_condition(L, eta_L, k):
        raise ValueError(
            f"(C1) 6 eta_L^2 (2K^2-3K+1) L^2 <= 1 fails for L={L}, eta_L={eta_L}, "
            f"K max {k.max()}: bound (1) does not apply"
        )
    _together(grad_norm_sq=g, K=k)
    eta_L, sL, sG = np.float64(eta_L), np.float64(sL), np.float64(sG)
    with np.errstate(over="ignore", invalid="ignore"):  # IEEE: beyond the float range a term is inf
        sl, sg, gr = np.broadcast_arrays(
            5 * k * eta_L**2 * sL**2, 30 * k**2 * eta_L**2 * sG**2, 30 * k**2 * eta_L**2 * g
        )
    if any(np.isnan(a).any() for a in (sl, sg, gr)):  # 0 · inf: e.g. σ = 0 with η_L² K overflowing
        raise ValueError(
            f"drift bound undefined (0·inf) at eta_L={eta_L}, K max {k.max()}: the values are "
            f"outside the range where it can be evaluated"
        )
    return {"sigma_L": sl.astype(float), "sigma_G": sg.astype(float), "gradient": gr.astype(float)}


drift_bound = bound_from_terms(
    drift_bound_terms,
    """5Kη_L²(σ_L² + 6Kσ_G²) + 30K²η_L²‖∇f(x)‖² (the ordered sum of ``drift_bound_terms``). If ``L`` is given
    and (C1) fails, raise ValueError (the bound is not claimed there; pass L=None to evaluate it anyway, e.g.
    for a negative control).""",
)


def local_drift(trajectory: ArrayLike, x: ArrayLike) -> np.ndarray:
    """‖y_k − x‖² for a local path ``trajectory`` (..., K+1, d) started at (or compared to) ``x`` (..., d)."""
    y = _arr("trajectory", trajectory)
    x = _arr("x", x)
    if y.ndim < 2 or x.ndim < 1 or x.shape[-1] != y.shape[-1]:
        raise ValueError(f"trajectory (..., K+1, d) and x (..., d) disagree: {y.shape}, {x.shape}")
    return np.sum((y - x[..., None, :]) ** 2, axis=-1)
