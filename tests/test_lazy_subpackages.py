"""``afltheory.<name>`` works for every public subpackage and module, lazily (issue 29): ``import afltheory``
imports none of them, attribute access imports exactly the one asked for, and an optional extra (PEPit) is
needed only when the feature is used, not when ``afltheory.pep`` is touched."""

from __future__ import annotations

import json
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


def _check_code(name: str) -> str:
    return (
        f"assert 'afltheory.{name}' not in sys.modules\n"
        f"assert {name!r} in dir(aft)\n"
        f"m = aft.{name}\n"
        f"assert m is sys.modules['afltheory.{name}'], m\n"
    )


# Third-party packages the subpackages import (numpy, scipy, sympy, matplotlib, torch): loaded once in the
# parent of the forked checks below, so each check pays for importing afltheory's own modules only. The
# property under test is about ``afltheory.*`` entries of sys.modules, which this preloading does not touch
# (test_import_afltheory_imports_no_subpackage checks the fresh interpreter, no preloading).
_PRELOAD = (
    "numpy",
    "scipy.linalg",
    "scipy.sparse",
    "scipy.sparse.linalg",
    "scipy.stats",
    "scipy.optimize",
    "scipy.special",
    "scipy.integrate",
    "scipy.interpolate",
    "scipy.spatial",
    "sympy",
    "matplotlib",
    "torch",
)


@pytest.fixture(scope="module")
def lazy_results() -> dict[str, str]:
    """{subpackage: 'ok' or the error} of every subpackage's laziness check, each run in its own child forked
    from one interpreter that imported ``afltheory`` (and the third-party preload) and nothing else of it: the
    same state as a fresh ``import afltheory`` for the afltheory modules, for one interpreter start instead
    of one per subpackage."""
    if not hasattr(os, "fork"):  # pragma: no cover - no fork: one fresh interpreter per subpackage
        out = {}
        for name in PUBLIC:
            r = _run("import sys, afltheory as aft\n" + _check_code(name) + "print('ok')")
            out[name] = "ok" if r.returncode == 0 and r.stdout.strip() == "ok" else r.stderr
        return out
    code = (
        "import importlib, json, os, sys, traceback\n"
        "import afltheory as aft\n"
        "assert not [m for m in sys.modules if m.startswith('afltheory.')]\n"
        f"for mod in {_PRELOAD!r}:\n"
        "    try:\n"
        "        importlib.import_module(mod)\n"
        "    except ImportError:\n"
        "        pass\n"
        "assert not [m for m in sys.modules if m.startswith('afltheory.')], 'a preload imported afltheory'\n"
        f"codes = {dict((n, _check_code(n)) for n in PUBLIC)!r}\n"
        "out = {}\n"
        "for name, src in codes.items():\n"
        "    r, w = os.pipe()\n"
        "    sys.stdout.flush(); sys.stderr.flush()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.close(r)\n"
        "        try:\n"
        "            exec(src, {'sys': sys, 'aft': aft})\n"
        "            msg = 'ok'\n"
        "        except BaseException:\n"
        "            msg = traceback.format_exc()\n"
        "        os.write(w, msg.encode())\n"
        "        os._exit(0)\n"
        "    os.close(w)\n"
        "    chunks = []\n"
        "    while True:\n"
        "        b = os.read(r, 65536)\n"
        "        if not b:\n"
        "            break\n"
        "        chunks.append(b)\n"
        "    os.close(r)\n"
        "    _, status = os.waitpid(pid, 0)\n"
        "    out[name] = b''.join(chunks).decode() or f'child exited with status {status}'\n"
        "print(json.dumps(out))\n"
    )
    r = _run(code)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_subpackage_is_a_lazy_attribute(name, lazy_results):
    if name == "torch_backend":
        pytest.importorskip("torch", reason="afltheory.torch_backend needs the optional extra 'torch'")
    assert lazy_results[name] == "ok", lazy_results[name]


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
