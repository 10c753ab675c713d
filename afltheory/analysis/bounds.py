"""Bound-vs-empirical comparison.

The measured side is either an exact expectation (``exact=True``: no Monte Carlo error; the comparison is
measured ≤ bound) or per-replicate samples, summarized by their mean and a one-sided Student-t upper
confidence bound at ``level`` (default 99 %): UCB = mean + t_{level, R−1} · sd / √R. An upper-bound claim
passes when UCB ≤ bound. Slack ratio = bound / measured (mean); > 1 means the bound holds, and how loosely.

With fewer than two replicates there is no confidence bound: ``upper_confidence_bound`` and ``compare_bound``
refuse (``ValueError``) rather than report the single sample as a UCB, and ``mean_ci`` returns the infinite
interval. Calibration (tests/analysis/test_confidence.py): on Gaussian samples whose true mean equals the
bound, the 99 % procedure passes in 1.0 % of 20 000 repetitions (a false bound at the boundary).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .. import _faults
from .._validation import as_array, check_real

__all__ = [
    "BoundComparison",
    "compare_bound",
    "default_control",
    "lower_confidence_bound",
    "max_abs_z",
    "mean_ci",
    "min_abs_z",
    "slack_ratio",
    "upper_confidence_bound",
    "z_interval",
    "z_score",
]


def _samples(samples, name="samples") -> np.ndarray:
    s = as_array(name, samples).ravel()
    if s.size == 0:
        raise ValueError(f"{name} is empty: need at least 2 replicates for a confidence bound")
    if np.any(np.isnan(s)):
        raise ValueError(f"{name} contains NaN (a diverged replicate must be reported as inf, not NaN)")
    return s


def _mean_sd(s: np.ndarray) -> tuple[float, float]:
    """(mean, sample standard deviation; 0 for one sample) of finite samples without spurious overflow:
    samples near the float range are scaled by a power of two (exact) first, so a sum overflowing to inf
    never turns into inf − inf = NaN."""
    big = float(np.abs(s).max()) if s.size else 0.0
    scale = float(np.ldexp(1.0, np.frexp(big)[1] - 1)) if big > 2.0**500 else 1.0
    u = s / scale
    sd = float(u.std(ddof=1)) if len(u) > 1 else 0.0
    with np.errstate(over="ignore"):
        return float(u.mean()) * scale, sd * scale


def _check_level(level) -> float:
    return check_real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)


def mean_ci(samples: ArrayLike, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): two-sided Student-t interval of the mean; (mean, -inf, inf) with one sample (no
    interval exists), (inf, inf, inf) if a replicate diverged."""
    s = _samples(samples)
    level = _check_level(level)
    if not np.all(np.isfinite(s)):
        return float("inf"), float("inf"), float("inf")
    m, sd = _mean_sd(s)
    if len(s) < 2:
        return m, float("-inf"), float("inf")
    # zero spread: a degenerate interval (never t-quantile · 0, which is NaN when the quantile is ±inf)
    h = 0.0 if sd == 0 else float(stats.t.ppf(0.5 + level / 2, len(s) - 1) * sd / np.sqrt(len(s)))
    return m, m - h, m + h


def _z_parts(samples: ArrayLike) -> tuple[np.ndarray, float, float]:
    s = _samples(samples)
    if s.size < 2:
        raise ValueError(f"samples has {s.size} value(s): a standard error needs at least 2")
    if not np.all(np.isfinite(s)):
        return s, float("inf"), float("inf")
    return s, float(s.mean()), float(s.std(ddof=1) / np.sqrt(s.size))


def z_score(samples: ArrayLike, value: float) -> tuple[float, float]:
    """(z, se): the Monte Carlo mean of ``samples`` against a reference ``value``, z = (mean − value)/se with
    se = sample sd/√n (n ≥ 2). A diverged replicate gives (inf, inf); zero spread gives z = 0 when the mean
    equals ``value`` and ±inf otherwise (never NaN)."""
    v = check_real("value", value)
    s, m, se = _z_parts(samples)
    if not np.isfinite(m):
        return float("inf"), float("inf")
    d = s.mean() - v
    if se == 0:
        return (0.0 if d == 0 else float(np.copysign(np.inf, d))), 0.0
    return float(d / se), se


