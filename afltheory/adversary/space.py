"""Assumption classes as parameter boxes: every point of [0, 1]^p decodes to an instance that satisfies the
claim's assumptions by construction, with its constants computed exactly from its arrays.

A candidate is a quadratic federated problem f_i(x) = ½ (x − c_i)ᵀ A_i (x − c_i) (Assumption 1 with L = max
λ_max(A_i), exact), additive Gaussian noise with covariance Σ_i (σ_L² = max_i tr Σ_i, exact), centres with
σ_G = max_i ‖∇f_i − ∇f‖ (exact for a shared Hessian; for per-worker Hessians the certified ball bound of
``HeterogeneousCurvatureQuadratic`` on a ball around x*, see ``certified_constants``), a start x_0 with f(x_0)
− f* ≤ Δ, an arrival law, a delay pmf on {0..τ}, a local-step pmf on {1..K_max} and step sizes (η, η_L) chosen
inside the theorem's conditions. Because the dynamics are linear, scaling (x_0 − x*, c_i − x*, noise std)
jointly by c scales both sides of every bound by c²: the class maxima (σ_L, σ_G, Δ) fix the scale and every
candidate is rescaled (c ≤ 1) so that its exact constants stay within them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._validation import check_int, check_positive, check_real

__all__ = ["AssumptionClass", "Structure", "ARRIVAL_KINDS", "box_of"]

ARRIVAL_KINDS = ("uniform", "biased", "fixed", "cyclic", "schedule", "periodic")
HESSIANS = ("shared", "per_worker")
NOISES = ("isotropic", "diagonal")


@dataclass(frozen=True)
class AssumptionClass:
    """The box the adversary searches. ``num_workers`` M, ``dim`` d, ``max_delay`` τ, ``K_max``: the largest
    values a candidate may use (its pmfs may put zero mass at the top); ``rounds``: T_max (the ratio is
    maximized over every horizon T in [``min_rounds``, T_max] of one run); ``L``/``mu``: Hessian spectra in
    [mu, L]; ``sigma_L``, ``sigma_G``, ``Delta``: maxima of the constants (``min_gap``: f(x_0) − f* is at
    least this fraction of Delta before the joint rescaling, e.g. 1 forbids starting near x*); ``m``: arrivals
    per round (None: the adversary picks m in 1..M; Theorem 4, whose τ bounds the memory slots' staleness,
    takes m < M with "cyclic" round-robin arrivals — staleness ≤ the largest delay + ⌈M/m⌉ − 1 — or
    "periodic" searched sequences of sets of period P in [⌈M/m⌉, ⌈M/m⌉ + 3] covering every worker —
    staleness ≤ the largest delay + the longest wait between two arrivals of a worker − 1); ``arrivals``:
    allowed arrival laws; ``hessian``: "shared"
    (one A, σ_G exact) or "per_worker" (A_i, client drift; σ_G certified on a ball); ``rotate``: dense
    Hessians (Cayley rotations);
    ``noise``: "isotropic" or "diagonal" (anisotropic, per-worker trace); ``eta_L_decades``: η_L ranges over
    [cap·10^−decades, cap], cap the largest η_L the η-free conditions allow (1/L if they allow any)."""

    dim: int = 3
    num_workers: int = 5
    max_delay: int = 2
    K_max: int = 3
    rounds: int = 200
    min_rounds: int = 10
    L: float = 1.0
    mu: float = 0.05
    sigma_L: float = 1.0
    sigma_G: float = 1.0
    Delta: float = 1.0
    m: int | None = None
    arrivals: tuple = ("uniform",)
    hessian: str = "shared"
    rotate: bool = False
    noise: str = "diagonal"
    eta_L_decades: float = 4.0
    radius_factor: float = 2.0
    k_per_worker: bool = False
    min_gap: float = 0.0

    def __post_init__(self):
        check_int("dim", self.dim, low=1, high=20)
        M = check_int("num_workers", self.num_workers, low=1, high=20)
        check_int("max_delay", self.max_delay, low=0, high=50)
        check_int("K_max", self.K_max, low=1, high=64)
        T = check_int("rounds", self.rounds, low=1)
        check_int("min_rounds", self.min_rounds, low=1, high=T)
        L = check_positive("L", self.L)
        mu = check_positive("mu", self.mu)
        if mu > L:
            raise ValueError(f"mu={mu} must be <= L={L}")
        for name in ("sigma_L", "sigma_G", "Delta"):
            check_real(name, getattr(self, name), low=0.0)
        if self.sigma_G > 0 and M < 2:
            raise ValueError(
                f"sigma_G={self.sigma_G} > 0 with num_workers={M}: the class is empty (one "
                "worker has ∇f_1 = ∇f, no heterogeneity); use num_workers >= 2 or sigma_G=0"
            )
        if self.Delta <= 0 and self.sigma_L <= 0 and self.sigma_G <= 0:
            raise ValueError(
                "Delta, sigma_L and sigma_G are all 0: every candidate sits at x* with no noise "
                "(the class is trivial); give at least one of them > 0"
            )
        if self.m is not None:
            check_int("m", self.m, low=1, high=M)
        arr = tuple(self.arrivals) if isinstance(self.arrivals, (tuple, list)) else ()
        if not arr or any(not isinstance(a, str) or a not in ARRIVAL_KINDS for a in arr):
            raise ValueError(f"arrivals={self.arrivals!r} must be a non-empty subset of {ARRIVAL_KINDS}")
        object.__setattr__(self, "arrivals", arr)
        if not isinstance(self.hessian, str) or self.hessian not in HESSIANS:
            raise ValueError(f"hessian={self.hessian!r} must be one of {HESSIANS}")
        if not isinstance(self.noise, str) or self.noise not in NOISES:
            raise ValueError(f"noise={self.noise!r} must be one of {NOISES}")
        check_positive("eta_L_decades", self.eta_L_decades)
        check_real("radius_factor", self.radius_factor, low=1.0)
        check_real("min_gap", self.min_gap, low=0.0, high=1.0)
        if self.min_gap > 0 and self.Delta <= 0:
            raise ValueError(f"min_gap={self.min_gap} > 0 needs Delta > 0 (got Delta={self.Delta})")

    def replace(self, **kw: Any) -> AssumptionClass:
        """A copy with the fields ``kw`` replaced (validated again)."""
        return replace(self, **kw)

    def isolate(self, group: str) -> AssumptionClass:
        """The sub-class where only one group of bound terms can be non-zero: "transient" (σ_L = σ_G = 0),
        "sigma_L" (Δ = σ_G = 0: start at x*, homogeneous workers) or "sigma_G" (Δ = σ_L = 0). The worst ratio
        there is the tightness of that group of terms."""
        keep = {"transient": "Delta", "sigma_L": "sigma_L", "sigma_G": "sigma_G"}
        if group not in keep:
            raise ValueError(f"group={group!r} must be one of {sorted(keep)}")
        zero = {k: 0.0 for k in ("Delta", "sigma_L", "sigma_G") if k != keep[group]}
        if getattr(self, keep[group]) <= 0:
            raise ValueError(
                f"{keep[group]}={getattr(self, keep[group])}: isolating "
                f"{group!r} leaves an empty class (every term is 0)"
            )
        return replace(self, min_gap=0.0 if group != "transient" else self.min_gap, **zero)

    def to_dict(self) -> dict:
        """The class as a JSON-safe dict (tuples as lists)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


