"""Bounded delays: arrival (t, i) used model x_{t−τ_{t,i}} with τ_{t,i} ≤ min(t, max_delay) (round mode).

Delay processes that are i.i.d. per arrival given t expose ``pmf(t)``: probabilities over 0..min(t,
max_delay) (``worker_pmf(t, i)`` when the law depends on the arriving worker). A class whose law is the same
for every t ≥ max_delay declares ``stationary = True``; ``time_invariant`` reads that declaration only when
the declaring class also defines the law, so a subclass redefining ``pmf``/``worker_pmf`` is not trusted
(the exact engine then compares the law round by round).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._introspect import defining_class
from .._validation import as_array, check_int, check_real
from .arrivals import _by_block, _uniform_below

__all__ = ["Delays", "FixedDelay", "GeometricDelay", "NoDelay", "PerWorkerDelay", "UniformDelay"]


def _round_constant(per_round: np.ndarray, shape: tuple) -> np.ndarray:
    """Read-only int64 view of ``shape`` (…, rounds, m) holding per_round[t] in round t (stride 0
    elsewhere)."""
    return np.broadcast_to(np.asarray(per_round, dtype=np.int64)[:, None], shape)


class Delays:
    """Base class. A policy that draws no randomness and ignores which workers arrived may also define
    ``_constant(shape)``: its delays for any (…, rounds, m) arrivals, as a read-only broadcast view;
    ``Behaviour.sample`` then stores that view instead of drawing block by block."""

    max_delay: int = 0
    #: the law (``pmf``/``worker_pmf``) is the same for every round t ≥ max_delay (read: ``time_invariant``)
    stationary: ClassVar[bool] = False

    def sample(self, rng: np.random.Generator, workers: np.ndarray) -> np.ndarray:
        """Delays for arrivals ``workers`` of shape (..., rounds, m) (round index = axis −2)."""
        raise NotImplementedError

    def pmf(self, t: int) -> np.ndarray | None:
        """The law of τ at round ``t`` (P(τ = k), k = 0..min(t, max_delay)), or None when it has no closed
        form."""
        return None

    def worker_pmf(self, t: int, worker: int) -> np.ndarray | None:
        """The law of τ for an arrival of ``worker`` at round ``t`` (independent of the other arrivals); by
        default ``pmf(t)``, the same for every worker."""
        return self.pmf(t)

    @property
    def per_worker(self) -> bool:
        """True when the law depends on the arriving worker (the class redefines ``worker_pmf``)."""
        return defining_class(type(self), "worker_pmf") is not Delays

    @property
    def time_invariant(self) -> bool:
        """``stationary`` as declared by a class that also defines the law (``pmf`` and ``worker_pmf``), else
        False: a subclass redefining the law inherits no declaration about it."""
        cls = type(self)
        declared = defining_class(cls, "stationary")
        return bool(self.stationary) and all(
            issubclass(declared, defining_class(cls, h)) for h in ("pmf", "worker_pmf")
        )

    def check_workers(self, num_workers: int) -> None:
        """ValueError when the law is not defined for ``num_workers`` workers (every count, by default)."""


class NoDelay(Delays):
    """τ = 0: every worker computes at the current model (synchronous)."""

    stationary = True

    def sample(self, rng: np.random.Generator, workers: np.ndarray) -> np.ndarray:
        return np.zeros(workers.shape, dtype=np.int64)

    def _constant(self, shape):
        return _round_constant(np.zeros(shape[-2]), shape)

    def pmf(self, t: int) -> np.ndarray | None:
        return np.ones(1)

    def __repr__(self):
        return "NoDelay()"


class UniformDelay(Delays):
    """Uniform over the last max_delay+1 models: τ ~ U{0, …, min(t, max_delay)} (the paper's experiments, τ ≤
    4)."""

    stationary = True

    def __init__(self, max_delay: int):
        self.max_delay = check_int("max_delay", max_delay, low=0)

    def sample(self, rng: np.random.Generator, workers: np.ndarray) -> np.ndarray:
        """Exact draws, one vectorized ``_uniform_below`` call (Lemire's method on 16-bit generator
        chunks)."""
        out = np.empty(workers.shape, dtype=np.int64)
        self._sample_blocks([rng], workers, out)
        return out

    def _sample_blocks(self, rngs, workers, out):
        """``out[block b] = sample(rngs[b], workers[block b])`` for len(rngs) equal blocks along axis 0,
        vectorized over the generators (``Behaviour.sample``'s fast path; same values)."""
        if self.max_delay == 0:
            out[...] = 0
            return
        blocks = _by_block(out, len(rngs))
        blocks[...] = _uniform_below(rngs, 1, self.max_delay + 1, blocks.shape[1:])  # bound min(t, D) + 1

    def pmf(self, t: int) -> np.ndarray | None:
        n = min(t, self.max_delay) + 1
        return np.full(n, 1.0 / n)

    def __repr__(self):
        return f"UniformDelay(max_delay={self.max_delay})"


class FixedDelay(Delays):
    """τ_{t,i} = min(t, delay) for every arrival (worst-case staleness)."""

    stationary = True

    def __init__(self, delay: int):
        self.max_delay = check_int("delay", delay, low=0)

    def sample(self, rng: np.random.Generator, workers: np.ndarray) -> np.ndarray:
        T = workers.shape[-2]
        return np.broadcast_to(np.minimum(np.arange(T), self.max_delay)[:, None], workers.shape).copy()

    def _constant(self, shape):
        return _round_constant(np.minimum(np.arange(shape[-2]), self.max_delay), shape)

    def pmf(self, t: int) -> np.ndarray | None:
        p = np.zeros(min(t, self.max_delay) + 1)
        p[-1] = 1.0
        return p

    def __repr__(self):
        return f"FixedDelay(delay={self.max_delay})"


class GeometricDelay(Delays):
    """Truncated geometric: P(τ = k) ∝ p (1 − p)^k on {0, …, min(t, max_delay)}."""

    stationary = True

    def __init__(self, p: float, max_delay: int):
        self.p = check_real("p", p, low=0.0, high=1.0, low_open=True)
        self.max_delay = check_int("max_delay", max_delay, low=0)

    def pmf(self, t: int) -> np.ndarray | None:
        k = np.arange(min(t, self.max_delay) + 1)
        w = self.p * (1 - self.p) ** k
        return w / w.sum()

    def sample(self, rng: np.random.Generator, workers: np.ndarray) -> np.ndarray:
        T = workers.shape[-2]
        u = rng.random(workers.shape)
        out = np.empty(workers.shape, dtype=np.int64)
        for t in range(min(T, self.max_delay + 1)):  # inverse CDF; the cap changes only for t < max_delay
            cdf = np.cumsum(self.pmf(t))
            out[..., t, :] = np.minimum(np.searchsorted(cdf, u[..., t, :], side="right"), len(cdf) - 1)
        if T > self.max_delay + 1:
            cdf = np.cumsum(self.pmf(self.max_delay))
            rest = u[..., self.max_delay + 1 :, :]
            out[..., self.max_delay + 1 :, :] = np.minimum(
                np.searchsorted(cdf, rest, side="right"), len(cdf) - 1
            )
        return out

    def __repr__(self):
        return f"GeometricDelay(p={self.p}, max_delay={self.max_delay})"


class PerWorkerDelay(Delays):
    """Worker i's delay is uniform on {0, …, min(t, max_delays[i])} (heterogeneous staleness)."""

    stationary = True

    def __init__(self, max_delays: ArrayLike):
        md = as_array("max_delays", max_delays, dtype=None)
        if md.ndim != 1 or not np.issubdtype(md.dtype, np.integer) or md.size == 0 or md.min() < 0:
            raise ValueError(f"max_delays={max_delays!r} must be a non-empty 1-D list of integers >= 0")
        self.max_delays = md.astype(np.int64)
        self.max_delay = int(md.max())

    def worker_pmf(self, t: int, worker: int) -> np.ndarray | None:
        """Uniform on {0, …, min(t, max_delays[worker])}."""
        n = min(t, int(self.max_delays[worker])) + 1
        return np.full(n, 1.0 / n)

    def check_workers(self, num_workers: int) -> None:
        """ValueError unless ``max_delays`` has an entry for each of the ``num_workers`` workers."""
        if len(self.max_delays) < num_workers:
            raise ValueError(f"max_delays has {len(self.max_delays)} entries but num_workers={num_workers}")

    def sample(self, rng: np.random.Generator, workers: np.ndarray) -> np.ndarray:
        if workers.max() >= len(self.max_delays):
            raise ValueError(f"max_delays has {len(self.max_delays)} entries; worker {workers.max()} arrived")
        T = workers.shape[-2]
        cap = np.minimum(np.arange(T)[:, None], self.max_delays[workers])
        return (rng.random(workers.shape) * (cap + 1)).astype(np.int64)  # truncation = floor (values >= 0)

    def __repr__(self):
        return f"PerWorkerDelay(max_delays={self.max_delays.tolist()})"
