"""Sweep fault tests (issue 19), each with its outcome asserted: SIGKILL of a pool worker (pool rebuilt,
no task charged for a death it did not cause, results equal to an undisturbed run), SIGKILL of the runner
(its pool workers exit), two runners on one store (the second waits, says so, and computes nothing twice),
an export that dies mid-write (the old CSV survives whole), and each kind of store corruption (recomputed,
or a clear error).
Synthetic tasks (deterministic, no engine); every delay is bounded by a deadline, never asserted."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from afltheory.sweep import LocalExecutor, Store, parse_spec, run_sweep
from afltheory.sweep.store import StoreError

from .conftest import TINY  # the shared tiny spec (one definition)

ROOT = Path(__file__).resolve().parents[2]

SLOW = TINY.replace("eta_L = 0.05\n", "eta_L = 0.05\nsleep = 0.25\n", 1)


def _fp(path):
    with Store(path, readonly=True) as st:
        return st.fingerprint()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An undisturbed synthetic run of the 12-task spec."""
    path = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    run_sweep(parse_spec(SLOW, check_objects=False), path, task="synthetic")
    return _fp(path)


def _descendants(pid):
    """Pids of every live descendant of ``pid`` (from /proc)."""
    kids = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not reaped) counts as gone
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


def _cli(spec_file, store, *extra):
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
            "--task",
            "synthetic",
            "--progress",
            "none",
            *extra,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _finished(store):
    try:
        with Store(store, readonly=True, timeout=5) as st:
            return st.status()["finished"]
    except Exception:
        return 0


@pytest.mark.skipif(not Path("/proc").exists(), reason="needs /proc")
def test_sigkill_of_a_pool_worker_rebuilds_the_pool_and_loses_nothing(tmp_path, reference):
    ex = LocalExecutor(2)
    killed = []

    def killer():
        deadline = time.monotonic() + 30
        while not ex.worker_pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # mid-task (tasks sleep 0.25 s each)
        pid = ex.worker_pids()[0]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    th = threading.Thread(target=killer)
    th.start()
    try:
        rep = run_sweep(
            parse_spec(SLOW, check_objects=False), tmp_path / "s.sqlite", executor=ex, task="synthetic"
        )
    finally:
        th.join()
        ex.close()
    assert killed and rep.pool_rebuilds >= 1
    assert rep.ran == 12 and rep.failed == 0  # nobody is charged for the killed worker
    assert _fp(tmp_path / "s.sqlite") == reference


def test_a_task_that_kills_its_worker_fails_alone_after_bounded_retries(tmp_path):
    """A task whose worker dies every time it runs fails after retries + 1 isolated attempts; the others
    (in flight with it when the pool broke) are rerun and succeed."""
    from afltheory.sweep.tasks import synthetic_task  # noqa: F401  (importable by the pool workers)

    payloads = [
        {
            "id": f"{i:064x}",
            "seed": i,
            "config": {"rounds": 3, "replicates": 2, "checkpoints": 3, "algorithm": {"sleep": 0.05}},
        }
        for i in range(6)
    ]
    with LocalExecutor(2, retries=1) as ex:
        out = {p["id"]: e for p, _, e in ex.imap_unordered(_die_on_task_3, payloads)}
    assert len(out) == 6
    assert "worker process died" in out[payloads[3]["id"]]
    assert all(out[p["id"]] is None for i, p in enumerate(payloads) if i != 3)


def _die_on_task_3(payload):
    if payload["seed"] == 3:
        os._exit(9)  # as an OOM kill would
    from afltheory.sweep.tasks import synthetic_task

    return synthetic_task(payload)


@pytest.mark.skipif(not Path("/proc").exists(), reason="needs /proc")
def test_sigkill_of_the_runner_leaves_no_pool_processes(tmp_path, reference):
    spec_file = tmp_path / "slow.toml"
    spec_file.write_text(SLOW)
    store = tmp_path / "s.sqlite"
    proc = _cli(spec_file, store, "--jobs", "2")
    deadline = time.monotonic() + 60
    kids = []
    while time.monotonic() < deadline and proc.poll() is None:
        kids = _descendants(proc.pid)
        if len(kids) >= 3 and _finished(store) >= 1:  # forkserver + 2 workers, work under way
            break
        time.sleep(0.05)
    assert proc.poll() is None and len(kids) >= 3
    os.kill(proc.pid, signal.SIGKILL)  # the runner only, as an OOM kill of it would
    proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [k for k in kids if _alive(k)], "orphaned pool processes"
    rerun = _cli(spec_file, store, "--jobs", "2")  # resume: the store equals an undisturbed run's
    _, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err.decode()[-2000:]
    assert _fp(store) == reference


def test_two_runners_on_one_store_second_waits_and_computes_nothing_twice(tmp_path, reference):
    spec_file = tmp_path / "slow.toml"
    spec_file.write_text(SLOW)
    store = tmp_path / "s.sqlite"
    first = _cli(spec_file, store)
    deadline = time.monotonic() + 60
    while _finished(store) < 1 and time.monotonic() < deadline:  # the first runner holds the lock
        time.sleep(0.05)
    second = _cli(spec_file, store)
    _, err2 = second.communicate(timeout=180)
    _, err1 = first.communicate(timeout=180)
    assert first.returncode == 0 and second.returncode == 0, (err1 + err2).decode()[-2000:]
    err2 = err2.decode()
    assert "is being written by runner pid" in err2 and "waiting" in err2
    assert "0 ran, 12 already stored" in err2  # it waited, then found nothing left to compute
    assert "12 ran" in err1.decode()
    assert _fp(store) == reference


