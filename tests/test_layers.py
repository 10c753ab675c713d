"""The layers of afltheory (docs/DESIGN.md "Layers"): imports point down, never up or sideways; no cycles.

The import graph is read from the source with ``ast`` (nothing is imported): every ``import`` and ``from ...
import`` in a module counts, module-level, inside a function or under ``if TYPE_CHECKING:`` (a type-only
import is still a dependency: annotate with a ``Protocol`` or move the name down instead). A *room* is a
top-level module or subpackage of ``afltheory`` (``engine``, ``exact``,
``_trace_io``, ...). A room may import rooms of strictly lower layers only; imports inside a room are free.
Rooms also do not use each other's private names (``_name``, or a module ``_mod`` inside another room).

There are no cycles between modules either (strongly connected components of the module graph, same
edges): a deferred import only hides one.

The allow-lists below must only shrink: an entry that is no longer needed fails the test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "afltheory"

#: Bottom to top. A room imports only rooms of lower layers (peers in one layer do not import each other).
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "leaves",
        frozenset(
            {"_validation", "_numerics", "_progress", "_introspect", "_faults", "_io", "_state", "_buffers"}
        ),
    ),
    ("leaf services and statistics", frozenset({"_rng", "analysis", "datasets"})),
    ("objects", frozenset({"problems", "anarchy", "compression"})),
    ("rules and statements", frozenset({"algorithms", "theory", "_trace_io", "functions"})),
    ("runs", frozenset({"engine", "trace", "torch_backend", "mtl"})),
    ("exact runs", frozenset({"exact"})),
    ("figures", frozenset({"plots"})),
    ("sweeps and executors", frozenset({"sweep"})),
    ("checks", frozenset({"checks", "pep"})),
    ("claims, mutation analysis", frozenset({"claims", "mutants"})),
    ("property testing, published theorems", frozenset({"strategies", "published"})),
    ("worst-case search", frozenset({"adversary"})),
    ("command line", frozenset({"cli"})),
    ("python -m afltheory", frozenset({"__main__"})),
)

#: Temporary: edges that break the layering, each with its reason. Must only shrink (empty: none left).
ALLOWED_EDGES: dict[tuple[str, str], str] = {}

#: Temporary: private names used across rooms, (importing module, imported module, name). Must only shrink.
ALLOWED_PRIVATE: dict[tuple[str, str, str | None], str] = {}

#: Temporary: module-level import cycles (strongly connected components of the module graph), each with its
#: reason. Must only shrink: a cycle that is gone, or one that grew, fails the test.
ALLOWED_CYCLES: dict[frozenset[str], str] = {}

#: Names the package root resolves lazily to the engine (``from afltheory import simulate``).
_ROOT_ENGINE_NAMES = {"simulate", "Trace", "DivergenceInfo"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(source: str, me: str, is_package: bool, modules: set[str]) -> list[tuple[str, str | None, int]]:
    """(target module, imported name or None, line) for every afltheory import in the source of module ``me``
    (function-level and ``if TYPE_CHECKING:`` blocks included). ``from pkg import mod`` resolves to
    ``pkg.mod``."""
    package = me.split(".") if is_package else me.split(".")[:-1]
    out: list[tuple[str, str | None, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            out.extend((a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "afltheory")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "afltheory":
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if sub in modules:
                        out.append((sub, None, node.lineno))
                    elif target == "afltheory" and a.name in _ROOT_ENGINE_NAMES:
                        out.append(("afltheory.engine", a.name, node.lineno))
                    else:
                        out.append((target, a.name, node.lineno))
        visit(node)

    visit(ast.parse(source, filename=me))
    return out


def _private_attributes(
    source: str, me: str, is_package: bool, modules: set[str]
) -> list[tuple[str, str, int]]:
    """(module, private attribute, line) for every ``alias._name`` where ``alias`` is bound by an import to an
    afltheory module (``from .. import _faults`` then ``_faults._ACTIVE``)."""
    package = me.split(".") if is_package else me.split(".")[:-1]
    tree = ast.parse(source, filename=me)
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                if f"{target}.{a.name}" in modules:
                    aliases[a.asname or a.name] = f"{target}.{a.name}"
        elif isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.asname and a.name in modules})
    return [
        (aliases[n.value.id], n.attr, n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id in aliases
        and n.attr.startswith("_")
        and not n.attr.startswith("__")
    ]


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _graph() -> dict[str, list[tuple[str, str | None, int]]]:
    files = sorted(ROOT.rglob("*.py"))
    modules = {_module_name(p) for p in files}
    return {
        _module_name(p): _imports(
            p.read_text(encoding="utf-8"), _module_name(p), p.name == "__init__.py", modules
        )
        for p in files
    }


def _attribute_uses() -> dict[str, list[tuple[str, str, int]]]:
    files = sorted(ROOT.rglob("*.py"))
    modules = {_module_name(p) for p in files}
    return {
        _module_name(p): _private_attributes(
            p.read_text(encoding="utf-8"), _module_name(p), p.name == "__init__.py", modules
        )
        for p in files
    }


GRAPH = _graph()
LAYER_OF = {room: i for i, (_, rooms) in enumerate(LAYERS) for room in rooms}


def _private(target: str, name: str | None) -> bool:
    inner = target.split(".")[2:]  # below the room: a private module inside another room
    return any(p.startswith("_") and not p.startswith("__") for p in inner) or (
        name is not None and name.startswith("_") and not name.startswith("__")
    )


def test_every_room_has_a_layer():
    rooms = {_room(m) for m in GRAPH} - {""}
    missing = sorted(rooms - set(LAYER_OF))
    assert not missing, f"rooms without a layer (add them to LAYERS and docs/DESIGN.md): {missing}"
    doubled = [r for r in LAYER_OF if sum(r in rooms_ for _, rooms_ in LAYERS) > 1]
    assert not doubled


def test_imports_point_down():
    bad, used = [], set()
    for module, edges in GRAPH.items():
        src = _room(module)
        if not src:  # the package root resolves its names lazily (a facade above every layer)
            continue
        for target, name, line in edges:
            dst = _room(target)
            if dst in ("", src):
                continue
            if LAYER_OF[dst] < LAYER_OF[src]:
                continue
            key = (module, dst)
            if key in ALLOWED_EDGES:
                used.add(key)
                continue
            what = "sideways" if LAYER_OF[dst] == LAYER_OF[src] else "up"
            bad.append(
                f"{module}:{line} imports {target}{'.' + name if name else ''} ({what}: "
                f"{LAYERS[LAYER_OF[src]][0]} -> {LAYERS[LAYER_OF[dst]][0]})"
            )
    assert not bad, 'imports against the layers (docs/DESIGN.md "Layers"):\n' + "\n".join(bad)
    stale = sorted(set(ALLOWED_EDGES) - used)
    assert not stale, f"ALLOWED_EDGES entries no longer needed (delete them): {stale}"


def test_no_cycle_between_rooms():
    """Implied by the layers except through the allow-list; checked on its own so an allowed edge cannot
    close a cycle."""
    edges: dict[str, set[str]] = {}
    for module, imps in GRAPH.items():
        src = _room(module)
        if src:
            edges.setdefault(src, set()).update(_room(t) for t, _, _ in imps if _room(t) not in ("", src))
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(v: str) -> list[str] | None:
        state[v] = 1
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if state.get(w) == 1:
                return stack[stack.index(w) :] + [w]
            if w not in state and (cycle := dfs(w)):
                return cycle
        state[v] = 2
        stack.pop()
        return None

    for v in sorted(edges):
        if v not in state:
            cycle = dfs(v)
            assert cycle is None, f"import cycle between rooms: {' -> '.join(cycle)}"


def _module_edges(graph: dict[str, list[tuple[str, str | None, int]]]) -> dict[str, set[str]]:
    """module -> the afltheory modules it imports (``from pkg import name`` is an edge to ``pkg``)."""
    return {m: {t for t, _, _ in imps if t in graph and t != m} for m, imps in graph.items()}


def _cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[frozenset[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.add(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(frozenset(comp))
    return sorted(out, key=sorted)


def test_no_module_cycles():
    """No two modules import each other, directly or round a loop (deferred and type-only imports count; a
    package ``__init__`` importing a submodule that imports back from the package is a cycle)."""
    found = _cycles(_module_edges(GRAPH))
    bad = [" <-> ".join(sorted(c)) for c in found if c not in ALLOWED_CYCLES]
    assert not bad, (
        "module import cycles (move the shared name down, or annotate with a Protocol):\n" + "\n".join(bad)
    )
    stale = sorted(" <-> ".join(sorted(c)) for c in set(ALLOWED_CYCLES) - set(found))
    assert not stale, f"ALLOWED_CYCLES entries no longer a cycle as written (delete or shrink them): {stale}"


@pytest.mark.parametrize(
    "edges, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [frozenset({"a", "b"})]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}}, [frozenset("abc"), frozenset("de")]),
        ({"a": {"b"}, "b": {"c"}, "c": {"b", "d"}, "d": set()}, [frozenset({"b", "c"})]),
    ],
)
def test_the_cycle_finder(edges, expected):
    """Hand-drawn graphs: a chain has no cycle; a 2-cycle and a 3-cycle are found whole; a tail into a
    cycle is not part of it."""
    assert _cycles(edges) == expected


def test_a_package_importing_back_is_a_cycle():
    """``pkg/__init__`` imports ``pkg.sub``; ``pkg.sub`` does ``from . import name`` (from the package)."""
    modules = {"afltheory.pkg", "afltheory.pkg.sub"}
    graph = {
        "afltheory.pkg": _imports("from .sub import f\n", "afltheory.pkg", True, modules),
        "afltheory.pkg.sub": _imports(
            "def g():\n    from . import name\n", "afltheory.pkg.sub", False, modules
        ),
    }
    assert _cycles(_module_edges(graph)) == [frozenset(modules)]


def test_no_private_names_across_rooms():
    bad, used = [], set()
    attributes = _attribute_uses()
    for module, edges in GRAPH.items():
        src = _room(module)
        for target, name, line in [*edges, *attributes[module]]:
            if not src or _room(target) in ("", src) or not _private(target, name):
                continue
            key = (module, target, name)
            if key in ALLOWED_PRIVATE:
                used.add(key)
                continue
            bad.append(f"{module}:{line} uses {target}{'.' + name if name else ''}")
    assert not bad, "private names used across rooms (make a public helper):\n" + "\n".join(bad)
    stale = sorted(set(ALLOWED_PRIVATE) - used, key=str)
    assert not stale, f"ALLOWED_PRIVATE entries no longer needed (delete them): {stale}"


@pytest.mark.parametrize(
    "source, expected",
    [
        ("def f():\n    from .engine import Trace\n", [("afltheory.engine", "Trace")]),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .engine import Trace\n",
            [("afltheory.engine", "Trace")],
        ),
        ("from . import exact\n", [("afltheory.exact", None)]),
        ("from afltheory import simulate\n", [("afltheory.engine", "simulate")]),
        ("import numpy\nfrom .exact.moments import _x0\n", [("afltheory.exact.moments", "_x0")]),
    ],
)
def test_the_graph_reader(source, expected):
    """The reader sees function-level imports and TYPE_CHECKING blocks, resolves submodules and the root's
    lazy engine names."""
    modules = set(GRAPH)
    found = [(t, n) for t, n, _ in _imports(source, "afltheory.probe", False, modules)]
    assert found == expected


def test_the_attribute_reader():
    """``from . import _faults`` then ``_faults._ACTIVE`` uses a private name of ``afltheory._faults``."""
    src = (
        "from . import _faults\nfrom .exact import moments as mo\n"
        "x = _faults._ACTIVE\ny = mo._x0\nz = mo.moments\n"
    )
    found = [(t, n) for t, n, _ in _private_attributes(src, "afltheory.probe", False, set(GRAPH))]
    assert found == [("afltheory._faults", "_ACTIVE"), ("afltheory.exact.moments", "_x0")]
