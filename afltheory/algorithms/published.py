"""Server rules of published algorithms that afltheory's core rules do not already express (issue 26).

- ``FedNova`` (Wang, Liu, Liang, Joshi, Poor, NeurIPS 2020): normalized averaging. Each arrival sends its
  average local gradient G_i (d_i in the paper, the update normalised by its K_i local steps) and the server
  steps by the EFFECTIVE number of local steps τ_eff = (1/m) Σ_j K_j of the round:
  x_{t+1} = x_t − η η_L τ_eff (1/m) Σ_i G_i. FedAvg instead weights G_i by its own K_i (Δ_i = −η_L K_i G_i),
  which is what biases FedAvg towards the clients running more steps (objective inconsistency).
  With equal K in a round FedNova and FedAvg coincide.
  The weight τ_eff depends on the whole round, not on one arrival's K, so it is stated through the imperative
  hook ``arrival_weights``: ``simulate`` and the torch backend run it, the exact engine and the PEP skeleton
  refuse it (``UnsupportedRule``) rather than read it as FedAvg.
- ``SCAFFOLDServer`` (Karimireddy et al. 2020): SCAFFOLD's server learning rate η_g is FedAvg's ``eta``
  (x ← x + η_g (1/m) Σ Δ_i; the worker rule ``SCAFFOLD`` keeps and updates the control variates); this class
  only makes SCAFFOLD the default worker and names η = η_g. Verified against an independent plain loop
  (tests/published/test_published_rules.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .base import ServerRule
from .server import FedAvg
from .workers import SCAFFOLD, SGD

__all__ = ["FedNova", "SCAFFOLDServer"]


@dataclass(frozen=True)
class FedNova(ServerRule):
    """FedNova: x_{t+1} = x_t − η η_L τ_eff (1/m) Σ_i G_i with τ_eff = mean of the round's K_i (uniform client
    weights over the arrivals). Equals FedAvg when every arrival of a round runs the same K."""

    eta: float
    eta_L: float
    worker: object = field(default_factory=SGD)
    compressor: object = None

    def arrival_weights(self, K: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """w_i = τ_eff = (1/m) Σ_j K_j for every arrival i of the round (K: (R, m))."""
        K = np.asarray(K, dtype=float)
        return np.broadcast_to(K.mean(axis=-1, keepdims=True), K.shape).copy()


@dataclass(frozen=True)
class SCAFFOLDServer(FedAvg):
    """SCAFFOLD with server learning rate ``eta`` = η_g and local step ``eta_L`` = η_l: FedAvg's server step
    with the ``SCAFFOLD`` worker (option II control variates) as the default worker."""

    eta: float
    eta_L: float
    worker: object = field(default_factory=SCAFFOLD)
    compressor: object = None


# ------------------------------------------------------------------------------------------------ mutants
# Plausible bugs of the rules above, catalogued in afltheory.mutants (issue 26's
# kill matrix); each is pinned by a plain-loop equivalence test in tests/published/test_published_mutants.py.
@dataclass(frozen=True)
class FedNovaNoNormalization(FedNova):
    """Mutant of FedNova: the normalization is dropped — arrival i is weighted by its own K_i (FedAvg's
    Δ_i = −η_L K_i G_i) instead of the round's τ_eff."""

    def arrival_weights(self, K: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """w_i = K_i (FedAvg's weights)."""
        return np.asarray(K, dtype=float).copy()


@dataclass(frozen=True)
class SCAFFOLDStaleControl(SCAFFOLD):
    """Mutant of the SCAFFOLD worker: the control variates are never updated (c_i = c = 0 forever: the
    correction vanishes and SCAFFOLD runs as FedAvg)."""

    def new_control(
        self, c_i: np.ndarray, c: np.ndarray, y0: np.ndarray, yK: np.ndarray, steps: np.ndarray
    ) -> np.ndarray:
        """c_i⁺ = c_i: no update of the control variates (c's increment is then 0 as well)."""
        return c_i
