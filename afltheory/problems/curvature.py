"""Heterogeneous-curvature quadratic: each worker its own Hessian A_i, so σ_G is certified on a ball only.

f_i(x) = ½ (x − c_i)ᵀ A_i (x − c_i). This family exhibits **client drift**: K local steps on f_i from a common
start are nonlinear in the start through products of the different A_i, so the average of the workers' local
trajectories is not the trajectory on f and local SGD converges to a point other than x*. Shared-Hessian
quadratics (``HeterogeneousQuadratic``) do not drift: every local step is affine with the same linear part,
and averaging is linear.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_array, check_int, check_positive, check_real
from .base import Constants, NoiseModel, as_noise, check_dim_workers, exact_certificates
from .quadratic import QuadraticProblem, check_quadratic_args

__all__ = ["HeterogeneousCurvatureQuadratic"]


def _rand_orthogonal(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


class HeterogeneousCurvatureQuadratic(QuadraticProblem):
    """Per-worker Hessians A_i (spectra in [mu, L]) and centres c_i; Assumption 3 holds on a ball.

    ∇f_i(x) − ∇f(x) = (A_i − Ā)(x − x*) + ∇f_i(x*) (since ∇f(x*) = 0) grows with ‖x‖, so σ_G is certified only
    for ‖x − x*‖ ≤ ``radius`` (``Constants.radius``; ``in_certified_region`` flags points outside).

    Certificates:
    - L = max_i λ_max(A_i), **exact**: Assumption 1 for f_i is ‖A_i‖₂ ≤ L, attained by the maximizing worker.
    - μ = λ_min(Ā), **exact**: ∇²f = Ā = (1/M) Σ_i A_i.
    - σ_G = max_i (‖A_i − Ā‖₂ · radius + ‖∇f_i(x*)‖), an **upper bound** on the ball (triangle inequality on
      the identity above); it is within a factor 2 of the true sup (the points x* and x* ± radius·v_i, v_i the
      top singular vector of A_i − Ā, reach at least max(‖∇f_i(x*)‖, ‖A_i − Ā‖₂·radius)).
    - x* = Ā⁻¹ (1/M) Σ_i A_i c_i and f* = f(x*), **exact** (f is a strongly convex quadratic).
    - σ_L from the noise model (additive; Gaussian: E‖ξ‖² = σ_L² exactly).

    Construction (``__init__``): raw Hessians with spectra in [mu, L] are drawn; worker 0 has eigenvalue L
    and, for dim ≥ 2, every worker has eigenvalue mu on one shared direction (so L and μ equal the requested
    values; for dim = 1, μ = mean_i a_i ≥ mu is reported exactly). The requested ``sigma_G`` is met exactly
    by the certified bound in two steps: (1) Hessians are pulled toward worker 0's,
    A_i = A_0 + s (A_i^raw − A_0), s ∈ [0, 1] (spectra stay in [mu, L] by convexity), so that
    max_i ‖A_i − Ā‖₂·radius equals ``curvature_fraction``·sigma_G (or s = 1 if the raw spread is smaller);
    (2) centres c_i = c̄ + t u_i with the spread t ≥ 0 solved in closed form so that
    max_i (‖A_i − Ā‖₂ radius + t ‖g_i‖) = sigma_G, where ∇f_i(x*) = t g_i. ``radius`` defaults to
    3·sqrt(dim) (``default_x0`` is at distance ≈ sqrt(dim) from x*).
    """

    def __init__(
        self,
        dim: int = 10,
        num_workers: int = 10,
        L: float = 1.0,
        mu: float = 0.1,
        sigma_L: float | NoiseModel = 0.0,
        sigma_G: float = 1.0,
        radius: float | None = None,
        seed: int = 0,
        hessian: str = "diag",
        curvature_fraction: float = 0.5,
    ):
        d, M, L, mu, sigma_G = check_quadratic_args(dim, num_workers, L, mu, sigma_G, hessian)
        radius = 3.0 * np.sqrt(d) if radius is None else check_positive("radius", radius)
        seed = check_int("seed", seed, low=0)
        frac = check_real("curvature_fraction", curvature_fraction, low=0.0, high=1.0)
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0x53]))

        # raw per-worker spectra in [mu, L]; worker 0 attains L; for d >= 2 the last direction has mu for all
        ev = np.exp(rng.uniform(np.log(mu), np.log(L), size=(M, d)))
        ev[0, 0] = L
        if d >= 2:
            ev[:, -1] = mu
        if hessian == "diag":
            raw = ev
            dense = np.stack([np.diag(e) for e in raw])
        else:
            Q = _rand_orthogonal(rng, d)
            dense = np.empty((M, d, d))
            k = d - 1 if d >= 2 else d  # size of the heterogeneous block
            for i in range(M):
                R = np.eye(k) if i == 0 else _rand_orthogonal(rng, k)
                block = (R * ev[i, :k]) @ R.T
                B = np.zeros((d, d))
                B[:k, :k] = block
                if d >= 2:
                    B[-1, -1] = mu
                dense[i] = Q @ B @ Q.T
            dense = 0.5 * (dense + np.transpose(dense, (0, 2, 1)))
            raw = dense
        # (1) curvature spread
        dev_norm_raw = _spec_norms(dense - dense.mean(axis=0))
        h_raw = radius * float(dev_norm_raw.max())
        s = 1.0 if h_raw == 0 else min(1.0, frac * sigma_G / h_raw)
        A = raw[0] + s * (raw - raw[0])
        denseA = dense[0] + s * (dense - dense[0])
        h = radius * _spec_norms(denseA - denseA.mean(axis=0))
        # (2) centre spread: ∇f_i(x*) = t g_i with g_i = A_i (Ā⁻¹ mean_j A_j u_j − u_i)
        cbar = rng.standard_normal(d)
        u = rng.standard_normal((M, d))
        u -= u.mean(axis=0)
        Hbar = denseA.mean(axis=0)
        xs = np.linalg.solve(Hbar, np.einsum("mjk,mk->j", denseA, u) / M)
        gnorm = np.linalg.norm(np.einsum("mjk,mk->mj", denseA, xs - u), axis=1)
        if sigma_G == 0 or not np.any(gnorm > 0):
            t = 0.0
        else:
            pos = gnorm > 0
            t = max(0.0, float(np.min((sigma_G - h[pos]) / gnorm[pos])))
        self._init_arrays(A, cbar + t * u, as_noise(sigma_L), hessian, radius)
        self.curvature_scale, self.center_scale = s, t

    # ----------------------------------------------------------------------------------------- certificates
    def _init_arrays(self, A, centers, noise, kind, radius):
        M = centers.shape[0]
        super().__init__(A, centers, np.zeros(M), noise, kind=kind)
        self.radius = radius
        H = self.dense_hessians()
        ev_max = np.array([np.linalg.eigvalsh(h)[-1] for h in H])
        self.hessian_deviation_norms = _spec_norms(H - self._Hbar)
        self.grad_at_optimum = np.einsum("mjk,mk->mj", H, self._x_star - self.centers)
        gx = np.linalg.norm(self.grad_at_optimum, axis=1)
        self.sigma_G_per_worker = self.hessian_deviation_norms * radius + gx
        self.constants = Constants(
            L=float(ev_max.max()),
            mu=float(np.linalg.eigvalsh(self._Hbar)[0]),
            sigma_L=noise.sigma_L,
            sigma_G=float(self.sigma_G_per_worker.max()),
            f_star=self._f_star,
            x_star=self._x_star,
            certified=exact_certificates(noise, sigma_G="upper"),
            radius=float(radius),
        )

    @classmethod
    def from_arrays(
        cls, *, hessians: ArrayLike, centers: ArrayLike, sigma_L: float | NoiseModel = 0.0, radius: float
    ) -> HeterogeneousCurvatureQuadratic:
        """``hessians``: (M, d) diagonals or (M, d, d) symmetric PSD matrices with Ā positive definite;
        ``centers``: (M, d); ``radius`` > 0. Constants are computed from the arrays (see the class docstring).
        """
        C = check_array("centers", centers, ndim=2)
        M, d = C.shape
        check_dim_workers(d, M)
        radius = check_positive("radius", radius)
        Hs = check_array("hessians", hessians)
        if Hs.shape == (M, d):
            kind = "diag"
            if np.any(Hs < 0):
                raise ValueError(
                    f"hessians (diagonals) must be >= 0 (min {Hs.min()}); allowed range [0, inf)"
                )
            dense = np.stack([np.diag(a) for a in Hs])
        elif Hs.shape == (M, d, d):
            kind = "dense"
            scale = max(1.0, float(np.abs(Hs).max()))
            if not np.allclose(Hs, np.transpose(Hs, (0, 2, 1)), atol=1e-12 * scale):
                raise ValueError("hessians must be symmetric")
            Hs = 0.5 * (Hs + np.transpose(Hs, (0, 2, 1)))
            lo = min(np.linalg.eigvalsh(h)[0] for h in Hs)
            if lo < -1e-12 * scale:
                raise ValueError(f"hessians must be positive semidefinite (smallest eigenvalue {lo})")
            dense = Hs
        else:
            raise ValueError(
                f"hessians has shape {Hs.shape}, expected ({M}, {d}) or ({M}, {d}, {d}) "
                f"to match centers {C.shape}"
            )
        lo = np.linalg.eigvalsh(dense.mean(axis=0))[0]
        if lo <= 0:
            raise ValueError(
                f"mean of hessians must be positive definite (smallest eigenvalue {lo}); "
                f"allowed range (0, inf)"
            )
        self = cls.__new__(cls)
        self._init_arrays(Hs, C, as_noise(sigma_L), kind, radius)
        return self

    def __repr__(self):
        c = self.constants
        return (
            f"HeterogeneousCurvatureQuadratic(dim={self.dim}, num_workers={self.num_workers}, L={c.L:.4g}, "
            f"mu={c.mu:.4g}, sigma_L={c.sigma_L:.4g}, sigma_G={c.sigma_G:.4g}, radius={c.radius:.4g}, "
            f"hessian={self.kind!r})"
        )


def _spec_norms(D):
    """Spectral norms of symmetric matrices D (M, d, d)."""
    return np.array([np.abs(np.linalg.eigvalsh(m)).max() for m in D])
