"""Arrival processes: which m workers the server hears from in round t (the set M_t of Algorithm 1).

Each process draws one replicate's (rounds, m) worker indices from a Generator. Processes that are i.i.d.
across rounds expose exact first- and pairwise-inclusion probabilities (``inclusion``) for the exact-moments
engine; the others return None.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_int, check_real

#: The paper's biased arrival probabilities over 10 workers (appendix E).
PAPER_BIASED_PROBS = (0.19, 0.19, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.01, 0.01)


class Arrivals:
    """Base class: ``m`` workers per round."""

    m: int

    def validate(self, num_workers: int) -> None:
        if self.m > num_workers:
            raise ValueError(f"m={self.m} exceeds num_workers={num_workers}")

    def sample(self, rng: np.random.Generator, rounds: int, num_workers: int) -> np.ndarray:
        raise NotImplementedError

    def sample_block(self, rng: np.random.Generator, replicates: int, rounds: int, num_workers: int) -> np.ndarray:
        """(replicates, rounds, m) for a block of replicates from one generator. Default: one replicate after
        another; processes i.i.d. across rounds override it with a single vectorized draw."""
        return np.stack([self.sample(rng, rounds, num_workers) for _ in range(replicates)])

    def _iid_block(self, rng, replicates, rounds, num_workers):
        return self.sample(rng, replicates * rounds, num_workers).reshape(replicates, rounds, self.m)

    def inclusion(self, num_workers: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(π_i, π_ij): P(i ∈ M_t) and P(i, j ∈ M_t) (π_ii = π_i), if i.i.d. across rounds; else None."""
        return None


class UniformArrivals(Arrivals):
    """M_t uniform over the m-subsets of [M] (without replacement), independently across rounds [Thm 3]."""

    def __init__(self, m: int):
        self.m = check_int("m", m, low=1)

    sample_block = Arrivals._iid_block

    def sample(self, rng, rounds, num_workers):
        self.validate(num_workers)
        M, m = num_workers, self.m
        if m * m > 2 * M:  # dense case: the m smallest of M uniform keys, O(M) per round
            keys = rng.random((rounds, M))
            return np.argpartition(keys, m - 1, axis=1)[:, :m] if m < M else np.argsort(keys, axis=1)
        # sparse case, O(m) per round: draw m indices, redraw rows with a repeat until none is left (a row is
        # kept with probability Π_k (1 − k/M) ≈ exp(−m²/2M) ≥ 1/e, and accepted rows are uniform m-subsets)
        out = rng.integers(0, M, size=(rounds, m))
        bad = np.arange(rounds)
        while bad.size:
            s = np.sort(out[bad], axis=1)
            bad = bad[np.any(s[:, 1:] == s[:, :-1], axis=1)]
            out[bad] = rng.integers(0, M, size=(bad.size, m))
        return out

    def inclusion(self, num_workers):
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

    def __init__(self, m: int, probs):
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

    def validate(self, num_workers):
        super().validate(num_workers)
        if len(self.probs) != num_workers:
            raise ValueError(f"probs has {len(self.probs)} entries but num_workers={num_workers}")

    sample_block = Arrivals._iid_block

    def sample(self, rng, rounds, num_workers):
        self.validate(num_workers)
        with np.errstate(divide="ignore"):
            logp = np.log(self.probs)
        keys = logp + rng.gumbel(size=(rounds, num_workers))
        return np.argsort(-keys, axis=1, kind="stable")[:, : self.m]

    def inclusion(self, num_workers):
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

    def __init__(self, workers):
        w = np.asarray(workers)
        if w.ndim != 1 or w.size < 1 or not np.issubdtype(w.dtype, np.integer):
            raise ValueError(f"workers={workers!r} must be a non-empty 1-D list of worker indices")
        if np.any(w < 0) or len(np.unique(w)) != len(w):
            raise ValueError(f"workers={w.tolist()} must be distinct and >= 0")
        self.workers = w.astype(np.int64)
        self.m = len(w)

    def validate(self, num_workers):
        super().validate(num_workers)
        if self.workers.max() >= num_workers:
            raise ValueError(f"workers={self.workers.tolist()} must lie in [0, {num_workers - 1}]")

    sample_block = Arrivals._iid_block

    def sample(self, rng, rounds, num_workers):
        self.validate(num_workers)
        return np.broadcast_to(self.workers, (rounds, self.m)).copy()

    def inclusion(self, num_workers):
        self.validate(num_workers)
        pi = np.zeros(num_workers)
        pi[self.workers] = 1.0
        return pi, np.outer(pi, pi)

    def __repr__(self):
        return f"FixedArrivals(workers={self.workers.tolist()})"


class CyclicArrivals(Arrivals):
    """Round-robin: round t takes workers (t·m + j) mod M, j < m; every worker returns every ⌈M/m⌉ rounds."""

    def __init__(self, m: int):
        self.m = check_int("m", m, low=1)

    def sample(self, rng, rounds, num_workers):
        self.validate(num_workers)
        t = np.arange(rounds)[:, None]
        return (t * self.m + np.arange(self.m)[None, :]) % num_workers

    def sample_block(self, rng, replicates, rounds, num_workers):
        return np.broadcast_to(self.sample(rng, rounds, num_workers), (replicates, rounds, self.m)).copy()

    def __repr__(self):
        return f"CyclicArrivals(m={self.m})"


class MarkovAvailability(Arrivals):
    """Each worker is an on/off Markov chain (P(off→on) = p_on, P(on→off) = p_off), started from stationarity.
    Each round the chains step once; the server takes m workers uniformly among the available ones, stepping
    the chains again (time passes with no round) while fewer than m are available."""

    def __init__(self, m: int, p_on: float = 0.5, p_off: float = 0.5, max_wait: int = 10_000):
        self.m = check_int("m", m, low=1)
        self.p_on = check_real("p_on", p_on, low=0.0, high=1.0, low_open=True)
        self.p_off = check_real("p_off", p_off, low=0.0, high=1.0)
        self.max_wait = check_int("max_wait", max_wait, low=1)

    def sample(self, rng, rounds, num_workers):
        self.validate(num_workers)
        M, m = num_workers, self.m
        on = rng.random(M) < self.p_on / (self.p_on + self.p_off)
        out = np.empty((rounds, m), dtype=np.int64)
        for t in range(rounds):
            for _ in range(self.max_wait):
                u = rng.random(M)
                on = np.where(on, u >= self.p_off, u < self.p_on)
                if on.sum() >= m:
                    break
            else:
                raise RuntimeError(f"MarkovAvailability: fewer than m={m} workers available for "
                                   f"{self.max_wait} steps (p_on={self.p_on}, p_off={self.p_off})")
            avail = np.flatnonzero(on)
            out[t] = rng.choice(avail, size=m, replace=False)
        return out

    def __repr__(self):
        return f"MarkovAvailability(m={self.m}, p_on={self.p_on}, p_off={self.p_off})"

