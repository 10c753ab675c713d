"""Round 4, D8-D16 and D19: every option validated before any work. ``--file`` is honoured or refused for
every CLAIM (missing, a directory, a FIFO, a device node, a syntax error, null bytes, non-UTF-8, sys.exit at
import, a Claim without its bound); huge integers, NaN, empty paths are one-line errors (exit 2); a huge
search is refused with its projection unless --allow-large; a foreign SQLite file is inspected read-only.
FIFOs and device nodes are private ones made inside tmp_path (never the machine's /dev)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import sys

import pytest

from tests.io._cli import cli, one_line_error
from tests.sweep.conftest import TINY

BAD_FILES = {
    "syntax.py": (b"x = (\n", "SyntaxError"),
    "nul.py": (b"x = 1\x00\n", "null bytes"),
    "latin.py": (b'x = "\xff"\n', "utf-8"),
    "exits.py": (b"import sys\nsys.exit(0)\n", "sys.exit(0)"),
    "nobound.py": (b'from afltheory.claims import Claim\nc = Claim(id="zz", title="t")\n', "bound"),
}


def _specials(tmp_path):
    """name -> (path, what the refusal says): a missing file, a directory, a FIFO, a private device node."""
    out = {"missing": (tmp_path / "no" / "such.py", "does not exist"), "dir": (tmp_path, "a directory")}
    os.mkfifo(tmp_path / "fifo.py")
    out["fifo"] = (tmp_path / "fifo.py", "a FIFO")
    try:
        os.mknod(tmp_path / "dev.py", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        out["dev"] = (tmp_path / "dev.py", "a character device")
    except OSError:  # not root: the other kinds still run
        pass
    return out


def test_claims_list_file_errors_are_one_line(tmp_path):
    cases = {n: (tmp_path / n, why) for n, (data, why) in BAD_FILES.items()}
    for n, (p, _) in cases.items():
        p.write_bytes(BAD_FILES[n][0])
    cases.update(_specials(tmp_path))
    for name, (path, why) in cases.items():
        r = cli("claims", "list", "--file", path, cwd=tmp_path)
        assert one_line_error(r), (name, r)
        assert "--file" in r.stderr and why in r.stderr, (name, r.stderr)
        assert r.stdout == "", name  # D10: nothing listed, never a silent exit 0


def test_adversary_file_is_honoured_or_refused_for_every_claim(tmp_path):
    (tmp_path / "syntax.py").write_bytes(b"x = (\n")
    paths = {"syntax": (tmp_path / "syntax.py", "SyntaxError")} | _specials(tmp_path)
    for claim in ("thm2", "lemma2", "no_such_claim"):
        for name, (path, why) in paths.items():
            r = cli("adversary", claim, "--budget", "4", "--file", path, cwd=tmp_path)
            assert one_line_error(r) and why in r.stderr, (claim, name, r)
    (tmp_path / "other.py").write_text("x = 1\n")  # loads, defines no claim named thm2: refused, not ignored
    r = cli("adversary", "thm2", "--budget", "4", "--file", "other.py", cwd=tmp_path)
    assert one_line_error(r) and "defines no claim 'thm2'" in r.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ("adversary", "thm2", "--seeds", str(10**23)),
        ("adversary", "thm2", "--jobs", str(10**23)),
        ("adversary", "thm2", "--budget", str(10**23)),
        ("adversary", "thm2", "--seed", str(2**64)),
        ("adversary", "thm2", "--replicates", "-1"),
        ("adversary", "thm2", "--seeds", "1e23"),
        ("sweep", "run", "s.toml", "--store", "s.sqlite", "--jobs", str(10**23)),
        ("check", "--seed", str(2**64), "--out", "rep"),
        ("check", "--jobs", "-1", "--out", "rep"),
        ("pep", "thm2", "--T", str(10**23)),
        ("real", "table2", "--threads", "-1"),
        ("real", "table2", "--ps", "1", "0"),
        ("real", "table2", "--seed", str(2**64)),
        ("real", "wallclock", "--target", "nan"),
        ("real", "wallclock", "--target", "2"),
        ("adversary",),
    ],
)
def test_bad_numbers_are_one_line_errors(tmp_path, argv):
    r = cli(*argv, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r
    assert not os.listdir(tmp_path), "nothing may be written"


@pytest.mark.parametrize(
    "argv",
    [
        ("adversary", "thm2", "--budget", "4", "--json", ""),
        ("adversary", "thm2", "--budget", "4", "--out", ""),
        ("pep", "thm2", "--T", "2", "--json", ""),
        ("check", "--only", "thm2", "--json", "", "--out", "rep"),
        ("check", "--only", "thm2", "--out", ""),
    ],
)
def test_empty_output_paths_are_refused_not_ignored(tmp_path, argv):
    r = cli(*argv, cwd=tmp_path)
    assert one_line_error(r) and "''" in r.stderr, r


def test_huge_pep_search_refused_with_its_projection(tmp_path):
    r = cli(
        "pep",
        "thm2",
        "--m",
        "1",
        "--K",
        "1",
        "--T",
        "40",
        "--tau",
        "3",
        "--search",
        "exhaustive",
        cwd=tmp_path,
    )
    # hand count: M = 2; rounds 1, 2, 3..39 offer 2*2, 2*3, 2*4 choices: 4 * 6 * 8**37 = 6.23e34 schedules
    assert one_line_error(r) and "6.23e+34 PEP solves" in r.stderr and "--allow-large" in r.stderr
    from afltheory.pep.cli import search_solves

    assert search_solves("exhaustive", 2, 1, 40, 3, 2) == pytest.approx(4 * 6 * 8.0**37)
    from afltheory.pep.search import schedule_count  # the enumeration itself: the plain-loop reference

    for M, m, T, tau in ((3, 2, 3, 1), (4, 2, 4, 2), (2, 1, 6, 3)):
        assert search_solves("exhaustive", M, m, T, tau, 2) == pytest.approx(schedule_count(M, m, T, tau))
    assert search_solves("beam", 3, 2, 3, 1, 2) == pytest.approx(1 + 2 * 12 + 2 * 12)


def test_adversary_list_needs_no_claim(tmp_path):
    r = cli("adversary", "--list", cwd=tmp_path)
    assert r.returncode == 0 and "thm2" in r.stdout


def test_real_missing_extra_is_skipped_with_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError(name="torch")
    r = cli("real", "wallclock", "--backend", "torch", "--out", "o", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "SKIPPED (needs: pip install 'afltheory[torch]'" in r.stderr
    from experiments.cli import _install_hint

    assert _install_hint(ImportError("x", name="sklearn")) == "pip install 'afltheory[data]'"
    assert _install_hint(ImportError("x", name="numpy")) is None


def test_foreign_sqlite_inspected_read_only(tmp_path):
    db = tmp_path / "f.db"
    c = sqlite3.connect(db)
    c.execute("create table t(x)")
    c.execute("insert into t values (1)")
    c.commit()
    c.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    (tmp_path / "s.toml").write_text(TINY)
    r = cli("sweep", "run", "s.toml", "--store", "f.db", cwd=tmp_path)
    assert r.returncode == 2 and "never creates" in r.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # not switched to WAL (header bytes 18-19)
    assert db.read_bytes()[18:20] == b"\x01\x01"
    assert sorted(os.listdir(tmp_path)) == ["f.db", "s.toml"]


def test_full_disk_at_open_leaves_no_empty_side_files(tmp_path, monkeypatch):
    """D18: a store whose open fails with a full disk leaves no empty -wal/-shm (nor an empty new store)
    behind; existing files are kept. The full disk is simulated: _connect creates the side files, then
    raises SQLite's disk-full error."""
    from afltheory.sweep.store import Store, StoreError

    def full(self):
        for sfx in ("", "-wal", "-shm"):
            open(str(self.path) + sfx, "ab").close()
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "_connect", full)
    with pytest.raises(StoreError, match="disk is full"):
        Store(tmp_path / "new.sqlite")
    assert os.listdir(tmp_path) == []
    (tmp_path / "old.sqlite-wal").write_bytes(b"")  # existed before: not ours to remove
    with pytest.raises(StoreError):
        Store(tmp_path / "old.sqlite")
    assert sorted(os.listdir(tmp_path)) == ["old.sqlite-wal"]

    def locked(self):
        open(str(self.path) + "-wal", "ab").close()
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(Store, "_connect", locked)
    with pytest.raises(StoreError):
        Store(tmp_path / "busy.sqlite")
    assert "busy.sqlite-wal" in os.listdir(tmp_path)  # a live writer's log is never removed
