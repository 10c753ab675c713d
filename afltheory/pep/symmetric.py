"""Orbit-reduced PEP: interchangeable workers share one Gram block (Colla & Hendrickx 2024).

Two workers are *interchangeable* on a skeleton when swapping them maps the schedule to itself: they arrive in
the same rounds with the same delay, local steps and weight (and warm-start K). Swapping them also maps the
function class (every f_i L-smooth, or μ-strongly convex and L-smooth; Assumption 3 at the server iterates),
the initial condition and the metric to themselves, so the SDP of :func:`afltheory.pep.core.worst_case`
(``heterogeneity="server"``) is invariant under the group Π_c Sym(C_c) of permutations within each class C_c.
The SDP is convex, so averaging an optimal solution over the group gives an optimal *invariant* solution:
restricting to invariant solutions loses nothing (Colla & Hendrickx, "Exploiting agent symmetries for
performance analysis of distributed optimization methods", 2024, make the same argument for decentralized
methods with equivalent agents).

An invariant Gram matrix is block-diagonalized by the isotypic decomposition of the permutation action. Write
every worker-i vector of class c (its gradients, its local iterates) as v_i = v̄_c + u_i with v̄_c the class
mean and Σ_{i∈C_c} u_i = 0. Invariance forces ⟨u_i, anything invariant⟩ = 0, ⟨u_i, u_j'⟩ = 0 across classes,
and ⟨u_{i,a}, u_{i,b}⟩ = D_c[a, b], ⟨u_{i,a}, u_{j,b}⟩ = −D_c[a, b]/(n_c − 1) for i ≠ j in C_c. Conversely any
PSD "mean" Gram (x_0 and the class means) and PSD D_c (q_c × q_c) are realized by vectors: factor both and put
the deviation of worker i along s_i ⊗ (factor of D_c), s_1 … s_{n_c} the vertices of a regular simplex
(‖s_i‖ = 1, ⟨s_i, s_j⟩ = −1/(n_c − 1)). So the SDP over one (1 + M·T + …)-dimensional Gram matrix becomes one
over a (1 + Σ_c q_c)-dimensional mean Gram plus one q_c-dimensional block per class with n_c ≥ 2, q_c the
number of gradients a single worker of the class has; the interpolation and heterogeneity constraints are
imposed for one representative per class (the others are their images). The number of workers in a class
enters only as a coefficient: the size does not grow with it.

Server iterates are invariant (a class arrives as a whole, so Σ u_i cancels in the aggregate), which is how
the skeleton stays one definition (``base.run_skeleton``) evaluated over the vectors below. x_* (when
present)
is placed at the origin (the classes are translation invariant).

The SDP is built directly in cvxpy (dense coefficient arrays, one vector constraint per class; no PEPit) and
solved by Clarabel; the value reported is the dual objective bᵀλ, certified under the same rule as
``worst_case`` (status optimal, relative gap ≤ ``GAP_TOL``). With every class of size one (``reduce=False``)
it is an independent implementation of the unreduced PEP (tests compare both with the PEPit formulation).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_alloc, check_int, check_nonnegative
from .base import (
    MAX_GRAM,
    Instance,
    PEPResult,
    PEPSizeError,
    Skeleton,
    check_inputs,
    estimate_seconds,
    has_x_star,
    needs_last,
    run_skeleton,
    skeleton,
    solve_cvxpy,
)

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.schedule import Schedule
    from ..functions import FunctionClass

__all__ = ["CUT_TOL", "reduced_sizes", "reduced_worst_case", "worker_classes"]

#: constraint generation stops when no omitted interpolation inequality is violated by more than CUT_TOL · L Δ
CUT_TOL = 1e-7


def worker_classes(sk: Skeleton, reduce: bool = True) -> list[tuple[int, ...]]:
    """The classes of interchangeable workers of ``sk`` (identical arrival histories: rounds, delays, local
    steps, weights, warm-start K), sorted; every worker alone when ``reduce`` is False."""
    if not reduce:
        return [(i,) for i in range(sk.num_workers)]
    hist: dict = {}
    for i in range(sk.num_workers):
        h = [int(sk.init_K[i]) if (sk.memory and sk.warm_start) else 0]
        for t in range(sk.T):
            js = np.nonzero(sk.workers[t] == i)[0]
            h.append(
                tuple(sorted((int(sk.delays[t, j]), int(sk.K[t, j]), float(sk.weights[t, j])) for j in js))
            )
        hist.setdefault(tuple(h), []).append(i)
    return sorted(tuple(v) for v in hist.values())


def reduced_sizes(
    sk: Skeleton,
    metric: str = "average",
    gap: str = "f_star",
    mu: FunctionClass | float | None = None,
    decrease_weight: float = 0.0,
    reduce: bool = True,
) -> tuple[int, tuple[int, ...]]:
    """(n0, (q_c, …)): the mean Gram dimension and the deviation blocks (classes with ≥ 2 workers)."""
    classes = worker_classes(sk, reduce)
    q = _class_points(sk, classes, metric, gap, mu, decrease_weight)
    star = has_x_star(mu, gap, metric)
    return 1 + sum(q) - (1 if star else 0), tuple(qc for qc, c in zip(q, classes, strict=True) if len(c) > 1)


def _class_points(sk, classes, metric, gap, mu, decrease_weight) -> list[int]:
    """Points (= gradients) of one worker of each class: server iterates, its local iterates, x_*."""
    keys = sk.eval_points(metric, gap, last=decrease_weight != 0)
    server = sum(1 for k in keys if k[0] == "x")
    star = has_x_star(mu, gap, metric)
    return [
        server + sum(1 for k in keys if k[0] == "y" and k[1] == c[0]) + (1 if star else 0) for c in classes
    ]


# --------------------------------------------------------------------------------------------- vectors
class _Vec:
    """m: {mean index: coef}; d: {worker: {dev index: coef}} (worker i's deviation u_i)."""

    __slots__ = ("d", "m")

    def __init__(self, m=None, d=None):
        self.m = m or {}
        self.d = d or {}

    @staticmethod
    def _add(a, b, s):
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, 0.0) + s * v
        return out

    def _comb(self, other, s):
        d = {w: dict(v) for w, v in self.d.items()}
        for w, v in other.d.items():
            d[w] = self._add(d.get(w, {}), v, s)
        return _Vec(self._add(self.m, other.m, s), d)

    def __add__(self, other):
        return self._comb(other, 1.0)

    def __sub__(self, other):
        return self._comb(other, -1.0)

    def __mul__(self, a):
        a = float(a)
        return _Vec(
            {k: a * v for k, v in self.m.items()},
            {w: {k: a * v for k, v in dv.items()} for w, dv in self.d.items()},
        )

    __rmul__ = __mul__

    def __truediv__(self, a):
        return self * (1.0 / float(a))


