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

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_int, check_nonnegative, check_positive, check_real

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.schedule import Schedule

__all__ = [
    "ALGORITHMS",
    "GAPS",
    "METRICS",
    "MAX_GRAM",
    "Instance",
    "PEPResult",
    "PEPSizeError",
    "Skeleton",
    "estimate_seconds",
    "gram_size",
    "skeleton",
    "worst_case",
]

ALGORITHMS = ("AFACD", "AFACS", "FedAvg")
#: performance measures: gradient norms ("average" over t < T, "min" over t ≤ T, "last" at x_T) and, for the
#: convex classes (``mu`` given), "last_gap" f(x_T) − f(x_*) and "last_dist" ‖x_T − x_*‖².
METRICS = ("average", "min", "last", "last_gap", "last_dist")
#: initial conditions: f(x_0) − f_* ≤ Δ ("f_star"), f(x_0) − f(x_T) ≤ Δ ("f_T"), ‖x_0 − x_*‖² ≤ Δ
#: ("distance", convex classes only).
GAPS = ("f_star", "f_T", "distance")
#: step sizes are refused outside [STEP_MIN, STEP_MAX] / L (a subnormal or 0 step makes the PEP degenerate).
STEP_MIN, STEP_MAX = 1e-12, 1e12
#: Largest Gram dimension accepted by default (≈ 5 min with Clarabel on this project's loaded 2-core machine;
#: see ``estimate_seconds`` and docs/pep.md). Pass ``max_gram=`` to raise it deliberately.
MAX_GRAM = 100
#: Relative primal–dual gap above which a solution is not reported as certified.
GAP_TOL = 1e-4
#: Clarabel tolerances: gap 1e-6 is reached reliably on these SDPs (the default 1e-8 often stalls,
#: "AlmostSolved", #: which cvxpy reports as "optimal_inaccurate" even at relative gaps ~1e-6).
SOLVER_SETTINGS = dict(tol_gap_abs=1e-6, tol_gap_rel=1e-6, tol_feas=1e-7)
#: Second attempt when the first ends "optimal_inaccurate"/"AlmostSolved" (looser gap; the gap actually
#: reached is still reported and must be ≤ GAP_TOL for ``certified``).
RETRY_SETTINGS = dict(tol_gap_abs=1e-5, tol_gap_rel=1e-5, tol_feas=1e-6)
HETEROGENEITY = ("all", "server")


class PEPSizeError(ValueError):
    """The PEP's Gram matrix would exceed ``max_gram`` (message: estimated size and solve time)."""


def _pep_import():
    try:
        import PEPit  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "afltheory.pep needs the optional extra 'pep': pip install 'afltheory[pep]' "
            "(PEPit with cvxpy and Clarabel)"
        ) from exc


