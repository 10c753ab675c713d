"""``BufferPool``: reusable float work arrays keyed by (name, shape), for hot loops that would otherwise
allocate fresh ~1 MB arrays every round (they page-fault on first touch: 20–30 % of a d = 10 engine round).
Each owner keeps its own pool — the engine its per-round temporaries, a problem's ``LocalKernel`` its
coefficient buffers — and lends it to nobody. A leaf module."""

from __future__ import annotations

import numpy as np

__all__ = ["BufferPool"]


class BufferPool:
    """Float arrays keyed by (name, shape), allocated on first request and returned again after."""

    def __init__(self) -> None:
        self._arrays: dict[tuple[str, tuple[int, ...]], np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The pool's array ``name`` of ``shape`` (uninitialized when new; else as its last user left it)."""
        a = self._arrays.get((name, shape))
        if a is None:
            a = self._arrays[(name, shape)] = np.empty(shape)
        return a
