"""Problem protocol: a federated objective f = (1/M) Σ_i f_i with certified constants (Assumptions 1–3).

Index convention used by every method: ``x`` has shape ``(..., dim)`` and the worker index ``i`` is an int or
an integer array broadcastable against ``x.shape[:-1]``; results keep the leading (batch) axes, so the engine
can evaluate (replicates, workers, dim) blocks in one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._buffers import BufferPool
from .._numerics import rowdot
from .._validation import check_alloc, check_int, check_nonnegative, check_seed

__all__ = [
    "as_noise",
    "CERT_KINDS",
    "check_dim_workers",
    "Constants",
    "exact_certificates",
    "GaussianNoise",
    "LinearGaussianModel",
    "LocalKernel",
    "NoiseModel",
    "NoNoise",
    "Problem",
]

CERT_KINDS = ("exact", "upper", "lower", "none")


@dataclass(frozen=True)
class Constants:
    """Certified constants of a problem (Assumptions 1–3 of [Yang et al. 2022]).

    ``certified`` maps each name to how it is certified: ``"exact"`` (attained / closed form), ``"upper"``
    (a proven upper bound: L, sigma_L, sigma_G), ``"lower"`` (a proven lower bound: f_star, mu) or ``"none"``.
    ``mu`` is a lower bound on the smallest eigenvalue of ∇²f (negative for nonconvex families).
    ``radius``: if not None, Assumption 3's σ_G is certified only on the ball ‖x − x_star‖ ≤ radius.
    """

    L: float
    mu: float
    sigma_L: float
    sigma_G: float
    f_star: float
    x_star: np.ndarray | None
    certified: Mapping[str, str] = field(default_factory=dict)
    radius: float | None = None

    def __post_init__(self):
        for name in ("L", "mu", "sigma_L", "sigma_G", "f_star"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or np.isnan(v):
                raise ValueError(f"Constants: {name}={v!r} must be a real number (not NaN)")
        if not (np.isfinite(self.L) and self.L > 0):
            raise ValueError(
                f"Constants: L={self.L!r} must be finite and > 0 (a certified smoothness constant)"
            )
        if not (np.isfinite(self.mu) and self.mu <= self.L):
            raise ValueError(f"Constants: mu={self.mu!r} must be finite and <= L={self.L!r}")
        for name in ("sigma_L", "sigma_G"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"Constants: {name}={v!r} must be finite and >= 0")
        if self.f_star == np.inf:
            raise ValueError("Constants: f_star=inf is not a lower bound; allowed range [-inf, inf)")
        if self.radius is not None and (
            isinstance(self.radius, bool)
            or not isinstance(self.radius, (int, float, np.integer, np.floating))
            or not (np.isfinite(self.radius) and self.radius > 0)
        ):
            raise ValueError(f"Constants: radius={self.radius!r} must be None or finite and > 0")
        full = {k: "none" for k in ("L", "mu", "sigma_L", "sigma_G", "f_star", "x_star")}
        full.update(self.certified)
        bad = {k: v for k, v in full.items() if v not in CERT_KINDS}
        if bad:
            raise ValueError(f"certified has unknown kinds {bad}; allowed {CERT_KINDS}")
        object.__setattr__(self, "certified", MappingProxyType(full))
        if self.x_star is not None:
            xs = np.array(self.x_star, dtype=float)
            xs.setflags(write=False)
            object.__setattr__(self, "x_star", xs)


def exact_certificates(noise: NoiseModel, **other: str) -> dict[str, str]:
    """``Constants.certified`` of a problem whose constants are all exact (attained or closed form) but σ_L,
    certified as its noise model says (``noise.sigma_L_kind``), and the names given in ``other`` (e.g.
    ``sigma_G="upper"``)."""
    return {
        "L": "exact",
        "mu": "exact",
        "sigma_L": noise.sigma_L_kind,
        "sigma_G": "exact",
        "f_star": "exact",
        "x_star": "exact",
        **other,
    }


# --------------------------------------------------------------------------------------------- noise models
class NoiseModel:
    """Additive, x-independent stochastic-gradient noise: ∇f_i(x, ξ) = ∇f_i(x) + ξ_i, E ξ_i = 0.

    ``sigma_L`` is certified (``sigma_L_kind`` says how); ``covariance(i)`` is the exact (d, d) covariance of
    one draw for worker i when known (the exact-moments engine needs it), else None.
    """

    sigma_L: float = 0.0
    sigma_L_kind: str = "exact"
    gaussian: bool = False
    #: capability: one draw is N(0, (σ_L²/d) I) (the engine may then collapse K local steps into one draw)
    isotropic_gaussian: bool = False

    def sample(self, rng: np.random.Generator, workers: np.ndarray, dim: int) -> np.ndarray:
        """Noise ξ of shape (*workers.shape, dim) for the arrivals ``workers`` (mean zero; Assumption 2)."""
        raise NotImplementedError

    def covariance(self, i: int, dim: int) -> np.ndarray | None:
        """The per-draw covariance of worker ``i``'s noise (dim, dim), or None when not available in closed
        form."""
        return None

    def standard_normal_scale(self, dim: int) -> float | None:
        """s if one draw is s · N(0, I_dim) from ``rng.standard_normal`` (the engine then draws whole blocks
        and scales once per chunk), else None."""
        return None

    def sample_into(
        self, rng: np.random.Generator, workers: np.ndarray, out: np.ndarray, scale: float = 1.0
    ) -> None:
        """out = scale · (one draw per entry of ``workers``), out of shape (*workers.shape, dim) (the engine's
        hot path; the same stream as ``sample``)."""
        out[...] = self.sample(rng, workers, out.shape[-1])
        if scale != 1.0:
            out *= scale


class NoNoise(NoiseModel):
    """Deterministic gradients (σ_L = 0)."""

    gaussian = True
    isotropic_gaussian = True

    def sample(self, rng: np.random.Generator, workers: np.ndarray, dim: int) -> np.ndarray:
        return np.zeros((*np.shape(workers), dim))

    def covariance(self, i: int, dim: int) -> np.ndarray | None:
        return np.zeros((dim, dim))

    def sample_into(
        self, rng: np.random.Generator, workers: np.ndarray, out: np.ndarray, scale: float = 1.0
    ) -> None:
        out.fill(0.0)

    def __repr__(self):
        return "NoNoise()"


class GaussianNoise(NoiseModel):
    """ξ ~ N(0, (σ_L²/d) I_d), so E‖ξ‖² = σ_L² exactly (Assumption 3, first part, with equality)."""

    gaussian = True
    isotropic_gaussian = True

    def __init__(self, sigma_L: float):
        self.sigma_L = check_nonnegative("sigma_L", sigma_L)

    def sample(self, rng: np.random.Generator, workers: np.ndarray, dim: int) -> np.ndarray:
        z = rng.standard_normal((*np.shape(workers), dim))
        z *= self.sigma_L / np.sqrt(dim)
        return z

    def covariance(self, i: int, dim: int) -> np.ndarray | None:
        return np.eye(dim) * (self.sigma_L**2 / dim)

    def standard_normal_scale(self, dim: int) -> float:
        return self.sigma_L / np.sqrt(dim)

    def sample_into(
        self, rng: np.random.Generator, workers: np.ndarray, out: np.ndarray, scale: float = 1.0
    ) -> None:
        rng.standard_normal(out=out)  # into the buffer: ~20% faster than rng.normal(0, s, shape) here
        out *= scale * self.sigma_L / np.sqrt(out.shape[-1])

    def __repr__(self):
        return f"GaussianNoise(sigma_L={self.sigma_L})"


def as_noise(noise_or_sigma: float | NoiseModel) -> NoiseModel:
    """Accept a NoiseModel or a number σ_L (Gaussian; 0 means no noise)."""
    if isinstance(noise_or_sigma, NoiseModel):
        return noise_or_sigma
    s = check_nonnegative("sigma_L", noise_or_sigma)
    return NoNoise() if s == 0 else GaussianNoise(s)


# --------------------------------------------------------------------------------------------- linear model
@dataclass(frozen=True)
class LinearGaussianModel:
    """∇f_i(x) = H_i x − b_i with additive noise of known covariance: what exact moments need.

    ``hessians``: (M, d, d); ``b``: (M, d); ``noise_cov``: (M, d, d); global f(x) = f_star + ½(x−x*)ᵀH̄(x−x*).
    """

    hessians: np.ndarray
    b: np.ndarray
    noise_cov: np.ndarray
    hessian_mean: np.ndarray
    x_star: np.ndarray
    f_star: float


# --------------------------------------------------------------------------------------------- base class
class Problem:
    """Base class of every objective family. Subclasses set ``dim``, ``num_workers``, ``constants``,
    ``noise`` and implement ``local_value`` / ``local_grad`` (and may override ``value`` / ``grad``)."""

    dim: int
    num_workers: int
    constants: Constants
    noise: NoiseModel
    #: capability: the objective drifts between rounds (``base`` problem and ``walk(gen, rounds)``)
    drifts: bool = False
    #: capability: ∇f_i(x, ξ) = ∇f_i(x) + ξ with ξ drawn from ``noise`` independently of x, so the engine (and
    #: the exact moments) may draw ξ themselves. A subclass that does not set it gets True iff it does not
    #: override ``stochastic_grad`` (``__init_subclass__``); setting it True while overriding is a TypeError.
    additive_noise: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Derive ``additive_noise`` for a subclass that does not declare it; reject a contradictory one."""
        super().__init_subclass__(**kwargs)
        own_sgrad = cls.stochastic_grad is not Problem.stochastic_grad
        if "additive_noise" not in cls.__dict__:
            cls.additive_noise = not own_sgrad
        elif cls.additive_noise and own_sgrad:
            raise TypeError(
                f"{cls.__name__} declares additive_noise=True but overrides stochastic_grad; "
                "declare additive_noise = False"
            )

    def collapse_reason(self) -> str | None:
        """Capability: None when K local SGD steps have a closed-form law the engine may draw in one step
        (quadratics with additive isotropic Gaussian noise), else why not."""
        return "the problem is not a quadratic with additive isotropic Gaussian noise"

    def hessian_eigensystem(self) -> tuple[np.ndarray, np.ndarray | None]:
        """For a problem whose ``collapse_reason()`` is None: (eigenvalues (S, dim), eigenbasis (dim, dim) or
        None for the identity) of its Hessians ∇²f_i (S = 1 shared, S = num_workers per worker), from which
        the engine draws K local SGD steps in closed form."""
        raise NotImplementedError(
            f"{type(self).__name__} has no closed-form K-step law: {self.collapse_reason()}"
        )

    # -- to implement
    def local_value(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        """f_i(x) for worker(s) ``i``; ``x`` may carry leading batch axes."""
        raise NotImplementedError

    def local_grad(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        """∇f_i(x) for worker(s) ``i``; ``x`` may carry leading batch axes."""
        raise NotImplementedError

    # -- defaults
    def value(self, x: np.ndarray) -> np.ndarray:
        """f(x) = (1/M) Σ_i f_i(x); x: (..., dim) -> (...)."""
        x = np.asarray(x, dtype=float)
        return np.mean(self.local_value(x[..., None, :], np.arange(self.num_workers)), axis=-1)

    def grad(self, x: np.ndarray) -> np.ndarray:
        """∇f(x) = (1/M) Σ_i ∇f_i(x); ``x`` may carry leading batch axes."""
        x = np.asarray(x, dtype=float)
        return np.mean(self.local_grad(x[..., None, :], np.arange(self.num_workers)), axis=-2)

    def grad_norm_sq_and_value(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(‖∇f(x)‖², f(x)) for x: (..., dim) — what the engine records every round; families override it to
        share work between the two."""
        g = self.grad(x)
        return rowdot(g, g), self.value(x)

    def local_grad_fn(self, workers: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """A callable y -> ∇f_{workers}(y) for a fixed worker array (the engine calls it K times per round;
        families override it to precompute per-worker data once)."""
        return lambda y: self.local_grad(y, workers)

    def local_kernel(self, centered: bool | None = None) -> LocalKernel:
        """The problem's fast local-step kernel for the engine (``LocalKernel``): in-place ∇f_i on blocks of
        arrivals, in buffers the kernel owns. ``centered``: None, the family's choice (its local frame when it
        has one: read ``kernel.centered``); True, require the local frame (a ValueError when the family has
        none); False, plain coordinates. Default: the generic kernel through ``local_grad_fn``, no frame."""
        return LocalKernel(self, centered=centered)

    def stochastic_grad(self, x: np.ndarray, i: int | np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """∇f_i(x, ξ) = ∇f_i(x) + ξ with ξ from ``self.noise``."""
        g = self.local_grad(x, i)
        workers = np.broadcast_to(np.asarray(i), g.shape[:-1])  # i may carry axes x lacks
        return g + self.noise.sample(rng, workers, self.dim)

    def in_certified_region(self, x: np.ndarray) -> np.ndarray:
        """True where Assumptions 1–3 are certified at x (the whole space unless ``constants.radius``)."""
        x = np.asarray(x, dtype=float)
        r = self.constants.radius
        if r is None:
            return np.ones(x.shape[:-1], dtype=bool)
        return np.linalg.norm(x - self.constants.x_star, axis=-1) <= r * (1 + 1e-12)

    def linear_gaussian(self) -> LinearGaussianModel | None:
        """The affine-gradient model if this problem is linear-Gaussian (quadratic + Gaussian noise), else
        None."""
        return None

    def default_x0(self, seed: int = 0) -> np.ndarray:
        """A reproducible start point at distance ~ sqrt(dim) from x* (used when simulate(x0=None))."""
        rng = np.random.default_rng(np.random.SeedSequence([check_seed(seed), 0xA0]))
        base = self.constants.x_star if self.constants.x_star is not None else np.zeros(self.dim)
        return base + rng.standard_normal(self.dim)

    def _check_worker(self, i):
        i = np.asarray(i)
        if not np.issubdtype(i.dtype, np.integer):
            raise ValueError(f"worker index i must be integer, got dtype {i.dtype}")
        if i.size and (i.min() < 0 or i.max() >= self.num_workers):
            raise ValueError(f"worker index i out of range [0, {self.num_workers - 1}]")
        return i


#: the unsigned integer type of each integer itemsize (``LocalKernel.check_workers``)
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class LocalKernel:
    """A problem's fast local-step kernel, the engine's hot path (``Problem.local_kernel``).

    It evaluates ∇f_i in place on (…, m, d) blocks of arrivals (worker indices ``workers`` of shape (…, m)),
    in buffers it allocates itself and reuses by shape: the engine lends it none. An array or callable it
    returns is valid until the next call of the same method (the next call may reuse its buffers).

    ``centered``: the kernel runs in the problem's local frame, u = y − c_i with c = ``center(workers)`` (the
    engine then subtracts c once per round instead of once per step); every ``y`` a centered kernel's
    callables receive is u. Families with a frame (quadratics: ∇f_i(y) = A_i (y − c_i)) subclass this.

    Every method validates ``workers`` (integers in [0, num_workers)) with one reduction over the (…, m)
    indices, a negligible cost beside the (…, m, d) arithmetic; the families then gather with
    ``mode="wrap"`` (an unbuffered gather), which is exact on validated indices.
    """

    #: the family has a local frame (a subclass that defines ``center``); None asks for it when it exists
    frame: ClassVar[bool] = False

    def __init__(self, problem: Problem, centered: bool | None = None) -> None:
        if centered and not self.frame:
            raise ValueError(
                f"centered={centered!r}: {type(problem).__name__} has no local frame; allowed None or False"
            )
        self.problem = problem
        self.centered = bool(self.frame if centered is None else centered)
        self._pool = BufferPool()  # the kernel's own arrays

    def _buffer(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The kernel's own float array ``name`` of ``shape`` (allocated once, reused by later calls)."""
        return self._pool.get(name, shape)

    def check_workers(self, workers: ArrayLike) -> np.ndarray:
        """``workers`` as an integer array, each in [0, num_workers) (ValueError naming the bad index)."""
        w = np.asarray(workers)
        if w.dtype.kind not in "iu":
            raise ValueError(f"workers must be integer worker indices, got dtype {w.dtype}")
        # one reduction: viewed unsigned, a negative index is larger than any valid one
        if w.size and w.view(_UNSIGNED[w.dtype.itemsize]).max() >= self.problem.num_workers:
            bad = w.min() if w.min() < 0 else w.max()
            raise ValueError(
                f"workers contains the worker index {int(bad)}; allowed range "
                f"[0, {self.problem.num_workers - 1}]"
            )
        return w

    def center(self, workers: ArrayLike) -> np.ndarray | None:
        """None (no local frame), or per-arrival points c (*workers.shape, dim) such that ∇f_i(y) depends on
        y only through y − c_i."""
        self.check_workers(workers)
        return None

    def grad_add(self, workers: ArrayLike, scale: float = 1.0) -> Callable[[np.ndarray, np.ndarray], None]:
        """A callable (y, out) -> None doing out += scale · ∇f_{workers}(y) in place (``out`` already holds
        the scaled noise; y is u = y − c when ``centered``). Generic: through ``Problem.local_grad_fn``."""
        fn = self.problem.local_grad_fn(self.check_workers(workers))

        def add(y, out):
            g = fn(y)
            if scale != 1.0:
                g = g * scale
            out += g

        return add

    def sgd_step(self, workers: ArrayLike, eta: float) -> Callable[[np.ndarray, np.ndarray], None]:
        """A callable (y, h) -> None doing one local SGD step in place, y ← y − η ∇f_{workers}(y) − h, where h
        holds the step's scaled noise (and corrections) and may be overwritten. Generic: ``grad_add`` then a
        subtraction; families may fuse the two."""
        add = self.grad_add(workers, eta)

        def step(y, h):
            add(y, h)
            y -= h

        return step


def check_dim_workers(dim: int, num_workers: int, *, min_workers: int = 1) -> tuple[int, int]:
    """``(dim, num_workers)`` as ints, validated (dim ≥ 1, num_workers ≥ ``min_workers``) and within the
    allocation limit."""
    d = check_int("dim", dim, low=1)
    M = check_int("num_workers", num_workers, low=min_workers)
    check_alloc(f"dim={d}, num_workers={M}", 8.0 * 4 * d * M)
    return d, M
