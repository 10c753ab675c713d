"""Sweep specs: a TOML grid over problem × behaviour × algorithm × seeds × replicate blocks.

A spec is *data only*: it is parsed with ``tomllib`` and class names are looked up by attribute on the
``afltheory.problems`` / ``afltheory.anarchy`` / ``afltheory.algorithms`` modules, restricted to their
``__all__`` (plus ``afltheory.problems.FAMILIES`` when present). Nothing is evaluated, nothing unpickled.

Format (every key optional unless marked)::

    name = "smoke"                 # free text, also: description
    rounds = 50                    # required, int >= 1
    replicates = 16                # replicates per task (one "replicate block"), int >= 1
    blocks = 1                     # replicate blocks per (grid point, seed)
    seeds = [0, 1]                 # user seeds; the simulation seed of a task is derived from its id
    checkpoints = 25               # curve points stored per task (rounds 0..T, evenly spaced, T included)

    [problem]                      # required
    family = "HeterogeneousQuadratic"
    dim = 5
    num_workers = 10

    [behaviour.arrivals]           # required: arrivals, delays, local_steps; each a table with `kind`
    kind = "UniformArrivals"
    m = 5
    [behaviour.delays]
    kind = "UniformDelay"
    max_delay = 2
    [behaviour.local_steps]
    kind = "ConstantSteps"
    K = 2

    [algorithm]                    # required
    name = "AFACD"
    eta = 1.0
    eta_L = 0.05

    [grid]                         # axes: dotted path -> non-empty list; cartesian product
    "algorithm.eta_L" = [0.01, 0.05]
    behaviour.arrivals.m = [1, 5]  # unquoted dotted keys work too
    rounds = [50, 100]

    [zip]                          # axes varied *together* (equal lengths): one more axis of the product
    rounds = [100, 400, 1600]
    "problem.sigma_L" = [1.0, 0.5, 0.25]

    [derived]                      # computed per task, in order, after grid and zip (afltheory.sweep.expr)
    "algorithm.eta_L" = "1/sqrt(rounds)"
    "algorithm.eta" = "sqrt(behaviour.arrivals.m * behaviour.local_steps.K)"

``[derived]`` values are small arithmetic expressions over dotted config paths (no ``eval``: an ``ast``
whitelist, see :mod:`afltheory.sweep.expr`); the task config (and so the task id) holds the computed numbers.
A derived key must not also be a grid or zip axis.

Classes: a built-in name (``"AFACD"``, ``"UniformArrivals"``…) from the section's module, or a user class by
import path ``"package.module:ClassName"`` (e.g. ``kind = "mypkg.arrivals:Sticky"``). An import path imports
that module (user code — run only specs you trust; built-in names import nothing); the class then gets the
same validation as a built-in (parameters checked against its signature, one dry run of the combination) and
must subclass the section's base (``Problem``; ``Arrivals``/``DelayModel``/``LocalSteps``/``Behaviour``; a
server rule).

Any nested table with a ``kind`` key (e.g. ``noise = {kind = "GaussianNoise", sigma_L = 0.5}`` inside
``[problem]``, or a worker rule inside ``[algorithm]``) is built from the same module as its parent.

Tasks: one per (grid point, seed, block). A task's id is the SHA-256 of its canonical JSON config; its
simulation seed is derived from that id, so results never depend on ordering, executor or job count.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import inspect
import itertools
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - exercised only on 3.10
    _tomllib = None

__all__ = [
    "SpecError",
    "Spec",
    "Task",
    "load_spec",
    "parse_spec",
    "canonical_json",
    "task_id",
    "derive_seed",
    "build_objects",
    "resolve_class",
    "allowed_names",
]

SPEC_FORMAT = 1
TOP_SCALARS = {
    "name": str,
    "description": str,
    "rounds": int,
    "replicates": int,
    "blocks": int,
    "checkpoints": int,
}
TOP_LISTS = {"seeds"}
TOP_TABLES = {"problem", "behaviour", "algorithm", "grid", "zip", "derived"}
DEFAULTS = {"replicates": 16, "blocks": 1, "seeds": [0], "checkpoints": 50, "name": "", "description": ""}


class SpecError(ValueError):
    """A malformed spec. ``key`` is the dotted path of the offending key, ``line`` its 1-based line (or
    None)."""

    def __init__(
        self, message: str, *, key: str | None = None, line: int | None = None, source: str | None = None
    ):
        self.key, self.line, self.source, self.reason = key, line, source, message
        where = ""
        if key is not None:
            where = f"key {key!r}"
            if line is not None:
                where += f" (line {line}" + (f" of {source}" if source else "") + ")"
            where += ": "
        super().__init__(where + message)


# --------------------------------------------------------------------------------------------- line lookup
_HEADER = re.compile(r"^\s*\[\[?\s*(?P<h>[^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = r"""(?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-]+)"""
_KEYLINE = re.compile(r"^\s*(?P<k>" + _KEY + r"(?:\s*\.\s*" + _KEY + r")*)\s*=")
_PART = re.compile(r""""([^"]*)"|'([^']*)'|([A-Za-z0-9_\-]+)""")


