"""Federated multi-task learning problems [Smith et al. 2017, MOCHA, eqs. (1)–(3)]: primal, dual, duality gap.

Tasks t = 1..m, one per node; task t holds X_t (n_t × d, rows are samples x_t^i) and labels y_t (n_t,).
W = [w_1 … w_m] (d × m). Primal (the seed's objective):

    P(W) = Σ_t Σ_i ℓ(w_tᵀx_t^i, y_t^i) + λ₁ tr(W Ω Wᵀ) + λ₂ ‖W‖²_F = Σ ℓ + tr(W A Wᵀ),   A = λ₁Ω + λ₂I.

With C = A⁻¹ (m × m) and the dual variables α_t (n_t,), v_t = X_tᵀα_t (d,), V = [v_1 … v_m]:

    D(α) = −Σ_t Σ_i ℓ*(−α_t^i) − ¼ tr(V C Vᵀ),     W(α) = ½ V C   (the primal point of α),

so that P(W(α)) − D(α) ≥ 0 (weak duality) with equality at the optimum (R(W) = tr(WAWᵀ) has conjugate
R*(U) = ¼ tr(U C Uᵀ)). Losses and their conjugates at −α (y ∈ {−1, +1} for the hinge losses):

    squared          ℓ(z, y) = ½(z − y)²                 ℓ*(−α) = ½α² − αy                 1-smooth (μ = 1)
    hinge            ℓ(z, y) = max(0, 1 − yz)             ℓ*(−α) = −αy,  αy ∈ [0, 1]        1-Lipschitz
    smoothed_hinge   (γ-smoothed hinge, γ = ``gamma``)    ℓ*(−α) = −αy + (γ/2)α², αy ∈ [0, 1]  (1/γ)-smooth

Certified constants (``constants``): the loss smoothness 1/μ (or Lipschitz constant), the data radius
max‖x_t^i‖, σ'_min (the smallest safe σ' of the local subproblems: λ_max(D^{-1/2} C D^{-1/2}), D = diag(C),
so that ¼‖Σ_t …‖²_C ≤ σ' Σ_t ¼ C_tt‖X_tᵀΔα_t‖²; always ≤ m) and ``s`` of Theorem 1 (see
``afltheory.theory.mocha``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_array, check_int, check_nonnegative, check_positive

__all__ = ["MultiTaskProblem", "MTLConstants", "LOSSES", "synthetic_tasks"]

LOSSES = ("squared", "hinge", "smoothed_hinge")


@dataclass(frozen=True)
class MTLConstants:
    """Certified constants of a multi-task problem (see the module docstring)."""

    mu: float  # strong convexity of ℓ* (1/smoothness of ℓ); 0 for the hinge loss
    lipschitz: float | None  # Lipschitz constant of ℓ (hinge losses), None for the squared loss
    radius: float  # max_i ‖x_t^i‖
    sigma_prime_min: float  # smallest safe σ' (λ_max of the normalized C), in [1, m]
    n: int  # total number of samples


class MultiTaskProblem:
    """``MultiTaskProblem(X=[X_1, …, X_m], y=[y_1, …, y_m], loss="squared", lam1=..., lam2=..., Omega=None)``.

    ``X_t``: (n_t, d) rows of samples; ``y_t``: (n_t,) (±1 for the hinge losses). ``Omega`` (m × m, symmetric
    PSD; default the identity/m) is the task-relationship matrix in λ₁ tr(WΩWᵀ); λ₁ ≥ 0, λ₂ ≥ 0 with A = λ₁Ω +
    λ₂I positive definite. ``gamma``: smoothing of the smoothed hinge (default 1)."""

    def __init__(
        self,
        X: Sequence[ArrayLike],
        y: Sequence[ArrayLike],
        loss: str = "squared",
        lam1: float = 0.1,
        lam2: float = 0.1,
        Omega: ArrayLike | None = None,
        gamma: float = 1.0,
    ):
        if loss not in LOSSES:
            raise ValueError(f"loss={loss!r} must be one of {LOSSES}")
        if not isinstance(X, (list, tuple)) or not isinstance(y, (list, tuple)) or len(X) == 0:
            raise ValueError("X and y must be non-empty lists (one array per task)")
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} tasks but y has {len(y)}")
        self.X = [check_array(f"X[{t}]", x, ndim=2) for t, x in enumerate(X)]
        self.y = [check_array(f"y[{t}]", v, ndim=1) for t, v in enumerate(y)]
        d = self.X[0].shape[1]
        for t, (x, v) in enumerate(zip(self.X, self.y, strict=True)):
            if x.shape[1] != d:
                raise ValueError(f"X[{t}] has {x.shape[1]} features, X[0] has {d} (all tasks share d)")
            if x.shape[0] != v.shape[0] or x.shape[0] < 1:
                raise ValueError(
                    f"X[{t}] has {x.shape[0]} rows but y[{t}] has {v.shape[0]} (need n_t >= 1 and equal)"
                )
            if loss != "squared" and not np.all(np.isin(v, (-1.0, 1.0))):
                raise ValueError(f"y[{t}] must hold labels in {{-1, +1}} for loss={loss!r}")
        self.loss = loss
        self.lam1 = check_nonnegative("lam1", lam1)
        self.lam2 = check_nonnegative("lam2", lam2)
        self.gamma = check_positive("gamma", gamma)
        m = len(self.X)
        self.m, self.d = m, d
        self.Omega = self._check_omega(np.eye(m) / m if Omega is None else Omega)

    # -- structure
    def _check_omega(self, Omega) -> np.ndarray:
        m = self.m
        O = check_array("Omega", Omega, shape=(m, m))
        if not np.allclose(O, O.T, atol=1e-12 * max(1.0, np.abs(O).max())):
            raise ValueError("Omega must be symmetric")
        ev = np.linalg.eigvalsh((O + O.T) / 2)
        if ev.min() < -1e-10 * max(1.0, ev.max()):
            raise ValueError(f"Omega must be positive semidefinite (smallest eigenvalue {ev.min():.3g})")
        A = self.lam1 * O + self.lam2 * np.eye(m)
        evA = np.linalg.eigvalsh((A + A.T) / 2)
        if evA.min() <= 1e-12 * max(1.0, evA.max()):
            raise ValueError(
                f"lam1*Omega + lam2*I must be positive definite (lam1={self.lam1}, lam2={self.lam2}); "
                f"use lam2 > 0"
            )
        return (O + O.T) / 2

    def with_omega(self, Omega: ArrayLike) -> MultiTaskProblem:
        """The same data and losses with another relationship matrix."""
        return MultiTaskProblem(self.X, self.y, self.loss, self.lam1, self.lam2, Omega, self.gamma)

    @property
    def A(self) -> np.ndarray:
        """A = λ₁Ω + λ₂I, the task-coupling matrix of the regularizer tr(W A Wᵀ)."""
        return self.lam1 * self.Omega + self.lam2 * np.eye(self.m)

    @property
    def C(self) -> np.ndarray:
        """A⁻¹."""
        return np.linalg.inv(self.A)

    @property
    def n(self) -> int:
        """The total number of samples over the tasks."""
        return int(sum(len(v) for v in self.y))

    @property
    def constants(self) -> MTLConstants:
        """The certified constants of the MOCHA analysis (μ, Lipschitz, radius, σ'_min)."""
        C = self.C
        dg = np.sqrt(np.diag(C))
        sp = float(np.linalg.eigvalsh(C / np.outer(dg, dg)).max())
        mu = {"squared": 1.0, "hinge": 0.0, "smoothed_hinge": self.gamma}[self.loss]
        lip = None if self.loss == "squared" else 1.0
        radius = float(max(np.linalg.norm(x, axis=1).max() for x in self.X))
        return MTLConstants(
            mu=mu, lipschitz=lip, radius=radius, sigma_prime_min=min(max(sp, 1.0), float(self.m)), n=self.n
        )

    # -- losses
    def _loss(self, z, y) -> np.ndarray:
        if self.loss == "squared":
            return 0.5 * (z - y) ** 2
        margin = 1.0 - y * z
        if self.loss == "hinge":
            return np.maximum(0.0, margin)
        g = self.gamma
        return np.where(margin <= 0, 0.0, np.where(margin >= g, margin - g / 2, margin**2 / (2 * g)))

    def _conj(self, a, y) -> np.ndarray:
        """ℓ*(−a), +inf outside the domain (hinge losses: a·y ∈ [0, 1])."""
        if self.loss == "squared":
            return 0.5 * a**2 - a * y
        b = a * y
        out = -b + (0.0 if self.loss == "hinge" else 0.5 * self.gamma * a**2)
        return np.where((b >= -1e-12) & (b <= 1 + 1e-12), out, np.inf)

    # -- objectives
    def _W_check(self, W) -> np.ndarray:
        return check_array("W", W, shape=(self.d, self.m))

    def primal(self, W: np.ndarray) -> float:
        """P(W) = Σ_t Σ_i ℓ(w_tᵀx_t^i, y_t^i) + λ₁ tr(WΩWᵀ) + λ₂‖W‖²_F."""
        W = self._W_check(W)
        data = sum(
            float(self._loss(x @ W[:, t], y).sum())
            for t, (x, y) in enumerate(zip(self.X, self.y, strict=True))
        )
        return data + float(np.trace(W @ self.A @ W.T))

    def _alpha_check(self, alpha) -> list[np.ndarray]:
        if not isinstance(alpha, (list, tuple)) or len(alpha) != self.m:
            raise ValueError(f"alpha must be a list of {self.m} arrays (one per task)")
        return [check_array(f"alpha[{t}]", a, shape=(len(self.y[t]),)) for t, a in enumerate(alpha)]

    def V(self, alpha: Sequence[ArrayLike]) -> np.ndarray:
        """V = [X_1ᵀα_1 … X_mᵀα_m] (d × m)."""
        return np.stack([x.T @ a for x, a in zip(self.X, alpha, strict=True)], axis=1)

    def primal_point(self, alpha: Sequence[ArrayLike]) -> np.ndarray:
        """W(α) = ½ V C: the primal point of a dual point (MOCHA's w(α) = ∇R*(Xα))."""
        return 0.5 * self.V(self._alpha_check(alpha)) @ self.C

    def dual(self, alpha: Sequence[ArrayLike]) -> float:
        """D(α) = −Σ_t Σ_i ℓ*(−α_t^i) − ¼ tr(V C Vᵀ) (−inf outside the loss conjugates' domain)."""
        alpha = self._alpha_check(alpha)
        conj = sum(float(self._conj(a, y).sum()) for a, y in zip(alpha, self.y, strict=True))
        V = self.V(alpha)
        return -conj - 0.25 * float(np.trace(V @ self.C @ V.T))

    def duality_gap(self, W: np.ndarray, alpha: Sequence[ArrayLike]) -> float:
        """P(W) − D(α) ≥ 0 for every W and every feasible α (weak duality)."""
        return self.primal(W) - self.dual(alpha)

    def zero_alpha(self) -> list[np.ndarray]:
        """The all-zero dual point (one vector per task)."""
        return [np.zeros(len(v)) for v in self.y]

    # -- closed form
    def solve_exact(self) -> np.ndarray:
        """W* for the squared loss with Ω fixed: (blockdiag(X_tᵀX_t) + 2 A ⊗ I_d) vec(W) = vec([X_tᵀy_t])."""
        if self.loss != "squared":
            raise ValueError(f"solve_exact needs loss='squared', got {self.loss!r}")
        d, m = self.d, self.m
        H = 2 * np.kron(self.A, np.eye(d))  # column-major vec(W): block (t, t') = 2 A_tt' I_d
        b = np.zeros(d * m)
        for t, (x, y) in enumerate(zip(self.X, self.y, strict=True)):
            H[t * d : (t + 1) * d, t * d : (t + 1) * d] += x.T @ x
            b[t * d : (t + 1) * d] = x.T @ y
        return np.linalg.solve(H, b).reshape(m, d).T

    def solve_dual_exact(self) -> list[np.ndarray]:
        """α* for the squared loss: α*_t^i = y_t^i − w*_tᵀx_t^i (the optimality condition α = −ℓ'(w*ᵀx))."""
        W = self.solve_exact()
        return [y - x @ W[:, t] for t, (x, y) in enumerate(zip(self.X, self.y, strict=True))]

    def __repr__(self):
        ns = [len(v) for v in self.y]
        return (
            f"MultiTaskProblem(m={self.m}, d={self.d}, n_t={ns if len(set(ns)) > 1 else ns[0]}, "
            f"loss={self.loss!r}, lam1={self.lam1}, lam2={self.lam2})"
        )


def synthetic_tasks(
    m: int = 6,
    d: int = 5,
    n: int = 30,
    *,
    clusters: int = 2,
    spread: float = 0.1,
    noise: float = 0.1,
    loss: str = "squared",
    lam1: float = 0.1,
    lam2: float = 0.1,
    Omega: ArrayLike | None = None,
    seed: int = 0,
    gamma: float = 1.0,
) -> MultiTaskProblem:
    """m tasks in ``clusters`` groups: w_t = u_{c(t)} + spread·N(0, I/d); rows x ~ N(0, I/d) scaled to ‖x‖ ≤
    1; y = xᵀw_t + noise·N(0, 1) (squared) or sign(xᵀw_t + noise·N(0, 1)) (hinge losses). The known task
    structure (``.true_W``, ``.clusters``) is attached to the returned problem."""
    m = check_int("m", m, low=1)
    d = check_int("d", d, low=1)
    n = check_int("n", n, low=1)
    clusters = check_int("clusters", clusters, low=1, high=m)
    spread = check_nonnegative("spread", spread)
    noise = check_nonnegative("noise", noise)
    rng = np.random.default_rng(np.random.SeedSequence([check_int("seed", seed, low=0), 0x37C]))
    U = rng.normal(size=(d, clusters)) * 2.0 / np.sqrt(d)
    cl = np.arange(m) % clusters
    Wt = U[:, cl] + spread * rng.normal(size=(d, m)) / np.sqrt(d)
    X, y = [], []
    for t in range(m):
        x = rng.normal(size=(n, d)) / np.sqrt(d)
        x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
        z = x @ Wt[:, t] + noise * rng.normal(size=n)
        X.append(x)
        y.append(z if loss == "squared" else np.where(z >= 0, 1.0, -1.0))
    prob = MultiTaskProblem(X, y, loss=loss, lam1=lam1, lam2=lam2, Omega=Omega, gamma=gamma)
    prob.true_W, prob.clusters = Wt, cl
    return prob
