"""``afltheory adversary --seeds N --jobs J --executor local|dask``: independent seeded searches as executor
tasks give the searches of one process (each depends only on its seed). Deterministic (seeded)."""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.adversary.claims import get_claim
from afltheory.adversary.cli import search_seeds
from afltheory.cli import main as cli_main


def _key(w):
    return w.seed, w.ratio, w.evaluations, None if w.instance_u is None else w.instance_u.tolist()


@pytest.mark.parametrize("executor", ["local", pytest.param("dask", marks=pytest.mark.slow)])
def test_seeded_searches_do_not_depend_on_the_executor(executor):
    if executor == "dask":
        pytest.importorskip("dask.distributed", reason="needs the dask extra: pip install 'afltheory[dask]'")
    cls = get_claim("thm2").default_class()
    one = search_seeds("thm2", cls, seeds=[0, 1], budget=60, replicates=50)
    two = search_seeds("thm2", cls, seeds=[0, 1], budget=60, replicates=50, executor=executor, jobs=2)
    assert [_key(w) for w in two] == [_key(w) for w in one]
    assert all(np.isfinite(w.ratio) for w in one)


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--seeds", "0"], "--seeds=0"),
        (["--jobs", "0"], "--jobs=0"),
        (["--scheduler", "tcp://127.0.0.1:1"], "needs --executor dask"),
    ],
)
def test_bad_seed_and_executor_options_are_refused(argv, msg, capsys):
    assert cli_main(["adversary", "thm2", "--budget", "10", *argv]) == 2
    assert msg in capsys.readouterr().err
