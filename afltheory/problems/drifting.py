"""Drifting objectives (Rizk, Vlaski, Sayed, "Dynamic Federated Learning", SPAWC 2020; docs/dynamic.md).

The true model follows a random walk w°_t = w°_{t−1} + q_t (q_t zero mean, covariance Q, E‖q_t‖² = tr Q =
σ_q²) and agent k's risk is the quadratic P_k(w) = ½ (w − w°_t − c_k)ᵀ R_k (w − w°_t − c_k), so its optimum
is w°_t + c_k. w°_t is the minimizer of the aggregate risk (1/K) Σ_k P_k: the offsets are re-centred so
that Σ_k R_k c_k = 0 (for a shared Hessian: Σ_k c_k = 0; a common shift of the drawn c_k only relabels w°).

A ``DriftingQuadratic`` wraps the round-0 problem ``base`` (a ``QuadraticProblem``: shared Hessian
``HeterogeneousQuadratic`` or per-agent Hessians ``HeterogeneousCurvatureQuadratic``) and the drift law;
the round-t objective is f_{k,t}(x) = f_k(x − w_t) with w_t = q_1 + … + q_t (w_0 = 0), so w°_t = x* + w_t.
Stochastic gradients: ``AgentSampleNoise`` (agent k holds N_k samples whose gradient offsets o_{k,s} do not
depend on x; a mini-batch of B_k samples is drawn without replacement) or ``AgentGaussianNoise``
(per-sample covariance Σ_k, batch B_k ⇒ covariance Σ_k / B_k). The batch sizes belong to the algorithm
(``DynamicFedAvg(batch=...)``), which applies them with ``with_batch``.

Convention (the paper's): in round t the model first drifts, w°_{t+1} = w°_t + q_{t+1}, then the sampled
agents update on the objective with optimum w°_{t+1}; the mean-square deviation is MSD_t = E‖x_t − w°_t‖²
(``Trace.tracking_error``, ``Moments.msd``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .. import _faults
from .._validation import check_alloc, check_array, check_int, check_positive, check_real
from .base import Constants, NoiseModel
from .curvature import HeterogeneousCurvatureQuadratic
from .noise import without_replacement_factor
from .quadratic import HeterogeneousQuadratic, QuadraticProblem

__all__ = ["AgentGaussianNoise", "AgentSampleNoise", "DriftingQuadratic", "DriftingSlides", "check_batch"]


def check_batch(batch: int | ArrayLike, sizes: ArrayLike, name: str = "batch") -> np.ndarray:
    """Per-agent batch sizes B_k (an int or (K,) ints) checked against the agents' data sizes N_k ``sizes``
    (None: infinite populations): 1 ≤ B_k ≤ N_k, else a ValueError naming the agent."""
    sizes = np.asarray(sizes)
    K = len(sizes)
    b = np.asarray(batch)
    if b.ndim == 0:
        b = np.full(K, b)
    if b.shape != (K,):
        raise ValueError(f"{name} has shape {b.shape}; expected an int or one entry per agent ({K},)")
    out = np.empty(K, dtype=np.int64)
    for k in range(K):
        hi = None if sizes[k] is None or sizes[k] < 0 else int(sizes[k])
        out[k] = check_int(f"{name}[{k}]", b[k].item() if hasattr(b[k], "item") else b[k], low=1, high=hi)
    return out


class _AgentNoise(NoiseModel):
    """Per-agent mini-batch noise: agent k's per-sample second moment S_k (``_S``, (K, d, d)) and batch
    size B_k (``batch``); a subclass sets its exact per-agent variance with ``_set_variance``."""

    sigma_L_kind = "exact"

    def _set_variance(self, variance_per_worker: np.ndarray) -> None:
        """E‖ξ_k‖² per agent (exact), and σ_L² = its maximum (exact, attained)."""
        self.variance_per_worker = variance_per_worker
        self.sigma_L = float(np.sqrt(variance_per_worker.max()))

    def sample_covariance(self, k: int) -> np.ndarray:
        """S_k = (1/N_k) Σ_s o_{k,s} o_{k,s}ᵀ (finite samples) or Σ_k (Gaussian): the covariance of one
        sample's gradient offset of agent ``k`` (a copy)."""
        return self._S[int(k)].copy()


