"""Test-suite configuration: hypothesis profiles.

The default profile ``ci`` is derandomized (hypothesis derives its examples from each test's source, so
two runs draw the same examples) and prints the reproduction blob on failure: ``make test`` on a clean
clone is reproducible, and a red CI is never chance. ``HYPOTHESIS_PROFILE=dev`` explores fresh random
examples (use it to hunt for bugs; paste a printed ``@reproduce_failure`` blob into the test to pin one).
``HYPOTHESIS_PROFILE=fuzz`` is the long run of the fuzz suite (with ``-m slow``).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, print_blob=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", print_blob=True)
settings.register_profile("fuzz", print_blob=True, max_examples=2_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# hypothesis mixes numeric constants of the *loaded* local modules into its draws, so a derandomized test's
# examples depended on which tests (and modules) ran before it (a Theorem 3 search found its counterexample
# alone and missed it after tests/adversary). Switch that pool off for the whole suite: the examples of a test
# depend on its own source only (afltheory.strategies.reproducible does the same for users' searches).
try:
    from hypothesis.internal.conjecture import providers as _providers

    if hasattr(_providers, "_get_local_constants") and hasattr(_providers, "Constants"):
        _providers._get_local_constants = _providers.Constants
except ImportError:  # pragma: no cover - an older hypothesis without the hook
    pass


# --------------------------------------------------------------------------------------------- shared work
@pytest.fixture(scope="session")
def quick_check(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict]:
    """``quick_check(cid)`` -> a deep copy of ``run_check(cid, "quick", 0, out)`` (one shared output folder):
    each built-in check runs once per session however many tests read its quick-tier verdicts (the checks are
    seeded, so a second run would return the same verdicts). Only for tests about the verdicts of the
    unmodified checks, never under an injected mutant (afltheory.mutants) or a changed registry."""
    from afltheory.checks import run_check

    out = tmp_path_factory.mktemp("quick_checks")
    cache: dict[str, dict] = {}

    def get(cid: str) -> dict:
        if cid not in cache:
            cache[cid] = run_check(cid, "quick", 0, str(out))
        return copy.deepcopy(cache[cid])

    return get


# ------------------------------------------------------------------------------------------------- shards
#: Recorded wall seconds per test (pytest node id, relative to the repository root), written by
#: ``tools/run_tests.py --record`` (the default tier and, recorded separately, ``-m slow``); the shards are
#: dealt from it (``module_costs``, ``deal``), whatever the selection.
DURATIONS_FILE = Path(__file__).resolve().parent / "test_durations.json"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--shard I/N``: run the I-th of N shards (``deal``); ``tools/run_tests.py`` (``make test``) runs the
    N shards in parallel. ``--durations-out FILE``: write this session's seconds per test (JSON)."""
    parser.addoption("--shard", default=None, help="I/N: run only the I-th of N module shards (0-based)")
    parser.addoption("--durations-out", default=None, help="write seconds per test to this JSON file")


def _shard(spec: str) -> tuple[int, int]:
    try:
        i, n = (int(v) for v in spec.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--shard must be I/N with integers, got {spec!r}") from None
    if not (n >= 1 and 0 <= i < n):
        raise pytest.UsageError(f"--shard I/N needs N >= 1 and 0 <= I < N, got {spec!r}")
    return i, n


def module_costs(nodeids: list[str], durations: dict[str, float]) -> dict[str, float]:
    """Seconds per test module of the SELECTED tests ``nodeids``: the sum of their recorded durations, a test
    without a record counted at the median record (0.1 s when there is none). So a module's cost follows the
    selection: its default-tier tests for ``make test``, its slow tests for ``-m slow``."""
    known = sorted(v for v in durations.values() if v >= 0)
    default = known[len(known) // 2] if known else 0.1
    cost: dict[str, float] = {}
    for nid in nodeids:
        module = nid.split("::", 1)[0]
        cost[module] = cost.get(module, 0.0) + float(durations.get(nid, default))
    return cost


def deal(modules: list[str], n: int, durations: dict[str, float]) -> list[list[str]]:
    """The modules dealt into n shards by cost (``durations``: seconds per module): longest first, each to the
    shard with the least work so far (ties: the lowest index), a module without a cost counted at the median
    cost (1 s when there is none). Deterministic in (modules, n, durations), so every shard computes the same
    deal."""
    known = sorted(v for v in durations.values() if v >= 0)
    default = known[len(known) // 2] if known else 1.0
    cost = {m: float(durations.get(m, default)) for m in modules}
    shards: list[list[str]] = [[] for _ in range(n)]
    load = [0.0] * n
    for m in sorted(modules, key=lambda m: (-cost[m], m)):
        k = min(range(n), key=lambda j: (load[j], j))
        shards[k].append(m)
        load[k] += cost[m]
    return shards


def _recorded_durations() -> dict[str, float]:
    try:
        data = json.loads(DURATIONS_FILE.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


@pytest.hookimpl(trylast=True)  # after ``-m``/``-k`` deselection: the deal weighs only the selected tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    spec = config.getoption("--shard")
    if not spec:
        return
    i, n = _shard(spec)
    costs = module_costs([item.nodeid for item in items], _recorded_durations())
    mine = set(deal(sorted(costs), n, costs)[i])
    keep = [item for item in items if item.nodeid.split("::", 1)[0] in mine]
    drop = [item for item in items if item.nodeid.split("::", 1)[0] not in mine]
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


_TEST_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Sum each test's setup, call and teardown seconds (for ``--durations-out``)."""
    _TEST_SECONDS[report.nodeid] = _TEST_SECONDS.get(report.nodeid, 0.0) + float(report.duration)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write ``--durations-out``: {node id: seconds} (node ids relative to the rootdir, as the deal reads
    them)."""
    out = session.config.getoption("--durations-out")
    if out:
        Path(out).write_text(json.dumps({k: round(v, 3) for k, v in sorted(_TEST_SECONDS.items())}, indent=0))


# ------------------------------------------------------------------------------------ mutant injection
def pytest_configure(config: pytest.Config) -> None:
    """With ``AFLTHEORY_MUTANT=NAME`` in the environment, the whole session runs with the catalogued mutant
    NAME injected (``afltheory.mutants.run.run_test``: the kill matrix's "killed by tests" column)."""
    name = os.environ.get("AFLTHEORY_MUTANT")
    if name:
        from afltheory import _faults, mutants

        _faults.activate(mutants.get(name))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Back to the correct code at the end of a session run under ``AFLTHEORY_MUTANT``."""
    if os.environ.get("AFLTHEORY_MUTANT"):
        from afltheory import _faults

        _faults.deactivate()