# --------------------------------------------------------------------------------------------- the skeleton
@dataclass(frozen=True)
class Skeleton:
    """A deterministic run to be analysed: the rule's declarative view and one realized schedule (plain int
    arrays).

    ``workers``, ``delays``, ``K``: (T, m); ``init_K``: (M,) warm-start steps of the memory slots;
    ``weights``: (T, m) per-arrival factors w(K, τ) on G_i; ``gamma``: the server step γ (``step_size``);
    ``normalizer``: n in x_{t+1} = x_t − (γ/n) Σ …; ``memory``/``warm_start``: the rule keeps per-worker slots
    (warm-started at x_0); ``rule``: the rule's class name; ``algorithm``: the rule itself (``replay`` runs
    its imperative code).
    """

    rule: str
    eta: float
    eta_L: float
    workers: np.ndarray
    delays: np.ndarray
    K: np.ndarray
    num_workers: int
    init_K: np.ndarray
    gamma: float
    weights: np.ndarray
    normalizer: float
    memory: bool
    warm_start: bool
    algorithm: object = field(default=None, repr=False, compare=False)
    #: per-round step sizes (T,) (None: constant): round t's arrivals run their local steps with η_{L,t} and
    #: the server step of round t is γ_t — round t's constant rule (``ServerRule.at_round(t)``), as in
    #: ``simulate`` and the exact engine
    eta_L_rounds: np.ndarray | None = None
    gamma_rounds: np.ndarray | None = None

    def local_eta(self, t: int) -> float:
        """η_L of the local runs arriving in round t (round 0's for the warm start at x_0)."""
        return self.eta_L if self.eta_L_rounds is None else float(self.eta_L_rounds[t])

    def gamma_factor(self, t: int) -> float:
        """γ_t / γ for the server step of round t (1 without a schedule)."""
        return 1.0 if self.gamma_rounds is None else float(self.gamma_rounds[t]) / self.gamma

    @property
    def T(self) -> int:
        """The number of rounds."""
        return self.workers.shape[0]

    @property
    def m(self) -> int:
        """Arrivals per round."""
        return self.workers.shape[1]

    def eval_points(self, metric: str = "average", gap: str = "f_star", last: bool = False) -> list:
        """Distinct points where some gradient is evaluated, as keys: ("x", t) server iterates and
        ("y", worker, start key, k) local iterates k ≥ 1 (start key = the start point's key); x_T is included
        for the "min"/"last" metrics, ``gap="f_T"`` or ``last``."""
        need_last = _needs_last(metric, gap) or last
        keys = {("x", t) for t in range(self.T + (1 if need_last else 0))}

        def local(i, start, k, t):
            for j in range(1, k):
                keys.add(self.local_key(i, start, j, t))

        if self.memory and self.warm_start:
            for i in range(self.num_workers):
                local(i, ("x", 0), int(self.init_K[i]), 0)
        for t in range(self.T):
            for i, d, k in zip(self.workers[t], self.delays[t], self.K[t], strict=True):
                local(int(i), ("x", t - int(d)), int(k), t)
        return keys

    def local_key(self, i: int, start: tuple, j: int, t: int) -> tuple:
        """Key of worker i's j-th local iterate from the point ``start`` in round t: ("y", i, start, j), and
        round t's η_L appended under a step-size schedule (two runs from one start point coincide only when
        their η_L does)."""
        return ("y", i, start, j) if self.eta_L_rounds is None else ("y", i, start, j, self.local_eta(t))


