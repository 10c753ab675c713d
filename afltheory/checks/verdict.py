"""``Verdict``: the outcome of checking one claim, with its negative control (docs/DESIGN.md principle 6).

A verdict is built once, with keyword arguments only, and never amended (both classes are frozen). Compute
everything a verdict needs (the measurements, its control, figures, notes) before constructing it.

Build verdicts with ``Verdict.judged(criterion=..., measured=..., theoretical=..., control=...)``: one
criterion (``afltheory.checks.criteria``) decides ``passed`` for the claim and for its negative control.
Passing ``passed=`` to ``Verdict(...)`` by hand is the deprecated path, kept for backward compatibility (and
for ``from_dict``).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .criteria import ControlMeasurement, Criterion

__all__ = ["NegativeControl", "Verdict", "json_safe", "verdicts_from_json", "verdicts_to_json"]

RELATIONS = ("<=", ">=", "<", ">", "~=", "==")


def json_safe(v: Any, *, nonfinite: str = "string") -> Any:
    """``v`` made JSON-safe (``json.dumps(..., allow_nan=False)`` accepts it): numpy scalars and arrays become
    Python numbers and lists, dict keys strings, tuples lists. Non-finite floats become the strings
    ``'inf'``/``'-inf'``/``'nan'`` (``nonfinite="string"``, round-tripped by ``Verdict.from_dict``) or
    ``None`` (``nonfinite="null"``, when the record states the reason elsewhere)."""
    if nonfinite not in ("string", "null"):
        raise ValueError(f"nonfinite={nonfinite!r} must be 'string' or 'null'")
    if isinstance(v, dict):
        return {str(k): json_safe(x, nonfinite=nonfinite) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_safe(x, nonfinite=nonfinite) for x in v]
    if isinstance(v, np.ndarray):
        return json_safe(v.tolist(), nonfinite=nonfinite)
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isfinite(v):
            return v
        return str(v) if nonfinite == "string" else None
    return v


def _has_nan(v: Any) -> bool:
    """True if the number, array or (nested) list/tuple ``v`` holds a float NaN."""
    if isinstance(v, (float, np.floating)):
        return bool(np.isnan(v))
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "fc" and bool(np.isnan(v).any())
    if isinstance(v, (list, tuple)):
        return any(_has_nan(x) for x in v)
    return False


def _check_ucb(measured: Any, ci: tuple | None) -> None:
    """Raise ValueError when a confidence interval's upper end lies below the value it bounds: a UCB (or a
    two-sided CI's high end) under its own mean is an arithmetic error, never a finding. Only a real number
    ``measured`` and a real, finite ``ci[1]`` are compared (relative tolerance 1e-9 for rounding)."""
    if ci is None or len(ci) < 2:
        return
    hi = ci[1]
    if not isinstance(measured, (int, float, np.integer, np.floating)) or isinstance(measured, bool):
        return
    if not isinstance(hi, (int, float, np.integer, np.floating)) or isinstance(hi, bool):
        return
    m, h = float(measured), float(hi)
    if math.isfinite(m) and math.isfinite(h) and h < m - 1e-9 * max(abs(m), abs(h), 1e-300):
        raise ValueError(f"ci={tuple(ci)!r}: its upper end {h!r} is below measured={m!r}; a confidence bound "
                         "must be at least the mean it bounds")


def _unclean(v: Any) -> Any:
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    if isinstance(v, list):
        return [_unclean(x) for x in v]
    if isinstance(v, dict):
        return {k: _unclean(x) for k, x in v.items()}
    return v


@dataclass(frozen=True, kw_only=True)
class NegativeControl:
    """The same check fed a plausible wrong input (a bound without the term under test, the nearest mutant, a
    wrong slope, the wrong algorithm, ...). It must FAIL (``passed`` False); a control that passes means the
    check cannot discriminate."""

    description: str
    measured: Any = None
    theoretical: Any = None
    passed: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "passed", bool(self.passed))

    @property
    def failed_as_required(self) -> bool:
        """True when the control failed, as it must."""
        return not self.passed


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """One claim's outcome (keyword-only, frozen).

    Required: ``id``, ``claim``, ``reference`` (paper/theorem cited), ``measured`` (number or text),
    ``theoretical`` (number or text), ``passed``.
    Optional: ``ci`` (low, high) — low may be None for a one-sided upper confidence bound; ``tolerance`` (how
    ``passed`` was decided); ``relation`` ("<=" upper bounds, ">=", "<", ">", "~=" tight values, "==");
    ``slack`` (bound / measured for upper bounds); ``method`` ("exact moments", "monte-carlo (R=...)",
    "symbolic", ...); ``notes``; ``finding`` (True for a paper inconsistency or a claim that fails as
    documented); ``derivation`` (True when the verdict is a symbolic derivation, not a measurement);
    ``inside_conditions`` (True/False: does the configuration satisfy the theorem's hypotheses; None: not
    applicable); ``quantity`` (the name of what ``measured`` is — "max |z|", "slope", "E‖∇f‖²/σ_G²" — shown
    in the report's measured cell so the cell reads alone; the report infers it for the common check shapes);
    ``interval`` (what ``ci`` is when the report cannot tell from the tolerance: "range over the 9 runs",
    "99 % LCB of mean(LHS − bound)"); ``terms`` (term name -> share of the bound at the measured point);
    ``figures`` (paths relative to the report directory); ``negative_control``; ``details`` (free-form
    JSON-able numbers).
    ``ok``: passed and the negative control (if any) failed.
    """

    id: str
    claim: str
    reference: str
    measured: Any
    theoretical: Any
    passed: bool
    ci: tuple | None = None
    tolerance: Any = None
    relation: str = "~="
    quantity: str = ""
    interval: str = ""
    slack: float | None = None
    method: str = ""
    notes: str = ""
    finding: bool = False
    derivation: bool = False
    inside_conditions: bool | None = None
    terms: dict | None = None
    figures: tuple = ()
    negative_control: NegativeControl | None = None
    details: dict | None = None

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation={self.relation!r} must be one of {RELATIONS}")
        if self.negative_control is not None and not isinstance(self.negative_control, NegativeControl):
            raise TypeError(f"negative_control={self.negative_control!r} must be a NegativeControl or None")
        object.__setattr__(self, "passed", bool(self.passed))
        object.__setattr__(self, "figures", tuple(self.figures))
        if self.ci is not None:
            object.__setattr__(self, "ci", tuple(self.ci))
        if self.inside_conditions is not None:
            object.__setattr__(self, "inside_conditions", bool(self.inside_conditions))
        for name in ("measured", "theoretical", "slack", "ci"):
            if _has_nan(getattr(self, name)):
                raise ValueError(f"{name}={getattr(self, name)!r} holds NaN: a verdict reports divergence as "
                                 f"inf (or says n/a), never NaN")
        _check_ucb(self.measured, self.ci)

    @property
    def ok(self) -> bool:
        """Passed, and the negative control (if any) failed."""
        nc_ok = self.negative_control is None or not self.negative_control.passed
        return bool(self.passed) and nc_ok

    @classmethod
    def judged(cls, *, criterion: Criterion, measured: Any, theoretical: Any, stats: dict | None = None,
               control: ControlMeasurement | None = None, requires: dict[str, bool] | None = None,
               **fields: Any) -> Verdict:
        """A verdict whose ``passed`` and whose negative control's ``passed`` come from ``criterion``.

        ``passed = criterion.judge(measured, theoretical, **stats)`` and every value of ``requires`` (named
        conditions that gate the claim, not the control: the configuration's power, or the same criterion
        applied to a second configuration of the claim);
        the control (a ``ControlMeasurement``) is judged by the same criterion on its own measured,
        theoretical and stats. ``tolerance`` defaults to ``criterion.describe()`` and ``relation`` to
        ``criterion.relation``; the other keyword ``fields`` are ``Verdict`` fields (``passed`` and
        ``negative_control`` are refused: they are what the criterion decides)."""
        for name in ("passed", "negative_control"):
            if name in fields:
                raise TypeError(f"Verdict.judged() decides {name!r} from the criterion; do not pass it")
        if not isinstance(criterion, Criterion):
            raise TypeError(f"criterion={criterion!r} must provide judge(), describe() and relation "
                            f"(afltheory.checks.criteria)")
        if control is not None and not isinstance(control, ControlMeasurement):
            raise TypeError(f"control={control!r} must be a ControlMeasurement or None")
        passed = criterion.judge(measured, theoretical, **(stats or {}))
        passed = passed and all(bool(v) for v in (requires or {}).values())
        nc = None
        if control is not None:
            failed_to_fail = criterion.judge(control.measured, control.theoretical, **control.stats)
            nc = NegativeControl(description=control.description, measured=control.measured,
                                 theoretical=control.theoretical, passed=failed_to_fail)
        fields.setdefault("tolerance", criterion.describe())
        fields.setdefault("relation", criterion.relation)
        return cls(measured=measured, theoretical=theoretical, passed=passed, negative_control=nc, **fields)

    def to_dict(self) -> dict:
        """A JSON-safe dict (non-finite floats as strings) with the derived ``ok`` and
        ``failed_as_required``."""
        d = asdict(self)
        d["ok"] = self.ok
        if self.negative_control is not None:
            d["negative_control"]["failed_as_required"] = self.negative_control.failed_as_required
        return json_safe(d)

    @classmethod
    def from_dict(cls, d: dict) -> Verdict:
        """Inverse of ``to_dict``."""
        d = _unclean(dict(d))
        d.pop("ok", None)
        nc = d.get("negative_control")
        if nc is not None:
            nc = dict(nc)
            nc.pop("failed_as_required", None)
            d["negative_control"] = NegativeControl(**nc)
        return cls(**d)

    def to_json(self) -> str:
        """``to_dict`` as a JSON string."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, s: str) -> Verdict:
        """Inverse of ``to_json``."""
        return cls.from_dict(json.loads(s))


def verdicts_to_json(verdicts: list[Verdict], indent: int | None = 2) -> str:
    """A JSON list of ``Verdict.to_dict()``."""
    return json.dumps([v.to_dict() for v in verdicts], indent=indent)


def verdicts_from_json(s: str) -> list[Verdict]:
    """Inverse of ``verdicts_to_json``: a JSON list of verdict objects (ValueError naming what is wrong)."""
    if not isinstance(s, (str, bytes)):
        raise TypeError(f"s={s!r} (type {type(s).__name__}) must be a JSON string")
    try:
        data = json.loads(s)
    except json.JSONDecodeError as exc:
        raise ValueError(f"s is not valid JSON: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise ValueError("s must hold a JSON list of verdict objects")
    try:
        return [Verdict.from_dict(d) for d in data]
    except (TypeError, ValueError) as exc:  # missing / unknown fields, bad values
        raise ValueError(f"s holds a malformed verdict: {exc}") from None
