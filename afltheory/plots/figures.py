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

from .._validation import as_array, check_array, check_component, check_int, check_real

if TYPE_CHECKING:
    from ..analysis.slopes import SlopeFit

__all__ = [
    "bound_plot",
    "curves_plot",
    "lower_bound_plot",
    "new_figure",
    "rate_plot",
    "save",
    "speedup_plot",
    "stability_region_plot",
]


#: Largest figure side (inches at 100 dpi): arguments asking for more are refused, not rendered.
MAX_INCHES = 100.0


def _curve(
    name: str, value, *, positive: bool = False, finite: bool = False, n: int | None = None
) -> np.ndarray:
    """A 1-D float array without NaN (±inf allowed: a diverged value; ``finite``: not even that);
    ``positive``: finite and > 0 (a log axis); ``n``: its required length."""
    a = check_array(name, value, allow_inf=not (positive or finite))
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of numbers, got shape {a.shape}")
    if n is not None and a.size != n:
        raise ValueError(f"{name} has {a.size} entries; expected {n}")
    if positive and np.any(a <= 0):
        raise ValueError(f"{name} must hold finite values > 0 (a log axis), got min {a.min():g}")
    return a


def _check_slope_fit(fit):
    from ..analysis.slopes import SlopeFit

    return check_component(
        "fit", fit, SlopeFit, "an afltheory.analysis SlopeFit (fit_slope, bootstrap_slope)", optional=True
    )


def _fig(ncols=1, width=5.0, height=3.6):
    fig = Figure(figsize=(width * ncols, height), dpi=100)
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, j + 1) for j in range(ncols)]
    return fig, axes


def new_figure(
    nrows: int = 1,
    ncols: int = 1,
    *,
    width: float = 5.0,
    height: float = 3.6,
    sharey: bool = False,
    squeeze: bool = True,
) -> tuple[Figure, Any]:
    """(figure, axes) on an Agg canvas: the one figure style of afltheory (no pyplot state, no display).
    ``width``/``height`` per panel, in inches; ``axes`` as ``Figure.subplots`` returns them."""
    nrows, ncols = check_int("nrows", nrows, low=1, high=50), check_int("ncols", ncols, low=1, high=50)
    width = check_real("width", width, low=0.0, high=MAX_INCHES / ncols, low_open=True)
    height = check_real("height", height, low=0.0, high=MAX_INCHES / nrows, low_open=True)
    fig = Figure(figsize=(width * ncols, height * nrows), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, sharey=sharey, squeeze=squeeze)
    return fig, axes


def save(fig: Figure, path: str | os.PathLike) -> str:
    """Write ``fig`` as a PNG at ``path`` (directories created; deterministic bytes; atomic; ValueError if
    ``path`` is a device file, a FIFO or a socket); returns the path."""
    from .._io import atomic_open

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.tight_layout()
    # fixed metadata so the PNG bytes are deterministic for a given run; written atomically (temporary file
    # + rename), never over a device file or a FIFO
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format="png", metadata={"Software": None})
    return str(path)


def _check_yerr(yerr, y):
    """matplotlib's convention: a scalar or (n,) symmetric half-widths, or (2, n) [below, above] offsets ≥
    0."""
    e = as_array("yerr", yerr)
    n = len(y)
    if e.ndim == 0 or e.shape == (n,) or e.shape == (2, n):
        if np.any(~np.isfinite(e)) or np.any(e < 0):
            raise ValueError(
                f"yerr must hold finite, non-negative offsets from y (matplotlib's convention), got {yerr!r}"
            )
        return e
    raise ValueError(
        f"yerr must be a scalar, shape ({n},) or (2, {n}) (matplotlib's convention: "
        f"offsets below and above y, not absolute limits), got shape {e.shape}"
    )


def _rate_axes(
    ax, x, y, fit=None, theory_slope=None, label="measured", xlabel="T", ylabel="error", yerr=None, color="C0"
):
    x = _curve("x", x, positive=True)
    y = _curve("y", y, n=x.size)
    fit = _check_slope_fit(fit)
    if theory_slope is not None:
        theory_slope = check_real("theory_slope", theory_slope)
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
    ok = np.isfinite(y) & (y > 0)  # the theory line is anchored on the finite positive points
    if theory_slope is not None and ok.any():
        with np.errstate(over="ignore", under="ignore"):
            anchor = float(np.exp(np.mean(np.log(y[ok])) - theory_slope * np.mean(np.log(x[ok]))))
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


