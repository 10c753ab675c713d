"""A small, safe arithmetic language for derived spec parameters (no ``eval``).

Grammar (parsed with :mod:`ast` in ``eval`` mode, then walked; any other node is refused):
numbers; names that are dotted config paths (``rounds``, ``replicates``, ``behaviour.arrivals.m``,
``behaviour.local_steps.K``, ``problem.num_workers``, ``algorithm.eta`` …); ``+ - * / // % **`` and unary
``±``; calls of ``sqrt log log2 log10 exp abs min max floor ceil round int float``. Example::

    [derived]
    "algorithm.eta_L" = "1/sqrt(rounds)"
    "algorithm.eta"   = "sqrt(behaviour.arrivals.m * behaviour.local_steps.K)"

Results must be finite numbers; exponents are capped (|exponent| ≤ 64) and values must stay below 1e300 so a
spec cannot make the validator compute forever or overflow.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

__all__ = ["ExprError", "evaluate", "names_in"]

_BIN = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UN = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUN = {
    "sqrt": math.sqrt,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "exp": math.exp,
    "abs": abs,
    "min": min,
    "max": max,
    "floor": math.floor,
    "ceil": math.ceil,
    "round": round,
    "int": int,
    "float": float,
}
MAX_LEN = 500
MAX_ABS = 1e300


class ExprError(ValueError):
    """A derived-parameter expression that cannot be parsed or evaluated."""


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _parse(text: str):
    if not isinstance(text, str):
        raise ExprError(f"an expression must be a string, got {type(text).__name__} {text!r}")
    if len(text) > MAX_LEN:
        raise ExprError(f"expression longer than {MAX_LEN} characters")
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise ExprError(f"cannot parse {text!r}: {exc.msg}") from None


def names_in(text: str) -> set[str]:
    """The dotted config paths an expression refers to."""
    out: set[str] = set()

    def walk(n):
        d = _dotted(n)
        if d is not None and not (isinstance(n, ast.Name) and n.id in _FUN):
            out.add(d)
            return
        for c in ast.iter_child_nodes(n):
            walk(c)

    walk(_parse(text))
    return out


def evaluate(text: str, lookup: Callable[[str], Any]) -> float | int:
    """Value of ``text``; ``lookup(path)`` returns the number at a dotted config path (raise KeyError if
    none)."""

    def ev(n):
        if isinstance(n, ast.Constant):
            if isinstance(n.value, bool) or not isinstance(n.value, (int, float)):
                raise ExprError(f"only numbers are allowed as constants, got {n.value!r}")
            return n.value
        if isinstance(n, ast.BinOp) and type(n.op) in _BIN:
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Pow) and abs(b) > 64:
                raise ExprError(f"exponent {b} exceeds the limit 64")
            try:
                v = _BIN[type(n.op)](a, b)
            except (ZeroDivisionError, OverflowError, ValueError) as exc:
                raise ExprError(f"{ast.unparse(n)}: {exc}") from None
            return _check(v, n)
        if isinstance(n, ast.UnaryOp) and type(n.op) in _UN:
            return _UN[type(n.op)](ev(n.operand))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _FUN and not n.keywords:
            args = [ev(a) for a in n.args]
            try:
                return _check(_FUN[n.func.id](*args), n)
            except (ValueError, OverflowError, TypeError) as exc:
                raise ExprError(f"{ast.unparse(n)}: {exc}") from None
        d = _dotted(n)
        if d is not None:
            try:
                v = lookup(d)
            except KeyError:
                raise ExprError(
                    f"unknown name {d!r} (use a dotted config path such as rounds or behaviour.arrivals.m)"
                ) from None
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ExprError(f"{d} is {v!r}, not a number")
            return v
        raise ExprError(
            f"{ast.unparse(n)!r} is not allowed (numbers, config paths, + - * / // % **, and "
            f"{', '.join(sorted(_FUN))})"
        )

    def _check(v, n):
        if isinstance(v, complex) or not math.isfinite(v) or abs(v) > MAX_ABS:
            raise ExprError(f"{ast.unparse(n)} = {v!r} is not a finite number below {MAX_ABS:g}")
        return v

    return ev(_parse(text))
