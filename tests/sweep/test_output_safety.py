"""Sweep output paths and the store under hostile conditions (issue 28): device files, FIFOs, sockets and
directories as --store / --csv / --out are refused at once and left untouched (private nodes made inside
tmp_path, never /dev); a missing directory is one line; the store file alone is self-contained after a clean
exit and after SIGTERM (WAL checkpointed); `sweep copy` makes a self-contained copy; a full disk (a 160 KiB
tmpfs when `mount` works here, else a simulated ENOSPC) is a one-line error that leaves the store resumable.
Synthetic tasks; every wait is bounded by a deadline, never asserted as a duration."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from afltheory.sweep import Store, parse_spec, run_sweep

from .conftest import TINY

ROOT = Path(__file__).resolve().parents[2]
SLOW = TINY.replace("eta_L = 0.05\n", "eta_L = 0.05\nsleep = 0.25\n", 1)


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _sweep(*args, cwd, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "afltheory.sweep", *map(str, args)],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _fp(path):
    with Store(path, readonly=True) as st:
        return st.fingerprint()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    run_sweep(parse_spec(TINY, check_objects=False), path, task="synthetic")
    return _fp(path)


def _node(tmp_path, kind):
    p = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "chardev":
        try:
            os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except OSError as exc:
            pytest.skip(f"mknod not permitted here ({exc})")
    elif kind == "emptychardev":  # /dev/null-like: empty, which once passed the header check
        try:
            os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
        except OSError as exc:
            pytest.skip(f"mknod not permitted here ({exc})")
    elif kind == "dir":
        p.mkdir()
    return p


@pytest.mark.parametrize("kind", ["fifo", "chardev", "emptychardev", "dir"])
def test_store_and_outputs_refuse_special_files(tmp_path, kind, reference):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    node = _node(tmp_path, kind)
    before = os.lstat(node)
    r = _sweep(
        "run", spec, "--store", node, "--task", "synthetic", "--progress", "none", cwd=tmp_path, timeout=60
    )  # a FIFO once blocked forever here
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--store" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    good = tmp_path / "good.sqlite"
    run_sweep(parse_spec(TINY, check_objects=False), good, task="synthetic")
    for args in (
        ["export", "--store", good, "--csv", node],
        ["plot", "--store", good, "--out", node],
        ["copy", "--store", good, "--to", node],
        ["status", "--store", node],
    ):
        r = _sweep(*args, cwd=tmp_path, timeout=60)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args, r.stderr)
    after = os.lstat(node)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    assert not [n for n in os.listdir(tmp_path) if "corrupt" in n or ".tmp-" in n]


def test_missing_directory_is_one_line(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    r = _sweep("run", spec, "--store", tmp_path / "no" / "s.sqlite", "--task", "synthetic", cwd=tmp_path)
    assert r.returncode == 2 and "is missing" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_clean_exit_leaves_a_self_contained_store_file(tmp_path, reference):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    store = tmp_path / "s.sqlite"
    r = _sweep("run", spec, "--store", store, "--task", "synthetic", "--progress", "none", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    wal = Path(str(store) + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    alone = tmp_path / "alone" / "s.sqlite"
    alone.parent.mkdir()
    shutil.copyfile(store, alone)  # the store file only, as a user copying it would
    assert _fp(alone) == reference


def test_sweep_copy_includes_the_write_ahead_log(tmp_path, reference):
    store = tmp_path / "s.sqlite"
    st = Store(store)
    run_sweep(parse_spec(TINY, check_objects=False), st, task="synthetic")
    try:  # `st` still open: every row is in s.sqlite-wal, none yet in s.sqlite
        r = _sweep("copy", "--store", store, "--to", tmp_path / "copy.sqlite", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert not Path(str(tmp_path / "copy.sqlite") + "-wal").exists()
        assert _fp(tmp_path / "copy.sqlite") == reference
    finally:
        st.close()


@pytest.mark.skipif(not Path("/proc").exists(), reason="needs /proc")
def test_sigterm_stops_workers_and_checkpoints(tmp_path):
    from .test_faults import _alive, _descendants

    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW)
    store = tmp_path / "s.sqlite"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "afltheory.sweep",
            "run",
            str(spec),
            "--store",
            str(store),
            "--task",
            "synthetic",
            "--progress",
            "none",
            "--jobs",
            "2",
        ],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    kids = []
    while time.monotonic() < deadline and proc.poll() is None:
        kids = _descendants(proc.pid)
        if len(kids) >= 3 and store.exists():
            with Store(store, readonly=True, timeout=5) as st:
                if st.status()["finished"] >= 2:
                    break
        time.sleep(0.05)
    assert proc.poll() is None and len(kids) >= 3
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM and b"Traceback" not in err, err.decode()[-2000:]
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [k for k in kids if _alive(k)], "pool processes outlived the runner"
    wal = Path(str(store) + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed on the signal
    with Store(store, readonly=True) as st:
        assert st.status()["finished"] >= 2


def test_zombie_runner_counts_as_dead():
    """The pool workers' watchdog: a runner that exited but was not reaped (a zombie) is dead."""
    from afltheory.sweep.executors import _process_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while _process_alive(child.pid) and time.monotonic() < deadline:  # exits; not waited for: a zombie
        time.sleep(0.05)
    assert not _process_alive(child.pid)
    os.kill(child.pid, 0)  # still exists as a zombie: kill(pid, 0) alone would call it alive
    child.wait()
    assert _process_alive(os.getpid())


