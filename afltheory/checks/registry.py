"""The check registry: ``@register(id, title, reference)`` on a function ``run(ctx) -> list[Verdict]``.

Checks are discovered through the entry-point group ``afltheory.checks``: each entry point names a module
(importing it registers its checks) or a zero-argument callable (calling it imports the check modules; it may
return their names, in report order). The paper's own checks register themselves this way; a third-party
package does the same in its ``pyproject.toml``::

    [project.entry-points."afltheory.checks"]
    mychecks = "mypackage.checks"

A single file registers checks by being loaded with ``load_file`` (``afltheory verify FILE.py``).
The library never imports a plugin by name.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import warnings
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points

__all__ = [
    "CHECKS",
    "ENTRY_POINT_GROUP",
    "TIERS",
    "CheckSpec",
    "Context",
    "load_all",
    "load_file",
    "load_modules",
    "ordered_ids",
    "register",
]

ENTRY_POINT_GROUP = "afltheory.checks"
TIERS = ("quick", "full")


@dataclass(frozen=True)
class CheckSpec:
    """A registered check: ``func(ctx) -> list[Verdict]`` from ``module``; ``slow``: its quick tier takes more
    than ~15 s, so the test suite runs it only in the slow tier."""

    id: str
    title: str
    reference: str
    func: Callable
    module: str
    slow: bool = False


CHECKS: dict[str, CheckSpec] = {}
_MODULE_RANK: dict[str, int] = {}
_loaded = False


def register(id: str, title: str, reference: str, *, slow: bool = False) -> Callable[[Callable], Callable]:
    """Decorator: register ``func(ctx) -> list[Verdict]`` under ``id`` (unique). ``slow=True`` when the
    check's quick tier takes more than ~15 s (the test suite then marks its test slow)."""
    if not isinstance(id, str) or not id:
        raise ValueError(f"check id={id!r} must be a non-empty string")

    def deco(func: Callable) -> Callable:
        old = CHECKS.get(id)
        if old is not None and (old.module, old.func.__qualname__) != (func.__module__, func.__qualname__):
            raise ValueError(f"check id {id!r} registered twice ({old.module} and {func.__module__})")
        CHECKS[id] = CheckSpec(id, title, reference, func, func.__module__, bool(slow))
        return func

    return deco


def _rank_modules(names: Iterable[str]) -> None:
    for name in names:
        _MODULE_RANK.setdefault(name, len(_MODULE_RANK))


def load_modules(names: Iterable[str]) -> list[str]:
    """Import the check modules ``names`` (fully qualified) in order, registering their checks; the report
    lists them in this order. Returns the names. A plugin's entry-point callable is typically one call of
    this."""
    names = list(names)
    _rank_modules(names)
    for n in names:
        importlib.import_module(n)
    return names


def load_all() -> dict[str, CheckSpec]:
    """Load every check plugin of the entry-point group ``afltheory.checks`` (once) and return ``CHECKS``.
    A plugin that fails to load is reported with a warning, never silently skipped."""
    global _loaded
    if _loaded:
        return CHECKS
    _loaded = True
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plugin must not hide the others
            warnings.warn(
                f"check plugin {ep.name!r} ({ep.value}) failed to load: {exc!r}", RuntimeWarning, stacklevel=2
            )
            continue
        if callable(obj) and not isinstance(obj, type(sys)):
            names = obj()
            if names is not None:
                _rank_modules(names)
    return CHECKS


def load_file(path: str) -> list[str]:
    """Execute a user file (``afltheory verify FILE.py``) and return the ids of the checks it registered."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"file={path!r} does not exist")
    name = "afltheory_user_" + format(zlib.crc32(path.encode()), "x")
    if name in sys.modules:
        return [i for i, s in CHECKS.items() if s.module == name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"file={path!r} is not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    before = set(CHECKS)
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    _rank_modules([name])
    return [i for i in CHECKS if i not in before]


def ordered_ids(ids: Iterable[str] | None = None) -> list[str]:
    """Check ids in report order: by the module order their plugin declared, then registration order."""
    ids = list(CHECKS) if ids is None else list(ids)
    pos = {i: j for j, i in enumerate(CHECKS)}
    return sorted(ids, key=lambda i: (_MODULE_RANK.get(CHECKS[i].module, len(_MODULE_RANK)), pos[i]))


@dataclass(frozen=True)
class Context:
    """What a check gets: ``tier`` ("quick"/"full"), the base ``seed``, and the report directory ``out``
    (figures go to ``out/figures``; ``fig(name)`` returns (absolute path, path relative to ``out``))."""

    tier: str = "quick"
    seed: int = 0
    out: str = "report"

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise ValueError(f"tier={self.tier!r} must be one of {TIERS}")

    @property
    def quick(self) -> bool:
        """True in the quick tier."""
        return self.tier == "quick"

    def seed_for(self, *keys: object) -> int:
        """A stable seed derived from the base seed and ``keys`` (never Python's salted hash)."""
        h = zlib.crc32(repr((int(self.seed),) + tuple(keys)).encode())
        return int(h % (2**31 - 1))

    def fig(self, name: str) -> tuple[str, str]:
        """(path to write, path relative to the report directory) of figure ``name``."""
        rel = os.path.join("figures", f"{name}.png")
        return os.path.join(self.out, rel), rel
