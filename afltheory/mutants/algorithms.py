"""Mutant rules: each is a subclass of the correct rule that overrides one hook with a plausible bug.

A mutant is an algorithm: ``simulate(problem, AFACDEtaLMissing(eta, eta_L), behaviour, ...)`` runs it. The
exact
engine and the torch backend represent only the correct rules themselves and refuse these subclasses with a
``TypeError``/``ValueError`` (they never read a mutant as its base class).
Notation as in ``afltheory.algorithms.server``: γ = η η_L, G (R, m, d) the arrivals' updates (each the mean
of its
K stochastic gradients), K and τ (R, m) the arrivals' local steps and delays, M = num_workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.server import AFACD, AFACS, FedAvg, FedBuff, _worker_mean
from ..algorithms.workers import SCAFFOLD, FedProx

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
]


# ------------------------------------------------------------------------------------------------ AFA-CD
@dataclass(frozen=True)
class AFACDEtaLMissing(AFACD):
    """Mutant of AFA-CD: x_{t+1} = x_t − η G_t (the server step forgets η_L; cf. inconsistency #1)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, factor=self.eta)


@dataclass(frozen=True)
class AFACDEtaLTwice(AFACD):
    """Mutant of AFA-CD: x_{t+1} = x_t − η η_L² G_t (η_L applied twice: G already carried it)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, factor=self.eta * self.eta_L**2)


@dataclass(frozen=True)
class AFACDEtaMissing(AFACD):
    """Mutant of AFA-CD: x_{t+1} = x_t − η_L G_t (the server learning rate η is dropped)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, factor=self.eta_L)


@dataclass(frozen=True)
class AFACDOverM(AFACD):
    """Mutant of AFA-CD: G_t = (1/M) Σ_{i∈M_t} G_i (averages over all M workers instead of the m arrivals)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, factor=self.eta * self.eta_L * G.shape[1] / num_workers)


@dataclass(frozen=True)
class AFACDSumK(AFACD):
    """Mutant of AFA-CD: a worker's update is the *sum* of its K gradients, not their average (G_i · K_i)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, K, factor=self.eta * self.eta_L)


@dataclass(frozen=True)
class AFACDOneArrival(AFACD):
    """Mutant of AFA-CD: only the first arrival's update is applied, x_{t+1} = x_t − γ G_{i₁} (partial
    aggregation)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - (self.eta * self.eta_L) * G[:, 0]


@dataclass(frozen=True)
class AFACDFirstTwice(AFACD):
    """Mutant of AFA-CD: the first arrival is counted twice, G_t = (1/m)(G_{i₁} + Σ_{i∈M_t} G_i)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return (
            x - _worker_mean(G, factor=self.eta * self.eta_L) - (self.eta * self.eta_L / G.shape[1]) * G[:, 0]
        )


# ------------------------------------------------------------------------------------------------ AFA-CS
@dataclass(frozen=True)
class AFACSOverm(AFACS):
    """Mutant of AFA-CS: x_{t+1} = x_t − γ (1/m) Σ_{i∈[M]} s_i (the memory sum divided by m instead of M)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        mem = state["memory"]
        mem[np.arange(len(x))[:, None], workers] = G
        return x - _worker_mean(mem, factor=self.eta * self.eta_L * num_workers / G.shape[1])


@dataclass(frozen=True)
class AFACSMemoryFrozen(AFACS):
    """Mutant of AFA-CS: the memory slots are never updated (the server keeps stepping along the warm
    start)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(state["memory"], factor=self.eta * self.eta_L)


@dataclass(frozen=True)
class AFACSWrongSlot(AFACS):
    """Mutant of AFA-CS: worker i's update is written into slot (i + 1) mod M."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        mem = state["memory"]
        mem[np.arange(len(x))[:, None], (workers + 1) % num_workers] = G
        return x - _worker_mean(mem, factor=self.eta * self.eta_L)


@dataclass(frozen=True)
class AFACSMemoryUnused(AFACS):
    """Mutant of AFA-CS: the memory is updated but the step uses only this round's arrivals (AFA-CD's
    step)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        state["memory"][np.arange(len(x))[:, None], workers] = G
        return x - _worker_mean(G, factor=self.eta * self.eta_L)


@dataclass(frozen=True)
class AFACSColdStart(AFACS):
    """Mutant of AFA-CS: ``memory_init="warm"`` is ignored — the slots start at zero (no warm start at
    x_0)."""

    @property
    def needs_warm_start(self):
        return False


# ------------------------------------------------------------------------------------------------
# FedAvg/FedBuff
@dataclass(frozen=True)
class FedAvgNoK(FedAvg):
    """Mutant of FedAvg: Δ_i = −η_L G_i without the factor K_i (the update is read as one step)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, factor=self.eta * self.eta_L)


@dataclass(frozen=True)
class FedBuffNoStaleness(FedBuff):
    """Mutant of FedBuff: the staleness weight w(τ) is ignored (w ≡ 1)."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - _worker_mean(G, K, factor=self.eta * self.eta_L)


# ------------------------------------------------------------------------------------------------ worker
# rules
@dataclass(frozen=True)
class FedProxSignFlipped(FedProx):
    """Mutant of the FedProx worker: correction −μ (y − y_0) (pushes away from the start point)."""

    def correction(self, state, y, y0, rows, workers):
        return self.mu * (y0 - y)


@dataclass(frozen=True)
class SCAFFOLDSignFlipped(SCAFFOLD):
    """Mutant of the SCAFFOLD worker: correction c_i − c instead of c − c_i."""

    def correction(self, state, y, y0, rows, workers):
        return state["c_i"][rows[:, None], workers] - state["c"][rows][..., None, :]


# ------------------------------------------------------------------------------------------------ controls
@dataclass(frozen=True)
class AFACDUnchanged(AFACD):
    """Equivalent mutant (control): AFA-CD itself, as a subclass. Exact moments refuse it, so a check falls
    back to Monte Carlo; a verdict that "kills" it is reacting to the engine switch, not to a bug."""


@dataclass(frozen=True)
class AFACSUnchanged(AFACS):
    """Equivalent mutant (control): AFA-CS itself, as a subclass (see ``AFACDUnchanged``)."""