class AgentSampleNoise(_AgentNoise):
    """Finite-sum mini-batch noise with per-agent data: agent k holds N_k samples whose gradient offsets
    o_{k,s} = ∇Q_k(w; x_{k,s}) − ∇P_k(w) do not depend on w and average to zero over s; a stochastic
    gradient averages B_k of them drawn uniformly without replacement (Algorithm 2's mini-batch).

    Exact covariance (finite-population correction): (N_k − B_k)/(B_k (N_k − 1)) · S_k, S_k = (1/N_k) Σ_s o
    oᵀ; σ_L² = max_k of its trace (exact, attained).
    """

    gaussian = False

    def __init__(self, offsets: Sequence[ArrayLike], batch: int | ArrayLike = 1):
        offs = [check_array(f"offsets[{k}]", o, ndim=2) for k, o in enumerate(offsets)]
        if not offs:
            raise ValueError("offsets must hold one (N_k, d) array per agent; got none")
        d = offs[0].shape[1]
        for k, o in enumerate(offs):
            if o.shape[1] != d or o.shape[0] < 1:
                raise ValueError(f"offsets[{k}] has shape {o.shape}; expected (N_k >= 1, {d})")
            scale = max(1.0, float(np.abs(o).max()))
            if np.abs(o.mean(axis=0)).max() > 1e-10 * scale:
                raise ValueError(
                    f"offsets[{k}] must average to zero over its samples (unbiased gradients); "
                    f"largest |mean| {np.abs(o.mean(axis=0)).max():.3g}"
                )
        self.offsets = tuple(o - o.mean(axis=0) for o in offs)
        self.sizes = np.array([o.shape[0] for o in self.offsets], dtype=np.int64)
        self.num_workers, self.dim = len(offs), d
        self.batch = check_batch(batch, self.sizes)
        n_max = int(self.sizes.max())
        self._padded = np.zeros((self.num_workers, n_max, d))
        for k, o in enumerate(self.offsets):
            self._padded[k, : o.shape[0]] = o
        self.factor = np.array(
            [without_replacement_factor(int(n), int(b)) for n, b in zip(self.sizes, self.batch, strict=True)]
        )
        self._S = np.stack([o.T @ o / o.shape[0] for o in self.offsets])  # per-sample second moments
        self._set_variance(self.factor * np.einsum("kii->k", self._S))

    def with_batch(self, batch: int | ArrayLike) -> AgentSampleNoise:
        """The same finite samples with minibatch size(s) ``batch``."""
        return AgentSampleNoise(self.offsets, batch)

    def sample(self, rng: np.random.Generator, workers: np.ndarray, dim: int) -> np.ndarray:
        w = np.asarray(workers)
        if dim != self.dim:
            raise ValueError(f"dim={dim} does not match the offsets' dim={self.dim}")
        flat = w.reshape(-1)
        sizes, B = self.sizes[flat], self.batch[flat]
        b_max = int(B.max()) if flat.size else 1
        # a uniform B_k-subset without replacement, drawn sequentially: the j-th pick is uniform among the
        # N_k − j samples not yet picked (the r-th unused index: step r past each earlier pick, ascending)
        idx = np.empty((flat.size, b_max), dtype=np.int64)
        # None unless a sampling mutant is injected
        fault = _faults.get(_faults.FaultPoint.PROBLEMS_MINIBATCH)
        for j in range(0 if fault is not None else b_max):
            r = rng.integers(0, np.maximum(sizes - j, 1))
            if j:
                prev = np.sort(idx[:, :j], axis=1)
                for c in range(j):
                    r += r >= prev[:, c]
            idx[:, j] = r
        if fault is not None:  # the mutant: each agent's B_k picks with replacement among its N_k samples
            idx = fault(sizes[:, None], (flat.size, b_max), rng)
        take = (np.arange(b_max)[None, :] < B[:, None]) / B[:, None]
        xi = np.einsum("nb,nbd->nd", take, self._padded[flat[:, None], idx])
        return xi.reshape(*w.shape, dim)

    def covariance(self, i: int, dim: int) -> np.ndarray | None:
        return self.factor[int(i)] * self._S[int(i)]

    def __repr__(self):
        return (
            f"AgentSampleNoise(agents={self.num_workers}, N={self.sizes.tolist()}, "
            f"batch={self.batch.tolist()}, sigma_L={self.sigma_L:.4g})"
        )


