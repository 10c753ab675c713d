"""Shared helpers for the checks: quiet simulation, exact-or-Monte-Carlo expectations, verdict builders."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

import afltheory as aft
from afltheory.analysis import compare_bound
from afltheory.checks import NegativeControl, Verdict, fmt

UCB_LEVEL = 0.99


def sim(problem, algorithm, behaviour, rounds, replicates, seed, x0=None, record_x=False):
    """``aft.simulate`` with divergence/region warnings silenced (checks report divergence themselves)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return aft.simulate(problem, algorithm, behaviour, rounds=rounds, replicates=replicates, seed=seed,
                            x0=x0, record_x=record_x)


def exact_moments(problem, algorithm, behaviour, rounds, x0=None):
    """``afltheory.exact.moments`` if it exists and applies to this configuration, else None."""
    try:
        from afltheory.exact import moments
    except Exception:  # module not available (yet)
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return moments(problem, algorithm, behaviour, rounds, x0=x0)
    except (TypeError, ValueError, NotImplementedError):
        return None


@dataclass
class Expectation:
    """E‖∇f(x_t)‖² curve (T+1,) and the time average (1/T) Σ_{t<T}; exact or MC (then ``samples`` per
    replicate)."""

    curve: np.ndarray
    time_avg: float
    samples: np.ndarray | None     # per-replicate time averages (MC) or None (exact)
    method: str
    trace: object = None

    @property
    def exact(self) -> bool:
        return self.samples is None


def expectation(problem, algorithm, behaviour, rounds, replicates, seed, x0=None, prefer_exact=True,
                T_avg=None) -> Expectation:
    T_avg = rounds if T_avg is None else T_avg
    if prefer_exact:
        mom = exact_moments(problem, algorithm, behaviour, rounds, x0=x0)
        if mom is not None:
            g = np.asarray(mom.grad_norm_sq, dtype=float)
            return Expectation(g, float(g[:T_avg].mean()), None, "exact moments")
    tr = sim(problem, algorithm, behaviour, rounds, replicates, seed, x0=x0)
    s = tr.grad_norm_sq[:, :T_avg].mean(axis=1)
    return Expectation(tr.grad_norm_sq.mean(axis=0), float(s.mean()), s,
                       f"monte-carlo (R={replicates})", tr)


def bound_verdict(id, claim, reference, measured, bound, *, exact=False, control_factor=100.0, figures=(),
                  notes="", details=None, method=None, level=UCB_LEVEL, inside_conditions=None) -> Verdict:
    """Upper-bound verdict with the negative control "the bound divided by ``control_factor``"."""
    cmp = compare_bound(measured, bound, exact=exact, level=level)
    ctl = compare_bound(measured, np.asarray(bound) / control_factor, exact=exact, level=level)
    nc = NegativeControl(description=f"same measurement against bound/{control_factor:g}",
                         measured=cmp.measured,
                         theoretical=ctl.bound, passed=ctl.holds)
    ci = None if exact else (None, cmp.ucb)
    tol = "exact ≤ bound" if exact else f"one-sided {level:.0%} t-UCB ≤ bound"
    return Verdict(id=id, claim=claim, reference=reference, measured=cmp.measured, ci=ci,
                   theoretical=cmp.bound,
                   tolerance=tol, passed=cmp.holds, figures=tuple(figures), negative_control=nc,
                   relation="<=",
                   slack=cmp.slack, method=method or cmp.method, notes=notes, details=details or {},
                   inside_conditions=inside_conditions)


def plot_bound_verdicts(ctx, name, verdicts, title):
    """One bar figure ``ctx.fig(name)`` of measured vs bound for ``verdicts`` (labels = the part of the id
    after the dot). The verdicts name the figure when they are built (``figures=[ctx.fig(name)[1]]``)."""
    from afltheory.plots import bound_plot

    path, _ = ctx.fig(name)
    bound_plot(path, [v.id.split(".", 1)[1] for v in verdicts], [v.measured for v in verdicts],
               [v.theoretical for v in verdicts], ucb=[v.ci[1] for v in verdicts], title=title)


__all__ = ["UCB_LEVEL", "Expectation", "bound_verdict", "exact_moments", "expectation", "fmt",
           "plot_bound_verdicts", "sim"]
