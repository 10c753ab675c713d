"""Shared machinery for the corollary slope checks: runs at η_L = 1/√T, η = √(nK), the measured statistic
(time average, or the stationary tail average for a run started at x*), bootstrap slopes, and the slopes a
real mistake would produce (the negative controls)."""

from __future__ import annotations

import numpy as np

from afltheory.analysis import bootstrap_slope, fit_slope
from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay, UniformArrivals, UniformDelay
from afltheory.checks import ControlMeasurement, SlopeIn, Verdict

from ._common import expectation

#: slope a plausible implementation mistake gives, per swept variable, when the claim is −1/2:
#: T — the server step not scaled with T (η_L missing: error constant in T); m — the arrivals not averaged
#: (one arrival, or the noise of one worker): noise ∝ ηη_L ∝ √m; K — the K gradients not averaged (sum, or the
#: last gradient): noise ∝ √K.
MISTAKE_SLOPE = {"T": 0.0, "m": 0.5, "K": 0.5, "M": 0.0}
MISTAKE_DESC = {
    "T": "step not scaled with T (η_L missing)",
    "m": "arrivals not averaged (one worker's noise)",
    "K": "K gradients not averaged (sum or last gradient)",
    "M": "no speedup in M",
}


def corollary_run(
    problem, algo_cls, arrivals, m, K, T, R, seed, tau=0, n_eta=None, prefer_exact=True, x0=None
):
    """(1/T) Σ E‖∇f(x_t)‖² per replicate (MC) or exact, with η_L = 1/√T and η = √(n K) (n = m, or M for
    AFA-CS)."""
    n = m if n_eta is None else n_eta
    beh = Behaviour(
        arrivals if arrivals is not None else UniformArrivals(m),
        UniformDelay(tau) if tau else NoDelay(),
        ConstantSteps(K),
    )
    algo = algo_cls(float(np.sqrt(n * K)), float(1 / np.sqrt(T)))
    return expectation(problem, algo, beh, T, R, seed, prefer_exact=prefer_exact, x0=x0), beh, algo


def statistic(ex, T, kind="time_avg", offset=0.0):
    """(value, per-replicate samples or None) of an ``Expectation``: "time_avg" (1/T) Σ_{t<T}, or "tail" the
    mean over t ∈ [T/2, T); minus ``offset`` (e.g. a floor)."""
    if kind not in ("time_avg", "tail"):
        raise ValueError(f"kind={kind!r} must be 'time_avg' or 'tail'")
    lo = 0 if kind == "time_avg" else T // 2
    if ex.exact:
        return float(np.mean(ex.curve[lo:T])) - offset, None
    s = ex.trace.grad_norm_sq[:, lo:T].mean(axis=1) - offset
    return float(s.mean()), s


def slope_verdict(
    id,
    claim,
    ref,
    xs,
    values,
    theory,
    *,
    key,
    seed,
    fig,
    tol=0.03,
    notes="",
    details=None,
    inside_conditions=None,
    terms=None,
):
    """Slope with a 95 % bootstrap CI over replicates (MC) or the exact slope within ``tol``.

    ``values``: list of (value, samples or None) per x. Negative control: the same test against the slope of
    the nearest real mistake (``MISTAKE_SLOPE[key]``)."""
    exact = all(s is None for _, s in values)
    if exact:
        fit = fit_slope(xs, [v for v, _ in values])
        method = "exact moments"
        tolerance = f"|slope − ({theory})| ≤ {tol}"
    else:
        samples = [s if s is not None else np.full(8, v) for v, s in values]
        fit = bootstrap_slope(xs, samples, seed=seed, level=0.95)
        method = f"monte-carlo (R={len(samples[0])}), 95 % percentile bootstrap over replicates"
        tolerance = f"95 % bootstrap CI (widened by {tol}) contains {theory}"
    wrong = MISTAKE_SLOPE[key]
    nc = ControlMeasurement(
        description=f"same fit against slope {wrong:+g}, what a real mistake gives ({MISTAKE_DESC[key]})",
        measured=fit.slope,
        theoretical=wrong,
        stats={"ci": fit.ci},
    )
    head = "" if inside_conditions is not False else "outside the conditions (exploratory); "
    return Verdict.judged(
        id=id,
        claim=claim,
        reference=ref,
        measured=fit.slope,
        ci=fit.ci,
        theoretical=theory,
        criterion=SlopeIn(tol=tol, text=tolerance),
        stats={"ci": fit.ci},
        figures=(fig,) if fig else (),
        control=nc,
        method=method,
        quantity="slope",
        notes=head + (notes + "; " if notes else "") + fit.summary(),
        inside_conditions=inside_conditions,
        terms=terms,
        details=dict(details or {}, x=list(map(float, xs)), y=list(map(float, fit.y))),
    ), fit
