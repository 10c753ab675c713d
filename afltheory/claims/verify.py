"""The one verification entry point of a ``Claim``: ``verify(claim, problem, behaviour, ...)`` -> ``Verdict``
and ``verify_rate(claim, ...)`` -> ``Verdict``.

What ``verify`` does, in order:
1. builds the claim's algorithm (its rule with the step-size schedule resolved against the problem's
   constants and the claim's values) unless ``algorithm=`` is given;
2. measures the claim's quantity through the ONE dispatcher ``measure`` (one engine per call): exactly with
   ``afltheory.exact.moments`` where its model applies (``exact="auto"``; no Monte Carlo run then), else —
   only on a declared refusal (``REFUSALS``), named in the verdict's method — by ``simulate``, judged by the
   one-sided 99 % Student-t upper confidence bound (UCB) of the Monte Carlo mean over replicates;
3. evaluates the bound's named terms per replicate on the realized schedule (``run_values``) and checks the
   claim's conditions there (``inside_conditions``; the failing ones are named);
4. judges the claim and its negative control with ONE criterion (measured-or-UCB ≤ bound,
   ``analysis.compare_bound``). The default control is a plausible wrong claim that fails on correct code:
   the bound with its dominant term halved (a factor-2 transcription error), else, when that still holds
   and the claim states a rate in T, the dominant term made half an order faster in T (× T^(−1/2)); when
   neither can fail the verdict carries no control and says "no power" and why — a true claim is never
   reported FAIL because of its control. A claim with ``expect="fails"`` (a false variant) passes when its
   bound is violated.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from .. import _faults
from .._validation import check_int
from ..algorithms.base import UnsupportedRule
from ..analysis.bounds import compare_bound, default_control
from ..analysis.slopes import bootstrap_slope, fit_slope, rate_fit, replicate_bootstrap
from ..checks.verdict import NegativeControl, Verdict
from ..exact.law import ExactUnavailable
from ..theory import symbols as S
from . import _power
from ._claim import QUANTITIES, Claim
from ._values import estimate_G, problem_values
from .symbols import SYMBOLS

__all__ = [
    "ENGINES",
    "Measurement",
    "QuantityUnavailable",
    "REFUSALS",
    "ScheduleRecord",
    "measure",
    "quantity_of",
    "problem_values",
    "run_values",
    "scope_problems",
    "verify",
    "verify_latex",
    "verify_order",
    "verify_rate",
    "verify_reference",
]


class QuantityUnavailable(ValueError):
    """A backend cannot compute the claim's measured quantity (the message names both)."""


def run_values(trace: Any, problem: Any, algorithm: Any) -> dict[str, np.ndarray]:
    """Per replicate (R,), every symbol of ``SYMBOLS`` a run determines: the schedule statistics (T, m, tau,
    K, Kbar, Ktilde, Khat2), the step sizes (a schedule: its value at t = 0) and ``problem_values``."""
    s = trace.schedule
    R = trace.replicates
    full = lambda v: np.full(R, float(v))  # noqa: E731
    vals: dict[str, np.ndarray] = {
        k: full(v)
        for k, v in problem_values(problem, trace.x0[0] if trace.x0.ndim == 2 else trace.x0).items()
    }
    if trace.x0.ndim == 2:
        f0 = np.asarray(problem.value(trace.x0), dtype=float)
        vals["f_0"], vals["Delta"] = f0, f0 - float(problem.constants.f_star)
    rule0 = algorithm
    if getattr(algorithm, "scheduled", False):  # η_L decaying per local step: round 0's mean step
        E = getattr(algorithm, "steps_per_round", lambda *c: None)(s.local_steps, s.init_local_steps)
        rule0 = algorithm.at_round(0) if E is None else algorithm.at_round(0, local_steps=E)
    K = s.local_steps.max(axis=(1, 2)).astype(float)
    vals.update(
        {
            "T": full(s.rounds),
            "m": full(s.m),
            "M": full(s.num_workers),
            "tau": s.tau.astype(float),
            "K": K,
            "E": K,
            "Kbar": 1.0 / np.mean(1.0 / s.K_harmonic, axis=1),
            "Ktilde": s.K_mean.mean(axis=1),
            "Khat2": s.K_sq_mean.mean(axis=1),
            "eta": full(getattr(rule0, "eta", np.nan)),
            "eta_L": full(getattr(rule0, "eta_L", np.nan)),
        }
    )
    # test-only faults, read only where the misreading would change this run's value (K̄ ≠ K_max, Σp_k² ≠ 1/M):
    # elsewhere the mutant cannot reach the run and is not scored against it
    if np.any(vals["Kbar"] != vals["K"]) and (f := _faults.get(_faults.FaultPoint.CLAIMS_KBAR)):
        vals = f(vals)
    if not np.allclose(vals["sum_p2"], 1.0 / vals["M"], rtol=1e-12) and (
        f := _faults.get(_faults.FaultPoint.CLAIMS_SUM_P2)
    ):
        vals = f(vals)
    return {k: v for k, v in vals.items() if np.all(np.isfinite(v))}


def _stats(claim, trace, problem, algorithm):
    """``run_values`` plus (overridden by) the claim's own ``statistics``."""
    stats = run_values(trace, problem, algorithm)
    if claim.statistics is not None:
        stats.update(
            {
                k: np.broadcast_to(np.asarray(v, dtype=float), (trace.replicates,))
                for k, v in claim.statistics(trace, problem, algorithm).items()
            }
        )
    return stats


def scope_problems(claim: Claim, algorithm: Any, behaviour: Any, trace: Any = None) -> list[str]:
    """What puts a run outside the claim's scope (empty: inside): a rule other than the claim's ``rule`` (when
    it is a class), partial participation for a full-participation claim, non-uniform arrivals for a
    uniform-participation claim, delays or local steps above the class's bounds."""
    out = []
    a = claim.assumptions
    if isinstance(claim.rule, type) and not isinstance(algorithm, claim.rule):
        out.append(f"the claim is about {claim.rule.__name__}; the run used {type(algorithm).__name__}")
    arrivals = getattr(behaviour, "arrivals", None)
    sched = getattr(trace, "schedule", None)
    if a.participation == "full" and sched is not None and sched.m != sched.num_workers:
        out.append(f"the claim assumes full participation; the run had m={sched.m} of M={sched.num_workers}")
    if a.participation == "uniform" and arrivals is not None:
        from ..anarchy.arrivals import UniformArrivals

        if not isinstance(arrivals, UniformArrivals):
            out.append(f"the claim assumes uniform arrivals; the run used {type(arrivals).__name__}")
    if sched is not None and a.max_delay is not None and int(sched.delays.max()) > a.max_delay:
        out.append(f"delays up to {int(sched.delays.max())} exceed the class's max_delay={a.max_delay}")
    if (
        sched is not None
        and a.max_local_steps is not None
        and int(sched.local_steps.max()) > a.max_local_steps
    ):
        out.append(
            f"local steps up to {int(sched.local_steps.max())} exceed max_local_steps={a.max_local_steps}"
        )
    return out


def _gammas(algorithm: Any, rounds: int) -> np.ndarray:
    if getattr(algorithm, "scheduled", False):
        return np.array([algorithm.at_round(t).step_size for t in range(rounds)])
    return np.full(rounds, float(algorithm.step_size))


def _virtual(result: Any, T: int) -> np.ndarray:
    """The recorded ‖∇f(x̄_{t,k})‖² (``virtual_grad_norm_sq``), or a test-only fault's misreading of it."""
    f = _faults.get(_faults.FaultPoint.CLAIMS_VIRTUAL_STEP)  # None unless a test-only fault is injected
    v = result.virtual_grad_norm_sq
    return v if f is None else f(v, np.asarray(result.grad_norm_sq)[..., 1 : T + 1])


