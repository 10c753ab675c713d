"""Criteria: one rule judges a claim and its negative control (docs/DESIGN.md "Checks as a library").

A criterion is a small frozen dataclass with ``judge(measured, theoretical, **stats) -> bool`` and
``describe()`` (the verdict's tolerance cell). ``Verdict.judged(criterion=..., measured=..., theoretical=...,
control=ControlMeasurement(...))`` applies the SAME criterion to the claim and to its control, so nothing set
by hand can make a control "fail" under a different rule than the claim passes under.

``stats`` carries the statistics a criterion may read instead of the headline ``measured``: ``on="ucb"``
judges a one-sided upper confidence bound, ``on="worst"`` a worst case, ``ci=(low, high)`` an interval,
``se`` a standard error (``Near(z=...)``). A NaN input is a ``ValueError``, never a silent False (a verdict
never holds NaN; divergence is +inf).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

__all__ = [
    "AllOf",
    "AtLeast",
    "AtMost",
    "Contains",
    "ControlMeasurement",
    "Criterion",
    "Holds",
    "Near",
    "SlopeIn",
    "UnlessConfirmed",
]


@runtime_checkable
class Criterion(Protocol):
    """What every criterion provides: the verdict ``relation``, ``judge`` and ``describe``."""

    relation: ClassVar[str]

    def judge(self, measured: Any, theoretical: Any, **stats: Any) -> bool:
        """True when the measurement satisfies the claim."""
        ...

    def describe(self) -> str:
        """The tolerance cell text (how ``passed`` is decided)."""
        ...


def _number(name: str, v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name}={v!r} (type {type(v).__name__}) must be a real number") from None
    if math.isnan(x):
        raise ValueError(f"{name}={v!r} is NaN: a criterion judges numbers or ±inf, never NaN")
    return x


def _tolerance(name: str, v: Any) -> float:
    x = _number(name, v)
    if not 0.0 <= x < math.inf:
        raise ValueError(f"{name}={v!r} must be finite and >= 0")
    return x


def _statistic(on: str | None, measured: Any, stats: dict) -> float:
    if on is None:
        return _number("measured", measured)
    if on not in stats:
        raise ValueError(
            f"on={on!r}: the criterion judges stats[{on!r}], but the stats given are {sorted(stats)}"
        )
    return _number(on, stats[on])


@dataclass(frozen=True)
class _OneSided:
    """A one-sided rule: x = ``measured`` or ``stats[on]`` against ``theoretical`` moved by ``tol`` in the
    claim's favour, or against a fixed ``limit`` (a detector whose threshold is not the claimed value; not
    both); ``strict`` drops the equality. ``AtMost`` and ``AtLeast`` give the direction."""

    tol: float = 0.0
    on: str | None = None
    text: str = ""
    strict: bool = False
    limit: float | None = None
    relation: ClassVar[str]
    #: (tolerance sign, strict relation, relation) as ``describe`` writes them
    _words: ClassVar[tuple[str, str, str]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "tol", _tolerance("tol", self.tol))
        if self.limit is not None:
            if self.tol:
                raise ValueError(
                    f"limit={self.limit!r} and tol={self.tol!r}: give a fixed limit or a tolerance, not both"
                )
            object.__setattr__(self, "limit", _number("limit", self.limit))

    def judge(self, measured: Any, theoretical: Any, **stats: Any) -> bool:
        """x against ``limit``, or against ``theoretical`` moved by ``tol`` (see the subclass)."""
        x = _statistic(self.on, measured, stats)
        limit = self.limit if self.limit is not None else self._moved(_number("theoretical", theoretical))
        return bool(self._holds(x, limit))

    def describe(self) -> str:
        """``text``, or the rule in words."""
        sign, strict, loose = self._words
        tol = f" {sign} {self.tol:g}" if self.tol else ""
        rhs = f"{self.limit:g}" if self.limit is not None else f"theoretical{tol}"
        return self.text or f"{self.on or 'measured'} {strict if self.strict else loose} {rhs}"


@dataclass(frozen=True)
class AtMost(_OneSided):
    """Upper bound: ``x ≤ theoretical + tol`` with x = ``measured`` or ``stats[on]`` (e.g. ``on="ucb"``);
    ``strict``: ``<``; ``limit``: a fixed threshold instead of ``theoretical + tol`` (a detector whose
    threshold is not the claimed value)."""

    relation: ClassVar[str] = "<="
    _words: ClassVar[tuple[str, str, str]] = ("+", "<", "≤")

    def _moved(self, theoretical: float) -> float:
        return theoretical + self.tol

    def _holds(self, x: float, limit: float) -> bool:
        return x < limit if self.strict else x <= limit


@dataclass(frozen=True)
class AtLeast(_OneSided):
    """Lower bound: ``x ≥ theoretical − tol`` with x = ``measured`` or ``stats[on]`` (e.g. ``on="lcb"``);
    ``strict``: ``>``; ``limit``: a fixed threshold instead of ``theoretical − tol``."""

    relation: ClassVar[str] = ">="
    _words: ClassVar[tuple[str, str, str]] = ("−", ">", "≥")

    def _moved(self, theoretical: float) -> float:
        return theoretical - self.tol

    def _holds(self, x: float, limit: float) -> bool:
        return x > limit if self.strict else x >= limit


@dataclass(frozen=True)
class Near:
    """Tight value: ``|x − theoretical| ≤ tol`` (absolute), ``|x / theoretical − 1| ≤ rel`` (relative; a zero
    theoretical needs x = 0) or ``|x − theoretical| / stats["se"] ≤ z`` (a z-test; se = 0 needs x equal to
    theoretical); exactly one of ``tol``, ``rel``, ``z``."""

    tol: float | None = None
    rel: float | None = None
    z: float | None = None
    on: str | None = None
    text: str = ""
    relation: ClassVar[str] = "~="

    def __post_init__(self) -> None:
        given = [k for k in ("tol", "rel", "z") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"Near(tol={self.tol!r}, rel={self.rel!r}, z={self.z!r}): give exactly one of tol, rel, z"
            )
        object.__setattr__(self, given[0], _tolerance(given[0], getattr(self, given[0])))

    def judge(self, measured: Any, theoretical: Any, **stats: Any) -> bool:
        """``|x − theoretical|`` within the absolute, relative or z tolerance."""
        x, t = _statistic(self.on, measured, stats), _number("theoretical", theoretical)
        if self.rel is not None:
            return bool(x == 0.0) if t == 0.0 else bool(abs(x / t - 1) <= self.rel)
        dev = abs(x - t)
        if self.tol is not None:
            return bool(dev <= self.tol)
        if "se" not in stats:
            raise ValueError("Near(z=...) needs stats['se'], the standard error of the measurement")
        se = _number("se", stats["se"])
        if se < 0:
            raise ValueError(f"stats['se']={se!r} must be >= 0")
        return bool(dev == 0.0) if se == 0.0 else bool(dev / se <= self.z)  # |z| = |x − t|/se

    def describe(self) -> str:
        """``text``, or the rule in words."""
        if self.text:
            return self.text
        x = self.on or "measured"
        if self.tol is not None:
            return f"|{x} − theoretical| ≤ {self.tol:g}"
        if self.rel is not None:
            return f"|{x} / theoretical − 1| ≤ {self.rel:g}"
        return f"|{x} − theoretical| ≤ {self.z:g} standard errors"


@dataclass(frozen=True)
class _WidenedInterval:
    """A rule on a confidence interval ``stats["ci"]`` = (low, high) widened by ``tol``: does it contain
    ``theoretical``? (``Contains``, ``SlopeIn``)."""

    tol: float = 0.0
    text: str = ""
    relation: ClassVar[str] = "~="

    def __post_init__(self) -> None:
        object.__setattr__(self, "tol", _tolerance("tol", self.tol))

    def _contains(self, ci: Any, theoretical: Any) -> bool:
        low, high = (_number("ci[0]", ci[0]), _number("ci[1]", ci[1]))
        t = _number("theoretical", theoretical)
        return bool(low - self.tol <= t <= high + self.tol)


@dataclass(frozen=True)
class Contains(_WidenedInterval):
    """An interval contains the theoretical value: ``low − tol ≤ theoretical ≤ high + tol`` with
    ``stats["ci"] = (low, high)`` (a confidence interval)."""

    def judge(self, measured: Any, theoretical: Any, **stats: Any) -> bool:
        """``ci`` widened by ``tol`` contains ``theoretical``."""
        if stats.get("ci") is None:
            raise ValueError("Contains needs stats['ci'] = (low, high)")
        return self._contains(stats["ci"], theoretical)

    def describe(self) -> str:
        """``text``, or the rule in words."""
        return self.text or "CI contains theoretical" + (f" ± {self.tol:g}" if self.tol else "")


@dataclass(frozen=True)
class SlopeIn(_WidenedInterval):
    """A fitted slope matches: its CI ``stats["ci"]`` widened by ``tol`` contains ``theoretical``; without a
    CI, ``|slope − theoretical| ≤ tol`` (``afltheory.analysis.SlopeFit.contains``)."""

    def judge(self, measured: Any, theoretical: Any, **stats: Any) -> bool:
        """The slope's CI ± tol contains ``theoretical`` (no CI: |slope − theoretical| ≤ tol)."""
        t = _number("theoretical", theoretical)
        ci = stats.get("ci")
        if ci is None:
            return bool(abs(_number("measured", measured) - t) <= self.tol)
        return self._contains(ci, t)

    def describe(self) -> str:
        """``text``, or the rule in words."""
        return self.text or f"slope CI ± {self.tol:g} contains theoretical"


