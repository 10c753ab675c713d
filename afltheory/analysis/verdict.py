"""``Verdict``: the outcome of checking one claim, with its negative control (DESIGN.md principle 6)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


def _clean(v):
    """JSON-safe: numpy scalars/arrays to Python, non-finite floats to strings 'inf'/'-inf'/'nan'."""
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, np.ndarray):
        return _clean(v.tolist())
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return v if math.isfinite(v) else str(v)
    return v


def _unclean(v):
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    if isinstance(v, list):
        return [_unclean(x) for x in v]
    if isinstance(v, dict):
        return {k: _unclean(x) for k, x in v.items()}
    return v


@dataclass
class NegativeControl:
    """The same check fed a wrong input (bound/100, wrong slope, wrong algorithm, ...). It must FAIL
    (``passed`` False); a negative control that passes means the check cannot discriminate."""

    description: str
    measured: Any = None
    theoretical: Any = None
    passed: bool = False

    @property
    def failed_as_required(self) -> bool:
        return not self.passed


@dataclass
class Verdict:
    """One claim's outcome.

    ``measured`` (number), ``ci`` (low, high) or None, ``theoretical`` (number or text), ``tolerance`` (number or
    text: how ``passed`` was decided), ``figures`` (paths relative to the report directory), ``negative_control``.
    Extra fields: ``relation`` ("<=" for upper bounds, "~=" for tight values, ">=" ...), ``slack`` (bound /
    measured for upper bounds), ``method`` ("exact", "monte-carlo (R=...)", "symbolic", ...), ``notes``,
    ``finding`` (True for paper-inconsistency / paper-claim-fails findings), ``details`` (free-form numbers).
    ``ok``: passed and the negative control (if any) failed.
    """

    id: str
    claim: str
    reference: str
    measured: Any
    ci: tuple | None
    theoretical: Any
    tolerance: Any
    passed: bool
    figures: list = field(default_factory=list)
    negative_control: NegativeControl | None = None
    relation: str = "~="
    slack: float | None = None
    method: str = ""
    notes: str = ""
    finding: bool = False
    details: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        nc_ok = self.negative_control is None or not self.negative_control.passed
        return bool(self.passed) and nc_ok

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        if self.negative_control is not None:
            d["negative_control"]["failed_as_required"] = self.negative_control.failed_as_required
        return _clean(d)

    @classmethod
    def from_dict(cls, d: dict) -> Verdict:
        d = _unclean(dict(d))
        d.pop("ok", None)
        nc = d.get("negative_control")
        if nc is not None:
            nc = dict(nc)
            nc.pop("failed_as_required", None)
            d["negative_control"] = NegativeControl(**nc)
        if d.get("ci") is not None:
            d["ci"] = tuple(d["ci"])
        return cls(**d)

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, s: str) -> Verdict:
        return cls.from_dict(json.loads(s))


def verdicts_to_json(verdicts, indent: int | None = 2) -> str:
    return json.dumps([v.to_dict() for v in verdicts], indent=indent)


def verdicts_from_json(s: str) -> list[Verdict]:
    return [Verdict.from_dict(d) for d in json.loads(s)]