def quantity_of(quantity: str, result: Any, problem: Any, algorithm: Any) -> np.ndarray | float:
    """The claim quantity ``quantity`` (``QUANTITIES``) from a ``Trace`` (per-replicate samples, (R,)) or from
    exact ``Moments`` (a float); ``QuantityUnavailable`` names the backend and the quantity it cannot give."""
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity={quantity!r} must be one of {sorted(QUANTITIES)}")
    f_star = float(problem.constants.f_star)
    x_star = problem.constants.x_star
    is_trace = hasattr(result, "schedule")
    T = result.rounds
    if quantity == "avg_grad_sq":
        if n := _faults.get(_faults.FaultPoint.CLAIMS_AVG_ROUNDS, 0):  # test-only: T + n rounds averaged
            return np.mean(result.grad_norm_sq[..., : T + n], axis=-1)
        return result.time_average() if is_trace else float(np.mean(result.grad_norm_sq[:T]))
    if (
        quantity == "virtual_avg_grad_sq"
    ):  # the virtual averaged model at every local step (Wang & Joshi 2018)
        if not is_trace:
            if getattr(result, "virtual_grad_norm_sq", None) is None:
                raise QuantityUnavailable(
                    "virtual_avg_grad_sq needs exact.moments(..., record_virtual=True) (the virtual averaged "
                    "model x̄_{t,k} at every local step)"
                )
            return float(np.mean(_virtual(result, T)))
        if result.virtual_grad_norm_sq is None:
            raise QuantityUnavailable("virtual_avg_grad_sq needs simulate(..., record_virtual=True)")
        return _virtual(result, T).reshape(result.replicates, -1).mean(axis=1)
    if quantity == "weighted_avg_grad_sq":
        g = _gammas(algorithm, T)
        w = g / g.sum()
        w = f(w) if (f := _faults.get(_faults.FaultPoint.CLAIMS_AVG_WEIGHTS)) else w  # test-only fault
        return result.grad_norm_sq[:, :T] @ w if is_trace else float(result.grad_norm_sq[:T] @ w)
    if quantity == "min_grad_sq":
        if is_trace:  # per replicate the value at the round where the mean is smallest
            t_star = int(np.argmin(result.grad_norm_sq[:, :T].mean(axis=0)))
            return result.grad_norm_sq[:, t_star]
        return float(np.min(result.grad_norm_sq[:T]))
    T -= _faults.get(_faults.FaultPoint.CLAIMS_LAST_ROUND, 0)  # 0 unless a test-only fault is injected
    if quantity == "last_gap":
        return result.loss[:, T] - f_star if is_trace else float(result.loss[T] - f_star)
    if quantity == "last_dist_sq":
        if x_star is None:
            raise QuantityUnavailable(
                f"last_dist_sq needs the problem's x* ({type(problem).__name__} has none)"
            )
        if is_trace:
            return np.sum((result.x_final - np.asarray(x_star)) ** 2, axis=1)
        if result.msd is None:
            raise QuantityUnavailable("exact moments: this Moments result carries no E‖x_T − x*‖² (msd)")
        return float(result.msd[T])
    if quantity == "weighted_avg_iterate_gap":  # x̂_T with w_t ∝ γ_t^{-2} (Stich 2019): needs record_x
        if not is_trace:
            raise QuantityUnavailable(
                "exact moments cannot compute weighted_avg_iterate_gap (E f(x̂_T) needs the cross moments "
                "of all iterates): use simulate (exact=False)"
            )
        if result.x is None:
            raise QuantityUnavailable(
                "weighted_avg_iterate_gap needs the recorded iterates (simulate, record_x)"
            )
        w = _gammas(algorithm, result.rounds) ** -2.0
        w = f(w) if (f := _faults.get(_faults.FaultPoint.CLAIMS_AVG_WEIGHTS)) else w  # test-only fault
        xh = np.einsum("t,rtd->rd", w / w.sum(), result.x[:, : result.rounds])
        return np.asarray(problem.value(xh), dtype=float) - f_star
    # avg_iterate_gap
    if not is_trace:
        raise QuantityUnavailable(
            "exact moments cannot compute avg_iterate_gap (E f(x̄_T) needs the cross "
            "moments of all iterates): use simulate (exact=False)"
        )
    if result.x_avg is None:
        raise QuantityUnavailable("this Trace has no averaged iterate (x_avg); rerun simulate")
    out = np.asarray(problem.value(result.x_avg), dtype=float) - f_star
    return np.where(np.isfinite(result.x_avg).all(axis=1), out, np.inf)


#: The engines' declared refusals: the only exceptions on which ``measure(engine="auto")`` falls back from the
#: exact engine to Monte Carlo (a TypeError, ValueError or any other error is a bug and fails the verdict).
REFUSALS = (UnsupportedRule, ExactUnavailable, QuantityUnavailable)


@dataclass(frozen=True)
class Measurement:
    """One measurement of a claim's quantity (``measure``): ``value`` (the exact value, or the per-replicate
    Monte Carlo samples (R,)), ``samples`` ((R,) for Monte Carlo, None when exact), ``method`` (the engine,
    and why the engines before it refused), ``refused_by`` ((engine, reason) for every engine that refused),
    ``record`` (the ``Trace``, or for the exact engine the ``ScheduleRecord`` of the realized schedules the
    bound is evaluated on)."""

    value: Any
    samples: np.ndarray | None
    method: str
    refused_by: tuple[tuple[str, str], ...] = ()
    record: Any = None

    @property
    def exact(self) -> bool:
        """True when the exact engine measured it (no Monte Carlo error)."""
        return self.samples is None


@dataclass(frozen=True)
class ScheduleRecord:
    """What a verdict reads from a run besides the measured quantity, when no Monte Carlo run was made (the
    exact engine): the realized ``schedule`` (the draw ``simulate`` with the same seed would act on), ``x0``
    (as ``Trace.x0``: (dim,) or (R, dim)), ``replicates``, ``rounds``. A claim's ``statistics`` receives it
    in place of a ``Trace``."""

    schedule: Any
    x0: np.ndarray
    replicates: int
    rounds: int


ENGINES = ("auto", "exact", "mc")


def measure(
    claim: Claim,
    problem: Any,
    behaviour: Any,
    rounds: int,
    engine: str = "auto",
    *,
    algorithm: Any = None,
    replicates: int = 8,
    seed: int = 0,
    x0: Any = None,
    values: Mapping[str, Any] | None = None,
) -> Measurement:
    """The claim's measured quantity on (problem, behaviour, rounds), by ONE engine per call: "exact"
    (``afltheory.exact.moments``; its refusal is raised as ``QuantityUnavailable`` naming the reason), "mc"
    (``simulate``, ``replicates`` runs) or "auto" (exact, falling back to Monte Carlo ONLY on the engines'
    declared refusals ``REFUSALS`` — ``UnsupportedRule``, ``ExactUnavailable``, ``QuantityUnavailable`` —
    never on a TypeError or ValueError; the Measurement's ``method`` and ``refused_by`` name the engine that
    refused and why). ``algorithm``: default the claim's own (``Claim.algorithm`` resolved against the
    problem's constants, the run's and ``values``).

    The engine is chosen by ``run_engines`` (which the paper checks' shared ``expectation`` also uses);
    ``adversary.generic`` measures every candidate through this dispatcher (one engine per call)."""
    if not isinstance(claim, Claim):
        raise TypeError(f"claim={claim!r} must be an afltheory.claims.Claim")
    rounds = check_int("rounds", rounds, low=1)
    replicates = check_int("replicates", replicates, low=2)
    if algorithm is None:
        pv = problem_values(problem, x0)
        algorithm = claim.algorithm(
            {**pv, **_run_constants(behaviour, rounds), **_numbers(claim.values, pv), **dict(values or {})},
            weights=getattr(problem, "weights", None),
        )
    return _measure(claim, problem, behaviour, algorithm, rounds, replicates, seed, engine, x0)


