"""``ArrayState``: the one protocol of every state an update takes and returns (docs/DESIGN.md, "Rules
return new state"): the rules' ``RuleState`` (``afltheory.algorithms.base``) and the compression channel's
``ChannelState`` (``afltheory.compression.channel``) are its subclasses, so the engines and the torch backend
read any state the same way (``arrays()`` for the divergence reset, ``map_arrays`` to move arrays to torch).
A leaf module: the rooms that define states sit in different layers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["ArrayState"]

_S = TypeVar("_S", bound="ArrayState")


@dataclass(frozen=True)
class ArrayState:
    """A frozen dataclass whose every field is an array with a leading replicate axis (NumPy, or torch tensors
    in the torch backend), passed to its update by donation: the update returns the new state and the caller
    never reads the old one. ``state["name"]`` reads a field; ``len(state)`` is the number of arrays (0,
    falsy: stateless)."""

    def arrays(self) -> tuple[Any, ...]:
        """The state's arrays (each with a leading replicate axis)."""
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self))

    def map_arrays(self: _S, fn: Callable[[Any], Any]) -> _S:
        """The same kind of state with ``fn`` applied to every array (e.g. NumPy -> torch tensors)."""
        return dataclasses.replace(
            self, **{f.name: fn(getattr(self, f.name)) for f in dataclasses.fields(self)}
        )

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def __len__(self) -> int:
        return len(dataclasses.fields(self))