@dataclass(frozen=True)
class Holds:
    """A statement verdict (a derivation, a demonstrated inconsistency): ``stats[on]`` (default
    ``stats["holds"]``) is true. The measured and theoretical values are text or numbers shown as they are."""

    on: str = "holds"
    text: str = ""
    relation: ClassVar[str] = "=="

    def judge(self, measured: Any, theoretical: Any, **stats: Any) -> bool:
        """``bool(stats[on])``."""
        if self.on not in stats:
            raise ValueError(f"Holds(on={self.on!r}) needs stats[{self.on!r}]; stats given: {sorted(stats)}")
        return bool(stats[self.on])

    def describe(self) -> str:
        """``text``, or the rule in words."""
        return self.text or f"{self.on} is true"


@dataclass(frozen=True)
class AllOf:
    """A detector made of several criteria, all of which must hold (each on its own statistic, usually via
    ``on=`` and ``limit=``): e.g. ``AllOf(AtLeast(on="growth", strict=True, limit=4), Holds(on="C2 fails"))``.
    The claim and its control are both judged by the whole conjunction."""

    criteria: tuple
    text: str = ""
    relation: ClassVar[str] = "~="

    def __init__(self, *criteria: Criterion, text: str = "") -> None:
        if not criteria or not all(isinstance(c, Criterion) for c in criteria):
            raise TypeError(f"AllOf{criteria!r}: give one or more criteria (afltheory.checks.criteria)")
        object.__setattr__(self, "criteria", tuple(criteria))
        object.__setattr__(self, "text", text)

    def judge(self, measured: Any, theoretical: Any, **stats: Any) -> bool:
        """Every criterion holds (evaluated in order, stopping at the first that fails)."""
        return all(c.judge(measured, theoretical, **stats) for c in self.criteria)

    def describe(self) -> str:
        """``text``, or the criteria's descriptions joined by "and"."""
        return self.text or " and ".join(c.describe() for c in self.criteria)


