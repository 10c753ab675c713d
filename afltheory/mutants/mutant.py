"""The ``Mutant`` type: one plausible bug, as a first-class object (``afltheory.mutants``).

A mutant replaces correct component classes by mutant classes (``replaces``, substituted at use, nested
components included) and/or sets engine fault points (``faults``: ``afltheory._faults.FaultPoint`` -> fault).
The catalogue is ``afltheory.mutants.catalogue``; the engine faults are ``afltheory.mutants.faults``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._faults import FaultPoint
from ..compression.channel import DIANA, ErrorFeedback

__all__ = ["Mutant", "qualname"]


@dataclass(frozen=True, eq=False)
class Mutant:
    """One plausible bug. ``replaces``: {correct component class: mutant class} substituted at use (exact
    type match, nested components included); ``faults``: {engine point: fault} consulted by the engines (see
    ``afltheory._faults``); ``engines``: where it acts ("simulate", "exact"); ``kind``: "rule" or
    "engine"; ``tests``: pytest node ids ("tests/theory/test_x.py::test_y") that pass on the correct code and
    fail under the mutant (``afltheory.mutants.run.suite_kills``: the kill matrix's "killed by tests"
    column) — required for a bug the checks cannot see by construction."""

    name: str
    category: str
    description: str
    replaces: Mapping[type, type] = field(default_factory=dict)
    faults: Mapping[str, object] = field(default_factory=dict)
    tests: tuple[str, ...] = ()
    #: a claim mutant (``afltheory.mutants.generated``): the id of the claim it edits and the edit
    claim_id: str | None = None
    claim_edit: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tests", tuple(self.tests))
        # keys given as FaultPoint members (or dotted names) are stored as the dotted names the engines look
        # up; an unknown point is refused here instead of silently never firing
        object.__setattr__(self, "faults", {FaultPoint.of(p).value: f for p, f in dict(self.faults).items()})

    @property
    def kind(self) -> str:
        """How the mutant is injected: "control", "rule" (a replaced class) or "engine" (fault points)."""
        if self.category == "control":
            return "control"
        return "rule" if self.replaces else "claim" if self.claim_edit is not None else "engine"

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines the mutant can change: "simulate" (the Monte Carlo engines: ``simulate`` and the torch
        backend) and "exact" when the exact engine represents it (declarative hooks); the exact engine refuses
        (TypeError) a rule overriding an imperative hook or a worker correction, and a compressor whose
        sampling code changed below its exact moments — it never reads a mutant as its base class. A fault
        mutant: the engines of its fault points."""
        if self.claim_edit is not None:
            return ("exact", "simulate")
        if self.replaces:
            exact_ok = not any(
                _exact_refuses(cls) or _resolved_before_substitution(cls) for cls in self.replaces.values()
            )
            return ("exact", "simulate") if exact_ok else ("simulate",)
        points = {p.split(".", 1)[0] for p in self.faults}
        rename = {"sim": "simulate", "channel": "simulate"}  # the compression channel: Monte Carlo engines
        return tuple(sorted({rename.get(p, p) for p in points}))

    @property
    def refused_by_exact(self) -> bool:
        """A rule mutant (or control) that the exact engine refuses although it runs the correct class: a
        check then switches from exact moments to Monte Carlo (or crashes), as under the equivalent controls.
        False for components the exact engine never runs, mutated or not (EF, DIANA, QSGD, …)."""
        if self.kind not in ("rule", "control"):
            return False
        return any(_exact_refuses(m) and not _exact_never_runs(b) for b, m in self.replaces.items())

    def substitute(self, component: Any) -> Any:
        """``component`` with every component whose exact type the mutant replaces — itself or any component
        nested in its dataclass fields, recursively (worker rule, compressor, the compressor inside
        ``ErrorFeedback``/``DIANA``) — rebuilt as the mutant class with the same fields. Components that
        contain nothing to replace are returned as they are (the same object)."""
        return _replace(component, self.replaces) if self.replaces else component

    def exercised_by(self, seen: set) -> bool:
        """Whether a run that consulted ``seen`` (see ``probe``) reaches this mutant: it received a rule the
        mutant replaces or read a fault point the mutant sets. (If not, the mutant cannot change that run.)"""
        return any(c in seen or qualname(c) in seen for c in self.replaces) or any(
            p in seen for p in self.faults
        )

    def __repr__(self):
        return f"Mutant({self.name!r})"


def _exact_never_runs(cls) -> bool:
    """The exact engine refuses every instance of ``cls`` (a compressor it cannot represent, EF, DIANA)."""
    from ..compression.compressors import Compressor

    if issubclass(cls, (ErrorFeedback, DIANA)):
        return True
    return issubclass(cls, Compressor) and not cls.linear


def _exact_refuses(cls) -> bool:
    """The exact engine refuses the (mutant) class ``cls`` (see ``Mutant.engines``)."""
    from ..algorithms.base import ServerRule, WorkerRule
    from ..compression.compressors import Compressor

    if issubclass(cls, ServerRule):  # an imperative hook overridden (IMPERATIVE_HOOKS)
        return bool(cls.overridden_hooks())
    if issubclass(cls, WorkerRule):  # exact only for μ (y − y_0) with no state: ``affine_prox_weight``
        return not cls.declares_affine()
    if issubclass(cls, Compressor):
        return _exact_never_runs(cls) or cls.sampling_changed_below_moments()
    return _exact_never_runs(cls)


def _resolved_before_substitution(cls) -> bool:
    """A server-rule mutant overriding ``at_round`` (a schedule mutant): the exact engine resolves a scheduled
    rule's round t (``algorithm.at_round(t)``) on the rule it was given and substitutes afterwards, so under
    ``injected`` it never runs the mutated schedule (``simulate`` and the torch backend substitute first)."""
    from ..algorithms.base import ServerRule

    return issubclass(cls, ServerRule) and bool(cls.overridden_hooks(("at_round",)))


def _replace(obj, replaces):
    """``obj`` rebuilt bottom-up with the classes in ``replaces`` substituted (exact type match)."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return obj
    fields = [f for f in dataclasses.fields(obj) if f.init]
    changes = {}
    for f in fields:
        value = getattr(obj, f.name)
        new = _replace(value, replaces)
        if new is not value:
            changes[f.name] = new
    cls = replaces.get(type(obj))
    if cls is None and not changes:
        return obj
    return (cls or type(obj))(**{f.name: changes.get(f.name, getattr(obj, f.name)) for f in fields})


def qualname(cls: type) -> str:
    """``module.Class`` of a rule class (how ``probe`` results are stored as text)."""
    return f"{cls.__module__}.{cls.__qualname__}"
