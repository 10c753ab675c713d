"""Test-only fault injection points of the engines (private; set only by ``afltheory.mutants``).

The engines consult ``substitute`` (swap a correct component — a server rule, or any component nested in its
dataclass fields: worker rule, compressor, the compressor inside ``ErrorFeedback``/``DIANA`` — for its
mutant) and ``get`` (an engine-level fault at a named point: ``"sim.delays"``, ``"sim.local_steps"``,
``"sim.noise"``, ``"sim.drift_order"``, ``"sim.drift_cov"``, ``"channel.rng"``, ``"exact.noise"``,
``"exact.round_shift"``, ``"exact.drift_order"``, ``"exact.drift_cov"``, and in the schedule samplers
``"anarchy.event_restart"``, ``"anarchy.sync_clock"``). Components a check builds and uses without an engine
(``afltheory.compression.Channel``) consult ``substitute`` in their constructor. Outside
``afltheory.mutants.injected(...)`` ``_ACTIVE`` is None, so every call returns the component unchanged / the
default: no default path can reach a fault.

``_SEEN`` (a set while ``afltheory.mutants.probe()`` runs, else None) records what the engines consulted — the
classes of the component and of every component nested in it, and the fault points they read — so that a
mutant none of whose targets was consulted by a check is known not to change it.
"""

from __future__ import annotations

import dataclasses

_ACTIVE = None  # the afltheory.mutants.Mutant being injected, or None
_SEEN = None  # set of consulted component classes and point names while probing, or None


def components(obj):
    """``obj`` and every component nested in its dataclass fields (recursively), depth first."""
    yield obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from components(getattr(obj, f.name, None))


def substitute(component):
    """The active mutant's replacement of ``component`` (and of the components nested in it);
    ``component`` otherwise."""
    if _SEEN is not None:
        _SEEN.add(type(component))
        _SEEN.update(type(c) for c in components(component) if dataclasses.is_dataclass(c))
        _SEEN.add(type(getattr(component, "worker", None)))   # a worker rule may be a property
    return component if _ACTIVE is None else _ACTIVE.substitute(component)


def get(point: str, default=None):
    """The active mutant's fault at engine point ``point``, else ``default``."""
    if _SEEN is not None:
        _SEEN.add(point)
    return default if _ACTIVE is None else _ACTIVE.faults.get(point, default)
