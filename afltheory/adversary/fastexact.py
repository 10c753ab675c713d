"""Exact E‖∇f(x_t)‖² of AFA-CD / FedAvg / AFA-CS with m = M on linear-Gaussian problems, batched over
candidates.

The same second-moment recursion as ``afltheory.exact.moments`` (see its module docstring), specialized to
stateless server rules (kind "cd") with a delay pmf shared by the workers, written densely and vectorized over
a batch of B candidates that share (d, M, max delay, K_max): the adversary evaluates a whole population per
call. With z_t = (1, x̃_t, …, x̃_{t−D}), s = γ/m, Ū_i = E D_i, Δ_ij = π_ij − π_i π_j:

    S_{t+1} = Ā S Āᵀ + s² e_x [Σ_ij Δ_ij Ū_i S Ū_jᵀ + Σ_i π_i (E[D_i S D_iᵀ] − Ū_i S Ū_iᵀ + E[w² Q_i])] e_xᵀ.

``tests/adversary`` check it against ``afltheory.exact.moments`` (an independent implementation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Batch", "grad_norm_sq"]


@dataclass(frozen=True)
class Batch:
    """B candidates with a common structure. Arrays (batch axis first): ``hessians`` (B, M, d, d),
    ``b_tilde`` (B, M, d) = H_i(c_i − x*), ``noise_cov`` (B, M, d, d), ``hbar`` (B, d, d), ``x0`` (B, d)
    centred at x*, ``eta_L`` (B,), ``gamma`` (B,) = η η_L, ``m`` (int), ``pi`` (B, M) and ``pij`` (B, M, M)
    (or (B, P, M) and (B, P, M, M): a periodic deterministic sequence of arrival sets, phase t mod P),
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
    overflow gets +inf from the first non-finite round on (it is flagged by the caller, never NaN).

    Per round and candidate: the history shift is a copy; the new x̃ row R = e_x − s Σ_i π_i Ū_i costs R S and
    (R S) Rᵀ; the second-order increment is one precomputed linear map (symmetric part only) applied to the
    upper triangle of S."""
    B, M, d, _ = b.hessians.shape
    Hn = b.delay_pmf.shape[-1]
    n = 1 + Hn * d
    E, Q = _local_maps(b)
    # per phase (a periodic schedule may fix the delay and the K of each phase; i.i.d. laws have one phase)
    DP = b.delay_pmf if b.delay_pmf.ndim == 3 else b.delay_pmf[:, None]       # (B, P?, Hn)
    pK = b.k_pmf if b.k_pmf.ndim == 4 else b.k_pmf[:, None]                   # (B, P?, M, Kmax)
    Ebar = np.einsum("bpmk,bmkij->bpmij", pK, E)                       # (B, P?, M, d, 1+d): E_K[w c | w C]
    Qbar = np.einsum("bpmk,bmkij->bpmij", pK, Q)
    s = b.gamma / b.m                                                  # (B,)
    # arrival law: i.i.d. rounds (pi (B, M)) or a periodic deterministic sequence of sets (pi (B, P, M),
    # round t uses phase t mod P; e.g. cyclic arrivals). Per phase: Γ = Δ − diag(π), the noise and
    # within-worker maps
    periodic = b.pi.ndim == 3
    PI = b.pi if periodic else b.pi[:, None]
    PIJ = b.pij if periodic else b.pij[:, None]
    P = max(PI.shape[1], DP.shape[1], pK.shape[1])
    for name, a in (("pi", PI), ("delay_pmf", DP), ("k_pmf", pK)):
        if a.shape[1] not in (1, P):
            raise ValueError(f"{name} has {a.shape[1]} phases; all periodic fields need the same period {P}")
    Gamma = PIJ - PI[..., :, None] * PI[..., None, :]
    Gamma -= np.einsum("bpi,ij->bpij", PI, np.eye(M))                 # Δ − diag(π)
    Hbar2 = b.hbar @ b.hbar
    noise_x = np.einsum("bpm,bqmij->bpij", PI, Qbar) if Qbar.shape[1] == 1 else \
        np.einsum("bpm,bpmij->bpij", PI, Qbar)                         # Σ_i π_i E[w² Q_i]
    # within-worker second moment, a linear map of S_(0,τ): Σ_i π_i Σ_K p_K E_K ⊗ E_K   (B, P, d, d, 1+d, 1+d)
    W2 = np.einsum("bpm,bqmk,bmkac,bmkel->bpqaecl", PI, pK, E, E, optimize=True)
    if PI.shape[1] > 1 and pK.shape[1] > 1:
        W2 = W2[:, np.arange(P), np.arange(P)]                         # phase p's arrivals with phase p's K
    else:
        W2 = W2.reshape(B, -1, *W2.shape[3:])
    blk = np.array([np.r_[0, 1 + t * d + np.arange(d)] for t in range(Hn)])
    iu = np.triu_indices(n)
    off = iu[0] != iu[1]
    ou = np.triu_indices(d)
    # new rows that copy old rows 0 .. n−d−1
    keep = np.r_[0, np.arange(1 + d, n)]
    z = np.concatenate([np.ones((B, 1)), np.tile(b.x0, (1, Hn))], axis=1)
    S = z[:, :, None] * z[:, None, :]
    out = np.empty((B, rounds + 1))
    xs = slice(1, 1 + d)
    out[:, 0] = np.einsum("bij,bji->b", Hbar2, S[:, xs, xs])
    cache = {}
    dead = np.zeros(B, dtype=bool)
    s2 = (s * s)[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(rounds):
            ph = t % P
            key = (ph, min(t, Hn - 1))
            a_, g_, w_, n_ = (ph % x.shape[1] for x in (PI, Gamma, W2, noise_x))
            if key not in cache:
                pt = _delay_at(DP[:, ph % DP.shape[1]], t)             # (B, Hn)
                Eb = Ebar[:, ph % Ebar.shape[1]]
                U = np.zeros((B, M, d, n))
                U[..., 0] = Eb[..., 0]
                for tau in range(Hn):
                    U[..., 1 + tau * d: 1 + (tau + 1) * d] = pt[:, tau, None, None, None] * Eb[..., 1:]
                # new x̃ row of Ā
                R = -s[:, None, None] * np.einsum("bm,bmdk->bdk", PI[:, a_], U)
                R[:, :, xs] += np.eye(d)
                # Σ_ij (Δ_ij − δ_ij π_i) Ū_i S Ū_jᵀ + Σ_τ p_τ W2 S_(0,τ): one map of vec(S) → vec(d×d)
                GU = np.einsum("bij,bjel->biel", Gamma[:, g_], U)
                W = np.einsum("biak,biel->baekl", U, GU)
                for tau in range(Hn):
                    idx = blk[tau]
                    W[:, :, :, idx[:, None], idx[None, :]] += pt[:, tau, None, None, None, None] * W2[:, w_]
                W = W.reshape(B, d, d, n * n)
                # symmetric output: upper triangle
                Wu = W[:, ou[0], ou[1]]
                Wsym = Wu[..., iu[0] * n + iu[1]]
                # S symmetric: fold (k, l) and (l, k)
                Wsym[..., off] += Wu[..., iu[1] * n + iu[0]][..., off]
                cache[key] = (R, np.ascontiguousarray(np.swapaxes(Wsym, 1, 2)), noise_x[:, n_])
            R, Wt, nx = cache[key]
            RS = R @ S                                                      # (B, d, n)
            Snew = np.empty_like(S)
            Snew[:, keep[:, None], keep[None, :]] = S[:, :n - d, :n - d]
            Snew[:, xs, keep] = RS[:, :, :n - d]
            Snew[:, keep, xs] = np.swapaxes(RS[:, :, :n - d], 1, 2)
            xx = RS @ np.swapaxes(R, 1, 2)
            inc = (S[:, iu[0], iu[1]][:, None, :] @ Wt)[:, 0]                 # (B, d(d+1)/2)
            upper = np.zeros((B, d, d))
            upper[:, ou[0], ou[1]] = inc * s2
            xx += upper + np.swapaxes(upper, 1, 2)
            xx[:, np.arange(d), np.arange(d)] -= inc[:, ou[0] == ou[1]] * s2
            xx += s2[:, :, None] * nx
            Snew[:, xs, xs] = 0.5 * (xx + np.swapaxes(xx, 1, 2))
            S = Snew
            g = np.einsum("bij,bji->b", Hbar2, S[:, xs, xs])
            bad = ~np.isfinite(g) | (g > 1e300)
            if bad.any():
                dead |= bad
                S[bad] = 0.0
            g[dead] = np.inf
            out[:, t + 1] = g
    return out
