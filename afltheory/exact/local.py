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

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..algorithms.base import IMPERATIVE_HOOKS as _IMPERATIVE
from ..algorithms.base import ServerRule as ServerRuleBase
from ..algorithms.base import ServerView, UnsupportedRule, WorkerRule
from ..algorithms.local import LocalView
from ..problems.base import LinearGaussianModel, Problem
from .law import SIMULATE_HINT, ExactUnavailable

__all__ = [
    "ExactRule",
    "IMPERATIVE_HOOKS",
    "linear_model",
    "local_maps",
    "LocalMap",
    "local_maps_sequence",
    "NoExactModel",
    "server_rule",
]


class NoExactModel(ExactUnavailable, TypeError):
    """The problem has no exact model (not linear-Gaussian, or its noise may not be additive): a declared
    refusal of the exact engine (an ``ExactUnavailable``; also a ``TypeError``, as it was raised before)."""


@dataclass(frozen=True)
class LocalMap:
    C: np.ndarray  # (d, d)
    c: np.ndarray  # (d,)
    Q: np.ndarray  # (d, d)


def local_maps(
    H: np.ndarray,
    b_tilde: np.ndarray,
    Sigma: np.ndarray,
    eta_L: float | np.ndarray,
    mu: float | np.ndarray,
    Ks: Iterable[int],
) -> dict[int, LocalMap]:
    """{K: LocalMap} for one worker (H, b̃, Σ: its Hessian, centred offset, noise covariance). Batched form
    (the adversary's evaluator): H (..., d, d), b̃ (..., d), Σ (..., d, d), η_L and μ scalars or arrays of
    the leading shape (...); the maps then carry those leading axes."""
    d = H.shape[-1]
    I = np.eye(d)
    step = np.asarray(eta_L, dtype=float)[..., None, None]
    P = I - step * (H + np.asarray(mu, dtype=float)[..., None, None] * I)
    out = {}
    Pj = np.broadcast_to(I, P.shape)
    S = np.zeros(P.shape)
    Qsum = np.zeros(np.broadcast_shapes(P.shape, np.shape(Sigma)))
    for k in range(1, max(Ks) + 1):
        S = S + Pj
        Qsum = Qsum + Pj @ Sigma @ np.swapaxes(Pj, -1, -2)
        Pj = Pj @ P
        if k in Ks:
            out[k] = LocalMap(C=S @ H / k, c=-(S @ b_tilde[..., None])[..., 0] / k, Q=Qsum / k**2)
    return out


def local_maps_sequence(
    H: np.ndarray, b_tilde: np.ndarray, Sigma: np.ndarray, steps: tuple[float, ...], mu: float
) -> dict[int, LocalMap]:
    """{K: LocalMap} for K = len(steps) local steps of sizes ``steps`` = (η_0, …, η_{K−1}) (η_L decaying per
    local step, ``afltheory.algorithms.schedules``). With P_k = I − η_k (H + μ I) and η̄ the mean step,
    e_{k+1} = P_k e_k − η_k (H ỹ_0 − b̃ + ξ_k) and G = −e_K/(η̄ K) = C ỹ_0 + c + n with
    S = Σ_j (η_j/η̄) Π_{l>j} P_l, C = S H / K, c = −S b̃ / K, Cov n = (1/K²) Σ_j (η_j/η̄)² Π_{l>j} P_l Σ (·)ᵀ,
    accumulated forward (S ← P_k S + (η_k/η̄) I, Q ← P_k Q P_kᵀ + (η_k/η̄)² Σ). Equal steps give
    ``local_maps``'s map."""
    d = H.shape[-1]
    I = np.eye(d)
    K = len(steps)
    bar = sum(steps) / K
    S = np.zeros((d, d))
    Q = np.zeros((d, d))
    for eta in steps:
        P = I - eta * (H + mu * I)
        r = eta / bar
        S = P @ S + r * I
        Q = P @ Q @ P.T + (r * r) * Sigma
    return {K: LocalMap(C=S @ H / K, c=-(S @ b_tilde) / K, Q=Q / K**2)}