@dataclass(frozen=True)
class EngineRun:
    """One engine's answer (``run_engines``): ``value`` (what ``read`` returned), ``record`` (the exact
    engine's ``Moments`` or the Monte Carlo ``Trace``), ``exact``, ``method`` and ``refused_by`` (as
    ``Measurement``)."""

    value: Any
    record: Any
    exact: bool
    method: str
    refused_by: tuple[tuple[str, str], ...] = ()


def run_engines(
    problem: Any,
    algorithm: Any,
    behaviour: Any,
    rounds: int,
    engine: str = "auto",
    *,
    read: Callable[[Any], Any],
    replicates: int = 8,
    seed: int = 0,
    x0: Any = None,
    record_x: bool = False,
    record_virtual: bool = False,
    what: str = "this quantity",
) -> EngineRun:
    """The one place that chooses an engine: "exact" (``afltheory.exact.moments``, then ``read(moments)``; a
    refusal in ``REFUSALS`` is raised as ``QuantityUnavailable``), "mc" (``simulate`` with warnings
    silenced, then ``read(trace)``) or "auto" (exact, falling back to Monte Carlo ONLY on ``REFUSALS``:
    a TypeError, ValueError or any other error propagates). ``measure`` and the paper
    checks' shared ``expectation`` read runs through it; ``what`` names the quantity in the refusal."""
    from ..engine import simulate

    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} must be one of {ENGINES}")
    refused: tuple[tuple[str, str], ...] = ()
    if engine in ("auto", "exact"):
        from ..exact import moments

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                virtual = {"record_virtual": True} if record_virtual else {}
                mom = moments(problem, algorithm, behaviour, rounds, x0=x0, **virtual)
            value = read(mom)
        except REFUSALS as exc:
            if engine == "exact":
                raise QuantityUnavailable(
                    f"engine='exact' but the exact engine cannot give {what}: {exc}"
                ) from exc
            refused = (("exact moments", f"{type(exc).__name__}: {exc}"),)
        else:
            return EngineRun(value, mom, True, "exact moments")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = simulate(
            problem,
            algorithm,
            behaviour,
            rounds=rounds,
            replicates=replicates,
            seed=seed,
            x0=x0,
            record_x=record_x,
            record_virtual=record_virtual,
        )
    method = f"monte-carlo (R={replicates})"
    if refused:
        method += "; " + "; ".join(f"{e} refused: {why}" for e, why in refused)
    return EngineRun(read(trace), trace, False, method, refused)


def _measure(claim, problem, behaviour, algorithm, rounds, replicates, seed, engine, x0) -> Measurement:
    from ..engine import realized_schedule

    run = run_engines(
        problem,
        algorithm,
        behaviour,
        rounds,
        engine,
        read=lambda rec: quantity_of(claim.measured, rec, problem, algorithm),
        replicates=replicates,
        seed=seed,
        x0=x0,
        record_x=claim.measured == "weighted_avg_iterate_gap",
        record_virtual=claim.measured == "virtual_avg_grad_sq",
        what=claim.measured,
    )
    if run.exact:
        sched = realized_schedule(problem, algorithm, behaviour, rounds, replicates, seed)
        start = problem.default_x0() if x0 is None else np.asarray(x0, dtype=float)
        rec = ScheduleRecord(sched, np.array(start, dtype=float), replicates, rounds)
        return Measurement(run.value, None, "exact moments", (), rec)
    samples = np.asarray(run.value, dtype=float)
    return Measurement(samples, samples, run.method, run.refused_by, run.record)


_ENGINE = {True: "exact", False: "mc", "auto": "auto"}


def _check_exact(exact):
    if exact is not True and exact is not False and exact != "auto":
        raise ValueError(f"exact={exact!r} must be True, False or 'auto'")
    return exact


def _run(claim, problem, behaviour, algorithm, rounds, replicates, seed, exact, x0):
    """(record, measured samples or exact value, is_exact, method) through the dispatcher ``measure``:
    ``exact`` True/False/"auto" is engine "exact"/"mc"/"auto"."""
    m = _measure(
        claim, problem, behaviour, algorithm, rounds, replicates, seed, _ENGINE[_check_exact(exact)], x0
    )
    return m.record, m.value, m.exact, m.method


def _control(claim, measured, is_exact, level, stats, extra, terms):
    """(NegativeControl or None, note): the default control (``analysis.default_control``), judged by the
    criterion that judges the claim."""
    dom = max(terms, key=lambda k: float(np.mean(terms[k])))
    T = (
        stats["T"]
        if claim.rate.get("T") is not None and S.T in claim.term_exprs(extra)[dom].free_symbols
        else None
    )
    cmp, desc = default_control(measured, terms, exact=is_exact, level=level, T=T)
    if cmp is None:
        return None, desc
    return NegativeControl(
        description=desc, measured=cmp.measured, theoretical=cmp.bound, passed=cmp.holds
    ), ""


