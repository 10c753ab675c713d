"""Server optimizers as a component (optax-style: ``init`` builds the state, ``update`` returns the step and
the new state), applied AFTER the base server rule's aggregate, so its arrival weights (local steps ×
staleness), client weights and normalizer are never dropped.

The base aggregate of a rule computes s_t = (η η_L / n) Σ_i w_i G_i (``ServerRule.aggregate``: n the
normalizer, w_i the arrival × client weights); without an optimizer x_{t+1} = x_t − s_t. With one, the
pseudo-gradient is g_t = s_t / η (minus the weighted mean client update: −Δ_t of Reddi et al. 2021) and

- ``ServerSGD()``: x_{t+1} = x_t − s_t (the base step itself: bit-identical to no optimizer);
- ``ServerMomentum(beta)``: m_t = β m_{t−1} + g_t, x_{t+1} = x_t − η m_t (heavy ball: linear in the updates);
- ``ServerAdam(beta1, beta2, tau)``: m_t = β1 m_{t−1} + (1 − β1) g_t, v_t = β2 v_{t−1} + (1 − β2) g_t²;
- ``ServerYogi(beta1, beta2, tau)``: v_t = v_{t−1} − (1 − β2) g_t² sign(v_{t−1} − g_t²);
- ``ServerAdagrad(beta1, tau)``: v_t = v_{t−1} + g_t²;

the adaptive three step x_{t+1} = x_t − η m_t / (√v_t + τ) coordinate-wise, with m_{−1} = 0, v_{−1} = τ² and
no bias correction — FedAdam / FedYogi / FedAdagrad as in [Reddi, Charles, Zaheer, Garrett, Rush, Konečný,
Kumar, McMahan, "Adaptive Federated Optimization", ICLR 2021, Algorithm 2] (from memory; defaults β1 = 0.9,
β2 = 0.99, τ = 1e-3 as in its experiments).

``with_server_optimizer(rule, optimizer)`` returns a copy of the rule carrying the optimizer (the
declared hook ``ServerRule.server_optimizer``, kept by ``at_round``). ``simulate`` and the torch backend run
it; the exact engine, the PEP skeleton and the fast evaluator read rules through ``exact.local.server_rule``
and refuse any optimizer but ``ServerSGD`` with the optimizer's ``exact_reason`` (``UnsupportedRule``) —
except that ``afltheory.exact.moments`` takes heavy-ball momentum (``heavy_ball``: the step is linear in the
updates; its buffer joins the stacked moment vector, ``exact.moments.ExactSystem(momentum=True)``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import check_positive, check_real
from .base import ServerRule, ServerState, UnsupportedRule

__all__ = [
    "ServerAdagrad",
    "ServerAdam",
    "ServerMomentum",
    "ServerOptimizer",
    "ServerOptState",
    "ServerSGD",
    "ServerYogi",
    "optimized",
    "with_server_optimizer",
]


@dataclass(frozen=True)
class ServerOptState(ServerState):
    """The server state of a rule with an optimizer: ``m``, ``v`` (R, d) the optimizer's moments and
    ``memory`` (R, M, d) the rule's memory slots ((R, 0, d) for a rule without memory)."""

    m: np.ndarray
    v: np.ndarray
    memory: np.ndarray


class ServerOptimizer:
    """Base of the server optimizers: ``update(state, s, eta) -> (step, state)`` with s the base aggregate's
    step (R, d) and η the round's server step size; x_{t+1} = x_t − step. ``exact_reason``: why the exact
    engine (and PEP, the fast evaluator) cannot take it (None: it can — the identity)."""

    exact_reason: ClassVar[str | None] = "a server optimizer with its own state"
    #: the step is the base aggregate's (ServerSGD): every engine path reads the rule as without optimizer
    identity: ClassVar[bool] = False
    v0_is_tau2: ClassVar[bool] = False
    #: heavy-ball momentum (``beta``): linear in the updates, so ``afltheory.exact.moments`` can carry it
    heavy_ball: ClassVar[bool] = False

    def init(self, replicates: int, dim: int, memory: np.ndarray) -> ServerOptState:
        """The state at x_0: m = 0, v = τ² (adaptive) or 0."""
        v0 = float(getattr(self, "tau", 0.0)) ** 2 if self.v0_is_tau2 else 0.0
        return ServerOptState(np.zeros((replicates, dim)), np.full((replicates, dim), v0), memory)

    def update(self, state: ServerOptState, s: np.ndarray, eta: float) -> tuple[np.ndarray, ServerOptState]:
        """(the step subtracted from x, the new state) from the base step ``s`` (R, d) and the round's η;
        ``state`` is donated."""
        raise NotImplementedError


@dataclass(frozen=True)
class ServerSGD(ServerOptimizer):
    """x_{t+1} = x_t − s_t: the base step (the exact engine accepts it)."""

    exact_reason: ClassVar[str | None] = None
    identity: ClassVar[bool] = True

    def update(self, state: ServerOptState, s: np.ndarray, eta: float) -> tuple[np.ndarray, ServerOptState]:
        """The base step itself."""
        return s, state


