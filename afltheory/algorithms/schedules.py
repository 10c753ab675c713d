"""Step-size schedules: a server or worker learning rate that is a number, a sympy expression in the round
index ``t`` (e.g. Li et al. 2020's η_t = 2/(μ(γ + t))), or a callable ``t -> float``.

A schedule is indexed by the server round t = 0, 1, …, T − 1 and is constant within a round: every local step
of round t uses η_{L,t}, and the server step of round t is η_t η_{L,t}. Every backend reads it the same way:
``ServerRule.at_round(t)`` returns the constant rule of round t (``simulate``, ``afltheory.exact.moments``,
the torch backend), so a scheduled rule is run by exactly the code that runs a constant one.

Per local step (``per="step"``, or an expression in ``s``): η_{L,s} is indexed by the global local-step
counter s = t·E + k (round t, local step k < E, every arrival running the same E local steps), as in Li et
al. 2020 at E > 1 (their t counts SGD iterations). Round t's rule is ``ServerRule.at_round(t,
local_steps=E)``: its ``eta_L`` is the round's mean step m_t = (1/E) Σ_k η_{L,tE+k} (so the server step
γ = η m_t and the update G = (y_0 − y_E)/(m_t E) are the per-round rule's at E = 1) and its
``local_step_sequence`` the E steps, which every engine runs (``simulate`` step by step and collapsed,
``afltheory.exact.moments``, the torch backend); ``at_round(t)`` without ``local_steps`` refuses
(``UnsupportedRule``), so a backend that runs one step size per round cannot read the rule as a per-round
one. Only ``eta_L`` may decay per local step.

Validation: a schedule is evaluated when it is built (t = 0) and at every round it is used; a value that is
negative, zero, NaN, infinite or not a real number is refused with a ``ValueError`` naming the parameter and
the round; an expression with a free symbol other than ``t`` is refused naming the symbol.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from .._validation import check_int
from .errors import UnsupportedRule

__all__ = ["PER", "StepSize", "as_step_size", "s", "t"]

#: the round index of a schedule expression
t = sp.Symbol("t", nonnegative=True, integer=True)
#: the global local-step counter s = t·E + k of a per-local-step schedule (Li et al. 2020's iteration index)
s = sp.Symbol("s", nonnegative=True, integer=True)
#: what a schedule is indexed by: the server round, or the global local step
PER = ("round", "step")


class StepSize:
    """A step-size schedule η(t) (see the module docstring). ``StepSize(0.1)`` is constant;
    ``StepSize(2 / (mu * (gamma + t)), values={"mu": 0.5, "gamma": 8})`` substitutes named constants first.
    ``at(t)`` -> float (> 0, finite); ``constant`` -> the value when it does not depend on t, else None;
    ``expr`` -> the sympy expression (None for a callable, in ``t`` for either ``per``).
    ``per``: "round" (indexed by the round t) or "step" (by the global local step s = t·E + k; module
    docstring); None: "step" when the expression is in ``s``, else "round"."""

    def __init__(
        self,
        value: Any,
        *,
        name: str = "eta_L",
        values: dict[str, float] | None = None,
        per: str | None = None,
    ) -> None:
        self.name = name
        self.expr: sp.Expr | None = None
        self._fn: Callable[[int], float] | None = None
        self._const: float | None = None
        if per is not None and per not in PER:
            raise ValueError(f"per={per!r} must be one of {PER} (or None: read from the expression)")
        self.per = per or "round"
        if isinstance(value, StepSize):
            self.expr, self._fn, self._const = value.expr, value._fn, value._const
            self.per = per or value.per
            return
        if isinstance(value, bool):
            raise ValueError(
                f"{name}={value!r} must be a positive number, a sympy expression in t or a "
                f"callable t -> float"
            )
        if isinstance(value, (int, float, np.integer, np.floating)):
            self._const = self._check(float(value), None)
            return
        if isinstance(value, str):
            text = value
            try:
                value = sp.sympify(value, locals={"t": t, "s": s})
            except (sp.SympifyError, SyntaxError, TypeError, ValueError, AttributeError) as exc:
                raise ValueError(
                    f"{name}={value!r} is not a number or a sympy expression in t (it does not "
                    f"parse: {type(exc).__name__})"
                ) from None
            if not isinstance(value, sp.Expr):  # e.g. "O", "S", "Q": sympy names that are not expressions
                raise ValueError(f"{name}={text!r} is not a number or a sympy expression in t")
        if isinstance(value, sp.Basic):
            expr = sp.sympify(value)
            if values:
                expr = expr.subs({sp.Symbol(k, **_assumptions(expr, k)): v for k, v in values.items()})
                expr = expr.subs({s: values[str(s)] for s in expr.free_symbols if str(s) in values})
            free = [v for v in expr.free_symbols if str(v) not in ("t", "s")]
            if free:
                raise ValueError(
                    f"{name}={value} uses symbol(s) {sorted(map(str, free))} without values; a schedule may "
                    f"depend on the round index t (or the local-step counter s) only (pass values={{...}})"
                )
            index = {str(v) for v in expr.free_symbols}
            if index == {"t", "s"}:
                raise ValueError(
                    f"{name}={value} uses both t (the round) and s (the local-step counter); a schedule "
                    f"is indexed by one of them"
                )
            if index == {"s"}:
                if per == "round":
                    raise ValueError(
                        f"{name}={value} is in s (the local-step counter) but per='round'; use t, or "
                        f"per='step'"
                    )
                self.per = "step"
            expr = expr.subs({v: t for v in expr.free_symbols})
            self.expr = expr
            if not expr.free_symbols:
                if not expr.is_real:  # zoo (1/0), nan, complex numbers: no float, and not a step size
                    raise ValueError(
                        f"{name} evaluates to {expr}: it must be a finite number > 0 (allowed range (0, inf))"
                    )
                self._const = self._check(float(expr), None)
                return
            self._fn = sp.lambdify(t, expr, "math")  # t is the index: the round, or s for per="step"
            self._check(self._call(0), 0)
            return
        if callable(value):
            self._fn = value
            self._check(self._call(0), 0)
            return
        raise ValueError(
            f"{name}={value!r} must be a positive number, a sympy expression in t or a callable "
            f"t -> float (not {type(value).__name__})"
        )

    @property
    def _index(self) -> str:
        return "local step s" if self.per == "step" else "round t"

    def _call(self, r: int) -> float:
        try:
            v = self._fn(r)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError) as exc:
            raise ValueError(f"{self.name}: the schedule failed at {self._index}={r}: {exc}") from exc
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating, sp.Basic)):
            raise ValueError(
                f"{self.name}: the schedule returned {v!r} at {self._index}={r}; it must return a "
                f"positive real number"
            )
        try:
            return float(v)
        except (TypeError, ValueError):  # a complex or symbolic value
            raise ValueError(
                f"{self.name}: the schedule returned {v!r} at {self._index}={r}; it must return a "
                f"positive real number"
            ) from None

    def _check(self, v: float, r: int | None) -> float:
        where = "" if r is None else f" at {self._index}={r}"
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{self.name}={v!r}{where} must be a finite number > 0 (allowed range (0, inf))")
        return v

    @property
    def constant(self) -> float | None:
        """The value when the schedule does not depend on t (None otherwise)."""
        return self._const

    @property
    def per_step(self) -> bool:
        """True when the schedule decays per local step (``per="step"``) and is not constant."""
        return self.per == "step" and self._const is None

    def at(self, r: int) -> float:
        """η at index ``r``: the round, or the global local step for per="step" (validated: finite, > 0)."""
        if self._const is not None:
            return self._const
        return self._check(self._call(int(r)), int(r))

    def values(self, rounds: int) -> np.ndarray:
        """η at indices 0..rounds − 1, shape (rounds,)."""
        return np.array([self.at(r) for r in range(int(rounds))])

    def round_steps(self, r: int, local_steps: int) -> tuple[float, ...]:
        """The local steps of round ``r`` with E = ``local_steps`` local steps per round: (η_{rE}, …,
        η_{rE+E−1}) for a per-step schedule, (η_r,) * E for a per-round one."""
        E = check_int("local_steps", local_steps, low=1)
        if not self.per_step:
            return (self.at(r),) * E
        return tuple(self.at(int(r) * E + k) for k in range(E))

    def __float__(self) -> float:
        if self._const is None:
            raise UnsupportedRule(
                f"{self.name} is a step-size schedule ({self}); this backend needs a constant "
                f"step size — use ServerRule.at_round(t) or afltheory.simulate"
            )
        return self._const

    def __repr__(self) -> str:
        if self._const is not None:
            return repr(self._const)
        body = self.expr.subs(t, s) if self.per == "step" and self.expr is not None else self.expr
        tail = ", per='step'" if self.per == "step" and self.expr is None else ""
        return f"StepSize({body if body is not None else getattr(self._fn, '__name__', 'fn')}{tail})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StepSize):
            if self._const is not None or other._const is not None:
                return self._const == other._const
            if self.per != other.per:
                return False
            if self.expr is not None and other.expr is not None:
                return sp.simplify(self.expr - other.expr) == 0
            return self._fn is other._fn
        if isinstance(other, (int, float)) and self._const is not None:
            return self._const == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(
            self._const if self._const is not None else (self.expr if self.expr is not None else id(self._fn))
        )


def _assumptions(expr: sp.Basic, name: str) -> dict:
    for s in expr.free_symbols:
        if str(s) == name:
            return s.assumptions0
    return {}


def as_step_size(value: Any, name: str) -> float | StepSize:
    """A float for a constant step size (validated > 0), else a ``StepSize`` schedule."""
    out = StepSize(value, name=name)
    return out if out.constant is None else out.constant