def skeleton(
    algorithm: ServerRule, schedule: Schedule, replicate: int = 0, eta_L_schedule: Any = None
) -> Skeleton:
    """Validate a server rule with the plain SGD worker and no compressor, and one replicate of a
    ``Schedule``, and return the ``Skeleton`` the PEP is built from. The rule is read through its declarative
    hooks (``afltheory.exact.local.server_rule``, the exact engine's view): a rule overriding imperative
    code is refused (``UnsupportedRule``, a TypeError), as are per-worker local step sizes, a
    proximal/corrected worker and compression.

    Step-size schedules: a rule whose ``eta``/``eta_L`` is a schedule (``ServerRule.scheduled``) is read
    round by round through ``at_round(t)``, as ``simulate`` does: round t's arrivals run their local steps
    with η_{L,t} and the server step is that rule's ``step_size`` γ_t. ``eta_L_schedule`` (None, a sequence
    of T values or a callable t -> η_{L,t}, e.g. 2/(μ(γ + t))) gives η_{L,t} for a constant rule instead
    (γ_t = the rule's ``step_size`` with ``eta_L`` replaced). Client weights (``weights``) enter the
    per-arrival factors as M p_i."""
    from .. import _faults
    from ..algorithms.base import ServerRule
    from ..anarchy.schedule import Schedule

    if not isinstance(algorithm, ServerRule):
        raise TypeError(
            f"algorithm={algorithm!r} must be an afltheory server rule (e.g. "
            f"{', '.join(ALGORITHMS)}), got {type(algorithm).__name__}"
        )
    algorithm = _faults.substitute(algorithm)  # identity unless inside afltheory.mutants.injected(...)
    if getattr(algorithm, "compressor", None) is not None:
        raise ValueError(
            f"algorithm.compressor={algorithm.compressor!r}: the PEP skeleton has no "
            f"compression (allowed: None)"
        )
    if not isinstance(schedule, Schedule):
        raise ValueError(f"schedule must be an afltheory Schedule, got {type(schedule).__name__}")
    M = schedule.num_workers
    scheduled = bool(getattr(algorithm, "scheduled", False))
    if scheduled and eta_L_schedule is not None:
        raise ValueError(
            f"algorithm={algorithm!r} already has a step-size schedule; eta_L_schedule must be None"
        )
    base = algorithm.at_round(0) if scheduled else algorithm
    view = pep_view(base, M)  # UnsupportedRule (a TypeError): a rule the declarative hooks cannot express
    if view.mu != 0.0:
        raise ValueError(
            f"algorithm.worker={algorithm.worker!r}: the PEP skeleton supports the plain SGD "
            f"worker only (proximal weight 0)"
        )
    local = view.local_for(M)  # the rule's local view: fixed K_i and per-worker step sizes, normalized once
    if local.step_sizes is not None:
        raise ValueError(
            f"algorithm={algorithm!r} has per-worker local step sizes: the PEP skeleton supports one η_L"
        )
    r = check_int("replicate", replicate, low=0, high=schedule.replicates - 1)
    # the rule's fixed K (one count or one per worker), read by the one normalization simulate and torch use
    schedule = local.apply(schedule)
    K = np.array(schedule.local_steps[r])
    init_K = np.array(schedule.init_local_steps[r])
    delays = np.array(schedule.delays[r])
    ww = view.worker_weight  # client weights: M p_i
    weights = np.array(
        [
            [view.weight(int(k), int(d)) * ww(int(i)) for k, d, i in zip(kr, dr, wr, strict=True)]
            for kr, dr, wr in zip(K, delays, np.array(schedule.workers[r]), strict=True)
        ],
        dtype=float,
    ).reshape(K.shape)
    gamma = check_real("algorithm.step_size", float(view.gamma), low=STEP_MIN * 1e-6, high=STEP_MAX * 1e6)
    eta_rounds = gamma_rounds = None
    if scheduled:
        rules = [algorithm.at_round(t) for t in range(K.shape[0])]
        eta_rounds = np.array([float(rr.eta_L) for rr in rules])
        gamma_rounds = np.array([pep_view(rr, M).gamma for rr in rules])  # the declarative view
        for t, g in enumerate(gamma_rounds):
            check_real(f"algorithm.at_round({t}).step_size", g, low=STEP_MIN * 1e-6, high=STEP_MAX * 1e6)
    elif eta_L_schedule is not None:
        eta_rounds, gamma_rounds = _step_schedule(algorithm, eta_L_schedule, K.shape[0], M)
    return Skeleton(
        type(algorithm).__name__,
        float(base.eta),
        float(base.eta_L),
        np.array(schedule.workers[r]),
        delays,
        K,
        M,
        init_K,
        gamma,
        weights,
        float(view.normalizer(K.shape[1], M)),
        bool(view.memory),
        bool(view.warm_start),
        algorithm,
        eta_rounds,
        gamma_rounds,
    )


def _step_schedule(algorithm, eta_L_schedule, T: int, M: int) -> tuple[np.ndarray, np.ndarray]:
    """(η_{L,s}, γ_s) for s < T from a sequence or a callable; γ_s is the rule's ``step_size`` with
    ``eta_L`` replaced (its declarative hook, so a rule scaling γ differently is read as implemented)."""
    import dataclasses

    if callable(eta_L_schedule):
        vals = [eta_L_schedule(t) for t in range(T)]
    else:
        vals = list(eta_L_schedule)
        if len(vals) != T:
            raise ValueError(
                f"eta_L_schedule has {len(vals)} entries; the schedule has T={T} rounds "
                f"(allowed: exactly {T})"
            )

    def real(t, v):  # numbers, numpy and sympy scalars (a Claim's schedule may be a sympy expression in t)
        if not isinstance(v, (bool, np.bool_)) and hasattr(v, "__float__"):
            try:
                v = float(v)
            except (TypeError, ValueError):
                pass
        return check_real(f"eta_L_schedule[{t}]", v, low=STEP_MIN * 1e-6, high=STEP_MAX * 1e6)

    eta = np.array([real(t, v) for t, v in enumerate(vals)], dtype=float)
    if np.any(eta <= 0):
        raise ValueError(
            f"eta_L_schedule must be > 0 in every round, got min {eta.min()} (allowed (0, "
            f"{STEP_MAX * 1e6:g}])"
        )
    gam = np.array([pep_view(dataclasses.replace(algorithm, eta_L=float(v)), M).gamma for v in eta])
    return eta, gam


