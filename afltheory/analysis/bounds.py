"""Bound-vs-empirical comparison.

The measured side is either an exact expectation (``exact=True``: no Monte Carlo error; the comparison is
measured ≤ bound) or per-replicate samples, summarized by their mean and a one-sided Student-t upper confidence
bound at ``level`` (default 99 %): UCB = mean + t_{level, R−1} · sd / √R. An upper-bound claim passes when
UCB ≤ bound. Slack ratio = bound / measured (mean); > 1 means the bound holds, and how loosely.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


def mean_ci(samples, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): two-sided Student-t interval of the mean."""
    s = np.asarray(samples, dtype=float).ravel()
    m = float(s.mean())
    if len(s) < 2:
        return m, m, m
    h = float(stats.t.ppf(0.5 + level / 2, len(s) - 1) * s.std(ddof=1) / np.sqrt(len(s)))
    return m, m - h, m + h


def upper_confidence_bound(samples, level: float = 0.99) -> float:
    """One-sided Student-t upper confidence bound of the mean (inf if a replicate diverged)."""
    s = np.asarray(samples, dtype=float).ravel()
    if not np.all(np.isfinite(s)):
        return float("inf")
    if len(s) < 2:
        return float(s.mean())
    return float(s.mean() + stats.t.ppf(level, len(s) - 1) * s.std(ddof=1) / np.sqrt(len(s)))


def slack_ratio(bound, measured) -> float:
    """bound / measured (inf if measured is 0)."""
    b, m = float(np.mean(bound)), float(measured)
    if m == 0:
        return float("inf")
    return b / m


@dataclass(frozen=True)
class BoundComparison:
    measured: float          # exact expectation or MC mean
    ucb: float               # = measured when exact
    bound: float
    slack: float             # bound / measured
    holds: bool              # ucb <= bound
    method: str
    level: float | None
    replicates: int

    @property
    def ci(self):
        return None if self.level is None else (None, self.ucb)


def compare_bound(measured, bound, *, exact: bool = False, level: float = 0.99) -> BoundComparison:
    """Compare a measured quantity with an upper bound.

    ``measured``: exact scalar (``exact=True``) or per-replicate samples. ``bound``: scalar or per-replicate
    (evaluated on each replicate's realized schedule); its mean over replicates is used (E[LHS] ≤ E[RHS]).
    """
    b = float(np.mean(bound))
    if exact:
        m = float(np.mean(measured))
        return BoundComparison(m, m, b, slack_ratio(b, m), bool(m <= b), "exact", None, 0)
    s = np.asarray(measured, dtype=float).ravel()
    m = float(s.mean()) if np.all(np.isfinite(s)) else float("inf")
    u = upper_confidence_bound(s, level)
    return BoundComparison(m, u, b, slack_ratio(b, m), bool(u <= b),
                           f"monte-carlo mean of {len(s)} replicates, one-sided {level:.0%} t-UCB", level, len(s))
