"""The kill matrix on the sweep executors (``kill_matrix(executor=...)``, ``check --mutants --executor``):
the same (mutant, check) tasks, so the same kill matrix as the local run. The checks are seeded: no
statistical tolerance is involved."""

from __future__ import annotations

import pytest

from afltheory.cli import main as cli_main
from afltheory.mutants.run import kill_matrix
from afltheory.sweep.executors import LocalExecutor

MUTANTS = ["afacd.eta_L_twice", "afacs.memory_frozen"]
ONLY = ["thm1"]


def _summary(km):
    return km.score, km.kills(), {m: km.crashed(m) for m in km.mutants}


def test_executor_instance_gives_the_local_kill_matrix():
    local = kill_matrix(MUTANTS, only=ONLY)
    with LocalExecutor(1) as ex:
        other = kill_matrix(MUTANTS, only=ONLY, executor=ex)
    assert _summary(other) == _summary(local)
    assert other.meta["executor"] == "local" and local.meta["executor"] == "local"
    assert local.score == 1.0


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"executor": "ray"}, "executor='ray'"),
        ({"scheduler": "tcp://127.0.0.1:1"}, "only used with executor='dask'"),
    ],
)
def test_bad_executor_arguments_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        kill_matrix(MUTANTS, only=ONLY, **kw)


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["check", "--only", "thm1", "--executor", "dask"], "applies to the mutation analysis"),
        (
            ["check", "--only", "thm1", "--mutants", "afacd.eta_L_twice", "--scheduler", "tcp://127.0.0.1:1"],
            "needs --executor dask",
        ),
    ],
)
def test_cli_refuses_executor_options_where_they_do_not_apply(argv, msg, tmp_path, capsys):
    assert cli_main([*argv, "--out", str(tmp_path / "r")]) == 2
    assert msg in capsys.readouterr().err


@pytest.mark.slow
def test_dask_local_cluster_gives_the_local_kill_matrix(tmp_path):
    pytest.importorskip("dask.distributed", reason="needs the dask extra: pip install 'afltheory[dask]'")
    local = kill_matrix(MUTANTS, only=ONLY)
    dask = kill_matrix(MUTANTS, only=ONLY, executor="dask", jobs=2)
    assert _summary(dask) == _summary(local)
    assert dask.meta["executor"] == "dask"


def test_journal_resumes_without_rerunning_and_ignores_other_seeds(tmp_path, monkeypatch):
    """Every finished run is journaled; a second analysis with the same code, tier and seed reads them
    back (a line cut short by an interruption is skipped) and runs nothing; another seed reruns."""
    import afltheory.mutants.run as run

    j = str(tmp_path / "journal.jsonl")
    first = kill_matrix(MUTANTS, only=ONLY, journal=j)
    lines = open(j, encoding="utf-8").read().splitlines()
    assert len(lines) == 1 + first.meta["runs_executed"]  # the baseline run + the mutant runs
    with open(j, "a", encoding="utf-8") as fh:
        fh.write(lines[-1][: len(lines[-1]) // 2])  # an interrupted write

    def boom(args):
        raise AssertionError(f"run again: {args[:2]}")

    monkeypatch.setattr(run, "_task", boom)
    again = kill_matrix(MUTANTS, only=ONLY, journal=j)
    assert _summary(again) == _summary(first)
    with pytest.raises(AssertionError, match="run again"):
        kill_matrix(MUTANTS, only=ONLY, journal=j, seed=1)