def pep_view(algorithm, num_workers: int):
    """The exact engine's declarative view of ``algorithm`` (``afltheory.exact.local.server_rule``), which the
    PEP skeleton reads; a rule it cannot express is refused in PEP's name (``UnsupportedRule``)."""
    from ..algorithms.base import UnsupportedRule
    from ..exact.law import SIMULATE_HINT
    from ..exact.local import server_rule

    try:
        return server_rule(algorithm, num_workers)
    except UnsupportedRule as exc:
        msg = (
            str(exc)
            .replace("exact moments represent", "the PEP skeleton (afltheory.pep) represents")
            .replace("exact moments need", "the PEP skeleton needs")
            .replace(SIMULATE_HINT, "PEP cannot certify it; " + SIMULATE_HINT)
        )
        raise UnsupportedRule(
            msg if "PEP" in msg else f"PEP (afltheory.pep) refuses this rule: {msg}"
        ) from None


def _needs_last(metric: str, gap: str, decrease_weight: float = 0.0) -> bool:
    return metric != "average" or gap == "f_T" or decrease_weight != 0


def _has_x_star(mu: float | None, gap: str, metric: str) -> bool:
    return mu is not None and (gap in ("f_star", "distance") or metric in ("last_gap", "last_dist"))


def gram_size(
    sk: Skeleton,
    metric: str = "average",
    gap: str = "f_star",
    heterogeneity: str = "all",
    mu: float | None = None,
    decrease_weight: float = 0.0,
) -> int:
    """Dimension of the PEP's Gram matrix: x_0, M gradients at every server iterate and
    (``heterogeneity="all"``) at every local iterate, else one gradient per (worker, local iterate); plus x_*
    and its M − 1 free gradients when ``gap="f_star"`` with ``mu`` given (nonconvex: a scalar f_* instead)."""
    M = sk.num_workers
    keys = sk.eval_points(metric, gap, last=decrease_weight != 0)
    server = sum(1 for k in keys if k[0] == "x")
    local = len(keys) - server
    per_local = M if heterogeneity == "all" else 1
    return 1 + M * server + per_local * local + (M if _has_x_star(mu, gap, metric) else 0)


def estimate_seconds(n: int) -> float:
    """Rough wall time (s) of one solve with Gram dimension n: 1.1e-5 n^3.7, fitted on benchmarks/pep.py runs
    (n = 34, 51, 73: 5, 23, 90 s) on this project's shared 2-core machine with PEPit 0.5.1, cvxpy 1.6.7,
    Clarabel 0.11; Clarabel's dense PSD block (n(n+1)/2 unknowns) dominates. Order of magnitude only."""
    return 1.1e-5 * n**3.7


# --------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Instance:
    """A worst-case instance recovered from the Gram matrix (coordinates in R^r, r = ``dim``).

    ``metric`` is the performance metric at the instance (the primal value, or the dimension-reduced
    solution's value). ``points`` maps every evaluation-point key (see ``Skeleton.eval_points``) to its
    coordinates; ``grads[key]`` is the (M, r) array of ∇f_i there (NaN for gradients the PEP did not
    introduce) and ``values[key]`` the (M,) f_i values; ``x`` (T+1 or T, r) the server iterates;
    ``x_star``/``f_star`` the stationary point (``mu`` given) and f_* (``gap="f_star"``).
    """

    x0: np.ndarray
    points: dict
    grads: dict
    values: dict
    x: np.ndarray
    x_star: np.ndarray | None
    f_star: float | None
    dim: int
    metric: float = float("nan")

    def oracle(self, tol: float = 1e-6) -> Callable[[int, np.ndarray], np.ndarray]:
        """grad(i, y): ∇f_i at the recorded point nearest y (a ValueError if none is within ``tol``
        relative)."""
        keys = list(self.points)
        P = np.array([self.points[k] for k in keys])
        scale = max(1.0, float(np.abs(P).max()))

        def grad(i, y):
            dist = np.linalg.norm(P - y, axis=1)
            known = np.array([not np.isnan(self.grads[k][i][0]) for k in keys])
            dist = np.where(known, dist, np.inf)
            j = int(np.argmin(dist))
            if not dist[j] <= tol * scale:
                raise ValueError(
                    f"no recorded point with a gradient of worker {i} within {tol * scale:.3g} of the "
                    f"queried point (nearest {dist[j]:.3g}): the replay left the recovered instance"
                )
            return self.grads[keys[j]][i]

        return grad