def verify(
    claim: Claim,
    problem: Any,
    behaviour: Any,
    *,
    rounds: int | None = None,
    replicates: int = 8,
    seed: int = 0,
    algorithm: Any = None,
    values: Mapping[str, Any] | None = None,
    exact: bool | str = "auto",
    level: float = 0.99,
    control: Any = "auto",
    x0: Any = None,
    id: str | None = None,
    over: str | None = None,
    points: Sequence[float] | None = None,
    tol: float = 0.1,
    steps: Mapping[str, Any] | None = None,
) -> Verdict:
    """The verdict on ``claim`` for this (problem, behaviour, rounds) — see the module docstring. An
    O-statement (``constant="hidden"``) is verified along a sweep: ``over`` and ``points`` are then required
    and the verdict is ``verify_order``'s (``tol`` its trend tolerance).

    ``steps``: the step sizes a claim leaves free (``eta=None`` / ``eta_L=None``, bounded by one of its
    conditions), e.g. ``{"eta_L": 0.1}`` or a sweep ``{"eta_L": [0.05, 0.1, 0.2]}`` (a claim for every
    step: the verdict passes iff it holds at every swept step inside the conditions, and reports the
    tightest one; steps outside the conditions are listed, not judged).

    ``values``: numbers for the claim's own symbols that the problem does not determine (e.g. ``G``).
    ``control``: "auto" (the default control), None (no control), a sympy bound (a plausible wrong claim
    that must fail) or a server rule (the same claim run on that plausible wrong algorithm, e.g. FedAvg for
    SCAFFOLD's claim). ``id``: the verdict id (default the claim's id)."""
    if not isinstance(claim, Claim):
        raise TypeError(f"claim={claim!r} must be an afltheory.claims.Claim")
    if steps is not None:
        kw = dict(rounds=rounds, replicates=replicates, seed=seed, algorithm=algorithm, values=values)
        kw.update(exact=exact, level=level, control=control, x0=x0, id=id, over=over, points=points, tol=tol)
        return _verify_steps(claim, problem, behaviour, steps, kw)
    if claim.constant == "hidden":
        if over is None or points is None:
            raise ValueError(
                f"over={over!r}, points={points!r}: claim {claim.id!r} is an O-statement "
                "(constant='hidden'); "
                "verify it along a sweep: verify(claim, problem, behaviour, over='T', points=[...])"
            )
        return verify_order(
            claim,
            problem,
            behaviour,
            over=over,
            points=points,
            rounds=rounds,
            replicates=replicates,
            seed=seed,
            values=values,
            exact=exact,
            tol=tol,
            control=control,
            level=level,
            id=id,
        )
    if over is not None or points is not None:
        raise ValueError(
            f"over={over!r}, points={points!r}: a sweep is for O-statements (constant='hidden'); "
            f"claim {claim.id!r} states its constant (use verify_rate for a rate)"
        )
    rounds = check_int("rounds", rounds, low=1)
    replicates = check_int("replicates", replicates, low=2)
    extra = dict(values or {})
    pv = problem_values(problem, x0)
    given = algorithm  # None: built from the claim (per horizon: a step may depend on T)
    if algorithm is None:
        algorithm = claim.algorithm(
            {**pv, **_run_constants(behaviour, rounds), **_numbers(claim.values, pv), **extra},
            weights=getattr(problem, "weights", None),
        )
    trace, measured, is_exact, method = _run(
        claim, problem, behaviour, algorithm, rounds, replicates, seed, exact, x0
    )
    stats = _stats(claim, trace, problem, algorithm)
    stats.update({k: np.full(trace.replicates, float(v)) for k, v in extra.items() if np.ndim(v) == 0})
    g_note = _G_on_trajectory(
        claim, stats, extra, problem, algorithm, behaviour, rounds, replicates, seed, x0
    )
    terms = {k: np.broadcast_to(v, (trace.replicates,)) for k, v in claim.terms(stats, extra).items()}
    bad = [k for k, v in terms.items() if not np.all(np.isfinite(v)) or np.any(np.isnan(v))]
    if bad:
        raise ValueError(
            f"claim {claim.id!r}: term(s) {bad} are not finite on this run (check the values of "
            f"their symbols)"
        )
    b = sum(terms.values())
    cmp = compare_bound(measured, b, exact=is_exact, level=level)
    conds = claim.check_conditions(stats, extra)
    scope = scope_problems(claim, algorithm, behaviour, trace)
    inside = all(ok for ok, _ in conds.values()) if conds else None
    if scope:
        inside = False
    failing = [k for k, (ok, _) in conds.items() if not ok]
    tot = float(np.mean(b))
    shares = {k: float(np.mean(v)) / tot for k, v in terms.items()} if tot > 0 else None
    notes = [f"measured: {QUANTITIES[claim.measured]}", f"class: {claim.assumptions.describe()}"]
    if g_note:
        notes.append(g_note)
    if failing:
        notes.append(f"OUTSIDE the claim's conditions: {', '.join(failing)} fail")
    notes.extend(f"OUTSIDE the claim's scope: {p}" for p in scope)
    nc, tight = None, None
    if claim.expect == "fails":
        passed, relation = not cmp.holds, ">"
        notes.append("a false variant declared as expected to fail: PASS means the bound was violated")
    else:
        passed, relation = cmp.holds, "<="
        if control == "auto":
            nc, why = _control(claim, measured, is_exact, level, stats, extra, terms)
            if why:
                notes.append(why)
            if nc is None and why.startswith("no power"):  # item 7: name the tightest instance found
                tight = _power.tightest_instance(
                    verify, claim, problem, behaviour, rounds=rounds, x0=x0,
                    kwargs=dict(replicates=replicates, seed=seed, values=values, exact=exact, level=level,
                                algorithm=given, own=(float(cmp.measured), float(cmp.bound))),
                )  # fmt: skip
                if tight is not None:
                    notes.append(_power.describe(tight))
        elif control is not None and hasattr(control, "aggregate"):
            # the same claim, run on the nearest wrong algorithm, judged by the same criterion
            ctr, cmeas, cexact, _ = _run(
                claim, problem, behaviour, control, rounds, replicates, seed, exact, x0
            )
            cstats = _stats(claim, ctr, problem, control)
            cb = sum(np.broadcast_to(v, (ctr.replicates,)) for v in claim.terms(cstats, extra).values())
            ccmp = compare_bound(cmeas, cb, exact=cexact, level=level)
            nc = NegativeControl(
                description=f"the same claim for {type(control).__name__} (a plausible wrong algorithm)",
                measured=ccmp.measured,
                theoretical=ccmp.bound,
                passed=ccmp.holds,
            )
        elif control is not None:
            cb = claim.evaluate(control, stats, extra)
            ccmp = compare_bound(measured, cb, exact=is_exact, level=level)
            nc = NegativeControl(
                description="the user's control bound",
                measured=ccmp.measured,
                theoretical=ccmp.bound,
                passed=ccmp.holds,
            )
    tol = "exact ≤ bound" if is_exact else f"one-sided {level:.0%} t-UCB ≤ bound"
    return Verdict(
        id=id or claim.id,
        claim=claim.title,
        reference=f"{claim.reference} [{claim.confidence}]",
        measured=cmp.measured,
        ci=None if is_exact else (None, cmp.ucb),
        theoretical=cmp.bound,
        tolerance=tol,
        passed=passed,
        relation=relation,
        slack=cmp.slack,
        method=method,
        notes="; ".join(notes),
        inside_conditions=inside,
        terms=shares,
        negative_control=nc,
        details={
            "rounds": rounds,
            "replicates": replicates,
            "seed": seed,
            "quantity": claim.measured,
            "bound_expr": sp.sstr(claim.expr(extra)),
            **({"latex": dict(claim.latex)} if getattr(claim, "latex", None) else {}),
            "source": claim.source,
            "reading": claim.reading,
            "conditions": {k: {"holds": ok, "slack": s} for k, (ok, s) in conds.items()},
            **({"tightest_instance": tight} if tight is not None else {}),
        },
    )


def _G_on_trajectory(claim, stats, extra, problem, algorithm, behaviour, rounds, replicates, seed, x0):
    """Item 6: when the claim needs G and neither the problem certifies it (``_values.certified_G``) nor the
    user or the claim gives it, G is ESTIMATED on the realized trajectory (``_values.estimate_G`` on
    ``simulate(record_x=True)`` with the verdict's seed and at most 8 replicates) and written into ``stats``;
    returns the note that marks it "estimated" (None when nothing was estimated)."""
    try:
        needed = claim.free_symbols(extra)
    except (ValueError, TypeError):
        return None
    if "G" not in needed or "G" in stats:
        return None
    from ..engine import simulate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = simulate(problem, algorithm, behaviour, rounds=rounds, replicates=min(replicates, 8), seed=seed,
                      x0=x0, record_x=True)  # fmt: skip
    G = estimate_G(problem, tr.x)
    stats["G"] = np.full(len(next(iter(stats.values()))), G)
    return (
        f"G = {G:.4g} ESTIMATED on the realized trajectory (σ_L² + max_t,i ‖∇f_i(x_t)‖², "
        f"{tr.replicates} replicates), not certified: the problem certifies no bounded-gradient constant"
    )


def _numbers(values: Mapping[str, Any], pv: Mapping[str, float]) -> dict[str, float]:
    """The claim's own values that are numbers once the problem's constants are known."""
    out = {}
    for k, v in values.items():
        try:
            e = sp.sympify(v).subs({s: pv[str(s)] for s in sp.sympify(v).free_symbols if str(s) in pv})
            if not e.free_symbols:
                out[k] = float(e)
        except (sp.SympifyError, TypeError):
            continue
    return out