def z_interval(samples: ArrayLike, z: float) -> tuple[float, float]:
    """(mean − z·se, mean + z·se): the normal-approximation interval of the mean (se = sample sd/√n, n ≥ 2;
    (inf, inf) if a replicate diverged)."""
    zz = check_real("z", z, low=0.0)
    s, m, se = _z_parts(samples)
    if not np.isfinite(m):
        return float("inf"), float("inf")
    mm = s.mean()
    return float(mm - zz * se), float(mm + zz * se)


def _t_bound(samples: ArrayLike, level: float, side: int) -> float:
    """mean + side · t_{level, R−1} · sd / √R (side = +1 upper, −1 lower): inf if a replicate diverged, the
    mean itself with zero spread (never t-quantile · 0 = NaN at an extreme level), ValueError below 2."""
    s = _samples(samples)
    level = _check_level(level)
    if len(s) < 2:
        raise ValueError(
            f"samples has {len(s)} replicate: a one-sided {level:.0%} confidence bound needs "
            "at least 2 replicates (use more replicates, or the exact engine with exact=True)"
        )
    if not np.all(np.isfinite(s)):
        return float("inf")
    m, sd = _mean_sd(s)
    if sd == 0:
        return m
    q = float(stats.t.ppf(level, len(s) - 1))
    # the upper bound's quantile: None unless a statistics mutant is injected
    fault = _faults.get(_faults.FaultPoint.STATS_UCB_QUANTILE) if side > 0 else None
    if fault is not None:
        q = fault(level, len(s))
    with np.errstate(over="ignore"):
        return float(m + side * q * sd / np.sqrt(len(s)))


def upper_confidence_bound(samples: ArrayLike, level: float = 0.99) -> float:
    """One-sided Student-t upper confidence bound of the mean (inf if a replicate diverged).

    Refuses (``ValueError``) with fewer than 2 samples: one sample has no confidence bound, and reporting it
    as one lets a bound 20 % below the true mean "hold" in ~15 % of seeds."""
    return _t_bound(samples, level, +1)


def lower_confidence_bound(samples: ArrayLike, level: float = 0.99) -> float:
    """One-sided Student-t lower confidence bound of the mean: mean − t_{level, R−1} · sd / √R (inf if a
    replicate diverged: the mean is infinite; the mean itself with zero spread). Fewer than 2 samples:
    ``ValueError``, as for ``upper_confidence_bound``."""
    return _t_bound(samples, level, -1)


def _z_values(zs: ArrayLike) -> np.ndarray:
    z = np.abs(np.asarray(list(zs) if not isinstance(zs, np.ndarray) else zs, dtype=float).ravel())
    if z.size == 0:
        raise ValueError("zs is empty: there is no z-score to aggregate")
    return z


def max_abs_z(zs: ArrayLike) -> float:
    """The largest |z| of several z-scores (a claim "every |z| ≤ z_max"); a NaN counts as +inf (an undefined
    comparison never looks like agreement). Empty input: ``ValueError``."""
    z = _z_values(zs)
    return float("inf") if np.isnan(z).any() else float(z.max())


def min_abs_z(zs: ArrayLike) -> float:
    """The smallest |z| of several z-scores (a control that must disagree everywhere: "min |z| > z_max"); a
    NaN counts as 0 (an undefined comparison never looks like a detected disagreement). Empty input:
    ``ValueError``."""
    z = _z_values(zs)
    return 0.0 if np.isnan(z).any() else float(z.min())


def slack_ratio(bound: float, measured: float) -> float:
    """bound / measured (inf if measured is 0; 0 if measured is inf, i.e. diverged)."""
    bnd, mm = as_array("bound", bound), as_array("measured", measured)
    if bnd.size == 0 or np.isnan(bnd).any():
        raise ValueError(f"bound must be a non-empty number or array without NaN, got {bound!r}")
    if mm.size != 1 or np.isnan(mm).any():
        raise ValueError(f"measured={measured!r} must be one number without NaN (a diverged run is inf)")
    with np.errstate(over="ignore", invalid="ignore"):
        b, m = float(np.mean(bnd)), float(mm.reshape(()))
    if np.isnan(b):  # +inf and -inf terms: no mean exists
        raise ValueError(f"bound={bound!r} mixes +inf and -inf: its mean is undefined")
    if m == 0:
        return float("inf")
    if not np.isfinite(m):
        return 0.0
    return b / m


