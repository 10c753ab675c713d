"""Reading a store back: CSV export, pooling of replicate blocks per grid point, plots (matplotlib Agg)."""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .spec import _flatten

if TYPE_CHECKING:
    from .store import Store

__all__ = [
    "export_csv",
    "pooled_points",
    "plot_store",
    "flat_params",
    "varying_params",
    "fit_store",
    "METRICS",
    "StoreFit",
]

#: metric name -> per-replicate array stored by ``tasks.summarize`` (what ``sweep fit``/``plot`` accept)
METRICS = {
    "avg_grad_norm_sq": "rep_avg_grad_norm_sq",
    "final_grad_norm_sq": "rep_final_grad_norm_sq",
    "final_loss": "rep_final_loss",
    "avg_msd": "rep_avg_msd",
    "final_msd": "rep_final_msd",
}


def flat_params(config: dict, prefix: str = "") -> dict:
    """Dotted-key view of a task config (lists as JSON text, for CSV cells)."""
    return {k: json.dumps(v) if isinstance(v, list) else v for k, v in _flatten(config, prefix).items()}


def varying_params(rows: Sequence[dict], *, exclude: Sequence[str] = ("seed", "block")) -> list[str]:
    """The configuration keys that take more than one value over ``rows`` (except ``exclude``)."""
    vals: dict[str, set] = {}
    for r in rows:
        for k, v in flat_params(r["config"]).items():
            vals.setdefault(k, set()).add(json.dumps(v))
    return sorted(k for k, s in vals.items() if len(s) > 1 and k not in exclude)


def export_csv(store: str | os.PathLike | Store, out: str | os.PathLike) -> int:
    """One row per finished task: id, point_id, seed (simulation), every config parameter (dotted), every
    metric, duration. Returns the number of rows."""
    rows = list(store.rows())
    pcols = sorted({k for r in rows for k in flat_params(r["config"])})
    mcols = sorted({k for r in rows for k in r["metrics"]} - set(pcols))  # rounds/replicates appear once
    cols = ["id", "point_id", "sim_seed"] + pcols + mcols + ["duration", "worker"]
    from .store import atomic_output

    with atomic_output(out, "w", newline="") as fh:  # temp file + rename: never a truncated CSV
        w = csv.writer(fh)
        w.writerow(cols)
        for r in rows:
            p = flat_params(r["config"])
            w.writerow(
                [r["id"], r["point_id"], r["seed"]]
                + [p.get(c, "") for c in pcols]
                + ["" if r["metrics"].get(c) is None else r["metrics"][c] for c in mcols]
                + [r["duration"], r["worker"]]
            )
    return len(rows)


def _pool(means, sems, ns):
    """Pool per-block means/SEMs (ddof=1) of n_i replicates into one mean/SEM over all replicates."""
    means, sems, ns = np.asarray(means), np.asarray(sems), np.asarray(ns, dtype=float)[:, None]
    N = ns.sum()
    with np.errstate(invalid="ignore", over="ignore"):
        m = (ns * means).sum(axis=0) / N
        s2 = sems**2 * ns  # per-block sample variances
        ss = ((ns - 1) * s2).sum(axis=0) + (ns * (means - m) ** 2).sum(axis=0)
        sem = np.sqrt(ss / max(N - 1, 1) / N)
    return m, sem


def pooled_points(store: str | os.PathLike | Store) -> list[dict]:
    """One entry per grid point: config (without seed/block), pooled curves, summed divergence counts."""
    groups: dict[str, list] = {}
    for r in store.rows(with_arrays=True):
        groups.setdefault(r["point_id"], []).append(r)
    out = []
    for pid, rs in sorted(groups.items()):
        a0 = rs[0]["arrays"]
        ns = [r["metrics"]["replicates"] for r in rs]
        entry = {
            "point_id": pid,
            "config": {k: v for k, v in rs[0]["config"].items() if k not in ("seed", "block")},
            "tasks": len(rs),
            "replicates": int(sum(ns)),
            "rounds": a0["rounds"],
            "diverged_count": sum(r["metrics"]["diverged_count"] for r in rs),
        }
        for name in ("grad_norm_sq", "loss"):
            entry[f"{name}_mean"], entry[f"{name}_sem"] = _pool(
                [r["arrays"][f"{name}_mean"] for r in rs], [r["arrays"][f"{name}_sem"] for r in rs], ns
            )
        entry["grad_norm_sq_runavg"] = np.average(
            [r["arrays"]["grad_norm_sq_runavg"] for r in rs], axis=0, weights=ns
        )
        for key in ("final_grad_norm_sq", "avg_grad_norm_sq", "final_loss"):
            vals = [r["metrics"].get(key) for r in rs]
            entry[key] = float(np.average(vals, weights=ns)) if all(v is not None for v in vals) else None
        for metric, arr in METRICS.items():  # per-replicate values pooled over blocks and seeds
            if all(arr in r["arrays"] for r in rs):
                entry[f"samples_{metric}"] = np.concatenate([np.asarray(r["arrays"][arr], float) for r in rs])
        out.append(entry)
    return out


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"--metric {metric!r} is not a stored metric; allowed: {', '.join(METRICS)}")
    return metric


