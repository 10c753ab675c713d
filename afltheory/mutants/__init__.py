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
(``faults.py``), the mutant classes (``algorithms.py``), the injection machinery (``catalogue.py``,
re-exported here), the kill matrix (``run.py``) and its command line (``cli.py``). The lookup and injection
functions (``get``, ``injected``, ``probe``, ``active``, ``names``) live in ``catalogue.py`` next to the
catalogue they read, so ``run.py`` imports them from there and never from the package (no import cycle).

Example::

    from afltheory import mutants, simulate
    with mutants.injected("sim.noise_dropped"):
        tr = simulate(problem, AFACD(1.0, 0.1), behaviour, rounds=100)   # noise-free, whatever σ_L says
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .catalogue import CATALOGUE, CATEGORIES, CONTROLS, active, get, injected, names, probe
    from .mutant import Mutant, qualname  # noqa: F401  (qualname: re-exported)
    from .run import KillMatrix

#: the package's names and the module defining each: loaded on first use (PEP 562), so that importing
#: ``afltheory.mutants.cli`` (``afltheory check --help``) does not load the catalogue, its rules and sympy
_LAZY = {
    **dict.fromkeys(
        ("CATALOGUE", "CATEGORIES", "CONTROLS", "active", "get", "injected", "names", "probe"), "catalogue"
    ),
    **dict.fromkeys(("Mutant", "qualname"), "mutant"),
}


def __getattr__(name: str) -> Any:
    """``CATALOGUE``, ``get``, ``injected``, ``Mutant`` & co. from their module (imported on first use)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


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


def kill_matrix(*args: Any, **kwargs: Any) -> KillMatrix:
    """Run checks under mutants; see ``afltheory.mutants.run.kill_matrix``."""
    from .run import kill_matrix as _km

    return _km(*args, **kwargs)
