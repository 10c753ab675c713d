"""Mutant components: each is a subclass of a correct rule (or compressor, or error-feedback/DIANA scheme)
that overrides one hook with a plausible bug.

A mutant is an algorithm: ``simulate(problem, AFACDEtaLMissing(eta, eta_L), behaviour, ...)`` runs it. Most
mutants override a declarative hook of ``afltheory.algorithms.ServerRule`` (``step_size``, ``normalizer``,
``local_steps_weight``, ``staleness_weight``, ``worker_weights``, ``warm_start``), so every backend runs the
mutated rule as it is; the exact engine refuses (TypeError) a mutant that overrides an imperative hook
(``combine``, ``update_memory``, ``arrival_weights``: ``afltheory.algorithms.base.IMPERATIVE_HOOKS``) — it
never reads a mutant as its base class. A mutant overrides one small hook and keeps its signature
(``combine`` returns (s_t, state), ``update_memory`` the new state; SCAFFOLD's ``control_count``); the state
passed in is donated (``afltheory.algorithms.base``). Compression mutants override a hook of a compressor
(``RandK.rescale``, read by sampling and by the exact moment map alike; ``QSGD._compress``, a law the exact
engine never represents) or of ``ErrorFeedback``/``DIANA`` (``message``, ``residual``, ``update_shift``: the
hooks their ``exchange`` round reads).
Notation as in ``afltheory.algorithms.server``: γ = η η_L, G (R, m, d) the arrivals' updates (each the mean
of its K stochastic gradients), K and τ (R, m) the arrivals' local steps and delays, M = num_workers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..algorithms.published import FedNova
from ..algorithms.schedules import StepSize
from ..algorithms.server import AFACD, AFACS, FedAvg, FedBuff, worker_mean
from ..algorithms.workers import SCAFFOLD, FedProx
from ..compression.channel import DIANA, ErrorFeedback
from ..compression.compressors import QSGD, RandK, stochastic_round

if TYPE_CHECKING:
    from ..algorithms.base import ServerState, WorkerState
    from ..algorithms.workers import ControlVariates

__all__ = [
    "AFACDUnchanged",
    "AFACSUnchanged",
    "AFACDEtaLMissing",
    "AFACDEtaLTwice",
    "AFACDEtaMissing",
    "AFACDOverM",
    "AFACDSumK",
    "AFACDOneArrival",
    "AFACDFirstTwice",
    "AFACSOverm",
    "AFACSMemoryFrozen",
    "AFACSWrongSlot",
    "AFACSMemoryUnused",
    "AFACSColdStart",
    "FedAvgNoK",
    "FedBuffNoStaleness",
    "FedProxSignFlipped",
    "SCAFFOLDSignFlipped",
    "RandKNoRescale",
    "QSGDMaxNorm",
    "ErrorFeedbackUnused",
    "ErrorFeedbackResidualSign",
    "DIANAShiftFrozen",
    "DIANAShiftSign",
    "FedAvgLocalStepFrozen",
    "FedAvgScheduleLate",
    "FedAvgWeightsDroppedWithK",
    "FedAvgWeightsOverM",
    "FedBuffStalenessPoly",
    "FedNovaTauEffMax",
    "FedProxMuTwice",
    "SCAFFOLDControlOverm",
]


# ------------------------------------------------------------------------------------------------ AFA-CD
@dataclass(frozen=True)
class AFACDEtaLMissing(AFACD):
    """Mutant of AFA-CD: x_{t+1} = x_t − η G_t (the server step forgets η_L; cf. inconsistency #1)."""

    @property
    def step_size(self) -> float:
        return float(self.eta)


@dataclass(frozen=True)
class AFACDEtaLTwice(AFACD):
    """Mutant of AFA-CD: x_{t+1} = x_t − η η_L² G_t (η_L applied twice: G already carried it)."""

    @property
    def step_size(self) -> float:
        return float(self.eta) * float(self.eta_L) ** 2


@dataclass(frozen=True)
class AFACDEtaMissing(AFACD):
    """Mutant of AFA-CD: x_{t+1} = x_t − η_L G_t (the server learning rate η is dropped)."""

    @property
    def step_size(self) -> float:
        return float(self.eta_L)


@dataclass(frozen=True)
class AFACDOverM(AFACD):
    """Mutant of AFA-CD: G_t = (1/M) Σ_{i∈M_t} G_i (averages over all M workers instead of the m arrivals)."""

    def normalizer(self, m: int, num_workers: int) -> int:
        return num_workers


@dataclass(frozen=True)
class AFACDSumK(AFACD):
    """Mutant of AFA-CD: a worker's update is the *sum* of its K gradients, not their average (G_i · K_i)."""

    def local_steps_weight(self, K: np.ndarray) -> np.ndarray | None:
        return K


@dataclass(frozen=True)
class AFACDOneArrival(AFACD):
    """Mutant of AFA-CD: only the first arrival's update is applied, x_{t+1} = x_t − γ G_{i₁} (partial
    aggregation)."""

    def combine(
        self, state: ServerState, G: np.ndarray, w: np.ndarray | None, workers: np.ndarray, scale: float
    ) -> tuple[np.ndarray, ServerState]:
        """γ G_{i₁} (no weights, no normalizer)."""
        return (self.eta * self.eta_L) * G[:, 0], state


@dataclass(frozen=True)
class AFACDFirstTwice(AFACD):
    """Mutant of AFA-CD: the first arrival is counted twice, G_t = (1/m)(G_{i₁} + Σ_{i∈M_t} G_i)."""

    def combine(
        self, state: ServerState, G: np.ndarray, w: np.ndarray | None, workers: np.ndarray, scale: float
    ) -> tuple[np.ndarray, ServerState]:
        """The base sum plus the first arrival's term once more."""
        s, state = super().combine(state, G, w, workers, scale)
        s += scale * (G[:, 0] if w is None else w[:, :1] * G[:, 0])
        return s, state


# ------------------------------------------------------------------------------------------------ AFA-CS
@dataclass(frozen=True)
class AFACSOverm(AFACS):
    """Mutant of AFA-CS: x_{t+1} = x_t − γ (1/m) Σ_{i∈[M]} s_i (the memory sum divided by m instead of M)."""

    def normalizer(self, m: int, num_workers: int) -> int:
        return m


@dataclass(frozen=True)
class AFACSMemoryFrozen(AFACS):
    """Mutant of AFA-CS: the memory slots are never updated (the server keeps stepping along the warm
    start)."""

    def update_memory(self, state: ServerState, workers: np.ndarray, U: np.ndarray) -> ServerState:
        return state


@dataclass(frozen=True)
class AFACSWrongSlot(AFACS):
    """Mutant of AFA-CS: worker i's update is written into slot (i + 1) mod M."""

    def update_memory(self, state: ServerState, workers: np.ndarray, U: np.ndarray) -> ServerState:
        M = state.memory.shape[1]
        state.memory[np.arange(U.shape[0])[:, None], (workers + 1) % M] = U
        return state


@dataclass(frozen=True)
class AFACSMemoryUnused(AFACS):
    """Mutant of AFA-CS: the memory is updated but the step uses only this round's arrivals (AFA-CD's
    step)."""

    def combine(
        self, state: ServerState, G: np.ndarray, w: np.ndarray | None, workers: np.ndarray, scale: float
    ) -> tuple[np.ndarray, ServerState]:
        """Slots written (s_i ← G_i), step γ (1/m) Σ_{i∈M_t} G_i."""
        state = self.update_memory(state, workers, G)
        return worker_mean(G, factor=self.eta * self.eta_L), state


@dataclass(frozen=True)
class AFACSColdStart(AFACS):
    """Mutant of AFA-CS: ``memory_init="warm"`` is ignored — the slots start at zero (no warm start at
    x_0)."""

    @property
    def warm_start(self) -> bool:
        return False


# ------------------------------------------------------------------------------------------------
# FedAvg/FedBuff
@dataclass(frozen=True)
class FedAvgNoK(FedAvg):
    """Mutant of FedAvg: Δ_i = −η_L G_i without the factor K_i (the update is read as one step)."""

    def local_steps_weight(self, K: np.ndarray) -> np.ndarray:
        return None


@dataclass(frozen=True)
class FedBuffNoStaleness(FedBuff):
    """Mutant of FedBuff: the staleness weight w(τ) is ignored (w ≡ 1)."""

    def staleness_weight(self, tau: np.ndarray) -> np.ndarray:
        return None


# ------------------------------------------------------------------------------------------------ worker
# rules
@dataclass(frozen=True)
class FedProxSignFlipped(FedProx):
    """Mutant of the FedProx worker: correction −μ (y − y_0) (pushes away from the start point)."""

    def correction(
        self, state: WorkerState, y: np.ndarray, y0: np.ndarray, rows: np.ndarray, workers: np.ndarray
    ) -> np.ndarray:
        return self.mu * (y0 - y)


@dataclass(frozen=True)
class SCAFFOLDSignFlipped(SCAFFOLD):
    """Mutant of the SCAFFOLD worker: correction c_i − c instead of c − c_i."""

    def correction(
        self, state: ControlVariates, y: np.ndarray, y0: np.ndarray, rows: np.ndarray, workers: np.ndarray
    ) -> np.ndarray:
        return state.c_i[rows[:, None], workers] - state.c[rows][..., None, :]


# ------------------------------------------------------------------------------------------------ compression
# (afltheory.compression: a compressor, or the worker-side scheme around it; substituted wherever nested)
@dataclass(frozen=True)
class RandKNoRescale(RandK):
    """Mutant of rand-k: the kept coordinates are not rescaled by d/k (E C(x) = (k/d) x, biased). A
    declarative hook (``rescale``) that sampling, ``moment_map`` and ``mean_gain`` all read, so the exact
    engine represents it as it is."""

    def rescale(self, dim: int) -> float:
        return 1.0


@dataclass(frozen=True)
class QSGDMaxNorm(QSGD):
    """Mutant of QSGD: levels and decoding use the max-norm ‖x‖_∞ instead of ‖x‖₂ (still unbiased, but not the
    law whose second moment ``QSGD.second_moment`` states; overrides the sampling code only)."""

    def _compress(self, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
        norm = np.abs(x).max(axis=1, keepdims=True)
        safe = np.where(norm > 0, norm, 1.0)
        xi = stochastic_round(self.s * np.abs(x) / safe, rng)
        return np.sign(x) * xi * (norm / self.s), self.expected_bits(x.shape[1])


@dataclass(frozen=True)
class ErrorFeedbackUnused(ErrorFeedback):
    """Mutant of error feedback: the error e_i is accumulated but never added back (the worker compresses
    G_i, not G_i + e_i) — plain biased compression."""

    def message(self, G: np.ndarray, error: np.ndarray) -> np.ndarray:
        return G


@dataclass(frozen=True)
class ErrorFeedbackResidualSign(ErrorFeedback):
    """Mutant of error feedback's arithmetic: the memory keeps C(G_i + e_i) − (G_i + e_i), the residual with
    its sign flipped (the compression error is added twice instead of fed back)."""

    def residual(self, message: np.ndarray, sent: np.ndarray) -> np.ndarray:
        return sent - message


@dataclass(frozen=True)
class DIANAShiftFrozen(DIANA):
    """Mutant of DIANA: the shifts h_i are never updated (h_i stays 0: plain compression)."""

    def update_shift(self, shift: np.ndarray, delta: np.ndarray, alpha: float) -> np.ndarray:
        return shift


@dataclass(frozen=True)
class DIANAShiftSign(DIANA):
    """Mutant of DIANA: h_i ← h_i − αΔ (the shift update's sign flipped)."""

    def update_shift(self, shift: np.ndarray, delta: np.ndarray, alpha: float) -> np.ndarray:
        return shift - alpha * delta


# ------------------------------------------------------------------------------------------------ controls
@dataclass(frozen=True)
class AFACDUnchanged(AFACD):
    """Equivalent mutant (control): AFA-CD itself, with ``combine`` overridden by the base's own code. The
    exact engine refuses a rule that overrides an imperative hook, so a check falls back to Monte Carlo
    exactly as under the mutants overriding ``combine``/``update_memory``; a verdict that "kills" this
    control is reacting to that engine switch, not to a bug."""

    #: its override runs the base's code: ``simulate`` may treat the step as the base's (one draw of the
    #: arrivals' summed noise, afltheory.engine._arrivals_reason), so simulate stays bit-identical
    base_code = True

    def combine(
        self, state: ServerState, G: np.ndarray, w: np.ndarray | None, workers: np.ndarray, scale: float
    ) -> tuple[np.ndarray, ServerState]:
        """The base's own code."""
        return super().combine(state, G, w, workers, scale)


@dataclass(frozen=True)
class AFACSUnchanged(AFACS):
    """Equivalent mutant (control): AFA-CS itself, with ``update_memory`` overridden by the base's own code
    (see ``AFACDUnchanged``)."""

    #: its override runs the base's code: ``simulate`` may treat the step as the base's (one draw of the
    #: arrivals' summed noise, afltheory.engine._arrivals_reason), so simulate stays bit-identical
    base_code = True

    def update_memory(self, state: ServerState, workers: np.ndarray, U: np.ndarray) -> ServerState:
        return super().update_memory(state, workers, U)


# ------------------------------------------------------------------------------------------------ issue 45
# schedules, client weights and published rules (catalogue: the "schedule", "client weights" and "published
# rules" categories; killed by the power_rules check against its own plain loops)
@dataclass(frozen=True)
class FedAvgScheduleLate(FedAvg):
    """Mutant of FedAvg: a step-size schedule is evaluated one round late — round t runs with (η_{t−1},
    η_{L,t−1}) (round 0 with its own); a constant rule is unchanged."""

    def at_round(self, t: int) -> FedAvg:
        """The rule of round max(t − 1, 0) instead of round t."""
        return super().at_round(max(int(t) - 1, 0))


@dataclass(frozen=True)
class FedAvgLocalStepFrozen(FedAvg):
    """Mutant of FedAvg: a scheduled local step never changes — every round runs η_{L,0} (the server step η_t
    still follows its schedule); a constant rule is unchanged."""

    def at_round(self, t: int) -> FedAvg:
        """Round t's rule with η_L resolved at round 0."""
        out = super().at_round(t)
        if out is self or not isinstance(self.eta_L, StepSize):
            return out
        frozen = dataclasses.replace(out, eta_L=self.eta_L.at(0))
        if self.server_optimizer is not None:
            object.__setattr__(frozen, "server_optimizer", self.server_optimizer)
        return frozen


@dataclass(frozen=True)
class FedAvgWeightsOverM(FedAvg):
    """Mutant of FedAvg: the client weights are applied as p_i instead of M p_i — the aggregate is
    (1/m) Σ_{i∈S} p_i Δ_i, off by the factor M (with weights; unweighted FedAvg is unchanged)."""

    def worker_weights(self, num_workers: int) -> np.ndarray | None:
        """p instead of M p."""
        w = super().worker_weights(num_workers)
        return None if w is None else w / num_workers


@dataclass(frozen=True)
class FedAvgWeightsDroppedWithK(FedAvg):
    """Mutant of FedAvg: the client weights are dropped whenever the K weight is present (the per-arrival
    factor K_i overwrites M p_i instead of multiplying it): FedAvg, whose K weight is always present, runs
    with uniform weights. A rule without a K weight (AFA-CD) would keep its client weights."""

    def worker_weights(self, num_workers: int) -> np.ndarray | None:
        """None (uniform) when ``local_steps_weight`` is not None."""
        if self.local_steps_weight(np.ones(1)) is not None:
            return None
        return super().worker_weights(num_workers)


@dataclass(frozen=True)
class FedBuffStalenessPoly(FedBuff):
    """Mutant of FedBuff: its √ staleness weight 1/√(1 + τ) read as 1/(1 + τ) (the square root forgotten;
    the other staleness choices unchanged)."""

    def staleness_weight(self, tau: np.ndarray) -> np.ndarray:
        """1/(1 + τ) for ``staleness="sqrt"``."""
        if self.staleness != "sqrt":
            return super().staleness_weight(tau)
        return 1.0 / (1.0 + np.asarray(tau, dtype=float))


@dataclass(frozen=True)
class FedNovaTauEffMax(FedNova):
    """Mutant of FedNova: τ_eff is the round's largest K_j instead of their mean (1/m) Σ_j K_j."""

    def arrival_weights(self, K: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """w_i = max_j K_j for every arrival of the round."""
        K = np.asarray(K, dtype=float)
        return np.broadcast_to(K.max(axis=-1, keepdims=True), K.shape).copy()


@dataclass(frozen=True)
class FedProxMuTwice(FedProx):
    """Mutant of the FedProx worker: the gradient of μ‖y − y_0‖² instead of (μ/2)‖y − y_0‖², i.e. the
    correction 2μ (y − y_0) — in the correction and in its declarative ``prox_weight`` alike, so the exact
    engine represents it too."""

    def correction(
        self, state: WorkerState, y: np.ndarray, y0: np.ndarray, rows: np.ndarray, workers: np.ndarray
    ) -> np.ndarray:
        """2μ (y − y_0)."""
        return 2.0 * self.mu * (y - y0)

    @property
    def prox_weight(self) -> float:
        """2μ."""
        return 2.0 * float(self.mu)


@dataclass(frozen=True)
class SCAFFOLDControlOverm(SCAFFOLD):
    """Mutant of the SCAFFOLD worker: the server control is updated with c += (1/m) Σ_{i∈M_t} (c_i⁺ − c_i),
    the m arrivals, instead of (1/M) (Karimireddy et al. 2020, Alg. 1: N clients); equivalent under full
    participation."""

    def control_count(self, arrivals: int, num_workers: int) -> int:
        """m, the round's arrivals, instead of M."""
        return arrivals
