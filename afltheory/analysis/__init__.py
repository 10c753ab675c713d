"""Statistics of runs against theory: log–log slope fits with bootstrap CIs, bound comparisons, term shares.

A low layer (docs/DESIGN.md "Layers"): statistics over arrays; it imports only ``afltheory._validation``, so
every other layer may use it. ``Verdict`` lives in ``afltheory.checks`` (no longer re-exported here).
``fit_slope`` / ``bootstrap_slope``: least-squares slope of log y on log x, with a percentile bootstrap CI
over replicates. ``compare_bound``: measured (exact expectation, or Monte Carlo mean with a one-sided
Student-t upper confidence bound) against an upper bound; slack = bound / measured;
``lower_confidence_bound`` the one-sided lower bound. ``z_score`` / ``z_interval``: a Monte Carlo mean against
a reference value (z = (mean − value)/se); ``max_abs_z`` / ``min_abs_z`` aggregate several (NaN-safe);
``column_z``, ``z_ratio``, ``bonferroni_z``, ``gaussian_law_z`` (``ztests``): z-tests against closed forms.
``affine_fit`` / ``semilog_slope``: a straight line in y, or in log y.
"""

from .bounds import (
    BoundComparison,
    compare_bound,
    default_control,
    lower_confidence_bound,
    max_abs_z,
    mean_ci,
    min_abs_z,
    slack_ratio,
    upper_confidence_bound,
    z_interval,
    z_score,
)
from .slopes import (
    AffineFit,
    SlopeFit,
    affine_fit,
    bootstrap_slope,
    fit_slope,
    local_slopes,
    rate_fit,
    semilog_slope,
)
from .terms import dominant_term, format_shares, term_shares
from .ztests import bonferroni_z, column_z, gaussian_law_z, z_ratio

__all__ = [
    "AffineFit",
    "BoundComparison",
    "SlopeFit",
    "affine_fit",
    "bonferroni_z",
    "bootstrap_slope",
    "column_z",
    "compare_bound",
    "default_control",
    "dominant_term",
    "fit_slope",
    "format_shares",
    "gaussian_law_z",
    "local_slopes",
    "lower_confidence_bound",
    "max_abs_z",
    "mean_ci",
    "min_abs_z",
    "rate_fit",
    "semilog_slope",
    "slack_ratio",
    "term_shares",
    "upper_confidence_bound",
    "z_interval",
    "z_ratio",
    "z_score",
]
