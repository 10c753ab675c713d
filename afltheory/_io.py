"""Output paths that destroy nothing: validate before the work starts, write atomically.

Every command-line output (``check/verify --json/--out``, ``sweep run --store``, ``sweep export --csv``,
``sweep plot --out``, ``adversary --json/--out``, ``pep --json``, figures) goes through this module:

- ``check_output_file(path, flag)`` / ``check_output_dir(path, flag)`` run *before* any work: the path must
  be a regular file (or a directory for ``--out``) or not exist yet, its parent must exist or be creatable,
  and the directory must accept a new file (probed by creating and removing one). The check creates nothing:
  missing directories are made when the output is written (``atomic_open``, ``make_dirs``) and removed again
  when that write fails, so a refused or failed command leaves no empty directory. Device files, FIFOs and
  sockets are refused (never opened: a FIFO would block). Each refusal is a ``ValueError`` of one line naming
  the flag, the path and what it is (missing / a directory / not writable / not a regular file).
- ``atomic_write`` / ``atomic_open`` write a temporary file in the same directory, fsync it and
  ``os.replace`` it over the target: a reader sees the old file or the complete new one; a full disk leaves
  the old file (or none) and no temporary behind. A non-regular target is never replaced.
- ``refuse_overlap(inputs, outputs)`` runs before any work too: no output resolves (symlinks, ``..`` and
  hard links included) to a file the command reads (a store, a spec, a journal, a claim file) or to another
  output (``--journal x --json x``). "An output is never an input": a ValueError of one line naming both
  flags, before anything is opened for writing.
- ``path_arg(path, flag)``: an empty path or ``-`` (where stdout is not documented) refused.
- ``write_json`` serialises with ``allow_nan=False`` *before* touching the disk: NaN/Infinity never reach a
  JSON file (strict JSON), and a failed serialisation leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any

__all__ = [
    "atomic_open",
    "atomic_write",
    "check_ranges",
    "check_output_dir",
    "check_output_file",
    "describe_path",
    "dumps_strict",
    "json_containers",
    "jsonable",
    "make_dirs",
    "MAX_SEED",
    "path_arg",
    "refuse_overlap",
    "remove_dirs",
    "same_file",
    "replace_target",
    "write_json",
]

_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def describe_path(path: str | os.PathLike) -> str | None:
    """What ``path`` is when it is not a regular file: "a directory", "a FIFO", "a character device", ...;
    None for a regular file or a path that does not exist (symlinks are followed; a dangling one is
    "a dangling symlink")."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "a dangling symlink" if os.path.islink(path) else None
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _nearest_existing(d: str) -> str:
    while not os.path.exists(d):
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return d


def _probe_dir(d: str, flag: str, path: str) -> None:
    """A new file can be created in the existing directory ``d`` (really tried: root ignores mode bits, and
    a read-only filesystem shows only here)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".afltheory-probe-", dir=d)
    except OSError as exc:
        raise ValueError(f"{flag} {path!r}: directory {d!r} is not writable ({exc.strerror})") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def _check_parent(path: str, flag: str, create: bool) -> str:
    d = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(d):
        _probe_dir(d, flag, path)
        return d
    top = _nearest_existing(d)
    what = describe_path(top)
    if os.path.exists(top) and not os.path.isdir(top):
        raise ValueError(f"{flag} {path!r}: its parent {top!r} is {what or 'a file'}, not a directory")
    if not create:
        raise ValueError(f"{flag} {path!r}: directory {d!r} is missing")
    # creatable: the nearest existing ancestor accepts new entries. Nothing is created here: the missing
    # directories are made when the output is written (``atomic_open``, ``make_dirs``), so a command refused
    # or failing after this check leaves no empty directory behind (issue 42, D18)
    _probe_dir(top, flag, path)
    return d


def make_dirs(d: str | os.PathLike) -> list[str]:
    """Create the missing directories of ``d`` (parents first); return the ones created, deepest first, so a
    failed write can remove them again (``remove_dirs``)."""
    made: list[str] = []
    p = os.path.abspath(os.fspath(d))
    while not os.path.isdir(p):
        made.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for q in reversed(made):
        try:
            os.mkdir(q)
        except FileExistsError:
            if not os.path.isdir(q):
                raise
    return made


def remove_dirs(made: list[str]) -> None:
    """Remove the directories ``make_dirs`` created, deepest first, while they are empty."""
    for q in made:
        try:
            os.rmdir(q)
        except OSError:
            return


def check_output_file(
    path: str | os.PathLike, flag: str, *, stdout_ok: bool = False, create_parents: bool = True
) -> str:
    """Refuse an unusable output file path before any work starts; return it as a string. It must be a
    regular file or not exist; its directory must exist (or be creatable when ``create_parents``) and accept
    a new file. ``stdout_ok``: ``"-"`` (stdout) is accepted. ValueError (one line naming ``flag``)
    otherwise."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{flag} {path!r} must be a path")
    p = os.fspath(path)
    if p == "-":
        if stdout_ok:
            return p
        raise ValueError(_DASH.format(flag=flag))
    if not p.strip() or p.endswith(os.sep):
        raise ValueError(f"{flag} {p!r}: give a file path" + (" (or '-' for stdout)" if stdout_ok else ""))
    what = describe_path(p)
    if what == "a directory":
        raise ValueError(
            f"{flag} {p!r} is a directory; give a file path" + (" (or '-' for stdout)" if stdout_ok else "")
        )
    if what is not None:
        raise ValueError(f"{flag} {p!r} is {what}, not a regular file; refusing to write there")
    if os.path.exists(p) and not os.access(p, os.W_OK):
        raise ValueError(f"{flag} {p!r} is not writable")
    _check_parent(os.path.realpath(p), flag, create_parents)
    return p


