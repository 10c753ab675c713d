"""A smooth nonconvex heterogeneous family: separable quadratic plus sinusoid, any dimension."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._numerics import rowsum
from .._validation import check_array, check_int, check_nonnegative, check_positive, check_real
from .base import Constants, NoiseModel, Problem, as_noise, check_dim_workers, exact_certificates

__all__ = ["NonconvexSinusoidal"]


class NonconvexSinusoidal(Problem):
    """f_i(x) = Σ_j [ ½ μ0 (x_j − c_ij)² + β cos(ω x_j + φ_ij) ]; nonconvex when β ω² > μ0.

    Write m_j = (1/M) Σ_i e^{iφ_ij}, ρ_j = |m_j|, δ_ij = |e^{iφ_ij} − m_j|. Certificates ([Yang et al. 2022],
    Assumptions 1 and 3):
    - L = μ0 + β ω², **exact**: ∂²f_i/∂x_j² = μ0 − β ω² cos(ω x_j + φ_ij) (diagonal Hessian), whose largest
      modulus μ0 + βω² is attained where cos = −1.
    - μ = μ0 − β ω² max_j ρ_j, **exact** smallest eigenvalue of ∇²f over x:
      ∂²f/∂x_j² = μ0 − βω² Re(e^{iωx_j} m_j).
      Each f_i alone has lower curvature ``mu_local`` = μ0 − βω².
    - σ_G = max_i sqrt(Σ_j (μ0 |c̄_j − c_ij| + β ω δ_ij)²), **exact**: coordinate j of ∇f_i − ∇f is
      μ0 (c̄_j − c_ij) − βω Im(e^{iωx_j}(e^{iφ_ij} − m_j)); the x_j are free, so each coordinate's sup of the
      square, (|a| + βωδ)², is attained independently (``sigma_G_witness`` returns the maximizer).
    - f* **lower bound**: f = Σ_j g_j with g_j(t) = ½μ0((t − c̄_j)² + v_j) + βρ_j cos(ωt + arg m_j); every
      minimizer of g_j lies in |t − c̄_j| ≤ 2 sqrt(βρ_j/μ0) (outside, g_j > g_j(c̄_j)); on a cell [a, b],
      g_j ≥ linear interpolant − (L_j/2)(t − a)(b − t) with L_j = μ0 + βω²ρ_j ≥ g_j'' (the difference is
      concave and vanishes at a, b). Branch and bound on cells certifies each min g_j to ``fstar_tol``; a
      float-rounding margin is subtracted. x* = the best point found (certified "none"); ``f_best`` = f(x*).
    - σ_L from the noise model (additive, x-independent; Gaussian: E‖ξ‖² = σ_L² exactly).

    Construction (``__init__``): μ0 = (L + mu)/2 and βω² = (L − mu)/2, so ``L`` and ``mu`` are the
    per-worker curvature extremes (mu ∈ (−L, L]; mu < 0 is nonconvex; μ0 > 0 makes f bounded below). The
    last coordinate has the same phase for every worker (ρ = 1), so the certified μ of f equals the requested
    ``mu``; the other phases are φ_ij = θ_j + κπ u_ij, u ~ U(−1, 1), with κ ∈ [0, 1] chosen by bisection so
    that the phase part max_i βω‖δ_i‖ is ``phase_fraction``·sigma_G (or κ = 1 if that is not reachable);
    then centres c_i = c̄ + t w_i with t ≥ 0 solved in closed form so that the exact σ_G equals the requested
    ``sigma_G``.
    """

    additive_noise = True  # ξ from ``noise``, x-independent

    def __init__(
        self,
        dim: int = 10,
        num_workers: int = 10,
        L: float = 1.0,
        mu: float = -0.5,
        sigma_L: float | NoiseModel = 0.0,
        sigma_G: float = 1.0,
        seed: int = 0,
        omega: float = 2.0,
        phase_fraction: float = 0.5,
        fstar_tol: float = 1e-9,
    ):
        d, M = check_dim_workers(dim, num_workers)
        L = check_positive("L", L)
        mu = check_real("mu", mu, low=-L, high=L, low_open=True)
        # σ_G² and the centres' scale stay within the float range (the certified f* is then finite)
        sigma_G = check_real("sigma_G", sigma_G, low=0.0, high=1e100)
        if sigma_G > 0 and M < 2:
            raise ValueError(f"num_workers={M} must be >= 2 for sigma_G={sigma_G} > 0")
        omega = check_positive("omega", omega)
        frac = check_real("phase_fraction", phase_fraction, low=0.0, high=1.0)
        seed = check_int("seed", seed, low=0)
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0x54]))
        mu0 = 0.5 * (L + mu)
        beta = 0.5 * (L - mu) / omega**2
        theta = rng.uniform(-np.pi, np.pi, size=d)
        U = rng.uniform(-1.0, 1.0, size=(M, d))
        U[:, -1] = 0.0

        def phase_part(kappa):
            phi = theta + kappa * np.pi * U
            z = np.exp(1j * phi)
            delta = np.abs(z - z.mean(axis=0))
            return phi, beta * omega * delta

        target = frac * sigma_G
        kappa = 1.0
        if np.linalg.norm(phase_part(1.0)[1], axis=1).max() > target:  # bisect a continuous map, 0 at κ = 0
            lo, hi = 0.0, 1.0
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if np.linalg.norm(phase_part(mid)[1], axis=1).max() > target:
                    hi = mid
                else:
                    lo = mid
            kappa = lo
        phi, b = phase_part(kappa)
        cbar = rng.standard_normal(d)
        w = rng.standard_normal((M, d))
        w -= w.mean(axis=0)
        a = mu0 * np.abs(w)
        # ‖t a_i + b_i‖ = sigma_G: t² ‖a‖² + 2t a·b + ‖b‖² − σ² = 0, positive root; take the min over workers
        aa, ab, bb = np.sum(a * a, 1), np.sum(a * b, 1), np.sum(b * b, 1)
        if sigma_G == 0:
            t = 0.0
        else:
            pos = aa > 0
            disc = np.maximum(ab[pos] ** 2 + aa[pos] * (sigma_G**2 - bb[pos]), 0.0)  # ≥ 0 up to round-off
            roots = (-ab[pos] + np.sqrt(disc)) / aa[pos]
            t = max(0.0, float(roots.min())) if roots.size else 0.0
        self._init_arrays(cbar + t * w, phi, mu0, beta, omega, as_noise(sigma_L), fstar_tol)
        self.phase_scale, self.center_scale = kappa, t

    @classmethod
    def from_arrays(
        cls,
        *,
        centers: ArrayLike,
        phases: ArrayLike,
        mu0: float,
        beta: float,
        omega: float,
        sigma_L: float | NoiseModel = 0.0,
        fstar_tol: float = 1e-9,
    ) -> NonconvexSinusoidal:
        """``centers``, ``phases``: (M, d); ``mu0`` > 0, ``beta`` ≥ 0, ``omega`` > 0.
        Constants are computed from the arrays."""
        C = check_array("centers", centers, ndim=2)
        M, d = C.shape
        check_dim_workers(d, M)
        P = check_array("phases", phases, shape=(M, d))
        self = cls.__new__(cls)
        self._init_arrays(
            C,
            P,
            check_positive("mu0", mu0),
            check_nonnegative("beta", beta),
            check_positive("omega", omega),
            as_noise(sigma_L),
            fstar_tol,
        )
        return self

    # ----------------------------------------------------------------------------------------- certificates
    def _init_arrays(self, centers, phases, mu0, beta, omega, noise, fstar_tol):
        self.centers = np.asarray(centers, dtype=float)
        self.phases = np.asarray(phases, dtype=float)
        self.num_workers, self.dim = self.centers.shape
        self.mu0, self.beta, self.omega, self.noise = float(mu0), float(beta), float(omega), noise
        self.fstar_tol = check_positive("fstar_tol", fstar_tol)
        z = np.exp(1j * self.phases)
        self._m = z.mean(axis=0)  # m_j
        self._rho = np.abs(self._m)
        self._cbar = self.centers.mean(axis=0)
        self._v = np.mean((self.centers - self._cbar) ** 2, axis=0)
        bw2 = self.beta * self.omega**2
        self.mu_local = self.mu0 - bw2
        a = self.mu0 * np.abs(self._cbar - self.centers)
        b = self.beta * self.omega * np.abs(z - self._m)
        self.sigma_G_per_worker = np.sqrt(np.sum((a + b) ** 2, axis=1))
        f_low, x_best = self._certify_fstar()
        self.f_best = float(self.value(x_best))
        self.constants = Constants(
            L=self.mu0 + bw2,
            mu=float(self.mu0 - bw2 * self._rho.max()),
            sigma_L=noise.sigma_L,
            sigma_G=float(self.sigma_G_per_worker.max()),
            f_star=f_low,
            x_star=x_best,
            certified=exact_certificates(noise, f_star="lower", x_star="none"),
        )

    def _g(self, t, j):
        """g_j(t) for coordinate indices j (broadcast with t)."""
        m = self._m[j]
        return 0.5 * self.mu0 * ((t - self._cbar[j]) ** 2 + self._v[j]) + self.beta * np.abs(m) * np.cos(
            self.omega * t + np.angle(m)
        )

    def _certify_fstar(self, cells0: int = 64, max_iter: int = 60, max_cells: int = 1 << 20):
        """Branch and bound per coordinate (coordinates pooled): returns (certified lower bound, best x)."""
        d = self.dim
        rho = self._rho
        Lj = self.mu0 + self.beta * self.omega**2 * rho
        R = 2.0 * np.sqrt(self.beta * rho / self.mu0) + 1e-12
        # per-coordinate target gap; never below what float evaluation of g_j can resolve
        gscale = (
            0.5 * self.mu0 * ((R + np.abs(self._cbar)) ** 2 + self._cbar**2 + self._v) + self.beta * rho + 1.0
        )
        tol = np.maximum(self.fstar_tol / d, 1e4 * np.finfo(float).eps * gscale)
        grid = np.linspace(-1.0, 1.0, cells0 + 1)
        a = (self._cbar[:, None] + R[:, None] * grid[None, :-1]).ravel()
        b = (self._cbar[:, None] + R[:, None] * grid[None, 1:]).ravel()
        j = np.repeat(np.arange(d), cells0)
        ga, gb = self._g(a, j), self._g(b, j)
        best = np.full(d, np.inf)
        best_t = self._cbar.copy()
        pruned_lb = np.full(d, np.inf)  # lower bound over discarded cells
        for _ in range(max_iter):
            # upper bounds: best evaluated value per coordinate
            for vals, pts in ((ga, a), (gb, b)):
                order = np.lexsort((vals, j))
                first = np.ones(order.size, dtype=bool)
                first[1:] = j[order][1:] != j[order][:-1]
                jj, kk = j[order][first], order[first]
                better = vals[kk] < best[jj]
                best[jj[better]] = vals[kk][better]
                best_t[jj[better]] = pts[kk][better]
            h = b - a
            k = (gb - ga) / np.where(h > 0, h, 1.0)
            u = np.clip(0.5 * h - k / Lj[j], 0.0, h)
            lb = ga + k * u + 0.5 * Lj[j] * (u * u - h * u)
            keep = lb < best[j] - tol[j]
            drop = ~keep
            np.minimum.at(pruned_lb, j[drop], lb[drop])
            a, b, ga, gb, j = a[keep], b[keep], ga[keep], gb[keep], j[keep]
            if a.size == 0 or a.size > max_cells:
                break
            mid = 0.5 * (a + b)
            gm = self._g(mid, j)
            a, b = np.concatenate([a, mid]), np.concatenate([mid, b])
            ga, gb = np.concatenate([ga, gm]), np.concatenate([gm, gb])
            j = np.concatenate([j, j])
        lower = pruned_lb.copy()
        if a.size:  # not converged within max_iter: the live cells still bound it
            h = b - a
            k = (gb - ga) / np.where(h > 0, h, 1.0)
            u = np.clip(0.5 * h - k / Lj[j], 0.0, h)
            np.minimum.at(lower, j, ga + k * u + 0.5 * Lj[j] * (u * u - h * u))
        lower = np.minimum(lower, best)
        # polish the best points with a few safeguarded Newton steps (improves x*, not the certificate)
        t = best_t.copy()
        for _ in range(20):
            m = self._m
            ang = self.omega * t + np.angle(m)
            g1 = self.mu0 * (t - self._cbar) - self.beta * rho * self.omega * np.sin(ang)
            g2 = self.mu0 - self.beta * rho * self.omega**2 * np.cos(ang)
            step = np.where(g2 > 0, g1 / np.where(g2 > 0, g2, 1.0), 0.0)
            t_new = t - step
            ok = self._g(t_new, np.arange(d)) <= self._g(t, np.arange(d))
            t = np.where(ok, t_new, t)
        # float margin: each g_j evaluation carries relative error ~ few ulp of its terms' magnitudes
        margin = 64 * np.finfo(float).eps * float(np.sum(gscale + np.abs(best)))
        return float(np.sum(lower) - margin), t

    # ----------------------------------------------------------------------------------------- protocol
    def local_value(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        i = self._check_worker(i)
        x = np.asarray(x, dtype=float)
        q = 0.5 * self.mu0 * np.sum((x - self.centers[i]) ** 2, axis=-1)
        return q + self.beta * np.sum(np.cos(self.omega * x + self.phases[i]), axis=-1)

    def local_grad(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        i = self._check_worker(i)
        x = np.asarray(x, dtype=float)
        s = np.sin(self.omega * x + self.phases[i])
        return self.mu0 * (x - self.centers[i]) - self.beta * self.omega * s

    def local_grad_fn(self, workers: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        workers = self._check_worker(workers)
        c, p = self.centers[workers], self.phases[workers]
        mu0, bw, w = self.mu0, self.beta * self.omega, self.omega
        return lambda y: mu0 * (y - c) - bw * np.sin(w * y + p)

    def value(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return rowsum(self._g(x, np.arange(self.dim)))  # fixed-order sum: same bits for any batch

    def grad(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        m = self._m
        s = np.sin(self.omega * x + np.angle(m))
        return self.mu0 * (x - self._cbar) - self.beta * self.omega * np.abs(m) * s

    def sigma_G_witness(self) -> tuple[int, np.ndarray]:
        """(i, x) with ‖∇f_i(x) − ∇f(x)‖ = σ_G (the per-coordinate maximizers; see the class docstring)."""
        i = int(np.argmax(self.sigma_G_per_worker))
        a = self.mu0 * (self._cbar - self.centers[i])
        z = np.exp(1j * self.phases[i]) - self._m
        s = np.where(a >= 0, 1.0, -1.0)
        # want −Im(e^{iωx} z) = s|z|  ⇔  ωx + arg z = −s π/2
        return i, (-s * np.pi / 2 - np.angle(z)) / self.omega

    def __repr__(self):
        c = self.constants
        return (
            f"NonconvexSinusoidal(dim={self.dim}, num_workers={self.num_workers}, L={c.L:.4g}, "
            f"mu={c.mu:.4g}, sigma_L={c.sigma_L:.4g}, sigma_G={c.sigma_G:.4g}, omega={self.omega:.4g})"
        )
