"""The probability law of one round of a behaviour, as the exact-moments engine needs it.

A round-mode behaviour is usable for exact moments when, independently across rounds and of the iterates,
(i) the arrival set M_t has known first- and pairwise-inclusion probabilities π_i, π_ij (``inclusion``),
(ii) each arrival's delay is drawn independently given (t, worker) from a known bounded pmf, and
(iii) each arrival's local-step count K is drawn independently given the worker from a known finite pmf;
arrivals, delays and K independent of each other. Everything else is refused with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_alloc, check_int
from ..algorithms.local import LocalView

if TYPE_CHECKING:
    from ..anarchy.behaviour import BehaviourLike

__all__ = ["ExactUnavailable", "MAX_LOCAL_STEPS", "round_law", "RoundLaw", "SIMULATE_HINT"]

SIMULATE_HINT = "use the Monte Carlo engine afltheory.simulate(...) instead"


class ExactUnavailable(ValueError):
    """The behaviour (or the state size) does not allow exact moments; the message says why."""


@dataclass(frozen=True)
class RoundLaw:
    """π: (M,), π_ij: (M, M) with π_ii = π_i; ``delay_pmf(t, i)`` -> probabilities over τ = 0..len−1;
    ``k_pmf[i]`` / ``k_init_pmf[i]``: {K: prob} for round arrivals / the AFA-CS warm start."""

    m: int
    pi: np.ndarray
    pij: np.ndarray
    delay_pmf: Callable[[int, int], np.ndarray]
    history: int  # number of stored models: max_delay + 1
    k_pmf: tuple
    k_init_pmf: tuple
    time_invariant_from: int  # delay_pmf(t, ·) is the same for every t >= this …
    stationary: bool  # … known to hold (built-in delays); else compared round by round


def _components(behaviour):
    hook = getattr(behaviour, "round_components", None)
    parts = None if hook is None else hook()
    if parts is None:
        raise ExactUnavailable(
            f"behaviour={behaviour!r}: exact moments need a round-mode Behaviour (or "
            "Synchronous) whose arrivals, delays and local steps are i.i.d. across "
            f"rounds; replayed schedules and event-driven clocks are not — {SIMULATE_HINT}"
        )
    return parts


#: Largest number of local steps the exact engine accepts (checked before any pmf or local map is built).
MAX_LOCAL_STEPS = 100_000


def _check_pmf(name, p, n_max):
    p = np.asarray(p, dtype=float)
    if (
        p.ndim != 1
        or p.size < 1
        or p.size > n_max
        or np.any(p < 0)
        or not np.isclose(p.sum(), 1.0, atol=1e-9)
    ):
        raise ExactUnavailable(
            f"{name} returned {p!r}; expected probabilities over 0..{n_max - 1} summing to 1"
        )
    return p / p.sum()


def round_law(
    behaviour: BehaviourLike,
    num_workers: int,
    fixed_local_steps: LocalView | int | tuple[int, ...] | None = None,
) -> RoundLaw:
    """Extract the per-round law of ``behaviour`` for ``num_workers`` workers, or raise
    ``ExactUnavailable``. ``fixed_local_steps``: the rule's local view (``ServerRule.local_view(M)``), or its
    ``fixed_local_steps`` hook value (None, an int or one int per worker, read by ``LocalView.of_steps``); a
    fixed count replaces the behaviour's K."""
    arrivals, delays, steps = _components(behaviour)
    M = check_int("num_workers", num_workers, low=1)
    check_alloc(f"num_workers={M} (pairwise inclusion probabilities)", 8.0 * 4 * M * M)
    if isinstance(fixed_local_steps, LocalView):
        if fixed_local_steps.num_workers != M:
            raise ValueError(
                f"fixed_local_steps: the local view was built for num_workers={fixed_local_steps.num_workers}"
                f"; expected num_workers={M}"
            )
        view = fixed_local_steps
    else:
        view = LocalView.of_steps(fixed_local_steps, M)
    arrivals.validate(M)
    try:
        inc = arrivals.inclusion(M)
    except ValueError as exc:
        raise ExactUnavailable(f"arrivals={arrivals!r}: {exc} — {SIMULATE_HINT}") from None
    if inc is None:
        raise ExactUnavailable(
            f"arrivals={arrivals!r} are not i.i.d. across rounds (no exact inclusion probabilities): the "
            f"arrival set depends on the past, so the moment recursion does not close — {SIMULATE_HINT}"
        )
    pi, pij = (np.asarray(a, dtype=float) for a in inc)
    if pi.shape != (M,) or pij.shape != (M, M):
        raise ExactUnavailable(
            f"arrivals={arrivals!r}.inclusion returned shapes {pi.shape}, {pij.shape}; "
            f"expected ({M},), ({M}, {M})"
        )

    D = getattr(delays, "max_delay", None)
    if D is None or not np.isfinite(D):
        raise ExactUnavailable(
            f"delays={delays!r} have unbounded support; exact moments need a bounded "
            f"max_delay — {SIMULATE_HINT}"
        )
    D = int(D)
    H = D + 1
    try:
        delays.check_workers(M)
    except ValueError as exc:
        raise ExactUnavailable(f"delays={delays!r}: {exc}") from None
    if delays.worker_pmf(0, 0) is None:
        raise ExactUnavailable(
            f"delays={delays!r} expose no per-arrival pmf(t) (not i.i.d. per arrival) — {SIMULATE_HINT}"
        )
    if delays.per_worker:  # the law depends on the arriving worker (PerWorkerDelay)
        wcache: dict[tuple[int, int], np.ndarray] = {}

        def delay_pmf(t, i):
            if (t, i) not in wcache:
                p = delays.worker_pmf(t, i)
                _check_pmf(f"delays.worker_pmf({t}, {i})", p, min(t, D) + 1)
                wcache[t, i] = np.asarray(p, dtype=float)  # validated, used as given
            return wcache[t, i]
    else:
        cache: dict[int, np.ndarray] = {}

        def delay_pmf(t, i):
            if t not in cache:
                cache[t] = _check_pmf(f"delays.pmf({t})", delays.pmf(t), min(t, D) + 1)
            return cache[t]

    K_max = view.max_steps if view.steps is not None else getattr(steps, "K_max", None)
    if K_max is not None and K_max > MAX_LOCAL_STEPS:
        which = "local_steps" if view.steps is None else "fixed_local_steps"
        raise ExactUnavailable(
            f"{which}: local steps up to K={K_max} exceed the exact engine's limit of "
            f"{MAX_LOCAL_STEPS} (its K-step local maps cost O(K·dim³) per worker) — {SIMULATE_HINT}"
        )
    if view.steps is not None:  # the rule fixes K_i (AsySG: 1; DynamicFedAvg: its epochs E_k)
        kp = tuple({int(k): 1.0} for k in view.steps)
        kp0 = kp
    else:
        if steps.pmf(0) is None:
            raise ExactUnavailable(
                f"local_steps={steps!r} expose no per-arrival pmf (time-varying or history-dependent K) — "
                f"{SIMULATE_HINT}"
            )
        kp = []
        for i in range(M):
            p = steps.pmf(i)
            if (
                not p
                or any(int(k) != k or k < 1 or v < 0 for k, v in p.items())
                or not np.isclose(sum(p.values()), 1.0, atol=1e-9)
            ):
                raise ExactUnavailable(
                    f"local_steps.pmf({i})={p!r} must be a finite pmf over integers K >= 1"
                )
            kp.append({int(k): float(v) for k, v in p.items() if v > 0})
        kp = tuple(kp)
        kp0 = kp  # the warm start draws K from the policy at round 0 (sample_initial), i.e. pmf(i)
    return RoundLaw(
        m=int(arrivals.m),
        pi=pi,
        pij=pij,
        delay_pmf=delay_pmf,
        history=H,
        k_pmf=kp,
        k_init_pmf=kp0,
        time_invariant_from=D,
        stationary=delays.time_invariant,
    )