class AgentGaussianNoise(_AgentNoise):
    """Gaussian mini-batch noise with per-agent per-sample covariance Σ_k (an infinite population): a batch of
    B_k samples has covariance Σ_k / B_k exactly; σ_L² = max_k tr(Σ_k)/B_k (exact)."""

    gaussian = True

    def __init__(self, sample_cov: ArrayLike, batch: int | ArrayLike = 1):
        S = check_array("sample_cov", sample_cov, ndim=3)
        K, d, d2 = S.shape
        if d != d2 or not np.allclose(S, np.transpose(S, (0, 2, 1))):
            raise ValueError(f"sample_cov must be (K, d, d) symmetric matrices, got shape {S.shape}")
        if min(np.linalg.eigvalsh(s)[0] for s in S) < -1e-12 * max(1.0, float(np.abs(S).max())):
            raise ValueError("sample_cov must be positive semidefinite")
        self._S = 0.5 * (S + np.transpose(S, (0, 2, 1)))
        self.num_workers, self.dim = K, d
        self.batch = check_batch(batch, [-1] * K)
        self._chol = np.stack([_psd_sqrt(s / b) for s, b in zip(self._S, self.batch, strict=True)])
        self._set_variance(np.einsum("kii->k", self._S) / self.batch)

    def with_batch(self, batch: int | ArrayLike) -> AgentGaussianNoise:
        """The same per-agent covariances with minibatch size(s) ``batch``."""
        return AgentGaussianNoise(self._S, batch)

    def sample(self, rng: np.random.Generator, workers: np.ndarray, dim: int) -> np.ndarray:
        w = np.asarray(workers)
        z = rng.standard_normal((*w.shape, dim))
        return np.einsum("...ij,...j->...i", self._chol[w], z)

    def covariance(self, i: int, dim: int) -> np.ndarray | None:
        return self._S[int(i)] / self.batch[int(i)]

    def __repr__(self):
        return (
            f"AgentGaussianNoise(agents={self.num_workers}, batch={self.batch.tolist()}, "
            f"sigma_L={self.sigma_L:.4g})"
        )


def _psd_sqrt(A):
    lam, V = np.linalg.eigh(A)
    return (V * np.sqrt(np.clip(lam, 0.0, None))) @ V.T