def _run_constants(behaviour: Any, rounds: int) -> dict[str, float]:
    """The run's constants a step-size rule may use (η_L = 1/(L K √T), Li et al.'s γ = max(8κ, E)): T = the
    rounds, K = E = the behaviour's constant local steps (1 when they vary: such a rule must then be given its
    values), m = the arrivals per round when the behaviour states it."""
    ls = getattr(behaviour, "local_steps", None)
    K = getattr(ls, "K", None)
    out = {"T": float(rounds)}
    if isinstance(K, (int, np.integer)):
        out.update(K=float(K), E=float(K))
    else:
        out.update(E=1.0)
    m = getattr(getattr(behaviour, "arrivals", None), "m", None)
    if isinstance(m, (int, np.integer)):
        out["m"] = float(m)
    return out


def _at(f: Any, v: float) -> Any:
    """``f(v)`` for a callable of the swept value (not a problem, behaviour or arrivals), else ``f``."""
    if (
        callable(f)
        and not hasattr(f, "constants")
        and not hasattr(f, "sample")
        and not hasattr(f, "arrivals")
    ):
        return f(v)
    return f


def _sweep_point(claim, problem, behaviour, over, v, rounds, values):
    """(problem, behaviour, the claim's algorithm, rounds) at the swept value ``v`` of ``over``."""
    T = int(v) if over == "T" else (rounds(v) if callable(rounds) else rounds)
    if T is None:
        raise ValueError("rounds is required unless over='T'")
    p, b = _at(problem, v), _at(behaviour, v)
    pv = problem_values(p)
    algo = claim.algorithm(
        {**pv, **_run_constants(b, int(T)), **_numbers(claim.values, pv), **dict(values or {})},
        weights=getattr(p, "weights", None),
    )
    return p, b, algo, int(T)


def _rate_judgement(claim, pts, samples, exact_vals, slope, tol, wrong, seed):
    """(fit, method, tolerance text, judge(rate) -> bool, the control's wrong rate, "O" or "Θ").

    An upper rate (O(·), the default): ``judge(s)`` iff the fitted slope ≤ s + tol — exact values: the
    exact finite-range slope; Monte Carlo: the one-sided 95 % bootstrap upper bound of the slope (the upper
    end of the 90 % percentile interval). The wrong rate (control) is half an order faster (claimed − 0.5).
    An attained rate (Θ(·), ``rate_attained=True``): two-sided as ``analysis.rate_fit`` (|fit − s| ≤ tol, or
    the 95 % CI widened by tol contains s); the wrong rate is claimed + 0.5."""
    if claim.rate_attained:
        wrong = slope + 0.5 if wrong is None else float(wrong)
        fit, method, tolerance = rate_fit(pts, samples, exact_vals, claimed=slope, tol=tol, seed=seed)
        return fit, method, tolerance, lambda s: fit.contains(s, tol), wrong, "Θ"
    wrong = slope - 0.5 if wrong is None else float(wrong)
    if all(e is not None for e in exact_vals):
        fit = fit_slope(pts, list(exact_vals))
        return (
            fit,
            "exact moments",
            f"exact slope ≤ {slope:g} + {tol:g} (an upper rate: O(·))",
            lambda s: fit.slope <= s + tol,
            wrong,
            "O",
        )
    fit, method = replicate_bootstrap(pts, samples, seed=seed, level=0.90, interval="one-sided 95 %")
    return (
        fit,
        method,
        f"one-sided 95 % bootstrap upper bound of the slope ≤ {slope:g} + {tol:g} (an upper rate: O(·))",
        lambda s: fit.ci[1] <= s + tol,
        wrong,
        "O",
    )


def verify_rate(
    claim: Claim,
    problem: Any | Callable,
    behaviour: Any | Callable,
    *,
    over: str,
    points: Sequence[float],
    replicates: int = 8,
    rounds: int | Callable | None = None,
    seed: int = 0,
    values: Mapping[str, Any] | None = None,
    exact: bool | str = "auto",
    tol: float = 0.0,
    wrong: float | None = None,
    id: str | None = None,
) -> Verdict:
    """The verdict on the claim's rate ``claim.rate[over]``: the log–log slope of the measured quantity
    across ``points`` of ``over`` ("T" sweeps the rounds; problem/behaviour/rounds may be callables of the
    point). The claim's rate is an upper rate (O(·): slope ≤ claimed + tol, one-sided) unless the claim says
    ``rate_attained=True`` (Θ(·): two-sided) — see ``_rate_judgement``. Exact values give the exact
    finite-range slope; Monte Carlo a percentile bootstrap over the replicates. The control is the same fit
    against a wrong rate (default: half an order faster for an upper rate, half an order slower for an
    attained one), judged by the same criterion."""
    if over not in claim.rate:
        raise ValueError(
            f"over={over!r}: claim {claim.id!r} states no rate in it (its rates: "
            f"{sorted(claim.rate) or 'none'})"
        )
    slope = claim.rate[over]
    pts = [float(v) for v in points]
    if len(pts) < 3:
        raise ValueError(f"points={pts} must have at least 3 values")
    replicates = check_int("replicates", replicates, low=2)
    samples, exact_vals, inside, runs, refusals = [], [], [], [], []
    for j, v in enumerate(pts):
        p, b, algo, T = _sweep_point(claim, problem, behaviour, over, v, rounds, values)
        runs.append((p, b, algo, T, seed + j))
        m = _measure(claim, p, b, algo, int(T), replicates, seed + j, _ENGINE[_check_exact(exact)], None)
        samples.append(m.samples)
        exact_vals.append(m.value if m.exact else None)
        refusals.extend(why for _, why in m.refused_by)
        if claim.conditions:
            inside.append(
                all(ok for ok, _ in claim.check_conditions(_stats(claim, m.record, p, algo), values).values())
            )
    if any(e is None for e in exact_vals):  # one engine per fit: the exact points measured by Monte Carlo too
        for j, (p, b, algo, T, sd) in enumerate(runs):
            if samples[j] is None:
                samples[j] = _measure(claim, p, b, algo, T, replicates, sd, "mc", None).samples
    fit, method, tolerance, judge, wrong, kind = _rate_judgement(
        claim, pts, samples, exact_vals, slope, tol, wrong, seed
    )
    if refusals:
        method += f"; exact moments refused: {refusals[0]}"
    nc = NegativeControl(
        description=f"same fit tested against the wrong rate {over}^({wrong:g})",
        measured=fit.slope,
        theoretical=wrong,
        passed=judge(wrong),
    )
    return Verdict(
        id=id or f"{claim.id}.rate_{over}",
        claim=f"{claim.title}: rate {kind}({over}^({slope:g}))",
        reference=f"{claim.reference} [{claim.confidence}]",
        measured=fit.slope,
        ci=fit.ci if claim.rate_attained or fit.ci is None else (None, fit.ci[1]),
        theoretical=slope,
        tolerance=tolerance,
        passed=judge(slope),
        relation="~=" if claim.rate_attained else "<=",
        method=method,
        negative_control=nc,
        notes=(
            f"no power: the wrong rate {over}^({wrong:g}) holds too — the claimed rate is loose on this sweep"
            if nc.passed and not claim.rate_attained
            else ""
        ),
        inside_conditions=None if not inside else all(inside),
        details={"over": over, "x": pts, "y": [float(y) for y in fit.y], "quantity": claim.measured},
    )


