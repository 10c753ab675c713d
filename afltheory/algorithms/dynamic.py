"""Dynamic FedAvg [Rizk, Vlaski, Sayed, SPAWC 2020, Algorithm 2] (docs/dynamic.md).

Per iteration L of the K agents are sampled without replacement (the behaviour: ``UniformArrivals(L)``, see
``DynamicFedAvg.participation``). Agent k starts from the server model, runs E_k epochs, each one step w ←
w − (μ/E_k) g on a mini-batch of B_k of its N_k samples drawn without replacement, and returns its model;
the server averages the L returned models: x_{t+1} = (1/L) Σ_k y_{k,E_k} = x_t − μ (1/L) Σ_k G_k, G_k the
average of agent k's E_k mini-batch gradients.

Server rule: ``DynamicFedAvg`` (an AFA-CD-type average with step γ = μ); worker rule: ``EpochSGD`` (plain
SGD with per-agent step μ/E_k and E_k steps). With equal E_k = E it equals ``FedAvg(eta=1, eta_L=μ/E)``
with ``ConstantSteps(E)`` (tests/dynamic). The mini-batch size is a property of the agents' data:
``prepare(problem)`` applies ``batch`` to a ``DriftingQuadratic`` built with per-agent samples
(``federated`` / ``slides``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_int, check_positive
from ..compression.channel import check_compressor
from .base import ServerRule
from .workers import SGD

if TYPE_CHECKING:
    from ..anarchy.behaviour import Behaviour

__all__ = ["DynamicFedAvg", "EpochSGD"]


def _per_agent(name, value):
    """An int >= 1 or a tuple of ints >= 1 (one per agent), validated; tuples stay tuples (hashable)."""
    if np.ndim(value) == 0:
        return check_int(name, value.item() if hasattr(value, "item") else value, low=1)
    vals = tuple(
        check_int(f"{name}[{k}]", v.item() if hasattr(v, "item") else v, low=1)
        for k, v in enumerate(np.asarray(value).ravel())
    )
    if not vals:
        raise ValueError(f"{name}=() must be an int >= 1 or one int >= 1 per agent")
    return vals


@dataclass(frozen=True)
class EpochSGD(SGD):
    """Agent k runs E_k plain SGD steps with step μ/E_k (Algorithm 2's ClientUpdate)."""

    mu: float = 1.0
    epochs: int | tuple = 1

    def steps(self, num_workers: int) -> np.ndarray:
        """E_k for k < num_workers, (K,) int64; ValueError if per-agent epochs do not match num_workers."""
        if isinstance(self.epochs, tuple):
            if len(self.epochs) != num_workers:
                raise ValueError(
                    f"epochs has {len(self.epochs)} entries; expected one per agent "
                    f"(num_workers={num_workers})"
                )
            return np.array(self.epochs, dtype=np.int64)
        return np.full(num_workers, self.epochs, dtype=np.int64)

    def step_sizes(self, num_workers: int) -> np.ndarray:
        """μ/E_k per agent, (K,)."""
        return self.mu / self.steps(num_workers)


@dataclass(frozen=True)
class DynamicFedAvg(ServerRule):
    """Dynamic FedAvg [Rizk et al. 2020, Alg. 2]: x_{t+1} = (1/L) Σ_{k∈L_t} y_{k,E_k} = x_t − μ (1/L) Σ_k G_k.

    ``mu`` > 0: the step; ``epochs``: E_k (int or one per agent, ≥ 1); ``batch``: B_k (None: the problem's
    own noise; int or one per agent, 1 ≤ B_k ≤ N_k, applied by ``prepare``)."""

    mu: float
    epochs: int | tuple = 1
    batch: int | tuple | None = None
    compressor: object = None

    def __post_init__(self):
        check_positive("mu", self.mu)
        check_compressor(self.compressor)
        object.__setattr__(self, "epochs", _per_agent("epochs", self.epochs))
        if self.batch is not None:
            object.__setattr__(self, "batch", _per_agent("batch", self.batch))

    # -- hooks read by the backends
    @property
    def worker(self) -> EpochSGD:
        """The worker rule: ``EpochSGD`` with the agents' μ and epochs E_k."""
        return EpochSGD(mu=self.mu, epochs=self.epochs)

    @property
    def equal_epochs(self) -> bool:
        """True when every agent runs the same number of epochs E."""
        return not isinstance(self.epochs, tuple) or len(set(self.epochs)) == 1

    @property
    def _E(self) -> int:
        return self.epochs if not isinstance(self.epochs, tuple) else self.epochs[0]

    @property
    def fixed_local_steps(self) -> int | tuple[int, ...]:
        """E (int) when the E_k are equal, else the per-agent tuple (K_{t,i} = E_i whatever the behaviour)."""
        return self._E if self.equal_epochs else self.epochs

    @property
    def eta_L(self) -> float:
        """The local step μ/E (equal epochs); with per-agent epochs the step is ``local_step_sizes``."""
        return self.mu / self._E if self.equal_epochs else float("nan")

    @property
    def eta(self) -> float:
        """Server factor: γ = η η_L = μ (equal epochs); with per-agent epochs γ = μ directly (``gamma``)."""
        return float(self._E) if self.equal_epochs else float("nan")

    @property
    def gamma(self) -> float:
        """γ = μ."""
        return self.mu

    @property
    def step_size(self) -> float:
        """The server factor γ = μ (ServerRule hook)."""
        return float(self.mu)

    def local_step_sizes(self, num_workers: int) -> np.ndarray:
        """μ/E_k per agent (K,) (ServerRule hook; equal entries run the ordinary runners)."""
        return self.worker.step_sizes(num_workers)

    def prepare(self, problem: Any) -> Any:
        """The problem the agents see: per-agent epochs checked against its K, mini-batches of ``batch``
        applied (ValueError naming the agent when some B_k exceeds its N_k)."""
        K = problem.num_workers
        self.worker.steps(K)
        if self.batch is None:
            return problem
        if isinstance(self.batch, tuple) and len(self.batch) != K:
            raise ValueError(f"batch has {len(self.batch)} entries; expected one per agent (num_workers={K})")
        if not hasattr(problem, "with_batch"):
            raise ValueError(
                f"batch={self.batch!r} needs a problem with per-agent data "
                f"(DriftingQuadratic.federated / .slides); got {type(problem).__name__}"
            )
        return problem.with_batch(self.batch)

    @staticmethod
    def participation(L: int, K: int | None = None) -> Behaviour:
        """The Algorithm-2 behaviour: L agents uniformly without replacement per iteration, no delays. With
        the number of agents ``K`` given, L > K fails here naming L (else ``simulate`` names the arrivals'
        m)."""
        from ..anarchy import Behaviour, UniformArrivals

        high = None if K is None else check_int("K", K, low=1)
        return Behaviour(UniformArrivals(check_int("L", L, low=1, high=high)))
