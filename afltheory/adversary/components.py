"""Parameterized building blocks of the adversary's assumption classes, usable by every backend.

``PmfDelay``: i.i.d. delays with an arbitrary pmf on {0, …, τ} (round t clips a draw to min(τ_draw, t), so the
pmf of round t moves the mass of {t+1, …, τ} onto t); ``PmfSteps``: i.i.d. local-step counts with a per-worker
pmf on {1, …, K_max}; ``CovarianceNoise``: additive Gaussian noise with an arbitrary per-worker covariance Σ_i
(certified σ_L² = max_i tr Σ_i, exact); ``biased_inclusion``: the exact first/pairwise inclusion
probabilities of ``BiasedArrivals`` by a vectorized subset recursion (the same law as
``BiasedArrivals.inclusion``, much faster); ``PeriodicArrivals``: a periodic deterministic sequence of worker
sets (round t takes ``sets[t mod P]``), the adversarial generalization of round robin; ``periodic_max_gap``:
the longest wait between two arrivals of one worker in such a sequence. All expose what both
``afltheory.simulate`` and ``afltheory.exact`` read (``sample`` and ``pmf``/``covariance``)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_array, check_array, check_int
from ..anarchy.arrivals import DeterministicArrivals
from ..anarchy.delays import Delays
from ..anarchy.local_steps import LocalSteps
from ..problems.base import NoiseModel

__all__ = [
    "CovarianceNoise",
    "PeriodicArrivals",
    "PmfDelay",
    "PmfSteps",
    "biased_inclusion",
    "check_pmf",
    "periodic_max_gap",
]


def check_pmf(name: str, p: ArrayLike, *, ndim: int = 1) -> np.ndarray:
    """A probability vector (or rows of them): finite, ≥ 0, summing to 1 (within 1e-9); renormalized
    exactly."""
    a = check_array(name, p, ndim=ndim)
    if a.shape[-1] < 1:
        raise ValueError(f"{name} is empty; expected at least one probability")
    if np.any(a < 0):
        raise ValueError(f"{name} has a negative entry ({a.min()}); allowed range [0, 1]")
    s = a.sum(axis=-1, keepdims=True)
    if np.any(np.abs(s - 1.0) > 1e-9):
        raise ValueError(f"{name} must sum to 1 along its last axis, got sums {np.ravel(s).tolist()}")
    return a / s


def periodic_max_gap(sets: ArrayLike, num_workers: int) -> int:
    """The largest number of rounds between two consecutive arrivals of one worker in the periodic sequence
    ``sets`` (P, m) (round t takes ``sets[t mod P]``), wrapping around the period; also ≥ first arrival + 1,
    so a slot warm-started at x_0 is never older than it. A worker that never arrives gives a ValueError."""
    W = np.asarray(sets)
    if W.ndim != 2 or W.shape[0] < 1:
        raise ValueError(f"sets must be a (P, m) table of worker indices, got shape {W.shape}")
    P = W.shape[0]
    gap = 0
    for i in range(check_int("num_workers", num_workers, low=1)):
        ph = np.flatnonzero((W == i).any(axis=1))
        if ph.size == 0:
            raise ValueError(
                f"worker {i} never arrives in the periodic sets {W.tolist()}: its memory slot ages without "
                f"bound; every worker in 0..{num_workers - 1} must appear"
            )
        gaps = np.diff(np.r_[ph, ph[0] + P])
        gap = max(gap, int(gaps.max()))
    return gap


class PeriodicArrivals(DeterministicArrivals):
    """Round t takes the workers ``sets[t mod P]`` (a (P, m) table, distinct workers per row): a periodic
    deterministic arrival sequence (``CyclicArrivals`` is the round-robin case)."""

    def __init__(self, sets: ArrayLike):
        W = as_array("sets", sets)
        if W.ndim != 2 or W.shape[0] < 1 or W.shape[1] < 1 or not np.all(W == np.round(W)) or W.min() < 0:
            raise ValueError(
                f"sets must be a non-empty (P, m) table of worker indices >= 0, got {W.tolist()}"
            )
        W = W.astype(np.int64)
        for row in W:
            if len(set(row.tolist())) != len(row):
                raise ValueError(
                    f"sets row {row.tolist()} repeats a worker; each round's workers are distinct"
                )
        self.sets = W
        self.sets.setflags(write=False)
        self.m = int(W.shape[1])

    def validate(self, num_workers: int) -> None:
        """ValueError if a set names a worker ≥ ``num_workers``."""
        super().validate(num_workers)
        if self.sets.max() >= num_workers:
            raise ValueError(f"sets name worker {int(self.sets.max())} >= num_workers={num_workers}")

    def sample(self, rng: np.random.Generator, rounds: int, num_workers: int) -> np.ndarray:
        """(rounds, m): ``sets[t mod P]`` (no randomness)."""
        self.validate(num_workers)
        return self.sets[np.arange(rounds) % self.sets.shape[0]].copy()

    def __repr__(self):
        return f"PeriodicArrivals({self.sets.tolist()})"


class PmfDelay(Delays):
    """τ_{t,i} = min(τ', t) with τ' i.i.d. from ``pmf`` over {0, …, len(pmf) − 1} (per arrival)."""

    def __init__(self, pmf: ArrayLike):
        p = check_pmf("pmf", pmf)
        nz = np.flatnonzero(p > 0)
        self._pmf = p[: nz[-1] + 1].copy()  # trailing zeros do not count towards max_delay
        self._pmf.setflags(write=False)
        self.max_delay = len(self._pmf) - 1
        self._cdf = np.cumsum(self._pmf)

    @property
    def probs(self) -> np.ndarray:
        """The delay pmf P(τ = k), k = 0..len − 1 (before truncation at min(t, ·))."""
        return self._pmf

    def pmf(self, t: int) -> np.ndarray | None:
        n = min(int(t), self.max_delay) + 1
        out = self._pmf[:n].copy()
        out[-1] += self._pmf[n:].sum()
        return out

    def sample(self, rng: np.random.Generator, workers: np.ndarray) -> np.ndarray:
        workers = np.asarray(workers)
        u = rng.random(workers.shape)
        tau = np.minimum(np.searchsorted(self._cdf, u, side="right"), self.max_delay)
        t = np.arange(workers.shape[-2])[:, None]
        return np.minimum(tau, t).astype(np.int64)

    def __repr__(self):
        return f"PmfDelay(pmf={np.round(self._pmf, 6).tolist()})"


class PmfSteps(LocalSteps):
    """K_{t,i} i.i.d. per arrival from worker i's pmf ``pmfs[i]`` over {1, …, K_max} (``pmfs``: (M, K_max), or
    one (K_max,) row shared by every worker)."""

    def __init__(self, pmfs: ArrayLike):
        p = as_array("pmfs", pmfs)
        p = check_pmf("pmfs", p if p.ndim == 2 else p[None], ndim=2)
        last = int(np.flatnonzero(p.sum(axis=0) > 0)[-1])
        self.pmfs = p[:, : last + 1].copy()
        self.pmfs.setflags(write=False)
        self.K_max = last + 1
        self._cdf = np.cumsum(self.pmfs, axis=1)

    def _rows(self, workers):
        w = np.asarray(workers)
        if self.pmfs.shape[0] == 1:
            return np.zeros(w.shape, dtype=np.int64)
        if w.size and w.max() >= self.pmfs.shape[0]:
            raise ValueError(f"pmfs has {self.pmfs.shape[0]} rows; worker {w.max()} arrived")
        return w

    def sample(self, rng: np.random.Generator, workers: np.ndarray, start_round: int = 0) -> np.ndarray:
        workers = np.asarray(workers)
        u = rng.random(workers.shape)
        cdf = self._cdf[self._rows(workers)]  # (..., K_max)
        return np.minimum((u[..., None] >= cdf).sum(axis=-1), self.K_max - 1).astype(np.int64) + 1

    def pmf(self, worker: int) -> dict[int, float] | None:
        row = self.pmfs[0 if self.pmfs.shape[0] == 1 else int(worker)]
        return {k + 1: float(v) for k, v in enumerate(row) if v > 0}

    def __repr__(self):
        return f"PmfSteps(pmfs={np.round(self.pmfs, 6).tolist()})"


class CovarianceNoise(NoiseModel):
    """ξ_i ~ N(0, Σ_i) for worker i (``covs``: (M, d, d) symmetric PSD). σ_L = sqrt(max_i tr Σ_i), exact
    (Assumption 3's E‖ξ_i‖² ≤ σ_L², attained by the maximizing worker)."""

    gaussian = True
    sigma_L_kind = "exact"

    def __init__(self, covs: ArrayLike):
        C = check_array("covs", covs, ndim=3)
        if C.shape[1] != C.shape[2]:
            raise ValueError(f"covs must have shape (M, d, d), got {C.shape}")
        if not np.allclose(C, np.transpose(C, (0, 2, 1)), atol=1e-12 * max(1.0, np.abs(C).max())):
            raise ValueError("covs must be symmetric")
        C = 0.5 * (C + np.transpose(C, (0, 2, 1)))
        w, V = np.linalg.eigh(C)
        if w.min() < -1e-12 * max(1.0, np.abs(C).max()):
            raise ValueError(f"covs must be positive semidefinite (smallest eigenvalue {w.min()})")
        self.covs = C
        self._root = V * np.sqrt(np.clip(w, 0.0, None))[:, None, :]  # Σ_i = R_i R_iᵀ
        self.sigma_L = float(np.sqrt(max(0.0, np.trace(C, axis1=1, axis2=2).max())))

    def sample(self, rng: np.random.Generator, workers: np.ndarray, dim: int) -> np.ndarray:
        workers = np.asarray(workers)
        if dim != self.covs.shape[1]:
            raise ValueError(f"dim={dim} differs from the covariance size {self.covs.shape[1]}")
        z = rng.standard_normal((*workers.shape, dim))
        return np.einsum("...jk,...k->...j", self._root[workers], z)

    def covariance(self, i: int, dim: int) -> np.ndarray | None:
        return self.covs[int(i)].copy()

    def __repr__(self):
        return f"CovarianceNoise(M={self.covs.shape[0]}, d={self.covs.shape[1]}, sigma_L={self.sigma_L:.4g})"


def biased_inclusion(probs: ArrayLike, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(π_i, π_ij) of successive sampling without replacement with weights ``probs`` (``BiasedArrivals``):
    P(S ∪ {j}) += P(S) p_j / (1 − p(S)) over the subsets S of size < m, vectorized over bitmasks (M ≤ 20)."""
    p = check_pmf("probs", probs)
    M = p.size
    m = check_int("m", m, low=1, high=M)
    if M > 20:
        raise ValueError(f"num_workers={M} exceeds 20 (exact inclusion by subsets)")
    masks = np.arange(1 << M)
    bits = (masks[:, None] >> np.arange(M)) & 1  # (2^M, M)
    mass = bits @ p
    P = np.zeros(1 << M)
    P[0] = 1.0
    for _ in range(m):
        new = np.zeros_like(P)
        live = np.flatnonzero(P)
        rest = 1.0 - mass[live]
        for j in range(M):
            if p[j] <= 0:
                continue
            sel = live[bits[live, j] == 0]
            if sel.size:
                r = 1.0 - mass[sel]
                new[sel | (1 << j)] += P[sel] * p[j] / np.where(r > 0, r, np.inf)
        del rest
        P = new
    live = np.flatnonzero(P)
    B = bits[live].astype(float)
    pi = P[live] @ B
    pij = (B * P[live][:, None]).T @ B
    return pi, pij
