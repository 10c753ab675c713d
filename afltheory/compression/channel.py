"""How a worker's update travels to the server: plain compression, error feedback, DIANA shifts.

A server rule's ``compressor=`` is either a ``Compressor`` (the worker sends C(G_i)) or one of the worker-side
schemes with per-worker memory below; every backend builds a ``Channel`` from it and passes each round's
worker updates G (R, n, d) through ``Channel.send`` before the server rule aggregates them.

* ``ErrorFeedback(C)`` [Stich et al. 2018; Karimireddy et al. 2019] — for biased compressors: worker i keeps
  e_i, sends c = C(G_i + e_i) and sets e_i ← G_i + e_i − c.
* ``DIANA(C, alpha)`` [Mishchenko et al. 2019] — for unbiased C: worker i and the server both keep the shift
  h_i; the worker sends Δ = C(G_i − h_i), the server uses ĝ_i = h_i + Δ and both set h_i ← h_i + αΔ
  (α ≤ 1/(1 + ω), default 1/(1 + ω)). The shifts learn ∇f_i(x*), removing the floor that compressing
  heterogeneous gradients leaves around x*.

Randomness: worker updates of replicate block b in round t use that block's Philox stream rewound to
(``_rng.COMPRESS``, t + 1) (``_rng.BlockStreams``, the engine's scheme), always drawn for the whole block, so
each (replicate, arrival) gets independent compression randomness and replicate r is the same whatever the
number of replicates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _faults, _rng
from .._validation import check_alloc, check_component, check_int, check_real, check_seed
from .compressors import Compressor, uncompressed_bits

__all__ = ["Channel", "DIANA", "ErrorFeedback", "base_compressor", "channel_for", "check_compressor"]


@dataclass(frozen=True)
class ErrorFeedback:
    """Error feedback around ``compressor`` (a worker-side option meant for biased compressors such as TopK
    and Sign): send C(G_i + e_i), keep e_i ← G_i + e_i − C(G_i + e_i)."""

    compressor: Compressor

    def __post_init__(self):
        check_component(
            "compressor", self.compressor, Compressor, "an afltheory.compression Compressor (RandK, TopK, …)"
        )

    def message(self, G: np.ndarray, error: np.ndarray) -> np.ndarray:
        """What worker i compresses: G_i + e_i."""
        return G + error

    def residual(self, message: np.ndarray, sent: np.ndarray) -> np.ndarray:
        """The new error memory e_i: message − C(message)."""
        return message - sent


@dataclass(frozen=True)
class DIANA:
    """DIANA learned shifts around an unbiased ``compressor``; ``alpha`` ∈ (0, 1] (None: 1/(1 + ω)).
    ``alpha=0`` is allowed and keeps h_i = 0 (plain compression: the negative control)."""

    compressor: Compressor
    alpha: float | None = None

    def __post_init__(self):
        check_component(
            "compressor", self.compressor, Compressor, "an afltheory.compression Compressor (RandK, TopK, …)"
        )
        if not self.compressor.unbiased:
            raise ValueError(
                f"DIANA needs an unbiased compressor; {self.compressor!r} is biased (use ErrorFeedback)"
            )
        if self.alpha is not None:
            check_real("alpha", self.alpha, low=0.0, high=1.0)

    def step(self, dim: int) -> float:
        """The shift step size α (default 1/(1 + ω), the largest the DIANA analysis allows)."""
        return 1.0 / (1.0 + self.compressor.omega(dim)) if self.alpha is None else float(self.alpha)

    def update_shift(self, shift: np.ndarray, delta: np.ndarray, alpha: float) -> np.ndarray:
        """h_i ← h_i + αΔ (worker and server alike)."""
        return shift + alpha * delta


def check_compressor(value: Any) -> Compressor | ErrorFeedback | DIANA | None:
    """Validate a server rule's ``compressor=`` argument (None, a Compressor, ErrorFeedback or DIANA)."""
    return check_component(
        "compressor",
        value,
        (Compressor, ErrorFeedback, DIANA),
        "an afltheory.compression Compressor (RandK, TopK, …), ErrorFeedback(...) or DIANA(...)",
        optional=True,
    )


def base_compressor(value: Compressor | ErrorFeedback | DIANA | None) -> Compressor | None:
    """The Compressor inside ``value`` (None when uncompressed)."""
    return value.compressor if isinstance(value, (ErrorFeedback, DIANA)) else value


