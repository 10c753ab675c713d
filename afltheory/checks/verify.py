"""Verify *your own* claim in a few lines, with the same statistics, controls and report as the paper's
checks. DEPRECATED (kept for one release): state the theorem as an ``afltheory.claims.Claim`` and use
``afltheory.claims.verify`` / ``verify_rate`` — any measured quantity, step-size schedules, client weights, an
open symbol set; these two functions emit a ``DeprecationWarning``.

``verify_bound(problem, algorithm, behaviour, bound, *, rounds, replicates, ...) -> Verdict``: an upper bound
on (1/T) Σ_{t<T} E‖∇f(x_t)‖², given as a callable ``bound(trace) -> float or (replicates,)`` or as a sympy
expression in the schedule statistics below (evaluated on each replicate's realized schedule, then averaged).
Measured: the exact time average when ``afltheory.exact`` applies (``exact="auto"``/True), else the one-sided
99 % Student-t upper confidence bound of the Monte Carlo mean over replicates; passed iff measured ≤ bound.
Negative control (must fail): ``control`` (a plausible wrong claim, same form as ``bound``), or for a sympy
sum by default ``analysis.default_control`` (the bound with its dominant term halved), judged by the same
criterion; when it cannot fail the verdict has no control and its notes say "no power" and why — a true
claim is never reported FAIL because of its control.

``conditions=`` means the same in both functions: None, a bool, an iterable of ``theory`` Condition objects
(``.holds``), or a callable of the statistics dict (``verify_rate`` adds the swept value under the key
``over``) returning bools.

``verify_rate(problem, algorithm, behaviour, *, over, values, slope, ...) -> Verdict``: a claimed log–log
slope of (1/T) Σ E‖∇f(x_t)‖² in T, m, K, M or a step size, with a 95 % percentile bootstrap CI over replicates
(or the exact slope); ``problem``/``algorithm``/``behaviour``/``rounds`` may be callables of the swept value.
Negative control: the same fit against a wrong slope (default: claimed + 0.5).

Schedule statistics (sympy symbols of ``afltheory.theory.symbols``; per replicate):
``T`` rounds, ``m`` arrivals per round, ``M`` workers, ``tau`` max delay, ``K`` max local steps,
``Kbar`` = (1/T Σ_t 1/K̄_t)⁻¹ (K̄_t the harmonic mean over the arrivals), ``Ktilde`` = (1/T) Σ_t K̃_t (mean),
``Khat2`` = (1/T) Σ_t K̂_t² (mean square), ``eta``, ``eta_L`` (the algorithm's), ``L``, ``sigma_L``,
``sigma_G`` (the problem's certified constants), ``f_0`` = f(x_0), ``f_*``, ``Delta`` = f_0 − f_*.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy as sp

from .._validation import check_component, check_int
from ..analysis.bounds import compare_bound, default_control
from ..analysis.slopes import rate_fit
from ..theory import symbols as S
from .verdict import NegativeControl, Verdict

__all__ = ["SCHEDULE_SYMBOLS", "evaluate_bound", "schedule_statistics", "verify_bound", "verify_rate"]

#: the symbols a sympy bound may use (name -> symbol)
SCHEDULE_SYMBOLS = {str(s): s for s in S.RUN}


def schedule_statistics(trace: Any, problem: Any, algorithm: Any) -> dict[str, np.ndarray]:
    """Per replicate, the schedule statistics of ``SCHEDULE_SYMBOLS`` for a ``simulate`` trace."""
    from ..engine import Trace
    from ..problems import Problem

    check_component("trace", trace, Trace, "an afltheory Trace (afltheory.simulate(...))")
    check_component("problem", problem, Problem, "an afltheory.problems Problem")
    s = trace.schedule
    R = trace.replicates
    c = problem.constants
    f0 = np.broadcast_to(np.asarray(problem.value(trace.x0), dtype=float), (R,))
    full = lambda v: np.full(R, float(v))  # noqa: E731
    return {
        "T": full(s.rounds),
        "m": full(s.m),
        "M": full(s.num_workers),
        "tau": s.tau.astype(float),
        "K": s.local_steps.max(axis=(1, 2)).astype(float),
        "Kbar": 1.0 / np.mean(1.0 / s.K_harmonic, axis=1),
        "Ktilde": s.K_mean.mean(axis=1),
        "Khat2": s.K_sq_mean.mean(axis=1),
        "eta": full(getattr(algorithm, "eta", np.nan)),
        "eta_L": full(getattr(algorithm, "eta_L", np.nan)),
        "L": full(c.L),
        "sigma_L": full(c.sigma_L),
        "sigma_G": full(c.sigma_G),
        "f_0": f0.copy(),
        "f_*": full(c.f_star),
        "Delta": f0 - c.f_star,
    }


def _as_expr(bound: Any) -> sp.Expr | None:
    if isinstance(bound, (int, float, np.floating, np.integer)) and not isinstance(bound, bool):
        return sp.Float(float(bound))
    if isinstance(bound, sp.Basic):
        return bound
    if isinstance(bound, str):
        return sp.sympify(bound, locals=dict(SCHEDULE_SYMBOLS, f0=S.f0, f_star=S.f_star))
    return None


def evaluate_bound(bound: Any, trace: Any, stats: dict[str, np.ndarray], name: str = "bound") -> np.ndarray:
    """``bound`` on each replicate: a number, a callable of the trace, or a sympy expression (or string) in
    ``SCHEDULE_SYMBOLS`` (ValueError naming an unknown symbol)."""
    R = trace.replicates
    expr = _as_expr(bound)
    if expr is None:
        if not callable(bound):
            raise TypeError(f"{name}={bound!r} must be a callable bound(trace) or a sympy expression")
        out = np.asarray(bound(trace), dtype=float)
        return np.broadcast_to(out, (R,)).copy()
    unknown = sorted(str(s) for s in expr.free_symbols if str(s) not in SCHEDULE_SYMBOLS)
    if unknown:
        raise ValueError(f"{name} uses unknown symbol(s) {unknown}; allowed: {', '.join(SCHEDULE_SYMBOLS)}")
    syms = sorted(expr.free_symbols, key=str)
    f = sp.lambdify(syms, expr, "numpy")
    out = np.asarray(f(*(stats[str(s)] for s in syms)), dtype=float)
    return np.broadcast_to(out, (R,)).copy()


def _inside(conditions: Any, stats: dict[str, np.ndarray]) -> bool | None:
    if conditions is None:
        return None
    if isinstance(conditions, (bool, np.bool_)):
        return bool(conditions)
    if callable(conditions):
        return bool(np.all(conditions(stats)))
    items = list(conditions)
    return all(bool(getattr(c, "holds", c)) for c in items)


def _measure(problem, algorithm, behaviour, rounds, replicates, seed, exact, x0):
    """(trace, measured samples or exact value, is_exact, method)."""
    from ..engine import simulate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = simulate(
            problem, algorithm, behaviour, rounds=rounds, replicates=replicates, seed=seed, x0=x0
        )
    if exact not in (True, False, "auto"):
        raise ValueError(f"exact={exact!r} must be True, False or 'auto'")
    if exact is not False:
        from ..exact import moments

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mom = moments(problem, algorithm, behaviour, rounds, x0=x0)
            return trace, float(np.mean(mom.grad_norm_sq[:rounds])), True, "exact moments"
        except (TypeError, ValueError, NotImplementedError) as exc:
            if exact is True:
                raise ValueError(f"exact=True but exact moments are unavailable: {exc}") from exc
    return trace, trace.time_average(), False, f"monte-carlo (R={replicates})"


def _sum_terms(expr: sp.Expr) -> list[sp.Expr]:
    return list(sp.Add.make_args(sp.expand(expr))) if isinstance(expr, sp.Add) else [expr]


def verify_bound(
    problem: Any,
    algorithm: Any,
    behaviour: Any,
    bound: Any,
    *,
    rounds: int,
    replicates: int,
    seed: int = 0,
    claim: str = "user bound on (1/T) Σ E‖∇f(x_t)‖²",
    id: str = "user.bound",
    reference: str = "user claim",
    conditions: Any = None,
    control: Any = None,
    control_description: str | None = None,
    exact: bool | str = "auto",
    level: float = 0.99,
    x0: Any = None,
) -> Verdict:
    """Verdict on "(1/T) Σ_{t<T} E‖∇f(x_t)‖² ≤ bound" for this configuration (see the module docstring).

    ``conditions``: the claim's hypotheses — None (not stated), a bool, a callable of the statistics dict, or
    an iterable of ``theory`` Condition objects (``.holds``); reported as ``inside_conditions``. ``control``:
    a plausible wrong bound that must fail (callable or sympy); default for a sympy sum: the bound without its
    dominant term. ``terms``: each additive term's share of a sympy bound at the measured point."""
    warnings.warn(
        "verify_bound is deprecated: state a Claim and use afltheory.claims.verify",
        DeprecationWarning,
        stacklevel=2,
    )
    rounds = check_int("rounds", rounds, low=1)
    replicates = check_int("replicates", replicates, low=2)
    trace, measured, is_exact, method = _measure(
        problem, algorithm, behaviour, rounds, replicates, seed, exact, x0
    )
    stats = schedule_statistics(trace, problem, algorithm)
    b = evaluate_bound(bound, trace, stats)
    cmp = compare_bound(measured, b, exact=is_exact, level=level)
    expr = _as_expr(bound)
    terms = None
    nc = None
    no_power = ""
    control_desc = "the user's control bound"
    if expr is not None and isinstance(sp.expand(expr), sp.Add):
        per = {str(t): evaluate_bound(t, trace, stats, "term") for t in _sum_terms(expr)}
        vals = {k: float(np.mean(v)) for k, v in per.items()}
        tot = sum(vals.values())
        terms = {k: v / tot for k, v in vals.items()} if tot else None
        if control is None and terms:  # the same default control (and criterion) as afltheory.claims
            ccmp, desc = default_control(measured, per, exact=is_exact, level=level)
            if ccmp is None:
                no_power = desc
            else:
                nc = NegativeControl(
                    description=control_description or desc,
                    measured=ccmp.measured,
                    theoretical=ccmp.bound,
                    passed=ccmp.holds,
                )
    if control is not None:
        cb = evaluate_bound(control, trace, stats, "control")
        ccmp = compare_bound(measured, cb, exact=is_exact, level=level)
        nc = NegativeControl(
            description=control_description or control_desc,
            measured=ccmp.measured,
            theoretical=ccmp.bound,
            passed=ccmp.holds,
        )
    tol = "exact ≤ bound" if is_exact else f"one-sided {level:.0%} t-UCB ≤ bound"
    notes = "bound averaged over the replicates' realized schedules" + (
        f"; {no_power}"
        if no_power
        else ""
        if nc is not None
        else "; no negative control given (pass control=...)"
    )
    return Verdict(
        id=id,
        claim=claim,
        reference=reference,
        measured=cmp.measured,
        ci=None if is_exact else (None, cmp.ucb),
        theoretical=cmp.bound,
        tolerance=tol,
        passed=cmp.holds,
        relation="<=",
        slack=cmp.slack,
        method=method,
        notes=notes,
        inside_conditions=_inside(conditions, stats),
        terms=terms,
        negative_control=nc,
        details={
            "rounds": rounds,
            "replicates": replicates,
            "seed": seed,
            "bound_expr": None if expr is None else str(expr),
        },
    )


