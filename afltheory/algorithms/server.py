"""Server rules [Yang et al. 2022]: AFA-CD (Algorithm 2), AFA-CS (Algorithm 3), FedAvg, FedBuff, AsySG.

Convention (docs/DESIGN.md; inconsistency #1): the server step is x_{t+1} = x_t − η η_L G_t, where a worker's
update G_i is the *average* of its K stochastic gradients. Each rule is a frozen dataclass of hyperparameters
over the documented base ``afltheory.algorithms.ServerRule``: it only states how it differs (per-arrival
weights, memory, fixed local steps); ``init``/``aggregate`` and every backend come from the base.
``compressor``: what each arriving worker applies to its update before sending it (None, a compressor,
``ErrorFeedback(C)`` or ``DIANA(C)``; afltheory.compression).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_int
from .base import ServerRule, _sum_arrivals
from .workers import SGD

__all__ = ["AFACD", "AFACS", "STALENESS_WEIGHTS", "AsySG", "FedAvg", "FedBuff", "worker_mean"]


def worker_mean(G: np.ndarray, weights: np.ndarray | None = None, factor: float = 1.0) -> np.ndarray:
    """factor · (1/n) Σ_i w_i G_i over the arrivals axis of G (R, n, d): the averaging step of the server
    rules (public for rules built on them, e.g. the mutants)."""
    s = _sum_arrivals(G, weights)
    s *= factor / G.shape[1]
    return s


@dataclass(frozen=True)
class AFACD(ServerRule):
    """AFA-CD [Alg. 2, Thm 2–3]: G_t = (1/m) Σ_{i∈M_t} G_i, x_{t+1} = x_t − η η_L G_t."""

    eta: float
    eta_L: float
    worker: object = field(default_factory=SGD)
    compressor: object = None
    weights: tuple | None = None
    analysed_as = "AFA-CD"


@dataclass(frozen=True)
class AFACS(ServerRule):
    """AFA-CS [Alg. 3, Thm 4]: slot i keeps worker i's latest G_i; x_{t+1} = x_t − η η_L (1/M) Σ_{i∈[M]} G_i.
    ``memory_init="warm"`` fills every slot with the worker's update at x_0 (K from the schedule's
    ``init_local_steps``); ``"zeros"`` starts from empty (zero) slots."""

    eta: float
    eta_L: float
    memory_init: str = "warm"
    worker: object = field(default_factory=SGD)
    compressor: object = None
    keeps_memory = True
    analysed_as = "AFA-CS"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.memory_init not in ("warm", "zeros"):
            raise ValueError(f"memory_init={self.memory_init!r} must be 'warm' or 'zeros'")


@dataclass(frozen=True)
class FedAvg(ServerRule):
    """Two-sided FedAvg: a worker returns Δ_i = y_K − y_0 = −η_L K_i G_i; x_{t+1} = x_t + η (1/m) Σ Δ_i.
    With τ = 0 and constant K it equals AFA-CD(η·K, η_L) (docs/DESIGN.md equivalence). ``weights``: client
    weights p_k (n_k/n in [Li et al. 2020, Alg. 1]): x_{t+1} = x_t + η (1/m) Σ M p_i Δ_i (= Σ p_i Δ_i under
    full participation). ``eta``/``eta_L`` may be step-size schedules in the round t
    (``afltheory.algorithms.schedules``)."""

    eta: float
    eta_L: float
    worker: object = field(default_factory=SGD)
    compressor: object = None
    weights: tuple | None = None

    def local_steps_weight(self, K: np.ndarray) -> np.ndarray:
        """w_K = K: the update Δ_i = −η_L K_i G_i."""
        return K


STALENESS_WEIGHTS = {
    "constant": lambda tau: np.ones_like(tau, dtype=float),
    "sqrt": lambda tau: 1.0 / np.sqrt(1.0 + tau),  # FedBuff (Nguyen et al. 2022)
    "poly": lambda tau: 1.0 / (1.0 + tau),
}


@dataclass(frozen=True)
class FedBuff(ServerRule):
    """FedBuff (Nguyen et al. 2022): the server buffers ``buffer_size`` arrivals (= the behaviour's m in round
    mode) and applies x_{t+1} = x_t + η (1/b) Σ w(τ_i) Δ_i with Δ_i = −η_L K_i G_i and staleness weight w."""

    eta: float
    eta_L: float
    buffer_size: int | None = None
    staleness: str = "sqrt"
    worker: object = field(default_factory=SGD)
    compressor: object = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.buffer_size is not None:
            check_int("buffer_size", self.buffer_size, low=1)
        if not isinstance(self.staleness, str) or self.staleness not in STALENESS_WEIGHTS:
            raise ValueError(f"staleness={self.staleness!r} must be one of {sorted(STALENESS_WEIGHTS)}")

    def check_m(self, m: int) -> None:
        """ValueError unless the buffer size equals the behaviour's m."""
        if self.buffer_size is not None and self.buffer_size != m:
            raise ValueError(
                f"buffer_size={self.buffer_size} must equal the behaviour's m={m} "
                f"(the server aggregates every m arrivals)"
            )

    def local_steps_weight(self, K: np.ndarray) -> np.ndarray:
        """w_K = K: the update Δ_i = −η_L K_i G_i."""
        return K

    def staleness_weight(self, tau: np.ndarray) -> np.ndarray:
        """w_τ = the chosen staleness weight (``STALENESS_WEIGHTS``)."""
        return STALENESS_WEIGHTS[self.staleness](np.asarray(tau))


@dataclass(frozen=True)
class AsySG(ServerRule):
    """Asynchronous SGD (AsySG-con, Lian et al. 2015): each arrival sends one stochastic gradient at its stale
    model (K = 1 whatever the behaviour says); x_{t+1} = x_t − η η_L (1/m) Σ g_i. AFA-CD with K = 1, σ_G =
    0."""

    eta: float
    eta_L: float = 1.0
    worker: object = field(default_factory=SGD)
    compressor: object = None
    fixed_local_steps = 1
    analysed_as = "AFA-CD"  # AFA-CD with K = 1 (Theorems 2–3 with K_max = 1)
