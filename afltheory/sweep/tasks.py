"""Task runners: turn one task (config + derived seed) into a result of summary metrics and curve arrays.

A result is a plain dict (JSON-able metrics, arrays as bytes of concatenated ``np.save`` records, never
pickle) so any executor can ship it and the store can write it as it is::

    {"id", "metrics": {...}, "array_names": [...], "arrays": bytes, "started", "finished", "duration",
    "worker"}

``run_task`` calls ``afltheory.simulate``; ``synthetic_task`` is a cheap deterministic stand-in (used to test
and benchmark the sweep machinery without the engine).
"""

from __future__ import annotations

import io
import math
import os
import socket
import time
import warnings
from collections.abc import Iterable

import numpy as np

__all__ = [
    "run_task",
    "synthetic_task",
    "summarize",
    "encode_arrays",
    "decode_arrays",
    "checkpoint_rounds",
    "TASK_FUNCTIONS",
]


# --------------------------------------------------------------------------------------------- arrays
def encode_arrays(arrays: dict) -> tuple[list[str], bytes]:
    """Names and bytes of concatenated ``np.save`` records (allow_pickle=False; deterministic bytes)."""
    buf = io.BytesIO()
    names = []
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        if arr.dtype == object:
            raise TypeError(f"array {name!r} has dtype object; only numeric arrays are stored")
        np.save(buf, arr, allow_pickle=False)
        names.append(name)
    return names, buf.getvalue()


def decode_arrays(names: Iterable[str], blob: bytes) -> dict:
    """The named arrays stored in ``blob`` (consecutive ``.npy`` payloads), as a dict."""
    buf = io.BytesIO(blob)
    return {name: np.load(buf, allow_pickle=False) for name in names}


def checkpoint_rounds(rounds: int, checkpoints: int) -> np.ndarray:
    """Evenly spaced rounds 0..rounds (both ends included), at most ``checkpoints + 1`` of them."""
    n = min(int(checkpoints), int(rounds))
    return np.unique(np.round(np.linspace(0, rounds, n + 1)).astype(np.int64))


def _finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


