"""Introspection helpers shared by every layer (a leaf: imports nothing from afltheory).

``defining_class(cls, name)`` finds the class whose body defines a hook; ``overrides(obj, name, base)`` says
whether ``obj``'s class changed that hook below ``base``. Backends use them to refuse a rule or a compressor
that overrides imperative code instead of reading it as its base class (``afltheory.algorithms.base``
re-exports both).
"""

from __future__ import annotations

from typing import Any

__all__ = ["defining_class", "overrides"]


def defining_class(cls: type, name: str) -> type | None:
    """The class in ``cls``'s MRO whose body defines attribute ``name`` (None if none does)."""
    for c in cls.__mro__:
        if name in c.__dict__:
            return c
    return None


def overrides(obj: Any, name: str, base: type) -> bool:
    """True when ``obj``'s class defines ``name`` somewhere below ``base`` (a subclass changed that hook)."""
    return defining_class(type(obj), name) is not defining_class(base, name)
