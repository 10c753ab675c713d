"""``Trace`` summary, ``save`` and ``load`` (numpy ``.npz`` without pickle; the config as JSON text).

Saved: the per-replicate curves, the realized schedule (the same arrays as ``Schedule.save``), divergence
rounds and threshold, certified-region exits, final and initial iterates, oracle calls, the seed, the run's
config (reprs of problem, algorithm and behaviour), and the optional iterates / drift / tracking-error / bits
arrays. A loaded trace equals the saved one array by array; its schedule has no ``origin`` (the objects are
not stored, only their reprs in ``config``).

Layering (docs/DESIGN.md "Layers"): this module sits below ``afltheory.engine`` and never imports it;
``Trace.load`` passes its own class (and ``DivergenceInfo``) to ``load``, which builds the trace by keyword.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["summary", "save", "load", "FORMAT"]

FORMAT = 1
_ARRAYS = ("grad_norm_sq", "loss", "left_region", "x_final", "x0", "oracle_calls")
_OPTIONAL = ("x", "drift", "tracking_error", "bits")


def _fmt(v: float) -> str:
    return "inf" if not np.isfinite(v) else f"{v:.4g}"


def summary(trace) -> str:
    """A few lines: sizes, config, E‖∇f(x_t)‖² at the start/end and its time average with a 95 % CI (or a note
    when there is one replicate), divergence."""
    from .analysis import mean_ci

    R, T = trace.replicates, trace.rounds
    cfg = trace.config or {}
    lines = [f"Trace: {R} replicate(s) × {T} round(s), dim {trace.x0.shape[-1]}, seed {trace.seed}"]
    for k in ("algorithm", "behaviour", "problem"):
        if k in cfg:
            lines.append(f"  {k}: {cfg[k]}")
    g = trace.grad_norm_sq
    avg = trace.time_average() if T >= 1 else g[:, 0]
    m, lo, hi = mean_ci(avg) if np.all(np.isfinite(avg)) else (float("inf"),) * 3
    ci = "no CI with 1 replicate" if R < 2 else f"95% CI [{_fmt(lo)}, {_fmt(hi)}]"
    lines.append(
        f"  E‖∇f(x_t)‖²: t=0 {_fmt(float(np.mean(g[:, 0])))}, t=T {_fmt(float(np.mean(g[:, -1])))}; "
        f"(1/T)Σ_t {_fmt(m)} ({ci})"
    )
    lines.append(f"  divergence: {trace.divergence}")
    return "\n".join(lines)


def save(trace, path) -> str:
    """Write ``trace`` to ``path`` (``.npz``; written to a temporary file, then renamed)."""
    s = trace.schedule
    arrays = {name: np.asarray(getattr(trace, name)) for name in _ARRAYS}
    for name in _OPTIONAL:
        v = getattr(trace, name, None)
        if v is not None:
            arrays[name] = np.asarray(v)
    arrays.update(
        sched_workers=s.workers,
        sched_delays=s.delays,
        sched_local_steps=s.local_steps,
        sched_num_workers=np.int64(s.num_workers),
        sched_init_local_steps=s.init_local_steps,
        divergence_round=trace.divergence.round,
        divergence_threshold=np.float64(trace.divergence.threshold),
        seed=np.int64(trace.seed),
        format=np.int64(FORMAT),
        config=np.array(json.dumps(trace.config, default=repr)),
    )
    if s.wall_clock is not None:
        arrays["sched_wall_clock"] = s.wall_clock
    path = str(path)
    if not path.endswith(".npz"):
        path += ".npz"
    tmp = f"{path}.tmp-{os.getpid()}.npz"
    try:
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def load(path, *, trace_cls: Callable[..., Any], divergence_cls: Callable[..., Any]) -> Any:
    """Read a trace written by ``save`` (``ValueError`` naming what is wrong for a file that is not one).

    ``trace_cls`` / ``divergence_cls``: the classes to build (``engine.Trace`` and ``engine.DivergenceInfo``;
    ``Trace.load`` passes them, so this module does not import the engine). The trace is built by keyword."""
    from .anarchy.schedule import Schedule

    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"path={str(path)!r} is not a readable .npz trace file: {exc}") from None
    with z:
        need = set(_ARRAYS) | {
            "sched_workers",
            "sched_delays",
            "sched_local_steps",
            "sched_num_workers",
            "sched_init_local_steps",
            "divergence_round",
            "divergence_threshold",
            "seed",
            "format",
            "config",
        }
        missing = sorted(need - set(z.files))
        if missing:
            raise ValueError(f"path={str(path)!r} is not an afltheory trace (missing {', '.join(missing)})")
        if int(z["format"]) != FORMAT:
            raise ValueError(
                f"trace format {int(z['format'])} is not supported (this afltheory reads {FORMAT})"
            )
        d = {k: z[k] for k in z.files}
    sched = Schedule(
        d["sched_workers"],
        d["sched_delays"],
        d["sched_local_steps"],
        int(d["sched_num_workers"]),
        d["sched_init_local_steps"],
        d.get("sched_wall_clock"),
    )
    R, T1 = d["grad_norm_sq"].shape
    if d["loss"].shape != (R, T1) or sched.replicates != R or sched.rounds != T1 - 1:
        raise ValueError(
            f"inconsistent trace file {str(path)!r}: grad_norm_sq {d['grad_norm_sq'].shape}, loss "
            f"{d['loss'].shape}, schedule {sched.workers.shape}"
        )
    return trace_cls(
        grad_norm_sq=d["grad_norm_sq"],
        loss=d["loss"],
        schedule=sched,
        divergence=divergence_cls(d["divergence_round"], float(d["divergence_threshold"])),
        left_region=d["left_region"],
        x_final=d["x_final"],
        x0=d["x0"],
        oracle_calls=d["oracle_calls"],
        seed=int(d["seed"]),
        x=d.get("x"),
        config=json.loads(str(d["config"])),
        drift=d.get("drift"),
        tracking_error=d.get("tracking_error"),
        bits=d.get("bits"),
    )
