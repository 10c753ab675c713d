"""Arrival processes: which m workers the server hears from in round t (the set M_t of Algorithm 1).

Each process draws one replicate's (rounds, m) worker indices from a Generator. Processes that are i.i.d.
across rounds expose exact first- and pairwise-inclusion probabilities (``inclusion``) for the exact-moments
engine; the others return None.
"""

from __future__ import annotations

import functools
import math
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._introspect import defining_class
from .._validation import check_array, check_int, check_real

__all__ = [
    "Arrivals",
    "BiasedArrivals",
    "CyclicArrivals",
    "DeterministicArrivals",
    "FixedArrivals",
    "MarkovAvailability",
    "PAPER_BIASED_PROBS",
    "UniformArrivals",
]

#: The paper's biased arrival probabilities over 10 workers (appendix E).
PAPER_BIASED_PROBS = (0.19, 0.19, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.01, 0.01)


class Arrivals:
    """Base class: ``m`` workers per round."""

    m: int
    #: the arrival law of [Yang et al. 2022] this process draws, or None: "uniform" (m of M uniformly without
    #: replacement, independently across rounds — Theorem 3's assumption). Read through ``declared_law``.
    analysed_as: ClassVar[str | None] = None

    @property
    def declared_law(self) -> str | None:
        """``analysed_as`` when the class declaring it also defines the draws (``sample``, ``sample_block``,
        ``_sample_blocks``, ``inclusion``), else None: a subclass redefining how workers are drawn inherits
        no declaration about the law (a renamed subclass that changes nothing keeps it)."""
        cls = type(self)
        declared = defining_class(cls, "analysed_as")
        hooks = ("sample", "sample_block", "_sample_blocks", "inclusion")
        owners = [c for c in (defining_class(cls, h) for h in hooks) if c is not None]
        return self.analysed_as if all(issubclass(declared, c) for c in owners) else None

    def validate(self, num_workers: int) -> None:
        """Raise a ValueError naming the parameter if this law cannot draw from ``num_workers`` workers (e.g.
        m > M)."""
        if self.m > num_workers:
            raise ValueError(f"m={self.m} exceeds num_workers={num_workers}")

    def sample(self, rng: np.random.Generator, rounds: int, num_workers: int) -> np.ndarray:
        """The arriving workers (rounds, m), distinct within a round, from ``rng``."""
        raise NotImplementedError

    def sample_block(
        self, rng: np.random.Generator, replicates: int, rounds: int, num_workers: int
    ) -> np.ndarray:
        """(replicates, rounds, m) for a block of replicates from one generator. Default: one replicate after
        another; processes i.i.d. across rounds override it with a single vectorized draw. A process may also
        define ``_sample_blocks(rngs, replicates, rounds, num_workers, out)``, filling ``out`` with the blocks
        of several generators at once (the same values as ``sample_block`` on each): ``Behaviour.sample`` uses
        it."""
        return np.stack([self.sample(rng, rounds, num_workers) for _ in range(replicates)])

    def _iid_block(self, rng, replicates, rounds, num_workers):
        return self.sample(rng, replicates * rounds, num_workers).reshape(replicates, rounds, self.m)

    def inclusion(self, num_workers: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(π_i, π_ij): P(i ∈ M_t) and P(i, j ∈ M_t) (π_ii = π_i), if i.i.d. across rounds; else None."""
        return None


#: Largest m drawn by Floyd's algorithm (O(m²) comparisons per round); larger m uses random keys (O(M)).
_FLOYD_MAX_M = 32
_CHUNK = 1 << 16  # _uniform_below cuts each raw 64-bit generator output into four 16-bit chunks


@functools.lru_cache(maxsize=32)
def _lemire_table(first: int, cap: int, k: int, repeat: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds h_i = min(first + i, cap), i < k, as a (k,) int64 vector, and the uint32 bounds and uint16
    rejection thresholds 2¹⁶ mod h_i laid out for ``_uniform_below``: (k, 1) columns (``repeat=0``), or each
    repeated ``repeat`` times into a (k·repeat,) row for a short last axis (a broadcast whose inner loop has
    only a few entries is slow). Read-only, cached."""
    h = np.minimum(np.arange(first, first + k), cap)
    bound = np.repeat(h, repeat) if repeat else h[:, None]
    threshold = (_CHUNK % np.maximum(bound, 1)).astype(np.uint16)
    bound = bound.astype(np.uint32)
    for a in (h, bound, threshold):
        a.setflags(write=False)
    return h, bound, threshold


def _uniform_below(rngs, first: int, cap: int, shape: tuple) -> np.ndarray:
    """Independent, exactly uniform integers on {0, …, h_i − 1}, of shape (len(rngs), *shape) with ``shape`` =
    (…, k, n): the bound along axis −2 is h_i = min(first + i, cap) ≥ 1 (Floyd's steps: M − m + 1 + j; delays:
    min(t, max_delay) + 1). Entry b is drawn from ``rngs[b]`` alone and equals the result for ``[rngs[b]]``.

    For h ≤ 2¹⁶ this is Lemire's multiply-shift with rejection [Lemire 2019, "Fast random integer generation
    in an interval"] on 16-bit chunks of ``random_raw``: with x ~ U[0, 2¹⁶), v = ⌊x·h / 2¹⁶⌋ is accepted iff
    x·h mod 2¹⁶ ≥ 2¹⁶ mod h, which leaves exactly ⌊2¹⁶/h⌋ accepted x for every value v, so accepted entries
    are uniform; the rejected ones (probability (2¹⁶ mod h)/2¹⁶ < h/2¹⁶ each) are replaced by fresh
    ``rng.integers`` draws. One generator step gives four draws instead of ``rng.integers``' one or two, and
    the arithmetic is vectorized over all generators in uint32 (x·h < 2³²). Returns uint32 (int64 when some h
    > 2¹⁶: then plain ``rng.integers``). Deterministic given the generators' states.
    """
    k, n = ((1, 1) + tuple(shape))[-2:]  # a 0-d or 1-d shape has one bound (k = 1)
    short = n < 64
    h, bound, threshold = _lemire_table(int(first), int(cap), k, n if short else 0)
    if k and h[-1] > _CHUNK:
        return np.stack([rng.integers(0, h[:, None], size=shape) for rng in rngs])
    count = math.prod(shape)
    if count == 0:
        return np.zeros((len(rngs), *shape), dtype=np.uint32)
    words = -(-count // 4)
    raw = np.empty((len(rngs), words), dtype=np.uint64)
    for b, rng in enumerate(rngs):
        raw[b] = rng.bit_generator.random_raw(words)
    x = raw.astype("<u8", copy=False).view("<u2")[:, :count].astype(np.uint32)  # same on any byte order
    v = x.reshape(-1, k * n) if short else x.reshape(-1, k, n)  # a view of x matching the bounds' layout
    np.multiply(v, bound, out=v)
    bad = v.astype(np.uint16) < threshold  # the low 16 bits of x·h
    np.right_shift(x, 16, out=x)
    if bad.any():
        flat = np.flatnonzero(bad)  # increasing, hence grouped by generator
        bounds = h[flat // n % k]
        cuts = np.searchsorted(flat, np.arange(1, len(rngs)) * count)
        for rng, idx, hb in zip(rngs, np.split(flat, cuts), np.split(bounds, cuts), strict=True):
            if idx.size:
                x.reshape(-1)[idx] = rng.integers(0, hb)
    return x.reshape(len(rngs), *shape)


def _by_block(out: np.ndarray, nblocks: int) -> np.ndarray:
    """``out`` (nblocks·b, …) as a (nblocks, b, …) view (never a copy: writes must land in ``out``)."""
    view = out.reshape(nblocks, out.shape[0] // nblocks, *out.shape[1:])
    if not np.may_share_memory(view, out):  # reshape copied (a non-contiguous out): writes would be lost
        raise AssertionError("_by_block needs a reshapeable (contiguous) output array")
    return view


def _floyd(rngs, n: int, M: int, m: int) -> np.ndarray:
    """n independent uniform m-subsets of range(M) per generator, by Floyd's algorithm vectorized over rows
    and generators: a (len(rngs), n, m) view in a narrow integer dtype (entry b from ``rngs[b]`` alone).

    Step j (j < m) takes t_j ~ U{0, …, M − m + j} and inserts t_j, or M − m + j when t_j is already in the row
    (the row cannot hold M − m + j yet); every m-subset then has probability 1/C(M, m) [Bentley & Floyd 1987,
    "A sample of brilliance"]. All draws come from one ``_uniform_below`` call, then m − 1 vectorized
    duplicate checks (m(m − 1)/2 narrow-int comparisons per row). Column j holds the j-th insertion, so its
    entries are ≤ M − m + j (worker M − 1 only ever appears in the last column): rows are in insertion order,
    not a uniformly random permutation.
    """
    t = _uniform_below(rngs, M - m + 1, M, (m, n))  # (G, m, n): each step's column is contiguous
    cols = t.astype(np.uint8 if M <= 0xFF else np.uint16 if M <= 0xFFFF else np.int64)
    for j in range(1, m):
        dup = (cols[:, :j] == cols[:, j, None]).any(axis=1)
        cols[:, j][dup] = M - m + j
    return cols.transpose(0, 2, 1)


class UniformArrivals(Arrivals):
    """M_t uniform over the m-subsets of [M] (without replacement), independently across rounds [Thm 3].

    Row order (M_t is a set; nothing downstream may depend on it): m ≤ 32 uses Floyd's algorithm (``_floyd``,
    O(m²) cheap operations per round, exact draws) and lists each round in insertion order (entry j ≤ M − m +
    j); larger m takes the m smallest of M uniform keys in ``argpartition`` order (m = M: a uniformly random
    permutation)."""

    analysed_as = "uniform"

    def __init__(self, m: int):
        self.m = check_int("m", m, low=1)

    sample_block = Arrivals._iid_block

    def sample(self, rng: np.random.Generator, rounds: int, num_workers: int) -> np.ndarray:
        self.validate(num_workers)
        M, m = num_workers, self.m
        if m <= _FLOYD_MAX_M:
            return _floyd([rng], rounds, M, m)[0].astype(np.int64)
        keys = rng.random((rounds, M))  # O(M) per round
        return np.argpartition(keys, m - 1, axis=1)[:, :m] if m < M else np.argsort(keys, axis=1)

    def _sample_blocks(self, rngs, replicates, rounds, num_workers, out):
        """Block b of ``out`` (blocks of ``replicates`` along axis 0) = ``sample_block(rngs[b], replicates,
        rounds, num_workers)``, vectorized over the generators (``Behaviour.sample``'s fast path; same
        values)."""
        self.validate(num_workers)
        blocks = _by_block(out, len(rngs))
        if self.m > _FLOYD_MAX_M:
            for rng, block in zip(rngs, blocks, strict=True):
                block[...] = self.sample_block(rng, replicates, rounds, num_workers)
            return
        subsets = _floyd(rngs, replicates * rounds, num_workers, self.m)
        blocks[...] = subsets.reshape(len(rngs), replicates, rounds, self.m)

    def inclusion(self, num_workers: int) -> tuple[np.ndarray, np.ndarray]:
        M, m = num_workers, self.m
        pi = np.full(M, m / M)
        pij = np.full((M, M), m * (m - 1) / (M * (M - 1)) if M > 1 else 0.0)
        np.fill_diagonal(pij, m / M)
        return pi, pij

    def __repr__(self):
        return f"UniformArrivals(m={self.m})"


class BiasedArrivals(Arrivals):
    """Successive sampling without replacement: each of the m picks takes worker i with probability ∝ probs_i
    among those not yet picked (numpy's ``choice(replace=False, p=probs)``; drawn as Gumbel-top-m)."""

    def __init__(self, m: int, probs: ArrayLike):
        self.m = check_int("m", m, low=1)
        p = check_array("probs", probs, ndim=1)
        if np.any(p < 0):
            raise ValueError(f"probs must be >= 0, got min {p.min()}")
        if not np.isclose(p.sum(), 1.0, rtol=0, atol=1e-9):
            raise ValueError(f"probs must sum to 1, got {p.sum()}")
        if np.count_nonzero(p) < self.m:
            raise ValueError(f"probs has {np.count_nonzero(p)} non-zero entries, fewer than m={self.m}")
        self.probs = p / p.sum()
        self._inclusion = None

    @classmethod
    def paper(cls, m: int = 5) -> BiasedArrivals:
        """The paper's 10-worker vector [0.19, 0.19, 0.1×6, 0.01, 0.01] (appendix E)."""
        return cls(m, PAPER_BIASED_PROBS)

    def validate(self, num_workers: int) -> None:
        super().validate(num_workers)
        if len(self.probs) != num_workers:
            raise ValueError(f"probs has {len(self.probs)} entries but num_workers={num_workers}")

    sample_block = Arrivals._iid_block

    def sample(self, rng: np.random.Generator, rounds: int, num_workers: int) -> np.ndarray:
        self.validate(num_workers)
        with np.errstate(divide="ignore"):
            logp = np.log(self.probs)
        keys = logp + rng.gumbel(size=(rounds, num_workers))
        return np.argsort(-keys, axis=1, kind="stable")[:, : self.m]

    def inclusion(self, num_workers: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact by dynamic programming over subsets: P(S) = Σ_{j∈S} P(S∖j) p_j / (1 − p(S∖j)) (M ≤ 20)."""
        self.validate(num_workers)
        if self._inclusion is None:
            M, m, p = num_workers, self.m, self.probs
            if M > 20:
                raise ValueError(f"exact inclusion probabilities need num_workers <= 20, got {M}")
            P = {0: 1.0}
            for _ in range(m):
                nxt: dict[int, float] = {}
                for S, pr in P.items():
                    rest = 1.0 - sum(p[k] for k in range(M) if S >> k & 1)
                    for j in range(M):
                        if not S >> j & 1 and p[j] > 0:
                            nxt[S | 1 << j] = nxt.get(S | 1 << j, 0.0) + pr * p[j] / rest
                P = nxt
            pi, pij = np.zeros(M), np.zeros((M, M))
            for S, pr in P.items():
                idx = [k for k in range(M) if S >> k & 1]
                pi[idx] += pr
                pij[np.ix_(idx, idx)] += pr
            self._inclusion = (pi, pij)
        return self._inclusion

    def __repr__(self):
        return f"BiasedArrivals(m={self.m}, probs={np.round(self.probs, 4).tolist()})"


class FixedArrivals(Arrivals):
    """The same workers every round: Theorem 1's worst case (``FixedArrivals([0])``)."""

    def __init__(self, workers: ArrayLike):
        w = np.asarray(workers)
        if w.ndim != 1 or w.size < 1 or not np.issubdtype(w.dtype, np.integer):
            raise ValueError(f"workers={workers!r} must be a non-empty 1-D list of worker indices")
        if np.any(w < 0) or len(np.unique(w)) != len(w):
            raise ValueError(f"workers={w.tolist()} must be distinct and >= 0")
        self.workers = w.astype(np.int64)
        self.m = len(w)

    def validate(self, num_workers: int) -> None:
        super().validate(num_workers)
        if self.workers.max() >= num_workers:
            raise ValueError(f"workers={self.workers.tolist()} must lie in [0, {num_workers - 1}]")

    sample_block = Arrivals._iid_block

    def sample(self, rng: np.random.Generator, rounds: int, num_workers: int) -> np.ndarray:
        self.validate(num_workers)
        return np.broadcast_to(self.workers, (rounds, self.m)).copy()

    def inclusion(self, num_workers: int) -> tuple[np.ndarray, np.ndarray]:
        self.validate(num_workers)
        pi = np.zeros(num_workers)
        pi[self.workers] = 1.0
        return pi, np.outer(pi, pi)

    def __repr__(self):
        return f"FixedArrivals(workers={self.workers.tolist()})"


class DeterministicArrivals(Arrivals):
    """An arrival process without randomness (``sample`` ignores its generator): every replicate of a block
    is the same sequence."""

    def sample_block(
        self, rng: np.random.Generator, replicates: int, rounds: int, num_workers: int
    ) -> np.ndarray:
        """(replicates, rounds, m): the one sequence, for every replicate."""
        return np.broadcast_to(self.sample(rng, rounds, num_workers), (replicates, rounds, self.m)).copy()


class CyclicArrivals(DeterministicArrivals):
    """Round-robin: round t takes workers (t·m + j) mod M, j < m; every worker returns every ⌈M/m⌉ rounds."""

    def __init__(self, m: int):
        self.m = check_int("m", m, low=1)

    def sample(self, rng: np.random.Generator, rounds: int, num_workers: int) -> np.ndarray:
        self.validate(num_workers)
        t = np.arange(rounds)[:, None]
        return (t * self.m + np.arange(self.m)[None, :]) % num_workers

    def __repr__(self):
        return f"CyclicArrivals(m={self.m})"


class MarkovAvailability(Arrivals):
    """Each worker is an on/off Markov chain (P(off→on) = p_on, P(on→off) = p_off), started from stationarity.

    Round semantics (the server waits for m *arrivals*, Algorithm 1): each round the chains step once;
    every worker that is on at a step *arrives* (sends its update) and stays counted for the rest of the
    round, even if its chain switches off again. While fewer than m workers have arrived, the chains step
    again (time passes with no round). The round takes the workers in arrival order; ties at the step that
    completes the round are broken uniformly. Availability therefore need *not* be simultaneous: with
    p_on > 0 every worker arrives after a geometric number of steps, so the wait ends with probability 1,
    after O(log M / p_on) steps, even for m = M. When at least m workers are on at the first step the server
    takes m of them uniformly. ``max_wait`` (steps per round) only guards against an unbounded loop;
    exceeding it raises RuntimeError.
    """

    def __init__(self, m: int, p_on: float = 0.5, p_off: float = 0.5, max_wait: int = 10_000):
        self.m = check_int("m", m, low=1)
        self.p_on = check_real("p_on", p_on, low=0.0, high=1.0, low_open=True)
        self.p_off = check_real("p_off", p_off, low=0.0, high=1.0)
        self.max_wait = check_int("max_wait", max_wait, low=1)

    def sample(self, rng: np.random.Generator, rounds: int, num_workers: int) -> np.ndarray:
        self.validate(num_workers)
        M, m = num_workers, self.m
        on = rng.random(M) < self.p_on / (self.p_on + self.p_off)
        out = np.empty((rounds, m), dtype=np.int64)
        for t in range(rounds):
            arrived: list[int] = []  # workers counted this round, in arrival order
            seen = np.zeros(M, dtype=bool)
            for _ in range(self.max_wait):
                u = rng.random(M)
                on = np.where(on, u >= self.p_off, u < self.p_on)
                new = np.flatnonzero(on & ~seen)
                need = m - len(arrived)
                if len(new) >= need:
                    arrived.extend(rng.choice(new, size=need, replace=False).tolist())
                    break
                arrived.extend(new.tolist())
                seen[new] = True
            else:
                raise RuntimeError(
                    f"MarkovAvailability: fewer than m={m} workers arrived in "
                    f"{self.max_wait} steps (p_on={self.p_on}, p_off={self.p_off})"
                )
            out[t] = arrived
        return out

    def __repr__(self):
        return f"MarkovAvailability(m={self.m}, p_on={self.p_on}, p_off={self.p_off})"
