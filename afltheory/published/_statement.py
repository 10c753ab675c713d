"""``Statement``: one published theorem as plain data (issue 26, phase 1), before it becomes a ``Claim``."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

CONFIDENCES = ("read", "abstract read, statement from memory", "from memory")


@dataclass(frozen=True)
class Statement:
    """A published convergence theorem: where it was read, how it is read, and its bound as sympy.

    ``confidence``: "read" (the statement itself was retrieved and is quoted in ``excerpt``), "abstract read,
    statement from memory" (the retrieved page fixes the setting — e.g. what T counts — but not the
    constants), or "from memory" (nothing retrieved). A verdict that contradicts a statement whose
    confidence is not "read" is never called a finding.
    ``bound``: named terms, the bound is their sum. ``conditions``: sympy relationals that must hold.
    ``constants_explicit``: False when the source hides constants in O(·) (then only a rate can be checked).
    """

    id: str
    title: str
    reference: str
    source: str
    excerpt: str | None
    confidence: str
    reading: str
    assumptions: dict
    algorithm: str
    measured: str
    bound: dict
    conditions: dict = field(default_factory=dict)
    definitions: dict = field(default_factory=dict)
    constants_explicit: bool = True
    lower_bound: bool = False
    notes: str = ""

    def __post_init__(self) -> None:
        if self.confidence not in CONFIDENCES:
            raise ValueError(f"confidence={self.confidence!r} must be one of {CONFIDENCES}")
        for name, term in self.bound.items():
            if not isinstance(term, sp.Expr):
                raise ValueError(f"bound term {name!r}={term!r} must be a sympy expression")

    def total(self) -> sp.Expr:
        """The bound: the sum of its named terms."""
        return sp.Add(*self.bound.values())

    def value(self, values: dict) -> float:
        """The bound evaluated at ``values`` ({symbol or name: number}); ValueError naming free symbols."""
        return _evaluate(self.total(), values, self.id)

    def term_values(self, values: dict) -> dict:
        """Each named term evaluated at ``values``."""
        return {k: _evaluate(v, values, f"{self.id}:{k}") for k, v in self.bound.items()}

    def check_conditions(self, values: dict) -> dict:
        """{condition name: bool} at ``values``."""
        out = {}
        for k, c in self.conditions.items():
            r = c.subs(_subs(values))
            if r.free_symbols:
                raise ValueError(
                    f"condition {k!r} of {self.id} still has free symbols {sorted(map(str, r.free_symbols))}"
                )
            out[k] = bool(r)
        return out


def _subs(values: dict) -> dict:
    from .symbols import BY_NAME

    out = {}
    for k, v in values.items():
        key = BY_NAME.get(k, sp.Symbol(k)) if isinstance(k, str) else k
        out[key] = v
    return out


def _evaluate(expr: sp.Expr, values: dict, what: str) -> float:
    e = expr.subs(_subs(values))
    if e.free_symbols:
        raise ValueError(f"{what}: unknown value of symbol(s) {sorted(map(str, e.free_symbols))}")
    return float(e)
