"""CLI fuzz (issue 28): argument lists over every subcommand with output paths of every kind (new, regular,
directory, private null/full character devices made with mknod inside tmp_path, FIFO, socket, dangling
symlink, symlink to a device, missing directory, path under a file, '-', '') and crafted inputs (user check
files that call sys.exit / return garbage / do not parse, a bad spec). Each call must end with exit code 0, 1
or 2, never a traceback, a hang (60 s alarm) or a printed NaN; the special files must be untouched and no
temporary or ``.corrupt-`` file left behind. The driver runs in a fresh process (tests/fuzz/cli_fuzz_run.py).
Fixed seeds: the default run draws 40 calls (seed 28); the slow run 400 (seed 2028)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("cli_fuzz_run.py")


def _run(tmp_path, n, seed, timeout):
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        OPENBLAS_NUM_THREADS="1",
    )
    r = subprocess.run(
        [sys.executable, str(DRIVER), str(tmp_path), str(n), str(seed)],
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
        ):
            bad.append((c["argv"], c["code"], c["raised"] or c["tail"]))
    assert not bad, f"{len(bad)} bad call(s); first: {bad[0]}"
    assert res["special_before"] == res["special_after"], "a device file, FIFO or socket was replaced"
    assert not res["stray"], f"left behind: {res['stray']}"
    assert {"fifo", "dir", "missing_dir", "stdout"} <= set(res["special"])


def test_cli_fuzz_bounded(tmp_path):
    res = _run(tmp_path, 40, 28, timeout=600)
    _assert_clean(res)
    codes = {c["code"] for c in res["calls"]}
    assert 2 in codes and 0 in codes  # both refusals and successful runs were exercised


@pytest.mark.slow
def test_cli_fuzz_long(tmp_path):
    res = _run(tmp_path, 400, 2028, timeout=3600)
    _assert_clean(res)
