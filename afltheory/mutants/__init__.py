"""Mutation catalogue: plausible implementation bugs as first-class objects (docs/DESIGN.md, "Verdict power").

A verdict is evidence only if it would have come out differently had the implementation been wrong. Each
``Mutant`` in ``CATALOGUE`` is one such wrong implementation, of one of two kinds:

- **rule mutants** (``kind="rule"``): a subclass of a correct component overriding one hook
  (``afltheory.mutants.algorithms``): a server or worker rule, a compressor, or the worker-side scheme around
  it (``ErrorFeedback``, ``DIANA``). They *are* components — ``simulate`` and the torch backend run them
  directly; the exact engine honours a mutated declarative hook (a rule's step size, normalizer, weights; a
  compressor's ``rescale``/``mean_gain``) and refuses (TypeError) a mutant overriding an imperative one (a
  rule's ``aggregate``/``update_memory``, a compressor's sampling code below its ``moment_map``) — never
  reading a mutant as its base class.
- **engine faults** (``kind="engine"``): a wrong engine (the simulator reads the wrong stale model, misreads
  K, drops or mis-scales the noise, applies the drift of a moving optimum after the update or with σ_q for
  σ_q²; the compression channel shares one random stream between workers; the exact engine drops or
  mis-scales the noise covariance, reports its curve one round late, or applies the drift after the update /
  with σ_q for σ_q²). They exist only inside ``injected(...)``: a private hook (``afltheory._faults``) that
  the engines consult and that is None on every default path.

``with injected(mutant):`` also substitutes every correct component the mutant replaces (exact type) by its
mutant wherever an engine receives it, nested components included (``AFACD(η, η_L)`` built inside a check is
run as ``AFACDEtaLMissing(η, η_L)``; ``AFACD(..., compressor=DIANA(RandK(2)))`` as
``AFACD(..., compressor=DIANA(RandKNoRescale(2)))``); a ``Channel`` a check builds itself does the same. So a
check runs under a mutant without being edited. ``kill_matrix(...)`` (``afltheory.mutants.run``) runs checks
under every mutant; ``afltheory check --mutants`` is its command line. A mutant may name the tests that kill
it (``Mutant.tests``, pytest node ids): ``afltheory.mutants.run.suite_kills`` runs each in its own pytest
process with the mutant injected for the session (``AFLTHEORY_MUTANT=NAME``, honoured by tests/conftest.py),
and the kill matrix gets a "killed by tests" column (``check --mutants --with-tests``) — the only judge of a
bug no check can see by construction, such as a bound term transcribed looser than the paper's.

Layout: the type (``mutant.py``), the catalogue one mutant per line (``catalogue.py``), the engine faults
(``faults.py``), the mutant classes (``algorithms.py``), the injection machinery (here), the kill matrix
(``run.py``) and its command line (``cli.py``).

Example::

    from afltheory import mutants, simulate
    with mutants.injected("sim.noise_dropped"):
        tr = simulate(problem, AFACD(1.0, 0.1), behaviour, rounds=100)   # noise-free, whatever σ_L says
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .. import _faults
from .catalogue import CATALOGUE, CATEGORIES, CONTROLS
from .mutant import Mutant, qualname  # noqa: F401  (qualname: used by .run)

if TYPE_CHECKING:
    from .run import KillMatrix

__all__ = [
    "CATALOGUE",
    "CATEGORIES",
    "CONTROLS",
    "Mutant",
    "active",
    "get",
    "injected",
    "kill_matrix",
    "names",
    "probe",
]


def names() -> list[str]:
    """The names of the catalogue's mutants."""
    return list(CATALOGUE)


def get(mutant: str | Mutant) -> Mutant:
    """The catalogued mutant (or equivalent control) ``mutant`` (a name or a ``Mutant``)."""
    if isinstance(mutant, Mutant):
        return mutant
    if mutant in CONTROLS:
        return CONTROLS[mutant]
    if mutant not in CATALOGUE:
        from .generated import GENERATED

        if mutant in GENERATED:
            return GENERATED[mutant]
        raise ValueError(f"mutant={mutant!r} is not catalogued; known: {', '.join(CATALOGUE)}")
    return CATALOGUE[mutant]


def active() -> Mutant | None:
    """The mutant injected right now (None outside ``injected``)."""
    return _faults.active()


@contextlib.contextmanager
def injected(mutant: str | Mutant) -> Iterator[Mutant]:
    """Inject ``mutant`` (a name or a ``Mutant``) into every engine for the duration of the block; always
    reset on exit (also on exceptions). Test-only: not reentrant (``RuntimeError`` if a mutant is active)."""
    m = get(mutant)
    _faults.activate(m)  # RuntimeError if a mutant is active
    try:
        yield m
    finally:
        _faults.deactivate()


@contextlib.contextmanager
def probe() -> Iterator[set]:
    """Record what the engines consult inside the block (yields a set: rule classes received, fault points
    read); with no mutant injected nothing changes. ``Mutant.exercised_by(seen)`` says whether a mutant could
    change the probed run — deterministic runs that never reach a mutant are left out of the kill matrix."""
    seen = _faults.start_probe()  # RuntimeError if already probing
    try:
        yield seen
    finally:
        _faults.stop_probe()


def kill_matrix(*args: Any, **kwargs: Any) -> KillMatrix:
    """Run checks under mutants; see ``afltheory.mutants.run.kill_matrix``."""
    from .run import kill_matrix as _km

    return _km(*args, **kwargs)
