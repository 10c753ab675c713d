"""Round 4, D18 and D19 (issue 42): a refused or failing command leaves nothing behind — no empty output
directory (validation creates nothing; the writer makes missing directories and removes them again when the
write fails), no store file, -wal or -shm after a full disk while creating a store — ``sweep status`` says
what a stopped run left (no spec planned yet; rows still in the -wal), and ``-`` is stdout only where that
is documented: every other output or input flag refuses it with one line naming the flag (it once created a
file, or a directory, named ``-``). Full disks are small tmpfs mounts inside tmp_path (unmounted
afterwards; skipped where mounting is not permitted), never the machine's own filesystems."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys

import pytest

from afltheory import _io
from tests.io._cli import cli, one_line_error
from tests.io.reproducers import SPEC


@pytest.fixture
def tmpfs(tmp_path):
    """A factory of small private tmpfs mounts inside tmp_path: ``tmpfs("96k") -> Path``; all unmounted at
    the end."""
    mounts = []

    def make(size):
        mnt = tmp_path / f"mnt{len(mounts)}"
        mnt.mkdir()
        r = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True
        )
        if r.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here: {r.stderr.decode().strip()}")
        mounts.append(mnt)
        return mnt

    yield make
    for mnt in mounts:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def _fill(d):
    """Fill the filesystem of ``d`` (unbuffered writes until ENOSPC)."""
    fd = os.open(d / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


# -- no empty output directory ------------------------------------------------------------------------------


def test_validation_creates_nothing_and_the_writer_makes_the_directories(tmp_path):
    p = tmp_path / "a" / "b" / "c.json"
    assert _io.check_output_file(p, "--json") == str(p)
    _io.check_output_dir(tmp_path / "rep" / "sub", "--out")
    assert os.listdir(tmp_path) == []  # checked, nothing made
    _io.write_json(p, {"x": 1})
    assert p.read_text() == '{\n  "x": 1\n}\n'


def test_a_failed_write_removes_the_directories_it_made(tmp_path):
    (tmp_path / "keep").mkdir()
    with pytest.raises(RuntimeError), _io.atomic_open(tmp_path / "keep" / "new" / "deeper" / "f.txt") as fh:
        fh.write("half")
        raise RuntimeError("the writer failed")
    assert os.listdir(tmp_path) == ["keep"] and os.listdir(tmp_path / "keep") == []  # "keep" existed before
    assert _io.make_dirs(tmp_path / "x" / "y") == [str(tmp_path / "x" / "y"), str(tmp_path / "x")]
    (tmp_path / "x" / "y" / "f").write_text("")
    _io.remove_dirs([str(tmp_path / "x" / "y"), str(tmp_path / "x")])  # not empty: kept
    assert (tmp_path / "x" / "y" / "f").exists()


def test_a_full_disk_leaves_no_new_directory(tmpfs):
    mnt = tmpfs("64k")
    _fill(mnt)
    with pytest.raises(OSError) as ei:
        _io.atomic_write(mnt / "new" / "dir" / "big.bin", b"\1" * 200_000)
    assert ei.value.errno == errno.ENOSPC
    assert sorted(os.listdir(mnt)) == ["filler"]


@pytest.mark.parametrize(
    "argv",
    [
        ("adversary", "nosuch", "--budget", "4", "--json", "a/b/c.json"),  # D18: a and a/b were left
        ("adversary", "thm2", "--budget", "0", "--out", "figs/new"),
        ("check", "--only", "nosuch", "--out", "rep/sub"),  # rep/sub/figures was left
        ("check", "--only", "thm2", "--json", "", "--out", "rep"),  # rep/figures was left
        ("verify", "no_such.py", "--out", "rep"),
        ("pep", "thm2", "--T", "2", "--gamma", "nan", "--json", "p/q.json"),
        ("real", "wallclock", "--target", "2", "--out", "o/real"),
    ],
)
def test_a_refusal_leaves_no_directory(tmp_path, argv):
    r = cli(*argv, cwd=tmp_path)
    assert one_line_error(r), r
    assert os.listdir(tmp_path) == []


def test_a_skipped_real_run_leaves_no_output_directory(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError: SKIPPED, exit 1
    r = cli("real", "wallclock", "--backend", "torch", "--out", "o", cwd=tmp_path)
    assert r.returncode == 1 and "SKIPPED (needs: pip install 'afltheory[torch]'" in r.stderr
    assert os.listdir(tmp_path) == []  # "o" was created before the skip


# -- full disk while creating a store; what `sweep status` says -------------------------------------------


def test_full_disk_while_creating_a_store_leaves_nothing(tmp_path, tmpfs):
    """A 96 KiB tmpfs holds SQLite's first page but not the 32 KiB -shm plus the log: the store file (4096
    bytes, no table) was left behind and `sweep status` then called it "not an afltheory sweep store"."""
    (tmp_path / "spec.toml").write_text(SPEC)
    mnt = tmpfs("96k")
    r = cli("sweep", "run", "spec.toml", "--store", mnt / "s.sqlite", "--task", "synthetic", cwd=tmp_path)
    assert one_line_error(r) and "cannot be created" in r.stderr and "nothing was left behind" in r.stderr
    assert os.listdir(mnt) == []
    r = cli("sweep", "status", "--store", mnt / "s.sqlite", cwd=tmp_path)
    assert one_line_error(r) and "does not exist" in r.stderr


def test_status_of_a_store_with_no_spec_and_with_rows_in_the_log(tmp_path):
    from afltheory.sweep import parse_spec, run_sweep
    from afltheory.sweep.store import Store

    with Store(tmp_path / "e.sqlite"):  # the schema, no plan: where a run stopped by a full disk can end
        pass
    r = cli("sweep", "status", "--store", "e.sqlite", cwd=tmp_path)
    assert r.returncode == 0 and "no spec planned yet" in r.stdout and "planned 0" not in r.stdout
    sqlite3.connect(tmp_path / "blank.db").execute("pragma user_version=1").connection.close()  # no table
    r = cli("sweep", "status", "--store", "blank.db", cwd=tmp_path)
    assert one_line_error(r) and "an empty SQLite database" in r.stderr and "not an afltheory" not in r.stderr
    run_sweep(parse_spec(SPEC, check_objects=False), tmp_path / "s.sqlite", task="synthetic")
    r = cli("sweep", "status", "--store", "s.sqlite", cwd=tmp_path)
    assert r.returncode == 0 and "finished 2" in r.stdout and "-wal" not in r.stdout  # checkpointed
    con = sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None)  # a live writer's uncheckpointed row
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("INSERT OR REPLACE INTO meta VALUES ('note', 'x')")
    try:
        wal = os.path.getsize(tmp_path / "s.sqlite-wal")
        assert wal > 0
        r = cli("sweep", "status", "--store", "s.sqlite", cwd=tmp_path)
        assert r.returncode == 0 and f"{wal} bytes of committed rows are still in s.sqlite-wal" in r.stdout
        r = cli("sweep", "status", "--store", "s.sqlite", "--json", cwd=tmp_path)
        assert f'"wal_bytes": {wal}' in r.stdout
        assert os.path.getsize(tmp_path / "s.sqlite-wal") == wal  # the live writer's log: read, not touched
        assert con.execute("SELECT value FROM meta WHERE key='note'").fetchone() == ("x",)
    finally:
        con.close()


def test_reading_a_store_leaves_no_side_files(tmp_path):
    """`sweep status/export/plot/copy/fit` read a finished store without leaving an empty -wal and a 32 KiB
    -shm beside it (a `mode=ro` reader did, every time), and without changing a byte of it."""
    import hashlib

    from afltheory.sweep import parse_spec, run_sweep

    run_sweep(parse_spec(SPEC, check_objects=False), tmp_path / "s.sqlite", task="synthetic")
    digest = hashlib.sha256((tmp_path / "s.sqlite").read_bytes()).hexdigest()
    before = sorted(os.listdir(tmp_path))
    assert before == ["s.sqlite", "s.sqlite.lock"]
    for argv, new in (
        (("status", "--json"), []),
        (("export", "--csv", "x.csv"), ["x.csv"]),
        (("copy", "--to", "c.sqlite"), ["c.sqlite"]),
        (("fit", "--x", "algorithm.eta_L"), []),
    ):
        r = cli("sweep", argv[0], "--store", "s.sqlite", *argv[1:], cwd=tmp_path)
        assert r.returncode == 0, (argv, r.stderr)
        before = sorted(before + new)
        assert sorted(os.listdir(tmp_path)) == before, argv
    assert hashlib.sha256((tmp_path / "s.sqlite").read_bytes()).hexdigest() == digest


def test_a_full_disk_mid_run_says_how_many_tasks_are_kept(tmp_path, monkeypatch, capsys):
    from afltheory.sweep import cli as sweep_cli
    from afltheory.sweep.store import Store

    (tmp_path / "spec.toml").write_text(SPEC)
    real, calls = Store.add_result, []

    def full(self, *a, **k):
        calls.append(1)
        if len(calls) > 1:
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, *a, **k)

    monkeypatch.setattr(Store, "add_result", full)
    argv = ["run", str(tmp_path / "spec.toml"), "--store", str(tmp_path / "s.sqlite"), "--task", "synthetic"]
    assert sweep_cli.main([*argv, "--progress", "none"]) == 2
    err = capsys.readouterr().err
    assert "disk is full; 1 finished task(s) committed before this are kept" in err, err


# -- '-' as a path ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "flag", "role"),
    [
        (("adversary", "thm2", "--budget", "4", "--out", "-"), "--out", "stdout"),
        (("adversary", "thm2", "--budget", "4", "--json", "-"), "--json", "stdout"),
        (("adversary", "thm2", "--budget", "4", "--journal", "-"), "--journal", "stdout"),
        (("adversary", "thm2", "--budget", "4", "--file", "-"), "--file", "stdin"),
        (("check", "--only", "thm2", "--out", "-"), "--out", "stdout"),
        (("verify", "good.py", "--out", "-"), "--out", "stdout"),
        (("verify", "-", "--out", "rep"), "FILE.py", "stdin"),
        (("claims", "list", "--file", "-"), "--file", "stdin"),
        (("sweep", "run", "spec.toml", "--store", "-"), "--store", "stdout"),
        (("sweep", "run", "-", "--store", "s.sqlite"), "SPEC", "stdin"),
        (("sweep", "status", "--store", "-"), "--store", "stdin"),
        (("sweep", "fit", "--store", "-", "--x", "rounds"), "--store", "stdin"),
        (("sweep", "export", "--store", "-", "--csv", "x.csv"), "--store", "stdin"),
        (("sweep", "export", "--store", "spec.toml", "--csv", "-"), "--csv", "stdout"),
        (("sweep", "copy", "--store", "spec.toml", "--to", "-"), "--to", "stdout"),
        (("sweep", "plot", "--store", "spec.toml", "--out", "-"), "--out", "stdout"),
        (("pep", "thm2", "--T", "2", "--json", "-"), "--json", "stdout"),
        (("real", "wallclock", "--out", "-"), "--out", "stdout"),
        (("real", "wallclock", "--data-dir", "-"), "--data-dir", "stdin"),
    ],
)
def test_dash_is_refused_where_it_is_not_stdout(tmp_path, argv, flag, role):
    (tmp_path / "spec.toml").write_text(SPEC)
    (tmp_path / "good.py").write_text("x = 1\n")
    r = cli(*argv, cwd=tmp_path)
    assert one_line_error(r), r
    assert f"{flag} '-': {role} is not" in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["good.py", "spec.toml"]  # no file or directory named "-"
