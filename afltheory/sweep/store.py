"""SQLite results store (stdlib sqlite3, WAL mode): one row per finished task, committed atomically.

Tables::

    schema_version(version)                          -- one row; STORE_SCHEMA
    meta(key, value)                                 -- spec_hash, spec_name, spec_text, created, afltheory
    version specs(hash, name, text, first_used)              -- every spec that has run against this store
    plan(id, point_id, config, seed, spec_hash)      -- tasks a spec asked for (lets `status` work alone)
    tasks(id, point_id, config, seed, metrics, array_names, arrays, started, finished, duration, worker,
          spec_hash, recorded)                       -- finished tasks; PRIMARY KEY(id): never duplicated
    failures(id, error, recorded)                    -- last error of a task that raised (not finished)

    row_sums(id, sha256)                             -- checksum of each task row, written with the row

Only the sweep's parent process writes; each result is one ``BEGIN IMMEDIATE ... COMMIT`` transaction, so a
SIGKILL at any moment leaves either the whole row or nothing. Readers (``status``, ``export``, ``plot``) use
WAL snapshots and never block the writer. One runner at a time: ``run_sweep`` holds an exclusive lock on
``<store>.lock`` (``Store.runner_lock``; released by the OS if the runner dies), and a second runner waits for
it, saying so, then runs only what is still missing.

Integrity (``Store.verify``): SQLite's ``quick_check`` plus a SHA-256 per task row over its stored fields;
rows that fail the checksum or do not decode are deleted (recorded in ``failures`` as corrupted), so the next
run recomputes them. A file whose SQLite header is damaged (or that is not a store) is refused with a clear
message; a store whose pages are damaged is salvaged: its readable, checksum-valid rows are copied into a
fresh store and the damaged file is kept next to it as ``<store>.corrupt-<time>``. The schema is checked too:
only this module's tables and indexes may exist (a crafted view or trigger could otherwise hang or alter
reads).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .tasks import decode_arrays

if TYPE_CHECKING:
    from typing import IO

    from .spec import Spec, Task

__all__ = ["Store", "StoreError", "StoreMismatchError", "StoreBusyError", "STORE_SCHEMA", "atomic_output"]

STORE_SCHEMA = 1

_DDL = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS specs (hash TEXT PRIMARY KEY, name TEXT, text TEXT, first_used REAL);
CREATE TABLE IF NOT EXISTS plan (id TEXT PRIMARY KEY, point_id TEXT NOT NULL, config TEXT NOT NULL,
                                 seed INTEGER NOT NULL, spec_hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, point_id TEXT NOT NULL, config TEXT NOT NULL,
                                  seed INTEGER NOT NULL, metrics TEXT NOT NULL, array_names TEXT NOT NULL,
                                  arrays BLOB NOT NULL, started REAL, finished REAL, duration REAL,
                                  worker TEXT, spec_hash TEXT, recorded REAL);
CREATE TABLE IF NOT EXISTS failures (id TEXT PRIMARY KEY, error TEXT, recorded REAL);
CREATE TABLE IF NOT EXISTS row_sums (id TEXT PRIMARY KEY, sha256 TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tasks_point ON tasks(point_id);
"""
_TABLES = {"schema_version", "meta", "specs", "plan", "tasks", "failures", "row_sums"}
_INDEXES = {"tasks_point"}
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: The checksummed fields of a task row, in order.
_SUM_COLS = "id, point_id, config, seed, metrics, array_names, arrays"


def _row_sum(row) -> str:
    """SHA-256 over a task row's stored fields (id, point_id, config, seed, metrics, array_names, arrays)."""
    h = hashlib.sha256()
    for v in row:
        b = v if isinstance(v, (bytes, bytearray, memoryview)) else repr(v).encode()
        h.update(len(b).to_bytes(8, "little"))
        h.update(bytes(b))
    return h.hexdigest()


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "w", **kw: Any) -> Iterator[IO]:
    """Open a temporary file next to ``path`` for writing; on success fsync it and rename it over ``path``
    (atomic on POSIX), on any error remove it: readers see the old file or the complete new one, never a
    truncated one (a SIGKILL mid-write leaves at most a stray ``.<name>.tmp-<pid>``)."""
    from .._io import atomic_open

    with atomic_open(path, mode, **kw) as fh:  # refuses a device file / FIFO / socket as the target
        yield fh


