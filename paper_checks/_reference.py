"""An independent plain loop of the paper's algorithms, for "engine = paper's algorithm" verdicts.

One replicate, one arrival, one local step at a time, following THEOREMS.md literally and reading only the
algorithm's hyperparameters (η, η_L, AFA-CS's warm start), never its hooks: a worker that pulled the model τ rounds
ago starts from y_0 = x_{t−τ}, takes K steps y_{k+1} = y_k − η_L ∇f_i(y_k) and returns G_i = (1/K) Σ_k ∇f_i(y_k);
- AFA-CD (Algorithm 2, as proved): x_{t+1} = x_t − η η_L (1/m) Σ_{i∈M_t} G_i;
- AFA-CS (Algorithm 3): slot i ← G_i for every arrival, x_{t+1} = x_t − η η_L (1/M) Σ_{i∈[M]} slot_i, the slots
  warm-started with each worker's update at x_0 (K from ``schedule.init_local_steps``);
- FedAvg (two-sided): x_{t+1} = x_t + η (1/m) Σ_i (−η_L K_i G_i).
Deterministic gradients (σ_L = 0): given the schedule, the trajectory is a function, so the engine must reproduce it
to rounding. The reference runs on the schedule the check sampled itself (not on what the engine reports).
"""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import AFACD, AFACS, AsySG, FedAvg

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
    raise TypeError(f"algorithm={type(algorithm).__name__} has no reference loop; allowed: AFACD, AsySG, AFACS, "
                    "FedAvg")


def reference_iterates(problem, algorithm, schedule, x0, r=0, kind="paper"):
    """x_0 … x_T (T+1, d) of replicate ``r`` of ``schedule`` with deterministic gradients.

    ``kind``: "paper" (the algorithm as proved), or a plausible wrong reading for negative controls: "sum_K" (the
    worker returns the sum, not the mean, of its K gradients) or "printed_step" (server step η instead of η η_L,
    inconsistency #1)."""
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r} must be one of {KINDS}")
    rule = _rule(algorithm)
    eta, eta_L = float(algorithm.eta), float(algorithm.eta_L)
    server = eta if kind == "printed_step" else eta * eta_L
    M = problem.num_workers
    fixed = getattr(algorithm, "fixed_local_steps", None)
    xs = [np.array(x0, dtype=float)]

    def update(i, y0, K):
        y = np.array(y0, dtype=float)
        total = np.zeros_like(y)
        for _ in range(K):
            g = problem.local_grad(y, i)
            total = total + g
            y = y - eta_L * g
        return total if kind == "sum_K" else total / K

    memory = None
    if rule == "afacs":
        if getattr(algorithm, "memory_init", "warm") == "warm":
            memory = [update(i, xs[0], int(fixed or schedule.init_local_steps[r, i])) for i in range(M)]
        else:
            memory = [np.zeros_like(xs[0]) for _ in range(M)]
    for t in range(schedule.rounds):
        ups = []
        for j in range(schedule.m):
            i = int(schedule.workers[r, t, j])
            tau = int(schedule.delays[r, t, j])
            K = int(fixed or schedule.local_steps[r, t, j])
            ups.append((i, K, update(i, xs[max(t - tau, 0)], K)))
        x = xs[t]
        if rule == "afacd":
            x = x - server * sum(G for _, _, G in ups) / len(ups)
        elif rule == "afacs":
            for i, _, G in ups:
                memory[i] = G
            x = x - server * sum(memory) / M
        else:
            x = x + eta * sum(-eta_L * K * G for _, K, G in ups) / len(ups)
        xs.append(x)
    return np.stack(xs)


def reference_grad_norm_sq(problem, algorithm, schedule, x0, kind="paper") -> np.ndarray:
    """‖∇f(x_t)‖² (replicates, T+1) of the reference loop on every replicate of ``schedule``."""
    out = np.empty((schedule.replicates, schedule.rounds + 1))
    for r in range(schedule.replicates):
        xs = reference_iterates(problem, algorithm, schedule, x0, r, kind)
        out[r] = np.sum(problem.grad(xs) ** 2, axis=-1)
    return out
