"""Quadratic federated objectives f_i(x) = ½ (x − c_i)ᵀ A_i (x − c_i) + e_i with certified constants.

``HeterogeneousQuadratic`` shares one Hessian A across workers. Because averaging is linear, the mean of
the workers' local-SGD trajectories from a common start equals the local-SGD trajectory on f itself:
shared-Hessian quadratics exhibit *no client drift* (heterogeneity only shifts the centres). Use
``HeterogeneousCurvatureQuadratic`` (per-worker A_i) to see drift.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._numerics import matvec as _matvec
from .._numerics import rowdot
from .._validation import (
    check_alloc,
    check_array,
    check_component,
    check_int,
    check_nonnegative,
    check_positive,
    check_real,
    check_seed,
)
from .base import (
    Constants,
    LinearGaussianModel,
    LocalKernel,
    NoiseModel,
    Problem,
    as_noise,
    check_dim_workers,
    exact_certificates,
)
from .noise import FiniteSumNoise, without_replacement_factor

__all__ = [
    "check_quadratic_args",
    "HeterogeneousQuadratic",
    "local_sgd_k_step_law",
    "QuadraticKernel",
    "QuadraticProblem",
]


def _matvec_rows(v, A):
    """v @ Aᵀ for v (n, d) by d elementwise passes in a fixed order (each row's bits independent of n and of
    the other rows: used where the row count depends on other replicates, e.g. per-worker masks)."""
    out = v[:, :1] * A[:, 0]
    for k in range(1, v.shape[1]):
        out += v[:, k : k + 1] * A[:, k]
    return out


#: per-worker dense Hessians up to this dimension are gathered per row (``_matvec_gathered``)
_GATHER_MAX_DIM = 32
_GATHER_BLOCK = 1 << 18  # rows × d² per gathered block (2 MiB of float64)


def _matvec_gathered(v, H, idx, out):
    """out[r] = H[idx[r]] @ v[r] for v (n, d), by the same d elementwise passes in the same order as
    ``_matvec_rows`` (so each row's bits equal the per-worker masked path's), on gathered Hessians in row
    blocks of at most ``_GATHER_BLOCK`` entries."""
    n, d = v.shape
    step = max(1, _GATHER_BLOCK // (d * d))
    for lo in range(0, n, step):
        sl = slice(lo, min(n, lo + step))
        A = H[idx[sl]]  # (b, d, d)
        vb, ob = v[sl], out[sl]
        np.multiply(vb[:, :1], A[:, :, 0], out=ob)
        for k in range(1, d):
            ob += vb[:, k : k + 1] * A[:, :, k]


class QuadraticProblem(Problem):
    """f_i(x) = ½ (x − c_i)ᵀ A_i (x − c_i) + e_i. Hessians stored as ``diag`` (S, d) or ``dense`` (S, d, d)
    with S = 1 (shared) or S = M (per worker). Constants are supplied by the subclass that certifies them."""

    additive_noise = True  # ξ from ``noise``, x-independent (a subclass overriding stochastic_grad: False)

    def collapse_reason(self) -> str | None:
        """None when K local SGD steps collapse into one exact Gaussian draw (additive isotropic Gaussian
        noise, diagonal or shared dense Hessians), else why not."""
        if not self.additive_noise:
            return "the problem draws its own stochastic gradients (noise not additive)"
        if not self.noise.isotropic_gaussian:
            return "the gradient noise is not isotropic Gaussian"
        if self.kind == "dense" and not self.shared:
            return "per-worker dense Hessians are not collapsed (use hessian='diag')"
        return None

    def hessian_eigensystem(self) -> tuple[np.ndarray, np.ndarray | None]:
        """(eigenvalues (S, d), eigenbasis): the diagonal Hessians themselves with the identity basis (None),
        or the eigendecomposition of the shared dense Hessian (per-worker dense: see collapse_reason)."""
        if self.kind == "diag":
            return self.hessian, None
        if not self.shared:
            raise ValueError(f"hessian_eigensystem: {self.collapse_reason()}")
        lam, Q = np.linalg.eigh(self.hessian[0])
        return lam[None], Q

    def __init__(
        self,
        hessian: np.ndarray,
        centers: np.ndarray,
        offsets: np.ndarray,
        noise: NoiseModel,
        *,
        kind: str,
        weights: ArrayLike | None = None,
    ):
        if kind not in ("diag", "dense"):
            raise ValueError(f"hessian kind={kind!r} must be 'diag' or 'dense'")
        check_component(
            "noise",
            noise,
            NoiseModel,
            "an afltheory.problems NoiseModel (GaussianNoise(sigma_L), NoNoise(), …)",
        )
        self.kind = kind
        self.centers = np.asarray(centers, dtype=float)
        self.num_workers, self.dim = self.centers.shape
        self.hessian = np.asarray(hessian, dtype=float)
        self.shared = self.hessian.shape[0] == 1
        self.offsets = np.asarray(offsets, dtype=float)
        self.noise = noise
        # client weights p_i: f = Σ_i p_i f_i (None: uniform, f = (1/M) Σ_i f_i)
        self.weights = None
        if weights is not None:
            p = np.asarray(weights, dtype=float).ravel()
            if (
                p.shape != (self.num_workers,)
                or not np.all(np.isfinite(p))
                or np.any(p < 0)
                or abs(p.sum() - 1.0) > 1e-9
            ):
                raise ValueError(
                    f"weights={weights!r} must be a probability vector with one entry >= 0 per "
                    f"worker (num_workers={self.num_workers}), summing to 1"
                )
            self.weights = tuple(float(v) for v in p)
        avg = (
            (lambda a: a.mean(axis=0))
            if weights is None
            else (lambda a: np.tensordot(np.asarray(self.weights), a, axes=(0, 0)))
        )
        # global quadratic: f(x) = f* + ½ (x − x*)ᵀ H̄ (x − x*)
        H = self.dense_hessians()
        self._Hbar = avg(H)
        # H̄ = diag(this) when diagonal
        self._hbar_diag = (
            (self.hessian.mean(axis=0) if self.shared or weights is None else avg(self.hessian))
            if kind == "diag"
            else None
        )
        b = np.einsum("mjk,mk->mj", H, self.centers)
        self._b = b
        self._bbar = avg(b)
        self._x_star = np.linalg.solve(self._Hbar, self._bbar)
        self._f_star = float(avg(self.local_value(self._x_star[None, :], np.arange(self.num_workers))))

    # -- Hessian helpers
    def dense_hessians(self) -> np.ndarray:
        """All workers' Hessians as (M, d, d)."""
        if self.kind == "diag":
            H = np.stack([np.diag(a) for a in self.hessian])
        else:
            H = self.hessian
        return np.broadcast_to(H, (self.num_workers, self.dim, self.dim)).copy()

    def _apply(self, v, i):
        """A_i v for v: (..., d), i broadcastable against v.shape[:-1]."""
        if self.kind == "diag":
            a = self.hessian[0] if self.shared else self.hessian[i]
            return a * v
        if self.shared:
            return _matvec(v, self.hessian[0])
        i_b = np.broadcast_to(i, v.shape[:-1])
        if self.dim <= _GATHER_MAX_DIM:  # gather each row's Hessian: the same passes, no per-worker masks
            out = np.empty(v.shape)
            _matvec_gathered(
                np.reshape(v, (-1, self.dim)), self.hessian, i_b.reshape(-1), out.reshape(-1, self.dim)
            )
            return out
        out = np.empty_like(v)
        for w in np.unique(i_b):
            mask = i_b == w
            out[mask] = _matvec_rows(v[mask], self.hessian[w])  # per row: same bits for any count
        return out

    # -- protocol
    def local_value(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        i = self._check_worker(i)
        v = np.asarray(x, dtype=float) - self.centers[i]
        return 0.5 * np.sum(v * self._apply(v, i), axis=-1) + self.offsets[i]

    def local_grad(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        i = self._check_worker(i)
        return self._apply(np.asarray(x, dtype=float) - self.centers[i], i)

    def local_grad_fn(self, workers: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        workers = self._check_worker(workers)
        c = self.centers[workers]
        if self.kind == "diag":
            a = self.hessian[0] if self.shared else self.hessian[workers]
            return lambda y: a * (y - c)
        return lambda y: self._apply(y - c, workers)

    def local_kernel(self, centered: bool | None = None) -> QuadraticKernel:
        """The fused local-step kernel (``QuadraticKernel``), in the local frame u = y − c_i unless
        ``centered`` is False: ∇f_i(y) = A_i (y − c_i) depends on y only through y − c_i."""
        return QuadraticKernel(self, centered=centered)

    def value(self, x: np.ndarray) -> np.ndarray:
        v = np.asarray(x, dtype=float) - self._x_star
        if self.kind == "diag":  # H̄ is diagonal: avoid a BLAS call per round in the engine
            return self._f_star + 0.5 * rowdot(v * self._hbar_diag, v)
        return self._f_star + 0.5 * rowdot(_matvec(v, self._Hbar), v)

    def grad(self, x: np.ndarray) -> np.ndarray:
        v = np.asarray(x, dtype=float) - self._x_star
        if self.kind == "diag":
            return v * self._hbar_diag
        return _matvec(v, self._Hbar)

    def grad_norm_sq_and_value(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = np.asarray(x, dtype=float) - self._x_star
        g = v * self._hbar_diag if self.kind == "diag" else _matvec(v, self._Hbar)
        f = rowdot(v, g)
        f *= 0.5
        f += self._f_star
        return rowdot(g, g), f

    def linear_gaussian(self) -> LinearGaussianModel | None:
        M, d = self.num_workers, self.dim
        covs = []
        for i in range(M):
            c = self.noise.covariance(i, d)
            if c is None:
                return None
            covs.append(c)
        return LinearGaussianModel(
            hessians=self.dense_hessians(),
            b=self._b.copy(),
            noise_cov=np.stack(covs),
            hessian_mean=self._Hbar.copy(),
            x_star=self._x_star.copy(),
            f_star=self._f_star,
        )


class QuadraticKernel(LocalKernel):
    """The quadratics' local-step kernel: ∇f_i(y) = A_i (y − c_i), in the frame u = y − c_i when ``centered``
    (``center`` gives c_i), with per-arrival Hessian coefficients gathered once per call into the kernel's own
    buffers. Diagonal Hessians fuse a step into two passes, u ← (1 − η a_i) ⊙ u − h."""

    frame = True

    def __init__(self, problem: QuadraticProblem, centered: bool | None = None) -> None:
        super().__init__(problem, centered)
        self._tiles = {}  # name -> ((scale, shift, m), shared coefficients tiled to (m, d))

    def center(self, workers: ArrayLike) -> np.ndarray:
        """c_i per arrival, (*workers.shape, dim) (the kernel's buffer)."""
        w = self.check_workers(workers)
        p = self.problem
        return np.take(p.centers, w, axis=0, out=self._buffer("c", (*w.shape, p.dim)), mode="wrap")

    def _diag_coefficients(self, workers, scale, shift, name):
        """shift + scale · a_i per arrival for diagonal Hessians (``workers`` validated): tiled to (m, d) when
        shared (so the broadcast against (n, m, d) runs as one long inner loop), else gathered to (n, m, d)
        into the buffer ``name``."""
        p = self.problem
        if p.shared:  # the last tiling per name is kept: η_L changes only with a step-size schedule
            key = (scale, shift, workers.shape[-1] if workers.ndim else None)
            last = self._tiles.get(name)
            if last is not None and last[0] == key:
                return last[1]
            row = shift + scale * p.hessian[0]
            out = np.tile(row, (workers.shape[-1], 1)) if workers.ndim else row
            self._tiles[name] = (key, out)
            return out
        a = np.take(p.hessian, workers, axis=0, out=self._buffer(name, (*workers.shape, p.dim)), mode="wrap")
        a *= scale
        if shift:
            a += shift
        return a

    def grad_add(self, workers: ArrayLike, scale: float = 1.0) -> Callable[[np.ndarray, np.ndarray], None]:
        """out += scale · A_i u (u = y − c_i: given when ``centered``, else formed from y)."""
        p = self.problem
        workers = self.check_workers(workers)
        c = None
        if not self.centered:
            c = np.take(
                p.centers, workers, axis=0, out=self._buffer("gc", (*workers.shape, p.dim)), mode="wrap"
            )
        if p.kind == "diag":
            a = self._diag_coefficients(workers, scale, 0.0, "a")
            v = self._buffer("v", (*workers.shape, p.dim))

            def add(y, out):
                if c is None:  # centered: y is already u = y − c_i
                    r = np.multiply(y, a, out=v)
                else:
                    r = np.subtract(y, c, out=v)
                    r *= a
                out += r

            return add

        def add_dense(y, out):
            g = p._apply(y if c is None else y - c, workers)
            if scale != 1.0:
                g *= scale
            out += g

        return add_dense

    def sgd_step(self, workers: ArrayLike, eta: float) -> Callable[[np.ndarray, np.ndarray], None]:
        """y ← y − η A_i (y − c_i) − h; centered diagonal: u ← (1 − η a_i) ⊙ u − h, two passes instead of
        three."""
        if not (self.centered and self.problem.kind == "diag"):
            return super().sgd_step(workers, eta)
        f = self._diag_coefficients(self.check_workers(workers), -eta, 1.0, "f")

        def step(u, h):
            u *= f
            u -= h

        return step


def local_sgd_k_step_law(
    eigenvalues: np.ndarray, eta_L: float, K: int, sigma_L: float, dim: int
) -> tuple[np.ndarray, np.ndarray]:
    """The exact law of K local SGD steps on a quadratic with isotropic Gaussian noise, in H's eigenbasis.

    With g_k = H(y_k − c) + ξ_k, ξ_k ~ N(0, (σ_L²/d) I) i.i.d. and y_{k+1} = y_k − η_L g_k, each
    eigen-coordinate evolves alone: with a = 1 − η_L λ, e_k = y_k − c satisfies e_{k+1} = a e_k − η_L ξ_k, so
    e_K = a^K e_0 − η_L Σ_{j<K} a^{K−1−j} ξ_j and the mean of the K gradients is
        G = (y_0 − y_K)/(η_L K) = (1 − a^K)/(η_L K) · e_0 + (1/K) Σ_{j<K} a^{K−1−j} ξ_j,
    whose noise term is N(0, (σ_L²/d)/K² · Σ_{j<K} a^{2j}) per coordinate, independent across coordinates.
    Returns (drift, noise), each of ``eigenvalues``' shape: G = drift ⊙ (y_0 − c) + noise ⊙ z, z ~ N(0, I),
    exactly in law. 1 − a^K is formed as −expm1(K log a) when a > 0 (no cancellation for small η_L λ), and
    Σ_j a^{2j} = (1 − a^{2K})/(1 − a²), or, where a² is numerically 1, −expm1(K log1p(−ε))/ε with
    ε = η_L λ (2 − η_L λ) = 1 − a² formed without cancellation (K when ε = 0). The engine's collapsed runner
    (``simulate(collapse=…)``) draws K local steps with it; ``afltheory.exact.local_maps`` is the same map
    summed step by step in any basis (tests/problems/test_quadratic_k_step.py checks both and a plain loop).
    """
    a = 1.0 - eta_L * eigenvalues
    with np.errstate(divide="ignore", invalid="ignore"):
        one_minus = np.where(a > 0, -np.expm1(K * np.log(np.where(a > 0, a, 1.0))), 1.0 - a**K)
    drift = one_minus / (eta_L * K)
    a2 = a * a
    x = eta_L * np.asarray(eigenvalues, dtype=float)
    eps = x * (2.0 - x)  # 1 − a², formed without the cancellation of 1 − a·a
    safe = np.where(eps == 0.0, 0.5, eps)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # a² numerically 1 (|1 − a²| ≲ 1e-5): Σ_{j<K} (1 − ε)^j = −expm1(K log1p(−ε))/ε, K at ε = 0 exactly
        near = np.where(eps == 0.0, float(K), -np.expm1(K * np.log1p(-safe)) / safe)
        geo = np.where(np.isclose(a2, 1.0), near, (1.0 - a2**K) / (1.0 - a2))
    noise = np.sqrt(geo) / K * (sigma_L / np.sqrt(dim))
    return drift, noise


def check_quadratic_args(
    dim: int, num_workers: int, L: float, mu: float, sigma_G: float, hessian: str
) -> tuple[int, int, float, float, float]:
    """Shared constructor checks of the quadratic families: returns (d, M, L, mu, sigma_G)."""
    d, M = check_dim_workers(dim, num_workers)
    check_alloc(
        f"dim={d}, num_workers={M} (the quadratic keeps (num_workers, dim, dim) Hessians)",
        8.0 * 3 * M * d * d,
    )
    # L, σ_G <= 1e150: the certified constants (L², σ_G², f*) stay finite floats (L = 1e300 gave σ_G = inf and
    # L = 1e307 gave f* = NaN)
    L = check_real("L", L, low=0.0, high=1e150, low_open=True)
    mu = check_positive("mu", mu)
    if mu > L:
        raise ValueError(f"mu={mu} must be <= L={L}")
    sigma_G = check_real("sigma_G", sigma_G, low=0.0, high=1e150)
    if sigma_G > 0 and M < 2:
        raise ValueError(f"num_workers={M} must be >= 2 for sigma_G={sigma_G} > 0")
    if hessian not in ("diag", "dense"):
        raise ValueError(f"hessian={hessian!r} must be 'diag' or 'dense'")
    return d, M, L, mu, sigma_G


def _spectrum(rng, dim, L, mu):
    """Eigenvalues in [mu, L] with both ends attained (dim = 1 requires mu == L)."""
    if dim == 1:
        if mu != L:
            raise ValueError(f"dim=1 needs mu == L (one eigenvalue), got mu={mu}, L={L}")
        return np.array([L])
    ev = np.exp(rng.uniform(np.log(mu), np.log(L), size=dim)) if mu > 0 else rng.uniform(mu, L, size=dim)
    ev[0], ev[-1] = L, mu
    return ev


class HeterogeneousQuadratic(QuadraticProblem):
    """Shared-Hessian heterogeneous quadratic: f_i(x) = ½ (x − c_i)ᵀ A (x − c_i).

    Certificates (all exact):
    - L = λ_max(A), μ = λ_min(A): the Hessian of every f_i is A, whose spectrum contains both ends.
    - σ_G = max_i ‖A(c_i − c̄)‖: ∇f_i(x) − ∇f(x) = A(c̄ − c_i) does not depend on x, so the sup is this max.
    - x* = c̄ and f* = (1/M) Σ_i [½ (c_i − c̄)ᵀA(c_i − c̄) + e_i]: f(x) = ½(x − c̄)ᵀA(x − c̄) + f*
      (offsets e_i are 0 except in ``from_samples`` / ``finite_sum``, where f_i is a per-sample mean).
    - σ_L from the noise model (Gaussian: E‖ξ‖² = σ_L² exactly; ``finite_sum``: exact finite-population
      formula).
    Shared Hessian ⇒ no client drift (see the module docstring).
    """

    def __init__(
        self,
        dim: int = 10,
        num_workers: int = 10,
        L: float = 1.0,
        mu: float = 0.1,
        sigma_L: float | NoiseModel = 0.0,
        sigma_G: float = 1.0,
        seed: int = 0,
        hessian: str = "diag",
    ):
        d, M, L, mu, sigma_G = check_quadratic_args(dim, num_workers, L, mu, sigma_G, hessian)
        seed = check_int("seed", seed, low=0)
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0x51]))
        ev = _spectrum(rng, d, L, mu)
        if hessian == "diag":
            A = ev
            apply = lambda v: v * ev
        else:
            Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
            A = (Q * ev) @ Q.T
            A = 0.5 * (A + A.T)
            apply = lambda v: v @ A
        cbar = rng.standard_normal(d)
        u = rng.standard_normal((M, d))
        u -= u.mean(axis=0)
        if sigma_G > 0:
            u *= sigma_G / np.max(np.linalg.norm(apply(u), axis=1))
        else:
            u[:] = 0.0
        self._init_from(A[None], cbar + u, as_noise(sigma_L), hessian)

    def _init_from(self, A, centers, noise, kind, offsets=None, weights=None):
        M = centers.shape[0]
        super().__init__(
            A, centers, np.zeros(M) if offsets is None else offsets, noise, kind=kind, weights=weights
        )
        H = self.hessian[0] if kind == "dense" else np.diag(self.hessian[0])
        ev = np.linalg.eigvalsh(H)
        dev = centers - (centers.mean(axis=0) if weights is None else self._x_star)
        sig_G = float(np.max(np.linalg.norm(self._apply(dev, np.zeros(M, dtype=int)), axis=1)))
        self.constants = Constants(
            L=float(ev[-1]),
            mu=float(ev[0]),
            sigma_L=noise.sigma_L,
            sigma_G=sig_G,
            f_star=self._f_star,
            x_star=self._x_star,
            certified=exact_certificates(noise),
        )

    @staticmethod
    def _check_shared_hessian(hessian_diag, hessian, d):
        if (hessian_diag is None) == (hessian is None):
            raise ValueError("give exactly one of hessian_diag=(d,) or hessian=(d, d)")
        if hessian_diag is not None:
            a = check_array("hessian_diag", hessian_diag, shape=(d,))
            if np.any(a <= 0):
                raise ValueError(
                    f"hessian_diag must be > 0 everywhere (min {a.min()}); allowed range (0, inf)"
                )
            return a[None], "diag"
        A = check_array("hessian", hessian, shape=(d, d))
        if not np.allclose(A, A.T, atol=1e-12 * max(1.0, np.abs(A).max())):
            raise ValueError("hessian must be symmetric")
        lo = np.linalg.eigvalsh(A)[0]
        if lo <= 0:
            raise ValueError(
                f"hessian must be positive definite (smallest eigenvalue {lo}); allowed range (0, inf)"
            )
        return 0.5 * (A + A.T)[None], "dense"

    @classmethod
    def from_arrays(
        cls,
        *,
        hessian_diag: ArrayLike | None = None,
        hessian: ArrayLike | None = None,
        centers: ArrayLike,
        sigma_L: float | NoiseModel = 0.0,
        weights: ArrayLike | None = None,
    ) -> HeterogeneousQuadratic:
        """Build from a Hessian diagonal ``hessian_diag`` (d,) or a dense symmetric positive definite
        ``hessian`` (d, d), and worker centres ``centers`` (M, d). Constants are computed exactly from the
        arrays. ``weights``: client weights p_i (f = Σ_i p_i f_i; None: uniform); σ_G is then
        max_i ‖A(c_i − Σ_j p_j c_j)‖."""
        C = check_array("centers", centers, ndim=2)
        M, d = C.shape
        check_dim_workers(d, M)
        A, kind = cls._check_shared_hessian(hessian_diag, hessian, d)
        self = cls.__new__(cls)
        self._init_from(A, C, as_noise(sigma_L), kind, weights=weights)
        return self

    @classmethod
    def from_samples(
        cls,
        *,
        hessian_diag: ArrayLike | None = None,
        hessian: ArrayLike | None = None,
        sample_centers: ArrayLike,
        batch_size: int,
    ) -> HeterogeneousQuadratic:
        """Finite-sum problem: f_i = (1/n) Σ_s f_{i,s}, f_{i,s}(x) = ½ (x − c_{is})ᵀA(x − c_{is}), from
        ``sample_centers`` (M, n, d). Because A is shared, ∇f_{i,s} − ∇f_i = A(c_i − c_{is}) =: o_{is} is
        x-independent, so minibatch noise is exactly additive: ``FiniteSumNoise(o, batch_size)`` (σ_L exact).
        c_i = mean_s c_{is}; e_i = (1/n) Σ_s ½ (c_{is} − c_i)ᵀA(c_{is} − c_i) keeps f_i the exact sample
        mean."""
        S = check_array("sample_centers", sample_centers, ndim=3)
        M, n, d = S.shape
        check_dim_workers(d, M)
        check_int("sample_centers.shape[1] (samples_per_worker)", n, low=1)
        A, kind = cls._check_shared_hessian(hessian_diag, hessian, d)
        C = S.mean(axis=1)
        dev = S - C[:, None, :]  # c_is − c_i
        Adev = dev * A[0] if kind == "diag" else dev @ A[0]
        offsets = 0.5 * np.mean(np.sum(dev * Adev, axis=-1), axis=1)
        noise = FiniteSumNoise(-Adev, batch_size)  # o_is = A(c_i − c_is)
        self = cls.__new__(cls)
        self._init_from(A, C, noise, kind, offsets=offsets)
        self.sample_centers = S
        return self

    @classmethod
    def finite_sum(
        cls,
        dim: int = 10,
        num_workers: int = 10,
        L: float = 1.0,
        mu: float = 0.1,
        sigma_L: float = 0.5,
        sigma_G: float = 1.0,
        seed: int = 0,
        hessian: str = "diag",
        *,
        samples_per_worker: int = 32,
        batch_size: int = 4,
    ) -> HeterogeneousQuadratic:
        """Like the constructor, but stochastic gradients are minibatch gradients of a finite sum (see
        ``from_samples``). Per-sample offsets are drawn, centred over samples and scaled so that the certified
        σ_L = max_i sqrt((n − B)/(B(n − 1)) · (1/n) Σ_s ‖o_is‖²) equals the requested ``sigma_L`` exactly
        (attained by the maximizing worker); L, μ, σ_G, x* are those of the requested shared-Hessian
        problem."""
        sigma_L = check_nonnegative("sigma_L", sigma_L)
        n = check_int("samples_per_worker", samples_per_worker, low=1)
        B = check_int("batch_size", batch_size, low=1, high=n)
        if sigma_L > 0 and B == n:
            raise ValueError(
                f"batch_size={B} must be < samples_per_worker={n} for sigma_L={sigma_L} > 0 "
                f"(a full batch has no noise)"
            )
        base = cls(
            dim=dim,
            num_workers=num_workers,
            L=L,
            mu=mu,
            sigma_L=0.0,
            sigma_G=sigma_G,
            seed=seed,
            hessian=hessian,
        )
        M, d = base.num_workers, base.dim
        check_alloc(f"num_workers={M}, samples_per_worker={n}, dim={d}", 8.0 * 3 * M * n * d)
        rng = np.random.default_rng(np.random.SeedSequence([check_seed(seed), 0x52]))
        o = rng.standard_normal((M, n, d))
        o -= o.mean(axis=1, keepdims=True)
        if sigma_L > 0:
            var = without_replacement_factor(n, B) * np.mean(np.sum(o**2, axis=-1), axis=1)
            o *= sigma_L / np.sqrt(var.max())
        else:
            o[:] = 0.0
        A = base.hessian[0]
        dev = -(o / A if base.kind == "diag" else np.linalg.solve(A, o.reshape(-1, d).T).T.reshape(o.shape))
        kw = {"hessian_diag": A} if base.kind == "diag" else {"hessian": A}
        return cls.from_samples(sample_centers=base.centers[:, None, :] + dev, batch_size=B, **kw)

    def shifted(self, delta: np.ndarray) -> HeterogeneousQuadratic:
        """The problem translated by ``delta`` (d,): f_i^δ(x) = f_i(x − δ). Same Hessian, noise and offsets;
        x* + δ; L, μ, σ_G, σ_L, f* unchanged (translation invariance), recomputed exactly from the arrays."""
        delta = check_array("delta", delta, shape=(self.dim,))
        new = self.__class__.__new__(self.__class__)
        new._init_from(self.hessian, self.centers + delta, self.noise, self.kind, offsets=self.offsets)
        if hasattr(self, "sample_centers"):
            new.sample_centers = self.sample_centers + delta
        return new

    def __repr__(self):
        c = self.constants
        return (
            f"HeterogeneousQuadratic(dim={self.dim}, num_workers={self.num_workers}, L={c.L:.4g}, "
            f"mu={c.mu:.4g}, sigma_L={c.sigma_L:.4g}, sigma_G={c.sigma_G:.4g}, hessian={self.kind!r})"
        )