def _split_key(k: str) -> list[str]:
    return [
        m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)
        for m in _PART.finditer(k)
    ]


def _line_index(text: str) -> list[tuple[str, int]]:
    """(dotted path, line number) for every table header and key line of a TOML text."""
    out: list[tuple[str, int]] = []
    table: list[str] = []
    in_multiline = False
    for no, raw in enumerate(text.splitlines(), start=1):
        if in_multiline:
            if raw.count('"""') % 2 == 1 or raw.count("'''") % 2 == 1:
                in_multiline = False
            continue
        m = _HEADER.match(raw)
        if m and "=" not in m.group("h"):
            table = _split_key(m.group("h"))
            out.append((".".join(table), no))
            continue
        m = _KEYLINE.match(raw)
        if m:
            out.append((".".join(table + _split_key(m.group("k"))), no))
            rest = raw[m.end() :]
            if rest.count('"""') % 2 == 1 or rest.count("'''") % 2 == 1:
                in_multiline = True
    return out


def find_line(text: str | None, key: str | None) -> int | None:
    """Line of ``key`` (dotted) in ``text``: exact match, else its closest enclosing key/table that
    appears."""
    if not text or not key:
        return None
    index = _line_index(text)
    probe = key
    while probe:
        for path, no in index:
            if path == probe:
                return no
        for path, no in index:  # a table only named through its subtables: [a.b] for key "a"
            if path.startswith(probe + "."):
                return no
        probe = probe.rpartition(".")[0]
    return None


# --------------------------------------------------------------------------------------------- registries
def _module(section: str):
    import importlib

    name = {"problem": "problems", "behaviour": "anarchy", "algorithm": "algorithms"}[section]
    try:
        return importlib.import_module(f"afltheory.{name}")
    except ImportError as exc:  # engine parts not available in this build
        raise SpecError(f"afltheory.{name} cannot be imported ({exc})", key=section) from None


def allowed_names(section: str) -> dict[str, type]:
    """Classes a spec may name in ``section`` ("problem", "behaviour" or "algorithm")."""
    mod = _module(section)
    names = {}
    for n in getattr(mod, "__all__", ()):
        obj = getattr(mod, n, None)
        if inspect.isclass(obj):
            names[n] = obj
    if section == "problem":
        fam = getattr(mod, "FAMILIES", None)
        if isinstance(fam, dict):
            names.update({k: v for k, v in fam.items() if inspect.isclass(v)})
    if section == "algorithm":  # a rule's ``compressor = {kind = "RandK", k = 4}`` (afltheory.compression)
        from .. import compression

        names.update(
            {
                **compression.COMPRESSORS,
                "ErrorFeedback": compression.ErrorFeedback,
                "DIANA": compression.DIANA,
            }
        )
    return names


