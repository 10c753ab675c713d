"""Shared helpers for the checks: quiet simulation and exact-or-Monte-Carlo expectations."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

import afltheory as aft
from afltheory.claims.verify import QuantityUnavailable, run_engines


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
    """``afltheory.exact.moments`` of this configuration, or None when the exact engine refuses it (one of
    ``afltheory.claims.verify.REFUSALS``, through the one dispatcher ``run_engines``); any other error —
    a TypeError or ValueError inside the exact engine — propagates: a bug is never read as a refusal."""
    try:
        return run_engines(problem, algorithm, behaviour, rounds, "exact", read=lambda m: m, x0=x0).record
    except QuantityUnavailable:
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
    #: (engine, reason) for each engine that refused before the one that answered (``run_engines``)
    refused_by: tuple = ()

    @property
    def exact(self) -> bool:
        return self.samples is None


def expectation(
    problem, algorithm, behaviour, rounds, replicates, seed, x0=None, prefer_exact=True, T_avg=None
) -> Expectation:
    """E‖∇f(x_t)‖² by the exact engine ("auto": Monte Carlo only when it refuses, ``REFUSALS``) or, with
    ``prefer_exact=False``, by ``replicates`` Monte Carlo runs (``afltheory.claims.verify.run_engines``)."""
    T_avg = rounds if T_avg is None else T_avg
    run = run_engines(
        problem,
        algorithm,
        behaviour,
        rounds,
        "auto" if prefer_exact else "mc",
        read=lambda rec: np.asarray(rec.grad_norm_sq, dtype=float),
        replicates=replicates,
        seed=seed,
        x0=x0,
    )
    if run.exact:
        g = run.value
        return Expectation(g, float(g[:T_avg].mean()), None, "exact moments")
    tr = run.record
    s = tr.grad_norm_sq[:, :T_avg].mean(axis=1)
    return Expectation(
        tr.grad_norm_sq.mean(axis=0), float(s.mean()), s, f"monte-carlo (R={replicates})", tr, run.refused_by
    )


__all__ = ["Expectation", "exact_moments", "expectation", "sim"]
