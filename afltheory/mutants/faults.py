"""Engine faults of the mutation catalogue: the wrong engine behaviour each fault point is given while a
mutant is injected (``afltheory.mutants.injected``; the points are ``afltheory._faults.FaultPoint``).

Each function receives what the engine would use at that point and returns the faulty replacement (a delay
array, the local step counts, a noise factor, ...); ``no_noise`` replaces the noise factor by 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "drift_std_as_var_cov",
    "drift_std_as_var_increments",
    "k_max",
    "k_minus_one",
    "k_plus_one",
    "mean_time",
    "minibatch_with_replacement",
    "no_noise",
    "normal_quantile",
    "omega_is_sigma",
    "restart_at_arrival",
    "shared_stream",
    "stale_ignored",
    "stale_off_by_one",
    "stale_oldest",
    "std_per_coordinate",
    "var_per_coordinate",
]


def _rounds(d):
    return np.arange(d.shape[1])[None, :, None]


def stale_off_by_one(d: np.ndarray) -> np.ndarray:
    """x_{t−τ−1} instead of x_{t−τ} (clipped at x_0)."""
    return np.minimum(d + 1, _rounds(d))


def stale_oldest(d: np.ndarray) -> np.ndarray:
    """every arrival starts from the oldest model kept, x_{t−D} (D = the schedule's max delay; clipped at
    x_0)."""
    return np.minimum(np.full_like(d, d.max() if d.size else 0), _rounds(d))


def stale_ignored(d: np.ndarray) -> np.ndarray:
    """every arrival starts from the current model x_t."""
    return np.zeros_like(d)


def k_plus_one(K: np.ndarray) -> np.ndarray:
    """K + 1 local steps."""
    return K + 1


def k_minus_one(K: np.ndarray) -> np.ndarray:
    """max(K − 1, 1) local steps."""
    return np.maximum(K - 1, 1)


def k_max(K: np.ndarray) -> np.ndarray:
    """each arrival runs the largest K of its round (of the warm start's workers for the initial K)."""
    return np.broadcast_to(K.max(axis=-1, keepdims=True), K.shape).copy()


def std_per_coordinate(dim: int) -> float:
    """noise std σ_L per coordinate instead of σ_L/√d: factor √d on every draw."""
    return float(np.sqrt(dim))


def var_per_coordinate(dim: int) -> float:
    """noise covariance σ_L² I instead of (σ_L²/d) I: factor d on the covariance."""
    return float(dim)


def shared_stream(comp: Any, v: np.ndarray, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """every worker's compressor restarted from the same generator state: the n arrivals of a replicate share
    one random pattern (the bug of seeding each worker's compressor identically)."""
    state = gen.bit_generator.state
    ys, bs = [], []
    for i in range(v.shape[1]):
        gen.bit_generator.state = state
        y, b = comp.compress(v[:, i], gen)
        ys.append(y)
        bs.append(b)
    return np.stack(ys, axis=1), np.stack(bs, axis=1)


def _sigma_q(Q):
    return float(np.sqrt(max(np.trace(Q), 0.0)))


def drift_std_as_var_increments(Q: np.ndarray) -> float:
    """factor on the drift increments when σ_q is used where σ_q² belongs: Cov q = Q/σ_q (tr = σ_q)."""
    s = _sigma_q(Q)
    return s**-0.5 if s > 0 else 1.0


def drift_std_as_var_cov(Q: np.ndarray) -> np.ndarray:
    """Q/σ_q instead of Q (tr Q = σ_q², so the covariance's trace becomes σ_q)."""
    s = _sigma_q(Q)
    return Q / s if s > 0 else Q


def restart_at_arrival(times: Any, now: float) -> list:
    """arrived workers restart at their own arrival times (correct: at ``now``, when the round closes)."""
    return list(times)


def mean_time(times: np.ndarray) -> np.ndarray:
    """(rounds, m) compute times -> per-round time = their mean (the slowest worker's is correct)."""
    return times.mean(axis=1)


def no_noise(dim: int) -> float:
    """noise factor 0: the engine draws (or adds) no gradient noise."""
    return 0.0


def minibatch_with_replacement(n: Any, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    """Indices of B samples drawn uniformly *with* replacement from n (an int, or per-draw sizes broadcastable
    to ``shape``) — the bug; ``shape`` = (draws, B)."""
    return rng.integers(0, n, size=shape)


def omega_is_sigma(Omega: np.ndarray, Sigma: np.ndarray) -> np.ndarray:
    """MOCHA's Ω-step keeps the covariance Σ itself in the regularizer (the seed's printed reading)."""
    return Sigma


def normal_quantile(level: float, n: int) -> float:
    """The normal quantile z_level where the UCB needs Student's t_{level, n−1}."""
    from scipy import stats

    return float(stats.norm.ppf(level))
