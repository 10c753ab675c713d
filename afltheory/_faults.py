"""Test-only fault injection points of the engines (private; set only by ``afltheory.mutants``).

The engines consult ``substitute`` (swap a correct component — a server rule, or any component nested in its
dataclass fields: worker rule, compressor, the compressor inside ``ErrorFeedback``/``DIANA`` — for its
mutant) and ``get`` (an engine-level fault at a point of ``FaultPoint``: ``SIM_DELAYS``,
``SIM_LOCAL_STEPS``, ``SIM_NOISE``, ``SIM_DRIFT_ORDER``, ``SIM_DRIFT_COV``, ``SIM_DRIFT_EPOCHS``,
``CHANNEL_RNG``, ``EXACT_NOISE``, ``EXACT_ROUND_SHIFT``, ``EXACT_DRIFT_ORDER``, ``EXACT_DRIFT_COV``,
``EXACT_DRIFT_EPOCHS`` (the drift per round given the rule: Dynamic FedAvg's epochs), and in the schedule
samplers ``ANARCHY_EVENT_RESTART``, ``ANARCHY_SYNC_CLOCK``; ``THEORY_TERMS`` in the one numeric evaluation
of a theorem's bound terms, ``SIM_STEP_NOISE`` in the step-by-step local steps, ``STATS_BOOTSTRAP_DRAW`` and
``STATS_BOOTSTRAP_TAIL`` in the bootstrap slope estimator (its resampling, its percentile interval);
``EXACT_NOISE_WEIGHTS`` (the weight on an arrival's noise covariance in the exact engine),
``SIM_ARRIVAL_WEIGHTS`` (the square of the arrival weights in the simulator's collapsed arrival-noise draw),
``CLAIMS_LAST_ROUND``, ``CLAIMS_AVG_ROUNDS``, ``CLAIMS_AVG_WEIGHTS``, ``CLAIMS_VIRTUAL_STEP`` (the measured
quantities of ``claims.verify.quantity_of``), ``CLAIMS_KBAR``/``CLAIMS_SUM_P2`` (the run symbols K̄, Σp_k² in
``claims.verify.run_values``, read only where the misreading changes the run's value),
``CLAIMS_CONDITION_SIGN`` (``Claim.check_conditions``), ``CONTROL_TERM`` (the term
``analysis.default_control`` halves), ``PEP_INTERPOLANT`` (the gradients ``pep.interpolant`` rebuilds its
function from) and ``TORCH_ROUND_SHIFT`` (the round whose schedule the torch backend runs); a member
is a ``str`` equal to its dotted name, e.g. ``"sim.noise"``). Components a check builds and uses without an
engine (``afltheory.compression.Channel``) consult ``substitute`` in their constructor. Outside
``afltheory.mutants.injected(...)`` ``_ACTIVE`` is None, so every call returns the component unchanged / the
default: no default path can reach a fault.

``_SEEN`` (a set while ``afltheory.mutants.probe()`` runs, else None) records what the engines consulted — the
classes of the component and of every component nested in it, and the fault points they read — so that a
mutant none of whose targets was consulted by a check is known not to change it.
"""

from __future__ import annotations

import dataclasses
from enum import Enum

__all__ = [
    "FaultPoint",
    "activate",
    "active",
    "components",
    "deactivate",
    "get",
    "start_probe",
    "stop_probe",
    "substitute",
]


