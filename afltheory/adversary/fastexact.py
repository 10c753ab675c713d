"""Exact E‖∇f(x_t)‖² of AFA-CD / FedAvg / AFA-CS with m = M on linear-Gaussian problems, batched over candidates.

The same second-moment recursion as ``afltheory.exact.moments`` (see its module docstring), specialized to
stateless server rules (kind "cd") with a delay pmf shared by the workers, written densely and vectorized over a
batch of B candidates that share (d, M, max delay, K_max): the adversary evaluates a whole population per call.
With z_t = (1, x̃_t, …, x̃_{t−D}), s = γ/m, Ū_i = E D_i, Δ_ij = π_ij − π_i π_j:

    S_{t+1} = Ā S Āᵀ + s² e_x [Σ_ij Δ_ij Ū_i S Ū_jᵀ + Σ_i π_i (E[D_i S D_iᵀ] − Ū_i S Ū_iᵀ + E[w² Q_i])] e_xᵀ.

``tests/adversary`` check it against ``afltheory.exact.moments`` (an independent implementation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Batch", "grad_norm_sq"]


@dataclass(frozen=True)
class Batch:
    """B candidates with a common structure. Arrays (batch axis first):
    ``hessians`` (B, M, d, d), ``b_tilde`` (B, M, d) = H_i(c_i − x*), ``noise_cov`` (B, M, d, d), ``hbar`` (B, d, d),
    ``x0`` (B, d) centred at x*, ``eta_L`` (B,), ``gamma`` (B,) = η η_L, ``m`` (int), ``pi`` (B, M), ``pij`` (B, M, M),
    ``delay_pmf`` (B, D+1) (round t clips the delay at t), ``k_pmf`` (B, M, K_max) over K = 1..K_max,
    ``weight_by_K`` (FedAvg: the server multiplies worker i's averaged gradient by K)."""

    hessians: np.ndarray
    b_tilde: np.ndarray
    noise_cov: np.ndarray
    hbar: np.ndarray
    x0: np.ndarray
    eta_L: np.ndarray
    gamma: np.ndarray
    m: int
    pi: np.ndarray
    pij: np.ndarray
    delay_pmf: np.ndarray
    k_pmf: np.ndarray
    weight_by_K: bool = False


def _local_maps(b: Batch):
    """E_K = w_K [c_K | C_K] (B, M, Kmax, d, 1+d) and Q_K w_K² (B, M, Kmax, d, d) for K = 1..Kmax."""
    B, M, d, _ = b.hessians.shape
    Kmax = b.k_pmf.shape[-1]
    I = np.eye(d)
    P = I - b.eta_L[:, None, None, None] * b.hessians                 # (B, M, d, d)
    Pj = np.broadcast_to(I, P.shape).copy()
    S = np.zeros_like(P)
    Qs = np.zeros_like(P)
    E = np.empty((B, M, Kmax, d, 1 + d))
    Q = np.empty((B, M, Kmax, d, d))
    for k in range(1, Kmax + 1):
        S += Pj
        Qs += Pj @ b.noise_cov @ np.swapaxes(Pj, -1, -2)
        Pj = Pj @ P
        w = float(k) if b.weight_by_K else 1.0
        E[:, :, k - 1, :, 0] = -(w / k) * np.einsum("bmij,bmj->bmi", S, b.b_tilde)
        E[:, :, k - 1, :, 1:] = (w / k) * (S @ b.hessians)
        Q[:, :, k - 1] = (w * w / k**2) * Qs
    return E, Q


def _delay_at(pmf, t):
    """Round-t delay pmf (B, D+1): the mass above t moved onto t."""
    if t >= pmf.shape[1] - 1:
        return pmf
    out = pmf.copy()
    out[:, t] += out[:, t + 1:].sum(axis=1)
    out[:, t + 1:] = 0.0
    return out


def grad_norm_sq(b: Batch, rounds: int) -> np.ndarray:
    """E‖∇f(x_t)‖², t = 0..rounds, for every candidate: (B, rounds + 1). A candidate whose second moments
    overflow gets +inf from the first non-finite round on (it is flagged by the caller, never NaN)."""
    B, M, d, _ = b.hessians.shape
    Hn = b.delay_pmf.shape[1]
    n = 1 + Hn * d
    E, Q = _local_maps(b)
    pK = b.k_pmf                                                       # (B, M, Kmax)
    Ebar = np.einsum("bmk,bmkij->bmij", pK, E)                         # (B, M, d, 1+d): E_K[w c | w C]
    Qbar = np.einsum("bmk,bmkij->bmij", pK, Q)
    s = b.gamma / b.m                                                  # (B,)
    Gamma = b.pij - b.pi[:, :, None] * b.pi[:, None, :]
    Gamma -= np.einsum("bi,ij->bij", b.pi, np.eye(M))                  # Δ − diag(π)
    Hbar2 = b.hbar @ b.hbar
    noise_x = np.einsum("bm,bmij->bij", b.pi, Qbar)                    # Σ_i π_i E[w² Q_i]
    # within-worker second moment, as a linear map of S_(0,τ): Σ_i π_i Σ_K p_K E_K ⊗ E_K   (B, d, d, 1+d, 1+d)
    W2 = np.einsum("bmkac,bmkel->baecl", E * (b.pi[:, :, None] * pK)[..., None, None], E)
    blk = np.array([np.r_[0, 1 + t * d + np.arange(d)] for t in range(Hn)])   # (Hn, 1+d): columns of (1, x̃_{t−τ})
    z = np.concatenate([np.ones((B, 1)), np.tile(b.x0, (1, Hn))], axis=1)
    S = z[:, :, None] * z[:, None, :]
    out = np.empty((B, rounds + 1))
    xs = slice(1, 1 + d)
    out[:, 0] = np.einsum("bij,bji->b", Hbar2, S[:, xs, xs])
    cache = {}
    dead = np.zeros(B, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(rounds):
            key = min(t, Hn - 1)
            if key not in cache:
                pt = _delay_at(b.delay_pmf, t)                          # (B, Hn)
                U = np.zeros((B, M, d, n))
                U[..., 0] = Ebar[..., 0]
                for tau in range(Hn):
                    U[..., 1 + tau * d: 1 + (tau + 1) * d] = pt[:, tau, None, None, None] * Ebar[..., 1:]
                A = np.zeros((B, n, n))
                A[:, 0, 0] = 1.0
                A[:, xs, xs] = np.eye(d)
                A[:, xs, :] -= s[:, None, None] * np.einsum("bm,bmdk->bdk", b.pi, U)
                for k in range(1, Hn):
                    A[:, 1 + k * d: 1 + (k + 1) * d, 1 + (k - 1) * d: 1 + k * d] = np.eye(d)
                # Σ_ij (Δ_ij − δ_ij π_i) Ū_i S Ū_jᵀ + Σ_τ p_τ W2 S_(0,τ), as one (d², n²) matrix acting on vec(S)
                GU = np.einsum("bij,bjel->biel", Gamma, U)
                W = np.einsum("biak,biel->baekl", U, GU)
                for tau in range(Hn):
                    idx = blk[tau]
                    W[:, :, :, idx[:, None], idx[None, :]] += pt[:, tau, None, None, None, None] * W2
                cache[key] = (A, np.ascontiguousarray(W.reshape(B, d * d, n * n)))
            A, W = cache[key]
            Snew = A @ S @ np.swapaxes(A, 1, 2)
            inc = (W @ S.reshape(B, n * n, 1)).reshape(B, d, d) + noise_x
            Snew[:, xs, xs] += (s * s)[:, None, None] * inc
            S = 0.5 * (Snew + np.swapaxes(Snew, 1, 2))
            g = np.einsum("bij,bji->b", Hbar2, S[:, xs, xs])
            bad = ~np.isfinite(g) | (g > 1e300)
            if bad.any():
                dead |= bad
                S[bad] = 0.0
            g[dead] = np.inf
            out[:, t + 1] = g
    return out


def grad_norm_sq(b: Batch, rounds: int) -> np.ndarray:
    """E‖∇f(x_t)‖², t = 0..rounds, for every candidate: (B, rounds + 1). A candidate whose second moments
    overflow gets +inf from the first non-finite round on (it is flagged by the caller, never NaN)."""
    B, M, d, _ = b.hessians.shape
    Hn = b.delay_pmf.shape[1]
    n = 1 + Hn * d
    E, Q = _local_maps(b)
    pK = b.k_pmf                                                       # (B, M, Kmax)
    ET = np.ascontiguousarray(np.swapaxes(E, -1, -2))
    Ebar = np.einsum("bmk,bmkij->bmij", pK, E)                         # (B, M, d, 1+d): E_K[w c | w C]
    Qbar = np.einsum("bmk,bmkij->bmij", pK, Q)
    s = b.gamma / b.m                                                  # (B,)
    Delta = b.pij - b.pi[:, :, None] * b.pi[:, None, :]
    Hbar2 = b.hbar @ b.hbar
    noise_x = np.einsum("bm,bmij->bij", b.pi, Qbar)                    # Σ_i π_i E[w² Q_i]
    # column index sets: block τ of z is columns 1 + τ d .. 1 + (τ+1) d
    blk = np.array([np.r_[0, 1 + t * d + np.arange(d)] for t in range(Hn)])   # (Hn, 1+d)
    z = np.concatenate([np.ones((B, 1)), np.tile(b.x0, (1, Hn))], axis=1)
    S = z[:, :, None] * z[:, None, :]
    out = np.empty((B, rounds + 1))
    xs = slice(1, 1 + d)
    out[:, 0] = np.einsum("bij,bji->b", Hbar2, S[:, xs, xs])
    cache = {}
    dead = np.zeros(B, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(rounds):
            key = min(t, Hn - 1)
            if key not in cache:
                pt = _delay_at(b.delay_pmf, t)                          # (B, Hn)
                U = np.zeros((B, M, d, n))
                U[..., 0] = Ebar[..., 0]
                for tau in range(Hn):
                    U[..., 1 + tau * d: 1 + (tau + 1) * d] = pt[:, tau, None, None, None] * Ebar[..., 1:]
                A = np.zeros((B, n, n))
                A[:, 0, 0] = 1.0
                A[:, xs, xs] = np.eye(d)
                A[:, xs, :] -= s[:, None, None] * np.einsum("bm,bmdk->bdk", b.pi, U)
                for k in range(1, Hn):
                    A[:, 1 + k * d: 1 + (k + 1) * d, 1 + (k - 1) * d: 1 + k * d] = np.eye(d)
                V = np.ascontiguousarray(np.einsum("bij,bjdk->bikd", Delta, U))   # Σ_j Δ_ij Ū_jᵀ (B, M, n, d)
                cache[key] = (pt, U, A, V, np.ascontiguousarray(np.swapaxes(U, 2, 3)))
            pt, U, A, V, UT = cache[key]
            Snew = A @ S @ np.swapaxes(A, 1, 2)
            Y = U @ S[:, None]                                             # Ū_i S (B, M, d, n)
            inc = np.swapaxes(Y, 1, 2).reshape(B, d, M * n) @ V.reshape(B, M * n, d)   # Σ_ij Δ_ij Ū_i S Ū_jᵀ
            # within-worker: Σ_i π_i (E_K,τ[D S Dᵀ] − Ū S Ūᵀ)
            Sb = S[:, blk[:, :, None], blk[:, None, :]]                    # (B, Hn, 1+d, 1+d)
            Smix = np.einsum("bt,btij->bij", pt, Sb)
            ES = (E @ Smix[:, None, None]) * pK[..., None, None]
            EDSD = (ES @ ET).sum(axis=2)                                   # (B, M, d, d)
            EDSD -= Y @ UT
            inc += np.einsum("bm,bmde->bde", b.pi, EDSD)
            inc += noise_x
            Snew[:, xs, xs] += (s * s)[:, None, None] * inc
            S = 0.5 * (Snew + np.swapaxes(Snew, 1, 2))
            g = np.einsum("bij,bji->b", Hbar2, S[:, xs, xs])
            bad = ~np.isfinite(g) | (g > 1e300)
            if bad.any():
                dead |= bad
                S[bad] = 0.0
            g[dead] = np.inf
            out[:, t + 1] = g
    return out