def _import_class(section: str, name: str, key: str) -> type:
    """A user class named by import path ``module:Class`` (documented in the module docstring)."""
    import importlib

    mod_name, _, cls_name = name.partition(":")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", mod_name) or not re.fullmatch(
        r"[A-Za-z_][A-Za-z0-9_]*", cls_name
    ):
        raise SpecError(f"import path {name!r} must look like 'package.module:ClassName'", key=key)
    try:
        mod = importlib.import_module(mod_name)
    except Exception as exc:  # noqa: BLE001 - any import failure of user code is reported, not raised raw
        raise SpecError(
            f"cannot import module {mod_name!r} for {name!r}: {type(exc).__name__}: {exc}", key=key
        ) from None
    cls = getattr(mod, cls_name, None)
    if not inspect.isclass(cls):
        raise SpecError(f"{name!r}: module {mod_name!r} has no class {cls_name!r}", key=key)
    bases = _section_bases(section)
    if bases and not issubclass(cls, bases):
        raise SpecError(
            f"{name!r} is not a subclass of {' or '.join(b.__name__ for b in bases)} "
            f"(what a {section} table may build)",
            key=key,
        )
    return cls


def _section_bases(section: str) -> tuple:
    if section == "problem":
        from ..problems.base import Problem

        return (Problem,)
    if section == "behaviour":
        from ..anarchy import arrivals, behaviour, delays, local_steps

        out = [
            getattr(arrivals, "Arrivals", None),
            getattr(delays, "DelayModel", None),
            getattr(delays, "Delays", None),
            getattr(local_steps, "LocalSteps", None),
            getattr(behaviour, "Behaviour", None),
            getattr(behaviour, "ComputeTime", None),
        ]
        return tuple(b for b in out if inspect.isclass(b))
    from .. import algorithms

    out = [getattr(algorithms, n, None) for n in ("ServerRule", "WorkerRule")]
    from ..algorithms import server, workers

    out += [getattr(server, "_ServerRule", None), workers.SGD]
    from ..compression import DIANA, Compressor, ErrorFeedback

    out += [Compressor, ErrorFeedback, DIANA]
    return tuple(b for b in out if inspect.isclass(b))


def resolve_class(section: str, name: str, key: str) -> type:
    """The class ``name`` of a spec ``section`` (an ``__all__`` name or an explicit ``module:Class`` path);
    SpecError at ``key`` otherwise."""
    if not isinstance(name, str):
        raise SpecError(f"must be a class name (string), got {type(name).__name__} {name!r}", key=key)
    if ":" in name:
        return _import_class(section, name, key)
    allowed = {n: c for n, c in allowed_names(section).items() if n not in _ABSTRACT}
    if name in _ABSTRACT:
        raise SpecError(
            f"{name!r} is an abstract base class, not something a spec can build; allowed: "
            f"{', '.join(sorted(allowed))}",
            key=key,
        )
    if name not in allowed:
        raise SpecError(f"unknown name {name!r}; allowed: {', '.join(sorted(allowed))}", key=key)
    return allowed[name]


#: Base classes listed in the packages' ``__all__`` that a spec must not name (they cannot run).
_ABSTRACT = {
    "Problem",
    "QuadraticProblem",
    "NoiseModel",
    "Constants",
    "LinearGaussianModel",
    "Arrivals",
    "DelayModel",
    "Delays",
    "LocalSteps",
    "ComputeTime",
    "ServerRule",
    "WorkerRule",
}
#: Largest number of tasks a spec may expand to (checked before expanding: a 22-line spec can ask for 10^10).
MAX_TASKS = 1_000_000
#: Largest spec text accepted (bytes) and deepest table nesting.
MAX_SPEC_BYTES = 1 << 20
MAX_DEPTH = 32