def _mean_sem(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over axis 0. A column with a non-finite entry (a diverged replicate) has mean
    and standard error +inf — never NaN — so the metrics and stored curves say so instead of hiding it."""
    n = a.shape[0]
    bad = ~np.isfinite(a).all(axis=0)
    with np.errstate(invalid="ignore", over="ignore"):
        mean = a.mean(axis=0)
        sem = a.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(mean)
    mean[bad | ~np.isfinite(mean)] = np.inf
    sem[bad | ~np.isfinite(sem)] = np.inf
    return mean, sem


def summarize(
    grad_norm_sq: np.ndarray,
    loss: np.ndarray,
    *,
    rounds: int,
    checkpoints: int,
    diverged: np.ndarray | None = None,
    f_star: float | None = None,
) -> tuple[dict, dict]:
    """Metrics and curve arrays from (replicates, rounds + 1) arrays of ‖∇f(x_t)‖² and f(x_t)."""
    g = np.asarray(grad_norm_sq, dtype=float)
    f = np.asarray(loss, dtype=float)
    R = g.shape[0]
    bad = ~np.isfinite(g) | ~np.isfinite(f)
    div = bad.any(axis=1)
    if diverged is not None:
        div = div | np.broadcast_to(np.asarray(diverged, dtype=bool).reshape(-1), (R,))
    first_bad = np.where(bad.any(axis=1), bad.argmax(axis=1), -1)
    div_rounds = first_bad[div & (first_bad >= 0)]
    ck = checkpoint_rounds(rounds, checkpoints)
    gm, gs = _mean_sem(g)
    fm, fs = _mean_sem(f)
    with np.errstate(invalid="ignore", over="ignore"):
        # running average over t = 0..T-1 of E‖∇f(x_t)‖² (the quantity bounded by the theorems), at checkpoint
        # T
        csum = np.concatenate([[0.0], np.cumsum(gm)])
        runavg = np.where(ck > 0, csum[ck] / np.maximum(ck, 1), gm[0])
    ok = ~div
    metrics = {
        "replicates": int(R),
        "rounds": int(rounds),
        "final_grad_norm_sq": _finite_or_none(gm[-1]),
        "final_grad_norm_sq_sem": _finite_or_none(gs[-1]),
        "avg_grad_norm_sq": _finite_or_none(gm[:-1].mean()) if rounds > 0 else _finite_or_none(gm[0]),
        "min_grad_norm_sq": _finite_or_none(np.min(gm)) if np.all(np.isfinite(gm)) else None,
        "final_loss": _finite_or_none(fm[-1]),
        "final_loss_sem": _finite_or_none(fs[-1]),
        "diverged": bool(div.any()),
        "diverged_count": int(div.sum()),
        "diverged_fraction": float(div.mean()),
        "divergence_round": int(div_rounds.min()) if div_rounds.size else None,
        # the same summaries over the replicates that did not diverge (None when all diverged)
        "final_grad_norm_sq_ok": _finite_or_none(g[ok, -1].mean()) if ok.any() else None,
    }
    if f_star is not None and metrics["final_loss"] is not None:
        metrics["final_suboptimality"] = metrics["final_loss"] - float(f_star)
    with np.errstate(invalid="ignore", over="ignore"):
        rep_avg = g[:, :-1].mean(axis=1) if rounds > 0 else g[:, 0].copy()
    # per-replicate summaries (so every grid point has a CI; a diverged replicate is +inf, never NaN)
    rep_avg = np.where(div | ~np.isfinite(rep_avg), np.inf, rep_avg)
    rep_final = np.where(div | ~np.isfinite(g[:, -1]), np.inf, g[:, -1])
    rep_loss = np.where(div | ~np.isfinite(f[:, -1]), np.inf, f[:, -1])
    arrays = {
        "rep_avg_grad_norm_sq": rep_avg,
        "rep_final_grad_norm_sq": rep_final,
        "rep_final_loss": rep_loss,
        "rounds": ck,
        "grad_norm_sq_mean": gm[ck],
        "grad_norm_sq_sem": gs[ck],
        "loss_mean": fm[ck],
        "loss_sem": fs[ck],
        "grad_norm_sq_runavg": runavg,
    }
    return metrics, arrays


def _result(payload, metrics, arrays, started):
    names, blob = encode_arrays(arrays)
    finished = time.time()
    return {
        "id": payload["id"],
        "metrics": metrics,
        "array_names": names,
        "arrays": blob,
        "started": started,
        "finished": finished,
        "duration": finished - started,
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }


# --------------------------------------------------------------------------------------------- runners
def run_task(payload: dict) -> dict:
    """Run one task with ``afltheory.simulate``. ``payload`` = {"id", "config", "seed"} (plain data)."""
    started = time.time()
    import afltheory

    from .spec import build_objects

    cfg = payload["config"]
    problem, behaviour, algorithm = build_objects(cfg)
    with warnings.catch_warnings():
        # divergence and region exits are recorded in the metrics, not raised/printed per task
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        trace = afltheory.simulate(
            problem,
            algorithm,
            behaviour,
            rounds=cfg["rounds"],
            replicates=cfg["replicates"],
            seed=payload["seed"],
        )
    consts = getattr(problem, "constants", None)
    metrics, arrays = summarize(
        trace.grad_norm_sq,
        trace.loss,
        rounds=cfg["rounds"],
        checkpoints=cfg["checkpoints"],
        diverged=getattr(trace, "diverged", None),
        f_star=getattr(consts, "f_star", None),
    )
    left = getattr(trace, "left_region", None)
    if left is not None:
        metrics["left_region_count"] = int(np.sum(np.asarray(left) >= 0))
    if getattr(trace, "tracking_error", None) is not None:  # drifting problems: MSD = E‖x_t − w°_t‖²
        metrics.update(msd_metrics(trace.tracking_error, cfg["checkpoints"], arrays))
    return _result(payload, metrics, arrays, started)


def msd_metrics(tracking_error, checkpoints: int, arrays: dict) -> dict:
    """Mean-square deviation summaries of a drifting run: ``final_msd``, ``avg_msd`` (time average over the
    second half of the horizon, the steady-state estimate) with per-replicate arrays ``rep_final_msd`` /
    ``rep_avg_msd`` and the checkpointed curve ``msd_mean``/``msd_sem`` (added to ``arrays``)."""
    e = np.asarray(tracking_error, dtype=float)
    T = e.shape[1] - 1
    rep_avg, rep_final = e[:, T // 2 :].mean(axis=1), e[:, -1]
    ck = np.unique(np.linspace(0, T, min(checkpoints, T + 1)).round().astype(int))
    with np.errstate(invalid="ignore", over="ignore"):  # no standard error (1 replicate, inf): inf, never NaN
        sem = e.std(axis=0, ddof=1) / np.sqrt(e.shape[0]) if e.shape[0] > 1 else np.full(T + 1, np.inf)
    sem = np.where(np.isnan(sem), np.inf, sem)
    arrays.update(
        {
            "rep_avg_msd": rep_avg,
            "rep_final_msd": rep_final,
            "msd_mean": e.mean(axis=0)[ck],
            "msd_sem": sem[ck],
        }
    )
    return {"final_msd": _finite_or_none(rep_final.mean()), "avg_msd": _finite_or_none(rep_avg.mean())}


def synthetic_task(payload: dict) -> dict:
    """Deterministic stand-in for ``run_task``: noisy geometric decay driven by the task seed.
    ``config["algorithm"]`` may carry ``sleep`` (seconds) and ``fail`` (raise) for machinery tests."""
    started = time.time()
    cfg = payload["config"]
    alg = cfg.get("algorithm", {})
    if alg.get("sleep"):
        time.sleep(float(alg["sleep"]))
    if alg.get("fail"):
        raise RuntimeError(f"synthetic failure in task {payload['id'][:12]}")
    rng = np.random.default_rng(payload["seed"])
    R, T = cfg["replicates"], cfg["rounds"]
    rate = float(alg.get("eta", 0.1))
    t = np.arange(T + 1)
    g = np.exp(-rate * t)[None, :] * (1.0 + 0.1 * rng.standard_normal((R, T + 1))) ** 2
    f = 0.5 * g
    metrics, arrays = summarize(g, f, rounds=T, checkpoints=cfg["checkpoints"])
    return _result(payload, metrics, arrays, started)


TASK_FUNCTIONS = {"simulate": run_task, "synthetic": synthetic_task}