def _holds_no_table(path: Path) -> bool:
    """True when the SQLite file ``path`` is missing or has no schema object (read-only look; a file that
    cannot be read as SQLite counts as holding nothing only when it is empty)."""
    try:
        if not path.exists() or path.stat().st_size == 0:
            return True
        con = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, isolation_level=None)
        try:
            return con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0
        finally:
            con.close()
    except (OSError, sqlite3.Error):
        return False


class StoreError(RuntimeError):
    """A sweep store that cannot be used (corrupt, wrong schema, or another spec)."""

    pass


class StoreMismatchError(StoreError):
    """The store holds tasks planned by a different spec."""


class StoreBusyError(StoreError):
    """Another runner holds the store's lock (and we were told not to wait)."""


class Store:
    """A results store. ``Store(path)`` opens for writing (creating it); ``Store(path, readonly=True)`` for
    reading."""

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False, timeout: float = 30.0):
        self.path = Path(path)
        self.readonly = readonly
        self.timeout = timeout
        self.damage: list[str] = []  # what verify()/salvage found and did (empty: nothing)
        from .._io import describe_path

        what = describe_path(self.path)  # never opened: a FIFO would block, a device would be "salvaged"
        if what is not None:
            raise StoreError(f"store {self.path} is {what}, not a regular file; refusing to use it")
        if readonly and not self.path.exists():
            raise StoreError(f"store {self.path} does not exist")
        if not readonly and not self.path.parent.is_dir():
            raise StoreError(f"store {self.path}: directory {self.path.parent} is missing")
        self._check_header()
        side = [Path(str(self.path) + sfx) for sfx in ("-wal", "-shm")]
        had = [q.exists() for q in side] + [self.path.exists()]
        try:
            self._connect()
        except sqlite3.OperationalError as exc:  # disk full, I/O error, locked: not damage; never salvage
            with contextlib.suppress(Exception):
                self.conn.close()
            # a full disk leaves nothing behind: empty -wal/-shm this open created, and a new store file it
            # created that holds no table yet (whatever its size: SQLite may have written its first page),
            # with its side files (only for a full disk or an I/O error: a "locked" store's log belongs to
            # its live writer)
            full = any(k in str(exc).lower() for k in ("full", "disk", "i/o"))
            new_store = full and not had[-1] and _holds_no_table(self.path)
            for q, existed in zip([*side, self.path], had, strict=True):
                with contextlib.suppress(OSError):
                    if full and not existed and (new_store or q.stat().st_size == 0):
                        q.unlink()
            if new_store:
                raise StoreError(
                    f"store {self.path} cannot be created ({exc}); nothing was left behind — free space "
                    "and rerun"
                ) from None
            raise StoreError(
                f"store {self.path} cannot be opened ({exc}); nothing in it was changed"
            ) from None
        except sqlite3.DatabaseError as exc:
            if readonly:
                raise StoreError(
                    f"store {self.path} is damaged ({exc}); `afltheory sweep run` salvages its "
                    f"readable rows and recomputes the rest"
                ) from None
            self._salvage(f"cannot be opened: {exc}")

    def _check_header(self):
        if self.path.exists() and self.path.stat().st_size > 0:
            with open(self.path, "rb") as fh:
                head = fh.read(16)
            if head != _SQLITE_MAGIC:
                raise StoreError(
                    f"{self.path} is not an afltheory sweep store (no SQLite header: "
                    "another kind of file, or a store whose header is destroyed — nothing "
                    "in it can be trusted); move it aside and rerun to recompute everything"
                )

    def _connect(self):
        timeout = self.timeout
        if self.readonly:
            # a WAL store with no -wal/-shm has no connection open anywhere: read it through a query-only
            # read-write connection, which (as the last one) removes the -wal/-shm SQLite makes for it on
            # close; a `mode=ro` reader leaves an empty -wal and a 32 KiB -shm behind after every `sweep
            # status` (issue 42, D18). With a -wal present (a live or killed writer) or not writable: mode=ro.
            mode = "rw" if self._reads_cleanly() else "ro"
            uri = f"file:{self.path.resolve()}?mode={mode}"
            self.conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
            if mode == "rw":
                self.conn.execute("PRAGMA query_only=ON")
        else:
            if self.path.exists() and self.path.stat().st_size > 0:
                # inspected read-only first: a foreign SQLite database is refused unchanged (switching it to
                # WAL mode would rewrite its header)
                uri = f"file:{self.path.resolve()}?mode=ro"
                self.conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
                try:
                    self.conn.execute("PRAGMA trusted_schema=OFF")
                    self._check_objects()
                finally:
                    self.conn.close()
            self.conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        self.conn.execute("PRAGMA trusted_schema=OFF")
        if not self.readonly:
            self._check_objects()
            have = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            missing = sorted(_TABLES - have - {"row_sums"})
            if "schema_version" in have and missing:  # an existing store lost tables: say so, then recreate
                self.damage.append(
                    f"store {self.path} was missing table(s) {missing}: recreated empty; "
                    f"their tasks will be recomputed"
                )
            self._init_schema()
        self._check_schema()
        self._check_objects()

    def _reads_cleanly(self) -> bool:
        """A WAL-mode SQLite file (header bytes 18-19 = 2, 2) without -wal/-shm beside it, in a writable
        directory: nothing else has it open, so a query-only connection leaves no side files."""
        side = [Path(str(self.path) + sfx) for sfx in ("-wal", "-shm", "-journal")]
        if any(q.exists() for q in side) or not os.access(self.path.parent, os.W_OK):
            return False
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(20)
        except OSError:
            return False
        return len(head) == 20 and head[:16] == _SQLITE_MAGIC and head[18:20] == b"\x02\x02"

    def _check_objects(self):
        """Only this module's tables and indexes (no views/triggers: a crafted one could hang or alter
        reads)."""
        objs = self.conn.execute(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
        bad = [
            (t, n)
            for t, n in objs
            if not ((t == "table" and n in _TABLES) or (t == "index" and n in _INDEXES))
        ]
        if bad:
            raise StoreError(
                f"{self.path} has schema objects an afltheory store never creates: {bad[:5]}; "
                f"refusing to read it"
            )

    # -- lifecycle
    def checkpoint(self) -> bool:
        """Fold the write-ahead log into the store file (``PRAGMA wal_checkpoint(TRUNCATE)``), so the store
        file alone holds every committed row; True on success. A failure (disk full, a reader holding the
        log) is harmless: the rows stay in ``<store>-wal`` and SQLite replays them on the next open."""
        if self.readonly:
            return False
        try:
            busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error:
            return False
        return bool(busy) and busy[0] == 0

    def copy_to(self, dest: str | os.PathLike) -> str:
        """Write a self-contained copy of the store (every committed row, the write-ahead log included, in
        one file with no ``-wal`` beside it) to ``dest``, atomically (temporary file + rename); safe while a
        runner writes (SQLite's online backup). Returns ``dest``."""
        import tempfile

        from .._io import make_dirs, remove_dirs, replace_target

        target = replace_target(dest)  # refuses a device file / FIFO / socket
        made = make_dirs(os.path.dirname(target))  # missing directories: removed again if the copy fails
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".{os.path.basename(target)}.tmp-", dir=os.path.dirname(target)
            )
        except BaseException:
            remove_dirs(made)
            raise
        os.close(fd)
        try:
            out = sqlite3.connect(tmp, isolation_level=None)
            try:
                self.conn.backup(out)
                out.execute("PRAGMA journal_mode=DELETE")
            finally:
                out.close()
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            for suffix in ("", "-journal", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.unlink(tmp + suffix)
            remove_dirs(made)
            raise
        return os.fspath(dest)

    def close(self) -> None:
        """Checkpoint the write-ahead log (writable stores: the store file is then self-contained) and close
        the SQLite connection."""
        if getattr(self, "conn", None) is None:
            return
        self.checkpoint()
        self.conn.close()
        self.conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _init_schema(self):
        with self._tx():
            for stmt in _DDL.strip().split(";"):
                if stmt.strip():
                    self.conn.execute(stmt)
            if self.conn.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 0:
                self.conn.execute("INSERT INTO schema_version(version) VALUES (?)", (STORE_SCHEMA,))
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('created', ?)", (repr(time.time()),))

    def _check_schema(self):
        try:
            row = self.conn.execute("SELECT version FROM schema_version").fetchone()
        except sqlite3.OperationalError as exc:
            n = self.conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
            if n == 0:  # not "foreign": an SQLite file with nothing in it (e.g. made by another tool)
                raise StoreError(
                    f"store {self.path} is an empty SQLite database (no table, no finished task); "
                    "`afltheory sweep run SPEC --store` fills it"
                ) from None
            raise StoreError(f"{self.path} is not an afltheory sweep store: {exc}") from None
        if row is None or row[0] != STORE_SCHEMA:
            raise StoreError(
                f"{self.path} has store schema {row and row[0]}, this afltheory reads schema {STORE_SCHEMA}"
            )

    class _Tx:
        def __init__(self, conn):
            self.conn = conn

        def __enter__(self):
            self.conn.execute("BEGIN IMMEDIATE")

        def __exit__(self, et, ev, tb):
            self.conn.execute("COMMIT" if et is None else "ROLLBACK")

    def _tx(self):
        return Store._Tx(self.conn)

    # -- spec bookkeeping
    def meta(self) -> dict:
        """The store's metadata table as a dict."""
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def register_spec(self, spec: Spec, *, extend: bool = False) -> dict:
        """Record ``spec`` and its planned tasks. Returns a report dict (``mismatch`` describes a spec hash
        different from the store's). Raises StoreMismatchError when the store holds tasks that this spec
        does not plan (a different sweep) unless ``extend``."""
        import afltheory

        ids = set(spec.ids)
        report = {"spec_hash": spec.hash, "previous_hash": None, "mismatch": None}
        with self._tx():
            prev = self.conn.execute("SELECT value FROM meta WHERE key='spec_hash'").fetchone()
            planned = {r[0] for r in self.conn.execute("SELECT id FROM plan")}
            done = {r[0] for r in self.conn.execute("SELECT id FROM tasks")}
            if prev is not None and prev[0] != spec.hash:
                report["previous_hash"] = prev[0]
                foreign = (planned | done) - ids
                new = ids - planned
                if foreign and not extend:
                    raise StoreMismatchError(
                        f"store {self.path} was made by spec {prev[0][:12]} and holds {len(foreign)} task(s) "
                        f"that spec {spec.hash[:12]} ({spec.name or 'unnamed'}) does not plan ({len(new)} of "
                        "its tasks are new); use a new store, or extend=True / --extend to keep both"
                    )
                report["mismatch"] = (
                    "same task ids, different spec hash (spec edited without changing any task)"
                    if not foreign and not new
                    else f"spec differs: {len(new)} new task(s), {len(foreign)} from other specs"
                )
            for t in spec.tasks:
                self.conn.execute(
                    "INSERT OR IGNORE INTO plan VALUES (?,?,?,?,?)",
                    (t.id, t.point_id, t.config_json, t.seed, spec.hash),
                )
            self.conn.execute(
                "INSERT OR IGNORE INTO specs VALUES (?,?,?,?)", (spec.hash, spec.name, spec.text, time.time())
            )
            for k, v in (
                ("spec_hash", spec.hash),
                ("spec_name", spec.name),
                ("spec_text", spec.text or ""),
                ("afltheory_version", afltheory.__version__),
            ):
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, v))
        return report

    # -- writing
    def finished_ids(self) -> set[str]:
        """The ids of the finished tasks."""
        return {r[0] for r in self.conn.execute("SELECT id FROM tasks")}

    def add_result(self, task: Task, result: dict, spec_hash: str | None = None) -> bool:
        """Commit one finished task atomically. Returns False if it was already stored (kept as is)."""
        if result["id"] != task.id:
            raise StoreError(f"result id {result['id'][:12]} does not match task {task.id[:12]}")
        with self._tx():
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO tasks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    task.id,
                    task.point_id,
                    task.config_json,
                    task.seed,
                    json.dumps(result["metrics"], sort_keys=True, allow_nan=False),
                    json.dumps(result["array_names"]),
                    sqlite3.Binary(result["arrays"]),
                    result.get("started"),
                    result.get("finished"),
                    result.get("duration"),
                    result.get("worker"),
                    spec_hash,
                    time.time(),
                ),
            )
            if cur.rowcount == 1:
                row = self.conn.execute(f"SELECT {_SUM_COLS} FROM tasks WHERE id=?", (task.id,)).fetchone()
                self.conn.execute("INSERT OR REPLACE INTO row_sums VALUES (?, ?)", (task.id, _row_sum(row)))
            self.conn.execute("DELETE FROM failures WHERE id=?", (task.id,))
        return cur.rowcount == 1

    def add_failure(self, task: Task, error: str) -> None:
        """Record that ``task`` failed with ``error`` (it is retried on the next run)."""
        with self._tx():
            self.conn.execute("INSERT OR REPLACE INTO failures VALUES (?,?,?)", (task.id, error, time.time()))

    # -- integrity
    @staticmethod
    def _row_ok(row, stored_sum) -> str | None:
        """None if the task row is trustworthy, else why not."""
        if stored_sum is not None and _row_sum(row) != stored_sum:
            return "checksum mismatch"
        try:
            json.loads(row[2])
            metrics = json.loads(row[4])
            names = json.loads(row[5])
            if not isinstance(metrics, dict) or not isinstance(names, list):
                return "metrics/array names of the wrong type"
            decode_arrays(names, bytes(row[6]))
        except Exception as exc:  # any decoding failure makes the row untrusted
            return f"undecodable ({type(exc).__name__})"
        return None

    def verify(self) -> list[str]:
        """Check the store and repair what cannot be trusted (writable stores): ``quick_check`` (damaged pages
        -> salvage into a fresh store), then every task row against its checksum and decoders (bad rows are
        deleted and listed in ``failures``, so the next run recomputes them). Returns (and appends to
        ``self.damage``) one line per finding."""
        found = []
        try:
            res = [r[0] for r in self.conn.execute("PRAGMA quick_check").fetchall()]
            ok = res == ["ok"]
        except sqlite3.DatabaseError as exc:
            res, ok = [str(exc)], False
        if not ok:
            if self.readonly:
                raise StoreError(
                    f"store {self.path} is damaged (quick_check: {res[:3]}); `afltheory "
                    "sweep run` salvages its readable rows and recomputes the rest"
                )
            self._salvage(f"quick_check failed: {res[:3]}")
            return self.damage
        try:
            sums = dict(self.conn.execute("SELECT id, sha256 FROM row_sums").fetchall())
            bad = []
            for row in self.conn.execute(f"SELECT {_SUM_COLS} FROM tasks"):
                why = self._row_ok(row, sums.get(row[0]))
                if why:
                    bad.append((row[0], why))
                elif row[0] not in sums and not self.readonly:  # a row from before checksums: adopt it
                    self.conn.execute(
                        "INSERT OR REPLACE INTO row_sums VALUES (?, ?)", (row[0], _row_sum(row))
                    )
        except sqlite3.DatabaseError as exc:
            if self.readonly:
                raise StoreError(f"store {self.path} is damaged ({exc})") from None
            self._salvage(f"reading rows failed: {exc}")
            return self.damage
        if bad:
            found.append(
                f"{len(bad)} stored row(s) cannot be trusted ({bad[0][1]}, ...): "
                + ("they will be recomputed" if not self.readonly else "run `sweep run` to recompute")
            )
            if not self.readonly:
                with self._tx():
                    for tid, why in bad:
                        self.conn.execute("DELETE FROM tasks WHERE id=?", (tid,))
                        self.conn.execute("DELETE FROM row_sums WHERE id=?", (tid,))
                        self.conn.execute(
                            "INSERT OR REPLACE INTO failures VALUES (?,?,?)",
                            (tid, f"stored row corrupted ({why}); removed for recomputation", time.time()),
                        )
        self.damage.extend(found)
        return found

    def _salvage(self, why: str):
        """Move the damaged file aside and rebuild the store from its readable, trustworthy rows."""
        with contextlib.suppress(Exception):
            self.conn.close()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        bad = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.path) + suffix)
            if src.exists():
                os.replace(src, Path(str(bad) + suffix))
        rows, plan, specs, meta, sums = [], [], [], [], {}
        try:
            old = sqlite3.connect(f"file:{bad.resolve()}?mode=ro", uri=True, isolation_level=None)
            old.execute("PRAGMA trusted_schema=OFF")
            for name, out in (("plan", plan), ("specs", specs), ("meta", meta)):
                with contextlib.suppress(sqlite3.DatabaseError):
                    out.extend(old.execute(f"SELECT * FROM {name}").fetchall())
            with contextlib.suppress(sqlite3.DatabaseError):
                sums = dict(old.execute("SELECT id, sha256 FROM row_sums").fetchall())
            try:
                top = old.execute("SELECT max(rowid) FROM tasks").fetchone()[0] or 0
            except sqlite3.DatabaseError:
                top = 10 * max(len(plan), 1000)
            for rid in range(1, int(top) + 1):
                try:
                    r = old.execute("SELECT * FROM tasks WHERE rowid=?", (rid,)).fetchone()
                except sqlite3.DatabaseError:
                    continue
                if r is not None and self._row_ok(r[:7], sums.get(r[0])) is None:
                    rows.append(r)
            old.close()
        except sqlite3.DatabaseError:
            pass
        self._connect()
        with self._tx():
            for r in plan:
                self.conn.execute("INSERT OR IGNORE INTO plan VALUES (?,?,?,?,?)", r)
            for r in specs:
                self.conn.execute("INSERT OR IGNORE INTO specs VALUES (?,?,?,?)", r)
            for r in meta:
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", r)
            for r in rows:
                self.conn.execute("INSERT OR IGNORE INTO tasks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", r)
                self.conn.execute("INSERT OR REPLACE INTO row_sums VALUES (?, ?)", (r[0], _row_sum(r[:7])))
        self.damage.append(
            f"store {self.path} was damaged ({why}); kept as {bad.name}; salvaged {len(rows)} "
            f"trustworthy task row(s), the rest will be recomputed"
        )

    @contextlib.contextmanager
    def runner_lock(
        self, *, wait: bool = True, on_wait: Callable[[str], None] | None = None, poll: float = 0.5
    ) -> Iterator[None]:
        """Hold the exclusive runner lock ``<store>.lock`` (fcntl; released by the OS when the holder dies).
        Busy: ``wait`` -> call ``on_wait(holder)`` once and block until free; else raise StoreBusyError."""
        try:
            import fcntl
        except ImportError:  # no advisory locks here (Windows): single-runner use is the caller's duty
            yield
            return
        lock_path = Path(str(self.path) + ".lock")
        fh = open(lock_path, "a+")
        try:
            told = False
            while True:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    fh.seek(0)
                    holder = fh.read().strip() or "another process"
                    if not wait:
                        raise StoreBusyError(f"store {self.path} is being written by {holder}") from None
                    if not told and on_wait is not None:
                        on_wait(holder)
                        told = True
                    time.sleep(poll)
            fh.seek(0)
            fh.truncate()
            fh.write(f"runner pid {os.getpid()} since {time.strftime('%H:%M:%S')}")
            fh.flush()
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            fh.close()

    # -- reading
    def status(self) -> dict:
        """Counts of finished and failed tasks with the spec's name and hash."""
        c = self.conn
        planned = c.execute("SELECT COUNT(*) FROM plan").fetchone()[0]
        done = c.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
        done_planned = c.execute("SELECT COUNT(*) FROM tasks WHERE id IN (SELECT id FROM plan)").fetchone()[0]
        failed = c.execute("SELECT COUNT(*) FROM failures").fetchone()[0]
        dur = c.execute(
            "SELECT SUM(duration), AVG(duration), MIN(started), MAX(finished) FROM tasks"
        ).fetchone()
        div = c.execute(
            "SELECT COUNT(*) FROM tasks WHERE json_extract(metrics, '$.diverged') = 1"
        ).fetchone()[0]
        m = self.meta()
        return {
            "store": str(self.path),
            "spec_name": m.get("spec_name"),
            "spec_hash": m.get("spec_hash"),
            "specs": c.execute("SELECT COUNT(*) FROM specs").fetchone()[0],
            "planned": planned,
            "finished": done,
            "pending": planned - done_planned,
            "failed": failed,
            "diverged_tasks": div,
            "task_seconds": dur[0] or 0.0,
            "mean_task_seconds": dur[1],
            "first_started": dur[2],
            "last_finished": dur[3],
        }

    def rows(self, *, with_arrays: bool = False) -> Iterator[dict]:
        """Finished tasks, ordered by id: dicts with config/metrics parsed (and arrays decoded if asked)."""
        cols = (
            "id, point_id, config, seed, metrics, array_names, started, finished, duration, worker, spec_hash"
        )
        if with_arrays:
            cols += ", arrays"
        for r in self.conn.execute(f"SELECT {cols} FROM tasks ORDER BY id"):
            d = {
                "id": r[0],
                "point_id": r[1],
                "config": json.loads(r[2]),
                "seed": r[3],
                "metrics": json.loads(r[4]),
                "array_names": json.loads(r[5]),
                "started": r[6],
                "finished": r[7],
                "duration": r[8],
                "worker": r[9],
                "spec_hash": r[10],
            }
            if with_arrays:
                d["arrays_blob"] = bytes(r[11])
                d["arrays"] = decode_arrays(d["array_names"], d["arrays_blob"])
            yield d

    def failures(self) -> list[tuple[str, str]]:
        """(task id, error) of every recorded failure."""
        return self.conn.execute("SELECT id, error FROM failures ORDER BY id").fetchall()

    def fingerprint(self) -> list[tuple]:
        """(id, config, seed, metrics, array_names, arrays) of every finished task, sorted by id: equal for
        two stores iff they hold the same results (timings and worker names excluded)."""
        return self.conn.execute(
            "SELECT id, config, seed, metrics, array_names, arrays FROM tasks ORDER BY id"
        ).fetchall()
