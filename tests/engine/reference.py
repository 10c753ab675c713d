"""A plain, obviously-correct reference implementation (tests only): one replicate, one worker, one step at a
time, following docs/theorems.md literally. Deterministic gradients (σ_L = 0) or an explicit noise
callback."""

from __future__ import annotations

import numpy as np


def reference_run(problem, algorithm, schedule, x0, r=0, noise=None):
    """Return the list of iterates x_0..x_T of replicate r of ``schedule``.

    noise(t, j, k) -> (d,) additive gradient noise for round t, arrival j, local step k (default 0).
    """
    name = type(algorithm).__name__
    eta, eta_L = algorithm.eta, algorithm.eta_L
    M, d = problem.num_workers, problem.dim
    xs = [np.array(x0, dtype=float)]

    def local_update(i, y0, K, t, j):
        y = y0.copy()
        grads = []
        for k in range(K):
            g = problem.local_grad(y, i) + (0.0 if noise is None else noise(t, j, k))
            grads.append(g)
            y = y - eta_L * g
        return sum(grads) / K

    memory = None
    if name == "AFACS":
        if algorithm.memory_init == "warm":
            memory = [local_update(i, xs[0], int(schedule.init_local_steps[r, i]), -1, i) for i in range(M)]
        else:
            memory = [np.zeros(d) for _ in range(M)]
    for t in range(schedule.rounds):
        updates = []
        for j in range(schedule.m):
            i = int(schedule.workers[r, t, j])
            tau = int(schedule.delays[r, t, j])
            K = int(schedule.local_steps[r, t, j])
            updates.append((i, K, tau, local_update(i, xs[t - tau], K, t, j)))
        x = xs[t]
        if name == "AFACD" or name == "AsySG":
            x_new = x - eta * eta_L * sum(G for _, _, _, G in updates) / len(updates)
        elif name == "FedAvg":
            # two-sided: Δ_i = y_K − y_0 = −η_L Σ_k g_k = −η_L K G_i ; x += η · mean Δ
            deltas = [-eta_L * K * G for _, K, _, G in updates]
            x_new = x + eta * sum(deltas) / len(deltas)
        elif name == "FedBuff":
            w = {
                "constant": lambda s: 1.0,
                "sqrt": lambda s: 1 / np.sqrt(1 + s),
                "poly": lambda s: 1 / (1 + s),
            }
            deltas = [w[algorithm.staleness](tau) * (-eta_L * K * G) for _, K, tau, G in updates]
            x_new = x + eta * sum(deltas) / len(deltas)
        elif name == "AFACS":
            for i, _, _, G in updates:
                memory[i] = G
            x_new = x - eta * eta_L * sum(memory) / M
        else:
            raise NotImplementedError(name)
        xs.append(x_new)
    return xs
