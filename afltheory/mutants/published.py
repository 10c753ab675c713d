"""Mutant rules for the published claims (``afltheory.published``): plausible bugs of the rules those claims
are about — FedAvg under partial participation [Li et al. 2020, Thms 2–3] and AsySG [Lian et al. 2015] —
each a subclass overriding one declarative hook of ``afltheory.algorithms.ServerRule`` (so every backend,
the exact engine included, runs the mutated rule as it is). Catalogued in ``afltheory.mutants.catalogue``.

Notation as in ``afltheory.algorithms.server``: γ = η η_L, G (R, m, d) the arrivals' updates, M =
num_workers, p_i the client weights (uniform 1/M when ``weights`` is None).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.server import AsySG, FedAvg

__all__ = ["AsySGStalenessDamped", "AsySGStepTwice", "FedAvgSampledUnscaled"]


@dataclass(frozen=True)
class FedAvgSampledUnscaled(FedAvg):
    """Mutant of FedAvg: under partial participation the server applies the full-participation weights to the
    sampled devices, x + η Σ_{i∈S} p_i Δ_i, without rescaling by M/m: (1/M) Σ_{i∈S} M p_i Δ_i instead of
    (1/m) Σ_{i∈S} M p_i Δ_i (the aggregate weights sum to m/M, not 1; [Li et al. 2020]'s scheme-II
    rescaling p_k N/K forgotten). Equivalent to FedAvg under full participation (m = M)."""

    def normalizer(self, m: int, num_workers: int) -> int:
        """M instead of m."""
        return num_workers


@dataclass(frozen=True)
class AsySGStepTwice(AsySG):
    """Mutant of AsySG: the step applied twice — the worker sends η g (an update, not a gradient) and the
    server steps by η again: x_{t+1} = x_t − η² η_L (1/m) Σ g_i."""

    @property
    def step_size(self) -> float:
        """η² η_L instead of η η_L."""
        return float(self.eta) ** 2 * float(self.eta_L)


@dataclass(frozen=True)
class AsySGStalenessDamped(AsySG):
    """Mutant of AsySG: a gradient of staleness τ is damped by 1/(1 + τ) (a FedBuff-style "poly" staleness
    weight left on the asynchronous SGD path; Lian et al.'s AsySG applies stale gradients at full weight).
    Equivalent to AsySG without delays."""

    def staleness_weight(self, tau: np.ndarray) -> np.ndarray:
        """1/(1 + τ) instead of 1."""
        return 1.0 / (1.0 + np.asarray(tau, dtype=float))