class DriftingQuadratic:
    """A quadratic federated problem whose optimum drifts as a random walk (see the module docstring).

    Certificates per round (all **exact**): translation changes neither Hessians nor the differences ∇f_k −
    ∇f, so L, μ, σ_G, σ_L and f* are ``base``'s at every round and x*_t = x* + w_t. Drift: q_t = Q^{1/2}
    z_t, z_t ~ N(0, I_d); isotropic by default (Q = (σ_q²/d) I, so E‖q_t‖² = σ_q² exactly).
    """

    #: read by the engine: ``base`` (the round-0 problem) and ``walk(gen, rounds)`` (the optimum's path)
    drifts = True

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
        sigma_q: float = 0.1,
    ):
        base = HeterogeneousQuadratic(
            dim=dim,
            num_workers=num_workers,
            L=L,
            mu=mu,
            sigma_L=sigma_L,
            sigma_G=sigma_G,
            seed=seed,
            hessian=hessian,
        )
        self._set(base, sigma_q, None)

    @classmethod
    def from_problem(
        cls, base: QuadraticProblem, sigma_q: float | None = None, *, drift_cov: ArrayLike | None = None
    ) -> DriftingQuadratic:
        """Wrap a quadratic ``base`` (shared-Hessian ``HeterogeneousQuadratic`` or per-agent
        ``HeterogeneousCurvatureQuadratic``). Give ``sigma_q`` (isotropic drift) or ``drift_cov`` (d, d).
        """
        if not isinstance(base, (HeterogeneousQuadratic, HeterogeneousCurvatureQuadratic)):
            raise ValueError(
                f"base must be a HeterogeneousQuadratic or HeterogeneousCurvatureQuadratic, "
                f"got {type(base).__name__}"
            )
        self = cls.__new__(cls)
        self._set(base, sigma_q, drift_cov)
        return self

    @classmethod
    def federated(
        cls,
        *,
        hessians: ArrayLike,
        offsets: ArrayLike,
        w0: ArrayLike | None = None,
        sigma_q: float | None = 0.0,
        drift_cov: ArrayLike | None = None,
        sample_offsets: Sequence[ArrayLike] | None = None,
        sample_cov: ArrayLike | None = None,
        batch: int | ArrayLike = 1,
        radius: float | None = None,
    ) -> DriftingQuadratic:
        """The paper's model from arrays. ``hessians``: shared (d,) diagonal / (d, d), or per agent (K, d) /
        (K, d, d); ``offsets`` c_k (K, d), re-centred so that Σ_k R_k c_k = 0 (w° is the aggregate
        minimizer); ``w0`` the initial true model (default 0). Data: ``sample_offsets`` (a list of K (N_k,
        d) gradient-offset arrays, finite sum) or ``sample_cov`` (K, d, d) per-sample covariances
        (Gaussian), or neither (exact gradients); ``batch`` B_k (int or (K,)). With K = d a 2-D ``hessians``
        is read as one shared (d, d) Hessian: pass per-agent diagonals as (K, d, d). ``radius``: σ_G
        certification radius for per-agent Hessians (default 3·sqrt(d))."""
        C = check_array("offsets", offsets, ndim=2)
        K, d = C.shape
        check_int("offsets.shape[0] (agents K)", K, low=1)
        w0 = np.zeros(d) if w0 is None else check_array("w0", w0, shape=(d,))
        H = check_array("hessians", hessians)
        if H.shape in ((d,), (d, d)):
            shared, Hd = True, (np.diag(H) if H.ndim == 1 else H)
            Hk = np.broadcast_to(Hd, (K, d, d))
        elif H.shape in ((K, d), (K, d, d)):
            shared = False
            Hk = np.stack([np.diag(h) for h in H]) if H.ndim == 2 else H
        else:
            raise ValueError(
                f"hessians has shape {H.shape}; expected ({d},), ({d}, {d}), ({K}, {d}) or "
                f"({K}, {d}, {d}) for offsets of shape {C.shape}"
            )
        Hbar = Hk.mean(axis=0)
        if np.linalg.eigvalsh(0.5 * (Hbar + Hbar.T))[0] <= 0:
            raise ValueError("hessians: their mean must be positive definite; allowed range (0, inf)")
        shift = np.linalg.solve(Hbar, np.einsum("kij,kj->i", Hk, C) / K)
        C = C - shift  # Σ_k R_k c_k = 0
        if sample_offsets is not None and sample_cov is not None:
            raise ValueError("give at most one of sample_offsets (finite sum) and sample_cov (Gaussian)")
        if sample_offsets is not None:
            if len(sample_offsets) != K:
                raise ValueError(
                    f"sample_offsets has {len(sample_offsets)} arrays; expected one per agent ({K})"
                )
            noise = AgentSampleNoise(sample_offsets, batch)
        elif sample_cov is not None:
            noise = AgentGaussianNoise(check_array("sample_cov", sample_cov, shape=(K, d, d)), batch)
        else:
            noise = AgentGaussianNoise(np.zeros((K, d, d)), batch)
        centers = w0 + C
        if shared:
            kw = {"hessian_diag": H} if H.ndim == 1 else {"hessian": H}
            base = HeterogeneousQuadratic.from_arrays(centers=centers, sigma_L=noise, **kw)
        else:
            base = HeterogeneousCurvatureQuadratic.from_arrays(
                hessians=H,
                centers=centers,
                sigma_L=noise,
                radius=3.0 * np.sqrt(d) if radius is None else check_positive("radius", radius),
            )
        return cls.from_problem(base, None if drift_cov is not None else sigma_q, drift_cov=drift_cov)

    @classmethod
    def slides(
        cls,
        *,
        sigma_q2: float = 0.0,
        sigma_c2: float = 0.1,
        num_agents: int = 20,
        dim: int = 5,
        hessian: str = "agent",
        samples: tuple[int, int] = (40, 80),
        data_std: float = 0.5,
        w0_scale: float = 1.0,
        batch: int | ArrayLike | None = None,
        seed: int = 0,
    ) -> DriftingQuadratic:
        """The slides' experiment (the Dynamic FL slides [Rizk et al.]): K = 20 agents, offsets c_k ~ N(0,
        σ_c² I) (σ_c² = 0.1),
        isotropic drift σ_q² ∈ {0, 0.01}. Not in the slides, chosen here (docs/dynamic.md): dimension
        ``dim`` = 5, per-agent diagonal Hessians R_k with entries log-uniform in [0.5, 2]
        (``hessian="shared"``: one such R), N_k uniform on ``samples`` with per-sample gradient offsets of
        standard deviation ``data_std`` per coordinate, w_0 ~ N(0, w0_scale² I) (the "random start"), and
        default batch sizes B_k uniform on {1, …, 8}, capped at N_k."""
        # variances <= 1e200, scales <= 1e100: the certified constants (squares, sums) stay finite
        sigma_q2 = check_real("sigma_q2", sigma_q2, low=0.0, high=1e200)
        sigma_c2 = check_real("sigma_c2", sigma_c2, low=0.0, high=1e200)
        data_std = check_real("data_std", data_std, low=0.0, high=1e100)
        w0_scale = check_real("w0_scale", w0_scale, low=0.0, high=1e100)
        K = check_int("num_agents", num_agents, low=2)
        d = check_int("dim", dim, low=1)
        if not isinstance(hessian, str) or hessian not in ("agent", "shared"):
            raise ValueError(f"hessian={hessian!r} must be 'agent' or 'shared'")
        rng = np.random.default_rng(np.random.SeedSequence([check_int("seed", seed, low=0), 0xD1]))
        if isinstance(samples, (str, bytes)) or not hasattr(samples, "__len__") or len(samples) != 2:
            raise ValueError(f"samples={samples!r} must be a pair (min, max) of per-agent sample counts")
        n_lo = check_int("samples[0]", samples[0], low=2)
        n_hi = check_int("samples[1]", samples[1], low=n_lo)
        check_alloc(f"num_agents={K}, dim={d}, samples={n_hi}", 8.0 * K * d * (n_hi + 4))
        H = np.exp(rng.uniform(np.log(0.5), np.log(2.0), size=(K, d) if hessian == "agent" else (d,)))
        c = rng.standard_normal((K, d)) * np.sqrt(sigma_c2)
        N = rng.integers(n_lo, n_hi + 1, size=K)
        offs = []
        for n in N:
            o = rng.standard_normal((int(n), d)) * data_std
            offs.append(o - o.mean(axis=0))
        if batch is None:
            batch = np.minimum(rng.integers(1, 9, size=K), N)  # B_k <= N_k (only binds when N_k < 8)
        w0 = rng.standard_normal(d) * w0_scale
        if hessian == "agent":  # (K, d, d): a (K, d) array with K = d would read as one shared (d, d) Hessian
            H = np.stack([np.diag(h) for h in H])
        return cls.federated(
            hessians=H, offsets=c, w0=w0, sigma_q=np.sqrt(sigma_q2), sample_offsets=offs, batch=batch
        )

    def _set(self, base, sigma_q, drift_cov):
        self.base = base
        self.dim, self.num_workers, self.noise = base.dim, base.num_workers, base.noise
        if drift_cov is not None:
            if sigma_q is not None:
                raise ValueError("give sigma_q (isotropic drift) or drift_cov, not both")
            Q = check_array("drift_cov", drift_cov, shape=(self.dim, self.dim))
            tol = -1e-12 * max(1.0, float(np.abs(Q).max()))
            if not np.allclose(Q, Q.T) or np.linalg.eigvalsh(0.5 * (Q + Q.T))[0] < tol:
                raise ValueError("drift_cov must be symmetric positive semidefinite")
            self._Q = 0.5 * (Q + Q.T)
            self.sigma_q = float(np.sqrt(max(np.trace(self._Q), 0.0)))
            self._isotropic = False
        else:
            if sigma_q is None:
                raise ValueError("give sigma_q (isotropic drift, >= 0) or drift_cov (d, d)")
            self.sigma_q = check_real("sigma_q", sigma_q, low=0.0, high=1e150)  # σ_q² stays finite
            self._Q = np.eye(self.dim) * (self.sigma_q**2 / self.dim)
            self._isotropic = True
        self._Qhalf = _psd_sqrt(self._Q)

    @property
    def constants(self) -> Constants:
        """Round-0 constants (w_0 = 0); every round has the same L, μ, σ_L, σ_G, f* and x*_t = x* + w_t."""
        return self.base.constants

    @property
    def drift_cov(self) -> np.ndarray:
        """Q = Cov(q_t), (d, d); tr Q = σ_q²."""
        return self._Q.copy()

    @property
    def per_agent_hessians(self) -> bool:
        """True when the agents have different Hessians (the shared-Hessian MSD closed forms do not apply)."""
        return not getattr(self.base, "shared", True)

    def with_batch(self, batch: int | ArrayLike) -> DriftingQuadratic:
        """The same problem with mini-batches of B_k samples (``batch``: int or (K,)) — needs agent noise with
        a batch (``federated`` / ``slides``); ValueError naming the agent if some B_k exceeds its N_k."""
        if not hasattr(self.noise, "with_batch"):
            raise ValueError(
                f"batch={batch!r}: this problem's noise {self.noise!r} has no per-agent data to draw "
                "mini-batches from (build it with DriftingQuadratic.federated or .slides)"
            )
        noise = self.noise.with_batch(batch)
        b = self.base
        if isinstance(b, HeterogeneousCurvatureQuadratic):
            base = HeterogeneousCurvatureQuadratic.from_arrays(
                hessians=b.hessian, centers=b.centers, sigma_L=noise, radius=b.radius
            )
        else:
            kw = {"hessian_diag": b.hessian[0]} if b.kind == "diag" else {"hessian": b.hessian[0]}
            base = HeterogeneousQuadratic.from_arrays(centers=b.centers, sigma_L=noise, **kw)
        new = DriftingQuadratic.__new__(DriftingQuadratic)
        new._set(base, self.sigma_q if self._isotropic else None, None if self._isotropic else self._Q)
        return new

    # -- drift process
    def increments(self, rng: np.random.Generator, rounds: int, batch: tuple = ()) -> np.ndarray:
        """q_1..q_rounds, shape (*batch, rounds, dim), q = Q^{1/2} z, z ~ N(0, I)."""
        rounds = check_int("rounds", rounds, low=0)
        q = rng.standard_normal((*tuple(batch), rounds, self.dim))
        if self._isotropic:
            q *= self.sigma_q / np.sqrt(self.dim)
        else:
            q = q @ self._Qhalf.T
        return q

    def walk(self, rng: np.random.Generator, rounds: int, batch: tuple = ()) -> np.ndarray:
        """w_0..w_rounds, shape (*batch, rounds + 1, dim), w_0 = 0, w_t = w_{t−1} + q_t."""
        q = self.increments(rng, rounds, batch)
        w = np.zeros((*q.shape[:-2], q.shape[-2] + 1, self.dim))
        np.cumsum(q, axis=-2, out=w[..., 1:, :])
        return w

    def optimum(self, offset: np.ndarray) -> np.ndarray:
        """w°_t = x* + w_t for offsets of shape (..., dim)."""
        return self.base.constants.x_star + np.asarray(offset, dtype=float)

    # -- the problem at a given offset
    def shift(self, delta: np.ndarray) -> QuadraticProblem:
        """The round objective for offset ``delta`` (dim,): the base problem translated, exact constants."""
        b = self.base
        if isinstance(b, HeterogeneousQuadratic):
            return b.shifted(delta)
        delta = check_array("delta", delta, shape=(self.dim,))
        return HeterogeneousCurvatureQuadratic.from_arrays(
            hessians=b.hessian, centers=b.centers + delta, sigma_L=b.noise, radius=b.radius
        )

    def at_round(self, t: int, walk: np.ndarray) -> QuadraticProblem:
        """The problem at round ``t`` of a drift path ``walk`` (rounds + 1, dim) from ``walk(...)``."""
        w = check_array("walk", walk, ndim=2)
        if w.shape[1] != self.dim:
            raise ValueError(f"walk has shape {w.shape}; its last axis must be dim={self.dim}")
        t = check_int("t", t, low=0, high=w.shape[0] - 1)
        return self.shift(w[t])

    # -- vectorized evaluation with per-entry offsets (offset broadcastable against x)
    def value(self, x: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """f(x − offset): the base problem's value in the frame of the drifted optimum (``offset`` = w°_t −
        w°_0)."""
        return self.base.value(np.asarray(x, dtype=float) - offset)

    def grad(self, x: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """∇f(x − offset) in the frame of the drifted optimum."""
        return self.base.grad(np.asarray(x, dtype=float) - offset)

    def local_grad(self, x: np.ndarray, i: int | np.ndarray, offset: np.ndarray) -> np.ndarray:
        """∇f_i(x − offset) in the frame of the drifted optimum."""
        return self.base.local_grad(np.asarray(x, dtype=float) - offset, i)

    def __repr__(self):
        q = f"sigma_q={self.sigma_q}" if self._isotropic else f"drift_cov=tr {np.trace(self._Q):.4g}"
        return f"DriftingQuadratic(base={self.base!r}, {q})"


class DriftingSlides(DriftingQuadratic):
    """``DriftingQuadratic.slides(...)`` as a class, so sweep specs can name it (``family =
    "DriftingSlides"``): the slides' experiment with ``sigma_q2`` = σ_q², ``sigma_c2`` = σ_c² and the
    choices documented there."""

    def __init__(
        self,
        sigma_q2: float = 0.0,
        sigma_c2: float = 0.1,
        num_agents: int = 20,
        dim: int = 5,
        hessian: str = "agent",
        samples_min: int = 40,
        samples_max: int = 80,
        data_std: float = 0.5,
        w0_scale: float = 1.0,
        seed: int = 0,
    ):
        samples_min = check_int("samples_min", samples_min, low=2)
        samples_max = check_int("samples_max", samples_max, low=samples_min)
        p = DriftingQuadratic.slides(
            sigma_q2=sigma_q2,
            sigma_c2=sigma_c2,
            num_agents=num_agents,
            dim=dim,
            hessian=hessian,
            samples=(samples_min, samples_max),
            data_std=data_std,
            w0_scale=w0_scale,
            seed=seed,
        )
        self._set(p.base, p.sigma_q, None)
