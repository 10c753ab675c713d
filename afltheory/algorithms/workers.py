"""Worker rules: what one arriving worker does during its K local steps from its (stale) start point y_0.

A rule modifies the stochastic gradient (``correction``) and may keep per-worker state (SCAFFOLD's control
variates). The engine runs the steps; rules never decide who arrives or how stale they are (docs/DESIGN.md
#3). State is a typed ``WorkerState`` (arrays with a leading replicate axis R); ``finish`` returns the new
state and the state passed in is donated (``afltheory.algorithms.base``): SCAFFOLD writes the new control
variates into its arrays and returns them, without a copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_nonnegative
from .base import WorkerRule, WorkerState

__all__ = ["SCAFFOLD", "SGD", "ControlVariates", "FedProx"]


@dataclass(frozen=True)
class ControlVariates(WorkerState):
    """SCAFFOLD's state: the workers' control variates ``c_i`` (R, M, d) and the server's ``c`` (R, d)."""

    c_i: np.ndarray
    c: np.ndarray


@dataclass(frozen=True)
class SGD(WorkerRule):
    """Plain local SGD: y_{k+1} = y_k − η_L ∇f_i(y_k, ξ_k) [Yang et al. 2022, Algorithm 2 worker]."""

    @property
    def prox_weight(self) -> float:
        """0: no correction."""
        return 0.0


@dataclass(frozen=True)
class FedProx(WorkerRule):
    """FedProx worker: gradient of f_i(y) + (μ/2)‖y − y_0‖², i.e. g + μ (y − y_0) (Table 3 uses μ = 0.1)."""

    mu: float = 0.1

    def __post_init__(self) -> None:
        check_nonnegative("mu", self.mu)

    def correction(
        self, state: WorkerState, y: np.ndarray, y0: np.ndarray, rows: np.ndarray, workers: np.ndarray
    ) -> np.ndarray:
        """μ (y − y_0)."""
        return self.mu * (y - y0)

    @property
    def prox_weight(self) -> float:
        """μ."""
        return float(self.mu)


@dataclass(frozen=True)
class SCAFFOLD(WorkerRule):
    """SCAFFOLD worker (Karimireddy et al. 2020, option II): g − c_i + c; after K steps
    c_i⁺ = c_i − c + (y_0 − y_K)/(K η_L) and the server control c += (1/M) Σ_{i∈M_t} (c_i⁺ − c_i)."""

    def init(self, replicates: int, num_workers: int, dim: int) -> ControlVariates:
        """Control variates c_i (R, M, d) and c (R, d), zero."""
        return ControlVariates(np.zeros((replicates, num_workers, dim)), np.zeros((replicates, dim)))

    def correction(
        self, state: ControlVariates, y: np.ndarray, y0: np.ndarray, rows: np.ndarray, workers: np.ndarray
    ) -> np.ndarray:
        """c − c_i."""
        return state.c[rows][..., None, :] - state.c_i[rows[:, None], workers]

    def finish(
        self,
        state: ControlVariates,
        y0: np.ndarray,
        yK: np.ndarray,
        K: np.ndarray,
        eta_L: float,
        rows: np.ndarray,
        workers: np.ndarray,
        num_workers: int,
    ) -> ControlVariates:
        """Option II update of c_i (``new_control``) and c (its increment over ``control_count``), written
        into the donated state's arrays, which are returned."""
        r2 = rows[:, None]
        old = state.c_i[r2, workers]
        new = self.new_control(old, state.c[rows][:, None, :], y0, yK, K[..., None] * eta_L)
        state.c_i[r2, workers] = new
        state.c[rows] += (new - old).sum(axis=1) / self.control_count(workers.shape[1], num_workers)
        return state

    def new_control(
        self, c_i: np.ndarray, c: np.ndarray, y0: np.ndarray, yK: np.ndarray, steps: np.ndarray
    ) -> np.ndarray:
        """c_i⁺ = c_i − c + (y_0 − y_K)/(K η_L) for the arrivals (``steps`` = K η_L)."""
        return c_i - c + (y0 - yK) / steps

    def control_count(self, arrivals: int, num_workers: int) -> int:
        """The count the server control's increment Σ_{i∈M_t} (c_i⁺ − c_i) is divided by: M, the number of
        workers (option II), whatever the number of ``arrivals``."""
        return num_workers
