"""Opt-in progress display for long loops: tqdm when installed (extra ``progress``), else a line on stderr at
every 10 % (never on by default; the library prints nothing unless asked)."""

from __future__ import annotations

import sys
import time

__all__ = ["iterate"]


def iterate(it, enabled: bool, desc: str, total: int | None = None):
    """``it`` unchanged when ``enabled`` is false; otherwise wrapped with a progress display."""
    if not enabled:
        return it
    total = len(it) if total is None and hasattr(it, "__len__") else total
    try:
        from tqdm import tqdm
    except ImportError:
        return _lines(it, desc, total)
    return tqdm(it, desc=desc, total=total, file=sys.stderr, leave=False)


def _lines(it, desc, total):
    t0 = time.perf_counter()
    step = max(1, (total or 10) // 10)
    for i, x in enumerate(it):
        yield x
        if total and ((i + 1) % step == 0 or i + 1 == total):
            print(f"{desc}: {i + 1}/{total} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
