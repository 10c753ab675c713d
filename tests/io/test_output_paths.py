"""afltheory._io: output paths validated before the work, written atomically, never replacing a device file,
a FIFO or a socket. Device nodes and FIFOs are private ones made inside tmp_path (never /dev)."""

from __future__ import annotations

import errno
import json
import os
import socket
import stat

import pytest

from afltheory import _io


def _chardev(tmp_path, name="null"):
    """A private character device (1, 3: the null device's numbers) inside tmp_path; skip if mknod is not
    permitted (not root)."""
    p = tmp_path / name
    try:
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"mknod not permitted here ({exc})")
    return p


def _fifo(tmp_path, name="fifo"):
    p = tmp_path / name
    os.mkfifo(p)
    return p


def test_regular_and_new_files_accepted(tmp_path):
    assert _io.check_output_file(tmp_path / "new.json", "--json") == str(tmp_path / "new.json")
    (tmp_path / "old.json").write_text("{}")
    _io.check_output_file(tmp_path / "old.json", "--json")
    _io.check_output_file("-", "--json", stdout_ok=True)
    _io.check_output_file(tmp_path / "a" / "b" / "c.json", "--json")  # parents creatable
    assert not (tmp_path / "a").exists()  # creatable, not created: the writer makes them (issue 42, D18)


@pytest.mark.parametrize("kind", ["dir", "fifo", "chardev", "socket", "dangling"])
def test_non_regular_refused_with_flag_and_kind(tmp_path, kind):
    if kind == "dir":
        p, what = tmp_path, "is a directory"
    elif kind == "fifo":
        p, what = _fifo(tmp_path), "is a FIFO"
    elif kind == "chardev":
        p, what = _chardev(tmp_path), "is a character device"
    elif kind == "socket":
        p, what = tmp_path / "s.sock", "is a socket"
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))
    else:
        p, what = tmp_path / "link", "dangling symlink"
        os.symlink(tmp_path / "nowhere" / "x", p)
    before = os.lstat(p)
    with pytest.raises(ValueError, match=f"--csv .*{what}") as ei:
        _io.check_output_file(p, "--csv")
    assert "\n" not in str(ei.value)
    assert os.lstat(p).st_mode == before.st_mode and os.lstat(p).st_ino == before.st_ino


def test_symlink_to_device_refused_and_write_refused(tmp_path):
    dev = _chardev(tmp_path)
    link = tmp_path / "link.json"
    os.symlink(dev, link)
    with pytest.raises(ValueError, match="character device"):
        _io.check_output_file(link, "--json")
    with pytest.raises(ValueError, match="character device"):
        _io.atomic_write(link, "x")
    with pytest.raises(ValueError, match="character device"):
        _io.write_json(dev, {"a": 1})
    assert stat.S_ISCHR(os.stat(dev).st_mode) and os.path.islink(link)
    assert sorted(os.listdir(tmp_path)) == ["link.json", "null"]  # no temporary left behind


def test_parent_problems(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="--json .*parent .* not a directory"):
        _io.check_output_file(f / "out.json", "--json")
    with pytest.raises(ValueError, match="--store .*directory .* is missing"):
        _io.check_output_file(tmp_path / "no" / "s.db", "--store", create_parents=False)
    with pytest.raises(ValueError, match="--out .* a file; it must be a directory"):
        _io.check_output_dir(f, "--out")
    fifo = _fifo(tmp_path)
    with pytest.raises(ValueError, match="--out .* a FIFO"):
        _io.check_output_dir(fifo, "--out")


def test_unwritable_directory(tmp_path, monkeypatch):
    """Root ignores mode bits, so the probe's failure is simulated (EACCES from mkstemp)."""

    def deny(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(_io.tempfile, "mkstemp", deny)
    with pytest.raises(ValueError, match="--json .* is not writable"):
        _io.check_output_file(tmp_path / "x.json", "--json")
    with pytest.raises(ValueError, match="--out .* is not writable"):
        _io.check_output_dir(tmp_path, "--out")


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    p = tmp_path / "out.csv"
    p.write_text("old")
    os.chmod(p, 0o640)
    with pytest.raises(RuntimeError), _io.atomic_open(p, "w") as fh:
        fh.write("new, partial")
        raise RuntimeError("disk full halfway")
    assert p.read_text() == "old" and os.listdir(tmp_path) == ["out.csv"]

    def enospc(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_io.os, "fsync", enospc)
    with pytest.raises(OSError, match="No space"):
        _io.atomic_write(p, "new")
    assert p.read_text() == "old" and os.listdir(tmp_path) == ["out.csv"]
    monkeypatch.undo()
    _io.atomic_write(p, "new")
    assert p.read_text() == "new" and stat.S_IMODE(os.stat(p).st_mode) == 0o640  # mode kept


def test_write_json_is_strict(tmp_path):
    p = tmp_path / "x.json"
    with pytest.raises(ValueError, match="NaN/Infinity"):
        _io.write_json(p, {"a": float("nan")})
    with pytest.raises(ValueError, match="NaN/Infinity"):
        _io.write_json(p, {"a": [1, float("inf")]})
    assert not p.exists()
    _io.write_json(p, {"a": 1.5})
    assert json.loads(p.read_text()) == {"a": 1.5}


def test_full_disk_leaves_previous_output_whole(tmp_path, capsys):
    """A really full filesystem (a 64 KiB tmpfs filled up; skipped where mounting is not permitted): the
    command fails with one line (exit 1), the previous --json file is byte-identical and no 0-byte, partial
    or temporary file is left."""
    import subprocess

    from afltheory.cli import main

    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here (the simulated ENOSPC test covers atomic writes)")
    try:
        old = mnt / "out.json"
        old.write_text('{"previous": true}\n')
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)  # fill the filesystem (unbuffered)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        code = main(["adversary", "thm2", "--budget", "8", "--replicates", "2", "--json", str(old)])
        err = capsys.readouterr().err
        assert code == 1 and "No space left" in err and len(err.strip().splitlines()) == 1
        assert old.read_text() == '{"previous": true}\n'
        assert sorted(os.listdir(mnt)) == ["filler", "out.json"]
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
