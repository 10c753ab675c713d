"""Progress reporting: a bar with ETA on a terminal (tqdm when installed, else a one-line fallback), plain
timestamped lines otherwise (logs, CI, pipes)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress", "make_progress"]


def _hms(s: float | None) -> str:
    if s is None or s != s or s == float("inf"):
        return "?"
    s = int(round(s))
    return f"{s // 3600:d}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """Base: counts and ETA; ``update(task_id, ok)`` after each finished task; ``close()`` at the end."""

    def __init__(self, total: int, skipped: int = 0, stream: TextIO | None = None):
        self.total, self.skipped, self.done, self.failed = total, skipped, 0, 0
        self.stream = stream or sys.stderr
        self.t0 = time.monotonic()

    def eta(self) -> float | None:
        """Estimated seconds left (None before the first task finishes)."""
        if self.done == 0:
            return None
        el = time.monotonic() - self.t0
        return el / self.done * (self.total - self.done)

    def update(self, task_id: str, ok: bool = True) -> None:
        """Count one finished task (``ok=False``: failed)."""
        self.done += 1
        self.failed += not ok

    def write(self, msg: str) -> None:
        """Print ``msg`` without breaking the progress display."""
        print(msg, file=self.stream, flush=True)

    def close(self) -> None:
        """Finish the display."""
        pass


class LineProgress(Progress):
    """Plain lines, at most one per ``every`` seconds (and always the last)."""

    def __init__(self, total, skipped=0, stream=None, every: float = 1.0):
        super().__init__(total, skipped, stream)
        self.every, self._last = every, -1e9
        self.write(f"sweep: {total} task(s) to run, {skipped} already in the store")

    def update(self, task_id, ok=True):
        super().update(task_id, ok)
        now = time.monotonic()
        if now - self._last >= self.every or self.done == self.total or not ok:
            self._last = now
            self.write(
                f"[{self.done}/{self.total}] {'ok' if ok else 'FAILED'} {task_id[:12]} "
                f"elapsed {_hms(now - self.t0)} eta {_hms(self.eta())}"
                + (f" failed {self.failed}" if self.failed else "")
            )


class BarProgress(Progress):
    def __init__(self, total, skipped=0, stream=None):
        super().__init__(total, skipped, stream)
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        self._bar = (
            tqdm(
                total=total,
                file=self.stream,
                unit="task",
                dynamic_ncols=True,
                desc=f"sweep ({skipped} cached)",
            )
            if tqdm
            else None
        )
        if self._bar is None:
            self._draw()

    def _draw(self):
        w = 30
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(w * frac) + "-" * (w - int(w * frac))
        self.stream.write(
            f"\r[{bar}] {self.done}/{self.total} eta {_hms(self.eta())}"
            + (f" failed {self.failed}" if self.failed else "")
            + " "
        )
        self.stream.flush()

    def update(self, task_id, ok=True):
        super().update(task_id, ok)
        if self._bar is not None:
            self._bar.update(1)
            if self.failed:
                self._bar.set_postfix(failed=self.failed)
        else:
            self._draw()

    def close(self):
        if self._bar is not None:
            self._bar.close()
        else:
            self.stream.write("\n")
            self.stream.flush()


class NullProgress(Progress):
    pass


def make_progress(
    total: int, skipped: int = 0, mode: str | None = None, stream: TextIO | None = None
) -> Progress:
    """``mode``: "bar", "lines", "none", or None (bar if the stream is a TTY, else lines)."""
    stream = stream or sys.stderr
    if mode is None:
        mode = "bar" if getattr(stream, "isatty", lambda: False)() else "lines"
    return {"bar": BarProgress, "lines": LineProgress, "none": NullProgress}[mode](total, skipped, stream)
