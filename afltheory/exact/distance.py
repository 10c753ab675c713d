"""Exact E‖x_t − x*‖² from the exact second-moment recursion (used by the compression claims).

It lives in ``afltheory.exact`` (not in ``afltheory.compression``, a lower layer: docs/DESIGN.md "Layers").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_int
from .moments import ExactSystem, _x0

if TYPE_CHECKING:
    from ..algorithms import ServerRule
    from ..anarchy import Behaviour
    from ..problems.quadratic import QuadraticProblem

__all__ = ["exact_distance_sq"]


def exact_distance_sq(
    problem: QuadraticProblem,
    algorithm: ServerRule,
    behaviour: Behaviour,
    rounds: int,
    x0: ArrayLike | None = None,
) -> np.ndarray:
    """Exact E‖x_t − x*‖², t = 0..rounds (the exact engine's second-moment recursion; linear compressors).

    ``x0``: the deterministic start point, shape (dim,) (default ``problem.default_x0()``)."""
    rounds = check_int("rounds", rounds, low=1)
    sys_ = ExactSystem(problem, algorithm, behaviour)
    S = sys_.initial(_x0(problem, x0))
    d = problem.dim
    out = np.empty(rounds + 1)
    out[0] = np.trace(S[1 : 1 + d, 1 : 1 + d])
    for t in range(rounds):
        S = sys_.step(S, t)
        out[t + 1] = np.trace(S[1 : 1 + d, 1 : 1 + d])
    return out
