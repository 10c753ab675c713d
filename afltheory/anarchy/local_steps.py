"""Local-step policies: K_{t,i} ≥ 1 local SGD steps for arrival (t, i), constant, random, per-worker or
time-varying. Policies i.i.d. per arrival expose ``pmf(worker)`` -> {K: probability} for exact moments."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_array, check_int
from .arrivals import _by_block, _uniform_below

__all__ = ["ConstantSteps", "LocalSteps", "PerWorkerSteps", "TimeVaryingSteps", "UniformSteps"]


def _step_counts(Ks) -> np.ndarray:
    K = as_array("Ks", Ks, dtype=None)
    if K.ndim != 1 or K.size == 0 or not np.issubdtype(K.dtype, np.integer) or K.min() < 1:
        raise ValueError(f"Ks={Ks!r} must be a non-empty 1-D list of integers >= 1")
    return K.astype(np.int64)


class LocalSteps:
    """Base class. A policy that draws no randomness and ignores which workers arrived may also define
    ``_constant(shape)``: its K for any (…, rounds, m) arrivals starting at round 0, as a read-only broadcast
    view; ``Behaviour.sample`` then stores that view instead of drawing block by block."""

    K_max: int

    def sample(self, rng: np.random.Generator, workers: np.ndarray, start_round: int = 0) -> np.ndarray:
        """K for arrivals ``workers`` of shape (..., rounds, m) (round index = axis −2, the first being
        ``start_round``)."""
        raise NotImplementedError

    def sample_initial(self, rng: np.random.Generator, num_workers: int) -> np.ndarray:
        """K of each worker's warm-start update at x_0 (AFA-CS memory): the policy at round 0."""
        w = np.arange(num_workers)[None, :]
        return self.sample(rng, w, 0)[0]

    def pmf(self, worker: int) -> dict[int, float] | None:
        """The law of worker ``worker``'s local steps {K: P(K)}, or None when it has no closed form."""
        return None


class ConstantSteps(LocalSteps):
    """K_{t,i} = K."""

    def __init__(self, K: int):
        self.K = self.K_max = check_int("K", K, low=1)

    def sample(self, rng: np.random.Generator, workers: np.ndarray, start_round: int = 0) -> np.ndarray:
        return np.full(workers.shape, self.K, dtype=np.int64)

    def _constant(self, shape):
        return np.broadcast_to(np.int64(self.K), shape)

    def pmf(self, worker: int) -> dict[int, float] | None:
        return {self.K: 1.0}

    def __repr__(self):
        return f"ConstantSteps(K={self.K})"


class UniformSteps(LocalSteps):
    """K uniform on {low, …, high} (inclusive), independently per arrival. The paper's "dynamic" steps with
    constant c are ``UniformSteps.paper(c)`` = U{1, …, 2c}."""

    def __init__(self, low: int, high: int):
        self.low = check_int("low", low, low=1)
        self.high = self.K_max = check_int("high", high, low=self.low)

    @classmethod
    def paper(cls, c: int) -> UniformSteps:
        """The paper's dynamic local steps U{1, …, 2c} (mean c + 1/2)."""
        return cls(1, 2 * check_int("c", c, low=1))

    def sample(self, rng: np.random.Generator, workers: np.ndarray, start_round: int = 0) -> np.ndarray:
        n = self.high - self.low + 1  # exact draws (Lemire's method on 16-bit generator chunks)
        return _uniform_below([rng], n, n, np.shape(workers))[0] + np.int64(self.low)

    def _sample_blocks(self, rngs, workers, out, start_round=0):
        """``out[block b] = sample(rngs[b], workers[block b])`` for len(rngs) equal blocks along axis 0,
        vectorized over the generators (``Behaviour.sample``'s fast path; exact draws by
        ``arrivals._uniform_below``)."""
        n = self.high - self.low + 1
        blocks = _by_block(out, len(rngs))
        np.add(_uniform_below(rngs, n, n, blocks.shape[1:]), np.int64(self.low), out=blocks)

    def pmf(self, worker: int) -> dict[int, float] | None:
        n = self.high - self.low + 1
        return {k: 1.0 / n for k in range(self.low, self.high + 1)}

    def __repr__(self):
        return f"UniformSteps(low={self.low}, high={self.high})"


class PerWorkerSteps(LocalSteps):
    """Worker i always runs K_i steps (heterogeneous compute)."""

    def __init__(self, Ks: ArrayLike):
        self.Ks = _step_counts(Ks)
        self.K_max = int(self.Ks.max())

    def sample(self, rng: np.random.Generator, workers: np.ndarray, start_round: int = 0) -> np.ndarray:
        if workers.max() >= len(self.Ks):
            raise ValueError(f"Ks has {len(self.Ks)} entries; worker {workers.max()} arrived")
        return self.Ks[workers]

    def pmf(self, worker: int) -> dict[int, float] | None:
        return {int(self.Ks[worker]): 1.0}

    def __repr__(self):
        return f"PerWorkerSteps(Ks={self.Ks.tolist()})"


class TimeVaryingSteps(LocalSteps):
    """K_t = Ks[t] for round t (the last entry repeats): a deterministic time-varying policy (e.g. growing
    K)."""

    def __init__(self, Ks: ArrayLike):
        self.Ks = _step_counts(Ks)
        self.K_max = int(self.Ks.max())

    def sample(self, rng: np.random.Generator, workers: np.ndarray, start_round: int = 0) -> np.ndarray:
        t = np.minimum(np.arange(start_round, start_round + workers.shape[-2]), len(self.Ks) - 1)
        return np.broadcast_to(self.Ks[t][:, None], workers.shape).copy()

    def _constant(self, shape):
        return np.broadcast_to(self.Ks[np.minimum(np.arange(shape[-2]), len(self.Ks) - 1)][:, None], shape)

    def __repr__(self):
        return f"TimeVaryingSteps(Ks={self.Ks.tolist()})"