def test_export_that_dies_mid_write_leaves_the_previous_csv_whole(tmp_path, monkeypatch):
    from afltheory.sweep import analysis

    store = tmp_path / "s.sqlite"
    run_sweep(parse_spec(TINY, check_objects=False), store, task="synthetic")
    out = tmp_path / "out.csv"
    with Store(store, readonly=True) as st:
        assert analysis.export_csv(st, out) == 12
    good = out.read_text()

    class Dies:  # a writer killed after 5 rows (as a SIGKILL mid-export would stop it)
        def __init__(self, fh):
            self.n = 0
            self.fh = fh

        def writerow(self, row):
            self.n += 1
            if self.n > 5:
                raise KeyboardInterrupt
            self.fh.write(",".join(map(str, row)) + "\n")

    monkeypatch.setattr(analysis.csv, "writer", Dies)
    with Store(store, readonly=True) as st, pytest.raises(KeyboardInterrupt):
        analysis.export_csv(st, out)
    assert out.read_text() == good
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


# ------------------------------------------------------------------------------------------- corruption
# The corruption tests kill nothing, so their tasks need no sleep (the kill tests above do): they use the tiny
# spec as is, and every test damages a byte copy of one store built once per module (a closed store is a
# single file: its WAL is checkpointed on close).
FAST = TINY


@pytest.fixture(scope="module")
def clean_store(tmp_path_factory):
    """A finished store of the 12-task tiny spec (no sleep) and its fingerprint, built once per module."""
    store = tmp_path_factory.mktemp("clean") / "s.sqlite"
    run_sweep(parse_spec(FAST, check_objects=False), store, task="synthetic")  # closed: WAL checkpointed
    assert not {"s.sqlite-wal", "s.sqlite-shm", "s.sqlite-journal"} & {p.name for p in store.parent.iterdir()}
    return store, _fp(store)


def _make_store(tmp_path, clean_store):
    store = tmp_path / "s.sqlite"
    store.write_bytes(clean_store[0].read_bytes())
    return store


def _sql(store, *stmts):
    c = sqlite3.connect(store, isolation_level=None)
    for s in stmts:
        c.execute(s)
    c.close()


def _garble(store, offset, n=4096):
    """Overwrite n bytes at offset with a fixed garbage pattern."""
    data = bytearray(store.read_bytes())
    k = min(n, len(data) - offset)
    data[offset : offset + k] = bytes((i * 151 + 7) % 256 for i in range(k))
    store.write_bytes(bytes(data))


CORRUPTIONS = {
    # kind: (damage, number of tasks to recompute; None: as many as the damaged pages held (maybe 0))
    "row-contents-valid-json": (lambda s: _sql(s, "UPDATE tasks SET metrics='{\"x\": 1}' WHERE rowid=3"), 1),
    "row-arrays-undecodable": (lambda s: _sql(s, "UPDATE tasks SET arrays=x'00ff' WHERE rowid IN (1, 5)"), 2),
    "row-config-not-json": (lambda s: _sql(s, "UPDATE tasks SET config='{' WHERE rowid=2"), 1),
    "garbage-mid-file": (lambda s: _garble(s, (s.stat().st_size // 4096 // 2) * 4096), None),
    "truncated": (lambda s: s.write_bytes(s.read_bytes()[: s.stat().st_size // 2]), None),
    "tasks-table-dropped": (lambda s: _sql(s, "DROP TABLE tasks"), 12),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_a_corrupted_store_is_reported_and_what_cannot_be_trusted_is_recomputed(tmp_path, kind, clean_store):
    store = _make_store(tmp_path, clean_store)
    assert _fp(store) == clean_store[1]  # the copy is the undisturbed run
    damage, expect = CORRUPTIONS[kind]
    damage(store)
    with pytest.warns(UserWarning):
        rep = run_sweep(parse_spec(FAST, check_objects=False), store, task="synthetic")
    assert rep.damage, "the damage must be reported"
    if expect is not None:
        assert rep.ran == expect
    assert rep.failed == 0
    assert _fp(store) == clean_store[1]  # every row trustworthy again, equal to an undisturbed run
    again = run_sweep(parse_spec(FAST, check_objects=False), store, task="synthetic")
    assert again.ran == 0 and not again.damage


@pytest.mark.parametrize("kind", ["header-destroyed", "not-a-store", "recursive-view"])
def test_an_untrustworthy_file_is_refused_with_a_clear_message(tmp_path, kind, clean_store):
    store = _make_store(tmp_path, clean_store)
    if kind == "header-destroyed":
        _garble(store, 0, 100)
    elif kind == "not-a-store":
        store.write_text("id,metric\n1,2\n")
    else:  # a crafted store whose 'tasks' is a never-ending recursive view
        _sql(
            store,
            "DROP TABLE tasks",
            "CREATE VIEW tasks AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL "
            "SELECT i + 1 FROM r) SELECT i AS id FROM r",
        )
    before = store.read_bytes()
    for make in (lambda: Store(store, readonly=True), lambda: Store(store)):
        with pytest.raises(StoreError, match="not an afltheory sweep store|never creates"):
            make()
    assert store.read_bytes() == before  # refused, not modified
    spec_file = tmp_path / "tiny.toml"
    spec_file.write_text(FAST)
    proc = _cli(spec_file, store)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and b"Traceback" not in err and b"afltheory sweep: error:" in err
