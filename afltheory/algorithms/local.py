"""A rule's per-worker local computation, normalized once (issue 27 item 3).

A server rule may fix each arrival's local-step count (``fixed_local_steps``: None — the schedule's K —, an
int, or one int per worker, e.g. DynamicFedAvg's epochs E_k) and give each worker its own local step size
(``local_step_sizes(M)``, e.g. DynamicFedAvg's μ/E_k; None — the rule's η_L). ``local_view(rule, M)`` reads
both hooks once and returns a ``LocalView``: per-worker arrays of length M (validated, ValueError naming the
hook), and ``apply(schedule)``, the schedule every backend runs (K_{t,i} = K_i). ``simulate`` and the torch
backend read the rule through it, so ``int | tuple | None`` is interpreted in this one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int
from ..anarchy.schedule import Schedule

__all__ = ["LocalView", "local_view"]


@dataclass(frozen=True, eq=False)
class LocalView:
    """The per-worker local computation of a rule for ``num_workers`` workers.

    ``steps``: (M,) int64 local-step counts K_i fixed by the rule (read-only), or None (the schedule's K);
    ``uniform_steps``: the common K when every worker has the same fixed count, else None;
    ``step_sizes``: (M,) float per-worker local step sizes η_i when they differ between workers, else None
    (the rule's η_L applies to every worker)."""

    num_workers: int
    steps: np.ndarray | None
    uniform_steps: int | None
    step_sizes: np.ndarray | None

    @classmethod
    def of_steps(cls, fixed_local_steps: int | tuple[int, ...] | None, num_workers: int) -> LocalView:
        """The view of a rule that fixes only its local-step counts (``fixed_local_steps``: None, an int or
        one int per worker; no per-worker step sizes), read by the one normalizer ``local_view`` uses."""
        M = check_int("num_workers", num_workers, low=1)
        steps, uniform = _fixed_steps(fixed_local_steps, M)
        return _view(M, steps, uniform, None)

    @property
    def max_steps(self) -> int | None:
        """The largest fixed local-step count K_i, or None (the schedule's K)."""
        return None if self.steps is None else int(self.steps.max())

    def worker_step_sizes(self, eta_L: float) -> np.ndarray:
        """(M,) the local step size of each worker: the per-worker η_i, or the rule's ``eta_L`` for all."""
        if self.step_sizes is None:
            return np.full(self.num_workers, float(eta_L))
        return np.array(self.step_sizes, dtype=float)

    def apply(self, sched: Schedule) -> Schedule:
        """``sched`` with every arrival's K set to the rule's fixed count (``sched`` itself when the rule
        fixes none). The result is valid by construction (counts ≥ 1), so it is not re-validated."""
        if self.steps is None:
            return sched
        if sched.num_workers != self.num_workers:
            raise ValueError(
                f"the schedule has num_workers={sched.num_workers}; the rule's local view was built for "
                f"num_workers={self.num_workers}"
            )
        if self.uniform_steps is not None:
            K = np.int64(self.uniform_steps)
            return Schedule._trusted(
                sched.workers,
                sched.delays,
                np.broadcast_to(K, sched.local_steps.shape),
                sched.num_workers,
                np.full_like(sched.init_local_steps, K),
                sched.wall_clock,
            )
        return Schedule._trusted(
            sched.workers,
            sched.delays,
            self.steps[sched.workers],
            sched.num_workers,
            np.broadcast_to(self.steps, sched.init_local_steps.shape),
            sched.wall_clock,
        )


def _fixed_steps(fixed: Any, M: int) -> tuple[np.ndarray | None, int | None]:
    if fixed is None:
        return None, None
    if isinstance(fixed, tuple):
        Ks = np.array([check_int(f"fixed_local_steps[{i}]", k, low=1) for i, k in enumerate(fixed)], np.int64)
        if len(Ks) != M:
            raise ValueError(
                f"fixed_local_steps has {len(Ks)} per-worker local-step counts; expected one per worker "
                f"(num_workers={M})"
            )
        Ks.setflags(write=False)
        return Ks, None
    K = check_int("fixed_local_steps", fixed, low=1)
    Ks = np.full(M, K, dtype=np.int64)
    Ks.setflags(write=False)
    return Ks, K


def _step_sizes(rule: Any, M: int) -> np.ndarray | None:
    hook = getattr(rule, "local_step_sizes", None)
    per = None if hook is None else hook(M)
    if per is None:
        return None
    per = np.array(per, dtype=float).ravel()
    if per.shape != (M,):
        raise ValueError(
            f"local_step_sizes has {per.size} entries; expected one per worker (num_workers={M})"
        )
    if not (np.all(np.isfinite(per)) and np.all(per > 0)):
        raise ValueError(f"local_step_sizes={per.tolist()!r} must be finite and > 0 for every worker")
    if np.all(per == per[0]):
        return None  # one step size: the rule's eta_L
    if getattr(rule, "scheduled", False):
        raise ValueError(
            f"algorithm={rule!r}: per-worker local step sizes cannot be combined with a step-size schedule"
        )
    per.setflags(write=False)
    return per


def local_view(rule: Any, num_workers: int) -> LocalView:
    """The per-worker local steps and step sizes of server rule ``rule`` for ``num_workers`` workers, read
    from its hooks ``fixed_local_steps`` and ``local_step_sizes`` (ValueError naming the hook when a
    per-worker value has the wrong length or is out of range)."""
    M = check_int("num_workers", num_workers, low=1)
    sizes = _step_sizes(rule, M)  # first: a rule's own check names its parameter (DynamicFedAvg: epochs)
    steps, uniform = _fixed_steps(getattr(rule, "fixed_local_steps", None), M)
    return _view(M, steps, uniform, sizes)


def _view(M: int, steps: np.ndarray | None, uniform: int | None, sizes: np.ndarray | None) -> LocalView:
    if steps is not None and uniform is None and np.all(steps == steps[0]):
        uniform = int(steps[0])
    return LocalView(M, steps, uniform, sizes)