def _check_x(pts, x):
    allp = {k for p in pts for k in flat_params(p["config"])}
    vary = varying_params([{"config": p["config"]} for p in pts])
    if x not in allp:
        raise ValueError(
            f"--x {x!r} is not a parameter of this store; varying parameters: {', '.join(vary) or '(none)'}"
        )
    if x not in vary:
        raise ValueError(
            f"--x {x!r} does not vary in this store (one value); varying parameters: "
            f"{', '.join(vary) or '(none)'}"
        )
    return vary


def _others(pts, x, vary) -> list[str]:
    """The varying parameters that define a series: every varying parameter except x and those that are a
    function of x (e.g. ``algorithm.eta = "sqrt(behaviour.arrivals.m * ...)"`` derived from the swept m)."""
    out = []
    for k in vary:
        if k == x:
            continue
        seen: dict = {}
        dependent = True
        for p in pts:
            fp = flat_params(p["config"])
            xv, kv = json.dumps(fp[x]), json.dumps(fp.get(k))
            if seen.setdefault(xv, kv) != kv:
                dependent = False
                break
        if not dependent:
            out.append(k)
    return out


def _series_key(fp: dict, others) -> str:
    return ", ".join(f"{k}={fp[k]}" for k in others)


class StoreFit(dict):
    """One fitted series of ``fit_store``: keys ``series`` (the other parameters' values), ``x``, ``mean``,
    ``ci`` (per point), ``fit`` (a ``SlopeFit``: slope, bootstrap CI, end slopes), ``diverged_points``."""


