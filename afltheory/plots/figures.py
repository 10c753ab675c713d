"""Implementation of the figure functions (see the package docstring)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from ..analysis.slopes import SlopeFit

__all__ = ["bound_plot", "curves_plot", "lower_bound_plot", "new_figure", "rate_plot", "save", "speedup_plot",
           "stability_region_plot"]


def _fig(ncols=1, width=5.0, height=3.6):
    fig = Figure(figsize=(width * ncols, height), dpi=100)
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, j + 1) for j in range(ncols)]
    return fig, axes


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 5.0, height: float = 3.6,
               sharey: bool = False, squeeze: bool = True) -> tuple[Figure, Any]:
    """(figure, axes) on an Agg canvas: the one figure style of afltheory (no pyplot state, no display).
    ``width``/``height`` per panel, in inches; ``axes`` as ``Figure.subplots`` returns them."""
    fig = Figure(figsize=(width * ncols, height * nrows), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, sharey=sharey, squeeze=squeeze)
    return fig, axes


def save(fig: Figure, path: str | os.PathLike) -> str:
    """Write ``fig`` as a PNG at ``path`` (directories created; deterministic bytes); returns the path."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.tight_layout()
    # fixed metadata so the PNG bytes are deterministic for a given run
    fig.savefig(path, format="png", metadata={"Software": None})
    return str(path)


def _check_yerr(yerr, y):
    """matplotlib's convention: a scalar or (n,) symmetric half-widths, or (2, n) [below, above] offsets ≥
    0."""
    e = np.asarray(yerr, dtype=float)
    n = len(y)
    if e.ndim == 0 or e.shape == (n,) or e.shape == (2, n):
        if np.any(~np.isfinite(e)) or np.any(e < 0):
            raise ValueError("yerr must hold finite, non-negative offsets from y (matplotlib's convention), "
                             "got "
                             f"{yerr!r}")
        return e
    raise ValueError(f"yerr must be a scalar, shape ({n},) or (2, {n}) (matplotlib's convention: offsets "
                     "below and "
                     f"above y, not absolute limits), got shape {e.shape}")


def _rate_axes(ax, x, y, fit=None, theory_slope=None, label="measured", xlabel="T", ylabel="error",
               yerr=None, color="C0"):
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if yerr is not None:
        ax.errorbar(x, y, yerr=_check_yerr(yerr, y), fmt="o", color=color, label=label, capsize=3)
    else:
        ax.plot(x, y, "o", color=color, label=label)
    xs = np.geomspace(x.min(), x.max(), 50)
    if fit is not None:
        ci = "" if fit.ci is None else f" [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]"
        if getattr(fit, "end_slopes", None) is not None:
            ci += f"; ends {fit.end_slopes[0]:.2f}/{fit.end_slopes[1]:.2f}"
        ax.plot(xs, fit.predict(xs), "-", color=color, label=f"fit slope {fit.slope:.3f}{ci}")
        if fit.boot is not None:
            lo, hi = fit.band(xs)
            ax.fill_between(xs, lo, hi, color=color, alpha=0.2, lw=0)
    if theory_slope is not None:
        anchor = float(np.exp(np.mean(np.log(y)) - theory_slope * np.mean(np.log(x))))
        ax.plot(xs, anchor * xs**theory_slope, "--", color="k", label=f"theory slope {theory_slope:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    # minor-tick labels on short log ranges overlap ("2×10³ 3×10⁴×10³"): label the measured x values instead
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(x)
    ax.set_xticklabels([f"{v:g}" for v in x])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)


def rate_plot(path: str | os.PathLike, x: ArrayLike, y: ArrayLike, fit: SlopeFit | None = None,
              theory_slope: float | None = None, *, xlabel: str = "T", ylabel: str = "(1/T) Σ E‖∇f(x_t)‖²",
              title: str = "", yerr: ArrayLike | None = None) -> str:
    """Log–log rate plot of y against x with the fitted line (and its bootstrap band) and the theory slope.

    ``yerr`` follows matplotlib's ``errorbar`` convention: a scalar or (n,) array of symmetric half-widths, or
    a (2, n) array [offsets below y, offsets above y] — offsets, not absolute interval limits (for a CI (lo,
    hi) pass ``[y - lo, hi - y]``). The legend shows the fit's slope, its CI and end slopes (finite-range
    bias)."""
    fig, (ax,) = _fig()
    _rate_axes(ax, x, y, fit, theory_slope, xlabel=xlabel, ylabel=ylabel, yerr=yerr)
    ax.set_title(title, fontsize=9)
    return save(fig, path)


