"""How a worker's update travels to the server: plain compression, error feedback, DIANA shifts.

A server rule's ``compressor=`` is either a ``Compressor`` (the worker sends C(G_i)) or one of the worker-side
schemes with per-worker memory below (each a ``MemoryScheme``); every backend builds a ``Channel`` from it and
passes each round's worker updates G (R, n, d) through ``Channel.send`` before the server rule aggregates
them.

* ``ErrorFeedback(C)`` [Stich et al. 2018; Karimireddy et al. 2019] — for biased compressors: worker i keeps
  e_i, sends c = C(G_i + e_i) and sets e_i ← G_i + e_i − c.
* ``DIANA(C, alpha)`` [Mishchenko et al. 2019] — for unbiased C: worker i and the server both keep the shift
  h_i; the worker sends Δ = C(G_i − h_i), the server uses ĝ_i = h_i + Δ and both set h_i ← h_i + αΔ
  (α ≤ 1/(1 + ω), default 1/(1 + ω)). The shifts learn ∇f_i(x*), removing the floor that compressing
  heterogeneous gradients leaves around x*.

State follows the rules' (init, update) pattern (``afltheory.algorithms.base``): ``Channel.init()`` builds a
typed ``ChannelState`` — ``ChannelMemory(memory)``, the (R, M, d) memories e_i or h_i, for a ``MemoryScheme``;
the stateless ``ChannelState()`` otherwise — and ``send(state, G, workers, key) -> (out, bits, state)``
returns the state to continue with. The state passed in is DONATED (the channel writes the arrivals' new
memories into its arrays and returns them; the caller never reads it again), and the caller reaches into the
current state only through ``arrays()`` (the engine zeroes a diverged replicate's rows there). The scheme
declares its own round (``MemoryScheme.exchange``: message, compression, new memory), so ``Channel`` only
gathers and scatters the arrivals' memory rows.

Randomness: worker updates of replicate block b in round t use that block's Philox stream rewound to
(``_rng.COMPRESS``, t + 1) (``_rng.BlockStreams``, the engine's scheme), always drawn for the whole block, so
each (replicate, arrival) gets independent compression randomness and replicate r is the same whatever the
number of replicates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _faults, _rng
from .._state import ArrayState
from .._validation import check_alloc, check_component, check_int, check_real, check_seed
from .compressors import Compressor, uncompressed_bits

__all__ = [
    "Channel",
    "ChannelMemory",
    "ChannelState",
    "DIANA",
    "ErrorFeedback",
    "MemoryScheme",
    "base_compressor",
    "channel_for",
    "check_compressor",
]

#: ``compress(V) -> (C(V), bits per row)``: the channel's compressor with this round's randomness
Compress = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class ChannelState(ArrayState):
    """A channel's state (``Channel.init`` / ``send``), with the protocol of every state
    (``afltheory._state.ArrayState``, as the rules' ``RuleState``): a frozen dataclass whose every field is an
    array with a leading replicate axis, passed to ``send`` by donation. ``ChannelState()`` itself is the
    stateless channel's state (plain compression, or none)."""


@dataclass(frozen=True)
class ChannelMemory(ChannelState):
    """The per-worker memories of a ``MemoryScheme``: ``memory`` (R, M, d) — the errors e_i (error feedback)
    or the shifts h_i (DIANA; the server's copy equals the workers')."""

    memory: np.ndarray


class MemoryScheme:
    """Base of the worker-side schemes with per-worker memory around a ``compressor`` (``ErrorFeedback``,
    ``DIANA``): a frozen dataclass whose ``exchange`` defines one round. ``Channel`` gathers the arrivals'
    memories, calls ``exchange`` and scatters the new memories back; it never dispatches on the scheme's
    type."""

    def exchange(
        self, memory: np.ndarray, G: np.ndarray, compress: Compress
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One round for the arrivals: ``memory`` (R, n, d) their memories (a copy), ``G`` (R, n, d) their
        updates, ``compress`` the compressor with this round's randomness. Returns (the updates the server
        decodes (R, n, d), bits per arrival (R, n), the arrivals' new memories (R, n, d))."""
        raise NotImplementedError


@dataclass(frozen=True)
class ErrorFeedback(MemoryScheme):
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

    def exchange(
        self, memory: np.ndarray, G: np.ndarray, compress: Compress
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Send c = C(``message``(G_i, e_i)), keep e_i ← ``residual``(message, c) (``MemoryScheme``)."""
        v = self.message(G, memory)
        out, bits = compress(v)
        return out, bits, self.residual(v, out)


@dataclass(frozen=True)
class DIANA(MemoryScheme):
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

    def exchange(
        self, memory: np.ndarray, G: np.ndarray, compress: Compress
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Send Δ = C(G_i − h_i); the server decodes h_i + Δ; h_i ← ``update_shift``(h_i, Δ, α)
        (``MemoryScheme``; α = ``step(d)``)."""
        delta, bits = compress(G - memory)
        return memory + delta, bits, self.update_shift(memory, delta, self.step(G.shape[-1]))


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
    return value.compressor if isinstance(value, MemoryScheme) else value


class Channel:
    """The channel of ``spec`` for R replicates and M workers of dimension d: its streams and its rounds
    (``init`` / ``send``; the memories live in the ``ChannelState``, see the module docstring)."""

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
        #: the memory scheme around ``comp`` (ErrorFeedback, DIANA), None for plain compression or none
        self.scheme = spec if isinstance(spec, MemoryScheme) else None
        if self.scheme is not None:  # EF / DIANA memory: (R, M, d)
            check_alloc(
                f"replicates={replicates}, num_workers={num_workers}, dim={dim}",
                8.0 * replicates * num_workers * dim,
            )
        self.d, self.M, self.R = dim, num_workers, replicates
        if self.comp is not None:
            self.comp.check_dim(dim)
        self.B = _rng.BLOCK
        self.streams = _rng.BlockStreams(seed, -(-replicates // self.B)) if self.comp is not None else None
        # None unless an engine fault is injected (afltheory.mutants: e.g. every worker's stream shared)
        self._draw = _faults.get(_faults.FaultPoint.CHANNEL_RNG) if self.comp is not None else None

    def init(self) -> ChannelState:
        """The initial state: zero memories ``ChannelMemory`` (R, M, d) for a ``MemoryScheme``, else the
        stateless ``ChannelState()``."""
        if self.scheme is None:
            return ChannelState()
        return ChannelMemory(np.zeros((self.R, self.M, self.d)))

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
        self, state: ChannelState, G: np.ndarray, workers: np.ndarray, key: int, row: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, ChannelState]:
        """(decoded updates (R, n, d), bits sent per replicate (R,), the new state) for the arrivals
        ``workers`` (R, n) with updates ``G`` in round ``key``. ``state`` (from ``init`` or the previous
        ``send``) is donated: the arrivals' new memories are written into its arrays, which the returned state
        reuses, and the caller continues with the returned state only. ``row``: G and workers hold one
        replicate (leading axis 1), replicate ``row`` of the run (backends that loop over replicates, e.g.
        torch); its values equal that row of a vectorized call, and only that row of the state changes."""
        R, n, d = G.shape
        if self.comp is None:
            return G, np.full(R, float(n * uncompressed_bits(d))), state
        if self.scheme is None:
            out, bits = self._compress(G, key, row)
            return out, bits.sum(axis=1), state
        rows = np.arange(R)[:, None] if row is None else np.array([[int(row)]])
        memory = state["memory"]
        out, bits, new = self.scheme.exchange(
            memory[rows, workers],  # the arrivals' memories: an (R, n, d) copy
            G,
            lambda V: self._compress(V, key, row),
        )
        memory[rows, workers] = new
        return out, bits.sum(axis=1), state


def channel_for(algorithm: Any, dim: int, num_workers: int, replicates: int, seed: int) -> Channel:
    """The Channel of a server rule (its ``compressor`` attribute; uncompressed when absent or None)."""
    return Channel(getattr(algorithm, "compressor", None), dim, num_workers, replicates, seed)
