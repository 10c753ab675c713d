"""What both PEP formulations share: a rule's skeleton on a schedule, the inputs' checks, the results.

:mod:`afltheory.pep.core` (the PEPit formulation) and :mod:`afltheory.pep.symmetric` (the orbit-reduced one)
both read this module and neither reads the other's internals: ``Skeleton``/``skeleton`` (the rule's
declarative view and one realized schedule), ``run_skeleton`` (the update written once over an abstract vector
type), ``check_inputs`` (constants, Δ, the function class, metric and gap), the solver settings and the
certification rule, and the result types ``PEPResult``/``Instance``. See :mod:`afltheory.pep.core` for the
PEP itself.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_int, check_nonnegative, check_positive, check_real
from ..functions import FunctionClass, resolve_class

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.schedule import Schedule

__all__ = [  # constants, then types, then functions
    "ALGORITHMS", "GAPS", "GAP_TOL", "HETEROGENEITY", "MAX_GRAM", "METRICS", "RETRY_SETTINGS",
    "SOLVER_SETTINGS", "STEP_MAX", "STEP_MIN",
    "Instance", "PEPResult", "PEPSizeError", "Skeleton",
    "check_inputs", "estimate_seconds", "gram_size", "has_x_star", "needs_last", "pep_view", "run_skeleton",
    "skeleton", "solve_cvxpy",
]  # fmt: skip

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
        need_last = needs_last(metric, gap) or last
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
    if algorithm.compressor is not None:
        raise ValueError(
            f"algorithm.compressor={algorithm.compressor!r}: the PEP skeleton has no "
            f"compression (allowed: None)"
        )
    if not isinstance(schedule, Schedule):
        raise ValueError(f"schedule must be an afltheory Schedule, got {type(schedule).__name__}")
    M = schedule.num_workers
    scheduled = algorithm.scheduled
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
    # per-arrival factors w(K, τ) · M p_i: the rule's server step (``ServerRule.view``) every engine reads
    w = view.view.arrival_weights(K, delays, np.array(schedule.workers[r]))
    weights = (
        np.ones(K.shape) if w is None else np.array(np.broadcast_to(np.asarray(w, dtype=float), K.shape))
    )
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


def pep_view(algorithm: ServerRule, num_workers: int) -> Any:
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


def needs_last(metric: str, gap: str, decrease_weight: float = 0.0) -> bool:
    """Does the PEP evaluate the gradients at x_T (a metric, gap or decrease term that reads it)."""
    return metric != "average" or gap == "f_T" or decrease_weight != 0


def has_x_star(functions: FunctionClass | float | None, gap: str, metric: str) -> bool:
    """Does the PEP introduce a minimizer x_*: a convex class (a ``FunctionClass`` with ``convex``, or the
    older ``mu`` ≥ 0) with an initial condition or a metric that names it."""
    convex = functions.convex if isinstance(functions, FunctionClass) else functions is not None
    return convex and (gap in ("f_star", "distance") or metric in ("last_gap", "last_dist"))


def gram_size(
    sk: Skeleton,
    metric: str = "average",
    gap: str = "f_star",
    heterogeneity: str = "all",
    mu: FunctionClass | float | None = None,
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
    return 1 + M * server + per_local * local + (M if has_x_star(mu, gap, metric) else 0)


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

    @classmethod
    def of(
        cls,
        status: str,
        solver: str,
        seconds: float,
        gram_size: int,
        metric: str,
        gap: str,
        skeleton: Skeleton,
        constants: dict,
        decrease_weight: float,
        solution: tuple[float, float, float, Instance | None] | None = None,
        **timing: float | None,
    ) -> PEPResult:
        """The result of a solve, under the certification rule written once. ``solution``: (dual, primal,
        min_eig, instance), or None when the solver returned none (value +inf, not certified: reported, never
        raised). Relative gap |dual − primal| / max(|dual|, L Δ) (the metric's scale, ‖∇f‖² ≤ 2LΔ; L, Δ from
        ``constants``); certified iff the status is "optimal", the gap ≤ ``GAP_TOL`` and the dual finite."""
        if solution is None:
            dual = primal = rel_gap = math.inf
            min_eig, instance, certified = math.nan, None, False
        else:
            dual, primal, min_eig, instance = solution
            rel_gap = abs(dual - primal) / max(abs(dual), constants["L"] * constants["delta"])
            certified = status == "optimal" and rel_gap <= GAP_TOL and math.isfinite(dual)
        return cls(
            dual, primal, status, solver, certified, rel_gap, min_eig, seconds, gram_size, metric, gap,
            skeleton, constants, instance, decrease_weight, **timing,
        )  # fmt: skip

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
def run_skeleton(
    sk: Skeleton, x0: Any, grad: Callable[[int, tuple, Any], Any], post: Callable | None = None
) -> list:
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


def check_inputs(
    constants: Any,
    delta: float,
    mu: float | None,
    metric: str,
    gap: str,
    functions: FunctionClass | None = None,
) -> tuple[float, float, float, FunctionClass]:
    """Validated (L, σ_G, Δ, function class) of a PEP: ``constants`` (object or dict with ``L``, ``sigma_G``,
    ``sigma_L`` = 0), ``delta`` > 0, and the class — ``functions`` if given (its L must be the constants'
    L), else the one ``mu`` names (None: L-smooth, 0: convex, (0, L): strongly convex)."""
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
    functions = resolve_class(L, mu, functions, L_name="constants.L")
    if functions.mu is None and (gap == "distance" or metric in ("last_gap", "last_dist")):
        raise ValueError(
            f"gap={gap!r} with metric={metric!r} needs a minimizer x_*: give mu (0 for the "
            f"convex class, allowed range [0, L))"
        )
    return L, sG, delta, functions


def solve_cvxpy(prob: Any, verbose: bool = False) -> str:
    """Solve a cvxpy problem with Clarabel at ``SOLVER_SETTINGS``, again at ``RETRY_SETTINGS`` when that is
    not "optimal"; returns the last status (a solver failure is the status "solver_error", not raised)."""
    from cvxpy.error import SolverError

    status = "unknown"
    for settings in (SOLVER_SETTINGS, RETRY_SETTINGS):
        with warnings.catch_warnings():  # cvxpy's "may be inaccurate" warning: the status is reported
            warnings.simplefilter("ignore", UserWarning)
            try:
                prob.solve(solver="CLARABEL", verbose=verbose, **settings)
            except SolverError:
                status = "solver_error"
                continue
        status = str(prob.status)
        if status == "optimal":
            break
    return status
