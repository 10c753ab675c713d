"""Shares of a bound's named terms (docs/DESIGN.md "Verdict power": terms, not totals).

A bound ``theory.theoremK.bound_terms(...)`` returns ordered ``{name: values}`` (scalar or per replicate) that
sum to the bound. A bound verdict compares a measured mean with the *mean* bound over replicates, so a term's
share is mean(term) / mean(total).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_array, check_real

__all__ = ["dominant_term", "format_shares", "term_shares"]


def term_shares(terms: Mapping[str, ArrayLike]) -> dict[str, float]:
    """{name: mean(term) / mean(Σ terms)} in the terms' order; the shares sum to 1.

    Raises ``ValueError`` if ``terms`` is empty, a term is negative or non-finite, or the total is not > 0.
    """
    if not isinstance(terms, Mapping):
        raise TypeError(f"terms={terms!r} (type {type(terms).__name__}) must be a mapping {{name: values}}")
    if not terms:
        raise ValueError("terms is empty; expected at least one named term")
    means = {}
    for name, v in terms.items():
        a = as_array(f"terms[{name!r}]", v)
        if a.size == 0 or not np.all(np.isfinite(a)):
            raise ValueError(
                f"terms[{name!r}] (term {name!r}) is empty or has non-finite values; allowed: "
                f"finite numbers >= 0"
            )
        if np.any(a < 0):
            raise ValueError(f"terms[{name!r}]: term {name!r}={a.min()} is negative; allowed: values >= 0")
        means[name] = float(a.mean())
    total = float(np.sum(list(means.values())))
    if not (total > 0 and np.isfinite(total)):
        raise ValueError(f"the terms sum to {total}; allowed: a finite total > 0")
    return {name: v / total for name, v in means.items()}


def dominant_term(terms: Mapping[str, ArrayLike]) -> tuple[str, float]:
    """(name, share) of the largest term (first one on ties)."""
    shares = term_shares(terms)
    name = max(shares, key=lambda k: shares[k])
    return name, shares[name]


def format_shares(shares: Mapping[str, float], min_share: float = 0.005) -> str:
    """ "sigma_G_floor 94%, transient 5%, ..." (largest first; terms below ``min_share`` omitted)."""
    if not isinstance(shares, Mapping):
        raise TypeError(f"shares={shares!r} (type {type(shares).__name__}) must be a mapping {{name: share}}")
    min_share = check_real("min_share", min_share)
    shares = {k: check_real(f"shares[{k!r}]", v, low=0.0) for k, v in shares.items()}
    items = sorted(shares.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v:.0%}" if v >= 0.01 else f"{k} {v:.1%}" for k, v in items if v >= min_share)