#: the arrival laws the batched evaluator searches for an "arbitrary" class (any sets of m of M); with a τ
#: that bounds the memory slots' staleness (Theorem 4) only the laws that keep it bounded
_ARBITRARY = ("uniform", "biased", "fixed", "cyclic", "schedule")
_ARBITRARY_BOUNDED = ("uniform", "cyclic", "periodic")


def box_of(aclass: Any, *, bounded_staleness: bool = False, **fields: Any) -> AssumptionClass:
    """The box the batched search explores, derived from a claim's ``claims.assumption_class.AssumptionClass``
    (the one class of a claim): its arrival process (full or m of M uniformly: "uniform"; round robin:
    "cyclic"; arbitrary: every law the evaluator represents, or with ``bounded_staleness`` those keeping the
    memory slots' staleness bounded), its noise (none: σ_L = 0) and heterogeneity (iid: σ_G = 0), its delay
    and local-step bounds (capped at the box's defaults τ ≤ 2, K ≤ 3); open sizes take the box's caps (the
    scaling search follows them further). ``fields``: further box fields (caps, ``rounds``, ...)."""
    kind = aclass.arrivals.kind
    if kind in ("full", "uniform"):
        arrivals: tuple = ("uniform",)
    elif kind == "cyclic":
        arrivals = ("cyclic",)
    else:
        arrivals = _ARBITRARY_BOUNDED if bounded_staleness else _ARBITRARY
    kw: dict = {"arrivals": arrivals}
    if aclass.noise.kind == "none":
        kw["sigma_L"] = 0.0
    if aclass.heterogeneity.kind == "iid":
        kw["sigma_G"] = 0.0
    base = AssumptionClass()
    tau = getattr(aclass.delays, "tau", None)
    if tau is not None:
        kw["max_delay"] = min(base.max_delay, int(tau))
    if aclass.local_steps.K_max is not None:
        kw["K_max"] = min(base.K_max, int(aclass.local_steps.K_max))
    kw.update(fields)
    return AssumptionClass(**kw)


