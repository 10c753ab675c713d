"""Test-only fault injection points of the engines (private; set only by ``afltheory.mutants``).

The engines consult ``substitute`` (swap a correct algorithm for its mutant) and ``get`` (an engine-level
fault at a named point: ``"sim.delays"``, ``"sim.local_steps"``, ``"sim.noise"``, ``"exact.noise"``,
``"exact.round_shift"``, and in the schedule samplers ``"anarchy.event_restart"``, ``"anarchy.sync_clock"``).
Outside ``afltheory.mutants.injected(...)`` ``_ACTIVE`` is None, so every call returns the algorithm unchanged
/ the default: no default path can reach a fault.

``_SEEN`` (a set while ``afltheory.mutants.probe()`` runs, else None) records what the engines consulted — the
rule classes they received and the fault points they read — so that a mutant none of whose targets was
consulted by a check is known not to change it.
"""

from __future__ import annotations

_ACTIVE = None  # the afltheory.mutants.Mutant being injected, or None
_SEEN = None  # set of consulted rule classes and point names while probing, or None


def substitute(algorithm):
    """The active mutant's replacement of ``algorithm`` (or of its worker rule); ``algorithm`` otherwise."""
    if _SEEN is not None:
        _SEEN.add(type(algorithm))
        _SEEN.add(type(getattr(algorithm, "worker", None)))
    return algorithm if _ACTIVE is None else _ACTIVE.substitute(algorithm)


def get(point: str, default=None):
    """The active mutant's fault at engine point ``point``, else ``default``."""
    if _SEEN is not None:
        _SEEN.add(point)
    return default if _ACTIVE is None else _ACTIVE.faults.get(point, default)