def fit_store(
    store: str | os.PathLike | Store,
    *,
    x: str,
    metric: str = "avg_grad_norm_sq",
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[StoreFit]:
    """Log–log slope of ``metric`` against the parameter ``x``, one fit per combination of the other varying
    parameters, with a percentile bootstrap CI over the stored per-replicate values (Monte Carlo noise only)
    and the end slopes (finite-range bias diagnostic; see ``afltheory.analysis.slopes``). Points with a
    diverged replicate are excluded from the fit and listed."""
    from ..analysis import bootstrap_slope, mean_ci

    check_metric(metric)
    pts = pooled_points(store)
    if not pts:
        raise ValueError(f"store {store.path} has no finished tasks to fit")
    vary = _check_x(pts, x)
    others = _others(pts, x, vary)
    series: dict[str, list] = {}
    for p in pts:
        fp = flat_params(p["config"])
        series.setdefault(_series_key(fp, others), []).append((fp[x], p))
    out = []
    for key, s in sorted(series.items()):
        s.sort(key=lambda t: t[0])
        xs, samples, bad = [], [], []
        for xv, p in s:
            smp = p.get(f"samples_{metric}")
            if smp is None:
                raise ValueError(
                    f"store {store.path} has no per-replicate values for {metric!r} (tasks "
                    "stored by an older afltheory); re-run the sweep into a new store"
                )
            if not isinstance(xv, (int, float)) or isinstance(xv, bool) or xv <= 0:
                raise ValueError(f"--x {x!r} must take positive numeric values for a log–log fit, got {xv!r}")
            if not np.all(np.isfinite(smp)) or np.any(smp <= 0):
                bad.append(xv)
                continue
            xs.append(float(xv))
            samples.append(smp)
        entry = StoreFit(
            series=key,
            x=np.array(xs),
            diverged_points=bad,
            mean=np.array([float(np.mean(v)) for v in samples]),
            ci=[mean_ci(v, level)[1:] for v in samples],
            fit=None,
        )
        if len(xs) >= 2 and min(len(v) for v in samples) >= 2:
            entry["fit"] = bootstrap_slope(xs, samples, n_boot=n_boot, level=level, seed=seed)
        out.append(entry)
    return out


def plot_store(
    store: str | os.PathLike | Store,
    out: str | os.PathLike,
    *,
    x: str | None = None,
    metric: str = "avg_grad_norm_sq",
) -> str:
    """PNG from a store. Without ``x``: pooled E‖∇f(x_t)‖² curves per grid point (log y). With ``x`` (a
    dotted parameter, e.g. ``algorithm.eta_L``): ``metric`` against it, one line per value of the other
    varying parameters. Diverged points are drawn as red crosses at the top, never as silent gaps."""
    from ..plots import new_figure, save

    pts = pooled_points(store)
    if not pts:
        raise ValueError(f"store {store.path} has no finished tasks to plot")
    rows = [{"config": p["config"]} for p in pts]
    vary = varying_params(rows)
    fig, ax = new_figure(width=7, height=4.5)
    if x is None:
        for p in pts:
            fp = flat_params(p["config"])
            label = ", ".join(f"{k.split('.')[-1]}={fp[k]}" for k in vary) or "all"
            m = p["grad_norm_sq_mean"]
            fin = np.isfinite(m) & (m > 0)
            (line,) = ax.plot(
                p["rounds"][fin], m[fin], label=label + (" (diverged)" if p["diverged_count"] else "")
            )
            ax.fill_between(
                p["rounds"][fin],
                np.maximum(m - 2 * p["grad_norm_sq_sem"], m * 1e-3)[fin],
                (m + 2 * p["grad_norm_sq_sem"])[fin],
                alpha=0.2,
                color=line.get_color(),
            )
        ax.set_xlabel("round t")
        ax.set_ylabel("E‖∇f(x_t)‖² (mean ± 2 SEM)")
        ax.set_yscale("log")
    else:
        check_metric(metric)
        _check_x(pts, x)
        others = _others(pts, x, vary)
        series: dict[str, list] = {}
        for p in pts:
            fp = flat_params(p["config"])
            key = ", ".join(f"{k.split('.')[-1]}={fp[k]}" for k in others) or metric
            series.setdefault(key, []).append((fp[x], p.get(metric), p["diverged_count"], fp))
        ymax = max(
            (v for s in series.values() for _, v, _, _ in s if v is not None and math.isfinite(v)),
            default=1.0,
        )
        numeric_x = all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
            for v in (flat_params(p["config"])[x] for p in pts)
        )
        fits = {f["series"]: f for f in fit_store(store, x=x, metric=metric, n_boot=500)} if numeric_x else {}
        for key, s in sorted(series.items())[:12]:
            s.sort(key=lambda t: (isinstance(t[0], str), t[0]))
            xs = [a for a, v, _, _ in s if v is not None]
            ys = [v for a, v, _, _ in s if v is not None]
            f = fits.get(_series_key(s[0][3], others)) if fits else None
            if f is not None and len(f["x"]):
                # mean ± CI per point (matplotlib offsets) and the fitted line with its slope and bootstrap CI
                lo = np.array([c[0] for c in f["ci"]])
                hi = np.array([c[1] for c in f["ci"]])
                yerr = np.vstack([f["mean"] - lo, hi - f["mean"]])
                yerr[~np.isfinite(yerr)] = 0.0
                line = ax.errorbar(
                    f["x"], f["mean"], yerr=np.maximum(yerr, 0), fmt="o", capsize=3, label=key
                )[0]
                if f["fit"] is not None:
                    xx = np.geomspace(min(f["x"]), max(f["x"]), 50)
                    ax.plot(
                        xx,
                        f["fit"].predict(xx),
                        "-",
                        color=line.get_color(),
                        label=f"slope {f['fit'].slope:.3f} [{f['fit'].ci[0]:.3f}, {f['fit'].ci[1]:.3f}]",
                    )
            else:
                ax.plot(xs, ys, "o-", label=key)
            bad = [a for a, v, d, _ in s if v is None or d]
            if bad:
                ax.plot(bad, [ymax] * len(bad), "x", color="red", ms=9)
        if len(series) > 12:
            ax.set_title(f"(first 12 of {len(series)} series)")
        ax.set_xlabel(x)
        ax.set_ylabel(metric)
        numeric = all(isinstance(a, (int, float)) and a > 0 for s in series.values() for a, _, _, _ in s)
        if numeric:
            ax.set_xscale("log")
        ys = [v for s in series.values() for _, v, _, _ in s if v is not None]
        if ys and min(ys) > 0:
            ax.set_yscale("log")
    if len(ax.get_lines()) <= 15:
        ax.legend(fontsize=7)
    return save(fig, out)