@dataclass(frozen=True)
class PEPResult:
    """Outcome of :func:`worst_case`.

    ``value``: the solver's dual objective (the upper bound when ``certified``); ``primal``: its primal
    objective (attained by ``instance`` up to solver accuracy); ``certified`` is True only if the status is
    "optimal" and the primal–dual gap is ≤ ``GAP_TOL`` relative to max(|value|, L Δ) (the metric's scale:
    ‖∇f‖² ≤ 2LΔ). Use ``upper`` (None when not certified), never ``value`` alone, as a certified number.
    """

    value: float
    primal: float
    status: str
    solver: str
    certified: bool
    rel_gap: float
    min_eig: float
    seconds: float
    gram_size: int
    metric: str
    gap: str
    skeleton: Skeleton
    constants: dict
    instance: Instance | None = field(default=None, repr=False)
    decrease_weight: float = 0.0  # objective = metric − c (f(x_0) − f(x_T))
    compile_seconds: float | None = None  # cvxpy compilation of the last solve
    solver_seconds: float | None = None  # Clarabel's own time of the last solve

    @property
    def upper(self) -> float | None:
        """The certified upper bound (None when the solver did not certify)."""
        return self.value if self.certified else None

    def summary(self) -> str:
        """One line: rule, metric, value, certification, Gram size and solve time."""
        tag = "certified" if self.certified else f"NOT certified ({self.status}, rel. gap {self.rel_gap:.2e})"
        return (
            f"PEP {self.skeleton.rule} {self.metric}: {self.value:.6g} [{tag}] Gram {self.gram_size}, "
            f"{self.seconds:.1f} s"
        )


# --------------------------------------------------------------------------------------------- building
def _run_skeleton(sk: Skeleton, x0, grad, post=None):
    """The update rule written once over an abstract vector type (PEPit Points here; numpy in tests; the
    symmetry-reduced vectors of ``afltheory.pep.symmetric``).

    ``grad(i, key, y)`` returns ∇f_i(y) for the point y with key ``key``; ``post`` (optional) maps each new
    server iterate to its canonical form. Returns the server iterates x_0..x_T."""
    M, g = sk.num_workers, sk.gamma
    xs = [x0]

    def local_update(i, start_key, y0, k, t):
        y, s = y0, None
        eta_L = sk.local_eta(t)
        for j in range(k):
            key = start_key if j == 0 else sk.local_key(i, start_key, j, t)
            gi = grad(i, key, y)
            s = gi if s is None else s + gi
            if j < k - 1:
                y = y - eta_L * gi
        return s / k if k > 1 else s

    memory = {}
    if sk.memory and sk.warm_start:
        for i in range(M):
            memory[i] = local_update(i, ("x", 0), x0, int(sk.init_K[i]), 0)
    for t in range(sk.T):
        updates = []
        for j, (i, d, k) in enumerate(zip(sk.workers[t], sk.delays[t], sk.K[t], strict=True)):
            i, d, k = int(i), int(d), int(k)
            Gi = local_update(i, ("x", t - d), xs[t - d], k, t)
            w = float(sk.weights[t, j])
            updates.append((i, Gi if w == 1.0 else w * Gi))
        if sk.memory:
            for i, Ui in updates:
                memory[i] = Ui
            terms = [memory[i] for i in sorted(memory)]
        else:
            terms = [Ui for _, Ui in updates]
        step = terms[0]
        for u in terms[1:]:
            step = step + u
        x_new = xs[t] - (g * sk.gamma_factor(t) / sk.normalizer) * step
        xs.append(x_new if post is None else post(x_new))
    return xs


