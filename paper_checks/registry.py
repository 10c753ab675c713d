"""The check registry: ``@register(id, title, reference)`` on a function ``run(ctx) -> list[Verdict]``."""

from __future__ import annotations

import importlib
import importlib.util
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass

#: check modules in report order (each registers one or more ids on import)
MODULES = ("thm1", "thm2", "thm3", "thm4", "cor1", "cor2", "cor3", "remark4", "lemmas", "wallclock",
           "inconsistencies", "yu", "adversary", "pep", "compression", "engines")

TIERS = ("quick", "full")


@dataclass(frozen=True)
class CheckSpec:
    id: str
    title: str
    reference: str
    func: Callable
    module: str


CHECKS: dict[str, CheckSpec] = {}


def register(id: str, title: str, reference: str):
    def deco(func):
        if id in CHECKS and CHECKS[id].func is not func:
            raise ValueError(f"check id {id!r} registered twice")
        CHECKS[id] = CheckSpec(id, title, reference, func, func.__module__)
        return func
    return deco


def load_all() -> dict[str, CheckSpec]:
    for m in MODULES:
        if importlib.util.find_spec(f"paper_checks.{m}") is not None:
            importlib.import_module(f"paper_checks.{m}")
    return CHECKS


@dataclass(frozen=True)
class Context:
    """What a check gets: ``tier`` ("quick"/"full"), the base ``seed``, and the report directory ``out``
    (figures go to ``out/figures``; ``fig(name)`` returns (absolute path, path relative to ``out``))."""

    tier: str = "quick"
    seed: int = 0
    out: str = "report"

    def __post_init__(self):
        if self.tier not in TIERS:
            raise ValueError(f"tier={self.tier!r} must be one of {TIERS}")

    @property
    def quick(self) -> bool:
        return self.tier == "quick"

    def seed_for(self, *keys) -> int:
        """A stable seed derived from the base seed and ``keys`` (never Python's salted hash)."""
        h = zlib.crc32(repr((int(self.seed),) + tuple(keys)).encode())
        return int(h % (2**31 - 1))

    def fig(self, name: str) -> tuple[str, str]:
        rel = os.path.join("figures", f"{name}.png")
        return os.path.join(self.out, rel), rel
