"""An independent plain loop of the paper's algorithms, for "engine = paper's algorithm" verdicts.

One replicate, one arrival, one local step at a time, following docs/theorems.md literally and reading only
the algorithm's hyperparameters (η, η_L, AFA-CS's warm start), never its hooks: a worker that pulled the model
τ rounds ago starts from y_0 = x_{t−τ}, takes K steps y_{k+1} = y_k − η_L ∇f_i(y_k) and returns G_i = (1/K)
Σ_k ∇f_i(y_k);
- AFA-CD (Algorithm 2, as proved): x_{t+1} = x_t − η η_L (1/m) Σ_{i∈M_t} G_i;
- AFA-CS (Algorithm 3): slot i ← G_i for every arrival, x_{t+1} = x_t − η η_L (1/M) Σ_{i∈[M]} slot_i, the
  slots warm-started with each worker's update at x_0 (K from ``schedule.init_local_steps``);
- FedAvg (two-sided): x_{t+1} = x_t + η (1/m) Σ_i (−η_L K_i G_i);
- FedBuff (Nguyen et al. 2022): x_{t+1} = x_t + η (1/m) Σ_i w(τ_i)(−η_L K_i G_i), w = 1, 1/√(1+τ) or 1/(1+τ);
- workers: SGD; FedProx (gradient of f_i(y) + (μ/2)‖y − y_0‖²); SCAFFOLD option II (gradient − c_i + c with
  the controls as of the round's start; after the round c_i ← c_i − c + (y_0 − y_K)/(K η_L) for every arrival
  and c ← c + (1/M) Σ (c_i⁺ − c_i)). G_i is the mean of the K (corrected) gradients.
Deterministic gradients (σ_L = 0): given the schedule, the trajectory is a function, so the engine must
reproduce it to rounding. The reference runs on the schedule the check sampled itself (not on what the engine
reports). ``noise(t, j, k)`` adds explicit gradient noise (round t, arrival j, local step k; the warm start of
AFA-CS's slot i calls it with t = −1, j = i) for comparisons in distribution.

The one reference oracle: the checks (``_power.reference_check``, ``agreement``) and the unit tests
(tests/engine/test_engine.py, tests/paper_checks) import it; ``afltheory`` never does."""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import AFACD, AFACS, AsySG, FedAvg, FedBuff
from afltheory.algorithms.workers import SCAFFOLD, SGD, FedProx

__all__ = ["KINDS", "reference_grad_norm_sq", "reference_iterates"]

#: the paper's algorithms this loop implements, and the wrong readings used as negative controls
KINDS = ("paper", "sum_K", "printed_step")


def _rule(algorithm) -> str:
    if isinstance(algorithm, AFACS):
        return "afacs"
    if isinstance(algorithm, (AFACD, AsySG)):
        return "afacd"
    if isinstance(algorithm, FedAvg):
        return "fedavg"
    if isinstance(algorithm, FedBuff):
        return "fedbuff"
    raise TypeError(
        f"algorithm={type(algorithm).__name__} has no reference "
        "loop; allowed: AFACD, AsySG, AFACS, FedAvg, FedBuff"
    )


_WEIGHT = {
    "constant": lambda tau: 1.0,
    "sqrt": lambda tau: 1.0 / np.sqrt(1.0 + tau),
    "poly": lambda tau: 1.0 / (1.0 + tau),
}


def reference_iterates(problem, algorithm, schedule, x0, r=0, kind="paper", noise=None):
    """x_0 … x_T (T+1, d) of replicate ``r`` of ``schedule`` with deterministic gradients (plus
    ``noise(t, j, k)`` -> (d,) when given).

    ``kind``: "paper" (the algorithm as proved), or a plausible wrong reading for negative controls: "sum_K"
    (the worker returns the sum, not the mean, of its K gradients) or "printed_step" (server step η instead of
    η η_L, inconsistency #1)."""
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r} must be one of {KINDS}")
    rule = _rule(algorithm)
    eta, eta_L = float(algorithm.eta), float(algorithm.eta_L)
    server = eta if kind == "printed_step" else eta * eta_L
    M = problem.num_workers
    fixed = getattr(algorithm, "fixed_local_steps", None)
    xs = [np.array(x0, dtype=float)]

    worker = getattr(algorithm, "worker", None) or SGD()
    if not isinstance(worker, (SGD, FedProx, SCAFFOLD)):
        raise TypeError(
            f"worker={type(worker).__name__} has no reference loop; allowed: SGD, FedProx, SCAFFOLD"
        )
    d = len(np.asarray(x0))
    c_i, c = np.zeros((M, d)), np.zeros(d)

    def update(i, y0, K, t, j):
        y = np.array(y0, dtype=float)
        total = np.zeros_like(y)
        for k in range(K):
            g = problem.local_grad(y, i) + (0.0 if noise is None else noise(t, j, k))
            if isinstance(worker, FedProx):
                g = g + worker.mu * (y - y0)
            elif isinstance(worker, SCAFFOLD):
                g = g + c - c_i[i]
            total = total + g
            y = y - eta_L * g
        return (total if kind == "sum_K" else total / K), y

    memory = None
    if rule == "afacs":
        if getattr(algorithm, "memory_init", "warm") == "warm":
            memory = [
                update(i, xs[0], int(fixed or schedule.init_local_steps[r, i]), -1, i)[0] for i in range(M)
            ]
        else:
            memory = [np.zeros_like(xs[0]) for _ in range(M)]
    for t in range(schedule.rounds):
        ups = []
        for j in range(schedule.m):
            i = int(schedule.workers[r, t, j])
            tau = int(schedule.delays[r, t, j])
            K = int(fixed or schedule.local_steps[r, t, j])
            y0 = xs[max(t - tau, 0)]
            G, yK = update(i, y0, K, t, j)
            ups.append((i, K, tau, G, y0, yK))
        if isinstance(worker, SCAFFOLD):
            new = {i: c_i[i] - c + (y0 - yK) / (K * eta_L) for i, K, _, _, y0, yK in ups}
            c = c + sum(new[i] - c_i[i] for i in new) / M
            for i, v in new.items():
                c_i[i] = v
        x = xs[t]
        if rule == "afacd":
            x = x - server * sum(u[3] for u in ups) / len(ups)
        elif rule == "afacs":
            for u in ups:
                memory[u[0]] = u[3]
            x = x - server * sum(memory) / M
        elif rule == "fedavg":
            x = x + eta * sum(-eta_L * K * G for _, K, _, G, _, _ in ups) / len(ups)
        else:
            w = _WEIGHT[algorithm.staleness]
            x = x + eta * sum(w(tau) * (-eta_L * K * G) for _, K, tau, G, _, _ in ups) / len(ups)
        xs.append(x)
    return np.stack(xs)


def reference_grad_norm_sq(problem, algorithm, schedule, x0, kind="paper") -> np.ndarray:
    """‖∇f(x_t)‖² (replicates, T+1) of the reference loop on every replicate of ``schedule``."""
    out = np.empty((schedule.replicates, schedule.rounds + 1))
    for r in range(schedule.replicates):
        xs = reference_iterates(problem, algorithm, schedule, x0, r, kind)
        out[r] = np.sum(problem.grad(xs) ** 2, axis=-1)
    return out