def _check_inputs(constants, delta, mu, metric, gap):
    if metric not in METRICS:
        raise ValueError(f"metric={metric!r} must be one of {METRICS}")
    if gap not in GAPS:
        raise ValueError(f"gap={gap!r} must be one of {GAPS}")
    L = check_positive(
        "constants.L",
        getattr(constants, "L", None) if not isinstance(constants, dict) else constants.get("L"),
    )
    get = (
        (lambda n, d=None: constants.get(n, d))
        if isinstance(constants, dict)
        else (lambda n, d=None: getattr(constants, n, d))
    )
    sG = check_nonnegative("constants.sigma_G", get("sigma_G"))
    sL = get("sigma_L", 0.0)
    if sL is not None and check_nonnegative("constants.sigma_L", sL) != 0.0:
        raise ValueError(
            f"constants.sigma_L={sL} must be 0: the PEP analyses the noise-free skeleton "
            f"(allowed range [0, 0])"
        )
    delta = check_positive("delta", delta)
    if mu is not None:
        mu = check_real("mu", mu, low=0.0, high=L, high_open=True)
    elif gap == "distance" or metric in ("last_gap", "last_dist"):
        raise ValueError(
            f"gap={gap!r} with metric={metric!r} needs a minimizer x_*: give mu (0 for the "
            f"convex class, allowed range [0, L))"
        )
    return L, sG, delta, mu


def worst_case(
    algorithm: ServerRule,
    schedule: Schedule,
    constants: Any,
    *,
    delta: float,
    mu: float | None = None,
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
            metric=metric,
            gap=gap,
            replicate=replicate,
            max_gram=max_gram,
            decrease_weight=decrease_weight,
            eta_L_schedule=eta_L_schedule,
        )
    L, sG, delta, mu = _check_inputs(constants, delta, mu, metric, gap)
    decrease_weight = check_nonnegative("decrease_weight", decrease_weight)
    if heterogeneity not in HETEROGENEITY:
        raise ValueError(f"heterogeneity={heterogeneity!r} must be one of {HETEROGENEITY}")
    sk = skeleton(algorithm, schedule, replicate, eta_L_schedule)
    n = gram_size(sk, metric, gap, heterogeneity, mu, decrease_weight)
    max_gram = check_int("max_gram", max_gram, low=1)
    if n > max_gram:
        raise PEPSizeError(
            f"PEP Gram dimension {n} exceeds max_gram={max_gram} (allowed range "
            f"[1, {max_gram}]; estimated solve time ~{estimate_seconds(n):.0f} s with "
            f"Clarabel here); reduce T, K, M or the delays, or pass max_gram={n} deliberately"
        )
    _pep_import()
    from PEPit import PEP
    from PEPit.functions import SmoothFunction, SmoothStronglyConvexFunction

    M = sk.num_workers
    pep = PEP()
    if mu is None:
        fs = [pep.declare_function(SmoothFunction, L=L) for _ in range(M)]
    else:
        fs = [pep.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L) for _ in range(M)]
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

    xs = _run_skeleton(sk, x0, grad)
    T = sk.T
    need_last = _needs_last(metric, gap, decrease_weight)
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
    if _has_x_star(mu, gap, metric):  # x_*: the minimizer (∇f(x_*) = 0, f_i interpolated there)
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
    if dual is None or pep.G_value is None:
        return PEPResult(
            math.inf,
            math.inf,
            status,
            solver,
            False,
            math.inf,
            math.nan,
            seconds,
            n,
            metric,
            gap,
            sk,
            dict(L=L, sigma_G=sG, delta=delta, mu=mu),
            None,
            decrease_weight,
            **timing,
        )
    primal = float(pep.objective.eval())
    dual = float(dual)
    rel_gap = abs(dual - primal) / max(abs(dual), L * delta)  # relative to the metric's scale (≤ 2LΔ)
    min_eig = float(np.linalg.eigvalsh((pep.G_value + pep.G_value.T) / 2).min())
    certified = status == "optimal" and rel_gap <= GAP_TOL and math.isfinite(dual)
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
    return PEPResult(
        dual,
        primal,
        status,
        solver,
        certified,
        rel_gap,
        min_eig,
        seconds,
        n,
        metric,
        gap,
        sk,
        dict(L=L, sigma_G=sG, delta=delta, mu=mu),
        inst,
        decrease_weight,
        **timing,
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
