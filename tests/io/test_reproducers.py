"""Issue 42's reproducers D1-D19 (tests/io/reproducers.py), each a fresh ``afltheory`` process in an empty
directory: a clear one-line error with a non-zero exit, or the correct result; every input byte-identical and
nothing left behind. The default tier runs the reproducers that need no search or check run (~0.3 s each);
the slow tier all 52 (~80 s of process starts and small runs under load)."""

from __future__ import annotations

import pytest

from tests.io.reproducers import REPRODUCERS, run_in_tmp

#: no search, no check run, no real-data load: one process start each
FAST = {
    "D1",
    "D2",
    "D3.pep",
    "D11",
    "D13",
    "D13.2",
    "D15",
    "D18.status",
    "D18.status.foreign",
    "D19.threads",
    "D19.dash.csv",
    "D19.dash.store",
}


def _ids(rs):
    return [r.id for r in rs]


def test_the_fast_set_names_reproducers():
    assert FAST <= set(_ids(REPRODUCERS)) and len(set(_ids(REPRODUCERS))) == len(REPRODUCERS) == 52
    assert {r.id.split(".")[0] for r in REPRODUCERS} == {f"D{i}" for i in range(1, 20)}  # every one of D1-D19


@pytest.mark.parametrize("r", [r for r in REPRODUCERS if r.id in FAST], ids=lambda r: r.id)
def test_reproducer_fast(r):
    o = run_in_tmp(r)
    assert o.ok, (o.problems, o.code, o.stderr[-800:])


@pytest.mark.slow
@pytest.mark.parametrize("r", [r for r in REPRODUCERS if r.id not in FAST], ids=lambda r: r.id)
def test_reproducer(r):
    o = run_in_tmp(r)
    assert o.ok, (o.problems, o.code, o.stderr[-800:])


def test_the_judge_can_fail():
    """A command that succeeds and writes a store, judged as if it had to be refused: every problem named."""
    from tests.io.reproducers import Repro

    r = Repro(
        "judge", ("sweep", "run", "spec.toml", "--store", "n.sqlite", "--task", "synthetic"), says="nope"
    )
    o = run_in_tmp(r)
    assert not o.ok and o.code == 0
    assert "exit 0, expected (2,)" in o.problems and "output does not say 'nope'" in o.problems
    assert any(p.startswith("left behind: ['n.sqlite'") for p in o.problems), o.problems
