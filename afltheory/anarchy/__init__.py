"""Anarchic worker behaviour as components [Yang et al. 2022, Algorithm 1]: arrivals, delays, local steps,
event clocks, and the realized ``Schedule`` (recorded, replayable)."""

from .arrivals import (
    PAPER_BIASED_PROBS,
    Arrivals,
    BiasedArrivals,
    CyclicArrivals,
    DeterministicArrivals,
    FixedArrivals,
    MarkovAvailability,
    UniformArrivals,
)
from .behaviour import Behaviour, ComputeTime, EventDriven, ExponentialTime, FixedTime, Replay, Synchronous
from .delays import Delays, FixedDelay, GeometricDelay, NoDelay, PerWorkerDelay, UniformDelay
from .local_steps import ConstantSteps, LocalSteps, PerWorkerSteps, TimeVaryingSteps, UniformSteps
from .schedule import BehaviourOrigin, RuleOrigin, Schedule

__all__ = [
    "PAPER_BIASED_PROBS",
    "Arrivals",
    "Behaviour",
    "BehaviourOrigin",
    "BiasedArrivals",
    "ComputeTime",
    "ConstantSteps",
    "CyclicArrivals",
    "Delays",
    "DeterministicArrivals",
    "EventDriven",
    "ExponentialTime",
    "FixedArrivals",
    "FixedDelay",
    "FixedTime",
    "GeometricDelay",
    "LocalSteps",
    "MarkovAvailability",
    "NoDelay",
    "PerWorkerDelay",
    "PerWorkerSteps",
    "Replay",
    "RuleOrigin",
    "Schedule",
    "Synchronous",
    "TimeVaryingSteps",
    "UniformArrivals",
    "UniformDelay",
    "UniformSteps",
]
