"""afltheory: numerical and symbolic verification of convergence theory for anarchic federated learning.

Public API (see docs/DESIGN.md): ``afltheory.problems``, ``afltheory.anarchy``, ``afltheory.algorithms``,
``afltheory.simulate`` -> ``Trace``, ``afltheory.exact``, ``afltheory.theory``, ``afltheory.analysis``,
``afltheory.plots``, ``afltheory.sweep``. Every public subpackage and module (``afltheory.mtl``,
``afltheory.checks``, ``afltheory.adversary``, ``afltheory.pep``, ...) is an attribute that loads on first
use, so ``import afltheory`` stays cheap and optional extras (torch, dask, PEPit) are imported only when a
feature that needs them is used (``afltheory.pep`` loads without PEPit; solving a PEP gives the install hint).
"""

from __future__ import annotations

import importlib
import pkgutil

__version__ = "0.1.0"

# every public subpackage/module found next to this file (complete by construction: a new subpackage such as
# ``claims`` is an attribute as soon as it exists); listing a directory imports nothing
_SUBMODULES = frozenset(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
_ENGINE_NAMES = {"simulate", "Trace", "DivergenceInfo"}
# star-import: the core only (torch_backend, datasets, sweep, mutants stay explicit imports)
__all__ = [
    "DivergenceInfo",
    "Trace",
    "__version__",
    "algorithms",
    "analysis",
    "anarchy",
    "compression",
    "engine",
    "exact",
    "plots",
    "problems",
    "simulate",
    "theory",
]


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _ENGINE_NAMES:
        return getattr(importlib.import_module(".engine", __name__), name)
    raise AttributeError(f"module 'afltheory' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES | _ENGINE_NAMES)