class Channel:
    """Runtime state of ``spec`` for R replicates and M workers of dimension d (see the module docstring)."""

    def __init__(
        self,
        spec: Compressor | ErrorFeedback | DIANA | None,
        dim: int,
        num_workers: int,
        replicates: int,
        seed: int,
    ):
        # a check may build a Channel itself: it consults the mutation hook like an engine (identity unless
        # inside afltheory.mutants.injected(...))
        spec = _faults.substitute(check_compressor(spec))
        self.spec = spec
        self.comp = base_compressor(spec)
        dim, num_workers = check_int("dim", dim, low=1), check_int("num_workers", num_workers, low=1)
        replicates, seed = check_int("replicates", replicates, low=1), check_seed(seed)
        if spec is not None and not isinstance(spec, Compressor):  # EF / DIANA memory: (R, M, d)
            check_alloc(
                f"replicates={replicates}, num_workers={num_workers}, dim={dim}",
                8.0 * replicates * num_workers * dim,
            )
        self.d, self.M, self.R = dim, num_workers, replicates
        if self.comp is not None:
            self.comp.check_dim(dim)
        self.mode = (
            "none"
            if spec is None
            else "ef"
            if isinstance(spec, ErrorFeedback)
            else "diana"
            if isinstance(spec, DIANA)
            else "plain"
        )
        self.alpha = spec.step(dim) if self.mode == "diana" else None
        self.memory = np.zeros((replicates, num_workers, dim)) if self.mode in ("ef", "diana") else None
        self.B = _rng.BLOCK
        self.streams = _rng.BlockStreams(seed, -(-replicates // self.B)) if self.comp is not None else None
        # None unless an engine fault is injected (afltheory.mutants: e.g. every worker's stream shared)
        self._draw = _faults.get(_faults.FaultPoint.CHANNEL_RNG) if self.comp is not None else None

    @property
    def state(self) -> dict:
        """Arrays to reset for diverged replicates (the engine zeroes them)."""
        return {} if self.memory is None else {"compression_memory": self.memory}

    def _compress(self, V, key, row=None):
        """C applied to V (R, n, d) block by block; ``row``: V is (1, n, d), replicate ``row`` alone (drawn
        from its block's stream as part of the full block, so it gets the same values as a vectorized run)."""
        gens = self.streams.at(_rng.COMPRESS, key)
        R, n, d = V.shape
        B = self.B
        if row is not None:
            j, off = divmod(int(row), B)
            pad = np.zeros((B, n, d))
            pad[off] = V[0]
            y, b = self._apply(pad, gens[j])
            return y[off : off + 1], b[off : off + 1]
        out = np.empty_like(V)
        bits = np.empty((R, n))
        for j, gen in enumerate(gens):
            v = V[j * B : (j + 1) * B]
            rows = v.shape[0]
            if rows < B:  # partial last block: draw for the full block so replicate r does not depend on R
                pad = np.zeros((B, n, d))
                pad[:rows] = v
                v = pad
            y, b = self._apply(v, gen)
            out[j * B : j * B + rows] = y[:rows]
            bits[j * B : j * B + rows] = b[:rows]
        return out, bits

    def _apply(self, v, gen):
        """C on a block (B, n, d) from the block's generator: every (replicate, arrival) row independent."""
        if self._draw is not None:
            return self._draw(self.comp, v, gen)
        return self.comp.compress(v, gen)

    def send(
        self, G: np.ndarray, workers: np.ndarray, key: int, row: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(decoded updates (R, n, d), bits sent per replicate (R,)) for the arrivals ``workers`` (R, n).
        ``row``: G and workers hold one replicate (leading axis 1), replicate ``row`` of the run (backends
        that loop over replicates, e.g. torch); its values equal that row of a vectorized call."""
        R, n, d = G.shape
        if self.comp is None:
            return G, np.full(R, float(n * uncompressed_bits(d)))
        if self.mode == "plain":
            out, bits = self._compress(G, key, row)
            return out, bits.sum(axis=1)
        rows = np.arange(R)[:, None] if row is None else np.array([[int(row)]])
        mem = self.memory[rows, workers]  # (R, n, d) copy
        if self.mode == "ef":
            v = self.spec.message(G, mem)
            out, bits = self._compress(v, key, row)
            self.memory[rows, workers] = self.spec.residual(v, out)
            return out, bits.sum(axis=1)
        delta, bits = self._compress(G - mem, key, row)  # DIANA
        out = mem + delta
        self.memory[rows, workers] = self.spec.update_shift(mem, delta, self.alpha)
        return out, bits.sum(axis=1)


def channel_for(algorithm: Any, dim: int, num_workers: int, replicates: int, seed: int) -> Channel:
    """The Channel of a server rule (its ``compressor`` attribute; uncompressed when absent or None)."""
    return Channel(getattr(algorithm, "compressor", None), dim, num_workers, replicates, seed)