def _small_tmpfs(path, size):
    path.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    return r.returncode == 0


def test_disk_full_is_one_line_and_resumable(tmp_path, reference):
    """On a 160 KiB tmpfs the 12-task store fills the disk after a few rows: one line, exit 2, no traceback;
    after the disk grows, the same command resumes and the store equals an undisturbed run's. Without
    permission to mount, ENOSPC is simulated in the store's commit instead (test below)."""
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    mnt = tmp_path / "mnt"
    if not _small_tmpfs(mnt, "160k"):
        pytest.skip("cannot mount a small tmpfs here (the simulated ENOSPC test covers this)")
    try:
        store = mnt / "s.sqlite"
        args = ("run", spec, "--store", store, "--task", "synthetic", "--progress", "none")
        r = _sweep(*args, cwd=tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert "disk is full" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        with Store(store, readonly=True) as st:
            kept = st.status()["finished"]
        subprocess.run(["mount", "-o", "remount,size=8m", str(mnt)], check=True)
        r = _sweep(*args, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert f"{12 - kept} ran, {kept} already stored" in r.stderr
        assert _fp(store) == reference
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_simulated_enospc_is_one_line_and_resumable(tmp_path, reference, monkeypatch, capsys):
    from afltheory.sweep import cli
    from afltheory.sweep.store import Store as S

    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    store = tmp_path / "s.sqlite"
    real = S.add_result
    calls = []

    def full(self, *a, **k):
        calls.append(1)
        if len(calls) > 5:
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, *a, **k)

    monkeypatch.setattr(S, "add_result", full)
    argv = ["run", str(spec), "--store", str(store), "--task", "synthetic", "--progress", "none"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "disk is full" in err and "rerun the same command to resume" in err
    monkeypatch.setattr(S, "add_result", real)
    assert cli.main(argv) == 0
    assert "7 ran, 5 already stored" in capsys.readouterr().err
    assert _fp(store) == reference


def test_dask_scheduler_that_never_answers_is_an_error_not_a_hang():
    """A loopback listener that accepts the connection and never answers (once hung > 120 s): OSError
    naming the address after the connect timeout (0.5 s here, plus the bounded grace of 5 s)."""
    pytest.importorskip("distributed")
    import socket
    import threading

    from afltheory.sweep.executors import DaskExecutor

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held = []

    def accept():
        while True:
            try:
                held.append(srv.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    addr = f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    try:
        with pytest.raises(OSError, match="cannot connect to the Dask scheduler"):
            DaskExecutor(addr, timeout=0.5)
    finally:
        srv.close()
        for c in held:
            c.close()