def verify_order(
    claim: Claim,
    problem: Any | Callable,
    behaviour: Any | Callable,
    *,
    over: str,
    points: Sequence[float],
    rounds: int | Callable | None = None,
    replicates: int = 8,
    seed: int = 0,
    values: Mapping[str, Any] | None = None,
    exact: bool | str = "auto",
    tol: float = 0.1,
    control: Any = "auto",
    level: float = 0.99,
    id: str | None = None,
) -> Verdict:
    """The verdict on an O-statement (``constant="hidden"``: measured ≤ C · shape for an unknown C, from
    ``holds_from`` on): the claim's bound is the shape. Along the sweep of ``over`` over ``points``
    (problem/behaviour/rounds may be callables of the point, as in ``verify_rate``) the ratio
    measured / shape is measured and the claim holds iff it stays bounded: the log–log trend of the ratio
    has slope ≤ ``tol`` (exact values: the exact slope; Monte Carlo: the one-sided 95 % bootstrap upper
    bound of the slope over the replicates). ``tol`` > 0 admits a ratio growing slower than any power over
    a finite sweep (a log factor, as Õ hides). The constant's estimate is the largest ratio over the sweep
    (with the largest per-point one-sided ``level`` t-UCB of the ratio under Monte Carlo). Control ("auto"):
    the shape half an order smaller along the sweep (× over^(−1/2), e.g. a correct 1/√m written as 1/m),
    or a user's wrong shape (a sympy expression), judged by the same trend test; it must fail."""
    from ..analysis.bounds import upper_confidence_bound

    if not isinstance(claim, Claim):
        raise TypeError(f"claim={claim!r} must be an afltheory.claims.Claim")
    if over not in SYMBOLS and over not in claim.extra_symbols:
        raise ValueError(f"over={over!r} must be a claim symbol (one of {', '.join(SYMBOLS)})")
    pts = [float(v) for v in points]
    if len(pts) < 3:
        raise ValueError(f"points={pts} must have at least 3 values")
    replicates = check_int("replicates", replicates, low=2)
    over_sym = sp.Symbol(over, positive=True)
    if control == "auto":
        wrong, wrong_desc = claim.expr(values) * over_sym ** sp.Rational(-1, 2), f"the shape × {over}^(−1/2)"
    elif control is None:
        wrong, wrong_desc = None, ""
    else:
        wrong, wrong_desc = _sympify_control(control), "the user's wrong shape"
    ratios, cratios, exact_vals, inside, runs, refusals, shapes, cshapes = [], [], [], [], [], [], [], []
    for j, v in enumerate(pts):
        p, b, algo, T = _sweep_point(claim, problem, behaviour, over, v, rounds, values)
        runs.append((p, b, algo, T, seed + j))
        m = _measure(claim, p, b, algo, T, replicates, seed + j, _ENGINE[_check_exact(exact)], None)
        stats = _stats(claim, m.record, p, algo)
        stats.setdefault(over, np.full(m.record.replicates, v))
        stats.update(
            {k: np.full(m.record.replicates, float(x)) for k, x in (values or {}).items() if np.ndim(x) == 0}
        )
        for k, t0 in claim.holds_from.items():
            low = float(np.min(stats[k])) if k in stats else float("nan")
            if not low >= t0:
                raise ValueError(
                    f"points: at {over}={v:g} the run has {k}={low:g}, below "
                    f"holds_from[{k!r}]={t0:g} (the claim holds only from there)"
                )
        shape = float(np.mean(claim.bound_value(stats, values)))
        cshape = None if wrong is None else float(np.mean(claim.evaluate(wrong, stats, values)))
        if not (np.isfinite(shape) and shape > 0):
            raise ValueError(
                f"claim {claim.id!r}: its shape is {shape} at {over}={v:g} (must be finite and > 0)"
            )
        shapes.append(shape)
        cshapes.append(cshape)
        ratios.append(m.value / shape)
        cratios.append(None if cshape is None else m.value / cshape)
        exact_vals.append(m.exact)
        refusals.extend(why for _, why in m.refused_by)
        if claim.conditions:
            inside.append(all(ok for ok, _ in claim.check_conditions(stats, values).values()))
    if not all(exact_vals) and any(exact_vals):  # one engine per fit: the exact points by Monte Carlo too
        for j, (p, b, algo, T, sd) in enumerate(runs):
            if exact_vals[j]:
                mc = _measure(claim, p, b, algo, T, replicates, sd, "mc", None).samples
                ratios[j] = mc / shapes[j]
                cratios[j] = None if cshapes[j] is None else mc / cshapes[j]
                exact_vals[j] = False
    is_exact = all(exact_vals)

    def trend(rs):
        """(fit, upper bound of the slope, passed)."""
        if is_exact:
            f = fit_slope(pts, [float(r) for r in rs])
            return f, f.slope, f.slope <= tol
        f = bootstrap_slope(pts, [np.asarray(r, dtype=float) for r in rs], seed=seed, level=0.90)
        return f, f.ci[1], f.ci[1] <= tol

    fit, up, passed = trend(ratios)
    means = [float(np.mean(r)) for r in ratios]
    C = max(means)
    C_ucb = C if is_exact else max(upper_confidence_bound(r, level) for r in ratios)
    nc = None
    if wrong is not None:
        cfit, cup, cpassed = trend(cratios)
        nc = NegativeControl(
            description=f"{wrong_desc}: measured / that shape must not stay bounded",
            measured=cfit.slope,
            theoretical=tol,
            passed=cpassed,
        )
    method = (
        "exact moments" if is_exact else f"monte-carlo (R={replicates}), one-sided 95 % percentile bootstrap"
    )
    if refusals:
        method += f"; exact moments refused: {refusals[0]}"
    notes = [
        f"O-statement: {QUANTITIES[claim.measured]} ≤ C · ({sp.sstr(claim.expr(values))})",
        f"constant C ≈ {C:.4g}"
        + ("" if is_exact else f" ({level:.0%} UCB {C_ucb:.4g})")
        + f", largest at {over}={pts[int(np.argmax(means))]:g}",
    ]
    if claim.holds_from:
        notes.append("holds from " + ", ".join(f"{k} ≥ {v:g}" for k, v in claim.holds_from.items()))
    if claim.expect == "fails":
        passed = not passed
        notes.append("a false variant declared as expected to fail: PASS means the ratio grows")
    return Verdict(
        id=id or f"{claim.id}.order_{over}",
        claim=f"{claim.title}: O({sp.sstr(claim.expr(values))}) along {over}",
        reference=f"{claim.reference} [{claim.confidence}]",
        measured=fit.slope,
        ci=None if is_exact else (None, up),
        theoretical=tol,
        tolerance=(
            f"{'exact' if is_exact else 'one-sided 95 % bootstrap upper bound of the'} slope of "
            f"log(measured / shape) on log {over} ≤ {tol:g} (bounded ratio)"
        ),
        passed=passed,
        relation="<=",
        quantity="slope of measured / shape",
        method=method,
        notes="; ".join(notes),
        negative_control=nc,
        inside_conditions=None if not inside else all(inside),
        details={
            "over": over,
            "x": pts,
            "ratio": means,
            "constant": C,
            "constant_ucb": C_ucb,
            "quantity": claim.measured,
            "shape": sp.sstr(claim.expr(values)),
        },
    )


def _sympify_control(control: Any) -> sp.Expr:
    try:
        return sp.sympify(control, locals=dict(SYMBOLS))
    except (sp.SympifyError, TypeError) as exc:
        raise ValueError(f"control={control!r} must be 'auto', None or a sympy shape: {exc}") from None


