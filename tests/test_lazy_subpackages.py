"""``afltheory.<name>`` works for every public subpackage and module, lazily (issue 29): ``import afltheory``
imports none of them, attribute access imports exactly the one asked for, and an optional extra (PEPit) is
needed only when the feature is used, not when ``afltheory.pep`` is touched."""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import afltheory

ROOT = Path(afltheory.__file__).resolve().parent.parent

PUBLIC = sorted(m.name for m in pkgutil.iter_modules(afltheory.__path__) if not m.name.startswith("_"))


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_walk_finds_the_known_subpackages():
    # the walk is not vacuous: the subpackages the issue named are among the ones it finds
    assert {
        "mtl",
        "checks",
        "adversary",
        "pep",
        "compression",
        "exact",
        "theory",
        "analysis",
        "plots",
        "sweep",
        "datasets",
        "problems",
        "anarchy",
        "algorithms",
        "engine",
    } <= set(PUBLIC)


def test_import_afltheory_imports_no_subpackage():
    r = _run("import sys, afltheory; print(sorted(m for m in sys.modules if m.startswith('afltheory.')))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_subpackage_is_a_lazy_attribute(name):
    if name == "torch_backend":
        pytest.importorskip("torch", reason="afltheory.torch_backend needs the optional extra 'torch'")
    code = (
        f"import sys, afltheory as aft\n"
        f"assert 'afltheory.{name}' not in sys.modules\n"
        f"assert {name!r} in dir(aft)\n"
        f"m = aft.{name}\n"
        f"assert m is sys.modules['afltheory.{name}'], m\n"
        f"print('ok')"
    )
    r = _run(code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_unknown_attribute_still_raises_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_subpackage'"):
        afltheory.not_a_subpackage  # noqa: B018
    assert not hasattr(afltheory, "_numerics_not_there")


def test_pep_loads_without_the_extra_and_fails_only_when_used():
    # PEPit blocked from import: touching afltheory.pep works, solving a PEP raises the install hint
    code = (
        "import sys\n"
        "sys.modules['PEPit'] = None\n"
        "import afltheory as aft\n"
        "pep = aft.pep\n"
        "assert 'worst_case' in dir(pep)\n"
        "try:\n"
        "    pep.core._pep_import()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    r = _run(code)
    assert r.returncode == 0, r.stderr
    assert "pip install 'afltheory[pep]'" in r.stdout