@dataclass(frozen=True)
class ServerMomentum(ServerOptimizer):
    """Heavy ball: m_t = β m_{t−1} + g_t, x_{t+1} = x_t − η m_t (g_t = s_t/η)."""

    beta: float = 0.9
    exact_reason: ClassVar[str | None] = (
        "heavy-ball momentum is linear in the updates and afltheory.exact.moments carries its buffer, but "
        "this backend (PEP, the fast evaluator, the steady-state solver) does not"
    )
    heavy_ball: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_real("beta", self.beta, low=0.0, high=1.0, high_open=True)

    def update(self, state: ServerOptState, s: np.ndarray, eta: float) -> tuple[np.ndarray, ServerOptState]:
        """m ← β m + s/η; the step η m."""
        m = self.beta * state.m + s / eta
        return eta * m, ServerOptState(m, state.v, state.memory)


@dataclass(frozen=True)
class _Adaptive(ServerOptimizer):
    beta1: float = 0.9
    beta2: float = 0.99
    tau: float = 1e-3
    exact_reason: ClassVar[str | None] = (
        "an adaptive server optimizer is nonlinear in the updates (coordinate-wise division by √v + τ)"
    )
    v0_is_tau2: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_real("beta1", self.beta1, low=0.0, high=1.0, high_open=True)
        check_real("beta2", self.beta2, low=0.0, high=1.0, high_open=True)
        check_positive("tau", self.tau)

    def _v(self, v, g2):
        raise NotImplementedError

    def update(self, state: ServerOptState, s: np.ndarray, eta: float) -> tuple[np.ndarray, ServerOptState]:
        """m ← β1 m + (1 − β1) g, v ← the rule's v, step η m / (√v + τ), g = s/η."""
        g = s / eta
        m = self.beta1 * state.m + (1.0 - self.beta1) * g
        v = self._v(state.v, g * g)
        return eta * m / (np.sqrt(v) + self.tau), ServerOptState(m, v, state.memory)


@dataclass(frozen=True)
class ServerAdam(_Adaptive):
    """FedAdam: v_t = β2 v_{t−1} + (1 − β2) g_t²."""

    def _v(self, v, g2):
        return self.beta2 * v + (1.0 - self.beta2) * g2


@dataclass(frozen=True)
class ServerYogi(_Adaptive):
    """FedYogi: v_t = v_{t−1} − (1 − β2) g_t² sign(v_{t−1} − g_t²)."""

    def _v(self, v, g2):
        return v - (1.0 - self.beta2) * g2 * np.sign(v - g2)


@dataclass(frozen=True)
class ServerAdagrad(_Adaptive):
    """FedAdagrad: v_t = v_{t−1} + g_t² (``beta2`` unused)."""

    def _v(self, v, g2):
        return v + g2


def with_server_optimizer(rule: Any, optimizer: ServerOptimizer) -> Any:
    """A copy of the server rule ``rule`` whose step is ``optimizer``'s, applied after the base aggregate.
    Refused (``UnsupportedRule``, naming ``server_optimizer``) for a rule that overrides ``aggregate``: its
    own server step would not pass through the base composition."""
    if not isinstance(optimizer, ServerOptimizer):
        raise TypeError(
            f"server_optimizer={optimizer!r} must be an afltheory.algorithms.server_opt.ServerOptimizer "
            "(ServerSGD, ServerMomentum, ServerAdam, ServerYogi, ServerAdagrad)"
        )
    if not isinstance(rule, ServerRule):
        raise TypeError(f"rule={rule!r} must be an afltheory.algorithms ServerRule")
    if rule.overridden_hooks(("aggregate",)):
        raise UnsupportedRule(
            f"server_optimizer: {type(rule).__name__} overrides aggregate, so a server optimizer cannot be "
            "applied after the base aggregate (state the rule through the base's hooks instead)"
        )
    out = copy.copy(rule)
    object.__setattr__(out, "server_optimizer", optimizer)
    return out


def optimized(rule_class: Any, optimizer: ServerOptimizer) -> Any:
    """A rule factory ``f(**fields) -> with_server_optimizer(rule_class(**fields), optimizer)`` (a claim's
    ``rule=``: the claim resolves the step sizes, the factory attaches the optimizer). The factory exposes
    its parts as ``f.rule_class`` and ``f.optimizer`` (read by ``afltheory.mutants.generated``: the base
    rule's view mutants and the optimizer's own mutants)."""

    def factory(**fields: Any) -> Any:
        return with_server_optimizer(rule_class(**fields), optimizer)

    factory.__name__ = f"{getattr(rule_class, '__name__', 'rule')}+{type(optimizer).__name__}"
    factory.rule_class, factory.optimizer = rule_class, optimizer  # type: ignore[attr-defined]
    return factory