def _verify_steps(claim: Claim, problem: Any, behaviour: Any, steps: Mapping[str, Any], kw: dict) -> Verdict:
    """``verify`` at the free steps ``steps`` (one value each, or a sweep: every combination)."""
    import dataclasses
    import itertools

    if kw["algorithm"] is not None:
        raise ValueError("steps=...: give the free steps or algorithm=..., not both")
    grid = {}
    for name, v in steps.items():
        if name not in ("eta", "eta_L"):
            raise ValueError(f"steps[{name!r}]: only 'eta' and 'eta_L' can be left free")
        if getattr(claim, name) is not None:
            raise ValueError(
                f"steps[{name!r}]: claim {claim.id!r} fixes {name}={getattr(claim, name)!r}; a step is "
                f"given only where the claim leaves it free ({name}=None)"
            )
        if not any(name in {str(x) for x in rel.free_symbols} for rel in claim.conditions.values()):
            raise ValueError(
                f"steps[{name!r}]: claim {claim.id!r} leaves {name} free but no condition bounds it — "
                f"state one (e.g. conditions={{'step': {name}*L <= 1}})"
            )
        vals = [float(x) for x in (v if np.ndim(v) else [v])]
        if not vals or not all(np.isfinite(x) and x > 0 for x in vals):
            raise ValueError(f"steps[{name!r}]={v!r} must be a positive step or a non-empty list of them")
        grid[name] = vals
    names = list(grid)
    combos = list(itertools.product(*(grid[n] for n in names)))
    runs = []
    for combo in combos:
        at = dataclasses.replace(claim, **dict(zip(names, combo, strict=True)))
        runs.append((combo, verify(at, problem, behaviour, **kw)))
    if len(runs) == 1:
        return runs[0][1]
    label = lambda c: ", ".join(f"{n}={x:g}" for n, x in zip(names, c, strict=True))  # noqa: E731
    inside = [(c, v) for c, v in runs if v.inside_conditions is not False]
    outside = [label(c) for c, v in runs if v.inside_conditions is False]
    if not inside:
        raise ValueError(f"steps={dict(steps)!r}: no swept step is inside claim {claim.id!r}'s conditions")
    failed = [(c, v) for c, v in inside if not v.passed]
    combo, worst = (failed or sorted(inside, key=lambda cv: cv[1].slack if cv[1].slack is not None else 0))[0]
    note = (
        f"for every step: {len(inside)} of {len(runs)} swept steps inside the conditions, "
        f"{len(inside) - len(failed)} hold; reported: {label(combo)}"
        + (f"; outside the conditions (not judged): {'; '.join(outside)}" if outside else "")
    )
    return dataclasses.replace(
        worst,
        passed=not failed,
        inside_conditions=True,
        notes="; ".join(x for x in (worst.notes, note) if x),
        details={**(worst.details or {}), "steps": {label(c): bool(v.passed) for c, v in inside}},
    )


# -------------------------------------------------------------------- checks with power over a user's file
#: what ``verify_latex`` compares each kept LaTeX entry with: the bound, a condition, a value or a step
_STEPS = ("eta", "eta_L")


def _latex_targets(claim: Claim) -> dict[str, Any]:
    """{LaTeX entry name: the claim's sympy object it transcribes} (``claim.latex``'s keys)."""
    out: dict[str, Any] = {}
    for k in claim.latex:
        if k == "bound":
            out[k] = dict(claim.bound)
        elif k in claim.conditions:
            out[k] = claim.conditions[k]
        elif k in claim.values:
            out[k] = sp.sympify(claim.values[k])
        elif k in _STEPS and isinstance(getattr(claim, k), (int, float, sp.Basic, str)):
            out[k] = sp.sympify(getattr(claim, k), locals=dict(SYMBOLS))
        else:
            raise ValueError(
                f"claim {claim.id!r}: latex[{k!r}] names no bound ('bound'), condition "
                f"({', '.join(claim.conditions) or 'none'}), value ({', '.join(claim.values) or 'none'}) "
                f"or step (eta, eta_L given as an expression) of the claim"
            )
    return out


def _points_differ(got: sp.Basic, want: Any, points: int, seed: int, rtol: float = 1e-9) -> str:
    """The empty string when ``got`` and ``want`` (an expression, a relation, or a dict of terms: their sum)
    agree to ``rtol`` at ``points`` random positive points (each symbol, by name, log-uniform in [0.1, 10]);
    a point where both sides are undefined (outside the formula's domain, e.g. (1 − η_L)^T at η_L > 1) is
    skipped, one where only one is undefined is a difference. Else the difference, at a named point."""
    if isinstance(want, Mapping):
        want = sp.Add(*want.values())
    want = sp.sympify(want)
    plain = lambda e: e.xreplace({x: sp.Symbol(str(x), positive=True) for x in e.free_symbols})  # noqa: E731
    rel = isinstance(got, sp.core.relational.Relational)
    pairs = [(got.lhs, want.lhs), (got.rhs, want.rhs)] if rel else [(got, want)]
    rng, seen = np.random.default_rng(seed), 0
    for g, w in pairs:
        g, w = plain(g), plain(w)
        syms = sorted({str(x) for x in g.free_symbols | w.free_symbols})
        xs = [sp.Symbol(n, positive=True) for n in syms]
        fg, fw = sp.lambdify(xs, g, "numpy"), sp.lambdify(xs, w, "numpy")
        for _ in range(points):
            x = np.exp(rng.uniform(np.log(0.1), np.log(10.0), len(xs)))
            with np.errstate(all="ignore"):
                a, b = complex(fg(*x)), complex(fw(*x))
            fa = np.isfinite(a) and a.imag == 0
            fb = np.isfinite(b) and b.imag == 0
            if not fa and not fb:
                continue
            at = ", ".join(f"{n}={v:.4g}" for n, v in zip(syms, x, strict=True))
            if fa != fb or not np.isclose(a.real, b.real, rtol=rtol, atol=0.0):
                sa, sb = (f"{c.real:.12g}" if ok else "undefined" for c, ok in ((a, fa), (b, fb)))
                return f"the LaTeX gives {sa} but the statement {sb} at {at}"
            seen += 1
    return "" if seen or points == 0 else f"no random point of {points} lies in the formula's domain"


