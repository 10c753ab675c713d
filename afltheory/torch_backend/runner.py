"""Anarchic federated training of torch models, driven by the same ``Behaviour`` components as ``simulate``.

A behaviour (or a recorded ``Schedule``) is sampled once; replicate r then replays it round by round, exactly
as ``afltheory.engine.simulate`` does [Yang et al. 2022, Alg. 1–3]:

    round t: arrivals M_t = W[t], delays τ = D[t], local steps K = K[t] (or the rule's fixed K_i)
      each i ∈ M_t: y_0 = x_{t−τ_i}; y_{k+1} = y_k − η_L (g_k + c_k), g_k = ∇f_i(y_k; minibatch),
                    c_k = worker-rule correction (FedProx μ(y_k − y_0); SCAFFOLD c − c_i),
                    G_i = (1/K) Σ_k (g_k + c_k)
      server: AFA-CD  x_{t+1} = x_t − η η_L (1/m) Σ_{i∈M_t} G_i
              AFA-CS  slot_i ← G_i,  x_{t+1} = x_t − η η_L (1/M) Σ_{i∈[M]} slot_i   (warm start at x_0)
              FedAvg  x_{t+1} = x_t − η η_L (1/m) Σ K_i G_i;   FedBuff with staleness weights;  AsySG (K = 1)
              Dynamic FedAvg  per-agent epochs K_i = E_i and steps η_i = μ/E_i; x_{t+1} = x_t − μ (1/m) Σ G_i

Per-worker local steps and step sizes are read through ``afltheory.algorithms.local_view`` (as ``simulate``).

The algorithm objects are the NumPy ones from ``afltheory.algorithms`` (same hyperparameters, same worker
rules); this module re-implements their arithmetic in torch on a flat parameter vector, so a run on the
logistic-regression model matches ``simulate`` on ``problems.LogisticRegression`` to float64 precision when
gradients are full-batch (``batch_size=None``). Minibatches are drawn from the NumPy stream
``stream(seed, NOISE, r)`` (indices without replacement), so runs are device-independent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike
from torch.func import functional_call

from .. import _faults, _rng
from .._numerics import DivergenceRule
from .._validation import check_int, check_nonnegative
from ..algorithms.base import ServerRule, WorkerRule, WorkerState
from ..algorithms.local import local_view
from ..anarchy.behaviour import Replay
from ..anarchy.schedule import Schedule
from ..compression.channel import channel_for
from ..compression.compressors import uncompressed_bits

if TYPE_CHECKING:
    from ..anarchy.behaviour import BehaviourLike
    from ..datasets import FederatedDataset

__all__ = ["TorchTask", "TorchTrace", "default_device", "run"]


def default_device() -> torch.device:
    """CUDA when available, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TorchTask:
    """A torch model with worker data: f_i(w) = mean CE of ``model`` on worker i's data + (λ/2)‖w‖².

    ``features``/``labels``: per-worker arrays; floating features are cast to ``dtype``, integer ones (token
    ids) kept as int64. ``batch_size``: minibatch size without replacement (min(B, n_i)), None = full batch.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        features: Sequence[ArrayLike],
        labels: Sequence[ArrayLike],
        *,
        X_test: ArrayLike | None = None,
        y_test: ArrayLike | None = None,
        batch_size: int | None = None,
        l2: float = 0.0,
        device: str | torch.device | None = None,
        dtype: torch.dtype = torch.float32,
        eval_batch: int = 4096,
    ):
        if len(features) != len(labels) or not features:
            raise ValueError("features and labels must be non-empty sequences of equal length")
        self.device = default_device() if device is None else torch.device(device)
        self.dtype = dtype
        self.model = model.to(device=self.device, dtype=dtype)
        self.l2 = check_nonnegative("l2", l2)
        self.batch_size = None if batch_size is None else check_int("batch_size", batch_size, low=1)
        self.eval_batch = check_int("eval_batch", eval_batch, low=1)
        self.X = [self._tensor(x) for x in features]
        self.y = [torch.as_tensor(np.asarray(y), dtype=torch.long, device=self.device) for y in labels]
        for i, (x, y) in enumerate(zip(self.X, self.y, strict=False)):
            if len(x) != len(y) or len(y) == 0:
                raise ValueError(f"worker {i}: {len(x)} samples but {len(y)} labels (need equal and >= 1)")
        self.sizes = np.array([len(y) for y in self.y])
        self.num_workers = len(self.X)
        self.X_test = None if X_test is None else self._tensor(X_test)
        self.y_test = (
            None
            if y_test is None
            else torch.as_tensor(np.asarray(y_test), dtype=torch.long, device=self.device)
        )
        self.names = [n for n, _ in model.named_parameters()]
        self.shapes = [p.shape for _, p in model.named_parameters()]
        self.numels = [p.numel() for _, p in model.named_parameters()]
        self.dim = int(sum(self.numels))

    @classmethod
    def from_dataset(cls, model: torch.nn.Module, data: FederatedDataset, **kw: Any) -> TorchTask:
        """From an ``afltheory.datasets.FederatedDataset`` (train partition + test set)."""
        feats = [data.X_train[p] for p in data.parts]
        labs = [data.y_train[p] for p in data.parts]
        return cls(model, feats, labs, X_test=data.X_test, y_test=data.y_test, **kw)

    def _tensor(self, a):
        a = np.asarray(a)
        if np.issubdtype(a.dtype, np.floating):
            return torch.as_tensor(a, dtype=self.dtype, device=self.device)
        return torch.as_tensor(a, dtype=torch.long, device=self.device)

    # -- flat parameters
    def initial_params(self) -> torch.Tensor:
        """The model's current parameters as one flat vector (the default x_0)."""
        return torch.cat([p.detach().reshape(-1) for p in self.model.parameters()]).clone()

    def unflatten(self, flat: torch.Tensor) -> dict:
        """The named parameter tensors (views) of the flat parameter vector ``flat``."""
        return {
            n: t.view(s)
            for n, t, s in zip(self.names, torch.split(flat, self.numels), self.shapes, strict=False)
        }

    def loss(self, flat: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The minibatch loss (mean cross-entropy, plus the l2 term) at parameters ``flat``."""
        out = F.cross_entropy(functional_call(self.model, self.unflatten(flat), (X,)), y)
        if self.l2:
            out = out + 0.5 * self.l2 * flat.dot(flat)
        return out

    def grad(self, flat: torch.Tensor, i: int, idx: ArrayLike | None = None) -> torch.Tensor:
        """∇f_i at flat on worker i's samples ``idx`` (None: all of them)."""
        X, y = self.X[i], self.y[i]
        if idx is not None:
            X, y = X[idx], y[idx]
        w = flat.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(self.loss(w, X, y), w)
        return g

    @torch.no_grad()
    def train_loss(self, flat: torch.Tensor) -> float:
        """f(x) = (1/M) Σ_i f_i(x) on the full training data."""
        p = self.unflatten(flat)
        tot = 0.0
        for X, y in zip(self.X, self.y, strict=False):
            s = 0.0
            for k in range(0, len(y), self.eval_batch):
                s += float(
                    F.cross_entropy(
                        functional_call(self.model, p, (X[k : k + self.eval_batch],)),
                        y[k : k + self.eval_batch],
                        reduction="sum",
                    )
                )
            tot += s / len(y)
        reg = 0.5 * self.l2 * float(flat.dot(flat)) if self.l2 else 0.0
        return tot / self.num_workers + reg

    @torch.no_grad()
    def evaluate(self, flat: torch.Tensor) -> tuple[float, float]:
        """(test loss, test top-1 accuracy); (nan, nan) without a test set."""
        if self.X_test is None or len(self.y_test) == 0:
            return math.nan, math.nan
        p = self.unflatten(flat)
        loss = correct = 0.0
        for k in range(0, len(self.y_test), self.eval_batch):
            z = functional_call(self.model, p, (self.X_test[k : k + self.eval_batch],))
            yy = self.y_test[k : k + self.eval_batch]
            loss += float(F.cross_entropy(z, yy, reduction="sum"))
            correct += float((z.argmax(dim=1) == yy).sum())
        n = len(self.y_test)
        return loss / n, correct / n


@dataclass(frozen=True)
class TorchTrace:
    """``eval_rounds`` (E,): rounds t at which x_t was evaluated; ``accuracy``/``test_loss``/``train_loss``
    (R, E); from a replicate's divergence round on its losses are +inf and its accuracy 0 (never NaN) and
    ``x`` is +inf; ``x`` (R, T+1, dim) float64 if recorded; ``diverged_round`` (R,) (−1: never).
    ``bits`` (R, T+1): cumulative bits sent by the workers (as ``Trace.bits``)."""

    eval_rounds: np.ndarray
    accuracy: np.ndarray
    test_loss: np.ndarray
    train_loss: np.ndarray
    schedule: Schedule
    x_final: np.ndarray
    diverged_round: np.ndarray
    x: np.ndarray | None = None
    config: dict = field(default_factory=dict)
    bits: np.ndarray | None = None

    @property
    def wall_clock(self) -> np.ndarray | None:
        """The recorded wall clock (replicates, rounds + 1), or None for round-mode schedules."""
        return self.schedule.wall_clock


def _worker_state(worker, M, dim, dt, dev) -> WorkerState:
    """The worker rule's own state (``WorkerRule.init``) for one replicate, its arrays as torch tensors."""
    return worker.init(1, M, dim).map_arrays(lambda v: torch.as_tensor(v, dtype=dt, device=dev))


def run(
    task: TorchTask,
    algorithm: ServerRule,
    behaviour: BehaviourLike,
    rounds: int,
    replicates: int = 1,
    seed: int = 0,
    x0: ArrayLike | None = None,
    *,
    eval_every: int = 1,
    train_loss: bool = False,
    record_x: bool = False,
) -> TorchTrace:
    """Train ``task`` with ``algorithm`` under ``behaviour`` (a Behaviour, EventDriven, Synchronous,
    Replay or a Schedule) for ``rounds`` rounds, ``replicates`` times (each with its own schedule and
    minibatches).

    ``x0``: flat start (default: the model's current parameters). Evaluates test loss/accuracy (and the
    training objective if ``train_loss``) every ``eval_every`` rounds and at the last round."""
    rounds = check_int("rounds", rounds, low=1)
    replicates = check_int("replicates", replicates, low=1)
    seed = check_int("seed", seed, low=0)
    eval_every = check_int("eval_every", eval_every, low=1)
    algorithm = _faults.substitute(algorithm)  # identity unless inside afltheory.mutants.injected(...)
    if not hasattr(algorithm, "eta_L"):
        raise ValueError(f"algorithm={algorithm!r} must be an afltheory.algorithms server rule")
    if not isinstance(algorithm, ServerRule):
        raise ValueError(f"algorithm={algorithm!r} must be an afltheory.algorithms.ServerRule")
    worker = algorithm.worker
    if not isinstance(worker, WorkerRule):
        raise ValueError(f"worker rule {worker!r} must be an afltheory.algorithms.WorkerRule")
    if isinstance(behaviour, Schedule):
        behaviour = Replay(behaviour)
    M = task.num_workers
    prepare = getattr(algorithm, "prepare", None)
    if prepare is not None:  # as in simulate: e.g. DynamicFedAvg checks its per-agent epochs against M
        prepare(task)
    # per-worker local steps K_i and step sizes η_i, normalized once (the same view simulate reads)
    view = local_view(algorithm, M)
    per_eta = None if view.step_sizes is None else view.step_sizes.tolist()
    if per_eta is not None and worker.init(1, M, 1):
        raise ValueError(
            f"algorithm={algorithm!r}: per-worker local step sizes need a stateless worker rule; got "
            f"{worker!r}"
        )
    sched = view.apply(behaviour.sample(rounds, replicates, M, seed))
    if hasattr(algorithm, "check_m"):
        algorithm.check_m(sched.m)
    dev, dt = task.device, task.dtype
    x_start = task.initial_params() if x0 is None else torch.as_tensor(np.asarray(x0), dtype=dt, device=dev)
    if x_start.shape != (task.dim,):
        raise ValueError(f"x0 has shape {tuple(x_start.shape)}; expected ({task.dim},)")
    eval_rounds = np.unique(np.r_[np.arange(0, rounds + 1, eval_every), rounds])
    E = len(eval_rounds)
    acc = np.full((replicates, E), np.nan)
    tl = np.full((replicates, E), np.nan)
    trl = np.full((replicates, E), np.nan)
    xs = np.full((replicates, rounds + 1, task.dim), np.nan) if record_x else None
    x_final = np.empty((replicates, task.dim))
    div = np.full(replicates, -1, dtype=np.int64)
    H = int(sched.delays.max()) + 1 if sched.delays.size else 1
    scheduled = getattr(algorithm, "scheduled", False)  # step-size schedules: round t runs at_round(t)
    E_step = algorithm.steps_per_round(sched.local_steps, sched.init_local_steps)  # η_L per local step: E

    def at(t):  # round t's rule (local_steps only for a per-step η_L: a rule may override at_round(t))
        if not scheduled:
            return algorithm
        t = max(t - _faults.get(_faults.FaultPoint.TORCH_ROUND_SHIFT, 0), 0)  # 0 unless a fault is injected
        return algorithm.at_round(t) if E_step is None else algorithm.at_round(t, local_steps=E_step)

    step = {"eta_L": at(0).eta_L, "seq": at(0).local_step_sequence}
    B = task.batch_size
    # the server rule's compressor, with the same per-replicate randomness as ``simulate`` (row mode)
    channel = channel_for(algorithm, task.dim, M, replicates, seed)
    channel_state = channel.init()  # all replicates' memories; replicate r's sends change row r only
    bits = np.zeros((replicates, rounds + 1))

    def send(G, workers, key, r):
        nonlocal channel_state
        if channel.comp is None:
            return G, float(len(G) * uncompressed_bits(task.dim))
        out, b, channel_state = channel.send(  # donates channel_state: only the returned one is used
            channel_state, G.double().cpu().numpy()[None], np.asarray(workers)[None], key, row=r
        )
        return torch.as_tensor(out[0], dtype=dt, device=dev), float(b[0])

    for r in range(replicates):
        gen = _rng.stream(seed, _rng.NOISE, r)

        def batch(i, gen=gen):
            n = int(task.sizes[i])
            if B is None or B >= n:
                return None
            return torch.as_tensor(gen.choice(n, size=B, replace=False), device=dev)

        rows = np.zeros(1, dtype=np.int64)

        def local(y0, i, K, wstate=None, rows=rows, batch=batch):
            """K local steps of the worker rule from y0 (its ``correction`` hook, on torch tensors)."""
            y = y0.clone()
            gsum = torch.zeros_like(y0)
            who = np.array([[i]])
            seq = step["seq"]  # η_L decaying per local step: (η_{tE}, …); G = (y_0 − y_K)/(mean step · K)
            for k in range(int(K)):
                g = task.grad(y, i, batch(i))
                if wstate is not None:
                    corr = worker.correction(wstate, y[None, None], y0[None, None], rows, who)
                    if corr is not None:
                        g = g + corr[0, 0]
                if seq is not None:
                    gsum += (seq[k] / step["eta_L"]) * g
                    y = y - seq[k] * g
                    continue
                gsum += g
                y = y - (step["eta_L"] if per_eta is None else per_eta[i]) * g
            return gsum / int(K), y

        x = x_start.clone()
        hist = torch.empty((H, task.dim), dtype=dt, device=dev)
        hist[0] = x

        def initial_updates(x=x, r=r, local=local):
            """Every worker's (sent) update at x_0, for a warm-started memory rule (no worker correction)."""
            G0 = torch.stack([local(x, i, sched.init_local_steps[r, i])[0] for i in range(M)])
            G0, bits[r, 0] = send(G0, np.arange(M), 0, r)
            return G0.double().cpu().numpy()[None]

        # the server rule itself (float64 NumPy, one replicate) and the worker rule's hooks: one definition
        state = algorithm.init(1, M, task.dim, initial_updates=initial_updates)
        wstate = _worker_state(worker, M, task.dim, dt, dev)
        e = 0

        def record(t, x, r=r, f=None):
            nonlocal e
            if record_x:
                xs[r, t] = x.double().cpu().numpy()
            if e < E and eval_rounds[e] == t:
                tl[r, e], acc[r, e] = task.evaluate(x)
                if train_loss:
                    trl[r, e] = task.train_loss(x) if f is None else f
                e += 1

        record(0, x)
        # the one divergence rule of every Monte Carlo loop (afltheory._numerics, as simulate): this loop
        # records x every round and f(x) = the training loss at its evaluation rounds (``train_loss``)
        diverging = DivergenceRule(x_start.double().cpu().numpy(), loss0=[trl[r, 0]] if train_loss else None)
        for t in range(rounds):
            rule = at(t)
            step["eta_L"] = eta_L = rule.eta_L
            step["seq"] = rule.local_step_sequence
            W, D, Ks = sched.workers[r, t], sched.delays[r, t], sched.local_steps[r, t]
            Gs, y0s, yKs = [], [], []
            for i, tau, K in zip(W.tolist(), D.tolist(), Ks.tolist(), strict=True):
                y0 = hist[(t - tau) % H]
                G, yK = local(y0, i, K, wstate)
                Gs.append(G), y0s.append(y0), yKs.append(yK)
            # every arrival used the pre-round worker state; now the rule updates it (SCAFFOLD's controls)
            wstate = worker.finish(  # the state passed in is donated: only the returned one is used
                wstate,
                torch.stack(y0s)[None],
                torch.stack(yKs)[None],
                torch.as_tensor(np.array(Ks[None])),
                eta_L,
                rows,
                W[None],
                M,
            )
            Gc, sent = send(torch.stack(Gs), W, t + 1, r)
            bits[r, t + 1] = bits[r, t] + sent
            xn, state = rule.aggregate(
                state,
                x.double().cpu().numpy()[None],
                Gc.double().cpu().numpy()[None],
                W[None],
                Ks[None],
                D[None],
                M,
            )
            x = torch.as_tensor(xn[0], dtype=dt, device=dev)
            f = task.train_loss(x) if train_loss and e < E and eval_rounds[e] == t + 1 else None
            if bool(diverging(x.double().cpu().numpy()[None], loss=None if f is None else [f])[0]):
                div[r] = t + 1
                break
            hist[(t + 1) % H] = x
            record(t + 1, x, f=f)
        step["eta_L"], step["seq"] = at(0).eta_L, at(0).local_step_sequence
        x_final[r] = x.double().cpu().numpy()
        if div[r] >= 0:  # reported as diverged, never NaN: losses +inf, accuracy 0 from the divergence round
            late = eval_rounds >= div[r]
            acc[r, late], tl[r, late] = 0.0, np.inf
            trl[r, late] = np.inf if train_loss else trl[r, late]
            x_final[r] = np.inf
            if xs is not None:
                xs[r, div[r] :] = np.inf
    config = {
        "model": type(task.model).__name__,
        "algorithm": repr(algorithm),
        "behaviour": repr(behaviour),
        "rounds": rounds,
        "replicates": replicates,
        "seed": seed,
        "device": str(dev),
        "dtype": str(dt),
        "batch_size": B,
    }
    return TorchTrace(eval_rounds, acc, tl, trl, sched, x_final, div, xs, config, bits)
