"""API hygiene of the library (issue 20, "Habits"): every public module of ``afltheory`` defines ``__all__``;
every public function and class it exports, and every public method of those classes, has a docstring and
annotated parameters and return (PEP 561: the package ships ``py.typed``); the library never imports the
``experiments`` or ``paper_checks`` packages (they plug in through entry points).

A public module is one whose dotted path has no component starting with ``_``. A method's docstring may be
inherited from the method it overrides (``help()`` shows it). ``__init__`` needs annotated parameters (its
class docstring documents it); dataclass-generated ``__init__`` methods are annotated by their fields. The
first parameter of a method (``self``/``cls``) is not annotated. Exceptions are listed in ``ALLOWED`` with
the reason; an entry that is no longer needed fails the test, so the list cannot go stale."""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import afltheory

ROOT = Path(afltheory.__file__).parent

#: "module.qualname" -> why it is exempt. Keep it short; fix rather than list.
ALLOWED: dict[str, str] = {}

#: optional dependencies: a public module that needs one is skipped when it is not installed
OPTIONAL = ("torch",)


def _public_modules() -> list[str]:
    names = ["afltheory"]
    for info in pkgutil.walk_packages(afltheory.__path__, "afltheory."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


PUBLIC_MODULES = _public_modules()


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - only without an optional extra
        if getattr(exc, "name", None) in OPTIONAL:
            pytest.skip(f"{name} needs the optional dependency {exc.name!r}")
        raise


def _unwrap_attr(attr: object) -> tuple[object, bool]:
    """(the function behind a method-like class attribute, whether it takes self/cls first)."""
    if isinstance(attr, staticmethod):
        return attr.__func__, False
    if isinstance(attr, classmethod):
        return attr.__func__, True
    if isinstance(attr, property):
        return attr.fget, True
    if isinstance(attr, functools.cached_property):
        return attr.func, True
    return attr, True


def _inherited_doc(cls: type, name: str) -> str | None:
    for base in cls.__mro__[1:]:
        if base is object or name not in vars(base):
            continue
        f, _ = _unwrap_attr(vars(base)[name])
        doc = getattr(f, "__doc__", None)
        if doc and doc.strip():
            return doc
    return None


def _problems(
    func: object, label: str, *, skip_first: bool, need_doc: bool, need_return: bool, cls: type | None = None
) -> list[str]:
    func = inspect.unwrap(func)
    out = []
    doc = func.__doc__ if func.__doc__ and func.__doc__.strip() else None
    if need_doc and doc is None and (cls is None or _inherited_doc(cls, func.__name__) is None):
        out.append(f"{label}: no docstring")
    sig = inspect.signature(func)
    params = list(sig.parameters.values())[1 if skip_first else 0 :]
    bare = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    if bare:
        out.append(f"{label}: parameters without type hints {bare}")
    if need_return and sig.return_annotation is inspect.Signature.empty:
        out.append(f"{label}: no return type hint")
    return out


def _exported(module) -> list[tuple[str, object]]:
    """(label, object) of the functions and classes ``module.__all__`` exports that afltheory defines."""
    out = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if not (getattr(obj, "__module__", "") or "").startswith("afltheory"):
            continue
        out.append((f"{obj.__module__}.{obj.__qualname__}", obj))
    return out


def _class_problems(label: str, cls: type) -> list[str]:
    out = [] if cls.__doc__ and cls.__doc__.strip() else [f"{label}: no docstring"]
    for name, attr in vars(cls).items():
        if name.startswith("_") and name not in ("__init__", "__call__"):
            continue
        if name == "__init__" and dataclasses.is_dataclass(cls):
            continue
        func, bound = _unwrap_attr(attr)
        if not inspect.isfunction(func) or not func.__qualname__.startswith(cls.__qualname__ + "."):
            continue  # inherited or assigned from elsewhere: checked where it is defined
        init = name == "__init__"
        out += _problems(
            func, f"{label}.{name}", skip_first=bound, need_doc=not init, need_return=not init, cls=cls
        )
    return out


def _module_problems(module) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for label, obj in _exported(module):
        probs = (
            _class_problems(label, obj)
            if inspect.isclass(obj)
            else _problems(obj, label, skip_first=False, need_doc=True, need_return=True)
        )
        for p in probs:
            found.setdefault(p.split(":", 1)[0], []).append(p)
    return found


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_public_module_defines_all_and_documents_its_api(name):
    """Each public module: ``__all__`` names existing objects; its exported functions, classes and their
    public methods have docstrings and type hints (except the allow-listed ones)."""
    module = _import(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists undefined names {missing}"
    found = _module_problems(module)
    bad = [
        p
        for label, probs in found.items()
        if label not in ALLOWED and not any(label.startswith(a + ".") for a in ALLOWED)
        for p in probs
    ]
    assert not bad, "\n".join(bad)


def test_allow_list_is_needed():
    """Every ``ALLOWED`` entry still names a real problem (remove an entry once it is fixed)."""
    found: dict[str, list[str]] = {}
    for name in PUBLIC_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # pragma: no cover - optional extra missing
            continue
        found.update(_module_problems(module))
    stale = sorted(a for a in ALLOWED if a not in found)
    assert not stale, f"ALLOWED entries no longer needed (remove them): {stale}"


def test_hygiene_check_can_fail():
    """Negative control: the checker flags a function without a docstring or hints, an undocumented public
    method and an unannotated method parameter; it accepts a docstring inherited from the overridden
    method."""

    def bare(x, y=1):
        return x + y

    class Base:
        """Base."""

        def f(self, x: int) -> int:
            """Documented once."""
            return x

    class Child(Base):
        """Child."""

        def f(self, x: int) -> int:  # inherits Base.f's docstring: fine
            return x

        def g(self, x) -> int:  # no docstring, x unannotated
            return x

    assert _problems(bare, "bare", skip_first=False, need_doc=True, need_return=True) == [
        "bare: no docstring",
        "bare: parameters without type hints ['x', 'y']",
        "bare: no return type hint",
    ]
    assert _class_problems("Child", Child) == [
        "Child.g: no docstring",
        "Child.g: parameters without type hints ['x']",
    ]


def test_library_never_imports_experiments_or_paper_checks():
    """``afltheory`` reaches the paper's checks and the ``real`` command only through entry points
    (``afltheory.checks``, ``afltheory.commands``): no module imports ``experiments`` or ``paper_checks``."""
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            if any(n.split(".")[0] in ("experiments", "paper_checks") for n in names):
                offenders.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    assert not offenders, offenders
