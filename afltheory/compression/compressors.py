"""Worker-side compressors with certified constants [Konečný et al. 2016 (the survey slides);
docs/theorems.md].

A compressor C maps a worker's update x ∈ R^d to the message the server decodes. Two classes:

* unbiased, U(ω):   E C(x) = x,   E‖C(x) − x‖² ≤ ω‖x‖²          (``.unbiased`` True, ``.omega(dim)``)
* biased/contractive: E‖C(x) − x‖² ≤ (1 − δ)‖x‖², δ ∈ (0, 1]     (``.unbiased`` False, ``.delta(dim)``)

The certified constants depend on the dimension for most compressors, so they are methods of ``dim``.
``compress(x, rng)`` applies C independently to every row of ``x`` (..., d) — each row (one worker's update)
draws its own randomness from ``rng`` — and returns (C(x), bits sent per row). ``second_moment(x)`` is the
exact E[C(x)C(x)ᵀ] for one fixed x; *linear* compressors (C(x) = Mx with a random matrix M independent of x:
RandK, BernoulliMask, Subsample, GaussianSketch, LowRank) also give ``moment_map(X) = E[M X Mᵀ]`` for any
(batch of) d×d matrices X, which is what the exact engine needs: compression multiplies the update by a random
matrix, so its effect on the second moment depends on the state's second moment, not only on an additive term.

Bit accounting (``bits``): a float costs ``FLOAT_BITS`` = 32, a random pattern regenerated from a shared seed
costs ``SEED_BITS`` = 32 (Konečný's masks and sketches), an explicit index ceil(log2 d) bits; an uncompressed
update costs 32·d.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._introspect import defining_class
from .._validation import check_array, check_int, check_real

__all__ = [
    "BernoulliMask",
    "Compressor",
    "FLOAT_BITS",
    "GaussianSketch",
    "Identity",
    "LowRank",
    "QSGD",
    "RandK",
    "SEED_BITS",
    "Sign",
    "StochasticQuantizer",
    "Subsample",
    "TopK",
    "fwht",
    "stochastic_round",
    "uncompressed_bits",
]

FLOAT_BITS = 32
SEED_BITS = 32


def uncompressed_bits(dim: int) -> int:
    """Bits of an uncompressed update of ``dim`` floats."""
    return FLOAT_BITS * check_int("dim", dim, low=0)


def _index_bits(dim: int) -> int:
    return max(1, math.ceil(math.log2(dim))) if dim > 1 else 1


#: |x_j| above which ``Compressor.compress`` rescales a row before compressing it (2^500 ≈ 3e150).
_HUGE = 2.0**500


class Compressor:
    """Base class: see the module docstring. Subclasses are frozen dataclasses of their parameters.
    ``homogeneous``: C(a x) = a C(x) for a > 0 with the same randomness (every built-in compressor); lets
    ``compress`` rescale rows near the float range."""

    homogeneous = True

    unbiased = True
    linear = False

    # ---------------------------------------------------------------- certified constants and validation
    def check_dim(self, dim: int) -> int:
        """Validate the compressor against the update dimension (ValueError naming the parameter)."""
        return check_int("dim", dim, low=1)

    def omega(self, dim: int) -> float:
        """Certified ω: E‖C(x) − x‖² ≤ ω‖x‖² for every x ∈ R^dim (unbiased compressors)."""
        raise TypeError(f"{self!r} is a biased compressor: it certifies delta(dim), not omega")

    def delta(self, dim: int) -> float:
        """Certified δ: E‖C(x) − x‖² ≤ (1 − δ)‖x‖² (biased compressors; for unbiased ones δ = 1/(1 + ω) after
        scaling by 1/(1 + ω), which this method does not do)."""
        raise TypeError(f"{self!r} is an unbiased compressor: it certifies omega(dim), not delta")

    def omega_is_exact(self, dim: int) -> bool:
        """True when E‖C(x) − x‖² = ω‖x‖² for every x (the constant is attained everywhere)."""
        return False

    def expected_bits(self, dim: int) -> float:
        """Expected bits of one compressed update of ``dim`` values."""
        raise NotImplementedError

    # ---------------------------------------------------------------- application
    def compress(self, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(C(x), bits): C applied to every row of x (..., d) with independent randomness per row."""
        x = np.asarray(x, dtype=float)
        self.check_dim(x.shape[-1])
        lead = x.shape[:-1]
        flat = x.reshape(-1, x.shape[-1])
        scale = None
        if self.homogeneous and flat.size:
            # rows near the float range (norms, level spans, sums overflow): compress x / 2^k and multiply
            # back — exact (a power of two), and C(a x) = a C(x) for a > 0 — so a huge finite update gives
            # ±inf where its compressed value really overflows, never NaN (0·inf, inf − inf)
            big = np.abs(flat).max(axis=1) > _HUGE
            if big.any():
                _, e = np.frexp(np.abs(flat).max(axis=1))  # max|x| = m·2^e, m ∈ [0.5, 1)
                scale = np.where(big, np.ldexp(1.0, e - 1), 1.0)[:, None]  # max|x / scale| ∈ [1, 2)
                flat = flat / scale
        y, bits = self._compress(flat, rng)
        if scale is not None:
            with np.errstate(over="ignore"):
                y = y * scale
        bits = np.broadcast_to(np.asarray(bits, dtype=float), (flat.shape[0],)).reshape(lead)
        return y.reshape(x.shape), bits

    def __call__(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The compressed vector(s) C(x) alone (``compress(x, rng)[0]``)."""
        return self.compress(x, rng)[0]

    def _compress(self, x, rng):  # x (n, d) -> (y (n, d), bits (n,) or scalar)
        raise NotImplementedError

    # ---------------------------------------------------------------- exact second moments
    def second_moment(self, x: np.ndarray) -> np.ndarray:
        """Exact E[C(x) C(x)ᵀ] for one fixed x (d,)."""
        x = np.asarray(x, dtype=float)
        if self.linear:
            return self.moment_map(np.outer(x, x))
        raise NotImplementedError(f"{type(self).__name__} has no closed-form second moment")

    def moment_map(self, X: np.ndarray) -> np.ndarray:
        """E[M X Mᵀ] for C(x) = Mx (linear compressors), X (..., d, d)."""
        raise NotImplementedError(f"{type(self).__name__} is not a linear compressor (C(x) = Mx, M random)")

    def mean_gain(self, dim: int) -> float:
        """g with E M = g I (linear compressors; 1 for every unbiased one). The exact engine writes C = g M₀,
        E M₀ = I, and reads this declarative value with ``moment_map`` (= g² E[M₀ X M₀ᵀ]), so a compressor
        whose rescaling is wrong is represented as what it is."""
        return 1.0

    @classmethod
    def sampling_changed_below_moments(cls) -> bool:
        """True when this compressor's class overrides its sampling code (``compress``/``_compress``) below
        the class that defines its exact moments (``moment_map``): a subclass that changes
        how C(x) is drawn but inherits its base's moment map. The exact engine refuses such a compressor
        (TypeError) rather than read it as its base."""
        dm = defining_class(cls, "moment_map")
        return cls.linear and any(
            (ds := defining_class(cls, h)) is not dm and issubclass(ds, dm) for h in ("compress", "_compress")
        )

    def error_sq(self, x: np.ndarray) -> float:
        """Exact E‖C(x) − x‖² for one fixed x."""
        x = np.asarray(x, dtype=float)
        S = self.second_moment(x)
        if self.unbiased:
            return float(np.trace(S) - x @ x)
        raise NotImplementedError


def _diag_plus(X, a: float, b: float, c: float) -> np.ndarray:
    """a X + b diag(X) + c tr(X) I over the last two axes (the form of every coordinate-symmetric moment)."""
    X = np.asarray(X, dtype=float)
    d = X.shape[-1]
    out = a * X
    dg = np.einsum("...ii->...i", X)
    idx = np.arange(d)
    out[..., idx, idx] += b * dg
    if c:
        out[..., idx, idx] += c * dg.sum(axis=-1, keepdims=True)
    return out


@dataclass(frozen=True)
class Identity(Compressor):
    """No compression (ω = 0): the reference line in plots and tests."""

    linear = True

    def omega(self, dim: int) -> float:
        return 0.0

    def omega_is_exact(self, dim: int) -> bool:
        return True

    def expected_bits(self, dim: int) -> float:
        return float(uncompressed_bits(dim))

    def _compress(self, x, rng):
        return x.copy(), uncompressed_bits(x.shape[1])

    def moment_map(self, X: np.ndarray) -> np.ndarray:
        return np.array(X, dtype=float)


def _random_subsets(n: int, d: int, k: int, rng) -> np.ndarray:
    """(n, k) indices: a uniformly random k-subset of range(d) per row."""
    if k == d:
        return np.broadcast_to(np.arange(d), (n, d))
    return np.argpartition(rng.random((n, d)), k - 1, axis=1)[:, :k]


class _Subset(Compressor):
    """Uniform k-subset sparsification rescaled by d/k (shared by RandK and Subsample)."""

    linear = True

    def _k(self, dim):
        raise NotImplementedError

    def check_dim(self, dim):
        dim = check_int("dim", dim, low=1)
        if self._k(dim) > dim:
            raise ValueError(
                f"k={self._k(dim)} exceeds the update dimension dim={dim} (allowed 1 <= k <= dim)"
            )
        return dim

    def omega(self, dim):
        self.check_dim(dim)
        return dim / self._k(dim) - 1.0

    def omega_is_exact(self, dim):
        return True

    def expected_bits(self, dim):
        return float(FLOAT_BITS * self._k(dim) + SEED_BITS)

    def rescale(self, dim: int) -> float:
        """The factor on the kept coordinates: d/k (what makes the compressor unbiased)."""
        return dim / self._k(dim)

    def mean_gain(self, dim):
        return self.rescale(dim) * self._k(dim) / dim

    def _compress(self, x, rng):
        n, d = x.shape
        k = self._k(d)
        idx = _random_subsets(n, d, k, rng)
        y = np.zeros_like(x)
        rows = np.arange(n)[:, None]
        y[rows, idx] = x[rows, idx] * self.rescale(d)
        return y, self.expected_bits(d)

    def moment_map(self, X):
        d = np.shape(X)[-1]
        self.check_dim(d)
        k = self._k(d)
        s2 = self.rescale(d) ** 2  # (d/k)²: diagonal s²·k/d = d/k, off-diagonal s²·k(k−1)/(d(d−1))
        off = s2 * k * (k - 1) / (d * (d - 1)) if d > 1 else 0.0
        return _diag_plus(X, off, s2 * k / d - off, 0.0)


@dataclass(frozen=True)
class RandK(_Subset):
    """rand-k sparsification: (d/k) Σ_{i∈S} x_i e_i, S a uniform k-subset. ω = d/k − 1 (equality);
    E CCᵀ = (d/k) diag(xxᵀ) + (d(k−1)/(k(d−1)))(xxᵀ − diag(xxᵀ)). Sends k floats (support from a seed)."""

    k: int

    def __post_init__(self):
        check_int("k", self.k, low=1)

    def _k(self, dim):
        return self.k


@dataclass(frozen=True)
class Subsample(_Subset):
    """Konečný's sketched update by random subsampling: a uniformly random subset of ⌈p·d⌉ coordinates,
    rescaled by d/⌈p·d⌉ (unbiased). Same law as RandK(⌈p·d⌉); ω = d/⌈p·d⌉ − 1 (equality)."""

    p: float

    def __post_init__(self):
        check_real("p", self.p, low=0.0, high=1.0, low_open=True)

    def _k(self, dim):
        return max(1, math.ceil(self.p * dim - 1e-9))


@dataclass(frozen=True)
class BernoulliMask(Compressor):
    """Structured random mask [Konečný]: x_i ξ_i / p with ξ_i ~ Bernoulli(p) i.i.d. ω = 1/p − 1 (equality);
    E CCᵀ = xxᵀ + (1/p − 1) diag(xxᵀ). Sends the nonzero values (mask from a seed): 32·nnz + 32 bits."""

    p: float
    linear = True

    def __post_init__(self):
        check_real("p", self.p, low=0.0, high=1.0, low_open=True)

    def omega(self, dim: int) -> float:
        return 1.0 / self.p - 1.0

    def omega_is_exact(self, dim: int) -> bool:
        return True

    def expected_bits(self, dim: int) -> float:
        return FLOAT_BITS * self.p * dim + SEED_BITS

    def _compress(self, x, rng):
        mask = rng.random(x.shape) < self.p
        return np.where(mask, x / self.p, 0.0), FLOAT_BITS * mask.sum(axis=1) + SEED_BITS

    def moment_map(self, X: np.ndarray) -> np.ndarray:
        return _diag_plus(X, 1.0, 1.0 / self.p - 1.0, 0.0)


@dataclass(frozen=True)
class GaussianSketch(Compressor):
    """Gaussian sketch (1/k) SᵀS x, S a k×d standard normal matrix from a seed; only Sx (k floats) is sent.
    ω = (d + 1)/k (equality); E CCᵀ = ((k+1)/k) xxᵀ + (1/k)‖x‖² I."""

    k: int
    linear = True

    def __post_init__(self):
        check_int("k", self.k, low=1)

    def omega(self, dim: int) -> float:
        return (dim + 1.0) / self.k

    def omega_is_exact(self, dim: int) -> bool:
        return True

    def expected_bits(self, dim: int) -> float:
        return float(FLOAT_BITS * self.k + SEED_BITS)

    def _compress(self, x, rng):
        n, d = x.shape
        S = rng.standard_normal((n, self.k, d))
        sx = np.einsum("nkd,nd->nk", S, x)
        return np.einsum("nkd,nk->nd", S, sx) / self.k, self.expected_bits(d)

    def moment_map(self, X: np.ndarray) -> np.ndarray:
        return _diag_plus(X, (self.k + 1.0) / self.k, 0.0, 1.0 / self.k)


@dataclass(frozen=True)
class LowRank(Compressor):
    """Konečný's low-rank structured update: the update, viewed as a ``shape`` = (rows, cols) matrix X
    (row-major; default the most square factorization of d), is sent as B = AᵀX/r (r×cols floats) with
    A a rows×r standard normal matrix regenerated from a seed; the server decodes A B = (1/r) A AᵀX.
    Column-wise a Gaussian sketch: ω = (rows + 1)/r (equality); rank ≤ min(rows, cols);
    E[C(X)_j C(X)_lᵀ] = x_j x_lᵀ + (1/r) x_l x_jᵀ + (1/r)(x_jᵀ x_l) I for columns j, l."""

    rank: int
    shape: tuple | None = None
    linear = True

    def __post_init__(self):
        check_int("rank", self.rank, low=1)
        if self.shape is not None:
            if not isinstance(self.shape, (tuple, list)) or len(self.shape) != 2:
                raise ValueError(f"shape={self.shape!r} must be (rows, cols)")
            r, c = (check_int("shape[0]", self.shape[0], low=1), check_int("shape[1]", self.shape[1], low=1))
            object.__setattr__(self, "shape", (r, c))
            if self.rank > min(r, c):
                raise ValueError(
                    f"rank={self.rank} exceeds min(shape)={min(r, c)} of shape={self.shape} "
                    f"(allowed 1 <= rank <= min(rows, cols))"
                )

    def matrix_shape(self, dim: int) -> tuple[int, int]:
        """The (rows, cols) the vector of length ``dim`` is reshaped to before the rank-``rank``
        factorization."""
        if self.shape is not None:
            if self.shape[0] * self.shape[1] != dim:
                raise ValueError(f"shape={self.shape} does not match the update dimension dim={dim}")
            return self.shape
        rows = max(r for r in range(1, math.isqrt(dim) + 1) if dim % r == 0)
        return rows, dim // rows

    def check_dim(self, dim: int) -> int:
        dim = check_int("dim", dim, low=1)
        r, c = self.matrix_shape(dim)
        if self.rank > min(r, c):
            raise ValueError(
                f"rank={self.rank} exceeds min dimension {min(r, c)} of the {r}x{c} update "
                f"matrix (dim={dim}; allowed 1 <= rank <= {min(r, c)})"
            )
        return dim

    def omega(self, dim: int) -> float:
        self.check_dim(dim)
        return (self.matrix_shape(dim)[0] + 1.0) / self.rank

    def omega_is_exact(self, dim: int) -> bool:
        return True

    def expected_bits(self, dim: int) -> float:
        return float(FLOAT_BITS * self.rank * self.matrix_shape(dim)[1] + SEED_BITS)

    def _compress(self, x, rng):
        n, d = x.shape
        r, c = self.matrix_shape(d)
        X = x.reshape(n, r, c)
        A = rng.standard_normal((n, r, self.rank))
        B = np.einsum("nrk,nrc->nkc", A, X) / self.rank
        return np.einsum("nrk,nkc->nrc", A, B).reshape(n, d), self.expected_bits(d)

    def moment_map(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        d = X.shape[-1]
        self.check_dim(d)
        r, c = self.matrix_shape(d)
        X4 = X.reshape(*X.shape[:-2], r, c, r, c)
        # column blocks (Isserlis): E[C_j C_lᵀ] = x_j x_lᵀ + (1/r) x_l x_jᵀ + (1/r)(x_jᵀ x_l) I
        out = X4 + np.swapaxes(X4, -4, -2) / self.rank
        tr = np.einsum("...ajal->...jl", X4)  # Σ_a X[a, j, a, l]
        idx = np.arange(r)
        out[..., idx, :, idx, :] += tr / self.rank  # advanced indices first: (r, ..., c, c) += (..., c, c)
        return out.reshape(X.shape)


def fwht(x: np.ndarray) -> np.ndarray:
    """Unnormalized Walsh–Hadamard transform over the last axis (length a power of two): H x, H H = d I."""
    y = check_array("x", x)
    d = y.shape[-1] if y.ndim else 0
    if d < 1 or d & (d - 1):
        raise ValueError(f"x has shape {y.shape}: fwht needs a power-of-two length along the last axis")
    return _fwht(y)


def _fwht(x: np.ndarray) -> np.ndarray:
    y = np.array(x, dtype=float)
    d = y.shape[-1]
    h = 1
    while h < d:
        y = y.reshape(*y.shape[:-1], d // (2 * h), 2, h)
        a, b = y[..., 0, :].copy(), y[..., 1, :]
        y[..., 0, :] += b
        y[..., 1, :] = a - b
        y = y.reshape(*y.shape[:-3], d)
        h *= 2
    return y


def _pow2(d: int) -> int:
    return 1 << max(0, (d - 1).bit_length())


def stochastic_round(u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """⌊u⌋ + Bernoulli(u − ⌊u⌋) elementwise, drawn from ``rng``: the unbiased rounding of the quantizers
    (E = u); public for compressors built on them (e.g. the mutants)."""
    lo = np.floor(u)
    return lo + (rng.random(u.shape) < (u - lo))


@dataclass(frozen=True)
class StochasticQuantizer(Compressor):
    """Konečný's probabilistic quantization with ``bits`` bits per coordinate: 2^bits levels evenly spaced
    between h_min = min_j x_j and h_max = max_j x_j; x_j rounds to a neighbouring level with the probabilities
    that make it unbiased (per-coordinate variance (h_up − x_j)(x_j − h_low)). ``rotate=True`` first applies a
    random rotation R = H·diag(signs)/√d' (Walsh–Hadamard × random signs, d' = d padded to a power of two) and
    decodes with Rᵀ. Certified ω = max(d' − 2, 0)/(2(2^bits − 1)²) (d' = d without rotation): the extreme
    coordinates are exact, the others have variance ≤ Δ²/4 with Δ = (h_max − h_min)/(2^bits − 1) and
    (h_max − h_min)² ≤ 2‖x‖²; attained at x = (a, −a, 0, …) with bits = 1. Sends d'·bits + 64 bits
    (+32 for the rotation's seed)."""

    bits: int
    rotate: bool = False

    def __post_init__(self):
        check_int("bits", self.bits, low=1, high=32)
        if not isinstance(self.rotate, bool):
            raise ValueError(f"rotate={self.rotate!r} must be True or False")

    def _dq(self, dim):
        return _pow2(dim) if self.rotate else dim

    def omega(self, dim: int) -> float:
        dq = self._dq(check_int("dim", dim, low=1))
        return max(dq - 2, 0) / (2.0 * (2**self.bits - 1) ** 2)

    def expected_bits(self, dim: int) -> float:
        return float(self._dq(dim) * self.bits + 2 * FLOAT_BITS + (SEED_BITS if self.rotate else 0))

    def _levels(self, z):
        lo = z.min(axis=-1, keepdims=True)
        hi = z.max(axis=-1, keepdims=True)
        step = (hi - lo) / (2**self.bits - 1)
        safe = np.where(step > 0, step, 1.0)
        return lo, step, safe

    def _quantize(self, z, rng):
        lo, step, safe = self._levels(z)
        u = np.clip((z - lo) / safe, 0.0, 2**self.bits - 1)
        q = lo + stochastic_round(u, rng) * step
        return np.where(step > 0, q, z)

    def _compress(self, x, rng):
        n, d = x.shape
        if not self.rotate:
            return self._quantize(x, rng), self.expected_bits(d)
        dp = _pow2(d)
        signs = rng.integers(0, 2, size=(n, dp)) * 2.0 - 1.0
        z = np.zeros((n, dp))
        z[:, :d] = x
        z = _fwht(z * signs) / math.sqrt(dp)
        zq = self._quantize(z, rng)
        return (signs * _fwht(zq) / math.sqrt(dp))[:, :d], self.expected_bits(d)

    def _coord_var(self, z):
        lo, step, safe = self._levels(z)
        u = (z - lo) / safe
        f = u - np.floor(u)
        return np.where(step > 0, step**2 * f * (1 - f), 0.0)

    def second_moment(self, x: np.ndarray) -> np.ndarray:
        """Exact: xxᵀ + diag(per-coordinate variance); with rotation, averaged over all 2^{d'} sign patterns
        (d' ≤ 12 only)."""
        x = np.asarray(x, dtype=float)
        if not self.rotate:
            return np.outer(x, x) + np.diag(self._coord_var(x))
        d, dp = len(x), _pow2(len(x))
        if dp > 12:
            raise NotImplementedError(
                f"exact rotated second moment enumerates 2^{dp} sign patterns; d'={dp} > 12"
            )
        pats = ((np.arange(2**dp)[:, None] >> np.arange(dp)) & 1) * 2.0 - 1.0
        xp = np.zeros(dp)
        xp[:d] = x
        z = fwht(pats * xp) / math.sqrt(dp)  # (P, d')
        v = self._coord_var(z)  # (P, d')
        Hm = fwht(np.eye(dp)) / math.sqrt(dp)  # symmetric orthogonal
        # decoded error = diag(s) H e, Cov = diag(s) H diag(v) H diag(s)
        cov = np.einsum("pi,ij,pj,jk,pk->ik", pats, Hm, v, Hm, pats) / len(pats)
        return np.outer(x, x) + cov[:d, :d]


@dataclass(frozen=True)
class QSGD(Compressor):
    """QSGD with s levels [Alistarh et al. 2017, Lemma 3.1]: ‖x‖ sign(x_j) ξ_j/s, ξ_j the unbiased stochastic
    rounding of s|x_j|/‖x‖ to an integer. ω = min(d/s², √d/s). Bits: 32 (norm) + d(1 + ⌈log2(s+1)⌉) with a
    fixed-length code (Elias coding, as in the paper, would send fewer)."""

    s: int

    def __post_init__(self):
        check_int("s", self.s, low=1)

    def omega(self, dim: int) -> float:
        return min(dim / self.s**2, math.sqrt(dim) / self.s)

    def expected_bits(self, dim: int) -> float:
        return float(FLOAT_BITS + dim * (1 + math.ceil(math.log2(self.s + 1))))

    def _compress(self, x, rng):
        norm = np.linalg.norm(x, axis=1, keepdims=True)
        safe = np.where(norm > 0, norm, 1.0)
        xi = stochastic_round(self.s * np.abs(x) / safe, rng)
        return np.sign(x) * xi * (norm / self.s), self.expected_bits(x.shape[1])

    def second_moment(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        norm = np.linalg.norm(x)
        if norm == 0:
            return np.zeros((len(x), len(x)))
        u = self.s * np.abs(x) / norm
        f = u - np.floor(u)
        return np.outer(x, x) + np.diag((norm / self.s) ** 2 * f * (1 - f))


class _Deterministic(Compressor):
    """A deterministic compressor (no randomness: ``_compress`` ignores its rng): the exact moments are those
    of the one compressed vector."""

    def second_moment(self, x: np.ndarray) -> np.ndarray:
        """E[C(x) C(x)ᵀ] = C(x) C(x)ᵀ."""
        y = self._compress(np.asarray(x, dtype=float)[None], None)[0][0]
        return np.outer(y, y)

    def error_sq(self, x: np.ndarray) -> float:
        """E‖C(x) − x‖² = ‖C(x) − x‖²."""
        y = self._compress(np.asarray(x, dtype=float)[None], None)[0][0]
        return float(np.sum((y - x) ** 2))


@dataclass(frozen=True)
class TopK(_Deterministic):
    """top-k (biased, deterministic): keeps the k largest |x_j|. δ = k/d; needs error feedback
    [Stich et al. 2018]. Sends k values and k indices."""

    k: int
    unbiased = False

    def __post_init__(self):
        check_int("k", self.k, low=1)

    def check_dim(self, dim: int) -> int:
        dim = check_int("dim", dim, low=1)
        if self.k > dim:
            raise ValueError(f"k={self.k} exceeds the update dimension dim={dim} (allowed 1 <= k <= dim)")
        return dim

    def delta(self, dim: int) -> float:
        self.check_dim(dim)
        return self.k / dim

    def expected_bits(self, dim: int) -> float:
        return float(self.k * (FLOAT_BITS + _index_bits(dim)))

    def _compress(self, x, rng):
        n, d = x.shape
        if self.k == d:
            return x.copy(), self.expected_bits(d)
        idx = np.argpartition(-np.abs(x), self.k - 1, axis=1)[:, : self.k]
        rows = np.arange(n)[:, None]
        y = np.zeros_like(x)
        y[rows, idx] = x[rows, idx]
        return y, self.expected_bits(d)


@dataclass(frozen=True)
class Sign(_Deterministic):
    """Scaled sign (biased, deterministic) [Karimireddy et al. 2019]: (‖x‖₁/d) sign(x).
    ‖C(x) − x‖² = ‖x‖² − ‖x‖₁²/d ≤ (1 − 1/d)‖x‖², so δ = 1/d (attained at x = e_1). Sends d + 32 bits."""

    unbiased = False

    def delta(self, dim: int) -> float:
        return 1.0 / check_int("dim", dim, low=1)

    def expected_bits(self, dim: int) -> float:
        return float(dim + FLOAT_BITS)

    def _compress(self, x, rng):
        scale = np.abs(x).sum(axis=1, keepdims=True) / x.shape[1]
        return scale * np.sign(x), self.expected_bits(x.shape[1])