@dataclass(frozen=True)
class Structure:
    """The discrete part of a candidate (fixed within one restart): m, arrival law, and claim extras (e.g. the
    corollaries' K, T, L)."""

    m: int
    arrivals: str
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        check_int("m", self.m, low=1)
        if not isinstance(self.arrivals, str) or self.arrivals not in ARRIVAL_KINDS:
            raise ValueError(f"arrivals={self.arrivals!r} must be one of {ARRIVAL_KINDS}")
        if not isinstance(self.extra, dict):
            raise ValueError(f"extra={self.extra!r} must be a dict")


# ----------------------------------------------------------------------------------------------- decoding
class Reader:
    """Hands out consecutive columns of a (S, p) parameter block by name (so a layout is written once)."""

    def __init__(self, U=None):
        self.U = U
        self.pos = 0
        self.names: list[tuple[str, int]] = []

    def take(self, name, k):
        self.names.append((name, k))
        a = None if self.U is None else self.U[:, self.pos : self.pos + k]
        self.pos += k
        return a


def dead_zone(u, z=0.05):
    """[0, 1] → [0, 1] with [0, z] mapped to exactly 0 (so the search can switch a quantity off)."""
    return np.clip((u - z) / (1 - z), 0.0, 1.0)


def pmf_from(u, z=0.25):
    """(S, k) → pmfs: weights max(0, u − z) normalized; all-zero rows put mass 1 on the first entry. Exact
    zeros let the search shrink a support (the largest delay / K with mass is what the theorem's τ / K_max
    see)."""
    w = np.clip(u - z, 0.0, None)
    s = w.sum(axis=1, keepdims=True)
    first = np.zeros_like(w)
    first[:, 0] = 1.0
    return np.where(s > 0, w / np.where(s > 0, s, 1.0), first)


def cayley(params, d):
    """Orthogonal (S, d, d) from d(d−1)/2 parameters in [0, 1] (Cayley transform of a skew matrix)."""
    S = params.shape[0]
    A = np.zeros((S, d, d))
    iu = np.triu_indices(d, 1)
    A[:, iu[0], iu[1]] = 2.0 * (2 * params - 1)
    A = A - np.swapaxes(A, 1, 2)
    I = np.eye(d)
    return np.linalg.solve(I + A, I - A)