def speedup_plot(path: str | os.PathLike, panels: Sequence[Mapping[str, Any]], *, title: str = "") -> str:
    """``panels``: list of dicts with keys x, y, fit, theory_slope, xlabel (and optional ylabel, yerr,
    title)."""
    fig, axes = _fig(len(panels), width=4.2)
    for ax, p in zip(axes, panels, strict=False):
        _rate_axes(ax, p["x"], p["y"], p.get("fit"), p.get("theory_slope"), xlabel=p.get("xlabel", "x"),
                   ylabel=p.get("ylabel", "error"), yerr=p.get("yerr"))
        ax.set_title(p.get("title", ""), fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    return save(fig, path)


def bound_plot(path: str | os.PathLike, labels: Sequence[str], measured: ArrayLike, bound: ArrayLike, *,
               ucb: ArrayLike | None = None, title: str = "", ylabel: str = "(1/T) Σ E‖∇f(x_t)‖²") -> str:
    """Bars of measured (with UCB whisker) and bound per configuration, annotated with the slack ratio."""
    measured = np.asarray(measured, dtype=float)
    bound = np.asarray(bound, dtype=float)
    n = len(labels)
    fig, (ax,) = _fig(width=max(5.0, 1.2 * n + 2))
    xs = np.arange(n)
    ax.bar(xs - 0.2, measured, 0.4, label="measured", color="C0")
    if ucb is not None:
        u = np.asarray(ucb, dtype=float)
        ax.errorbar(xs - 0.2, measured, yerr=[np.zeros(n), np.maximum(u - measured, 0)], fmt="none",
                    color="k",
                    capsize=3)
    ax.bar(xs + 0.2, bound, 0.4, label="bound", color="C1")
    for x, m, b in zip(xs, measured, bound, strict=False):
        if m > 0 and np.isfinite(m):
            ax.text(x, max(m, b) * 1.15, f"×{b / m:.3g}", ha="center", fontsize=7)
    ax.set_yscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=20, fontsize=7, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return save(fig, path)


def curves_plot(path: str | os.PathLike, curves: Mapping[str, tuple], *,
                hlines: Mapping[str, float] | None = None, xlabel: str = "round t",
                ylabel: str = "E‖∇f(x_t)‖²", title: str = "", logy: bool = True, logx: bool = False) -> str:
    """``curves``: {label: (x, y)} or {label: (x, y, lo, hi)}; ``hlines``: {label: value}."""
    fig, (ax,) = _fig(width=6.0)
    for j, (lab, c) in enumerate(curves.items()):
        x, y = np.asarray(c[0]), np.asarray(c[1])
        ax.plot(x, y, "-", color=f"C{j % 10}", label=lab, lw=1.2)
        if len(c) == 4:
            ax.fill_between(x, c[2], c[3], color=f"C{j % 10}", alpha=0.2, lw=0)
    for j, (lab, v) in enumerate((hlines or {}).items()):
        ax.axhline(v, ls="--", color="k" if j == 0 else f"C{(j + 5) % 10}", lw=1, label=lab)
    if logy:
        ax.set_yscale("log")
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    return save(fig, path)


def lower_bound_plot(path: str | os.PathLike, curves: Mapping[str, tuple], sigma_G2: Mapping[str, float], *,
                     title: str = "Theorem 1: only worker 1 arrives") -> str:
    """``curves``: {label: (t, E‖∇f(x_t)‖²)}; ``sigma_G2``: {label: σ_G²} drawn as dashed lines."""
    return curves_plot(path, curves, hlines={f"σ_G² = {v:g} ({k})": v for k, v in sigma_G2.items()},
                       title=title)


def stability_region_plot(path: str | os.PathLike, eta: ArrayLike, eta_L: ArrayLike, theory_region: ArrayLike,
                          diverged: ArrayLike, *, bound_held: ArrayLike | None = None,
                          title: str = "stability region", chosen: tuple[float, float] | None = None) -> str:
    """(η, η_L) plane: shaded theory-admissible region, red × where runs diverged, dots where they converged
    (filled green if the bound held there, open orange if it did not). Grids are (len(eta_L), len(eta))."""
    eta, eta_L = np.asarray(eta), np.asarray(eta_L)
    region = np.asarray(theory_region, dtype=float)
    fig, (ax,) = _fig(width=5.6, height=4.4)
    E, EL = np.meshgrid(eta, eta_L)
    ax.pcolormesh(E, EL, region, shading="nearest", cmap=ListedColormap(["white", "#bfe3bf"]), vmin=0, vmax=1)
    dv = np.asarray(diverged, dtype=bool)
    ax.plot(E[dv], EL[dv], "x", color="r", ms=5, label="diverged")
    conv = ~dv
    if bound_held is not None:
        bh = np.asarray(bound_held, dtype=bool)
        ax.plot(E[conv & bh], EL[conv & bh], "o", color="g", ms=3, label="converged, bound held")
        ax.plot(E[conv & ~bh], EL[conv & ~bh], "o", mfc="none", color="C1", ms=4,
                label="converged, bound failed")
    else:
        ax.plot(E[conv], EL[conv], "o", color="g", ms=3, label="converged")
    if chosen is not None:
        ax.plot([chosen[0]], [chosen[1]], "*", color="b", ms=10, label="checked configuration")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("η (server)")
    ax.set_ylabel("η_L (worker)")
    ax.set_title(title + " (green area: theory's conditions hold)", fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    return save(fig, path)
