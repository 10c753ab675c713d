"""afltheory: numerical and symbolic verification of convergence theory for anarchic federated learning.

Public API (see docs/DESIGN.md): ``afltheory.problems``, ``afltheory.anarchy``, ``afltheory.algorithms``,
``afltheory.simulate`` -> ``Trace``, ``afltheory.exact``, ``afltheory.theory``, ``afltheory.analysis``,
``afltheory.plots``, ``afltheory.sweep``. Submodules load on first use so ``import afltheory`` stays cheap and
optional extras (torch, dask) are never imported by the core.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = {"problems", "anarchy", "algorithms", "compression", "engine", "exact", "theory", "analysis",
               "plots", "sweep", "torch_backend", "datasets", "mutants"}
_ENGINE_NAMES = {"simulate", "Trace", "DivergenceInfo"}
# star-import: the core only (torch_backend, datasets, sweep, mutants stay explicit imports)
__all__ = ["DivergenceInfo", "Trace", "__version__", "algorithms", "analysis", "anarchy", "compression",
           "engine", "exact", "plots", "problems", "simulate", "theory"]


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _ENGINE_NAMES:
        return getattr(importlib.import_module(".engine", __name__), name)
    raise AttributeError(f"module 'afltheory' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES | _ENGINE_NAMES)