def check_output_dir(path: str | os.PathLike, flag: str, *, create: bool = True) -> str:
    """Refuse an unusable output directory before any work starts (it must be a directory or not exist; with
    ``create`` a missing one must be creatable: the writer makes it, this check creates nothing; it must
    accept new files); return it. ValueError naming ``flag``."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{flag} {path!r} must be a path")
    p = os.fspath(path)
    if not p:
        raise ValueError(f"{flag} {p!r}: give a directory path")
    if p == "-":  # never a directory named "-" made by accident (issue 42, D19)
        raise ValueError(
            f"{flag} '-': stdout is not an output here; give a directory path (./- for one named -)"
        )
    what = describe_path(p)
    if os.path.exists(p) and what != "a directory":
        raise ValueError(f"{flag} {p!r} is {what or 'a file'}; it must be a directory (created if missing)")
    if not os.path.exists(p):
        if what is not None:  # a dangling symlink
            raise ValueError(f"{flag} {p!r} is {what}; it must be a directory")
        _check_parent(os.path.join(os.path.abspath(p), "x"), flag, create)
    else:
        _probe_dir(p, flag, p)
    return p


_DASH = "{flag} '-': stdout is not an output here; give a file path (./- for a file named -)"
_DASH_IN = "{flag} '-': stdin is not an input here; give a file path (./- for a file named -)"


def check_ranges(args: Any, ranges: dict[str, tuple[int, int, str]]) -> None:
    """Refuse (ValueError of one line naming the flag and the allowed range) an integer option of ``args``
    (an argparse Namespace) outside its range: ``ranges`` maps each dest to (lo, hi, flag); None (not given)
    is skipped, a list (``nargs``) checked item by item. Called first thing in a command, before any work:
    ``2**64``, ``10**23`` or ``-1`` never reach a computation (no OverflowError)."""
    for dest, (lo, hi, flag) in ranges.items():
        v = getattr(args, dest, None)
        for x in v if isinstance(v, list) else [v]:
            if x is None:
                continue
            if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
                raise ValueError(f"{flag}={x} is outside the allowed range {lo} .. {hi}")


#: the largest seed the generators accept (numpy SeedSequence takes any int; the searches add offsets)
MAX_SEED = 2**63 - 1


def path_arg(
    path: str | os.PathLike | None, flag: str, *, stdout_ok: bool = False, reading: bool = False
) -> str:
    """``path`` as a string; an empty path, one ending in a separator where a file is meant, or ``-``
    (unless ``stdout_ok``: then it means stdout) is a ValueError naming ``flag``. ``reading``: ``path`` is an
    input (a store, a spec, a claim file): ``-`` is refused as stdin, which no such option reads."""
    if path is None or not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{flag} {path!r} must be a path")
    p = os.fspath(path)
    if not p.strip():
        raise ValueError(f"{flag} {p!r}: an empty path; give a file path")
    if p == "-" and not stdout_ok:
        raise ValueError((_DASH_IN if reading else _DASH).format(flag=flag))
    return p


def _identity(path: str) -> tuple[str, tuple[int, int] | None]:
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
        return real, (st.st_dev, st.st_ino)
    except OSError:
        return real, None


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """``a`` and ``b`` name one file: the same real path (symlinks and ``..`` resolved), or, for existing
    files, the same device and inode (hard links)."""
    ra, ia = _identity(os.fspath(a))
    rb, ib = _identity(os.fspath(b))
    return ra == rb or (ia is not None and ia == ib)


def refuse_overlap(
    inputs: list[tuple[str, str | os.PathLike | None]], outputs: list[tuple[str, str | os.PathLike | None]]
) -> None:
    """An output is never an input: refuse (ValueError of one line naming both flags) an output path that
    is the same file as an input (the store, the spec, a journal, a claim file) or as another output. Entries
    whose path is None (option not given) or ``-`` (stdout) are ignored. Called before any work starts."""
    ins = [(f, os.fspath(p)) for f, p in inputs if p is not None and os.fspath(p) not in ("", "-")]
    outs = [(f, os.fspath(p)) for f, p in outputs if p is not None and os.fspath(p) not in ("", "-")]
    for i, (fo, po) in enumerate(outs):
        for fi, pi in ins:
            if same_file(po, pi):
                raise ValueError(
                    f"{fo} {po!r} is the same file as {fi} {pi!r}: an output is never an input; "
                    "give another path (nothing was written)"
                )
        for fo2, po2 in outs[:i]:
            if same_file(po, po2):
                raise ValueError(
                    f"{fo} {po!r} is the same file as {fo2} {po2!r}: two outputs cannot share a file; "
                    "give another path (nothing was written)"
                )


def replace_target(path: str | os.PathLike) -> str:
    """The file to replace: symlinks resolved; a non-regular target refused (OSError-free ValueError)."""
    p = os.path.realpath(os.fspath(path))
    what = describe_path(p)
    if what is not None:
        raise ValueError(f"{os.fspath(path)!r} is {what}, not a regular file; refusing to replace it")
    return p


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **kw: Any) -> Iterator[IO]:
    """Open a temporary file next to ``path`` for writing; on success fsync it and ``os.replace`` it over
    ``path`` (new files get the usual ``0o666 & ~umask`` mode, replaced files keep theirs); on any error
    (a full disk, an exception in the block) remove it, leaving ``path`` as it was. Refuses (ValueError) a
    target that exists and is not a regular file."""
    if "w" not in mode:
        raise ValueError(f"mode={mode!r} must be a write mode ('w' or 'wb')")
    target = replace_target(path)
    d = os.path.dirname(target)
    try:
        old_mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        old_mode = 0o666 & ~umask
    made = make_dirs(d)  # the output's missing directories, removed again if the write fails
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.tmp-", dir=d)
    except BaseException:
        remove_dirs(made)
        raise
    try:
        with os.fdopen(fd, mode, **kw) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, old_mode)
        replace_target(path)  # still not replaced by a device/FIFO meanwhile
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        remove_dirs(made)
        raise


def atomic_write(path: str | os.PathLike, data: str | bytes) -> str:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically (see ``atomic_open``); returns the
    path."""
    with atomic_open(path, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
    return os.fspath(path)


def json_containers(v: Any, leaf: Callable[[Any], Any]) -> Any:
    """``v`` with JSON's containers and integers: dict keys as strings, lists, tuples and numpy arrays as
    lists, numpy bools and integers as Python ones; every other leaf ``x`` (a float, a string, ``None``, any
    object) becomes ``leaf(x)`` (the caller's rule for non-finite floats and objects)."""
    import numpy as np

    if isinstance(v, dict):
        return {str(k): json_containers(x, leaf) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_containers(x, leaf) for x in v]
    if isinstance(v, np.ndarray):
        return json_containers(v.tolist(), leaf)
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    return leaf(v)


def jsonable(v: Any) -> Any:
    """``v`` with numpy scalars/arrays as Python numbers/lists, tuples as lists, dict keys as strings,
    infinities as the strings ``"inf"``/``"-inf"``, NaN as ``None`` (no value), any other object as its
    ``str``: strict JSON accepts the result."""
    return json_containers(v, _jsonable_leaf)


def _jsonable_leaf(v: Any) -> Any:
    """``jsonable`` of a leaf: a float (NaN as None, ±inf as "inf"/"-inf"), a JSON scalar, or any object's
    text."""
    import math

    import numpy as np

    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return None
        return f if math.isfinite(f) else ("inf" if f > 0 else "-inf")
    if v is None or isinstance(v, (str, int)):
        return v
    return str(v)  # any other object (a dataclass, a path): its text


def dumps_strict(obj: Any, *, indent: int | None = 2) -> str:
    """``json.dumps(obj, allow_nan=False)``: a ValueError naming the problem instead of NaN/Infinity
    tokens (which are not JSON)."""
    try:
        return json.dumps(obj, indent=indent, allow_nan=False)
    except ValueError as exc:
        raise ValueError(f"refusing to write non-JSON numbers (NaN/Infinity): {exc}") from None


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2) -> str:
    """Serialise ``obj`` as strict JSON (before touching the disk) and write it to ``path`` atomically, or
    to stdout when ``path`` is ``"-"``; returns the path."""
    text = dumps_strict(obj, indent=indent) + "\n"
    if os.fspath(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return "-"
    return atomic_write(path, text)