@dataclass(frozen=True)
class UnlessConfirmed:
    """A failure of ``criterion`` counts only when an independent test confirms it: e.g. an exact worst-case
    ratio above 1 that a Monte Carlo re-run must confirm before it is a violation. ``stats[on]``: True (the
    failure was confirmed), False (the test ran, or no confirmation path exists, and it was not confirmed:
    the claim passes) or None/absent (no confirmation applies: ``criterion`` alone decides, e.g. a control
    whose exact value has no Monte Carlo error to excuse)."""

    criterion: Criterion
    on: str = "confirmed"
    text: str = ""
    relation: ClassVar[str] = "<="

    def __post_init__(self) -> None:
        if not isinstance(self.criterion, Criterion):
            raise TypeError(f"criterion={self.criterion!r} must be a criterion (afltheory.checks.criteria)")

    def judge(self, measured: Any, theoretical: Any, **stats: Any) -> bool:
        """``criterion`` holds, or its failure was tested and not confirmed (``stats[on]`` is False)."""
        if self.criterion.judge(measured, theoretical, **stats):
            return True
        confirmed = stats.get(self.on)
        if confirmed is not None and confirmed not in (True, False):
            raise TypeError(f"stats[{self.on!r}]={confirmed!r} must be True, False or None")
        return confirmed is not None and not confirmed

    def describe(self) -> str:
        """``text``, or the rule in words."""
        return self.text or f"{self.criterion.describe()}; a failure counts only if {self.on}"


@dataclass(frozen=True)
class ControlMeasurement:
    """A negative control's input: the same check fed a plausible wrong input. ``Verdict.judged`` judges it
    with the claim's criterion; it must fail."""

    description: str
    measured: Any = None
    theoretical: Any = None
    stats: dict = field(default_factory=dict)
