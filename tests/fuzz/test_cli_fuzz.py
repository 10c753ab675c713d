"""CLI fuzz (issue 28): argument lists over every subcommand with output paths of every kind (new, regular,
directory, private null/full character devices made with mknod inside tmp_path, FIFO, socket, dangling
symlink, symlink to a device, missing directory, path under a file, '-', '') and crafted inputs (user check
files that call sys.exit / return garbage / do not parse, a bad spec). Each call must end with exit code 0, 1
or 2, never a traceback, a hang (60 s alarm) or a printed NaN; the special files must be untouched and no
temporary or ``.corrupt-`` file left behind. The driver runs in a fresh process (tests/io/_cli.py, the one
in-process CLI runner the tests share).
Round 4 (issue 42) adds hostile calls (half of the draws) that must be refused with a non-zero exit: an output
that is an input (the store, a symlink to it, its -wal, the spec), a journal over a file that is not one,
--journal x --json x, bad --file for every CLAIM, claims --file on broken files, out-of-range integers,
NaN, empty paths, huge searches without --allow-large, a foreign SQLite store, `verify` of a check calling
os._exit(0); every input file must stay byte-identical. Fixed seeds: the default run draws 64 calls (seed
28); the slow run 720 (seed 2028)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests" / "io" / "_cli.py"


def _run(tmp_path, n, seed, timeout, hostile=0.5):
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        OPENBLAS_NUM_THREADS="1",
    )
    r = subprocess.run(
        [sys.executable, str(DRIVER), str(tmp_path), str(n), str(seed), str(hostile)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _assert_clean(res):
    bad = []
    for c in res["calls"]:
        if (
            c["raised"]
            or c["hang"]
            or c["traceback_printed"]
            or c["code"] not in (0, 1, 2)
            or c["nan_printed"]
            or c["left_by_refusal"]
        ):
            bad.append((c["argv"], c["code"], c["raised"] or c["left_by_refusal"] or c["tail"]))
    assert not bad, f"{len(bad)} bad call(s); first: {bad[0]}"
    # round 4 (issue 42): every hostile call is refused (or fails), never a silent exit 0
    passed = [(c["argv"], c["tail"]) for c in res["calls"] if c["must_fail"] and c["code"] == 0]
    assert not passed, f"{len(passed)} hostile call(s) exited 0; first: {passed[0]}"
    assert not res["inputs_changed"], f"an input was changed: {res['inputs_changed']}"
    assert res["special_before"] == res["special_after"], "a device file, FIFO or socket was replaced"
    assert not res["stray"], f"left behind: {res['stray']}"
    assert {"fifo", "dir", "missing_dir", "stdout"} <= set(res["special"])


def test_cli_fuzz_bounded(tmp_path):
    res = _run(tmp_path, 64, 28, timeout=600)
    assert len(res["calls"]) == 64 and sum(c["must_fail"] for c in res["calls"]) >= 20
    _assert_clean(res)
    codes = {c["code"] for c in res["calls"]}
    assert 2 in codes and 0 in codes  # both refusals and successful runs were exercised


@pytest.mark.slow
def test_cli_fuzz_long(tmp_path):
    res = _run(tmp_path, 720, 2028, timeout=3600)
    assert len(res["calls"]) == 720
    _assert_clean(res)