# --------------------------------------------------------------------------------------------- canonical ids
def _canonical_numbers(obj):
    """Integral floats as ints (so ``L = 2`` and ``L = 2.0`` are the same task): numbers compare by value."""
    if isinstance(obj, float) and obj.is_integer() and abs(obj) < 2**53:
        return int(obj)
    if isinstance(obj, dict):
        return {k: _canonical_numbers(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_canonical_numbers(v) for v in obj]
    return obj


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys, no spaces and integral floats as ints (a task id is its SHA-256)."""
    return json.dumps(
        _canonical_numbers(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def task_id(config: dict) -> str:
    """The task id: the SHA-256 of the configuration's canonical JSON."""
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()


def derive_seed(tid: str) -> int:
    """Simulation seed of a task: 63 bits of its id (independent of ordering, executor and job count)."""
    return int(tid[:16], 16) & ((1 << 63) - 1)


@dataclass(frozen=True)
class Task:
    id: str
    point_id: str  # id of the grid point (config without seed/block): groups blocks and seeds
    config: dict  # canonical config (JSON-able); includes "seed" (user seed) and "block"
    seed: int  # simulation seed, derived from id

    @property
    def config_json(self) -> str:
        """The task's configuration as canonical JSON (what its id hashes)."""
        return canonical_json(self.config)


@dataclass
class Spec:
    raw: dict
    text: str | None = None
    source: str | None = None
    base: dict = field(default_factory=dict)
    axes: dict = field(default_factory=dict)  # dotted path -> list of values (in spec order)
    tasks: list = field(default_factory=list)
    zip_axes: dict = field(default_factory=dict)  # dotted path -> list of values, varied together
    derived: dict = field(default_factory=dict)  # dotted path -> expression (afltheory.sweep.expr)

    @property
    def name(self) -> str:
        """The spec's ``name`` (default: the TOML file's stem)."""
        return self.raw.get("name", "") or (Path(self.source).stem if self.source else "")

    @property
    def hash(self) -> str:
        """Hash of the normalized spec (independent of comments/whitespace/key order)."""
        return hashlib.sha256(canonical_json({"format": SPEC_FORMAT, "spec": self.raw}).encode()).hexdigest()

    @property
    def ids(self) -> list[str]:
        """The task ids, in grid order."""
        return [t.id for t in self.tasks]

    def error(self, message: str, key: str | None = None) -> SpecError:
        """A SpecError for ``message`` at ``key``, with the key's line in the spec text."""
        return SpecError(message, key=key, line=find_line(self.text, key), source=self.source)


# --------------------------------------------------------------------------------------------- parsing
def load_spec(path: str | os.PathLike, *, check_objects: bool = True) -> Spec:
    """Read, validate and expand a TOML spec file (raises :class:`SpecError`; runs nothing)."""
    from .._io import describe_path

    path = Path(path)
    what = describe_path(path)  # a FIFO would block the read forever
    if what is not None:
        raise SpecError(f"spec file {str(path)!r} is {what}, not a regular file")
    try:
        if path.stat().st_size > MAX_SPEC_BYTES:
            raise SpecError(
                f"spec file {str(path)!r} is {path.stat().st_size} bytes; the limit is "
                f"{MAX_SPEC_BYTES} bytes (MAX_SPEC_BYTES)"
            )
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"cannot read spec file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"spec file {str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return parse_spec(text, source=str(path), check_objects=check_objects)


def parse_spec(text: str, *, source: str | None = None, check_objects: bool = True) -> Spec:
    """Validate and expand a TOML spec given as text. With ``check_objects`` every task's problem,
    behaviour and algorithm are constructed once (cached) so bad parameters fail before anything runs."""
    if _tomllib is None:  # pragma: no cover
        raise SpecError("reading TOML specs needs Python >= 3.11 (tomllib)")
    if not isinstance(text, str):
        raise SpecError(f"spec text must be a string, got {type(text).__name__}", source=source, key="<toml>")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SPEC_BYTES:
        raise SpecError(
            f"spec is {len(text)} characters long; the limit is {MAX_SPEC_BYTES} bytes (MAX_SPEC_BYTES)",
            source=source,
            key="<toml>",
        )
    try:
        raw = _tomllib.loads(text)
    except _tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise SpecError(
            f"invalid TOML: {exc}", line=int(m.group(1)) if m else None, source=source, key="<toml>"
        ) from None
    except RecursionError:
        raise SpecError(
            f"spec nests tables/arrays too deeply (limit {MAX_DEPTH} levels)", source=source, key="<toml>"
        ) from None
    if _depth(raw) > MAX_DEPTH:
        raise SpecError(
            f"spec nests tables/arrays {_depth(raw)} levels deep; the limit is {MAX_DEPTH}",
            source=source,
            key="<toml>",
        )
    bad = _non_finite(raw)
    if bad is not None:
        key, v = bad
        raise SpecError(
            f"{v!r} is not allowed: spec values are strings, booleans, finite numbers, arrays "
            "and tables (a task id and the results store hold strict JSON; no nan/inf, no dates)",
            key=key,
            line=find_line(text, key.split("[")[0]),
            source=source,
        )
    spec = Spec(raw=raw, text=text, source=source)
    _validate_structure(spec)
    _expand(spec)
    if check_objects:
        _check_objects(spec)
    return spec


def _non_finite(obj):
    """(dotted key, value) of the first float nan/inf or TOML date/time in a parsed spec, or None
    (iterative)."""
    stack = [(obj, "")]
    while stack:
        o, key = stack.pop()
        if (isinstance(o, float) and not math.isfinite(o)) or isinstance(o, (datetime.date, datetime.time)):
            return key or "<toml>", o
        if isinstance(o, dict):
            stack.extend((v, f"{key}.{k}" if key else str(k)) for k, v in o.items())
        elif isinstance(o, list):
            stack.extend((v, f"{key}[{i}]") for i, v in enumerate(o))
    return None


def _depth(obj, level: int = 0) -> int:
    """Nesting depth of tables/arrays (iterative: no recursion limit)."""
    best, stack = level, [(obj, level)]
    while stack:
        o, lv = stack.pop()
        best = max(best, lv)
        if lv > MAX_DEPTH:
            return lv
        if isinstance(o, dict):
            stack.extend((v, lv + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, lv + 1) for v in o)
    return best


def _typename(v) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}.get(
        type(v), type(v).__name__
    )


def _check_scalar(spec: Spec, key: str, value, kind):
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise spec.error(f"must be {_typename(kind())}, got {_typename(value)} {value!r}", key)
    if kind is int and key.split(".")[-1] in ("rounds", "replicates", "blocks", "checkpoints") and value < 1:
        raise spec.error(f"must be >= 1, got {value}", key)


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        p = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            out.update(_flatten(v, p))
        else:
            out[p] = v
    return out


def _validate_structure(spec: Spec):
    raw = spec.raw
    for k, v in raw.items():
        if k in TOP_SCALARS:
            _check_scalar(spec, k, v, TOP_SCALARS[k])
        elif k in TOP_LISTS:
            if not isinstance(v, list):
                raise spec.error(f"must be an array of integers, got {_typename(v)} {v!r}", k)
            if not v:
                raise spec.error("must not be empty", k)
            for s in v:
                if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                    raise spec.error(f"entries must be integers >= 0, got {s!r}", k)
            if len(set(v)) != len(v):
                raise spec.error(f"has duplicate entries {v!r}", k)
        elif k in TOP_TABLES:
            if not isinstance(v, dict):
                raise spec.error(f"must be a table, got {_typename(v)}", k)
        else:
            allowed = sorted(set(TOP_SCALARS) | TOP_LISTS | TOP_TABLES)
            raise spec.error(f"unknown key; allowed top-level keys: {', '.join(allowed)}", k)
    if "rounds" not in raw:
        raise spec.error("missing required key 'rounds'", "rounds")
    for t in ("problem", "behaviour", "algorithm"):
        if t not in raw:
            raise spec.error(f"missing required table [{t}]", t)
    grid = raw.get("grid", {})

    def empty_tables(d, prefix):
        for k, v in d.items():
            if isinstance(v, dict):
                if not v:
                    raise spec.error("grid axis is an empty table (no values)", f"{prefix}.{k}")
                empty_tables(v, f"{prefix}.{k}")

    empty_tables(grid, "grid")
    for path, values in _flatten(grid).items():
        gkey = f"grid.{path}"
        if not isinstance(values, list):
            raise spec.error(
                f"grid axis must be an array of values, got {_typename(values)} {values!r}", gkey
            )
        if not values:
            raise spec.error("grid axis is empty (an empty axis makes an empty grid)", gkey)
        for v in values:
            if isinstance(v, (list, dict)) and not (isinstance(v, dict) and any(x in v for x in ("kind",))):
                raise spec.error(
                    f"grid values must be scalars (or component tables with 'kind'), got {v!r}", gkey
                )
        try:
            if len({canonical_json(v) for v in values}) != len(values):
                raise spec.error(f"grid axis has duplicate values {values!r}", gkey)
        except ValueError as exc:
            if isinstance(exc, SpecError):
                raise
            raise spec.error(f"grid values must be finite: {exc}", gkey) from None
        _check_grid_path(spec, path, gkey)
        spec.axes[path] = values
    if "grid" in raw and not spec.axes and grid:
        raise spec.error("grid has no axes", "grid")
    zipped = raw.get("zip", {})
    spec.zip_axes = {}
    length = None
    for path, values in _flatten(zipped).items():
        zkey = f"zip.{path}"
        if not isinstance(values, list) or not values:
            raise spec.error(f"zip axis must be a non-empty array of values, got {values!r}", zkey)
        for v in values:
            if isinstance(v, (list, dict)):
                raise spec.error(f"zip values must be scalars, got {v!r}", zkey)
        if length is None:
            length = len(values)
        elif len(values) != length:
            raise spec.error(
                f"zip axes must have equal lengths; this one has {len(values)}, the first {length}", zkey
            )
        if path in spec.axes:
            raise spec.error(f"{path!r} is both a grid axis and a zip axis", zkey)
        _check_grid_path(spec, path, zkey)
        spec.zip_axes[path] = values
    if (
        spec.zip_axes
        and len({canonical_json(t) for t in zip(*spec.zip_axes.values(), strict=True)}) != length
    ):
        raise spec.error("zip axes produce duplicate points", "zip")
    spec.derived = {}
    from .expr import ExprError, names_in

    for path, text in _flatten(raw.get("derived", {})).items():
        dkey = f"derived.{path}"
        _check_grid_path(spec, path, dkey)
        if path in spec.axes or path in spec.zip_axes:
            raise spec.error(f"{path!r} is derived and also an axis; choose one", dkey)
        if path in ("replicates", "blocks", "checkpoints"):
            raise spec.error(f"{path!r} cannot be derived", dkey)
        try:
            names_in(text)
        except ExprError as exc:
            raise spec.error(str(exc), dkey) from None
        spec.derived[path] = text


def _check_grid_path(spec: Spec, path: str, gkey: str):
    parts = path.split(".")
    head = parts[0]
    if head in ("rounds", "replicates", "blocks", "checkpoints") and len(parts) == 1:
        return
    if head == "seeds":
        raise spec.error("seeds are listed with the top-level 'seeds' key, not as a grid axis", gkey)
    if head not in ("problem", "behaviour", "algorithm") or len(parts) < 2:
        raise spec.error(
            "grid axis must be 'rounds', 'replicates', 'blocks', 'checkpoints' or a path under "
            "problem., behaviour. or algorithm.",
            gkey,
        )


def _set_path(d: dict, path: str, value):
    parts = path.split(".")
    for p in parts[:-1]:
        if not isinstance(d.get(p), dict):
            d[p] = {}
        d = d[p]
    d[parts[-1]] = value


def _expand(spec: Spec):
    raw = spec.raw
    base = {
        "problem": copy.deepcopy(raw["problem"]),
        "behaviour": copy.deepcopy(raw["behaviour"]),
        "algorithm": copy.deepcopy(raw["algorithm"]),
        "rounds": raw["rounds"],
        "replicates": raw.get("replicates", DEFAULTS["replicates"]),
        "checkpoints": raw.get("checkpoints", DEFAULTS["checkpoints"]),
    }
    blocks_default = raw.get("blocks", DEFAULTS["blocks"])
    spec.base = base
    seeds = raw.get("seeds", DEFAULTS["seeds"])
    axes = list(spec.axes.items())
    zpaths = list(spec.zip_axes)
    zrows = list(zip(*spec.zip_axes.values(), strict=True)) if zpaths else [()]
    max_blocks = (
        max(spec.axes["blocks"])
        if "blocks" in spec.axes and all(isinstance(b, int) for b in spec.axes["blocks"])
        else blocks_default
    )
    count = len(zrows) * len(seeds) * (max_blocks if isinstance(max_blocks, int) and max_blocks > 0 else 1)
    for _, vals in axes:
        count *= len(vals)
    if count > MAX_TASKS:
        raise spec.error(
            f"the sweep would expand to {count:.3g} tasks; the limit is {MAX_TASKS} "
            f"(MAX_TASKS): split it into several specs",
            "grid",
        )
    tasks, seen = [], set()
    for combo in itertools.product(*[vals for _, vals in axes], zrows):
        cfg = copy.deepcopy(base)
        blocks = blocks_default
        point_axes = {}
        settings = list(zip([p for p, _ in axes], combo[:-1], strict=True)) + list(
            zip(zpaths, combo[-1], strict=True)
        )
        for path, v in settings:
            point_axes[path] = v
            if path == "blocks":
                blocks = v
            else:
                _set_path(cfg, path, copy.deepcopy(v))
        _apply_derived(spec, cfg)
        for k in ("rounds", "replicates", "checkpoints", "blocks"):
            v = blocks if k == "blocks" else cfg[k]
            _check_scalar(
                spec,
                f"grid.{k}"
                if k in spec.axes
                else f"zip.{k}"
                if k in spec.zip_axes
                else f"derived.{k}"
                if k in spec.derived
                else k,
                v,
                int,
            )
        point_id = task_id(cfg)
        for seed in seeds:
            for b in range(blocks):
                tc = dict(cfg, seed=seed, block=b)
                tid = task_id(tc)
                if tid in seen:
                    raise spec.error("grid produces duplicate tasks", "grid")
                seen.add(tid)
                tasks.append(Task(id=tid, point_id=point_id, config=tc, seed=derive_seed(tid)))
    if not tasks:
        raise spec.error("the sweep has no tasks", "grid")
    spec.tasks = tasks


def _get_path(cfg: dict, path: str):
    d = cfg
    for p in path.split("."):
        if not isinstance(d, dict) or p not in d:
            raise KeyError(path)
        d = d[p]
    return d


def _apply_derived(spec: Spec, cfg: dict):
    """Evaluate ``[derived]`` expressions in order on one task config (later ones may use earlier ones)."""
    from .expr import ExprError, evaluate

    for path, text in spec.derived.items():
        try:
            v = evaluate(text, lambda p: _get_path(cfg, p))
        except ExprError as exc:
            raise spec.error(f"{text!r}: {exc}", f"derived.{path}") from None
        _set_path(cfg, path, v)


# --------------------------------------------------------------------------------------------- objects
def _check_value_type(spec: Spec, key: str, value, param: inspect.Parameter, grid_key: str | None):
    ann = param.annotation
    if ann is inspect.Parameter.empty:
        return
    ann = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
    want = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}.get(ann.strip())
    if want is None:
        return
    bad = (not isinstance(value, want)) or (isinstance(value, bool) and bool not in want)
    if bad:
        k = grid_key or key
        raise spec.error(f"{key.split('.')[-1]} must be {ann}, got {_typename(value)} {value!r}", k)


