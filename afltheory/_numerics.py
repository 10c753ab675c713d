"""Reductions whose bits do not depend on array shape or memory alignment.

numpy's ``einsum`` and BLAS products may round row r of a batch differently depending on how many rows there
are (a 1-row array takes another loop; gemv vs blocked gemm) or on the data pointer's alignment (SIMD
peeling). The engine promises that replicate r is bit-identical whatever the replicate count, so the
quantities it records per replicate are reduced here by fixed sequences of elementwise operations (exact
IEEE per element, whatever the layout).
"""

from __future__ import annotations

import numpy as np

__all__ = ["matvec", "rowdot", "rowsum"]

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
