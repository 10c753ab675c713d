"""paper_checks' plugin entry: the check modules in report order. ``afltheory`` finds this package through the
entry point ``paper_checks = "paper_checks.registry:load"`` (group ``afltheory.checks``). To add a check
module: create ``paper_checks/<name>.py`` with ``@register(...)`` and append ``<name>`` to ``MODULES``."""

from __future__ import annotations

from afltheory.checks import CHECKS, Context, load_modules, register
from afltheory.checks import load_all as _load_plugins

__all__ = ["CHECKS", "MODULES", "Context", "load", "load_all", "register"]

#: check modules in report order (each registers one or more ids on import)
MODULES = (
    "thm1",
    "thm2",
    "thm3",
    "thm4",
    "cor1",
    "cor2",
    "cor3",
    "remark4",
    "lemmas",
    "wallclock",
    "inconsistencies",
    "yu",
    "mtl",
    "adversary",
    "pep",
    "compression",
    "engines",
    "dynamic",
    "agreement",
    "laws",
    "tightness",
    "calibration",
    "published",
    "power_rules",
    "power_transcriptions",
    "power_claims",
    "power_engines",
)


def load() -> list[str]:
    """Import every module of ``MODULES`` (registering its checks); return their names in report order."""
    return load_modules(f"{__package__}.{m}" for m in MODULES)


def load_all():
    """Every registered check (all plugins, this one included)."""
    _load_plugins()
    load()
    return CHECKS
