"""Replay a PEP worst-case instance through the library's own server rules (an independent reference).

The PEP builds the iterates symbolically (``core._run_skeleton``). Here the recovered gradients are fed, as an
oracle looked up by position, to a plain loop that runs the worker's K local SGD steps from the stale model
and calls the algorithm's ``aggregate`` (the code ``simulate`` uses). If the formulation and the library
disagree on the update rule (delays, K-averaging, FedAvg's K weights, AFA-CS memory), the replay leaves the
recorded points (a ValueError) or reproduces a different metric.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .core import PEPResult

__all__ = ["replay"]


def replay(result: PEPResult, tol: float = 1e-5) -> tuple[np.ndarray, np.ndarray, float]:
    """Run ``result.skeleton`` on the recovered instance with the library's server rule.

    Returns (x, grad_norm_sq, value): the server iterates (T+1, r), ‖∇f(x_t)‖² at the iterates whose gradients
    the instance recorded (t < T, or t ≤ T for the "min"/"last" metrics) and the metric. ``tol``: relative
    distance at which a queried point is matched to a recorded one.
    """
    sk, inst = result.skeleton, result.instance
    if inst is None:
        raise ValueError("result has no instance (the solve failed); nothing to replay")
    oracle = inst.oracle(tol)
    M, T = sk.num_workers, sk.T
    algo = sk.algorithm  # the rule the PEP read declaratively; here its imperative ``aggregate`` runs
    import dataclasses

    def rule_at(t):  # round t's constant rule, as ``simulate`` runs it
        if getattr(algo, "scheduled", False):
            return algo.at_round(t)
        return algo if sk.eta_L_rounds is None else dataclasses.replace(algo, eta_L=sk.local_eta(t))

    def local(i, y0, k, s):
        y, acc = y0.copy(), np.zeros_like(y0)
        eta_L = sk.local_eta(s)
        for _ in range(k):
            g = oracle(i, y)
            acc += g
            y = y - eta_L * g
        return acc / k

    x = inst.x0.copy()
    d = x.shape[0]
    state = algo.init(
        1, M, d, initial_updates=lambda: np.array([[local(i, x, int(sk.init_K[i]), 0) for i in range(M)]])
    )
    xs = [x]
    for t in range(T):
        G = np.array(
            [
                [
                    local(int(i), xs[t - int(dl)], int(k), t)
                    for i, dl, k in zip(sk.workers[t], sk.delays[t], sk.K[t], strict=True)
                ]
            ]
        )
        x, state = rule_at(t).aggregate(
            state, xs[t][None], G, sk.workers[t][None], sk.K[t][None], sk.delays[t][None], M
        )
        x = x[0]
        xs.append(x)
    xs = np.array(xs)
    n = inst.x.shape[0]  # T (average metric only) or T + 1 iterates with all gradients recorded
    gn = np.array([np.sum(np.mean([oracle(i, xs[t]) for i in range(M)], axis=0) ** 2) for t in range(n)])
    if result.metric == "average":
        value = float(gn[:T].mean())
    elif result.metric == "min":
        value = float(gn.min())
    elif result.metric == "last_gap":
        value = float(inst.values[("x", T)].mean() - inst.f_star)
    elif result.metric == "last_dist":
        value = float(np.sum((xs[T] - inst.x_star) ** 2))
    else:
        value = float(gn[-1])
    if result.decrease_weight:  # objective metric − c (f(x_0) − f(x_T)) with the recovered function values
        value -= result.decrease_weight * (inst.values[("x", 0)].mean() - inst.values[("x", T)].mean())
    return xs, gn, value
