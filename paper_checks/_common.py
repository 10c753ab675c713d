"""Shared helpers for the checks: quiet simulation and exact-or-Monte-Carlo expectations."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

import afltheory as aft


def sim(problem, algorithm, behaviour, rounds, replicates, seed, x0=None, record_x=False):
    """``aft.simulate`` with divergence/region warnings silenced (checks report divergence themselves)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return aft.simulate(
            problem,
            algorithm,
            behaviour,
            rounds=rounds,
            replicates=replicates,
            seed=seed,
            x0=x0,
            record_x=record_x,
        )


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
    samples: np.ndarray | None  # per-replicate time averages (MC) or None (exact)
    method: str
    trace: object = None

    @property
    def exact(self) -> bool:
        return self.samples is None


def expectation(
    problem, algorithm, behaviour, rounds, replicates, seed, x0=None, prefer_exact=True, T_avg=None
) -> Expectation:
    T_avg = rounds if T_avg is None else T_avg
    if prefer_exact:
        mom = exact_moments(problem, algorithm, behaviour, rounds, x0=x0)
        if mom is not None:
            g = np.asarray(mom.grad_norm_sq, dtype=float)
            return Expectation(g, float(g[:T_avg].mean()), None, "exact moments")
    tr = sim(problem, algorithm, behaviour, rounds, replicates, seed, x0=x0)
    s = tr.grad_norm_sq[:, :T_avg].mean(axis=1)
    return Expectation(tr.grad_norm_sq.mean(axis=0), float(s.mean()), s, f"monte-carlo (R={replicates})", tr)


__all__ = ["Expectation", "exact_moments", "expectation", "sim"]