def rate_plot(
    path: str | os.PathLike,
    x: ArrayLike,
    y: ArrayLike,
    fit: SlopeFit | None = None,
    theory_slope: float | None = None,
    *,
    xlabel: str = "T",
    ylabel: str = "(1/T) Σ E‖∇f(x_t)‖²",
    title: str = "",
    yerr: ArrayLike | None = None,
) -> str:
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
    if isinstance(panels, (str, bytes, Mapping)) or not isinstance(panels, Sequence) or not panels:
        raise ValueError(f"panels={panels!r} must be a non-empty list of dicts (keys x, y, fit, ...)")
    if len(panels) > 20:
        raise ValueError(f"panels has {len(panels)} entries; at most 20 panels fit one figure")
    for j, p in enumerate(panels):
        if not isinstance(p, Mapping) or "x" not in p or "y" not in p:
            raise ValueError(
                f"panels[{j}]={p!r} must be a dict with keys 'x' and 'y' (and fit, theory_slope, ...)"
            )
    fig, axes = _fig(len(panels), width=4.2)
    for ax, p in zip(axes, panels, strict=False):
        _rate_axes(
            ax,
            p["x"],
            p["y"],
            p.get("fit"),
            p.get("theory_slope"),
            xlabel=p.get("xlabel", "x"),
            ylabel=p.get("ylabel", "error"),
            yerr=p.get("yerr"),
        )
        ax.set_title(p.get("title", ""), fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    return save(fig, path)


def bound_plot(
    path: str | os.PathLike,
    labels: Sequence[str],
    measured: ArrayLike,
    bound: ArrayLike,
    *,
    ucb: ArrayLike | None = None,
    title: str = "",
    ylabel: str = "(1/T) Σ E‖∇f(x_t)‖²",
) -> str:
    """Bars of measured (with UCB whisker) and bound per configuration, annotated with the slack ratio.
    ``ucb`` entries that are None draw no whisker."""
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence) or not labels:
        raise ValueError(f"labels={labels!r} must be a non-empty list of labels (one per configuration)")
    n = len(labels)
    if n > 60:
        raise ValueError(f"labels has {n} entries; at most 60 configurations fit one bar plot")
    measured = _curve("measured", measured, n=n)
    bound = _curve("bound", bound, n=n)
    if ucb is not None:
        if isinstance(ucb, (str, bytes)) or not isinstance(ucb, (Sequence, np.ndarray)) or len(ucb) != n:
            raise ValueError(f"ucb={ucb!r} must be None or one value per label ({n})")
        ucb = _curve("ucb", [m if u is None else u for u, m in zip(ucb, measured, strict=True)], n=n)
    fig, (ax,) = _fig(width=max(5.0, 1.2 * n + 2))
    xs = np.arange(n)
    ax.bar(xs - 0.2, measured, 0.4, label="measured", color="C0")
    if ucb is not None:
        u = ucb
        ax.errorbar(
            xs - 0.2,
            measured,
            yerr=[np.zeros(n), np.maximum(u - measured, 0)],
            fmt="none",
            color="k",
            capsize=3,
        )
    ax.bar(xs + 0.2, bound, 0.4, label="bound", color="C1")
    for x, m, b in zip(xs, measured, bound, strict=False):
        if m > 0 and np.isfinite(m) and np.isfinite(b):
            ax.text(x, max(m, b) * 1.15, f"×{b / m:.3g}", ha="center", fontsize=7)
    ax.set_yscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=20, fontsize=7, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return save(fig, path)


