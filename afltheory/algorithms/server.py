"""Server rules [Yang et al. 2022]: AFA-CD (Algorithm 2), AFA-CS (Algorithm 3), FedAvg, FedBuff, AsySG.

Convention (THEOREMS.md, inconsistency #1): the server step is x_{t+1} = x_t − η η_L G_t, where a worker's
update G_i is the *average* of its K stochastic gradients. Each algorithm is a frozen dataclass of
hyperparameters with ``init`` (server state) and ``aggregate`` (one server step); the engine calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_int, check_positive
from ..compression.channel import check_compressor
from .workers import SGD


def _worker_mean(G, weights=None, factor=1.0):
    """factor · (1/n) Σ_i w_i G_i over the arrivals axis of G (R, n, d) — einsum runs one pass where
    ``G.mean(axis=1)`` reduces d-long rows (4× slower at d = 10; benchmarks/engine.py)."""
    s = np.einsum("rnd->rd", G) if weights is None else np.einsum("rn,rnd->rd", np.asarray(weights, float), G)
    s *= factor / G.shape[1]
    return s


class _ServerRule:
    """Shared behaviour of the server rules: step-size checks, no server state, the schedule's own K.
    ``compressor``: what each arriving worker applies to its update before sending it (None, a compressor,
    ``ErrorFeedback(C)`` or ``DIANA(C)``; afltheory.compression)."""

    fixed_local_steps = None
    needs_warm_start = False

    def __post_init__(self):
        check_positive("eta", self.eta)
        check_positive("eta_L", self.eta_L)
        check_compressor(self.compressor)

    def init(self, replicates, num_workers, dim):
        return {}


@dataclass(frozen=True)
class AFACD(_ServerRule):
    """AFA-CD [Alg. 2, Thm 2–3]: G_t = (1/m) Σ_{i∈M_t} G_i, x_{t+1} = x_t − η η_L G_t."""

    eta: float
    eta_L: float
    worker: object = field(default_factory=SGD)
    compressor: object = None

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, factor=self.eta * self.eta_L)


@dataclass(frozen=True)
class AFACS(_ServerRule):
    """AFA-CS [Alg. 3, Thm 4]: slot i keeps worker i's latest G_i; x_{t+1} = x_t − η η_L (1/M) Σ_{i∈[M]} G_i.
    ``memory_init="warm"`` fills every slot with the worker's update at x_0 (K from the schedule's
    ``init_local_steps``); ``"zeros"`` starts from empty (zero) slots."""

    eta: float
    eta_L: float
    memory_init: str = "warm"
    worker: object = field(default_factory=SGD)
    compressor: object = None

    def __post_init__(self):
        super().__post_init__()
        if self.memory_init not in ("warm", "zeros"):
            raise ValueError(f"memory_init={self.memory_init!r} must be 'warm' or 'zeros'")

    @property
    def needs_warm_start(self):
        return self.memory_init == "warm"

    def init(self, replicates, num_workers, dim):
        return {"memory": np.zeros((replicates, num_workers, dim))}

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        mem = state["memory"]
        mem[np.arange(len(x))[:, None], workers] = G
        return x - _worker_mean(mem, factor=self.eta * self.eta_L)


@dataclass(frozen=True)
class FedAvg(_ServerRule):
    """Two-sided FedAvg: a worker returns Δ_i = y_K − y_0 = −η_L K_i G_i; x_{t+1} = x_t + η (1/m) Σ Δ_i.
    With τ = 0 and constant K it equals AFA-CD(η·K, η_L) (DESIGN.md equivalence)."""

    eta: float
    eta_L: float
    worker: object = field(default_factory=SGD)
    compressor: object = None

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, K, factor=self.eta * self.eta_L)


STALENESS_WEIGHTS = {
    "constant": lambda tau: np.ones_like(tau, dtype=float),
    "sqrt": lambda tau: 1.0 / np.sqrt(1.0 + tau),          # FedBuff (Nguyen et al. 2022)
    "poly": lambda tau: 1.0 / (1.0 + tau),
}


@dataclass(frozen=True)
class FedBuff(_ServerRule):
    """FedBuff (Nguyen et al. 2022): the server buffers ``buffer_size`` arrivals (= the behaviour's m in round
    mode) and applies x_{t+1} = x_t + η (1/b) Σ w(τ_i) Δ_i with Δ_i = −η_L K_i G_i and staleness weight w."""

    eta: float
    eta_L: float
    buffer_size: int | None = None
    staleness: str = "sqrt"
    worker: object = field(default_factory=SGD)
    compressor: object = None

    def __post_init__(self):
        super().__post_init__()
        if self.buffer_size is not None:
            check_int("buffer_size", self.buffer_size, low=1)
        if self.staleness not in STALENESS_WEIGHTS:
            raise ValueError(f"staleness={self.staleness!r} must be one of {sorted(STALENESS_WEIGHTS)}")

    def check_m(self, m):
        if self.buffer_size is not None and self.buffer_size != m:
            raise ValueError(f"buffer_size={self.buffer_size} must equal the behaviour's m={m} "
                             f"(the server aggregates every m arrivals)")

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        w = STALENESS_WEIGHTS[self.staleness](delays)
        return x - _worker_mean(G, w * K, factor=self.eta * self.eta_L)


@dataclass(frozen=True)
class AsySG(_ServerRule):
    """Asynchronous SGD (AsySG-con, Lian et al. 2015): each arrival sends one stochastic gradient at its stale
    model (K = 1 whatever the behaviour says); x_{t+1} = x_t − η η_L (1/m) Σ g_i. AFA-CD with K = 1, σ_G = 0."""

    eta: float
    eta_L: float = 1.0
    worker: object = field(default_factory=SGD)
    compressor: object = None
    fixed_local_steps = 1

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, factor=self.eta * self.eta_L)