@dataclass(frozen=True, eq=False)
class ExactRule:
    """What the exact recursion needs of a server rule: its declarative view (``ServerRule.view``, the one
    every engine reads) — x_{t+1} = x_t − (γ/n) Σ w_K(K_i) w_τ(τ_i) M p_i G_i over the arrivals (``memory``
    False) or over the M memory slots s_i ← w G_i (``memory`` True), n = ``normalizer(m, M)`` — with the
    worker's proximal weight ``mu`` and a heavy-ball optimizer's β (``momentum``). ``local``: the rule's
    per-worker local computation (``ServerRule.local_view(M)``: fixed K_i, per-worker η_i), None when the
    view was built without the number of workers."""

    view: ServerView
    mu: float  # the worker's proximal weight (0 for SGD)
    #: heavy-ball momentum β of the server optimizer (``server_rule(..., momentum=True)``), else None
    momentum: float | None = None

    @property
    def algorithm(self) -> ServerRuleBase:
        """The server rule."""
        return self.view.rule

    @property
    def memory(self) -> bool:
        """The rule keeps per-worker memory slots."""
        return self.view.memory

    @property
    def gamma(self) -> float:
        """γ, the rule's ``step_size`` (η η_L, or what a subclass says)."""
        return self.view.gamma

    @property
    def eta_L(self) -> float:
        """The rule's local step size η_L (the round's mean step when it decays per local step)."""
        return float(self.view.rule.eta_L)

    @property
    def local(self) -> LocalView | None:
        """The rule's local view for the view's number of workers (None without it)."""
        return self.view.local

    @property
    def warm_start(self) -> bool:
        """Memory slots start with every worker's update at x_0."""
        return self.view.warm_start

    @property
    def worker_weights(self) -> np.ndarray | None:
        """(M,) M·p_i from the client weights (None: uniform)."""
        return self.view.client_weights

    @property
    def step_sequence(self) -> tuple[float, ...] | None:
        """Round t's E local step sizes when η_L decays per local step (``eta_L``: their mean), else None."""
        return self.view.step_sequence

    def local_for(self, num_workers: int) -> LocalView:
        """The rule's local view for ``num_workers`` workers (``ServerRule.local_view``)."""
        local = self.view.local
        if local is not None and local.num_workers == num_workers:
            return local
        return self.algorithm.local_view(num_workers)

    def worker_weight(self, i: int) -> float:
        """The client-weight factor M·p_i on worker i's update (1 when the rule has none)."""
        ww = self.view.client_weights
        return 1.0 if ww is None else float(ww[i])

    def local_steps_for(self, num_workers: int) -> np.ndarray:
        """The local step of each worker, (M,): η_L, or the rule's per-worker sizes (its local view;
        DynamicFedAvg's μ/E_k)."""
        return self.local_for(num_workers).worker_step_sizes(self.eta_L)

    def weight_K(self, K: int) -> float:
        """w_K(K) (1 when the rule has none)."""
        return float(self.view.k_weight(K))

    def weight_tau(self, tau: int) -> float:
        """w_τ(τ) (1 when the rule has none)."""
        return float(self.view.tau_weight(tau))

    def weight(self, K: int, tau: int) -> float:
        """w(K, τ) = w_K(K) · w_τ(τ): the factor on G_i in the server sum (FedAvg: K; FedBuff: K·s(τ))."""
        return self.weight_K(K) * self.weight_tau(tau)

    def normalizer(self, m: int, num_workers: int) -> float:
        """The count the sum is divided by (m arrivals, M slots, or what a subclass says)."""
        return float(self.algorithm.normalizer(m, num_workers))


#: The ``ServerRule`` hooks the exact recursion cannot represent when a rule overrides them (the base's
#: ``IMPERATIVE_HOOKS``): ``server_rule`` refuses such a rule (``UnsupportedRule``); the mutation analysis
#: reads it to predict the refusal.
IMPERATIVE_HOOKS = _IMPERATIVE


