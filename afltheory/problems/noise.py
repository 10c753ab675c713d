"""Finite-sum (minibatch) stochastic-gradient noise with σ_L certified from the data.

Worker i holds n samples with gradient offsets o_{i,s} = ∇f_{i,s}(x) − ∇f_i(x) that do not depend on x (e.g.
per-sample quadratics sharing one Hessian) and average to zero over s. A stochastic gradient averages a
minibatch of B samples drawn uniformly *without replacement*, so ξ_i = (1/B) Σ_{s∈batch} o_{i,s}.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .. import _faults
from .._validation import check_array, check_int
from .base import NoiseModel

__all__ = ["FiniteSumNoise", "without_replacement_factor"]


def without_replacement_factor(n: int, B: int) -> float:
    """(n − B) / (B (n − 1)): Var of a size-B sample mean without replacement over the population variance."""
    return 0.0 if B >= n else (n - B) / (B * (n - 1))


class FiniteSumNoise(NoiseModel):
    """ξ_i = mean of the offsets of a uniform size-B minibatch (without replacement) of worker i's n samples.

    ``offsets``: (M, n, d), zero mean over the sample axis (Assumption 2: unbiased), checked at construction.
    Certificates (exact, Assumption 3 first part): the sample mean of B draws without replacement from a
    finite population of zero-mean vectors has covariance (n − B)/(B(n − 1)) · S_i with
    S_i = (1/n) Σ_s o_is o_isᵀ (finite-population correction), hence
    E‖ξ_i‖² = (n − B)/(B(n − 1)) · (1/n) Σ_s ‖o_is‖² and
    σ_L² = max_i of that (attained by the maximizing worker). ``covariance(i, d)`` returns the exact matrix.
    Not Gaussian (``gaussian = False``); B = n gives ξ = 0.
    """

    gaussian = False
    sigma_L_kind = "exact"

    def __init__(self, offsets: ArrayLike, batch_size: int):
        o = check_array("offsets", offsets, ndim=3)
        M, n, d = o.shape
        check_int("offsets.shape[0] (workers)", M, low=1)
        check_int("offsets.shape[1] (samples_per_worker)", n, low=1)
        check_int("offsets.shape[2] (dim)", d, low=1)
        self.batch_size = check_int("batch_size", batch_size, low=1, high=n)
        mean = o.mean(axis=1)
        scale = max(1.0, float(np.abs(o).max()))
        if np.abs(mean).max() > 1e-10 * scale:
            raise ValueError(
                f"offsets must have zero mean over samples (axis 1) for unbiased gradients; "
                f"largest |mean| is {np.abs(mean).max():.3g}, allowed <= {1e-10 * scale:.3g}"
            )
        self.offsets = o - mean[:, None, :]
        self.offsets.setflags(write=False)
        self.num_workers, self.samples_per_worker, self.dim = M, n, d
        self.factor = without_replacement_factor(n, self.batch_size)
        # per-worker E‖ξ_i‖² and its max
        self.variance_per_worker = self.factor * np.mean(np.sum(self.offsets**2, axis=-1), axis=1)
        self.sigma_L = float(np.sqrt(self.variance_per_worker.max()))

    def _check(self, workers, dim):
        if dim != self.dim:
            raise ValueError(f"dim={dim} does not match the offsets' dim={self.dim}")
        w = np.asarray(workers)
        if w.size and (not np.issubdtype(w.dtype, np.integer) or w.min() < 0 or w.max() >= self.num_workers):
            raise ValueError(f"workers must be integers in [0, {self.num_workers - 1}]")
        return w

    def sample(self, rng: np.random.Generator, workers: np.ndarray, dim: int) -> np.ndarray:
        w = self._check(workers, dim)
        n, B = self.samples_per_worker, self.batch_size
        flat = w.reshape(-1)
        # None unless a sampling mutant is injected
        fault = _faults.get(_faults.FaultPoint.PROBLEMS_MINIBATCH)
        if fault is not None:
            idx = fault(n, (flat.size, B), rng)
            return self.offsets[flat[:, None], idx].mean(axis=1).reshape(*w.shape, dim)
        if B == n:
            return np.zeros((*w.shape, dim))
        if B == 1:
            idx = rng.integers(0, n, size=(flat.size, 1))
        else:
            # a uniformly random B-subset: the B smallest of n iid uniform keys
            keys = rng.random((flat.size, n))
            idx = np.argpartition(keys, B - 1, axis=1)[:, :B]
        xi = self.offsets[flat[:, None], idx].mean(axis=1)
        return xi.reshape(*w.shape, dim)

    def covariance(self, i: int, dim: int) -> np.ndarray | None:
        self._check(np.asarray(i), dim)
        o = self.offsets[int(i)]
        return self.factor * (o.T @ o) / self.samples_per_worker

    def __repr__(self):
        return (
            f"FiniteSumNoise(workers={self.num_workers}, samples_per_worker={self.samples_per_worker}, "
            f"batch_size={self.batch_size}, sigma_L={self.sigma_L:.4g})"
        )