def verify_latex(
    claim: Claim,
    symbols: Mapping[str, Any] | None = None,
    *,
    points: int = 20,
    seed: int = 0,
    id: str | None = None,
) -> Verdict:
    """The claim's sympy objects equal the printed formulas they transcribe (an independent transcription):
    for every entry of ``claim.latex`` — ``"bound"`` (the sum of the bound's terms), a condition's, a
    value's name, ``"eta"`` / ``"eta_L"`` (a step given as an expression) — the LaTeX, read again by
    ``claims.latex`` with the paper's table ``symbols``, equals the claim's object symbolically and at
    ``points`` random positive points (``latex.assert_bound_matches``, generator ``seed``).

    A slip in the sympy bound (a constant × 2, m for M, T·K for T in a step) fails this verdict however
    loose the bound is on a run; a slip made in the LaTeX itself is not caught (it is the reference). The
    negative control is the first entry with its (first) term doubled: the comparison must reject it.
    ``claim.latex`` is filled by ``Claim(bound=latex(...))`` or given as ``Claim(latex={"bound": r"..."})``;
    a claim without LaTeX is a ValueError."""
    from .latex import assert_bound_matches, latex

    if not isinstance(claim, Claim):
        raise TypeError(f"claim={claim!r} must be an afltheory.claims.Claim")
    points = check_int("points", points, low=1)
    seed = check_int("seed", seed, low=0)
    targets = _latex_targets(claim)
    if not targets:
        raise ValueError(
            f"claim {claim.id!r} carries no LaTeX: give the printed formula, Claim(bound=latex(r'...')) or "
            f"Claim(latex={{'bound': r'...'}}) (docs/claims_latex.md)"
        )

    def differs(src: str, target: Any) -> str:
        try:  # the symbolic comparison (and the same symbols on both sides)
            assert_bound_matches(src, target, symbols, points=0)
        except AssertionError as exc:
            return str(exc)
        return _points_differ(latex(src, symbols, strict=False).expr, target, points, seed)

    found = {k: differs(claim.latex[k], v) for k, v in targets.items()}
    bad = {k: why for k, why in found.items() if why}
    first = next(iter(targets))
    target = targets[first]
    if isinstance(target, dict):
        k0 = next(iter(target))
        doubled, what = {**target, k0: 2 * target[k0]}, f"{first}: term {k0!r} × 2"
    elif isinstance(target, sp.core.relational.Relational):
        doubled, what = type(target)(2 * target.lhs, target.rhs), f"{first}: left side × 2"
    else:
        doubled, what = 2 * target, f"{first} × 2"
    control = differs(claim.latex[first], doubled)
    notes = [f"compared: {', '.join(targets)}"]
    notes += [f"DIFFERS {k}: {why}" for k, why in bad.items()]
    return Verdict(
        id=id or f"{claim.id}.latex",
        claim=f"{claim.title}: the sympy statement equals its printed LaTeX",
        reference=f"{claim.reference} [{claim.confidence}]",
        measured=len(bad),
        theoretical=0,
        quantity="entries that differ from their LaTeX",
        tolerance=f"simplify(parsed − sympy) = 0 and rtol 1e-9 at {points} random points (seed {seed})",
        passed=not bad,
        relation="==",
        method="symbolic",
        derivation=True,
        notes="; ".join(notes),
        negative_control=NegativeControl(
            description=f"the same comparison with {what} (a transcription slip)",
            measured=1 if control else 0,
            theoretical=0,
            passed=not control,
        ),
        details={"latex": {k: claim.latex[k] for k in targets}, "differs": bad},
    )


def _reference_value(reference: Any, claim: Claim, stats: Mapping[str, np.ndarray], extra: dict) -> float:
    if callable(reference) and not isinstance(reference, sp.Basic):
        out = reference({k: float(np.mean(v)) for k, v in stats.items()})
    elif isinstance(reference, (int, float)) and not isinstance(reference, bool):
        out = reference
    else:
        try:
            expr = sp.sympify(reference, locals=dict(SYMBOLS))
        except (sp.SympifyError, TypeError) as exc:
            raise ValueError(
                f"reference={reference!r} must be a number, a sympy expression (or string) in the claim "
                f"symbols, or a callable of the run's values: {exc}"
            ) from None
        out = np.mean(claim.evaluate(expr, stats, extra))
    try:
        out = float(out)
    except (TypeError, ValueError):
        raise ValueError(f"reference={reference!r} gave {out!r}, not a number") from None
    if not np.isfinite(out):
        raise ValueError(f"reference={reference!r} is {out} on this run: it must be finite")
    return out


def _agrees(measured, is_exact: bool, ref: float, rtol: float, level: float) -> tuple[bool, float, tuple]:
    """(agrees, the measured value, ci): exact: |measured − ref| ≤ rtol |ref|; Monte Carlo: ref inside the
    two-sided ``level`` Student-t interval of the mean, widened by rtol |ref|."""
    from scipy import stats as st

    if is_exact:
        m = float(measured)
        return bool(abs(m - ref) <= rtol * abs(ref) + 1e-300), m, None
    s = np.asarray(measured, dtype=float)
    m, R = float(np.mean(s)), s.size
    half = float(st.t.ppf(0.5 + level / 2, R - 1) * np.std(s, ddof=1) / np.sqrt(R)) if R > 1 else np.inf
    return bool(abs(m - ref) <= half + rtol * abs(ref)), m, (m - half, m + half)


def verify_reference(
    claim: Claim,
    problem: Any,
    behaviour: Any,
    reference: Any,
    *,
    rounds: int,
    rtol: float = 1e-6,
    replicates: int = 8,
    seed: int = 0,
    x0: Any = None,
    values: Mapping[str, Any] | None = None,
    exact: bool | str = "auto",
    level: float = 0.99,
    id: str | None = None,
) -> Verdict:
    """The claim's measured quantity, run by the engines with the claim's rule and schedule, equals the
    user's INDEPENDENT value of it on this instance (a plain loop or a closed form written without
    afltheory, e.g. the recursion of E‖w_t − w*‖² on an isotropic quadratic) — two-sided, so a rule or
    schedule slip that a loose bound hides (the step one round late, a weight off by one) fails it.

    ``reference``: a number, a sympy expression (or string) in the claim symbols evaluated on the run's
    values like a bound (T, m, K, D0, sigma_L, ...), or a callable receiving those values as a dict of
    floats. Exact engine: |measured − reference| ≤ ``rtol`` |reference|; Monte Carlo: the reference inside
    the two-sided ``level`` t-interval of the mean (widened by ``rtol`` |reference|). The negative control
    is the same measurement one round short (``rounds − 1``) judged against the same reference: it must
    fail (the check resolves one round); at ``rounds=1`` there is none and the verdict says "no power"."""
    if not isinstance(claim, Claim):
        raise TypeError(f"claim={claim!r} must be an afltheory.claims.Claim")
    rounds = check_int("rounds", rounds, low=1)
    replicates = check_int("replicates", replicates, low=2)
    rtol = float(rtol)
    if not (np.isfinite(rtol) and 0.0 <= rtol < 1.0):
        raise ValueError(f"rtol={rtol!r} must be in [0, 1)")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level={level!r} must be in (0, 1)")
    extra = dict(values or {})

    def run(r):
        pv = problem_values(problem, x0)
        alg = claim.algorithm(
            {**pv, **_run_constants(behaviour, r), **_numbers(claim.values, pv), **extra},
            weights=getattr(problem, "weights", None),
        )
        rec, meas, is_exact, method = _run(claim, problem, behaviour, alg, r, replicates, seed, exact, x0)
        return rec, meas, is_exact, method, alg

    rec, meas, is_exact, method, alg = run(rounds)
    stats = _stats(claim, rec, problem, alg)
    stats.update({k: np.full(rec.replicates, float(v)) for k, v in extra.items() if np.ndim(v) == 0})
    ref = _reference_value(reference, claim, stats, extra)
    ok, m, ci = _agrees(meas, is_exact, ref, rtol, level)
    notes = [f"measured: {QUANTITIES[claim.measured]}", "reference: the user's independent value"]
    nc = None
    if rounds > 1:
        _, cmeas, cexact, _, _ = run(rounds - 1)
        cok, cm, _ = _agrees(cmeas, cexact, ref, rtol, level)
        nc = NegativeControl(
            description=f"the run one round short (T = {rounds - 1}) against the same reference",
            measured=cm,
            theoretical=ref,
            passed=cok,
        )
    else:
        notes.append("no power: at rounds=1 there is no shorter run to control against")
    tol = (
        f"|measured − reference| ≤ {rtol:g}·|reference|"
        if is_exact
        else (f"reference inside the two-sided {level:.0%} t-interval (+ {rtol:g}·|reference|)")
    )
    return Verdict(
        id=id or f"{claim.id}.reference",
        claim=f"{claim.title}: the run equals an independent reference on this instance",
        reference=f"{claim.reference} [{claim.confidence}]",
        measured=m,
        theoretical=ref,
        ci=ci,
        tolerance=tol,
        passed=ok,
        relation="~=",
        method=method,
        notes="; ".join(notes),
        negative_control=nc,
        details={"rounds": rounds, "rel_err": abs(m - ref) / abs(ref) if ref else abs(m), "rtol": rtol},
    )