def server_rule(
    algorithm: ServerRuleBase, num_workers: int | None = None, *, momentum: bool = False
) -> ExactRule:
    """The exact view of ``algorithm``: its declarative view (``ServerRule.view``: step size, per-arrival
    weights, normalizer, memory, warm start, client weights, and its local view: fixed local steps,
    per-worker step sizes) is honoured — so a subclass changing those hooks (a mutant) is represented as
    what it is; a rule that overrides an imperative hook (``IMPERATIVE_HOOKS``: ``aggregate``,
    ``update_memory``, ``init``, ``arrival_weights``, ``combine``) or whose worker rule is not affine with
    state-free noise is refused (``UnsupportedRule``, a TypeError), never read as its base class.
    ``num_workers``: resolves the client weights and the local view; a step-size schedule must be resolved
    first (``algorithm.at_round(t)``; the exact engine does so per round). ``momentum``: the caller carries a
    heavy-ball server optimizer's buffer (``exact.moments``): such an optimizer is then read
    (``ExactRule.momentum`` = β), not refused."""
    if not isinstance(algorithm, ServerRuleBase):
        raise TypeError(
            f"algorithm={algorithm!r} must be an afltheory.algorithms.ServerRule — {SIMULATE_HINT}"
        )
    changed = algorithm.overridden_hooks()
    if changed:
        raise UnsupportedRule(
            f"algorithm={algorithm!r} overrides {', '.join(changed)}: exact moments represent rules defined "
            f"by the declarative hooks of afltheory.algorithms.ServerRule (step_size, local_steps_weight, "
            f"staleness_weight, normalizer, keeps_memory, warm_start) — {SIMULATE_HINT}"
        )
    opt = algorithm.server_optimizer
    beta = float(opt.beta) if momentum and opt is not None and opt.heavy_ball else None
    if opt is not None and opt.exact_reason is not None and beta is None:
        raise UnsupportedRule(f"server optimizer {opt!r}: {opt.exact_reason} — {SIMULATE_HINT}")
    worker = getattr(algorithm, "worker", None)  # a rule need not have one (then: refused, below)
    mu = worker.affine_prox_weight() if isinstance(worker, WorkerRule) else None
    if mu is None:
        raise UnsupportedRule(
            f"worker rule {worker!r} is not affine in the start point with state-free noise (exact moments "
            f"need a worker whose correction is μ (y − y_0): SGD, FedProx) — {SIMULATE_HINT}"
        )
    if algorithm.keeps_memory and (
        algorithm.local_steps_weight(np.asarray(1)) is not None
        or algorithm.staleness_weight(np.asarray(0)) is not None
    ):
        raise UnsupportedRule(
            f"algorithm={algorithm!r}: exact moments do not represent weighted memory slots — {SIMULATE_HINT}"
        )
    if algorithm.weights is not None and num_workers is None:
        raise UnsupportedRule(
            f"algorithm={algorithm!r} has client weights; this backend reads the rule "
            f"without the number of workers and cannot represent them — {SIMULATE_HINT}"
        )
    view = algorithm.view(num_workers)
    if view.client_weights is not None and view.memory:
        raise UnsupportedRule(
            f"algorithm={algorithm!r}: exact moments do not represent client weights on "
            f"memory slots — {SIMULATE_HINT}"
        )
    _ = view.local  # built (and validated: ValueError naming the hook) here, before any round is run
    return ExactRule(view=view, mu=float(mu), momentum=beta)


def linear_model(problem: Problem) -> LinearGaussianModel:
    """The problem's linear-Gaussian model, or TypeError saying why exact moments are unavailable."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem={problem!r} must be an afltheory.problems.Problem")
    model = problem.linear_gaussian()
    if model is None:
        raise NoExactModel(
            f"problem={problem!r} is not linear-Gaussian (its gradients are not "
            "affine in x with additive noise of known covariance: linear_gaussian() "
            f"returned None), so exact moments are unavailable — {SIMULATE_HINT}"
        )
    if not problem.additive_noise:
        raise NoExactModel(
            f"problem={problem!r} overrides stochastic_grad (noise may not be additive and "
            f"x-independent), so exact moments are unavailable — {SIMULATE_HINT}"
        )
    return model