class FaultPoint(str, Enum):
    """The engine points a mutant can fault (``afltheory.mutants.faults`` gives each its wrong behaviour)."""

    SIM_DELAYS = "sim.delays"
    SIM_LOCAL_STEPS = "sim.local_steps"
    SIM_NOISE = "sim.noise"
    SIM_DRIFT_ORDER = "sim.drift_order"
    SIM_DRIFT_COV = "sim.drift_cov"
    SIM_DRIFT_EPOCHS = "sim.drift_epochs"
    CHANNEL_RNG = "channel.rng"
    EXACT_NOISE = "exact.noise"
    EXACT_ROUND_SHIFT = "exact.round_shift"
    EXACT_DRIFT_ORDER = "exact.drift_order"
    EXACT_DRIFT_COV = "exact.drift_cov"
    EXACT_DRIFT_EPOCHS = "exact.drift_epochs"
    ANARCHY_EVENT_RESTART = "anarchy.event_restart"
    ANARCHY_SYNC_CLOCK = "anarchy.sync_clock"
    PROBLEMS_MINIBATCH = "problems.minibatch"
    MTL_OMEGA = "mtl.omega"
    STATS_UCB_QUANTILE = "stats.ucb_quantile"
    THEORY_TERMS = "theory.terms"
    SIM_STEP_NOISE = "sim.step_noise"
    STATS_BOOTSTRAP_DRAW = "stats.bootstrap_draw"
    STATS_BOOTSTRAP_TAIL = "stats.bootstrap_tail"
    EXACT_NOISE_WEIGHTS = "exact.noise_weights"
    SIM_ARRIVAL_WEIGHTS = "sim.arrival_weights"
    CLAIMS_LAST_ROUND = "claims.last_round"
    CLAIMS_AVG_ROUNDS = "claims.avg_rounds"
    CLAIMS_AVG_WEIGHTS = "claims.avg_weights"
    CLAIMS_VIRTUAL_STEP = "claims.virtual_step"
    CLAIMS_KBAR = "claims.kbar"
    CLAIMS_SUM_P2 = "claims.sum_p2"
    CLAIMS_CONDITION_SIGN = "claims.condition_sign"
    CONTROL_TERM = "analysis.control_term"
    PEP_INTERPOLANT = "pep.interpolant"
    TORCH_ROUND_SHIFT = "torch.round_shift"

    @classmethod
    def of(cls, point: FaultPoint | str) -> FaultPoint:
        """The member for ``point`` (a member or its dotted name); ValueError naming the known points."""
        try:
            return cls(point)
        except ValueError:
            raise ValueError(
                f"point={point!r} is not a fault point; known: {', '.join(p.value for p in cls)}"
            ) from None


_ACTIVE = None  # the afltheory.mutants.Mutant being injected, or None
_SEEN = None  # set of consulted component classes and point names while probing, or None


def active():
    """The mutant being injected, or None (the default)."""
    return _ACTIVE


def activate(mutant) -> None:
    """Inject ``mutant`` (``afltheory.mutants.injected`` calls this); RuntimeError if one is active (no
    nesting)."""
    global _ACTIVE
    if _ACTIVE is not None:
        raise RuntimeError(f"mutant {_ACTIVE.name!r} is already injected; injected() does not nest")
    _ACTIVE = mutant


def deactivate() -> None:
    """Back to the default paths (no mutant)."""
    global _ACTIVE
    _ACTIVE = None


def probing() -> bool:
    """Whether a probe (``afltheory.mutants.probe``) is recording what the engines consult."""
    return _SEEN is not None


def start_probe() -> set:
    """Start recording what the engines consult; returns the (live) set. RuntimeError if already probing."""
    global _SEEN
    if _SEEN is not None:
        raise RuntimeError("probe() does not nest")
    _SEEN = set()
    return _SEEN


def stop_probe() -> None:
    """Stop recording."""
    global _SEEN
    _SEEN = None


def components(obj):
    """``obj`` and every component nested in its dataclass fields (recursively), depth first."""
    yield obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from components(getattr(obj, f.name, None))


def substitute(component):
    """The active mutant's replacement of ``component`` (and of the components nested in it);
    ``component`` otherwise."""
    if _SEEN is not None:
        _SEEN.add(type(component))
        _SEEN.update(type(c) for c in components(component) if dataclasses.is_dataclass(c))
        _SEEN.add(type(getattr(component, "worker", None)))  # a worker rule may be a property
    return component if _ACTIVE is None else _ACTIVE.substitute(component)


def get(point: FaultPoint, default=None):
    """The active mutant's fault at engine point ``point`` (a ``FaultPoint``; its dotted name is accepted),
    else ``default``. A probe records the point's dotted name."""
    name = FaultPoint.of(point).value
    if _SEEN is not None:
        _SEEN.add(name)
    return default if _ACTIVE is None else _ACTIVE.faults.get(name, default)
