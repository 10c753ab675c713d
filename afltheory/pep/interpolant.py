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
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_int, check_nonnegative, check_positive
from ..problems.base import Constants, NoNoise, Problem

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.schedule import Schedule

__all__ = ["InterpolatedLowerBound", "InterpolatedProblem", "SmoothInterpolant", "interpolated_lower_bound"]

#: a vertex λ = e_p is accepted as the minimizer when its KKT residual is below this (relative)
KKT_TOL = 1e-11


class SmoothInterpolant:
    """The L-smooth function f(x) = min_{λ∈simplex} L‖x − Sλ‖² − aᵀλ − (L/2)‖x‖² built from data points
    ``X`` (P, d), gradients ``grads`` (P, d) and values ``values`` (P,) (module docstring). L-smooth for any
    data; interpolates the data when they satisfy the smooth interpolation conditions."""

    def __init__(self, X: np.ndarray, grads: np.ndarray, values: np.ndarray, L: float):
        X, Gr, F = (np.asarray(a, dtype=float) for a in (X, grads, values))
        if X.ndim != 2 or Gr.shape != X.shape or F.shape != (X.shape[0],) or X.shape[0] < 1:
            raise ValueError(
                f"X {X.shape}, grads {Gr.shape}, values {F.shape} must be (P, d), (P, d), (P,) with P >= 1"
            )
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Gr)) and np.all(np.isfinite(F))):
            raise ValueError("X, grads and values must be finite")
        self.L = check_positive("L", L)
        self.dim = X.shape[1]
        self.S = X / 2 - Gr / (2 * self.L)
        Y = Gr + self.L * X
        self.a = np.sum(Y * Y, axis=1) / (4 * self.L) - F - self.L / 2 * np.sum(X * X, axis=1)
        self.SS = self.S @ self.S.T
        self.fallbacks = 0  # evaluations that needed the general QP (not a vertex)
        low = -self.L * np.sum(self.S * self.S, axis=1) - self.a
        self.inf_index = int(np.argmin(low))
        #: inf f, exact (attained at ``argmin``)
        self.inf = float(low[self.inf_index])
        #: a minimizer: x_p − g_p/L for the minimizing p
        self.argmin = 2 * self.S[self.inf_index]

    def _weights(self, x: np.ndarray) -> np.ndarray:
        """λ*(x): the minimizer over the simplex of q(λ) = L‖x − Sλ‖² − aᵀλ."""
        L, S, a = self.L, self.S, self.a
        Sx = S @ x
        xx = float(x @ x)
        qv = L * (xx - 2 * Sx + np.diag(self.SS)) - a  # q(e_p)
        p = int(np.argmin(qv))
        grad = 2 * L * (self.SS[p] - Sx) - a  # ∇q(e_p)
        scale = max(1.0, float(np.abs(grad).max()), abs(float(qv[p])))
        if float(np.min(grad - grad[p])) >= -KKT_TOL * scale:
            lam = np.zeros(len(a))
            lam[p] = 1.0
            return lam
        self.fallbacks += 1
        return self._qp(x, Sx, p)

    def _qp(self, x, Sx, p0) -> np.ndarray:
        """Exact active-set solve of min L‖x − Sλ‖² − aᵀλ over the simplex (small P), started at e_{p0}."""
        L, a, Q = self.L, self.a, self.SS
        P = len(a)
        c = -2 * L * Sx - a  # q(λ) = L λᵀQλ + cᵀλ + L‖x‖²
        active = [p0]
        lam = np.zeros(P)
        lam[p0] = 1.0
        for _ in range(20 * P + 100):
            A = np.array(active)
            k = len(A)
            # KKT on the face: 2L Q_AA λ_A + c_A + ν 1 = 0, 1ᵀλ_A = 1
            K = np.zeros((k + 1, k + 1))
            K[:k, :k] = 2 * L * Q[np.ix_(A, A)]
            K[:k, k] = 1.0
            K[k, :k] = 1.0
            rhs = np.concatenate([-c[A], [1.0]])
            sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
            z = sol[:k]
            if np.all(z >= -1e-15):
                lam = np.zeros(P)
                lam[A] = np.maximum(z, 0.0)
                lam /= lam.sum()
                g = 2 * L * (Q @ lam) + c
                nu = float(g[A] @ lam[A])
                viol = g - nu
                j = int(np.argmin(viol))
                if viol[j] >= -1e-13 * max(1.0, float(np.abs(g).max())) or j in active:
                    return lam
                active.append(j)
                continue
            # step from lam toward z until a coordinate hits zero, then drop it
            cur = lam[A]
            d = z - cur
            neg = d < 0
            steps = np.where(neg, cur / np.where(neg, -d, 1.0), np.inf)
            s = float(min(1.0, steps.min()))
            new = cur + s * d
            drop = int(np.argmin(np.where(neg, steps, np.inf)))
            new[drop] = 0.0
            lam = np.zeros(P)
            lam[A] = np.maximum(new, 0.0)
            lam /= lam.sum()
            active = [int(i) for i in A if lam[i] > 0]
        return lam

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(f(x), ∇f(x)) at one point x (d,)."""
        x = np.asarray(x, dtype=float)
        lam = self._weights(x)
        c = self.S.T @ lam
        r = x - c
        h = self.L * float(r @ r) - float(self.a @ lam)
        return h - self.L / 2 * float(x @ x), self.L * x - 2 * self.L * c

    def value(self, x: np.ndarray) -> np.ndarray:
        """f(x) for x (..., d)."""
        x = np.asarray(x, dtype=float)
        flat = x.reshape(-1, self.dim)
        return np.array([self.value_grad(v)[0] for v in flat]).reshape(x.shape[:-1])

    def grad(self, x: np.ndarray) -> np.ndarray:
        """∇f(x) for x (..., d)."""
        x = np.asarray(x, dtype=float)
        flat = x.reshape(-1, self.dim)
        return np.array([self.value_grad(v)[1] for v in flat]).reshape(x.shape)


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
    from cvxpy.error import SolverError
    from scipy import sparse

    from .. import simulate
    from ..anarchy import Replay
    from .core import RETRY_SETTINGS, SOLVER_SETTINGS, _run_skeleton, skeleton

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
    xs = _run_skeleton(sk, x0, grad)
    n_metric = T + 1 if need_last else T
    mg = [grad(0, ("x", t), xs[t]) - tilt_vec(0) for t in range(n_metric)]  # ∇f = mean of the ∇f_i
    if len(pts) != P:
        raise AssertionError(f"the skeleton visited {len(pts)} points, {P} expected")
    X = np.array(pts)  # (P, n) coefficients of the points
    Gc = np.eye(n)[1 : 1 + P]  # gradients of f
    f0 = index[("x", 0)]
    # interpolation: f_p − f_j ≥ −L/4‖dx‖² + ½⟨g_p + g_j, dx⟩ + 1/(4L)‖dg‖²   (all ordered pairs)
    ii, jj = np.nonzero(~np.eye(P, dtype=bool))
    dx, dg, sg = X[ii] - X[jj], Gc[ii] - Gc[jj], Gc[ii] + Gc[jj]
    AG = sparse.csr_matrix(-L / 4 * _sym(dx, dx) + 0.5 * _sym(sg, dx) + _sym(dg, dg) / (4 * L))
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
    status = "unknown"
    for settings in (SOLVER_SETTINGS, RETRY_SETTINGS):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                prob.solve(solver="CLARABEL", **settings)
            except SolverError:
                status = "solver_error"
                continue
        status = str(prob.status)
        if status == "optimal":
            break
    if G.value is None:
        raise RuntimeError(f"the shared-function SDP failed (status {status})")
    # coordinates: G = BᵀB
    w, V = np.linalg.eigh((G.value + G.value.T) / 2)
    keep = w > 1e-10 * max(1.0, float(w.max()))
    B = (V[:, keep] * np.sqrt(w[keep])).T  # (r, n)
    Xc, Gcd = X @ B.T, Gc @ B.T
    f = SmoothInterpolant(Xc, Gcd, np.asarray(F.value, dtype=float), L)
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
