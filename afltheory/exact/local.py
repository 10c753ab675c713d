"""The K-step local map of one worker on a linear-Gaussian problem, and the server rules as affine maps.

With ∇f_i(y) = H_i y − b_i and additive noise ξ_k ~ (0, Σ_i), K local steps of the worker rule from y_0 are
affine in y_0. In coordinates centred at x* (ỹ = y − x*, b̃_i = b_i − H_i x*) and with the FedProx proximal
weight μ (0 for SGD), P = I − η_L (H_i + μ I):
    e_{k+1} = P e_k − η_L (H_i ỹ_0 − b̃_i + ξ_k),      e_k = y_k − y_0,
    G_i = −e_K / (η_L K) = C ỹ_0 + c + n,   C = S_K H_i / K,  c = −S_K b̃_i / K,  S_K = Σ_{j<K} P^j,
    Cov(n) = (1/K²) Σ_{j<K} P^j Σ_i P^{jᵀ}.
(The engine's G is the mean of the K corrected gradients, which equals (y_0 − y_K)/(η_L K) for any rule.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.dynamic import DynamicFedAvg
from ..algorithms.server import AFACD, AFACS, STALENESS_WEIGHTS, AsySG, FedAvg, FedBuff
from ..algorithms.workers import SGD, FedProx
from ..problems.base import Problem
from .law import SIMULATE_HINT


@dataclass(frozen=True)
class LocalMap:
    C: np.ndarray   # (d, d)
    c: np.ndarray   # (d,)
    Q: np.ndarray   # (d, d)


def local_maps(H, b_tilde, Sigma, eta_L: float, mu: float, Ks) -> dict[int, LocalMap]:
    """{K: LocalMap} for one worker (H, b̃, Σ: its Hessian, centred offset, noise covariance)."""
    d = H.shape[0]
    P = np.eye(d) - eta_L * (H + mu * np.eye(d))
    out = {}
    Pj = np.eye(d)
    S = np.zeros((d, d))
    Qsum = np.zeros((d, d))
    for k in range(1, max(Ks) + 1):
        S = S + Pj
        Qsum = Qsum + Pj @ Sigma @ Pj.T
        Pj = Pj @ P
        if k in Ks:
            out[k] = LocalMap(C=S @ H / k, c=-(S @ b_tilde) / k, Q=Qsum / k**2)
    return out


@dataclass(frozen=True)
class ServerRule:
    """kind "cd": x_{t+1} = x_t − (γ/m) Σ_{i∈M_t} w(K_i, τ_i) G_i; kind "cs": AFA-CS memory slots."""

    kind: str
    gamma: float                 # η η_L
    mu: float                    # FedProx proximal weight (0 for SGD)
    eta_L: float
    fixed_local_steps: int | None
    staleness: str | None = None
    weight_by_K: bool = False
    memory_init: str = "warm"
    step_sizes: object = None    # callable num_workers -> per-worker local steps (DynamicFedAvg's μ/E_k)

    def local_steps_for(self, num_workers: int) -> np.ndarray:
        """The local step η_L of each worker, (M,)."""
        if self.step_sizes is None:
            return np.full(num_workers, self.eta_L)
        return np.asarray(self.step_sizes(num_workers), dtype=float)

    def weight_K(self, K: int) -> float:
        return float(K) if self.weight_by_K else 1.0

    def weight_tau(self, tau: int) -> float:
        return 1.0 if self.staleness is None else float(STALENESS_WEIGHTS[self.staleness](np.array(tau)))

    def weight(self, K: int, tau: int) -> float:
        """w(K, τ) = w_K(K) · w_τ(τ): the factor on G_i in the server sum (FedAvg: K; FedBuff: K·s(τ))."""
        return self.weight_K(K) * self.weight_tau(tau)


def server_rule(algorithm) -> ServerRule:
    if type(algorithm) is DynamicFedAvg:   # x_{t+1} = x_t − μ (1/m) Σ G_i, per-worker local steps μ/E_i, SGD
        return ServerRule("cd", gamma=float(algorithm.gamma), mu=0.0, eta_L=float("nan"),
                          fixed_local_steps=algorithm.fixed_local_steps,
                          step_sizes=algorithm.local_step_sizes)
    # exact types only: a subclass (e.g. an afltheory.mutants mutant) may change the rule; never read it as
    # its base class
    if type(algorithm) not in (AFACD, AFACS, FedAvg, FedBuff, AsySG):
        raise TypeError(f"algorithm={algorithm!r}: exact moments represent AFACD, AFACS, FedAvg, FedBuff and "
                        f"AsySG themselves, not subclasses that may change the rule — {SIMULATE_HINT}")
    worker = getattr(algorithm, "worker", None)
    if type(worker) not in (SGD, FedProx):
        raise TypeError(f"worker rule {worker!r} is not SGD or FedProx (exact types; exact moments need a "
                        f"worker affine in the start point with state-free noise) — {SIMULATE_HINT}")
    if isinstance(worker, SGD):
        mu = 0.0
    elif isinstance(worker, FedProx):
        mu = float(worker.mu)
    else:
        raise TypeError(f"worker rule {worker!r} is not affine in the start point with state-free noise "
                        f"(exact moments support SGD and FedProx workers) — {SIMULATE_HINT}")
    g = float(algorithm.eta) * float(algorithm.eta_L)
    common = dict(gamma=g, mu=mu, eta_L=float(algorithm.eta_L),
                  fixed_local_steps=getattr(algorithm, "fixed_local_steps", None))
    if isinstance(algorithm, AFACS):
        return ServerRule("cs", memory_init=algorithm.memory_init, **common)
    if isinstance(algorithm, FedAvg):
        return ServerRule("cd", weight_by_K=True, **common)
    if isinstance(algorithm, FedBuff):
        return ServerRule("cd", weight_by_K=True, staleness=algorithm.staleness, **common)
    if isinstance(algorithm, (AFACD, AsySG)):
        return ServerRule("cd", **common)
    raise TypeError(f"algorithm={algorithm!r}: exact moments support AFACD, AFACS, FedAvg, FedBuff and AsySG "
                    f"— {SIMULATE_HINT}")


def linear_model(problem):
    """The problem's linear-Gaussian model, or TypeError saying why exact moments are unavailable."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem={problem!r} must be an afltheory.problems.Problem")
    model = problem.linear_gaussian()
    if model is None:
        raise TypeError(
            f"problem={problem!r} is not linear-Gaussian (its gradients are not affine in x with additive noise of "
            f"known covariance: linear_gaussian() returned None), so exact moments are unavailable — "
            f"{SIMULATE_HINT}")
    if type(problem).stochastic_grad is not Problem.stochastic_grad:
        raise TypeError(f"problem={problem!r} overrides stochastic_grad (noise may not be additive and "
                        f"x-independent), so exact moments are unavailable — {SIMULATE_HINT}")
    return model
