"""``Paper``: how a paper module cites its paper, written once per module — the citation that starts every
claim's ``reference`` and how the paper's text was retrieved (every claim's ``source`` unless it has its
own), and where a statement was read in the paper's indexed copy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..claims import Claim, Location

__all__ = ["Paper"]


@dataclass(frozen=True)
class Paper:
    """A published paper as its claims cite it: ``citation`` (authors, venue, year; a claim's ``reference``
    is "<citation>, <where>") and ``source`` (how its text was retrieved); ``index_id`` and ``found_by``: the
    index's file id of its converted copy and the fragment that found it (when the text was read there)."""

    citation: str
    source: str
    index_id: str | None = None
    found_by: str = ""

    def claim(self, id: str, title: str, where: str, *, source: str | None = None, **statement: Any) -> Claim:
        """The ``Claim`` ``id`` titled ``title``, stated at ``where`` in the paper (e.g. "Theorem 1");
        ``source``: this claim's own retrieval note (default: the paper's); ``statement``: the rest of the
        claim, as ``Claim``'s keywords."""
        return Claim(
            id=id,
            title=title,
            reference=f"{self.citation}, {where}",
            source=self.source if source is None else source,
            **statement,
        )

    def at(self, offset: int, theorem: str, section: str) -> Location:
        """Where ``theorem`` was read in the paper's indexed copy: the page at character ``offset``, in
        ``section``."""
        return Location(self.index_id, offset, theorem, self.found_by, section=section)
