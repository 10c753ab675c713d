"""``Verdict``: the outcome of checking one claim, with its negative control (docs/DESIGN.md principle 6).

A verdict is built once, with keyword arguments only, and never amended (both classes are frozen). Compute
everything a verdict needs (the measurements, its control, figures, notes) before constructing it.

Build verdicts with ``Verdict.judged(criterion=..., measured=..., theoretical=..., control=...)``: one
criterion (``afltheory.checks.criteria``) decides ``passed`` for the claim and for its negative control.
Passing ``passed=`` to ``Verdict(...)`` by hand is the deprecated path, kept for backward compatibility (and
for ``from_dict``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
from dataclasses import MISSING, asdict, dataclass
from typing import Any

import numpy as np

from .._io import json_containers
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
    return json_containers(v, lambda x: _nonfinite_as(x, nonfinite))


def _nonfinite_as(v: Any, nonfinite: str) -> Any:
    """``json_safe`` of a leaf: a float (non-finite per ``nonfinite``); anything else unchanged."""
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isfinite(v):
            return v
        return str(v) if nonfinite == "string" else None
    return v


def _has_nan(v: Any) -> bool:
    """True if the number, array or (nested) list/tuple/dict ``v`` holds a NaN (also a complex one)."""
    return _bad_number(v, allow_inf=True) is not None


def _bad_number(v: Any, *, allow_inf: bool, depth: int = 0) -> str | None:
    """Why ``v`` (a number, array, or nested list/tuple/dict, keys included) cannot go into a verdict: it
    holds a NaN, a complex number, or (``allow_inf`` False) an infinity; None if it is clean."""
    if depth > 50:
        return "is nested more than 50 levels deep"
    if v is None or isinstance(v, (str, bool, np.bool_)):
        return None
    if isinstance(v, (complex, np.complexfloating)):
        return f"holds a complex number ({v!r})"
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "c":
            return "holds a complex array"
        if v.dtype.kind == "f":
            if np.isnan(v).any():
                return "holds NaN"
            if not allow_inf and np.isinf(v).any():
                return "holds an infinity"
            return None
        if v.dtype.kind == "O":
            v = v.tolist()
        else:
            return None
    if isinstance(v, dict):
        for k, x in v.items():
            why = _bad_number(k, allow_inf=allow_inf, depth=depth + 1) or _bad_number(
                x, allow_inf=allow_inf, depth=depth + 1
            )
            if why:
                return why
        return None
    if isinstance(v, (list, tuple, set, frozenset)):
        for x in v:
            why = _bad_number(x, allow_inf=allow_inf, depth=depth + 1)
            if why:
                return why
        return None
    if isinstance(v, NegativeControl):
        return _bad_number([v.measured, v.theoretical], allow_inf=allow_inf, depth=depth + 1)
    if isinstance(v, numbers.Number):
        try:
            if v != v:  # NaN (float, numpy, Decimal)
                return "holds NaN"
            if not allow_inf and isinstance(v, numbers.Real) and not math.isfinite(float(v)):
                return "holds an infinity"
        except (TypeError, ValueError, OverflowError):
            return f"holds a number that cannot be compared ({type(v).__name__})"
    return None


def _check_flag(name: str, value: Any, *, optional: bool = False) -> bool | None:
    """A real boolean (``bool`` or ``numpy.bool_``), or None when ``optional``; else TypeError: ``passed=nan``
    or ``passed="false"`` must never be read as True."""
    if value is None and optional:
        return None
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"{name}={value!r} (type {type(value).__name__}) must be a bool"
            + (" or None" if optional else "")
        )
    return bool(value)


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
        raise ValueError(
            f"ci={tuple(ci)!r}: its upper end {h!r} is below measured={m!r}; a confidence bound "
            "must be at least the mean it bounds"
        )


def _unclean(v: Any) -> Any:
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    if isinstance(v, list):
        return [_unclean(x) for x in v]
    if isinstance(v, dict):
        return {k: _unclean(x) for k, x in v.items()}
    return v


def _validate_verdict(v: Any) -> None:
    """Deep validation of a Verdict (called by ``__post_init__``; normalises tuples and numpy bools).
    Text fields are strings; ``passed``/``finding``/``derivation`` real bools, ``inside_conditions`` a bool
    or None; NaN and complex numbers are refused anywhere (measured, theoretical, ci, slack, tolerance, terms,
    details, the negative control — inside lists and dicts too); ``terms``, ``tolerance`` and ``slack``
    must hold no NaN and ``terms``/``tolerance`` no infinity (divergence is reported as an infinite
    ``measured``)."""
    for name in ("id", "claim", "reference", "method", "notes", "quantity", "interval"):
        if not isinstance(getattr(v, name, ""), str):
            raise TypeError(
                f"{name}={getattr(v, name)!r} (type {type(getattr(v, name)).__name__}) must be a string"
            )
    if not v.id:
        raise ValueError("id='' must be a non-empty string")
    object.__setattr__(v, "passed", _check_flag("passed", v.passed))
    object.__setattr__(v, "finding", _check_flag("finding", v.finding))
    object.__setattr__(v, "derivation", _check_flag("derivation", v.derivation))
    object.__setattr__(
        v, "inside_conditions", _check_flag("inside_conditions", v.inside_conditions, optional=True)
    )
    if isinstance(v.figures, (str, bytes)) or not isinstance(v.figures, (list, tuple)):
        raise TypeError(f"figures={v.figures!r} must be a list or tuple of paths")
    if not all(isinstance(f, str) for f in v.figures):
        raise TypeError(f"figures={v.figures!r} must hold path strings")
    object.__setattr__(v, "figures", tuple(v.figures))
    if v.ci is not None:
        if isinstance(v.ci, (str, bytes, dict)) or not hasattr(v.ci, "__iter__"):
            raise TypeError(f"ci={v.ci!r} must be a (low, high) pair or None")
        object.__setattr__(v, "ci", tuple(v.ci))
    for name in ("terms", "details"):
        if getattr(v, name) is not None and not isinstance(getattr(v, name), dict):
            raise TypeError(f"{name}={getattr(v, name)!r} must be a dict or None")
    if v.slack is not None and (
        isinstance(v.slack, (bool, np.bool_)) or not isinstance(v.slack, numbers.Real)
    ):
        raise TypeError(f"slack={v.slack!r} must be a real number or None")
    for name, allow_inf in (
        ("measured", True),
        ("theoretical", True),
        ("ci", True),
        ("slack", True),
        ("details", True),
        ("tolerance", False),
        ("terms", False),
    ):
        why = _bad_number(getattr(v, name), allow_inf=allow_inf)
        if why:
            raise ValueError(
                f"{name}={getattr(v, name)!r} {why}: a verdict reports divergence as inf (or "
                f"says n/a), never NaN or a complex number"
                + ("" if allow_inf else f"; {name} must be finite")
            )


def _fields_of(cls: type) -> dict[str, bool]:
    """{field name: required} of a dataclass (required: no default)."""
    return {f.name: f.default is MISSING and f.default_factory is MISSING for f in dataclasses.fields(cls)}


def _check_keys(d: dict, fields: dict, what: str) -> None:
    unknown = sorted(set(d) - set(fields))
    if unknown:
        raise ValueError(f"{what} has unknown field(s) {unknown}; allowed: {sorted(fields)}")
    missing = [k for k, req in fields.items() if req and k not in d]
    if missing:
        raise ValueError(f"{what} lacks required field(s) {missing}")


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
        if not isinstance(self.description, str):
            raise TypeError(f"description={self.description!r} must be a string")
        object.__setattr__(self, "passed", _check_flag("negative_control.passed", self.passed))
        for name in ("measured", "theoretical"):
            why = _bad_number(getattr(self, name), allow_inf=True)
            if why:
                raise ValueError(
                    f"negative_control.{name}={getattr(self, name)!r} {why}: a control reports "
                    f"divergence as inf (or says n/a), never NaN or a complex number"
                )

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
        _validate_verdict(self)
        _check_ucb(self.measured, self.ci)

    @property
    def ok(self) -> bool:
        """Passed, and the negative control (if any) failed."""
        nc_ok = self.negative_control is None or not self.negative_control.passed
        return bool(self.passed) and nc_ok

    @classmethod
    def judged(
        cls,
        *,
        criterion: Criterion,
        measured: Any,
        theoretical: Any,
        stats: dict | None = None,
        control: ControlMeasurement | None = None,
        requires: dict[str, bool] | None = None,
        **fields: Any,
    ) -> Verdict:
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
            raise TypeError(
                f"criterion={criterion!r} must provide judge(), describe() and relation "
                f"(afltheory.checks.criteria)"
            )
        if control is not None and not isinstance(control, ControlMeasurement):
            raise TypeError(f"control={control!r} must be a ControlMeasurement or None")
        passed = criterion.judge(measured, theoretical, **(stats or {}))
        passed = passed and all(bool(v) for v in (requires or {}).values())
        nc = None
        if control is not None:
            failed_to_fail = criterion.judge(control.measured, control.theoretical, **control.stats)
            nc = NegativeControl(
                description=control.description,
                measured=control.measured,
                theoretical=control.theoretical,
                passed=failed_to_fail,
            )
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
        """Inverse of ``to_dict``, schema-checked: ``d`` must be a dict with exactly the Verdict's fields
        (plus the derived ``ok``/``failed_as_required``, which must agree with the recomputed values); bools
        must be JSON booleans (``"false"`` is not a bool). ValueError/TypeError naming the field otherwise."""
        if not isinstance(d, dict):
            raise TypeError(f"a verdict must be a dict, got {type(d).__name__}")
        d = _unclean(dict(d))
        claimed_ok = d.pop("ok", None)
        if claimed_ok is not None and not isinstance(claimed_ok, bool):
            raise TypeError(f"ok={claimed_ok!r} must be a bool")
        _check_keys(d, _fields_of(cls), f"verdict {d.get('id')!r}")
        nc = d.get("negative_control")
        claimed_far = None
        if nc is not None:
            if not isinstance(nc, dict):
                raise TypeError(f"negative_control={nc!r} must be an object or null")
            nc = dict(nc)
            claimed_far = nc.pop("failed_as_required", None)
            if claimed_far is not None and not isinstance(claimed_far, bool):
                raise TypeError(f"negative_control.failed_as_required={claimed_far!r} must be a bool")
            _check_keys(nc, _fields_of(NegativeControl), "negative_control")
            d["negative_control"] = NegativeControl(**nc)
        for k in ("figures", "ci"):
            if isinstance(d.get(k), list):
                d[k] = tuple(d[k])
        v = cls(**d)
        if claimed_ok is not None and claimed_ok != v.ok:
            raise ValueError(
                f"verdict {v.id!r}: ok={claimed_ok} contradicts passed={v.passed} and its "
                f"negative control (ok would be {v.ok})"
            )
        if (
            claimed_far is not None
            and v.negative_control is not None
            and claimed_far != v.negative_control.failed_as_required
        ):
            raise ValueError(
                f"verdict {v.id!r}: negative_control.failed_as_required={claimed_far} "
                f"contradicts its passed={v.negative_control.passed}"
            )
        return v

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
