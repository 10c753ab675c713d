"""The two quick-start commands (issue 29): ``make check`` installs only the core (no torch) and uses every
core; ``make test`` adds torch and the test extras; the install stamp depends on pyproject's checksum alone;
a venv whose afltheory is installed from another clone is refused, never re-pointed. Dry runs (``make -n``)
and a fake venv only: nothing is installed."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(
    shutil.which("make") is None or not (ROOT / "Makefile").exists(),
    reason="needs make and the repository's Makefile",
)


def _make(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def _fake_venv(tmp_path: Path, prints: str | None) -> Path:
    """A venv whose python answers the guard's question ("where is afltheory installed from?") with
    ``prints`` (None: afltheory not importable)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    py = venv / "bin" / "python"
    py.write_text("#!/bin/sh\n" + (f"echo {prints}\n" if prints is not None else "exit 1\n"))
    py.chmod(py.stat().st_mode | stat.S_IXUSR)
    return venv


def test_check_installs_the_core_only_and_uses_every_core(tmp_path):
    venv = _fake_venv(tmp_path, None)
    r = _make("-n", "check", f"VENV={venv}", "JOBS=7")
    assert r.returncode == 0, r.stderr
    assert "--jobs 7" in r.stdout and "torch" not in r.stdout and ".[pep,progress]" in r.stdout
    if shutil.which("nproc"):
        cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
        assert f"--jobs {cores} " in _make("-n", "check", f"VENV={venv}").stdout


def test_test_installs_torch_and_the_extras(tmp_path):
    r = _make("-n", "test", f"VENV={_fake_venv(tmp_path, None)}")
    assert r.returncode == 0, r.stderr
    assert "torch==2.13.0" in r.stdout and ".[test,dask,progress,data,pep]" in r.stdout


def test_stamp_is_the_checksum_alone(tmp_path):
    venv = _fake_venv(tmp_path, None)
    cksum = subprocess.run(
        "cksum < pyproject.toml | cut -d' ' -f1", shell=True, cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    (venv / f".installed-core-{cksum}").touch()
    os.utime(venv / f".installed-core-{cksum}", (0, 0))  # older than pyproject.toml: still up to date
    r = _make("-n", "check", f"VENV={venv}")
    assert r.returncode == 0, r.stderr
    assert "pip install" not in r.stdout and "afltheory check --quick" in r.stdout


def test_a_venv_of_another_clone_is_refused(tmp_path):
    r = _make("guard", f"VENV={_fake_venv(tmp_path, '/somewhere/else/afltheory-clone')}")
    assert r.returncode != 0
    assert "installed from /somewhere/else/afltheory-clone" in r.stderr and "re-point" in r.stderr
    # control: the same venv installed from this clone, or without afltheory, passes the guard
    ok = tmp_path / "own"
    ok.mkdir()
    assert _make("guard", f"VENV={_fake_venv(ok, os.path.realpath(ROOT))}").returncode == 0
    none = tmp_path / "none"
    none.mkdir()
    assert _make("guard", f"VENV={_fake_venv(none, None)}").returncode == 0


def test_docs_installs_the_docs_extra_and_builds_with_warnings_as_errors(tmp_path):
    r = _make("-n", "docs", f"VENV={_fake_venv(tmp_path, None)}")
    assert r.returncode == 0, r.stderr
    assert ".[docs,pep,progress]" in r.stdout and "-m sphinx -W --keep-going" in r.stdout
    assert "torch" not in r.stdout
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").split()
    assert ci[-2:] == ["make", "docs"] and ci.index("test") < ci.index("docs")  # CI builds the site last