def _at(v: Any, value: Any) -> Any:
    return (
        v(value)
        if callable(v)
        and not hasattr(v, "aggregate")
        and not hasattr(v, "sample")
        and not hasattr(v, "constants")
        else v
    )


def verify_rate(
    problem: Any,
    algorithm: Any,
    behaviour: Any,
    *,
    over: str,
    values: Sequence[float],
    slope: float,
    replicates: int,
    rounds: int | Callable | None = None,
    seed: int = 0,
    tol: float = 0.0,
    wrong: float | None = None,
    exact: bool | str = "auto",
    claim: str | None = None,
    id: str = "user.rate",
    reference: str = "user claim",
    conditions: Any = None,
) -> Verdict:
    """Verdict on "(1/T) Σ E‖∇f(x_t)‖² ∝ ``over``^``slope``" across ``values`` (see the module docstring).
    ``over`` names the swept quantity ("T", "m", "K", "M", "eta_L", ...; for "T" the rounds are the values).
    Passed iff the 95 % bootstrap CI (widened by ``tol``) contains ``slope`` (exact: |fit − slope| ≤ tol)."""
    warnings.warn(
        "verify_rate is deprecated: state a Claim with rate={...} and use afltheory.claims.verify_rate",
        DeprecationWarning,
        stacklevel=2,
    )
    if not isinstance(over, str) or not over:
        raise ValueError(f"over={over!r} must name the swept quantity (e.g. 'T', 'm', 'K', 'M', 'eta_L')")
    values = [float(v) for v in values]
    if len(values) < 3:
        raise ValueError(f"values={values} must have at least 3 points")
    replicates = check_int("replicates", replicates, low=2)
    samples, exact_vals, inside = [], [], []
    for j, v in enumerate(values):
        T = int(v) if over == "T" else (rounds(v) if callable(rounds) else rounds)
        if T is None:
            raise ValueError("rounds is required unless over='T'")
        p, a, b = _at(problem, v), _at(algorithm, v), _at(behaviour, v)
        tr, meas, is_exact, _ = _measure(p, a, b, int(T), replicates, seed + j, exact, None)
        samples.append(tr.time_average())
        exact_vals.append(meas if is_exact else None)
        if conditions is not None:  # as in verify_bound: the stats dict, plus the swept value
            st = dict(schedule_statistics(tr, p, a))
            st[over] = np.full(tr.replicates, v)
            inside.append(_inside(conditions, st))
    wrong = slope + 0.5 if wrong is None else float(wrong)
    fit, method, tolerance = rate_fit(values, samples, exact_vals, claimed=slope, tol=tol, seed=seed)
    nc = NegativeControl(
        description=f"same fit tested against the wrong slope {wrong:g}",
        measured=fit.slope,
        theoretical=wrong,
        passed=fit.contains(wrong, tol),
    )
    return Verdict(
        id=id,
        claim=claim or f"error ∝ {over}^({slope:g})",
        reference=reference,
        measured=fit.slope,
        ci=fit.ci,
        theoretical=slope,
        tolerance=tolerance,
        passed=fit.contains(slope, tol),
        method=method,
        negative_control=nc,
        inside_conditions=None if not inside else all(inside),
        details={"over": over, "x": values, "y": [float(y) for y in fit.y]},
    )
