"""tools/run_tests.py (``make test``): the shards partition the selected tests and the exit status is kept."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
RUNNER = [sys.executable, str(ROOT / "tools" / "run_tests.py")]
# two small modules: one per shard (the deal gives each shard one of two modules, whatever their records)
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


@functools.cache
def _conftest():
    """tests/conftest.py as a module (it is not importable as a package module)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_conftest_for_deal", ROOT / "tests" / "conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _deal():
    return _conftest().deal


def test_module_costs_sum_the_selected_tests():
    costs = _conftest().module_costs
    rec = {"a.py::t1": 2.0, "a.py::t2": 5.0, "b.py::t1": 1.0, "b.py::slow": 40.0}
    # only the selected tests count: b's slow test does not weigh on a default-tier deal
    assert costs(["a.py::t1", "a.py::t2", "b.py::t1"], rec) == {"a.py": 7.0, "b.py": 1.0}
    assert costs(["b.py::slow"], rec) == {"b.py": 40.0}
    # an unrecorded test costs the median record: [1, 2, 5, 40][4 // 2] = 5
    assert costs(["c.py::new"], rec) == {"c.py": 5.0}
    assert costs(["c.py::new"], {}) == {"c.py": 0.1}


def test_deal_pinned_longest_first_to_least_loaded():
    deal = _deal()
    # hand-dealt: a(5)→0; b(4)→1; c(3)→1 (4 < 5); d(3)→0 (5 < 7): loads 8 and 7
    assert deal(["a", "b", "c", "d"], 2, {"a": 5, "b": 4, "c": 3, "d": 3}) == [["a", "d"], ["b", "c"]]
    # an unrecorded module costs the median record (3 of 1, 3, 10): c(10)→0; b(3) and x(3) tie on cost,
    # ordered by name: b→1, x→1 (3 < 10); a(1)→1 (6 < 10)
    assert deal(["a", "b", "c", "x"], 2, {"a": 1, "b": 3, "c": 10}) == [["c"], ["b", "x", "a"]]
    # no record at all: every module costs 1 s, i.e. a round-robin deal by sorted path
    assert deal(["m1", "m2", "m3", "m4", "m5"], 2, {}) == [["m1", "m3", "m5"], ["m2", "m4"]]


@given(
    costs=st.dictionaries(
        st.text("abcdefgh", min_size=1, max_size=4),
        st.floats(0, 100, allow_nan=False),
        min_size=1,
        max_size=30,
    ),
    n=st.integers(1, 5),
)
def test_deal_partitions_and_balances(costs, n):
    """Every module in exactly one shard, the same deal twice, and (greedy longest-first bound) no shard
    exceeds the least-loaded one by more than the largest module's cost."""
    deal = _deal()
    modules = sorted(costs)
    shards = deal(modules, n, costs)
    assert len(shards) == n and sorted(m for s in shards for m in s) == modules
    assert deal(list(reversed(modules)), n, costs) == shards
    loads = [sum(costs[m] for m in s) for s in shards]
    assert max(loads) - min(loads) <= max(costs.values()) + 1e-9


def _record_run(out, *modules: str) -> subprocess.CompletedProcess:
    return _run(
        "--jobs",
        "2",
        "--record",
        "--durations-file",
        str(out),
        "--",
        "-q",
        "-p",
        "no:cacheprovider",
        *modules,
    )


def test_record_writes_seconds_per_module(tmp_path):
    out = tmp_path / "durations.json"
    r = _record_run(out, *MODULES)
    assert r.returncode == 0, r.stdout[-3000:]
    data = json.loads(out.read_text())
    assert {k.split("::", 1)[0] for k in data} == set(MODULES) and all(v >= 0 for v in data.values()), data
    assert sum(data.values()) > 0, data
    # a second record keeps the other records and drops those of deleted modules
    out.write_text(json.dumps({**data, f"{MODULES[0]}::kept_record": 7.0, "tests/no_such_module.py::t": 1.0}))
    r = _record_run(out, MODULES[1])
    assert r.returncode == 0, r.stdout[-3000:]
    again = json.loads(out.read_text())
    assert again[f"{MODULES[0]}::kept_record"] == 7.0 and "tests/no_such_module.py::t" not in again
    assert set(data) <= set(again)


def test_a_failing_run_records_nothing(tmp_path):
    out = tmp_path / "durations.json"
    r = _run(
        "--jobs", "2", "--record", "--durations-file", str(out), "--", "-q", "tests/no_such_test_file.py"
    )
    assert r.returncode == 4 and not out.exists(), r.stdout[-3000:]
