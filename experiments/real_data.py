"""The paper's real-data experiments [Yang et al. 2022, App. E] re-run on scikit-learn's digits (or a loaded
dataset): Table 2, Table 3, Figure 5 and the Exp(1)-straggler wall-clock comparison.

Each function returns a dict with ``rows`` (one per configuration: test accuracy at the last round, mean and
95 % t-interval over ``seeds`` independent replicates — each with its own arrivals, delays, local steps and
minibatches; the data partition is fixed by ``data_seed``), a Markdown ``table``, and the paths of the JSON
and PNG files written to ``out`` (if given). ``backend="numpy"`` runs ``problems.LogisticRegression`` through
``simulate`` (vectorized over seeds, fast); ``backend="torch"`` runs ``torch_backend.run`` with ``model`` =
"lr" or "cnn" (the Table 1 CNN adapted to 8×8 inputs).

Defaults follow the paper's LR/MNIST setup: η = 1, η_L = 0.1, batch 64, 150 rounds, m/M = 5/10, K = 5
(constant) or U{1..10} (dynamic), τ ≤ 4 (async: each worker starts from one of the 5 latest models).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from afltheory._validation import check_int
from afltheory.algorithms import AFACD, AFACS, SCAFFOLD, SGD, FedProx
from afltheory.anarchy import (
    Behaviour,
    BiasedArrivals,
    ConstantSteps,
    EventDriven,
    ExponentialTime,
    NoDelay,
    Synchronous,
    UniformArrivals,
    UniformDelay,
    UniformSteps,
)
from afltheory.checks import json_safe

__all__ = ["RealConfig", "figure5", "table2", "table3", "wallclock", "mean_ci"]


@dataclass(frozen=True)
class RealConfig:
    """Shared experiment settings (the paper's LR defaults)."""

    rounds: int = 150
    seeds: int = 10
    num_workers: int = 10
    m: int = 5
    K: int = 5
    eta: float = 1.0
    eta_L: float = 0.1
    batch_size: int = 64
    max_delay: int = 4
    backend: str = "numpy"
    model: str = "lr"
    data_seed: int = 0
    seed: int = 0
    eval_every: int = 1
    data_dir: str | None = None
    dataset: str = "digits"

    def __post_init__(self):
        for k in ("rounds", "seeds", "num_workers", "m", "K", "batch_size", "eval_every"):
            check_int(k, getattr(self, k), low=1)
        if self.backend not in ("numpy", "torch"):
            raise ValueError(f"backend={self.backend!r} must be 'numpy' or 'torch'")
        if self.backend == "numpy" and self.model != "lr":
            raise ValueError(f"model={self.model!r} needs backend='torch' (the NumPy backend is LR only)")
        if self.dataset not in ("digits", "mnist", "cifar10"):
            raise ValueError(f"dataset={self.dataset!r} must be 'digits', 'mnist' or 'cifar10'")


def mean_ci(a, level: float = 0.95):
    """(mean, half-width of the t-interval) over the first axis; nan half-width for one sample."""
    from scipy import stats

    a = np.asarray(a, dtype=float)
    n = a.shape[0]
    mu = a.mean(axis=0)
    if n < 2:
        return mu, np.full_like(mu, np.nan)
    return mu, stats.t.ppf(0.5 + level / 2, n - 1) * a.std(axis=0, ddof=1) / math.sqrt(n)


def accuracy_ci(acc, level: float = 0.95):
    """(mean, low, high) of per-seed accuracies in [0, 1] over the first axis: a Student-t interval on the
    logit scale, mapped back (so it stays inside [0, 1] — a raw t-interval of 2 seeds gave "0.378 ± 2.118");
    low/high are None with fewer than 2 seeds (no interval exists)."""
    from scipy import stats

    a = np.clip(np.asarray(acc, dtype=float), 0.0, 1.0)
    n = a.shape[0]
    mu = a.mean(axis=0)
    if n < 2:
        return mu, None, None
    eps = 0.5 / max(n, 1) / 100  # keep 0 and 1 finite on the logit scale
    z = np.log((a + eps) / (1 - a + eps))
    hw = stats.t.ppf(0.5 + level / 2, n - 1) * z.std(axis=0, ddof=1) / math.sqrt(n)
    zc = z.mean(axis=0)
    back = lambda v: np.clip((np.exp(v) * (1 + eps) - eps) / (1 + np.exp(v)), 0.0, 1.0)
    return mu, back(zc - hw), back(zc + hw)


def _data(cfg: RealConfig, p: int):
    from afltheory.datasets import federated as fed

    images = cfg.model == "cnn"
    kw = dict(num_workers=cfg.num_workers, classes_per_worker=p, seed=cfg.data_seed)
    if cfg.dataset == "digits":
        return fed.load_digits_federated(images=images, **kw)
    if cfg.data_dir is None:
        raise ValueError(f"dataset={cfg.dataset!r} needs data_dir (a directory with the files)")
    loader = fed.load_mnist_federated if cfg.dataset == "mnist" else fed.load_cifar10_federated
    ds = loader(cfg.data_dir, **kw)
    return ds if images else ds.flat()


def _run(cfg: RealConfig, ds, algorithm, behaviour):
    """Test accuracy (seeds, E) at ``eval_rounds`` (E,) and the wall clock (seeds, T+1) or None."""
    if cfg.backend == "numpy":
        from afltheory.engine import simulate
        from afltheory.problems.logistic import LogisticRegression

        prob = LogisticRegression.from_dataset(ds, batch_size=cfg.batch_size)
        tr = simulate(
            prob, algorithm, behaviour, rounds=cfg.rounds, replicates=cfg.seeds, seed=cfg.seed, record_x=True
        )
        ev = np.unique(np.r_[np.arange(0, cfg.rounds + 1, cfg.eval_every), cfg.rounds])
        acc = prob.accuracy(tr.x[:, ev], ds.X_test, ds.y_test)
        return ev, acc, tr.wall_clock, int(tr.divergence.diverged.sum())
    from afltheory.torch_backend import TorchTask, make_model, run

    task = TorchTask.from_dataset(make_model(cfg.model, ds, seed=cfg.seed), ds, batch_size=cfg.batch_size)
    tr = run(
        task,
        algorithm,
        behaviour,
        rounds=cfg.rounds,
        replicates=cfg.seeds,
        seed=cfg.seed,
        eval_every=cfg.eval_every,
    )
    return tr.eval_rounds, tr.accuracy, tr.wall_clock, int((tr.diverged_round >= 0).sum())


def _settings(cfg: RealConfig, arrivals=None):
    arr = UniformArrivals(cfg.m) if arrivals is None else arrivals
    const, dyn = ConstantSteps(cfg.K), UniformSteps.paper(cfg.K)
    return {
        "sync-const": Behaviour(arr, NoDelay(), const),
        "sync-dyn": Behaviour(arr, NoDelay(), dyn),
        "async-const": Behaviour(arr, UniformDelay(cfg.max_delay), const),
        "async-dyn": Behaviour(arr, UniformDelay(cfg.max_delay), dyn),
    }


def _fmt(mu, lo=None, hi=None, diverged=0):
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else " (1 seed: no CI)"
    out = f"{mu:.3f}" + ci
    return out + (f" ({diverged} diverged)" if diverged else "")


def _table(rows, row_key, col_key):
    rk = list(dict.fromkeys(r[row_key] for r in rows))
    ck = list(dict.fromkeys(r[col_key] for r in rows))
    cell = {
        (r[row_key], r[col_key]): _fmt(r["acc_mean"], r["acc_ci95_low"], r["acc_ci95_high"], r["diverged"])
        for r in rows
    }
    lines = [f"| {row_key} | " + " | ".join(map(str, ck)) + " |", "|---" * (len(ck) + 1) + "|"]
    lines += [f"| {a} | " + " | ".join(cell.get((a, b), "") for b in ck) + " |" for a in rk]
    return "\n".join(lines)


def _write(out, name, result, figs=()):
    if out is None:
        return result
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    js = out / f"{name}.json"
    record = json_safe({k: v for k, v in result.items() if k != "curves"}, nonfinite="null")
    from afltheory._io import atomic_write

    atomic_write(js, json.dumps(record, indent=1, default=str, allow_nan=False))
    atomic_write(out / f"{name}.md", result["table"] + "\n")
    result["files"] = [str(js), str(out / f"{name}.md")]
    from afltheory.plots import save

    for fname, fig in figs:
        result["files"].append(save(fig, out / fname))
    return result


def _row(cfg, ev, acc, div, **labels):
    mu, lo, hi = accuracy_ci(acc[:, -1])
    return {
        **labels,
        "acc_mean": float(mu),
        "acc_ci95_low": None if lo is None else float(lo),
        "acc_ci95_high": None if hi is None else float(hi),
        "seeds": cfg.seeds,
        "rounds": cfg.rounds,
        "diverged": div,
        "curve_mean": mean_ci(acc)[0].tolist(),
        "eval_rounds": ev.tolist(),
    }


def table2(cfg: RealConfig = RealConfig(), ps=(1, 2, 5, 10), out=None) -> dict:
    """Table 2: AFA-CD test accuracy for p ∈ ``ps`` × {sync, async} × {constant, dynamic} local steps."""
    rows = []
    for p in ps:
        ds = _data(cfg, p)
        for name, beh in _settings(cfg).items():
            ev, acc, _, div = _run(cfg, ds, AFACD(cfg.eta, cfg.eta_L), beh)
            rows.append(_row(cfg, ev, acc, div, p=p, setting=name))
    res = {
        "experiment": "table2",
        "config": cfg.__dict__,
        "rows": rows,
        "table": _table(rows, "p", "setting"),
    }
    from afltheory.plots import new_figure

    fig, axes = new_figure(1, len(ps), width=3.2, height=3, sharey=True, squeeze=False)
    for ax, p in zip(axes[0], ps, strict=False):
        for r in (r for r in rows if r["p"] == p):
            ax.plot(r["eval_rounds"], r["curve_mean"], label=r["setting"])
        ax.set_title(f"p = {p}")
        ax.set_xlabel("round")
    axes[0, 0].set_ylabel("test accuracy")
    axes[0, -1].legend(fontsize=7)
    return _write(out, "table2", res, [("table2.png", fig)])


def table3(
    cfg: RealConfig = RealConfig(), ps=(1, 2, 5, 10), out=None, settings=("sync-const", "async-dyn")
) -> dict:
    """Table 3: FedProx (μ = 0.1) and SCAFFOLD as the worker rule inside AFA-CD (SGD for reference)."""
    rules = {"SGD": SGD(), "FedProx(0.1)": FedProx(0.1), "SCAFFOLD": SCAFFOLD()}
    rows = []
    for p in ps:
        ds = _data(cfg, p)
        behs = _settings(cfg)
        for s in settings:
            for rname, rule in rules.items():
                ev, acc, _, div = _run(cfg, ds, AFACD(cfg.eta, cfg.eta_L, worker=rule), behs[s])
                rows.append(_row(cfg, ev, acc, div, p=p, setting=s, worker=rname, column=f"{rname} {s}"))
    res = {"experiment": "table3", "config": cfg.__dict__, "rows": rows, "table": _table(rows, "p", "column")}
    return _write(out, "table3", res)


def figure5(cfg: RealConfig = RealConfig(), ps=(1, 2, 5, 10), out=None) -> dict:
    """Figure 5: AFA-CD under uniform arrivals vs AFA-CD and AFA-CS under the paper's biased arrivals
    (async, dynamic steps)."""
    if cfg.num_workers != 10:
        raise ValueError(
            f"figure5 uses the paper's 10-worker biased probabilities; num_workers={cfg.num_workers}"
        )
    rows, curves = [], {}
    for p in ps:
        ds = _data(cfg, p)
        uni = _settings(cfg)["async-dyn"]
        bia = _settings(cfg, BiasedArrivals.paper(cfg.m))["async-dyn"]
        for label, algo, beh in (
            ("AFA-CD uniform", AFACD(cfg.eta, cfg.eta_L), uni),
            ("AFA-CD biased", AFACD(cfg.eta, cfg.eta_L), bia),
            ("AFA-CS biased", AFACS(cfg.eta, cfg.eta_L), bia),
        ):
            ev, acc, _, div = _run(cfg, ds, algo, beh)
            rows.append(_row(cfg, ev, acc, div, p=p, method=label))
            curves[(p, label)] = (ev, *mean_ci(acc))
    res = {
        "experiment": "figure5",
        "config": cfg.__dict__,
        "rows": rows,
        "table": _table(rows, "p", "method"),
    }
    from afltheory.plots import new_figure

    fig, axes = new_figure(1, len(ps), width=3.2, height=3, sharey=True, squeeze=False)
    for ax, p in zip(axes[0], ps, strict=False):
        for label in ("AFA-CD uniform", "AFA-CD biased", "AFA-CS biased"):
            ev, mu, hw = curves[(p, label)]
            ax.plot(ev, mu, label=label)
            ax.fill_between(ev, mu - hw, mu + hw, alpha=0.2)
        ax.set_title(f"p = {p}")
        ax.set_xlabel("round")
    axes[0, 0].set_ylabel("test accuracy")
    axes[0, -1].legend(fontsize=7)
    return _write(out, "figure5", res, [("figure5.png", fig)])


def _first_reach(acc, ev, target):
    hit = acc >= target
    idx = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
    return np.where(idx >= 0, ev[np.maximum(idx, 0)], -1)


def wallclock(cfg: RealConfig = RealConfig(), p: int = 1, target: float = 0.85, out=None) -> dict:
    """Exp(1) stragglers: asynchronous AFL (event-driven AFA-CD: a round closes at the m-th of M arrivals) vs
    synchronous FedAvg (m sampled workers, τ = 0; a round waits for the slowest). FedAvg is run as AFA-CD with
    the same (η, η_L) — identical to two-sided FedAvg(η/K, η_L) — so only the arrival process differs.
    Reports rounds and wall-clock time to ``target`` test accuracy, and the AFL/FedAvg ratios."""
    ds = _data(cfg, p)
    steps = ConstantSteps(cfg.K)
    runs = {
        "AFL (event-driven AFA-CD)": EventDriven(cfg.m, ExponentialTime(1.0), steps),
        "FedAvg (synchronous)": Synchronous(UniformArrivals(cfg.m), ExponentialTime(1.0), steps),
    }
    rows, curves = [], {}
    for label, beh in runs.items():
        ev, acc, wc, div = _run(cfg, ds, AFACD(cfg.eta, cfg.eta_L), beh)
        rt = _first_reach(acc, ev, target)
        ok = rt >= 0
        tt = np.where(ok, wc[np.arange(cfg.seeds), np.maximum(rt, 0)], np.nan)
        r = _row(cfg, ev, acc, div, method=label)
        rt_mu, rt_hw = mean_ci(rt[ok].astype(float)) if ok.any() else (math.nan, math.nan)
        tt_mu, tt_hw = mean_ci(tt[ok]) if ok.any() else (math.nan, math.nan)
        r.update(
            reached=int(ok.sum()),
            rounds_to_target=float(rt_mu),
            rounds_to_target_ci95=float(rt_hw),
            time_to_target=float(tt_mu),
            time_to_target_ci95=float(tt_hw),
            mean_round_time=float((wc[:, -1] / cfg.rounds).mean()),
        )
        if not ok.any():
            r["to_target_reason"] = f"no seed reached test accuracy {target} in {cfg.rounds} rounds"
        elif ok.sum() < 2:
            r["to_target_reason"] = "one seed reached the target: no confidence interval"
        rows.append(r)
        curves[label] = (ev, mean_ci(acc)[0], wc[:, ev].mean(axis=0))
    afl, sync = rows
    ratios = {
        "rounds_ratio_afl_over_fedavg": afl["rounds_to_target"] / sync["rounds_to_target"],
        "time_ratio_afl_over_fedavg": afl["time_to_target"] / sync["time_to_target"],
        "round_time_ratio": afl["mean_round_time"] / sync["mean_round_time"],
        "round_time_ratio_theory": sum(1 / (cfg.num_workers - k) for k in range(cfg.m))
        / sum(1 / k for k in range(1, cfg.m + 1)),
    }
    lines = [
        "| method | final acc | reached | rounds to target | time to target | mean round time |",
        "|---|---|---|---|---|---|",
    ]

    def pm(mu, hw):
        if not np.isfinite(mu):
            return "not reached"
        return f"{mu:.1f}" + (f" ± {hw:.1f}" if np.isfinite(hw) else "")

    lines += [
        f"| {r['method']} | {_fmt(r['acc_mean'], r['acc_ci95_low'], r['acc_ci95_high'], r['diverged'])} "
        f"| {r['reached']}/{cfg.seeds} | {pm(r['rounds_to_target'], r['rounds_to_target_ci95'])} | "
        f"{pm(r['time_to_target'], r['time_to_target_ci95'])} | {r['mean_round_time']:.3f} |"
        for r in rows
    ]
    lines.append(
        f"\nAFL/FedAvg (target {target}): rounds {ratios['rounds_ratio_afl_over_fedavg']:.2f}, wall "
        f"clock {ratios['time_ratio_afl_over_fedavg']:.2f} (round time {ratios['round_time_ratio']:.3f}; "
        f"order statistics predict {ratios['round_time_ratio_theory']:.3f})"
    )
    res = {
        "experiment": "wallclock",
        "config": cfg.__dict__,
        "p": p,
        "target": target,
        "rows": rows,
        "ratios": ratios,
        "table": "\n".join(lines),
    }
    from afltheory.plots import new_figure

    fig, (a1, a2) = new_figure(1, 2, width=4, height=3, sharey=True)
    for label, (ev, mu, t) in curves.items():
        a1.plot(ev, mu, label=label)
        a2.plot(t, mu, label=label)
    for a in (a1, a2):
        a.axhline(target, color="grey", lw=0.8, ls="--")
    a1.set_xlabel("round")
    a2.set_xlabel("wall clock (Exp(1) compute times)")
    a1.set_ylabel("test accuracy")
    a2.legend(fontsize=7)
    return _write(out, "wallclock", res, [("wallclock.png", fig)])