@dataclass(frozen=True)
class BoundComparison:
    measured: float  # exact expectation or MC mean
    ucb: float  # = measured when exact
    bound: float
    slack: float  # bound / measured
    holds: bool  # ucb <= bound
    method: str
    level: float | None
    replicates: int

    @property
    def ci(self) -> tuple[None, float] | None:
        """The one-sided interval (None, ucb) at ``level``, or None for an exact measurement."""
        return None if self.level is None else (None, self.ucb)


def compare_bound(
    measured: ArrayLike, bound: float, *, exact: bool = False, level: float = 0.99
) -> BoundComparison:
    """Compare a measured quantity with an upper bound.

    ``measured``: exact scalar (``exact=True``) or per-replicate samples. ``bound``: scalar or per-replicate
    (evaluated on each replicate's realized schedule); its mean over replicates is used (E[LHS] ≤ E[RHS]).
    Monte Carlo ``measured`` needs ≥ 2 replicates (``ValueError`` otherwise: one sample has no confidence
    bound).
    """
    bnd = as_array("bound", bound)
    if bnd.size == 0 or np.any(np.isnan(bnd)):
        raise ValueError(f"bound must be a non-empty number or array without NaN, got {bound!r}")
    with np.errstate(over="ignore", invalid="ignore"):
        b = float(np.mean(bnd))
    if np.isnan(b):
        raise ValueError(f"bound={bound!r} mixes +inf and -inf: its mean is undefined")
    level = _check_level(level)
    if exact:
        mm = as_array("measured", measured)
        if mm.size == 0 or np.any(np.isnan(mm)):
            raise ValueError(
                f"measured must be a number without NaN (a divergent run is inf), got {measured!r}"
            )
        m = float(np.mean(mm))
        return BoundComparison(m, m, b, slack_ratio(b, m), bool(m <= b), "exact", None, 0)
    s = _samples(measured, "measured")
    m = _mean_sd(s)[0] if np.all(np.isfinite(s)) else float("inf")
    u = upper_confidence_bound(s, level)
    return BoundComparison(
        m,
        u,
        b,
        slack_ratio(b, m),
        bool(u <= b),
        f"monte-carlo mean of {len(s)} replicates, one-sided {level:.0%} t-UCB",
        level,
        len(s),
    )


def default_control(
    measured: ArrayLike, terms: dict, *, exact: bool = False, level: float = 0.99, T: ArrayLike | None = None
) -> tuple[BoundComparison | None, str]:
    """The default negative control of an upper bound given as named terms, judged by ``compare_bound`` (the
    criterion that judges the claim): a plausible wrong claim that FAILS on correct code, or None with the
    reason ("no power").

    Tried in order: the bound with its dominant term halved (a factor-2 error in the term that matters
    most); then, when ``T`` is given (the claim states a rate in T and the dominant term depends on T), the
    dominant term half an order faster (× T^(−1/2)). Returns (the failing comparison, its description) or
    (None, why no control can fail here)."""
    if not terms:
        raise ValueError("terms must name at least one term of the bound")
    vals = {k: np.asarray(v, dtype=float) for k, v in terms.items()}
    total = sum(vals.values())
    dom = (_faults.get(_faults.FaultPoint.CONTROL_TERM) or max)(vals, key=lambda k: float(np.mean(vals[k])))
    tries = [(f"the bound with its dominant term {dom} halved (a factor-2 error)", total - 0.5 * vals[dom])]
    if T is not None:
        Tv = np.asarray(T, dtype=float)
        tries.append(
            (
                f"the dominant term {dom} half an order faster in T (× T^(−1/2))",
                total - vals[dom] * (1 - 1 / np.sqrt(Tv)),
            )
        )
    for desc, cb in tries:
        cmp = compare_bound(measured, cb, exact=exact, level=level)
        if not cmp.holds:
            return cmp, desc
    m = float(np.mean(np.asarray(measured, dtype=float)))
    slack = float(np.mean(total)) / m if m > 0 else float("inf")
    return None, (
        "no power: every default control still holds ("
        + "; ".join(d for d, _ in tries)
        + f") — the bound has slack {slack:.3g}× here, so this check cannot see a factor-2 error "
        "in a term; pass control=... or choose an instance where the dominant term is attained"
    )
