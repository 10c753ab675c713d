"""A journal of completed evaluations, so that an interrupted long search resumes where it stopped.

Used by ``afltheory.adversary.search`` (which re-exports it as ``afltheory.adversary.journal``) and
``pep.worst_schedule``; it lives here, below the adversary in the layers, so that both can import it.

A search that is deterministic given its seed (``adversary.search``, ``pep.worst_schedule``) draws the same
candidates again when it is rerun; only the evaluations cost time. The journal is a JSON-lines file: a first
line with the search's *stamp* (claim, class, seed, budget, … — whatever fixes the sequence of candidates),
then one line per completed evaluation: its index k, a digest of what was evaluated (the candidates' bytes),
and the result. A rerun with the same journal replays the search: evaluation k is read from the journal when
its digest matches (the same candidates), and computed (and appended) otherwise, so the resumed search ends
with the same result as an uninterrupted one. Floats round-trip exactly (JSON ``repr``); NaN/±inf are stored
as null/"inf"/"-inf".

Every line is appended with a flush and ``fsync``; a line cut short by an interruption (the last one) is
dropped on reading, and the file is rewritten atomically (``afltheory._io``) without it before appending. A
journal whose stamp differs (another search) is refused with a ValueError naming both, never overwritten;
so is an existing file that is not a journal at all (its first line is not a stamp): a journal is only ever
appended to (or its cut-short last line dropped), never replaced.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np

from .._io import atomic_write, check_output_file, dumps_strict, jsonable

__all__ = ["SearchJournal", "check_journal_path", "decode_floats", "digest"]


def digest(*parts: Any) -> str:
    """A SHA-256 hex digest of ``parts`` (numpy arrays by dtype, shape and bytes; others by ``repr``)."""
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, np.ndarray):
            a = np.ascontiguousarray(p)
            h.update(f"{a.dtype}{a.shape}".encode())
            h.update(a.tobytes())
        else:
            h.update(repr(p).encode())
        h.update(b"\x00")
    return h.hexdigest()


def decode_floats(v: Any) -> np.ndarray:
    """The inverse of ``_io.jsonable`` on a list of numbers: None → NaN, "inf"/"-inf" → ±inf."""
    return np.array(
        [np.nan if x is None else (np.inf if x == "inf" else -np.inf if x == "-inf" else x) for x in v],
        dtype=float,
    )


def check_journal_path(path: str | os.PathLike, flag: str = "--journal") -> str:
    """Before a search starts: ``path`` is usable as a journal (a regular file or missing, in a writable
    directory) and, when it exists and is not empty, its first line is a journal stamp (a file that is not a
    journal is never replaced). ValueError of one line naming ``flag`` otherwise; returns the path."""
    p = check_output_file(path, flag)
    if os.path.exists(p) and os.path.getsize(p) > 0:
        with open(p, "rb") as fh:
            first = fh.readline(1 << 20)
        try:
            ok = first.endswith(b"\n") and _is_stamp_line(first.decode("utf-8"))
        except UnicodeDecodeError:
            ok = False
        if not ok:
            raise ValueError(
                f"{flag} {p!r} exists and is not a search journal (its first line is not a journal "
                "stamp); a journal is only appended to, never replaced: give another path"
            )
    return p


def _is_stamp_line(line: str) -> bool:
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and set(obj) == {"stamp"} and isinstance(obj["stamp"], dict)


class SearchJournal:
    """The journal at ``path`` for the search identified by ``stamp`` (a JSON-able dict).

    ``get(k, key)``: the recorded result of evaluation k if its digest is ``key``, else None; ``record(k, key,
    value)``: append it. ``reused``/``recorded``: evaluations read from / written to the journal by this
    object; ``found``: entries present when it was opened."""

    def __init__(self, path: str | os.PathLike, stamp: dict):
        self.path = check_output_file(path, "journal")
        self.stamp = json.loads(dumps_strict(jsonable(stamp), indent=None))
        self.entries: dict[int, dict] = {}
        self.reused = 0
        self.recorded = 0
        good: list[str] = []
        if os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
            complete = lines[:-1]  # the text after the last newline is an interrupted write
            if any(lines) and not _is_stamp_line(lines[0] if complete else ""):
                # not a journal (notes.txt, a JSON result, another program's file): never replaced
                raise ValueError(
                    f"journal={self.path!r} exists and is not a search journal (its first line is not a "
                    "journal stamp); a journal is only appended to: give another path"
                )
            for i, line in enumerate(complete):
                try:
                    obj = json.loads(line)
                except ValueError:
                    break
                if i == 0:
                    if obj.get("stamp") != self.stamp:
                        raise ValueError(
                            f"journal={self.path!r} records another search (stamp {obj.get('stamp')!r}, "
                            f"this search {self.stamp!r}); give another path or delete it"
                        )
                elif isinstance(obj, dict) and isinstance(obj.get("k"), int) and "key" in obj:
                    self.entries[obj["k"]] = obj
                else:
                    break
                good.append(line)
            if len(good) != len(lines) - 1 or lines[-1] != "":
                atomic_write(self.path, "".join(line + "\n" for line in good))
        if not good:
            atomic_write(self.path, dumps_strict({"stamp": self.stamp}, indent=None) + "\n")
        self.found = len(self.entries)

    def get(self, k: int, key: str) -> dict | None:
        """The recorded value of evaluation ``k`` when its digest equals ``key`` (else None)."""
        e = self.entries.get(int(k))
        if e is None or e["key"] != key:
            return None
        self.reused += 1
        return e["value"]

    def record(self, k: int, key: str, value: Any) -> None:
        """Append evaluation ``k`` (digest ``key``, JSON-able ``value``), flushed and synced to disk."""
        obj = {"k": int(k), "key": key, "value": jsonable(value)}
        line = dumps_strict(obj, indent=None) + "\n"
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        self.entries[int(k)] = json.loads(line)
        self.recorded += 1
