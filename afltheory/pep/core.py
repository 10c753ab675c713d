"""Performance estimation (PEP) of the noise-free skeletons of AFA-CD, AFA-CS and FedAvg on a fixed schedule.

The problem solved by :func:`worst_case` is the semidefinite relaxation (Drori & Teboulle 2014; Taylor,
Hendrickx & Glineur 2017) of

    sup  metric(x_0, …, x_T)
    over M functions f_1 … f_M on R^d (any d), each L-smooth (or μ-strongly convex and L-smooth if ``mu`` is
    given), with f = (1/M) Σ_i f_i, f(x_0) − f_* ≤ Δ and ‖∇f_i(x) − ∇f(x)‖² ≤ σ_G² (Assumption 3),
    where x_0 … x_T are produced by the deterministic (σ_L = 0) algorithm on the given schedule:
      worker i arriving in round t starts at y_0 = x_{t−τ_{t,i}}, runs y_{k+1} = y_k − η_L ∇f_i(y_k) for
      k < K_{t,i} and returns G_i = (1/K_{t,i}) Σ_k ∇f_i(y_k);
      AFA-CD   x_{t+1} = x_t − η η_L (1/m) Σ_{i∈M_t} G_i                      [Yang et al. 2022, Alg. 2]
      AFA-CS   x_{t+1} = x_t − η η_L (1/M) Σ_{i∈[M]} G_i^{latest}  (memory; warm start at x_0) [Alg. 3]
      FedAvg   x_{t+1} = x_t − η η_L (1/m) Σ_{i∈M_t} K_{t,i} G_i    (two-sided form, Δ_i = −η_L K_{t,i} G_i)
    — in general x_{t+1} = x_t − (γ/n) Σ w(K_i, τ_i) G_i over the arrivals (or over the M memory slots), read
    from the rule's declarative hooks (``afltheory.algorithms.ServerRule``: ``step_size`` γ,
    ``local_steps_weight``/``staleness_weight`` w, ``normalizer`` n, ``keeps_memory``, ``warm_start``) through
    the same view the exact engine uses (``afltheory.exact.local.server_rule``). So the PEP analyses the rule
    as implemented, FedBuff and a mutant changing a declarative hook included; a rule overriding imperative
    code (``aggregate``, ``update_memory``) is refused with a TypeError, never read as its base class.
The variables are the Gram matrix of {x_0, every gradient ∇f_i at every visited point (and x_* with its
gradients in the strongly convex case)} and the function values; every iterate is a fixed linear combination
of them, so the metric and all constraints are linear in (Gram, values).

Why the value is an upper bound on the worst case over the class. Every true instance (f_1, …, f_M) in the
class, run on the schedule, gives a feasible point of the SDP: its Gram matrix is PSD, and every constraint is
an inequality that every member satisfies —
  (i) the interpolation inequalities of each f_i between every pair of its evaluated points [Taylor, Hendrickx
      & Glineur 2017, Thm 3.10 for L-smooth functions (curvature in [−L, L]); Thm 4 for μ-strongly convex];
  (ii) Assumption 3 at the visited points: with ``heterogeneity="all"`` at every point where some gradient is
      evaluated (all M gradients are introduced there), with ``"server"`` at the server iterates only;
  (iii) the initial gap: nonconvex ``gap="f_star"``: f(x_0) − f_* ≤ Δ with f_* a free scalar and
      f(x) − f_* ≥ ‖∇f(x)‖²/(2L) at every point where ∇f is known (true for f_* = inf f by the descent
      lemma); with ``mu``: x_* a stationary point of f (all f_i interpolated there), f(x_0) − f(x_*) ≤ Δ;
      ``gap="f_T"``: f(x_0) − f(x_T) ≤ Δ.
So the SDP maximum is ≥ every instance's metric. The value reported is the solver's *dual* objective (a dual
certificate bounds the SDP maximum from above; PEPit reconstructs it), and it is called certified only when
the solver status is "optimal" and the primal–dual gap is ≤ ``GAP_TOL`` relative to max(|value|, LΔ).

When it is exact. Constraints imposed only at visited points are a relaxation. (i) alone loses nothing: any
feasible data are interpolated by M functions of the class (the cited theorems), in dimension rank(Gram). So
the value is the exact worst case for M = 1 with ``gap="f_T"`` (e.g. PEPit's gradient-descent example, a test)
or with ``mu`` ≥ 0 (x_* is then the interpolant's minimizer). With M > 1 and σ_G < ∞ the interpolating f_i
need not satisfy Assumption 3 away from the visited points, and in the nonconvex ``gap="f_star"`` form the
interpolant's infimum may lie below the f_* of the SDP; then the value is an upper bound whose tightness is
measured by the lower bounds of :mod:`afltheory.pep.lower` (concrete certified instances run by the engine).

PEPit (optional extra ``pep``) builds the SDP; it is imported only when a PEP is solved.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_int, check_nonnegative
from .base import (
    ALGORITHMS,
    GAP_TOL,
    GAPS,
    HETEROGENEITY,
    MAX_GRAM,
    METRICS,
    RETRY_SETTINGS,
    SOLVER_SETTINGS,
    STEP_MAX,
    STEP_MIN,
    Instance,
    PEPResult,
    PEPSizeError,
    Skeleton,
    check_inputs,
    estimate_seconds,
    gram_size,
    has_x_star,
    needs_last,
    pep_view,
    run_skeleton,
    skeleton,
)

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.schedule import Schedule
    from ..functions import FunctionClass

__all__ = [
    "ALGORITHMS",
    "GAPS",
    "GAP_TOL",
    "HETEROGENEITY",
    "METRICS",
    "MAX_GRAM",
    "RETRY_SETTINGS",
    "SOLVER_SETTINGS",
    "STEP_MAX",
    "STEP_MIN",
    "Instance",
    "PEPResult",
    "PEPSizeError",
    "Skeleton",
    "estimate_seconds",
    "gram_size",
    "pep_view",
    "skeleton",
    "worst_case",
]


def _pep_import():
    try:
        import PEPit  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "afltheory.pep needs the optional extra 'pep': pip install 'afltheory[pep]' "
            "(PEPit with cvxpy and Clarabel)"
        ) from exc


def worst_case(
    algorithm: ServerRule,
    schedule: Schedule,
    constants: Any,
    *,
    delta: float,
    mu: float | None = None,
    functions: FunctionClass | None = None,
    metric: str = "average",
    gap: str = "f_star",
    heterogeneity: str = "all",
    replicate: int = 0,
    max_gram: int = MAX_GRAM,
    dimension_reduction: int | None = None,
    decrease_weight: float = 0.0,
    eta_L_schedule: Any = None,
    symmetry: bool = False,
    verbose: int = 0,
    loose: bool = False,
) -> PEPResult:
    """Certified worst case of ``metric`` for the noise-free skeleton of ``algorithm`` on ``schedule``.

    ``algorithm``: a server rule with the plain SGD worker — ``AFACD``, ``AFACS``, ``FedAvg``, ``FedBuff`` or
    any rule defined by the declarative hooks (``skeleton``; a rule overriding ``aggregate`` is refused).
    ``schedule``: an ``afltheory.anarchy.Schedule`` (replicate ``replicate`` is used).
    ``constants``: an object or dict with ``L``, ``sigma_G`` (and ``sigma_L``, which must be 0), e.g.
    ``problem.constants``. ``delta``: Δ ≥ f(x_0) − f_* (``gap="f_star"``) or ≥ f(x_0) − f(x_T) (``"f_T"``).
    ``mu``: None = each f_i L-smooth nonconvex; μ ≥ 0 = each f_i μ-strongly convex (convex if 0) and L-smooth.
    ``functions``: the class as an object instead (``afltheory.functions``: ``SmoothNonconvex(L)``,
    ``ConvexSmooth(L)``, ``StronglyConvexSmooth(L, mu)``; its L must be ``constants.L``); it declares each
    f_i (its interpolation inequality) and says whether a minimizer x_* exists.
    ``metric``: "average" = (1/T) Σ_{t<T} ‖∇f(x_t)‖² (Theorems 2–4's left side), "min" = min_{t≤T}, "last" =
    ‖∇f(x_T)‖². ``heterogeneity``: "all" = Assumption 3 at every point where a gradient is evaluated (all M
    gradients introduced there; tightest, largest Gram matrix), "server" = only at the server iterates (a
    coarser relaxation, still an upper bound; Gram ≈ 1 + M·T + Σ(K − 1)). ``dimension_reduction``: PEPit
    heuristic ("trace", "logdet2", …) for a low-rank instance
    (one or more extra solves; the value is always the first solve's).
    ``decrease_weight`` c ≥ 0: maximize metric − c (f(x_0) − f(x_T)) instead (a bound of the form
    metric ≤ c (f(x_0) − f(x_T)) + rest, e.g. Theorem 4 as printed, holds on the class iff this is ≤ rest).
    ``loose``: solve with ``RETRY_SETTINGS`` at once (for an SDP known to stall at ``SOLVER_SETTINGS``'
    gap, which then costs a failed solve first; the certification rule — status optimal, gap ≤ ``GAP_TOL``
    — is the same).
    ``eta_L_schedule``: per-round local step sizes (see ``skeleton``). ``gap="distance"``: ‖x_0 − x_*‖² ≤ Δ;
    metrics "last_gap" f(x_T) − f(x_*) and "last_dist" ‖x_T − x_*‖² (both need ``mu``).
    ``symmetry=True``: solve the orbit-reduced SDP of :mod:`afltheory.pep.symmetric` instead (interchangeable
    workers share one Gram block; same value, much smaller SDP; ``heterogeneity="server"`` only).
    See the module docstring for why the value is an upper bound over the class and when it is exact.
    """
    if not isinstance(loose, bool):
        raise ValueError(f"loose={loose!r} must be True or False")
    if symmetry:
        from .symmetric import reduced_worst_case

        if heterogeneity != "server" or dimension_reduction:
            raise ValueError(
                "symmetry=True supports heterogeneity='server' without dimension_reduction, got "
                f"heterogeneity={heterogeneity!r}, dimension_reduction={dimension_reduction!r}"
            )
        return reduced_worst_case(
            algorithm,
            schedule,
            constants,
            delta=delta,
            mu=mu,
            functions=functions,
            metric=metric,
            gap=gap,
            replicate=replicate,
            max_gram=max_gram,
            decrease_weight=decrease_weight,
            eta_L_schedule=eta_L_schedule,
        )
    L, sG, delta, fc = check_inputs(constants, delta, mu, metric, gap, functions)
    mu = fc.mu
    decrease_weight = check_nonnegative("decrease_weight", decrease_weight)
    if heterogeneity not in HETEROGENEITY:
        raise ValueError(f"heterogeneity={heterogeneity!r} must be one of {HETEROGENEITY}")
    sk = skeleton(algorithm, schedule, replicate, eta_L_schedule)
    n = gram_size(sk, metric, gap, heterogeneity, fc, decrease_weight)
    max_gram = check_int("max_gram", max_gram, low=1)
    if n > max_gram:
        raise PEPSizeError(
            f"PEP Gram dimension {n} exceeds max_gram={max_gram} (allowed range "
            f"[1, {max_gram}]; estimated solve time ~{estimate_seconds(n):.0f} s with "
            f"Clarabel here); reduce T, K, M or the delays, or pass max_gram={n} deliberately"
        )
    _pep_import()
    from PEPit import PEP

    M = sk.num_workers
    pep = PEP()
    fs = [fc.declare(pep) for _ in range(M)]  # each f_i in the class (its interpolation inequality)
    x0 = pep.set_initial_point()
    cache = {}  # key -> (point, {i: g_i}, {i: f_i}); all M entries at "full" points

    def visit(key, y, i=None):
        y0, gs, fv = cache.setdefault(key, (y, {}, {}))
        for j in range(M) if i is None else (i,):
            if j not in gs:
                gs[j], fv[j] = fs[j].oracle(y0)
        return gs

    def grad(i, key, y):
        full = key[0] == "x" or heterogeneity == "all"
        return visit(key, y, None if full else i)[i]

    xs = run_skeleton(sk, x0, grad)
    T = sk.T
    need_last = needs_last(metric, gap, decrease_weight)
    for t in range(T + (1 if need_last else 0)):
        visit(("x", t), xs[t])
    full = [k for k, v in cache.items() if len(v[1]) == M]

    def mean(items):
        s = items[0]
        for it in items[1:]:
            s = s + it
        return s / M if M > 1 else s

    gbar = {k: mean([cache[k][1][i] for i in range(M)]) for k in full}
    fbar = {k: mean([cache[k][2][i] for i in range(M)]) for k in full}
    x_star = f_star_expr = None
    if has_x_star(fc, gap, metric):  # x_*: the minimizer (∇f(x_*) = 0, f_i interpolated there)
        fsum = fs[0]
        for f in fs[1:]:
            fsum = fsum + f
        x_star, _, f_star_expr = (fsum / M if M > 1 else fsum).stationary_point(
            return_gradient_and_function_value=True
        )
        if gap == "distance":
            pep.set_initial_condition((x0 - x_star) ** 2 <= delta)
        elif gap == "f_star":
            pep.set_initial_condition(fbar[("x", 0)] - f_star_expr <= delta)
        else:
            pep.set_initial_condition(fbar[("x", 0)] - fbar[("x", T)] <= delta)
    elif gap == "f_star":  # f_* = inf f: f(x) − f_* ≥ ‖∇f(x)‖²/(2L) wherever ∇f is known
        from PEPit import Expression

        f_star_expr = Expression(is_leaf=True)
        pep.set_initial_condition(fbar[("x", 0)] - f_star_expr <= delta)
        for k in full:
            pep.add_constraint(fbar[k] - f_star_expr >= gbar[k] ** 2 / (2 * L))
    else:
        pep.set_initial_condition(fbar[("x", 0)] - fbar[("x", T)] <= delta)
    if M > 1:
        for k in full:
            for i in range(M):
                pep.add_constraint((cache[k][1][i] - gbar[k]) ** 2 <= sG**2)
    shift = 0.0 if decrease_weight == 0 else decrease_weight * (fbar[("x", 0)] - fbar[("x", T)])
    if metric == "average":
        s = gbar[("x", 0)] ** 2
        for t in range(1, T):
            s = s + gbar[("x", t)] ** 2
        pep.set_performance_metric(s / T - shift)
    elif metric == "min":
        for t in range(T + 1):
            pep.set_performance_metric(gbar[("x", t)] ** 2 - shift)
    elif metric == "last_gap":
        pep.set_performance_metric(fbar[("x", T)] - f_star_expr - shift)
    elif metric == "last_dist":
        pep.set_performance_metric((xs[T] - x_star) ** 2 - shift)
    else:
        pep.set_performance_metric(gbar[("x", T)] ** 2 - shift)

    t0 = time.perf_counter()
    from cvxpy.error import SolverError

    for settings in (RETRY_SETTINGS,) if loose else (SOLVER_SETTINGS, RETRY_SETTINGS):
        with warnings.catch_warnings():  # cvxpy's "may be inaccurate" warning: the status is reported
            warnings.simplefilter("ignore", UserWarning)
            try:
                dual = pep.solve(wrapper="cvxpy", solver="CLARABEL", verbose=verbose, **settings)
            except SolverError:  # e.g. an unbounded worst case (γ > 2/L): reported, not raised
                dual, status = None, "solver_error"
                continue
        status = (
            str(pep.wrapper.prob.status)
            if pep.wrapper is not None and pep.wrapper.prob is not None
            else "unknown"
        )
        if status == "optimal":
            break
    seconds = time.perf_counter() - t0
    solver = str(getattr(pep.wrapper, "solver_name", "?"))
    prob = getattr(pep.wrapper, "prob", None)
    timing = dict(
        compile_seconds=getattr(prob, "compilation_time", None),
        solver_seconds=getattr(getattr(prob, "solver_stats", None), "solve_time", None),
    )
    consts = dict(L=L, sigma_G=sG, delta=delta, mu=mu)
    if dual is None or pep.G_value is None:
        return PEPResult.of(status, solver, seconds, n, metric, gap, sk, consts, decrease_weight, **timing)
    primal = float(pep.objective.eval())
    dual = float(dual)
    min_eig = float(np.linalg.eigvalsh((pep.G_value + pep.G_value.T) / 2).min())
    if dimension_reduction:  # extra solve(s) for a low-rank instance; value and certificate are the first's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            pep.solve(
                wrapper="cvxpy",
                solver="CLARABEL",
                verbose=verbose,
                dimension_reduction_heuristic=dimension_reduction,
                **SOLVER_SETTINGS,
            )
    at = min(float(e.eval()) for e in pep.list_of_performance_metrics)
    inst = _instance(cache, xs, x_star, f_star_expr, T, need_last, M, at)
    solution = (dual, primal, min_eig, inst)
    return PEPResult.of(
        status, solver, seconds, n, metric, gap, sk, consts, decrease_weight, solution, **timing
    )


def _instance(cache, xs, x_star, f_star, T, need_last, M, metric_value) -> Instance:
    pts, grads, vals = {}, {}, {}
    for k, (y, gs, fv) in cache.items():
        pts[k] = np.asarray(y.eval(), dtype=float)
        d = pts[k].shape[0]
        grads[k] = np.array(
            [np.asarray(gs[i].eval(), dtype=float) if i in gs else np.full(d, np.nan) for i in range(M)]
        )
        vals[k] = np.array([float(fv[i].eval()) if i in fv else np.nan for i in range(M)])
    x = np.array([np.asarray(xs[t].eval(), dtype=float) for t in range(T + (1 if need_last else 0))])
    xs_v = None if x_star is None else np.asarray(x_star.eval(), dtype=float)
    fs_v = None if f_star is None else float(f_star.eval())
    # coordinates in R^r, r = numerical rank of all recovered vectors (orthogonal change of basis: inner
    # products, hence every constraint and the metric, are unchanged)
    V = np.vstack(
        [x]
        + list(pts.values())
        + [np.nan_to_num(g) for g in grads.values()]
        + ([xs_v[None]] if xs_v is not None else [])
    )
    _, sv, Vt = np.linalg.svd(V, full_matrices=False)
    r = max(1, int(np.sum(sv > 1e-7 * max(sv[0], 1e-300))))
    B = Vt[:r].T

    def proj(a):
        return a @ B

    pts = {k: proj(v) for k, v in pts.items()}
    grads = {k: np.where(np.isnan(v[:, :1]), np.nan, proj(np.nan_to_num(v))) for k, v in grads.items()}
    return Instance(
        proj(x[0]), pts, grads, vals, proj(x), None if xs_v is None else proj(xs_v), fs_v, r, metric_value
    )