def curves_plot(
    path: str | os.PathLike,
    curves: Mapping[str, tuple],
    *,
    hlines: Mapping[str, float] | None = None,
    xlabel: str = "round t",
    ylabel: str = "E‖∇f(x_t)‖²",
    title: str = "",
    logy: bool = True,
    logx: bool = False,
) -> str:
    """``curves``: {label: (x, y)} or {label: (x, y, lo, hi)}; ``hlines``: {label: value}."""
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError(
            f"curves={curves!r} must be a non-empty dict {{label: (x, y)}} or {{label: (x, y, lo, hi)}}"
        )
    if hlines is not None and not isinstance(hlines, Mapping):
        raise ValueError(f"hlines={hlines!r} must be None or a dict {{label: value}}")
    data = {}
    for lab, c in curves.items():
        if isinstance(c, (str, bytes)) or not isinstance(c, (Sequence, np.ndarray)) or len(c) not in (2, 4):
            raise ValueError(f"curves[{lab!r}] must be (x, y) or (x, y, lo, hi)")
        x = _curve(f"curves[{lab!r}] x", c[0], finite=True)  # x <= 0 on a log axis: not drawn
        data[lab] = [x] + [
            _curve(f"curves[{lab!r}] {w}", v, n=x.size)
            for w, v in zip(("y", "lo", "hi"), c[1:], strict=False)
        ]
    hl = {lab: check_real(f"hlines[{lab!r}]", v) for lab, v in (hlines or {}).items()}
    fig, (ax,) = _fig(width=6.0)
    for j, (lab, c) in enumerate(data.items()):
        x, y = c[0], c[1]
        ax.plot(x, y, "-", color=f"C{j % 10}", label=lab, lw=1.2)
        if len(c) == 4:
            ax.fill_between(x, c[2], c[3], color=f"C{j % 10}", alpha=0.2, lw=0)
    for j, (lab, v) in enumerate(hl.items()):
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


def lower_bound_plot(
    path: str | os.PathLike,
    curves: Mapping[str, tuple],
    sigma_G2: Mapping[str, float],
    *,
    title: str = "Theorem 1: only worker 1 arrives",
) -> str:
    """``curves``: {label: (t, E‖∇f(x_t)‖²)}; ``sigma_G2``: {label: σ_G²} drawn as dashed lines."""
    if not isinstance(sigma_G2, Mapping):
        raise ValueError(f"sigma_G2={sigma_G2!r} must be a dict {{label: σ_G²}}")
    sigma_G2 = {k: check_real(f"sigma_G2[{k!r}]", v, low=0.0) for k, v in sigma_G2.items()}
    return curves_plot(
        path, curves, hlines={f"σ_G² = {v:g} ({k})": v for k, v in sigma_G2.items()}, title=title
    )


def stability_region_plot(
    path: str | os.PathLike,
    eta: ArrayLike,
    eta_L: ArrayLike,
    theory_region: ArrayLike,
    diverged: ArrayLike,
    *,
    bound_held: ArrayLike | None = None,
    title: str = "stability region",
    chosen: tuple[float, float] | None = None,
) -> str:
    """(η, η_L) plane: shaded theory-admissible region, red × where runs diverged, dots where they converged
    (filled green if the bound held there, open orange if it did not). Grids are (len(eta_L), len(eta))."""
    eta, eta_L = _curve("eta", eta, positive=True), _curve("eta_L", eta_L, positive=True)
    grid = (eta_L.size, eta.size)
    region = check_array("theory_region", theory_region, shape=grid)
    dv = as_array("diverged", diverged, dtype=bool)
    if dv.shape != grid:
        raise ValueError(f"diverged has shape {dv.shape}, expected (len(eta_L), len(eta)) = {grid}")
    if bound_held is not None:
        bound_held = as_array("bound_held", bound_held, dtype=bool)
        if bound_held.shape != grid:
            raise ValueError(f"bound_held has shape {bound_held.shape}, expected {grid}")
    if chosen is not None:
        chosen = _curve("chosen", chosen, positive=True, n=2)
    fig, (ax,) = _fig(width=5.6, height=4.4)
    E, EL = np.meshgrid(eta, eta_L)
    ax.pcolormesh(E, EL, region, shading="nearest", cmap=ListedColormap(["white", "#bfe3bf"]), vmin=0, vmax=1)
    ax.plot(E[dv], EL[dv], "x", color="r", ms=5, label="diverged")
    conv = ~dv
    if bound_held is not None:
        bh = np.asarray(bound_held, dtype=bool)
        ax.plot(E[conv & bh], EL[conv & bh], "o", color="g", ms=3, label="converged, bound held")
        ax.plot(
            E[conv & ~bh], EL[conv & ~bh], "o", mfc="none", color="C1", ms=4, label="converged, bound failed"
        )
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