def _build(
    spec: Spec, section: str, table: dict, path: str, ckey: str, grid_keys: dict, default: str | None = None
):
    """Construct the object described by ``table`` (class under ``ckey``) at dotted ``path``."""

    def where(k):  # the key to blame: the grid axis that set it, if any
        full = f"{path}.{k}" if k else path
        return grid_keys.get(full), full

    if ckey not in table and default is None:
        raise spec.error(f"missing '{ckey}' (the class name)", path)
    gk, full = where(ckey)
    cls = resolve_class(section, table.get(ckey, default), gk or full)  # may raise SpecError without line
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        sig = None
    params = sig.parameters if sig else {}
    has_var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {}
    for k, v in table.items():
        if k == ckey:
            continue
        gk, full = where(k)
        if sig is not None and not has_var_kw and k not in params:
            allowed = [p for p, q in params.items() if q.kind not in (q.VAR_POSITIONAL, q.VAR_KEYWORD)]
            raise spec.error(
                f"unknown parameter {k!r} of {cls.__name__}; allowed: {', '.join(allowed)}", gk or full
            )
        if isinstance(v, dict):
            v = _build(spec, section, v, full, "kind", grid_keys)
        elif k in params:
            _check_value_type(spec, full, v, params[k], gk)
        kwargs[k] = v
    try:
        return cls(**kwargs)
    except (
        MemoryError,
        RecursionError,
        OverflowError,
        AttributeError,
        KeyError,
        IndexError,
        ZeroDivisionError,
        NotImplementedError,
    ) as exc:  # not a class a spec can build with these values
        gk, _ = where(ckey)
        raise spec.error(
            f"{cls.__name__}(...) cannot be built from this spec: {type(exc).__name__}: {exc}", gk or path
        ) from None
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        blame = path
        for k in kwargs:
            if re.search(rf"\b{re.escape(k)}\b", msg):
                gk, full = where(k)
                blame = gk or full
                break
        else:
            gk, _ = where(ckey)
            blame = gk or path
        raise spec.error(f"{cls.__name__}(...) rejected the parameters: {msg}", blame) from None


