"""z-tests of Monte Carlo samples against closed-form laws (the paper checks' agreement and law verdicts).

``bonferroni_z(k, level)``: the two-sided critical value for k statistics at family-wise ``level``.
``z_ratio(diff, se)``: diff/se with a zero standard error read strictly (0 if diff is 0, else inf).
``column_z(samples, values, floor=0)``: per column, z = (mean − value)/se with se = sd/√n combined in
quadrature with an absolute ``floor`` (a rounding floor for deterministic statistics).
``gaussian_law_z(X, mean, var)``: the z-scores that test samples against N(mean, diag(var)).
Every function returns inf where a comparison is undefined or a sample diverged, never NaN.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .._validation import check_int, check_real

__all__ = ["bonferroni_z", "column_z", "gaussian_law_z", "z_ratio"]


def bonferroni_z(k: int, level: float = 0.999) -> float:
    """Two-sided ``level`` critical value with a Bonferroni correction over ``k`` statistics:
    Φ⁻¹(1 − (1 − level)/(2k))."""
    k = check_int("k", k, low=1)
    level = check_real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    return float(stats.norm.ppf(1 - (1 - level) / (2 * k)))


def z_ratio(diff: float, se: float) -> float:
    """diff/se, with a zero (or non-finite) standard error read strictly: 0 when diff is 0, else inf (never
    NaN or a ZeroDivisionError: a degenerate sample must fail a verdict, not crash it)."""
    diff, se = float(diff), float(se)
    if se > 0 and np.isfinite(se):
        return diff / se
    return 0.0 if diff == 0 else np.inf


def column_z(samples: ArrayLike, values: ArrayLike, floor: ArrayLike = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(z, se) per column of ``samples`` (n, k) (a 1-D array is one column per value): z = (mean − value)/se,
    se = √((sd/√n)² + floor²) with the sample sd (n ≥ 2). Zero se: z = 0 where the mean equals the value,
    inf elsewhere; a non-finite z (a diverged replicate, an undefined value) is inf."""
    s = np.asarray(samples, dtype=float)
    if s.ndim == 1:
        s = s[:, None]
    if s.ndim != 2 or s.shape[0] < 2:
        raise ValueError(
            f"samples has shape {s.shape}: need (n, k) with n >= 2 replicates for a standard error"
        )
    n, k = s.shape
    v = np.broadcast_to(np.asarray(values, dtype=float), (k,))
    fl = np.broadcast_to(np.asarray(floor, dtype=float), (k,))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        m = s.mean(axis=0)
        se = s.std(axis=0, ddof=1) / np.sqrt(n)
        if np.any(fl):
            se = np.sqrt(se**2 + fl**2)
        d = m - v
        z = np.where(se > 0, d / np.where(se > 0, se, 1.0), np.where(d == 0, 0.0, np.inf))
    return np.where(np.isfinite(z), z, np.inf), se


def gaussian_law_z(X: ArrayLike, mean: ArrayLike, var: ArrayLike) -> np.ndarray:
    """z-scores of samples X (N, d) against the law N(mean, diag(var)): d mean z's (known standard errors),
    the standardized χ²_{Nd} of the whitened residuals, and √N times each off-diagonal sample correlation of
    the whitened residuals (independent coordinates). Non-finite samples give inf."""
    X = np.asarray(X, dtype=float)
    if not np.all(np.isfinite(X)):
        return np.array([np.inf])
    N, d = X.shape
    W = (X - mean) / np.sqrt(var)
    zm = W.mean(axis=0) * np.sqrt(N)
    chi = float(np.sum(W**2))
    zv = (chi - N * d) / np.sqrt(2.0 * N * d)
    C = (W.T @ W) / N
    iu = np.triu_indices(d, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = C[iu] / np.sqrt(C[iu[0], iu[0]] * C[iu[1], iu[1]])
    z = np.concatenate([zm, [zv], r * np.sqrt(N)])
    return np.where(np.isfinite(z), z, np.inf)  # a degenerate (e.g. noise-free) sample fails, never NaN
