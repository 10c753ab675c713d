"""Dependencies declared where they are used (issue 43): every third-party module that afltheory imports at
module level (so importing the feature needs it) is a core dependency in pyproject.toml; optional extras
(torch, dask, PEPit, tqdm, scikit-learn) are imported lazily and SKIP with the install hint. The editable
install uses the simple flat layout (no setuptools "Editable installation" warning)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: import name -> distribution name, where they differ (Pillow comes with matplotlib, its dependency; the
#: report only uses it to compress figures and falls back to the raw PNG)
DIST = {"PIL": "matplotlib", "sklearn": "scikit-learn", "PEPit": "pepit", "distributed": "dask"}


def _names(reqs: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in reqs}


def _imports(path: Path) -> set[str]:
    """Every top-level module name ``path`` imports, wherever the import statement is (module level or
    lazily inside a function)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _used() -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    for f in sorted((ROOT / "afltheory").rglob("*.py")):
        for name in _imports(f) - set(sys.stdlib_module_names) - {"afltheory", "__future__", "tomli"}:
            used.setdefault(DIST.get(name, name).lower(), set()).add(str(f.relative_to(ROOT)))
    return used


def test_every_third_party_import_is_declared():
    extras = set().union(*(_names(v) for v in PYPROJECT["project"]["optional-dependencies"].values()))
    declared = _names(PYPROJECT["project"]["dependencies"]) | extras
    undeclared = {d: sorted(fs) for d, fs in _used().items() if d not in declared}
    assert undeclared == {}


def test_hypothesis_is_core_where_the_features_import_it():
    used = _used()
    assert {"afltheory/strategies.py", "afltheory/adversary/generic.py"} <= used["hypothesis"]
    assert "hypothesis" in _names(PYPROJECT["project"]["dependencies"])


def test_the_scan_sees_lazy_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import numpy as np\nfrom . import x\ndef f():\n    from PEPit.functions import y\n")
    assert _imports(f) == {"numpy", "PEPit"}


def test_docs_extra_and_flat_layout():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert _names(extras["docs"]) == {"sphinx", "furo", "myst-parser"}
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"": "."}
