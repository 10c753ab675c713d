"""No power -> a way to power (issue #39 item 7): when no control of a verdict can fail, name the instance in
the claim's class that brings measured/bound closest to 1, and its ratio.

A bound that holds with slack s cannot see an error smaller than s; the user then needs an instance where
the claim is tight. ``tightest_instance`` runs a cheap, fixed search over the claim's open sizes that keeps
the claim's class and problem: the horizon T (the verdict's rounds, T/4 and T/16, never below 1 — cheaper
than the verdict itself) and the start x_0 (the verdict's, and x* + 10 (x_0 − x*): a start farther from the
optimum makes an initial-distance term dominate; only where x* is known). Each candidate is judged by
``claims.verify`` itself without a control (so the search never recurses), and a candidate outside the
claim's conditions or scope is skipped (the instance must be in the class). The result is the candidate
with the largest measured/bound (> 1: a violation found by the search), with its rounds, start scale and
engine. Five candidates at most, costing at most 1 + 2·(1/4 + 1/16) ≈ 1.6 times the verdict's own run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["ROUND_FRACTIONS", "START_SCALES", "describe", "tightest_instance"]

#: the horizons searched, as fractions of the verdict's rounds
ROUND_FRACTIONS = (1.0, 0.25, 0.0625)
#: the starts searched: x* + scale (x_0 − x*)
START_SCALES = (1.0, 10.0)


def tightest_instance(
    verify: Callable[..., Any],
    claim: Any,
    problem: Any,
    behaviour: Any,
    *,
    rounds: int,
    x0: Any,
    kwargs: dict[str, Any],
) -> dict[str, Any] | None:
    """The candidate (module docstring) with the largest measured/bound, as {"rounds", "x0_scale", "ratio",
    "measured", "bound", "method", "searched"}; None when no candidate could be judged. ``verify`` is
    ``claims.verify`` (passed in: this module sits below it); ``kwargs`` are the verdict's other arguments
    (replicates, seed, values, exact, level), reused unchanged; the verdict's own instance (rounds, scale 1)
    is not re-run: its ratio comes in ``kwargs["own"]`` = (measured, bound)."""
    kw = {k: v for k, v in kwargs.items() if k != "own"}
    x_star = getattr(problem.constants, "x_star", None)
    start = np.asarray(problem.default_x0() if x0 is None else x0, dtype=float)
    scales = START_SCALES if x_star is not None and start.ndim == 1 else START_SCALES[:1]
    best, searched = None, 0
    own = kwargs.get("own")
    if own is not None and own[1] > 0:
        best = _entry(rounds, 1.0, own[0], own[1], "the verdict's own run")
    for frac in ROUND_FRACTIONS:
        T = max(1, int(round(rounds * frac)))
        for scale in scales:
            if T == rounds and (scale == 1.0 or frac != 1.0):
                continue  # the verdict itself, or a horizon that rounds back to it
            x = start if scale == 1.0 else np.asarray(x_star, dtype=float) + scale * (start - x_star)
            try:
                v = verify(claim, problem, behaviour, rounds=T, x0=x, control=None, **kw)
            except (ValueError, TypeError, ArithmeticError):  # a candidate the engines refuse: skipped
                continue
            searched += 1
            if v.inside_conditions is False:  # outside the claim's conditions or scope: not in the class
                continue
            m, b = float(v.measured), float(v.theoretical)
            if not (np.isfinite(m) and np.isfinite(b)) or b <= 0:
                continue
            e = _entry(T, scale, m, b, v.method)
            if best is None or e["ratio"] > best["ratio"]:
                best = e
    if best is None:
        return None
    best["searched"] = searched
    return best


def _entry(T: int, scale: float, m: float, b: float, method: str) -> dict[str, Any]:
    return {
        "rounds": int(T),
        "x0_scale": float(scale),
        "ratio": m / b,
        "measured": m,
        "bound": b,
        "method": method,
    }


def describe(best: dict[str, Any]) -> str:
    """One sentence for the verdict's notes."""
    start = "the verdict's x_0" if best["x0_scale"] == 1.0 else f"x_0 = x* + {best['x0_scale']:g}·(x_0 − x*)"
    return (
        f"tightest instance found in the class (a search of {best['searched']} others over T and the start): "
        f"rounds={best['rounds']}, {start}: measured/bound = {best['ratio']:.3g}"
    )
