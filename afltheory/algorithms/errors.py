"""The refusal every backend raises for a rule it cannot represent (a leaf of ``afltheory.algorithms``: both
``base`` and ``schedules`` raise it, so it lives below them)."""

from __future__ import annotations

__all__ = ["UnsupportedRule"]


class UnsupportedRule(TypeError):
    """A backend cannot represent this rule (e.g. the exact engine or the PEP skeleton given a rule that
    overrides imperative code): it refuses it rather than read it as its base class. Use ``simulate``.
    The mutation analysis records a check refused this way as "refused" (no verdict), not as a kill."""
