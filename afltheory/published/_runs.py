"""What the paper modules' ``verify()`` functions share: a claim's verdict with its negative control, the
verdict of a module's own check of a statement, and the small problems and behaviours they run on (imports
inside the functions: a paper module loads without numpy's problems until it is verified)."""

from __future__ import annotations

from typing import Any

__all__ = ["curved_clients", "judged_statement", "synchronous", "verify_with_control"]


def verify_with_control(claim: Any, problem: Any, behaviour: Any, factor: float, **options: Any) -> Any:
    """``claims.verify`` of ``claim`` whose control is its bound divided by ``factor`` (the module's
    ``CONTROL_FACTOR``: the run must violate it); ``options`` are ``claims.verify``'s keywords."""
    from ..claims import verify

    return verify(claim, problem, behaviour, control=sum(claim.bound.values()) / factor, **options)


def judged_statement(statement: Any, **verdict: Any) -> Any:
    """``Verdict.judged`` of a paper module's own check of ``statement`` (a computation of its own, not a run
    of an engine form): the verdict id "published.<statement id>" and the statement's reference;
    ``verdict``: the rest of ``Verdict.judged``'s keywords."""
    from ..checks.verdict import Verdict

    return Verdict.judged(id=f"published.{statement.id}", reference=statement.reference, **verdict)


def curved_clients(spread: float = 1.0) -> Any:
    """Four 2-D quadratic clients with different diagonal curvatures and centres ``spread``·(±e_1, ±e_2),
    exact gradients, σ_G certified on radius 10: the witness of client drift (no shared Hessian)."""
    import numpy as np

    from ..problems import HeterogeneousCurvatureQuadratic

    return HeterogeneousCurvatureQuadratic.from_arrays(
        hessians=np.array([[1.0, 0.5], [0.8, 1.0], [1.0, 0.6], [0.7, 0.9]]),
        centers=spread * np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]]),
        radius=10.0,
    )


def synchronous(workers: int, local_steps: int = 1) -> Any:
    """``workers`` uniform arrivals a round, each after ``local_steps`` local steps, no delay."""
    from ..anarchy import Behaviour, ConstantSteps, UniformArrivals

    return Behaviour(UniformArrivals(workers), local_steps=ConstantSteps(local_steps))
