"""Round 4, D1-D4: an output is never an input. Every command refuses an output path that resolves (symlinks,
``..``, hard links) to a file it reads (the store and its -wal/-shm, the spec, a journal, a claim file) or to
another output, before anything is written; a journal is appended to or refused, never replaced."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from afltheory import _io
from afltheory.pep.journal import SearchJournal, check_journal_path
from tests.io._cli import cli as _cli
from tests.io._cli import pep_tiny
from tests.sweep.conftest import TINY


def _digest(p):
    return hashlib.sha256(open(p, "rb").read()).hexdigest()


# -- the shared mechanism ------------------------------------------------------------------------------


def test_same_file_symlink_dotdot_and_hardlink(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("x")
    os.symlink(a, tmp_path / "link")
    os.link(a, tmp_path / "hard")
    (tmp_path / "d").mkdir()
    assert _io.same_file(a, tmp_path / "link")
    assert _io.same_file(a, tmp_path / "hard")
    assert _io.same_file(a, tmp_path / "d" / ".." / "a.txt")
    assert not _io.same_file(a, tmp_path / "b.txt")  # b does not exist
    assert _io.same_file(tmp_path / "new", tmp_path / "d" / ".." / "new")  # neither exists: same real path


def test_refuse_overlap_names_both_flags(tmp_path):
    store = tmp_path / "s.sqlite"
    store.write_bytes(b"data")
    os.symlink(store, tmp_path / "alias")
    with pytest.raises(ValueError, match=r"--out .*alias.* same file as --store .*never an input"):
        _io.refuse_overlap([("--store", store)], [("--out", tmp_path / "alias")])
    with pytest.raises(ValueError, match=r"--json 'x' is the same file as --journal 'x'"):
        _io.refuse_overlap([], [("--journal", "x"), ("--json", "x")])
    outs = [("--out", tmp_path / "o.png"), ("--json", "-")]
    _io.refuse_overlap([("--store", store), ("--file", None)], outs)
    assert store.read_bytes() == b"data"


@pytest.mark.parametrize("bad", ["", "   ", "-"])
def test_empty_and_dash_paths_refused(bad):
    with pytest.raises(ValueError, match="--csv"):
        _io.check_output_file(bad, "--csv")
    with pytest.raises(ValueError, match="SPEC"):
        _io.path_arg(bad, "SPEC")
    assert _io.check_output_file("-", "--json", stdout_ok=True) == "-"


# -- journals: appended to or refused --------------------------------------------------------------------


@pytest.mark.parametrize(
    "content", [b"my notes\n", b"my notes, no newline", b'{"k": 0}\n', b'{"stamp": 1}\n', b"\xff\xfe\n"]
)
def test_a_file_that_is_not_a_journal_is_never_replaced(tmp_path, content):
    p = tmp_path / "notes.txt"
    p.write_bytes(content)
    with pytest.raises(ValueError, match="not a search journal"):
        check_journal_path(p)
    if content != b"\xff\xfe\n":
        with pytest.raises(ValueError, match="not a search journal"):
            SearchJournal(p, {"claim": "x"})
    assert p.read_bytes() == content


def test_journal_through_a_symlink_refused_and_target_kept(tmp_path):
    target = tmp_path / "important.txt"
    target.write_text("keep me\n")
    os.symlink(target, tmp_path / "j")
    with pytest.raises(ValueError, match="not a search journal"):
        SearchJournal(tmp_path / "j", {"claim": "x"})
    assert target.read_text() == "keep me\n"


def test_a_journal_of_this_search_is_appended_to(tmp_path):
    p = tmp_path / "j"
    j = SearchJournal(p, {"claim": "x"})
    j.record(0, "k0", 1.5)
    check_journal_path(p)  # a journal: accepted
    j2 = SearchJournal(p, {"claim": "x"})
    assert j2.get(0, "k0") == 1.5 and j2.found == 1
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    SearchJournal(empty, {"claim": "x"})  # an empty file holds nothing to lose: adopted
    assert json.loads(empty.read_text().splitlines()[0]) == {"stamp": {"claim": "x"}}


# -- the commands (D1-D4 reproducers) --------------------------------------------------------------------


@pytest.fixture
def tiny_path(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


@pytest.fixture
def store(tmp_path, tiny_path):
    r = _cli("sweep", "run", str(tiny_path), "--store", "s.sqlite", "--progress", "none", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return tmp_path / "s.sqlite"


def test_sweep_outputs_never_replace_the_store(tmp_path, store, tiny_path):
    before = _digest(store)
    os.symlink(store, tmp_path / "alias.png")
    calls = [
        ("plot", "--store", "s.sqlite", "--out", "s.sqlite"),  # D1
        ("export", "--store", "s.sqlite", "--csv", "s.sqlite"),  # D2
        ("export", "--store", "s.sqlite", "--csv", "./sub/../s.sqlite"),
        ("plot", "--store", "s.sqlite", "--out", "alias.png"),  # through a symlink
        ("copy", "--store", "s.sqlite", "--to", "s.sqlite"),
        ("export", "--store", "s.sqlite", "--csv", "s.sqlite-wal"),
    ]
    (tmp_path / "sub").mkdir()
    for argv in calls:
        r = _cli("sweep", *argv, cwd=tmp_path)
        assert r.returncode == 2, (argv, r.stderr)
        assert "an output is never an input" in r.stderr and "Traceback" not in r.stderr, argv
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert _digest(store) == before
    spec_before = _digest(tiny_path)
    r = _cli("sweep", "run", str(tiny_path), "--store", str(tiny_path), cwd=tmp_path)
    assert r.returncode == 2 and "same file as SPEC" in r.stderr, r.stderr
    assert _digest(tiny_path) == spec_before
    r = _cli("sweep", "export", "--store", "s.sqlite", "--csv", "-", cwd=tmp_path)
    assert r.returncode == 2 and "'-'" in r.stderr and not (tmp_path / "-").exists()


def test_adversary_and_pep_journal_never_replace_a_file(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    os.symlink(notes, tmp_path / "link.txt")
    for argv in (
        ("adversary", "thm2", "--budget", "8", "--journal", "notes.txt"),  # D3
        ("adversary", "thm2", "--budget", "8", "--journal", "link.txt"),
        pep_tiny("exhaustive", "--journal", "notes.txt"),
    ):
        r = _cli(*argv, cwd=tmp_path)
        assert r.returncode != 0 and "not a search journal" in r.stderr, (argv, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr
    assert notes.read_text() == "my notes\n"
    for argv in (
        ("adversary", "thm2", "--budget", "8", "--journal", "x", "--json", "x"),  # D4
        pep_tiny("exhaustive", "--journal", "x", "--json", "x"),
    ):
        r = _cli(*argv, cwd=tmp_path)
        assert r.returncode != 0 and "same file as --journal" in r.stderr, (argv, r.stderr)
        assert not (tmp_path / "x").exists()
