"""SIGKILL a running sweep (the CLI in a subprocess, whole process group) at random moments, several times,
then resume: the final store equals an uninterrupted run's — no task lost, none duplicated."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from afltheory.sweep import Store, parse_spec, run_sweep

ROOT = Path(__file__).resolve().parents[2]

# tasks of ~0.25 s each (measured 2026-11-21), so a kill after k committed tasks plus ≤ 0.15 s lands mid-sweep
SPEC = """
name = "killme"
rounds = 2000
replicates = 32
seeds = [0, 1, 2, 3]
checkpoints = 20

[problem]
family = "HeterogeneousQuadratic"
dim = 8
num_workers = 10
L = 2.0
sigma_L = 0.5

[behaviour.arrivals]
kind = "UniformArrivals"
m = 4

[behaviour.delays]
kind = "UniformDelay"
max_delay = 3

[behaviour.local_steps]
kind = "ConstantSteps"
K = 3

[algorithm]
name = "AFACD"
eta = 1.0
eta_L = 0.05

[grid]
"algorithm.name" = ["AFACD", "AFACS"]
"algorithm.eta_L" = [0.02, 0.05, 0.1]
"""


def _finished(path):
    if not path.exists():
        return 0
    try:
        with Store(path, readonly=True, timeout=5) as st:
            return st.status()["finished"]
    except Exception:  # store not initialised yet
        return 0


def _start(spec_file, store, jobs):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "afltheory.sweep",
            "run",
            str(spec_file),
            "--store",
            str(store),
            "--jobs",
            str(jobs),
            "--progress",
            "lines",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # own process group: the kill takes its workers too


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # proc.pid is the group id (start_new_session)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def test_sigkill_at_random_moments_then_resume(tmp_path):
    spec_file = tmp_path / "kill.toml"
    spec_file.write_text(SPEC)
    spec = parse_spec(SPEC)
    total = len(spec.tasks)
    assert total == 24
    ref = tmp_path / "ref.sqlite"
    run_sweep(spec, ref, jobs=2)  # results do not depend on jobs (tests/sweep/test_executors.py)

    store = tmp_path / "killed.sqlite"
    rng = np.random.default_rng(20220717)  # fixed moments
    kills = []
    for i in range(4):
        before = _finished(store)
        proc = _start(spec_file, store, jobs=1 + i % 2)
        # wait until this run has committed `k` new tasks, then kill after a random extra delay
        k = int(rng.integers(1, 5))
        extra = float(rng.uniform(0.0, 0.15))
        deadline = time.monotonic() + 60
        while (
            _finished(store) < min(before + k, total) and proc.poll() is None and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        time.sleep(extra)
        alive = proc.poll() is None
        _kill_group(proc)
        kills.append((before, _finished(store), alive))
    print("kills (finished before, after, alive):", kills)
    # every kill hit a running sweep part-way through
    assert sum(alive and 0 < after < total for _, after, alive in kills) >= 3, kills
    assert _finished(store) < total, kills

    proc = _start(spec_file, store, jobs=2)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert b"already stored" in err

    with Store(ref, readonly=True) as a, Store(store, readonly=True) as b:
        fa, fb = a.fingerprint(), b.fingerprint()
        assert b.status()["pending"] == 0
        n = b.conn.execute("SELECT COUNT(*), COUNT(DISTINCT id) FROM tasks").fetchone()
    assert n == (total, total)  # none lost, none duplicated
    assert [r[0] for r in fb] == sorted(spec.ids)
    assert fa == fb  # ids, configs, seeds, metrics and array bytes equal