def decode_problem(cls: AssumptionClass, st: Structure, r: Reader):
    """Hessians (S, M, d, d), centres (S, M, d) with x* = 0, noise covariances (S, M, d, d), x0 (S, d): the
    problem part of a candidate, before the joint rescaling (see ``rescale``)."""
    d, M = cls.dim, cls.num_workers
    nH = 1 if cls.hessian == "shared" else M
    spec = r.take("spectrum", nH * d)
    rot = r.take("rotation", nH * (d * (d - 1) // 2)) if (cls.rotate and d > 1) else None
    cen = r.take("centres", M * d)
    nshape = r.take("noise_shape", d) if cls.noise == "diagonal" else None
    ntr = r.take("noise_trace", M)
    x0d = r.take("x0_direction", d)
    sc = r.take("scales", 3)  # σ_L, σ_G, Δ fractions
    if r.U is None:
        return None
    S = r.U.shape[0]
    lam = cls.mu * (cls.L / cls.mu) ** spec.reshape(S, nH, d)
    H = np.zeros((S, nH, d, d))
    H[:, :, np.arange(d), np.arange(d)] = lam
    if rot is not None:
        k = d * (d - 1) // 2
        Q = cayley(rot.reshape(S * nH, k), d).reshape(S, nH, d, d)
        H = Q @ H @ np.swapaxes(Q, -1, -2)
        H = 0.5 * (H + np.swapaxes(H, -1, -2))
    H = np.broadcast_to(H, (S, M, d, d)).copy()
    Hbar = H.mean(axis=1)
    v = 2 * cen.reshape(S, M, d) - 1
    # x* = 0: Σ_i A_i c_i = 0. Shared A: centre the c_i; per-worker: subtract Ā⁻¹ mean_i A_i c_i from every
    # c_i
    Ac = np.einsum("smij,smj->si", H, v) / M
    v = v - np.linalg.solve(Hbar, Ac[..., None])[..., 0][:, None, :]
    gdev = np.einsum("smij,smj->smi", H, v)  # ∇f_i(x*) = −A_i c_i (x* = 0)
    gn = np.linalg.norm(gdev, axis=2).max(axis=1)
    sL, sG, sD = dead_zone(sc[:, 0]), dead_zone(sc[:, 1]), dead_zone(sc[:, 2]) ** 3
    sD = cls.min_gap + (1 - cls.min_gap) * sD
    big = gn > 1e-8
    C = v * np.where(big, sG * cls.sigma_G / np.where(big, gn, 1.0), 0.0)[:, None, None]
    C = C - np.linalg.solve(Hbar, (np.einsum("smij,smj->si", H, C) / M)[..., None])[..., 0][:, None, :]
    if cls.noise == "diagonal":
        shape = nshape + 1e-3
        shape = shape / shape.sum(axis=1, keepdims=True)
    else:
        shape = np.full((S, d), 1.0 / d)
    # per-worker trace; the largest may be < σ_L²
    tr = ((sL * cls.sigma_L) ** 2)[:, None] * (0.05 + 0.95 * ntr)
    covs = np.zeros((S, M, d, d))
    covs[:, :, np.arange(d), np.arange(d)] = tr[:, :, None] * shape[:, None, :]
    u = 2 * x0d - 1
    u = np.where(np.linalg.norm(u, axis=1, keepdims=True) > 1e-12, u, 1.0)
    q = 0.5 * np.einsum("si,sij,sj->s", u, Hbar, u)
    x0 = u * np.sqrt(sD * cls.Delta / q)[:, None]
    return H, C, covs, x0


def certified_constants(cls: AssumptionClass, H, C, covs, x0):
    """Exact constants of each candidate (x* = 0): L, σ_L, σ_G (shared Hessian: max_i‖A c_i‖ exactly;
    per-worker: max_i(‖A_i − Ā‖·ρ + ‖A_i c_i‖), the ball bound with ρ = radius_factor·(‖x0‖ + 2 max_i‖c_i‖) —
    noiseless local GD from a point of the ball stays within ‖x0‖ + 2‖c_i‖ of x*; noise can leave it, see
    docs/adversary.md), Δ = f(x0) − f*, and ρ."""
    Hbar = H.mean(axis=1)
    L = np.linalg.eigvalsh(H)[..., -1].max(axis=1)
    sL = np.sqrt(np.trace(covs, axis1=2, axis2=3).max(axis=1))
    g0 = np.linalg.norm(np.einsum("smij,smj->smi", H, C), axis=2)  # ‖∇f_i(x*)‖
    reach = np.linalg.norm(x0, axis=1) + 2 * np.linalg.norm(C, axis=2).max(axis=1)
    rho = np.maximum(cls.radius_factor * reach, 1e-12)
    if cls.hessian == "shared":
        sG = g0.max(axis=1)
    else:
        dev = np.abs(np.linalg.eigvalsh(H - Hbar[:, None])).max(axis=2)  # ‖A_i − Ā‖₂
        sG = (dev * rho[:, None] + g0).max(axis=1)
    D = 0.5 * np.einsum("si,sij,sj->s", x0, Hbar, x0)
    return L, sL, sG, D, rho


def rescale(cls: AssumptionClass, H, C, covs, x0):
    """Jointly scale (C, x0, noise std) by c ≤ 1 so that σ_L ≤ cls.sigma_L, σ_G ≤ cls.sigma_G, Δ ≤
    cls.Delta."""
    _, sL, sG, D, _ = certified_constants(cls, H, C, covs, x0)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.minimum.reduce(
            [
                np.ones_like(sL),
                np.where(sL > 0, cls.sigma_L / sL, np.inf),
                np.where(sG > 0, cls.sigma_G / sG, np.inf),
                np.where(D > 0, np.sqrt(cls.Delta / D), np.inf),
            ]
        )
    c = np.where(np.isfinite(c), c, 1.0) * (1 - 1e-12)
    return C * c[:, None, None], covs * (c * c)[:, None, None, None], x0 * c[:, None]
