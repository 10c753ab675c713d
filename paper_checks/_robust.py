"""NaN-safe aggregation for verdicts (issue 30 item 5): Python's ``min``/``max`` silently drop a NaN that is
not first (``min([2.0, nan]) == 2.0``) and a diverged run's ``inf`` can pass a ``≥`` criterion, so a verdict
that aggregates over runs, slopes or z-scores uses these instead: any non-finite value makes the aggregate
the failing extreme."""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["finite_max", "finite_min"]


def finite_min(values: Iterable[float]) -> float:
    """The minimum of ``values``, or ``-inf`` if any is NaN or ±inf (for a criterion ``min ≥ threshold``:
    a diverged or undefined run fails it). Empty input: ValueError."""
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("values is empty: there is nothing to aggregate")
    return -math.inf if not all(math.isfinite(v) for v in vals) else min(vals)


def finite_max(values: Iterable[float]) -> float:
    """The maximum of ``values``, or ``+inf`` if any is NaN or ±inf (for a criterion ``max ≤ threshold``,
    e.g. max |z| or a control's best slope: an undefined value never looks good). Empty input: ValueError."""
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("values is empty: there is nothing to aggregate")
    return math.inf if not all(math.isfinite(v) for v in vals) else max(vals)
