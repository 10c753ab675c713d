"""Drifting objective (Rizk, Vlaski, Sayed, "Dynamic Federated Learning"; THEOREMS.md "Dynamic FedAvg").

The true model follows a random walk w°_t = w°_{t−1} + q_t with E‖q_t‖² = σ_q², and worker k's optimum is
w°_t + c_k. Here the round-t objective is a shared-Hessian quadratic translated by the walk:
f_{k,t}(x) = f_k(x − w_t), with f_k a ``HeterogeneousQuadratic`` (worker optima c_k, global optimum x*) and
w_t = q_1 + … + q_t (w_0 = 0), so w°_t = x* + w_t.

The engine does not consume drift yet (the lead wires it): use ``walk`` to draw drift paths and
``at_round`` / ``shift`` for the problem at a given offset, or the offset-aware ``value`` / ``grad`` /
``local_grad`` for vectorized evaluation.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_int, check_nonnegative
from .base import Constants, NoiseModel
from .quadratic import HeterogeneousQuadratic


class DriftingQuadratic:
    """A ``HeterogeneousQuadratic`` whose optimum drifts as a Gaussian random walk.

    Certificates per round (all **exact**): translation does not change Hessians or the differences
    ∇f_k − ∇f, so L, μ, σ_G, σ_L and f* are the base problem's at every round and x*_t = x* + w_t.
    Drift: q_t ~ N(0, (σ_q²/d) I_d), so E‖q_t‖² = σ_q² exactly and E‖w_t‖² = t σ_q².
    """

    #: capability read by the engine: ``base`` (the round-0 problem) and ``walk(gen, rounds)`` (the optimum's path)
    drifts = True

    def __init__(self, dim: int = 10, num_workers: int = 10, L: float = 1.0, mu: float = 0.1,
                 sigma_L: float | NoiseModel = 0.0, sigma_G: float = 1.0, seed: int = 0,
                 hessian: str = "diag", sigma_q: float = 0.1):
        base = HeterogeneousQuadratic(dim=dim, num_workers=num_workers, L=L, mu=mu, sigma_L=sigma_L,
                                      sigma_G=sigma_G, seed=seed, hessian=hessian)
        self._set(base, sigma_q)

    @classmethod
    def from_problem(cls, base: HeterogeneousQuadratic, sigma_q: float):
        """Wrap an existing shared-Hessian quadratic (e.g. ``HeterogeneousQuadratic.from_arrays``)."""
        if not isinstance(base, HeterogeneousQuadratic):
            raise ValueError(f"base must be a HeterogeneousQuadratic, got {type(base).__name__}")
        self = cls.__new__(cls)
        self._set(base, sigma_q)
        return self

    def _set(self, base, sigma_q):
        self.base = base
        self.sigma_q = check_nonnegative("sigma_q", sigma_q)
        self.dim, self.num_workers, self.noise = base.dim, base.num_workers, base.noise

    @property
    def constants(self) -> Constants:
        """Round-0 constants (w_0 = 0); every round has the same L, μ, σ_L, σ_G, f* and x*_t = x* + w_t."""
        return self.base.constants

    # -- drift process
    def increments(self, rng: np.random.Generator, rounds: int, batch: tuple = ()) -> np.ndarray:
        """q_1..q_rounds, shape (*batch, rounds, dim), q ~ N(0, (σ_q²/d) I)."""
        rounds = check_int("rounds", rounds, low=0)
        q = rng.standard_normal((*tuple(batch), rounds, self.dim))
        q *= self.sigma_q / np.sqrt(self.dim)
        return q

    def walk(self, rng: np.random.Generator, rounds: int, batch: tuple = ()) -> np.ndarray:
        """w_0..w_rounds, shape (*batch, rounds + 1, dim), w_0 = 0, w_t = w_{t−1} + q_t."""
        q = self.increments(rng, rounds, batch)
        w = np.zeros((*q.shape[:-2], q.shape[-2] + 1, self.dim))
        np.cumsum(q, axis=-2, out=w[..., 1:, :])
        return w

    def optimum(self, offset) -> np.ndarray:
        """w°_t = x* + w_t for offsets of shape (..., dim)."""
        return self.base.constants.x_star + np.asarray(offset, dtype=float)

    # -- the problem at a given offset
    def shift(self, delta) -> HeterogeneousQuadratic:
        """The round objective for offset ``delta`` (dim,): a HeterogeneousQuadratic with exact constants."""
        return self.base.shifted(delta)

    def at_round(self, t: int, walk) -> HeterogeneousQuadratic:
        """The problem at round ``t`` of a drift path ``walk`` (rounds + 1, dim) from ``walk(...)``."""
        w = check_array("walk", walk, ndim=2)
        if w.shape[1] != self.dim:
            raise ValueError(f"walk has shape {w.shape}; its last axis must be dim={self.dim}")
        t = check_int("t", t, low=0, high=w.shape[0] - 1)
        return self.shift(w[t])

    # -- vectorized evaluation with per-entry offsets (offset broadcastable against x)
    def value(self, x, offset):
        return self.base.value(np.asarray(x, dtype=float) - offset)

    def grad(self, x, offset):
        return self.base.grad(np.asarray(x, dtype=float) - offset)

    def local_grad(self, x, i, offset):
        return self.base.local_grad(np.asarray(x, dtype=float) - offset, i)

    def __repr__(self):
        return f"DriftingQuadratic(base={self.base!r}, sigma_q={self.sigma_q})"
