"""tools/run_tests.py (``make test``): the shards partition the selected tests and the exit status is kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNNER = [sys.executable, str(ROOT / "tools" / "run_tests.py")]
# two small modules: one per shard (modules are dealt round-robin by sorted path)
MODULES = ["tests/analysis/test_known_answers.py", "tests/test_wrap_artefacts.py"]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RUNNER, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_two_shards_run_disjoint_halves_and_pass():
    r = _run("--jobs", "2", "--", "-q", "-p", "no:cacheprovider", *MODULES)
    assert r.returncode == 0, r.stdout[-3000:]
    assert "===== shard 1/2 (exit 0)" in r.stdout and "===== shard 2/2 (exit 0)" in r.stdout
    # each shard ran one module and deselected the other: together they ran every test once
    alone = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", *MODULES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    total = int(alone.stdout.strip().splitlines()[-1].split()[0])
    passed = [
        int(line.split(" passed")[0].split()[-1]) for line in r.stdout.splitlines() if " passed" in line
    ]
    assert len(passed) == 2 and all(p > 0 for p in passed) and sum(passed) == total, r.stdout[-3000:]


def test_a_failing_shard_fails_the_run():
    # a path that does not exist: pytest exits 4 (usage error) in every shard, and so does the runner
    r = _run("--jobs", "2", "--", "-q", "-p", "no:cacheprovider", "tests/no_such_test_file.py")
    assert r.returncode == 4, r.stdout[-3000:]


def test_bad_shard_spec_is_a_usage_error():
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--shard=2/2", MODULES[0]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 4 and "--shard" in (r.stdout + r.stderr)