class _Builder:
    def __init__(self, sk: Skeleton, classes, star: bool):
        self.sk, self.classes, self.star = sk, classes, star
        self.cls = {i: ci for ci, c in enumerate(classes) for i in c}
        self.rep = {ci: c[0] for ci, c in enumerate(classes)}
        self.n_mean = 1  # index 0: x_0 (x_0 − x_* when x_* is present)
        self.n_dev = [0] * len(classes)
        self.n_f = 0
        self.slots: dict = {}  # (class, rep key) -> (mean idx, dev idx or None, f idx)
        self.cache: dict = {}  # full key -> (point vec, {worker: grad vec}, {worker: f idx})
        self.points: list[list] = [[] for _ in classes]  # per class: (x vec, g vec, f idx) of the rep
        self.nnz = 0  # nonzeros of the interpolation constraints (reported)

    def _slot(self, ci, rkey, mean_idx=None):
        if rkey not in self.slots:
            if mean_idx is None:
                mean_idx, self.n_mean = self.n_mean, self.n_mean + 1
            dev = None
            if len(self.classes[ci]) > 1:
                dev, self.n_dev[ci] = self.n_dev[ci], self.n_dev[ci] + 1
            self.slots[rkey] = (mean_idx, dev, self.n_f)
            self.n_f += 1
        return self.slots[rkey]

    def collapse(self, v: _Vec) -> _Vec:
        """Drop the deviations of a class whose members all carry the same coefficients (Σ u_i = 0)."""
        d = {w: dv for w, dv in v.d.items() if any(abs(c) > 0 for c in dv.values())}
        for c in self.classes:
            if len(c) > 1 and all(w in d for w in c):
                ref = d[c[0]]
                if all(
                    d[w].keys() == ref.keys()
                    and all(abs(d[w][k] - ref[k]) <= 1e-12 * (1 + abs(ref[k])) for k in ref)
                    for w in c
                ):
                    for w in c:
                        del d[w]
        return _Vec(v.m, d)

    def grad_vec(self, i, mean_idx, dev_idx):
        return _Vec(
            {mean_idx: 1.0} if not isinstance(mean_idx, dict) else dict(mean_idx),
            {} if dev_idx is None else {i: {dev_idx: 1.0}},
        )

    def grad(self, i, key, y):
        ci = self.cls[i]
        rkey = (ci,) + ((key[0], self.rep[ci]) + key[2:] if key[0] == "y" else key)
        mean_idx, dev, fidx = self._slot(ci, rkey)
        if key not in self.cache:
            y = self.collapse(y)
            if key[0] == "x" and y.d:
                raise AssertionError(f"server iterate {key} is not invariant under the worker symmetry")
            self.cache[key] = (y, {}, {})
        y0, gs, fv = self.cache[key]
        if i not in gs:
            g = self.grad_vec(i, mean_idx, dev)
            gs[i], fv[i] = g, fidx
            if i == self.rep[ci]:
                self.points[ci].append((y0, g, fidx))
        return gs[i]

    def add_x_star(self):
        """x_* = 0; class-mean gradients there sum to zero (Σ_c n_c ḡ_c(x_*) = 0); deviations free."""
        r = len(self.classes)
        sizes = [len(c) for c in self.classes]
        means = []
        for _ in range(r - 1):
            means.append(self.n_mean)
            self.n_mean += 1
        for ci, c in enumerate(self.classes):
            if ci < r - 1:
                m = {means[ci]: 1.0}
            else:
                m = {means[j]: -sizes[j] / sizes[-1] for j in range(r - 1)}
            _, dev, fidx = self._slot(ci, (ci, "star"), mean_idx=-1)  # no own mean index
            self.points[ci].append((_Vec(), self.grad_vec(self.rep[ci], m, dev), fidx))
            for i in c:
                self.cache.setdefault(("star",), (_Vec(), {}, {}))
                self.cache[("star",)][1][i] = self.grad_vec(i, m, dev)
                self.cache[("star",)][2][i] = fidx

    # dense coordinates ------------------------------------------------------------------------------
    def raw_mean(self, v: _Vec) -> np.ndarray:
        m = np.zeros(self.n_mean)
        for k, c in v.m.items():
            m[k] += c
        return m

    def mean_coords(self, v: _Vec) -> np.ndarray:
        return self.raw_mean(v)

    def dense(self, v: _Vec, ci: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        m = self.mean_coords(v)
        owners = [w for w, dv in v.d.items() if dv]
        if not owners:
            return m, (None if ci is None else np.zeros(self.n_dev[ci]))
        if len(owners) != 1 or (ci is not None and self.cls[owners[0]] != ci):
            raise AssertionError("a constraint mixes the deviations of several workers")
        d = np.zeros(self.n_dev[self.cls[owners[0]]])
        for k, c in v.d[owners[0]].items():
            d[k] += c
        return m, d


def _sym_outer(a, b):
    """(P, n) × (P, n) -> (P, n, n): (a bᵀ + b aᵀ)/2 per row."""
    o = np.einsum("pi,pj->pij", a, b)
    return 0.5 * (o + o.transpose(0, 2, 1))


def reduced_worst_case(
    algorithm: ServerRule,
    schedule: Schedule,
    constants: Any,
    *,
    delta: float,
    mu: float | None = None,
    functions: FunctionClass | None = None,
    metric: str = "average",
    gap: str = "f_star",
    replicate: int = 0,
    max_gram: int = MAX_GRAM,
    decrease_weight: float = 0.0,
    eta_L_schedule: Any = None,
    reduce: bool = True,
    cuts: bool = False,
    cut_window: int = 2,
    verbose: bool = False,
) -> PEPResult:
    """The worst case of ``worst_case(..., heterogeneity="server")`` through the orbit-reduced SDP (see the
    module docstring); same arguments. ``reduce=False`` solves the unreduced SDP with the same code;
    ``cuts``: constraint generation — solve with the
    interpolation inequalities between points at most ``cut_window`` apart (in the order the skeleton
    visits them), add every omitted inequality the solution violates, repeat until none is violated by
    more than ``CUT_TOL`` L Δ. Each solve is a relaxation, so its dual value is an upper bound on the full
    SDP's (certified as usual); the final primal point satisfies every inequality up to that tolerance,
    so value and instance bracket the full SDP's optimum. ``result.constants["cut_rounds"]`` counts the
    solves and ``"active"`` the inequalities used.
    ``max_gram`` bounds the largest PSD block (refused before allocation with ``PEPSizeError``).
    ``result.gram_size`` is the mean block's dimension; ``result.constants["blocks"]`` lists all blocks.
    ``result.instance`` is None when rebuilding every worker's vectors would allocate more than a quarter of
    ``afltheory._validation.MAX_ALLOC_BYTES`` (many interchangeable workers; the value is unaffected)."""
    L, sG, delta, fc = check_inputs(constants, delta, mu, metric, gap, functions)
    decrease_weight = check_nonnegative("decrease_weight", decrease_weight)
    sk = skeleton(algorithm, schedule, replicate, eta_L_schedule)
    max_gram = check_int("max_gram", max_gram, low=1)
    n0, blocks = reduced_sizes(sk, metric, gap, fc, decrease_weight, reduce)
    if max((n0,) + blocks) > max_gram:
        raise PEPSizeError(
            f"reduced PEP Gram dimension {n0} (blocks {blocks}) exceeds max_gram={max_gram} "
            f"(allowed range [1, {max_gram}]; estimated solve time ~{estimate_seconds(n0):.0f} "
            f"s); reduce T, K or the delays, or pass max_gram={max((n0,) + blocks)} deliberately"
        )
    classes = worker_classes(sk, reduce)
    star = has_x_star(fc, gap, metric)
    need_last = needs_last(metric, gap, decrease_weight)
    T, M = sk.T, sk.num_workers
    # the dense coefficient arrays: per class P_c² rows of n0² + q_c² doubles (and one copy)
    q = _class_points(sk, classes, metric, gap, fc, decrease_weight)
    check_alloc(
        f"the PEP of T={T} rounds with {M} workers (Gram {n0}, blocks {blocks})",
        16.0 * sum(p * p * (n0 * n0 + p * p) for p in q),
    )
    b = _Builder(sk, classes, star)
    x0 = _Vec({0: 1.0})
    xs = run_skeleton(sk, x0, b.grad, post=b.collapse)
    for i in range(M):
        for t in range(T + (1 if need_last else 0)):
            b.grad(i, ("x", t), xs[t])
    xs = [b.collapse(x) for x in xs]
    if star:
        b.add_x_star()
    return _solve(
        b,
        sk,
        classes,
        xs,
        L,
        sG,
        delta,
        fc,
        metric,
        gap,
        decrease_weight,
        need_last,
        verbose,
        cuts,
        check_int("cut_window", cut_window, low=1),
    )


def _solve(
    b: _Builder, sk, classes, xs, L, sG, delta, fc, metric, gap, cdec, need_last, verbose, cuts, cut_window
):
    import cvxpy as cp

    T, M = sk.T, sk.num_workers
    n0, nF = b.n_mean, b.n_f
    sizes = np.array([len(c) for c in classes], dtype=float)
    G = cp.Variable((n0, n0), PSD=True)
    Ds = [cp.Variable((q, q), PSD=True) if q > 0 else None for q in b.n_dev]
    F = cp.Variable(nF)
    mu = fc.mu
    fstar = cp.Variable() if (not fc.convex and gap == "f_star") else None
    cons, rhs = [], []  # each: (cvxpy constraint, rhs array) for the dual objective

    def quad(a, c):  # a: _Vec pair list -> (CG, CD) for Σ coef <a, c>
        am, ad = b.dense(a)
        cm, cd = b.dense(c)
        CG = 0.5 * (np.outer(am, cm) + np.outer(cm, am))
        CD = None
        if ad is not None or cd is not None:
            ad = np.zeros_like(cd) if ad is None else ad
            cd = np.zeros_like(ad) if cd is None else cd
            CD = 0.5 * (np.outer(ad, cd) + np.outer(cd, ad))
        return CG, CD

    def expr_of(CG, CD=None, ci=None):
        e = cp.sum(cp.multiply(CG, G))
        if CD is not None and Ds[ci] is not None:
            e = e + cp.sum(cp.multiply(CD, Ds[ci]))
        return e

    # ---- interpolation, vectorized per class (representative's points), all ordered pairs
    from scipy import sparse

    interp = []  # per class: (ci, AG, AD, AF, pairs (p, j))
    for ci, pts in enumerate(b.points):
        P = len(pts)
        if P < 2:
            continue
        q = b.n_dev[ci]
        X = np.array([b.dense(p[0], ci)[0] for p in pts])
        Xd = np.array([b.dense(p[0], ci)[1] for p in pts]).reshape(P, q)
        Gm = np.array([b.dense(p[1], ci)[0] for p in pts])
        Gd = np.array([b.dense(p[1], ci)[1] for p in pts]).reshape(P, q)
        fi = np.array([p[2] for p in pts])
        rows_G, rows_D, rows_F, pairs = [], [], [], []
        for p in range(P):
            idx = np.array([j for j in range(P) if j != p])
            dx, dxd = X[p] - X[idx], Xd[p] - Xd[idx]
            # f_p − f_j ≥ q(x_p − x_j, g_p, g_j): the class's inequality, stated once (afltheory.functions),
            # on the mean coordinates and on the deviation coordinates, rows = the pairs (p, j)
            CG = fc.rhs(dx, np.broadcast_to(Gm[p], Gm[idx].shape), Gm[idx], _sym_outer)
            CD = fc.rhs(dxd, np.broadcast_to(Gd[p], Gd[idx].shape), Gd[idx], _sym_outer)
            CF = np.zeros((P - 1, nF))
            CF[np.arange(P - 1), fi[p]] -= 1.0
            np.add.at(CF, (np.arange(P - 1), fi[idx]), 1.0)
            rows_G.append(sparse.csr_matrix(CG.reshape(P - 1, -1)))
            rows_D.append(sparse.csr_matrix(CD.reshape(P - 1, -1)))
            rows_F.append(sparse.csr_matrix(CF))
            pairs += [(p, int(j)) for j in idx]
        AG, AD, AF = (sparse.vstack(r, format="csr") for r in (rows_G, rows_D, rows_F))
        b.nnz += AG.nnz + AD.nnz
        interp.append((ci, AG, AD, AF, np.array(pairs)))

    # ---- server points: ∇f, f and heterogeneity
    ts = range(T + (1 if need_last else 0))

    def gbar(t):
        v = _Vec()
        for i in range(M):
            v = v + b.cache[("x", t)][1][i] / M
        return b.collapse(v)

    def fbar(key):
        return sum((sizes[ci] / M) * F[b.cache[key][2][c[0]]] for ci, c in enumerate(classes))

    gb = {t: gbar(t) for t in ts}
    if M > 1:
        for t in ts:
            for ci, c in enumerate(classes):
                dv = b.cache[("x", t)][1][c[0]] - gb[t]
                CG, CD = quad(dv, dv)
                cons.append(expr_of(CG, CD, ci) <= sG**2)
                rhs.append(np.array(sG**2))
    star = b.star
    if star:
        f_star = sum((sizes[ci] / M) * F[b.cache[("star",)][2][c[0]]] for ci, c in enumerate(classes))
    else:
        f_star = fstar
    if gap == "distance":
        cons.append(G[0, 0] <= delta)
    elif gap == "f_star":
        cons.append(fbar(("x", 0)) - f_star <= delta)
    else:
        cons.append(fbar(("x", 0)) - fbar(("x", T)) <= delta)
    rhs.append(np.array(delta))
    if fstar is not None:  # f_* = inf f: f(x_t) − f_* ≥ ‖∇f(x_t)‖²/(2L)
        for t in ts:
            CG, _ = quad(gb[t], gb[t])
            cons.append(expr_of(CG) / (2 * L) - fbar(("x", t)) + fstar <= 0)
            rhs.append(np.array(0.0))
    shift = 0 if cdec == 0 else cdec * (fbar(("x", 0)) - fbar(("x", T)))
    if metric == "average":
        obj = sum(expr_of(quad(gb[t], gb[t])[0]) for t in range(T)) / T - shift
    elif metric == "min":
        tau = cp.Variable()
        for t in range(T + 1):
            cons.append(tau - expr_of(quad(gb[t], gb[t])[0]) + shift <= 0)
            rhs.append(np.array(0.0))
        obj = tau
    elif metric == "last":
        obj = expr_of(quad(gb[T], gb[T])[0]) - shift
    elif metric == "last_gap":
        obj = fbar(("x", T)) - f_star - shift
    else:  # last_dist: ‖x_T − x_*‖², x_* = 0
        obj = expr_of(quad(xs[T], xs[T])[0]) - shift
    t0 = time.perf_counter()

    def solve(active):
        """One SDP with the base constraints and the interpolation rows selected by ``active``."""
        extra, extra_rhs = [], []
        for (ci, AG, AD, AF, _), mask in zip(interp, active, strict=True):
            rows = np.nonzero(mask)[0]
            e = AG[rows] @ cp.vec(G, order="C") + AF[rows] @ F
            if Ds[ci] is not None:
                e = e + AD[rows] @ cp.vec(Ds[ci], order="C")
            extra.append(e <= 0)
            extra_rhs.append(np.zeros(rows.size))
        prob = cp.Problem(cp.Maximize(obj), cons + extra)
        status = solve_cvxpy(prob, verbose)
        return prob, status, cons + extra, rhs + extra_rhs

    def violations():
        gv = np.asarray(G.value).reshape(-1)
        out = []
        for ci, AG, AD, AF, _ in interp:
            r = AG @ gv + AF @ np.asarray(F.value)
            if Ds[ci] is not None:
                r = r + AD @ np.asarray(Ds[ci].value).reshape(-1)
            out.append(r)
        return out

    scale = max(L * delta, 1e-300)
    if cuts:  # start from the pairs of neighbouring points (and the first/last/x_*)
        active = []
        for _, _, _, _, pairs in interp:
            active.append(np.abs(pairs[:, 0] - pairs[:, 1]) <= cut_window)
    else:
        active = [np.ones(len(pairs), bool) for *_, pairs in interp]
    rounds = 0
    while True:
        rounds += 1
        prob, status, all_cons, all_rhs = solve(active)
        if status not in ("optimal", "optimal_inaccurate") or G.value is None or not cuts:
            break
        viol = violations()
        worst = max((float(v.max()) for v in viol), default=0.0)
        if worst <= CUT_TOL * scale:
            break
        for a, v in zip(active, viol, strict=True):
            a |= v > 0.1 * CUT_TOL * scale
    cons, rhs = all_cons, all_rhs
    seconds = time.perf_counter() - t0
    timing = dict(
        compile_seconds=getattr(prob, "compilation_time", None),
        solver_seconds=getattr(getattr(prob, "solver_stats", None), "solve_time", None),
    )
    consts = dict(
        L=L,
        sigma_G=sG,
        delta=delta,
        mu=mu,
        blocks=(n0,) + tuple(q for q in b.n_dev if q),
        classes=[list(c) for c in classes],
        nnz=b.nnz,
        cut_rounds=rounds,
        active=int(sum(int(a.sum()) for a in active)),
        interpolation=int(sum(len(a) for a in active)),
    )
    if status not in ("optimal", "optimal_inaccurate") or G.value is None:
        return PEPResult.of(status, "CLARABEL", seconds, n0, metric, gap, sk, consts, cdec, **timing)
    dual = float(sum(float(np.sum(np.asarray(c.dual_value) * r)) for c, r in zip(cons, rhs, strict=True)))
    primal = float(prob.value)
    min_eig = min(
        [float(np.linalg.eigvalsh(G.value).min())]
        + [float(np.linalg.eigvalsh(D.value).min()) for D in Ds if D is not None]
    )
    # the rebuilt instance has dimension ≤ n0 + Σ_c q_c (n_c − 1) and M gradients per recorded point: skipped
    # (instance None; the certificate stands) when that would allocate more than a quarter of the limit
    from .._validation import MAX_ALLOC_BYTES

    dim = n0 + sum(q * (len(c) - 1) for q, c in zip(b.n_dev, classes, strict=True))
    inst = None
    if 8.0 * len(b.cache) * (M + 1) * dim <= MAX_ALLOC_BYTES / 4:
        inst = _instance(
            b,
            sk,
            classes,
            xs,
            G.value,
            [None if D is None else D.value for D in Ds],
            F.value,
            None if fstar is None else float(fstar.value),
            star,
            need_last,
            primal,
        )
    solution = (dual, primal, min_eig, inst)
    return PEPResult.of(status, "CLARABEL", seconds, n0, metric, gap, sk, consts, cdec, solution, **timing)


def _factor(A: np.ndarray) -> np.ndarray:
    """R with RᵀR ≈ A (A PSD up to solver accuracy; negative eigenvalues clipped), rows = rank."""
    w, V = np.linalg.eigh((A + A.T) / 2)
    keep = w > 1e-12 * max(1.0, float(np.abs(w).max()))
    return (V[:, keep] * np.sqrt(w[keep])).T


def _simplex(n: int) -> np.ndarray:
    """n unit vectors in R^{n−1} with pairwise inner products −1/(n−1) (rows)."""
    E = np.eye(n) - 1.0 / n
    U, s, _ = np.linalg.svd(E)
    S = U[:, : n - 1] * s[: n - 1] ** 0.5  # rows: E = S Sᵀ, ‖s_i‖² = 1 − 1/n
    return S / math.sqrt(1 - 1 / n)


def _instance(b: _Builder, sk, classes, xs, Gv, Dvs, Fv, fstar, star, need_last, metric_value) -> Instance:
    """Coordinates for every worker's vectors: the mean factor, then per class s_i ⊗ (factor of D_c)."""
    Bm = _factor(Gv)
    blocks, offs, dim = [], [], Bm.shape[0]
    for ci, c in enumerate(classes):
        if Dvs[ci] is None or len(c) < 2:
            blocks.append(None)
            offs.append(dim)
            continue
        E = _factor(Dvs[ci])
        blocks.append((E, _simplex(len(c))))
        offs.append(dim)
        dim += E.shape[0] * (len(c) - 1)
    pos = {i: j for c in classes for j, i in enumerate(c)}

    def coords(v: _Vec) -> np.ndarray:
        out = np.zeros(dim)
        out[: Bm.shape[0]] = Bm @ b.raw_mean(v)
        for w, dv in v.d.items():
            ci = b.cls[w]
            if not dv or blocks[ci] is None:
                continue
            E, S = blocks[ci]
            d = np.zeros(b.n_dev[ci])
            for k, c in dv.items():
                d[k] += c
            part = np.kron(S[pos[w]], E @ d)
            out[offs[ci] : offs[ci] + part.size] += part
        return out

    M = sk.num_workers
    pts, grads, vals = {}, {}, {}
    for key, (y, gs, fv) in b.cache.items():
        if key == ("star",):
            continue
        pts[key] = coords(y)
        grads[key] = np.array([coords(gs[i]) if i in gs else np.full(dim, np.nan) for i in range(M)])
        vals[key] = np.array([float(Fv[fv[i]]) if i in fv else np.nan for i in range(M)])
    x = np.array([coords(xs[t]) for t in range(sk.T + (1 if need_last else 0))])
    x_star = f_star = None
    if star:
        x_star = np.zeros(dim)
        fv = b.cache[("star",)][2]
        f_star = float(np.mean([Fv[fv[i]] for i in range(M)]))
    elif fstar is not None:
        f_star = fstar
    return Instance(x[0], pts, grads, vals, x, x_star, f_star, dim, metric_value)
