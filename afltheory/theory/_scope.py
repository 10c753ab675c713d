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
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule

__all__ = ["ScopeWarning", "OutOfScope", "SCOPES", "check_scope"]

SCOPES = ("warn", "raise", "ignore")


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
    from . import theorem2, theorem3, theorem4
    from ._stats import memory_stats

    K_max = int(np.max(schedule.local_steps))
    try:
        if theorem == "theorem4":
            stale, _, mf = memory_stats(schedule)
            conds = theorem4.conditions(
                L=constants.L,
                eta=eta,
                eta_L=eta_L,
                K_max=K_max,
                tau=float(stale.max()),
                num_workers=schedule.num_workers,
                m_fresh=float(mf.min()),
            )
        elif theorem == "theorem3":
            conds = theorem3.conditions(
                L=constants.L,
                eta=eta,
                eta_L=eta_L,
                K_max=K_max,
                tau=float(schedule.delays.max()),
                num_workers=schedule.num_workers,
            )
        else:
            conds = theorem2.conditions(
                L=constants.L, eta=eta, eta_L=eta_L, K_max=K_max, tau=float(schedule.delays.max())
            )
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
