"""Run statistics of a realized Schedule that the bounds need, plus argument checks for ``bound(...)``."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import sympy as sp

from .. import _faults
from .._validation import check_array, check_real
from ._condition import pos

#: The public names every theorem module with a numeric bound on a run defines (Theorems 2–4 through
#: ``_afa.THEOREM_API``, Yu et al.'s ``yu_local_sgd``): its conditions, step sizes, bound and named terms.
BOUND_API = (
    "admissible_step_sizes",
    "bound",
    "bound_expr",
    "bound_terms",
    "CITATION",
    "conditions",
    "rate",
    "SPECS",
    "TERMS",
)


def check_schedule(schedule, num_workers=None):
    from afltheory.anarchy.schedule import Schedule  # local import keeps theory importable on its own

    if not isinstance(schedule, Schedule):
        raise ValueError(f"schedule must be an afltheory Schedule, got {type(schedule).__name__}")
    if schedule.rounds < 1:
        raise ValueError(f"T={schedule.rounds} (schedule.rounds) is outside the allowed range [1, inf]")
    if num_workers is not None:
        M = num_workers
        if isinstance(M, bool) or not isinstance(M, (int, np.integer)):
            raise ValueError(f"num_workers={M!r} must be an integer")
        if M != schedule.num_workers:
            raise ValueError(f"num_workers={M} differs from schedule.num_workers={schedule.num_workers}")
    if schedule.m > schedule.num_workers:  # pragma: no cover - Schedule already forbids it
        raise ValueError(f"m={schedule.m} exceeds num_workers={schedule.num_workers}")
    return schedule


def check_constants(constants):
    for name in ("L", "sigma_L", "sigma_G", "f_star"):
        if not hasattr(constants, name):
            raise ValueError(f"constants lacks {name!r} (missing symbol)")
    L = pos("constants.L", constants.L)
    sL = check_real("constants.sigma_L", constants.sigma_L, low=0.0)
    sG = check_real("constants.sigma_G", constants.sigma_G, low=0.0)
    fs = check_real("constants.f_star", constants.f_star)
    return L, sL, sG, fs


def check_f0(f0, f_low, R, name="f0", low_name="f_star"):
    if f0 is None:
        raise ValueError(f"{name} is required (missing symbol {name!r})")
    f = check_array(name, f0) if np.ndim(f0) else np.asarray(check_real(name, f0))
    f = np.broadcast_to(f, (R,)) if f.ndim == 0 else f
    if f.shape != (R,):
        raise ValueError(f"{name} must be a scalar or have shape (replicates,)=({R},), got {f.shape}")
    f_low = np.broadcast_to(np.asarray(f_low, dtype=float), (R,))
    if np.any(f < f_low):
        raise ValueError(f"{name}={f.min()} is below {low_name}={f_low.max()}; f(x_0) >= {low_name} required")
    return f.astype(float)


def tau_for(schedule, tau):
    if tau is None:
        return schedule.tau.astype(float)
    t = check_real("tau", tau, low=0.0)
    if np.any(schedule.tau > t):
        raise ValueError(f"tau={t} is below the realized maximum delay {schedule.tau.max()}")
    return np.full(schedule.replicates, t)


_LAMBDAS: dict = {}


def terms_in_force(term_exprs: Mapping[str, sp.Expr]) -> Mapping[str, sp.Expr]:
    """A theorem's ``TERM_EXPRS`` as every reader sees them (numeric terms, ``bound_expr``, ``alpha_exprs``,
    a ``Claim`` stating them): themselves, or under an injected bound-term mutant (``afltheory.mutants``)
    its mis-transcribed copy."""
    fault = _faults.get(_faults.FaultPoint.THEORY_TERMS)  # None unless a mutant is injected
    return term_exprs if fault is None else fault(term_exprs)


def evaluate_terms(
    term_exprs: Mapping[str, sp.Expr], stats: Mapping[str, Any]
) -> dict[str, float | np.ndarray]:
    """{name: value} of the sympy terms ``term_exprs`` on ``stats`` (symbol name -> number or array, arrays
    broadcast): the one numeric evaluation of a theorem's bound — its constants live only in the sympy
    terms."""
    term_exprs = terms_in_force(term_exprs)
    out = {}
    for name, e in term_exprs.items():
        key = (name, e)
        if key not in _LAMBDAS:
            syms = sorted(e.free_symbols, key=str)
            _LAMBDAS[key] = (syms, sp.lambdify(syms, e, "numpy"))
        syms, f = _LAMBDAS[key]
        val = f(*(stats[str(x)] for x in syms))
        shape = np.broadcast_shapes(*(np.shape(stats[str(x)]) for x in syms)) if syms else ()
        out[name] = np.broadcast_to(np.asarray(val, dtype=float), shape).copy() if shape else float(val)
    return out


def sum_terms(terms):
    """The bound as the ordered sum of its named terms (so ``bound == sum(bound_terms)`` exactly)."""
    it = iter(terms.values())
    total = np.array(next(it), dtype=float, copy=True)
    for v in it:
        total = total + v
    return total


def memory_stats(schedule):
    """AFA-CS slots: (staleness, K) each (R, T, M) and m'_t (R, T)."""
    stale, Ks = schedule.memory()
    return stale, Ks.astype(float), (stale == 0).sum(axis=-1)


def bound_from_terms(
    bound_terms: Callable[..., dict[str, Any]],
    doc: str,
    returns: str = "np.ndarray",
    total: Callable[[Any], Any] | None = None,
) -> Callable[..., Any]:
    """``bound``: the ordered sum of ``bound_terms`` (``sum_terms``, so ``bound == sum(bound_terms)``
    exactly; ``total`` converts it, e.g. ``float``), with the same signature (returning ``returns``) and its
    own docstring. Theorems 2–4, Yu et al.'s theorem and Lemma 1's drift bound are built by it."""

    @functools.wraps(bound_terms)
    def bound(*args, **kwargs):
        out = sum_terms(bound_terms(*args, **kwargs))
        return out if total is None else total(out)

    bound.__name__ = bound.__qualname__ = bound_terms.__name__.replace("_terms", "")
    bound.__doc__ = doc
    bound.__signature__ = inspect.signature(bound_terms).replace(return_annotation=returns)
    bound.__annotations__ = {**bound_terms.__annotations__, "return": returns}
    del bound.__wrapped__
    return bound
