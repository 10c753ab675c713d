"""A member of the smooth (nonconvex) class built from PEP data, simulated by the engine: the lower side.

The PEP value of :mod:`afltheory.pep.core` is an upper bound; a lower bound needs a function that satisfies
the assumptions *everywhere*, run by the library's own engine. This module builds one.

**The sub-class.** Every worker has the same function f (σ_G = 0 ≤ any σ_G, so every instance is in the class
of any σ_G). Its SDP is the PEP of a single L-smooth f over the points the skeleton visits (two workers from
the same start point visit the same local iterates), with the interpolation conditions of Taylor, Hendrickx &
Glineur 2017 (Thm 3.10) between every pair of points and f(x_p) − f_* ≥ ‖∇f(x_p)‖²/(2L) at *every* point.

**The interpolant** (:class:`SmoothInterpolant`). f is L-smooth iff h = f + (L/2)‖·‖² is convex and
2L-smooth. From data (x_p, g_p, f_p) put y_p = g_p + L x_p, s_p = x_p/2 − g_p/(2L) and
a_p = ‖y_p‖²/(4L) − f_p − (L/2)‖x_p‖²; then
  h(x) = min_{λ ∈ simplex} L‖x − Sλ‖² − aᵀλ,   f(x) = h(x) − (L/2)‖x‖²,   ∇f(x) = L x − 2L Sλ*(x)
is the conjugate of ‖y‖²/(4L) + max_p(affine_p(y)) (a 1/(2L)-strongly convex function), so h is convex and
2L-smooth for *any* data: f is L-smooth by construction, whatever the solver's accuracy. When the data satisfy
the interpolation conditions, f(x_p) = f_p and ∇f(x_p) = g_p. Its infimum is exact: for fixed λ the minimum
over x is −L‖Sλ‖² − aᵀλ, concave in λ, so inf f = min_p (−L‖s_p‖² − a_p) = min_p (f_p − ‖g_p‖²/(2L)),
attained at x_p − g_p/L. The SDP's constraints f_p − f_* ≥ ‖g_p‖²/(2L) at every point say exactly
inf f ≥ f_*: the sub-class SDP is exact, and its value is attained by a true member.

**The lower bound** (:func:`interpolated_lower_bound`): solve the sub-class SDP, factor the Gram matrix into
coordinates (rank r), build f, compute Δ' = f(x_0) − inf f exactly, rescale to f̃(x) = α f(βx) with
α = Δ/Δ', β = √(Δ'/Δ) when Δ' > Δ (L is kept: αβ² = 1), and run ``simulate`` (no noise) with the library's
rule on the schedule. The simulated metric is a lower bound on the worst case over the class (a certified
member, not the SDP's numbers).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .. import _faults
from .._validation import check_int, check_nonnegative, check_positive
from ..functions import SmoothInterpolant, SmoothNonconvex
from ..problems.base import Constants, NoNoise, Problem

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.schedule import Schedule

__all__ = [
    "InterpolatedLowerBound",
    "InterpolatedProblem",
    "SmoothInterpolant",
    "interpolated_lower_bound",
]


class InterpolatedProblem(Problem):
    """M workers with f̃_i(x) = α f(βx) + αβ⟨c_i, x⟩, f a :class:`SmoothInterpolant` (αβ² = 1 keeps L) and
    tilts c_i (``tilts`` (M, d), Σ_i c_i = 0; None: all zero). Exact constants: L (the construction), σ_G =
    αβ max_i ‖c_i‖ (∇f̃_i − ∇f̃ = αβ c_i everywhere), f_* = α inf f (the tilts cancel in the mean), minimizer
    x_p* − g_p*/L (scaled)."""

    def __init__(
        self,
        interpolant: SmoothInterpolant,
        num_workers: int,
        alpha: float = 1.0,
        tilts: np.ndarray | None = None,
    ):
        self.f = interpolant
        self.num_workers = check_int("num_workers", num_workers, low=1)
        self.dim = interpolant.dim
        self.alpha = check_positive("alpha", alpha)
        self.beta = 1.0 / math.sqrt(self.alpha)
        if tilts is None:
            tilts = np.zeros((self.num_workers, self.dim))
        tilts = np.asarray(tilts, dtype=float)
        if tilts.shape != (self.num_workers, self.dim) or not np.all(np.isfinite(tilts)):
            raise ValueError(
                f"tilts must be a finite ({self.num_workers}, {self.dim}) array, got {tilts.shape}"
            )
        scale = max(1.0, float(np.abs(tilts).max()))
        if np.abs(tilts.sum(axis=0)).max() > 1e-9 * scale * self.num_workers:
            raise ValueError("tilts must sum to zero over the workers (f is then the mean of the f_i)")
        self.tilts = (tilts - tilts.mean(axis=0)) * self.alpha * self.beta  # gradient tilts, exact zero mean
        L = interpolant.L
        self.noise = NoNoise()
        self.constants = Constants(
            L=L,
            mu=-L,
            sigma_L=0.0,
            sigma_G=float(np.linalg.norm(self.tilts, axis=1).max()),
            f_star=self.alpha * interpolant.inf,
            x_star=interpolant.argmin / self.beta,
            certified=dict(L="upper", mu="lower", sigma_L="exact", sigma_G="exact", f_star="exact"),
        )

    def local_value(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        """f̃_i(x); x (..., d), broadcast against i."""
        x = np.asarray(x, dtype=float)
        i = self._check_worker(i)
        shape = np.broadcast_shapes(x.shape[:-1], np.shape(i))
        base = np.broadcast_to(self.alpha * self.f.value(self.beta * x), shape)
        xb = np.broadcast_to(x, shape + (self.dim,))
        return base + np.sum(self.tilts[np.broadcast_to(i, shape)] * xb, axis=-1)

    def local_grad(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        """∇f̃_i(x) = αβ (∇f(βx) + c_i); x (..., d), broadcast against i."""
        x = np.asarray(x, dtype=float)
        i = self._check_worker(i)
        shape = np.broadcast_shapes(x.shape[:-1], np.shape(i))
        g = self.alpha * self.beta * self.f.grad(self.beta * x)
        return np.broadcast_to(g, shape + (self.dim,)) + self.tilts[np.broadcast_to(i, shape)]


@dataclass(frozen=True)
class InterpolatedLowerBound:
    """Outcome of :func:`interpolated_lower_bound`.

    ``value``: the metric of the simulated instance (a lower bound on the class's worst case); ``sdp_value``:
    the sub-class SDP's value (attained up to solver accuracy); ``delta_actual``: f(x_0) − inf f of the
    unscaled interpolant (≤ Δ up to solver accuracy; the instance is rescaled when it exceeds Δ);
    ``alpha``: the scale applied; ``interpolation_error``: max relative |∇f(x_p) − g_p| over the data;
    ``fallbacks``: gradient evaluations that were not at a vertex (general QP); ``problem``/``x0``: the
    instance as run by ``simulate``."""

    value: float
    sdp_value: float
    sdp_status: str
    delta_actual: float
    alpha: float
    dim: int
    points: int
    interpolation_error: float
    fallbacks: int
    seconds: float
    problem: InterpolatedProblem = field(repr=False)
    x0: np.ndarray = field(repr=False)
    grad_norm_sq: np.ndarray = field(repr=False)
    method: str = (
        "same L-smooth f for every worker (σ_G = 0), exact SDP, explicit interpolant, engine simulate"
    )
    #: ``tilt``: f_i = f + ⟨c_i, ·⟩ (σ_G exact everywhere) instead of one shared f
    tilted: bool = False


def _canonical(key: tuple) -> tuple:
    """Drop the worker index of a local-iterate key: with one shared function the points coincide."""
    return key if key[0] != "y" else ("y",) + key[2:]


def _sym(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows of ½(a bᵀ + b aᵀ), flattened: a, b (R, n) -> (R, n²)."""
    o = 0.5 * (a[:, :, None] * b[:, None, :] + b[:, :, None] * a[:, None, :])
    return o.reshape(a.shape[0], -1)


def interpolated_lower_bound(
    algorithm: ServerRule,
    schedule: Schedule,
    *,
    L: float,
    sigma_G: float,
    delta: float,
    metric: str = "average",
    replicate: int = 0,
    max_points: int = 200,
    tilt: bool = False,
) -> InterpolatedLowerBound:
    """A lower bound on the worst case over the smooth nonconvex class (every f_i L-smooth, Assumption 3 with
    ``sigma_G``, f(x_0) − inf f ≤ ``delta``) of ``metric`` ("average", "min" or "last") on ``schedule``:
    the exact worst case over the shared-function sub-class, recovered as an explicit L-smooth function and
    run by ``simulate`` with ``algorithm`` (module docstring). ``max_points`` bounds the SDP (points =
    Gram − 1). ValueError beyond ``max_points``; RuntimeError when the solver returns no solution.
    ``tilt``: the larger sub-class f_i = f + ⟨c_i, ·⟩ with Σ c_i = 0 and ‖c_i‖ ≤ ``sigma_G`` (Assumption 3
    holds exactly everywhere); the workers' local iterates are then distinct points (a larger SDP)."""
    import cvxpy as cp
    from scipy import sparse

    from .. import simulate
    from ..anarchy import Replay
    from .base import run_skeleton, skeleton, solve_cvxpy

    L = check_positive("L", L)
    check_nonnegative("sigma_G", sigma_G)  # every instance here has σ_G = 0: valid for any σ_G ≥ 0
    delta = check_positive("delta", delta)
    if metric not in ("average", "min", "last"):
        raise ValueError(f"metric={metric!r} must be one of ('average', 'min', 'last')")
    max_points = check_int("max_points", max_points, low=1, high=2000)
    t0 = time.perf_counter()
    sk = skeleton(algorithm, schedule, replicate)
    T = sk.T
    need_last = metric in ("min", "last")
    M = sk.num_workers
    tilt = bool(tilt) and M > 1 and sigma_G > 0
    canon = (lambda k: k) if tilt else _canonical
    keys_all = {canon(k) for k in sk.eval_points(metric)} | {
        ("x", t) for t in range(T + 1 if need_last else T)
    }
    P = len(keys_all)
    if P > max_points:
        raise ValueError(
            f"the shared-function PEP has {P} points, above max_points={max_points} (allowed range [1, "
            f"{max_points}]); reduce T, K or the delays, or pass max_points={P} deliberately"
        )
    nc = M - 1 if tilt else 0  # c_0 … c_{M−2} in the basis; c_{M−1} = −Σ c_j
    n = 1 + P + nc
    index: dict = {}
    pts: list = []

    def tilt_vec(i):
        v = np.zeros(n)
        if tilt:
            if i < M - 1:
                v[1 + P + i] = 1.0
            else:
                v[1 + P :] = -1.0
        return v

    def grad(i, key, y):
        ck = canon(key)
        if ck not in index:
            index[ck] = len(pts)
            pts.append(np.asarray(y, dtype=float).copy())
        e = tilt_vec(int(i))
        e[1 + index[ck]] += 1.0
        return e

    x0 = np.zeros(n)
    x0[0] = 1.0
    xs = run_skeleton(sk, x0, grad)
    n_metric = T + 1 if need_last else T
    mg = [grad(0, ("x", t), xs[t]) - tilt_vec(0) for t in range(n_metric)]  # ∇f = mean of the ∇f_i
    if len(pts) != P:
        raise AssertionError(f"the skeleton visited {len(pts)} points, {P} expected")
    X = np.array(pts)  # (P, n) coefficients of the points
    Gc = np.eye(n)[1 : 1 + P]  # gradients of f
    f0 = index[("x", 0)]
    # interpolation: f_p − f_j ≥ q(x_p − x_j, g_p, g_j), the L-smooth class's inequality (all ordered pairs)
    ii, jj = np.nonzero(~np.eye(P, dtype=bool))
    AG = sparse.csr_matrix(SmoothNonconvex(L).rhs(X[ii] - X[jj], Gc[ii], Gc[jj], _sym))
    R = np.arange(len(ii))
    AF = sparse.csr_matrix(
        (np.r_[-np.ones(len(ii)), np.ones(len(ii))], (np.r_[R, R], np.r_[ii, jj])), shape=(len(ii), P)
    )
    # f_p − f_* ≥ ‖g_p‖²/(2L) at every point
    BG = sparse.csr_matrix(_sym(Gc, Gc) / (2 * L))
    G = cp.Variable((n, n), PSD=True)
    F = cp.Variable(P)
    fs = cp.Variable()
    g_vec = cp.vec(G, order="C")
    cons = [
        AG @ g_vec + AF @ F <= 0,
        BG @ g_vec - F + fs <= 0,
        F[f0] - fs <= delta,
    ]
    Cv = np.array([tilt_vec(i) for i in range(M)]) if tilt else None
    if tilt:  # Assumption 3: ‖∇f_i − ∇f‖ = ‖c_i‖ ≤ σ_G
        cons += [cp.sum(cp.multiply(np.outer(v, v), G)) <= sigma_G**2 for v in Cv]
    sq = [cp.sum(cp.multiply(np.outer(v, v), G)) for v in mg]
    if metric == "average":
        obj = sum(sq) / T
    elif metric == "last":
        obj = sq[T]
    else:
        tau = cp.Variable()
        cons += [tau <= s for s in sq]
        obj = tau
    prob = cp.Problem(cp.Maximize(obj), cons)
    status = solve_cvxpy(prob)
    if G.value is None:
        raise RuntimeError(f"the shared-function SDP failed (status {status})")
    # coordinates: G = BᵀB
    w, V = np.linalg.eigh((G.value + G.value.T) / 2)
    keep = w > 1e-10 * max(1.0, float(w.max()))
    B = (V[:, keep] * np.sqrt(w[keep])).T  # (r, n)
    Xc, Gcd = X @ B.T, Gc @ B.T
    fg = _faults.get(_faults.FaultPoint.PEP_INTERPOLANT)  # None unless a test-only fault is injected
    f = SmoothInterpolant(Xc, Gcd if fg is None else fg(Gcd), np.asarray(F.value, dtype=float), L)
    x0c = B[:, 0].copy()
    f_x0 = f.value_grad(x0c)[0]
    d_act = f_x0 - f.inf
    alpha = min(1.0, delta / d_act) if d_act > 0 else 1.0
    gerr = max(float(np.linalg.norm(f.value_grad(Xc[p])[1] - Gcd[p])) for p in range(P)) / max(
        1e-300, float(np.linalg.norm(Gcd, axis=1).max())
    )
    tilts = None
    if Cv is not None:  # the solver may overshoot ‖c_i‖ ≤ σ_G by its tolerance: shrink the tilts onto it
        tilts = Cv @ B.T
        tilts -= tilts.mean(axis=0)
        big = math.sqrt(alpha) * float(np.linalg.norm(tilts, axis=1).max())  # αβ = √α
        if big > sigma_G:
            tilts *= sigma_G / big * (1 - 1e-12)
    prob_i = InterpolatedProblem(f, sk.num_workers, alpha, tilts)
    if prob_i.constants.sigma_G > sigma_G:
        raise AssertionError(f"instance sigma_G={prob_i.constants.sigma_G} > {sigma_G}")
    x0s = x0c / prob_i.beta
    tr = simulate(prob_i, algorithm, Replay(schedule.replicate(replicate)), rounds=T, replicates=1, x0=x0s)
    gn = np.asarray(tr.grad_norm_sq)[0]
    if metric == "average":
        val = float(gn[:T].mean())
    elif metric == "min":
        val = float(gn[: T + 1].min())
    else:
        val = float(gn[T])
    return InterpolatedLowerBound(
        value=val,
        sdp_value=float(prob.value),
        sdp_status=status,
        delta_actual=float(d_act),
        alpha=float(alpha),
        dim=int(B.shape[0]),
        points=P,
        interpolation_error=float(gerr),
        fallbacks=f.fallbacks,
        seconds=time.perf_counter() - t0,
        problem=prob_i,
        x0=x0s,
        grad_norm_sq=gn,
        method=(
            "f_i = f + ⟨c_i, ·⟩, f L-smooth, ‖c_i‖ ≤ σ_G, exact SDP, explicit interpolant, engine simulate"
            if tilt
            else InterpolatedLowerBound.method
        ),
        tilted=tilt,
    )
