"""Reductions whose bits do not depend on array shape or memory alignment, and the one divergence rule.

numpy's ``einsum`` and BLAS products may round row r of a batch differently depending on how many rows there
are (a 1-row array takes another loop; gemv vs blocked gemm) or on the data pointer's alignment (SIMD
peeling). The engine promises that replicate r is bit-identical whatever the replicate count, so the
quantities it records per replicate are reduced here by fixed sequences of elementwise operations (exact
IEEE per element, whatever the layout).
"""

from __future__ import annotations

import numpy as np

__all__ = ["DIVERGENCE_THRESHOLD", "DivergenceRule", "matvec", "rowdot", "rowsum"]

_ROWS = 64  # rows per BLAS product in matvec


def rowsum(p: np.ndarray) -> np.ndarray:
    """Σ over the last axis by a fixed pairwise tree of elementwise additions (log₂ d numpy calls)."""
    p = np.asarray(p, dtype=float)
    if p.shape[-1] == 0:
        return np.zeros(p.shape[:-1])[()]
    while p.shape[-1] > 1:
        h = p.shape[-1] // 2
        q = p[..., :h] + p[..., h : 2 * h]
        if p.shape[-1] % 2:
            q[..., :1] += p[..., -1:]
        p = q
    return p[..., 0][()]  # a numpy scalar for 1-D input (as np.sum / einsum)


def rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ_k a[..., k]·b[..., k] (``rowsum`` of the elementwise product)."""
    return rowsum(np.multiply(a, b))


def matvec(v: np.ndarray, A: np.ndarray) -> np.ndarray:
    """v @ Aᵀ for v (..., d), each row's bits independent of how many rows there are. Stacked (≥ 3-D) inputs
    run one BLAS product per leading index, of the caller's fixed (m, d) shape; 1-D and 2-D inputs are cut
    into products of exactly 64 rows (zero-padded), so row r is always row r mod 64 of a (64, d) product."""
    if v.ndim >= 3:
        return v @ A.T
    d = v.shape[-1]
    flat = v.reshape(-1, d)
    n = flat.shape[0]
    nb = -(-n // _ROWS)
    if n != nb * _ROWS:
        flat = np.concatenate([flat, np.zeros((nb * _ROWS - n, d))])
    return (flat.reshape(nb, _ROWS, d) @ A.T).reshape(-1, A.shape[0])[:n].reshape(*v.shape[:-1], A.shape[0])


#: the default factor of ``DivergenceRule`` (``simulate``'s ``divergence_threshold``, the torch runner's)
DIVERGENCE_THRESHOLD = 1e12


class DivergenceRule:
    """When a Monte Carlo run has diverged: the one rule every loop applies (``engine.simulate`` and
    ``torch_backend.run``).

    A replicate has diverged at round t when a quantity the loop records at round t is non-finite or leaves
    ``threshold`` × its start scale:
      ‖x_t‖ > threshold · max(1, ‖x_0‖)                    (the iterate; every loop records it),
      ‖∇f(x_t)‖² > threshold · max(1, max_r ‖∇f(x_0)‖²)   (when the loop records ‖∇f‖², as ``simulate``),
      |f(x_t) − f(x_0)| > threshold · max(1, |f(x_0)|)     (when it records f; losses with bounded gradients,
                                                            e.g. logistic regression, diverge in f only).
    ``x0``: (R, d) start points (or (d,)); ``grad_sq0``/``loss0``: (R,) values at x_0, or None when the loop
    does not record them (then they are not checked at any round); a round whose ``loss`` is not passed
    (the torch runner evaluates f only at its evaluation rounds) is judged on the other quantities.
    Non-finite start values count as diverged at round 0 and are left out of the scales."""

    def __init__(
        self,
        x0: np.ndarray,
        grad_sq0: np.ndarray | None = None,
        loss0: np.ndarray | None = None,
        threshold: float = DIVERGENCE_THRESHOLD,
    ):
        x0 = np.atleast_2d(np.asarray(x0, dtype=float))
        with np.errstate(over="ignore", invalid="ignore"):
            n0 = np.sqrt(rowdot(x0, x0))
        self.threshold = float(threshold)
        self.x_limit = self.threshold * np.maximum(1.0, np.where(np.isfinite(n0), n0, 0.0))
        self.grad_limit = None
        if grad_sq0 is not None:
            g0 = np.asarray(grad_sq0, dtype=float)
            g0 = g0[np.isfinite(g0)]
            self.grad_limit = self.threshold * max(1.0, float(g0.max()) if g0.size else 1.0)
        self.loss0 = None if loss0 is None else np.asarray(loss0, dtype=float).copy()
        self.loss_limit = None
        if self.loss0 is not None:
            f0 = self.loss0
            self.loss_limit = self.threshold * np.maximum(1.0, np.abs(np.where(np.isfinite(f0), f0, 0.0)))

    def __call__(
        self, x: np.ndarray, grad_sq: np.ndarray | None = None, loss: np.ndarray | None = None
    ) -> np.ndarray:
        """Per replicate (R,) bool: has this round's x (R, d) (and ‖∇f‖², f (R,), when the rule reads them and
        they are given) diverged. NaN compares False, so it is caught by the finiteness checks."""
        x = np.atleast_2d(x)
        with np.errstate(over="ignore", invalid="ignore"):
            ok = np.isfinite(x).all(axis=1) & (np.sqrt(rowdot(x, x)) <= self.x_limit)
            if self.grad_limit is not None:
                g = np.asarray(grad_sq)
                ok &= np.isfinite(g) & (g <= self.grad_limit)
            if self.loss_limit is not None and loss is not None:
                f = np.asarray(loss)
                ok &= np.isfinite(f) & (np.abs(f - self.loss0) <= self.loss_limit)
        return ~ok
