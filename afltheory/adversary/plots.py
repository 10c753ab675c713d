"""The adversary's two figures: search progress, and the worst instance against the bound's terms over t."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from ..plots.figures import new_figure, save

if TYPE_CHECKING:
    from .search import WorstCase

__all__ = ["progress_plot", "worst_instance_plot"]

#: ratios and moments above this are not drawn (log-scale ticks overflow near the float maximum); a diverged
#: candidate (ratio +inf) is reported in the search's counts, not on the figure
_DRAWABLE = 1e250


def progress_plot(path: str | os.PathLike, worst: WorstCase, *, title: str | None = None) -> str:
    """Best measured/bound ratio so far vs exact evaluations (line) over every candidate's ratio (dots)."""
    fig, ax = new_figure()
    h = worst.history
    r = h[:, 1]
    ok = np.isfinite(r) & (r > 0) & (r < _DRAWABLE)
    ax.plot(h[ok, 0], r[ok], ".", ms=2, color="0.7", label="candidates")
    best = worst.best_so_far
    fin = np.isfinite(best) & (best > 0) & (best < _DRAWABLE)
    ax.plot(h[fin, 0], best[fin], "-", color="C3", label="best so far")
    ax.axhline(1.0, color="k", lw=0.8, ls="--", label="bound (ratio 1)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("exact evaluations")
    ax.set_ylabel("measured / bound")
    ax.set_title(title or f"{worst.claim}: worst ratio {worst.ratio:.3g}")
    ax.legend(fontsize=8)
    return save(fig, path)


def worst_instance_plot(path: str | os.PathLike, worst: WorstCase, *, title: str | None = None) -> str:
    """E‖∇f(x_t)‖² and its running average (1/T) Σ_{t<T} against the bound at horizon T, stacked by term."""
    from .claims import get_claim

    c = get_claim(worst.claim)
    cls = c.check_class(worst.assumptions).replace(min_rounds=1)
    g, T, avg, terms = c.trajectory(cls, worst.structure, worst.instance_u)
    fig, ax = new_figure(width=6.0)
    t = np.arange(len(g))
    g = np.where(np.isfinite(g) & (g < _DRAWABLE), g, np.nan)  # diverged rounds: not drawn
    avg = np.where(np.isfinite(avg) & (avg < _DRAWABLE), avg, np.nan)
    ax.plot(t, np.maximum(g, 1e-300), color="C0", lw=1, label="E‖∇f(x_t)‖² (exact)")
    ax.plot(T, avg, color="C0", lw=2, ls="--", label="(1/T) Σ_{t<T} E‖∇f(x_t)‖²")
    cum = np.zeros(len(T))
    for k, (name, v) in enumerate(terms.items()):
        v = np.broadcast_to(v, T.shape)
        if not np.any(v > 0):
            continue
        ax.fill_between(T, cum, cum + v, alpha=0.35, color=f"C{k + 1}", label=f"bound: {name}")
        cum = cum + v
    ax.plot(T, cum, color="k", lw=1.2, label="bound at horizon T")
    ax.axvline(worst.T, color="C3", lw=0.8, ls=":", label=f"worst T = {worst.T}")
    ax.set_yscale("log")
    pos = avg[np.isfinite(avg) & (avg > 0)]
    lo = max(
        min(np.min(pos) if pos.size else 1e-12, np.min(cum[cum > 0]) if np.any(cum > 0) else 1e-12) / 3, 1e-12
    )
    hi = 3 * max(
        np.nanmax(g) if np.any(np.isfinite(g)) else 1.0,
        np.max(cum),
        np.nanmax(avg) if np.any(np.isfinite(avg)) else 1.0,
    )
    ax.set_ylim(lo, hi)
    ax.set_xlabel("round t / horizon T")
    ax.set_title(title or f"{worst.claim}: worst instance (ratio {worst.ratio:.3g} at T={worst.T})")
    ax.legend(fontsize=7, loc="best")
    return save(fig, path)