def build_objects(config: dict, spec: Spec | None = None) -> tuple[Any, Any, Any]:
    """(problem, behaviour, algorithm) for one task config. Raises SpecError on bad parameters."""
    spec = spec or Spec(raw={})
    gk = {path: f"grid.{path}" for path in spec.axes}
    gk.update({path: f"zip.{path}" for path in getattr(spec, "zip_axes", {})})
    gk.update({path: f"derived.{path}" for path in getattr(spec, "derived", {})})
    problem = _build(spec, "problem", config["problem"], "problem", "family", gk)
    behaviour = _build(spec, "behaviour", config["behaviour"], "behaviour", "kind", gk, default="Behaviour")
    algorithm = _build(spec, "algorithm", config["algorithm"], "algorithm", "name", gk)
    return problem, behaviour, algorithm


def _check_objects(spec: Spec):
    """Construct each distinct (problem, behaviour, algorithm) once so bad parameters fail before any run."""
    seen = set()
    for t in spec.tasks:
        sub = {k: t.config[k] for k in ("problem", "behaviour", "algorithm")}
        key = canonical_json(sub)
        if key in seen:
            continue
        seen.add(key)
        try:
            problem, behaviour, algorithm = build_objects(t.config, spec)
            _check_pair(spec, problem, behaviour, algorithm, t.config)
        except SpecError as exc:
            if exc.line is None and exc.key is not None:
                raise spec.error(exc.reason, exc.key) from None
            raise


def _check_pair(spec: Spec, problem, behaviour, algorithm, config):
    """Cross-object check: a 1-round, 1-replicate dry run of ``afltheory.simulate`` (cheap), so that
    mismatches like m > num_workers fail before any task runs."""
    import warnings

    import afltheory

    M = getattr(problem, "num_workers", None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            afltheory.simulate(problem, algorithm, behaviour, rounds=1, replicates=1, seed=0)
    except (ValueError, TypeError) as exc:
        blame = "behaviour"
        names = re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)=", str(exc))
        cands = [f"grid.{p}" for p in spec.axes if p.startswith(("behaviour.", "problem."))]
        cands += list(_flatten(config["behaviour"], "behaviour")) + list(
            _flatten(config["problem"], "problem")
        )
        for name in names:
            hit = [c for c in cands if c.split(".")[-1] == name]
            if hit:
                blame = hit[0]
                break
        if blame == "behaviour":
            for path in ("algorithm",):
                if any(re.search(rf"\b{re.escape(k)}\b", str(exc)) for k in config[path]):
                    blame = path
        raise spec.error(f"this combination fails a dry run (num_workers={M}): {exc}", blame) from None
