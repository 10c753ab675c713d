"""Figures for compressed updates: error against rounds and against bits sent (afltheory.compression)."""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from .figures import _fig, save

__all__ = ["bits_plot"]


def bits_plot(
    path: str | os.PathLike,
    runs: Mapping[str, tuple[ArrayLike, ArrayLike]],
    *,
    title: str = "",
    ylabel: str = "E‖∇f(x_t)‖²",
) -> str:
    """``runs``: {label: (cumulative bits (T+1,), error (T+1,))}. Left: error vs round; right: error vs bits
    sent (all workers, cumulative, in Mbit)."""
    fig, (a, b) = _fig(ncols=2, width=5.2)
    for j, (lab, (bits, err)) in enumerate(runs.items()):
        bits, err = np.asarray(bits, dtype=float), np.asarray(err, dtype=float)
        style = dict(color=f"C{j % 10}", lw=1.2, ls="-" if j < 10 else "--", label=lab)
        a.plot(np.arange(len(err)), err, **style)
        b.plot(bits / 1e6, err, **style)
    for ax, xl in ((a, "round t"), (b, "bits sent by the workers (Mbit)")):
        ax.set_yscale("log")
        ax.set_xlabel(xl)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    b.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return save(fig, path)
