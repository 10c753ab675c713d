"""Analysis of runs against theory: verdicts, log–log slope fits with bootstrap CIs, bound comparisons.

``Verdict``: one claim's outcome (measured, CI, theoretical, tolerance, passed, figures, negative control),
JSON-serializable. ``fit_slope`` / ``bootstrap_slope``: least-squares slope of log y on log x, with a
percentile bootstrap CI over replicates. ``compare_bound``: measured (exact expectation, or Monte Carlo mean
with a one-sided Student-t upper confidence bound) against an upper bound; slack = bound / measured.
"""

from ..checks.verdict import NegativeControl, Verdict, verdicts_from_json, verdicts_to_json
from .bounds import (
    BoundComparison,
    compare_bound,
    default_control,
    mean_ci,
    slack_ratio,
    upper_confidence_bound,
)
from .slopes import SlopeFit, bootstrap_slope, fit_slope, local_slopes
from .terms import dominant_term, format_shares, term_shares

__all__ = [
    "default_control",
    "BoundComparison", "NegativeControl", "SlopeFit", "Verdict", "bootstrap_slope", "compare_bound",
    "dominant_term", "fit_slope", "format_shares", "local_slopes", "mean_ci", "slack_ratio", "term_shares",
    "upper_confidence_bound",
    "verdicts_from_json", "verdicts_to_json",
]
