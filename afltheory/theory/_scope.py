"""Where a theorem's bound applies: the algorithm, the arrival process and the learning-rate conditions.

A ``Schedule`` produced by ``simulate`` records the behaviour and algorithm it came from as declarative
values (``schedule.origin``: ``RuleOrigin``, ``BehaviourOrigin``); the check reads declarations only — the
rule's ``analysed_as`` and the arrival process's ``declared_law`` — never a type. ``bound(...)`` of Theorems
2–4 calls ``check_scope`` first: evaluating a bound on a run it does not cover (Theorem 3 on biased arrivals,
Theorem 4 on an AFA-CD run, any bound with (η, η_L) outside its conditions) emits a ``ScopeWarning`` naming
what is outside — or raises with ``scope="raise"``; ``scope="ignore"`` is the explicit opt-in for deliberate
exploratory evaluations (e.g. "just outside the conditions" runs). Schedules without an origin (hand-written
or loaded) are checked only against the conditions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule
    from ._condition import Condition

__all__ = ["ScopeWarning", "OutOfScope", "SCOPES", "check_scope", "register_run_conditions"]

SCOPES = ("warn", "raise", "ignore")

#: theorem name -> its conditions at a run's worst case, ``(schedule, constants, eta, eta_L, K_max) ->
#: [Condition]``. Each theorem module registers its own when it is imported (``afltheory.theory`` imports
#: them all), so this module does not import the theorems that import it.
_RUN_CONDITIONS: dict[str, Callable[..., list[Condition]]] = {}

#: The theorem whose conditions are read for a name that registered none (the AFA-CD general case).
_DEFAULT_CONDITIONS = "theorem2"


def register_run_conditions(theorem: str, conditions_on_run: Callable[..., list[Condition]]) -> None:
    """Declare ``theorem``'s conditions at a run's worst case for ``check_scope`` (called once per theorem
    module, at import)."""
    _RUN_CONDITIONS[theorem] = conditions_on_run


class ScopeWarning(UserWarning):
    """A theorem's bound was evaluated outside its scope; the number is not covered by the theorem."""


class OutOfScope(ValueError):
    """Raised instead of ``ScopeWarning`` when ``scope="raise"``."""


def _algorithm_problem(theorem: str, algorithm) -> str | None:
    """Read the rule's declarative ``analysed_as`` (``ServerRule``, recorded as ``RuleOrigin``): the paper's
    algorithm it implements."""
    from ..anarchy.schedule import RuleOrigin  # local import keeps theory importable on its own

    if algorithm is None:
        return None
    record = RuleOrigin.of(algorithm)
    name, family = record.name, record.analysed_as
    if theorem == "theorem4":
        if family != "AFA-CS":
            return f"Theorem 4 is about AFA-CS (memory of all M workers); the run used {name}"
    elif family != "AFA-CD":
        return f"{theorem.replace('theorem', 'Theorem ')} is about AFA-CD; the run used {name}"
    return None


def _arrivals_problem(theorem: str, behaviour) -> str | None:
    """Read the arrival process's declared law (``Arrivals.declared_law``, in ``BehaviourOrigin``)."""
    from ..anarchy.schedule import BehaviourOrigin  # local import keeps theory importable on its own

    if behaviour is None:
        return None
    record = BehaviourOrigin.of(behaviour)
    if theorem == "theorem3" and record.arrivals is not None and record.arrivals_law != "uniform":
        return (
            f"Theorem 3 assumes uniform arrivals (m of M without replacement); the run used "
            f"{record.arrivals} (use Theorem 2 for general arrival processes)"
        )
    return None


def check_scope(
    theorem: str,
    schedule: Schedule,
    constants: Any,
    *,
    eta: float,
    eta_L: float,
    scope: str = "warn",
    stacklevel: int = 3,
) -> list[str]:
    """Problems with evaluating ``theorem``'s bound on ``schedule`` (empty list: inside its scope).

    Conditions are evaluated at the run's worst case: K_max = the largest realized K, τ = the largest realized
    delay (Theorem 4: the largest memory staleness, m' = the smallest number of fresh slots)."""
    if scope not in SCOPES:
        raise ValueError(f"scope={scope!r} must be one of {SCOPES}")
    if scope == "ignore":
        return []
    problems = []
    origin = getattr(schedule, "origin", None) or {}
    for p in (
        _algorithm_problem(theorem, origin.get("algorithm")),
        _arrivals_problem(theorem, origin.get("behaviour")),
    ):
        if p:
            problems.append(p)
    K_max = int(np.max(schedule.local_steps))
    try:
        on_run = _RUN_CONDITIONS.get(theorem) or _RUN_CONDITIONS[_DEFAULT_CONDITIONS]
        conds = on_run(schedule, constants, eta=eta, eta_L=eta_L, K_max=K_max)
        bad = [c for c in conds if not c.holds]
        if bad:
            problems.append(
                "outside the conditions: "
                + ", ".join(
                    f"{c.name} ({c.lhs:.4g} {'<' if c.strict else '<='} {c.rhs:.4g} fails)" for c in bad
                )
            )
    except ValueError as e:  # e.g. a condition that cannot be evaluated at these numbers
        problems.append(f"conditions not evaluable: {e}")
    if problems:
        msg = (
            f"{theorem}.bound evaluated outside its scope — "
            + "; ".join(problems)
            + " (the number is not covered by the theorem; pass scope='ignore' to evaluate it deliberately)"
        )
        if scope == "raise":
            raise OutOfScope(msg)
        warnings.warn(msg, ScopeWarning, stacklevel=stacklevel)
    return problems
