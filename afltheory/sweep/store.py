"""SQLite results store (stdlib sqlite3, WAL mode): one row per finished task, committed atomically.

Tables::

    schema_version(version)                          -- one row; STORE_SCHEMA
    meta(key, value)                                 -- spec_hash, spec_name, spec_text, created, afltheory version
    specs(hash, name, text, first_used)              -- every spec that has run against this store
    plan(id, point_id, config, seed, spec_hash)      -- tasks a spec asked for (lets `status` work alone)
    tasks(id, point_id, config, seed, metrics, array_names, arrays, started, finished, duration, worker,
          spec_hash, recorded)                       -- finished tasks; PRIMARY KEY(id): never duplicated
    failures(id, error, recorded)                    -- last error of a task that raised (not finished)

Only the sweep's parent process writes; each result is one ``BEGIN IMMEDIATE ... COMMIT`` transaction, so a
SIGKILL at any moment leaves either the whole row or nothing. Readers (``status``, ``export``, ``plot``) use
WAL snapshots and never block the writer.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from .tasks import decode_arrays

__all__ = ["Store", "StoreError", "StoreMismatchError", "STORE_SCHEMA"]

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
CREATE INDEX IF NOT EXISTS tasks_point ON tasks(point_id);
"""


class StoreError(RuntimeError):
    pass


class StoreMismatchError(StoreError):
    """The store holds tasks planned by a different spec."""


class Store:
    """A results store. ``Store(path)`` opens for writing (creating it); ``Store(path, readonly=True)`` for reading."""

    def __init__(self, path, *, readonly: bool = False, timeout: float = 30.0):
        self.path = Path(path)
        self.readonly = readonly
        if readonly:
            if not self.path.exists():
                raise StoreError(f"store {self.path} does not exist")
            uri = f"file:{self.path.resolve()}?mode=ro"
            self.conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
        else:
            self.conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        if not readonly:
            self._init_schema()
        self._check_schema()

    # -- lifecycle
    def close(self):
        self.conn.close()

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
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not an afltheory sweep store: {exc}") from None
        if row is None or row[0] != STORE_SCHEMA:
            raise StoreError(f"{self.path} has store schema {row and row[0]}, this afltheory reads "
                             f"schema {STORE_SCHEMA}")

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
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def register_spec(self, spec, *, extend: bool = False) -> dict:
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
                        f"that spec {spec.hash[:12]} ({spec.name or 'unnamed'}) does not plan "
                        f"({len(new)} of its tasks are new); use a new store, or extend=True / --extend "
                        "to keep both")
                report["mismatch"] = ("same task ids, different spec hash (spec edited without changing any "
                                      "task)" if not foreign and not new else
                                      f"spec differs: {len(new)} new task(s), {len(foreign)} from other specs")
            for t in spec.tasks:
                self.conn.execute("INSERT OR IGNORE INTO plan VALUES (?,?,?,?,?)",
                                  (t.id, t.point_id, t.config_json, t.seed, spec.hash))
            self.conn.execute("INSERT OR IGNORE INTO specs VALUES (?,?,?,?)",
                              (spec.hash, spec.name, spec.text, time.time()))
            for k, v in (("spec_hash", spec.hash), ("spec_name", spec.name), ("spec_text", spec.text or ""),
                         ("afltheory_version", afltheory.__version__)):
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, v))
        return report

    # -- writing
    def finished_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT id FROM tasks")}

    def add_result(self, task, result: dict, spec_hash: str | None = None) -> bool:
        """Commit one finished task atomically. Returns False if it was already stored (kept as is)."""
        if result["id"] != task.id:
            raise StoreError(f"result id {result['id'][:12]} does not match task {task.id[:12]}")
        with self._tx():
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO tasks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (task.id, task.point_id, task.config_json, task.seed,
                 json.dumps(result["metrics"], sort_keys=True, allow_nan=False),
                 json.dumps(result["array_names"]), sqlite3.Binary(result["arrays"]), result.get("started"),
                 result.get("finished"), result.get("duration"), result.get("worker"), spec_hash, time.time()))
            self.conn.execute("DELETE FROM failures WHERE id=?", (task.id,))
        return cur.rowcount == 1

    def add_failure(self, task, error: str):
        with self._tx():
            self.conn.execute("INSERT OR REPLACE INTO failures VALUES (?,?,?)", (task.id, error, time.time()))

    # -- reading
    def status(self) -> dict:
        c = self.conn
        planned = c.execute("SELECT COUNT(*) FROM plan").fetchone()[0]
        done = c.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
        done_planned = c.execute("SELECT COUNT(*) FROM tasks WHERE id IN (SELECT id FROM plan)").fetchone()[0]
        failed = c.execute("SELECT COUNT(*) FROM failures").fetchone()[0]
        dur = c.execute("SELECT SUM(duration), AVG(duration), MIN(started), MAX(finished) FROM tasks").fetchone()
        div = c.execute("SELECT COUNT(*) FROM tasks WHERE json_extract(metrics, '$.diverged') = 1").fetchone()[0]
        m = self.meta()
        return {"store": str(self.path), "spec_name": m.get("spec_name"), "spec_hash": m.get("spec_hash"),
                "specs": c.execute("SELECT COUNT(*) FROM specs").fetchone()[0],
                "planned": planned, "finished": done, "pending": planned - done_planned, "failed": failed,
                "diverged_tasks": div, "task_seconds": dur[0] or 0.0, "mean_task_seconds": dur[1],
                "first_started": dur[2], "last_finished": dur[3]}

    def rows(self, *, with_arrays: bool = False):
        """Finished tasks, ordered by id: dicts with config/metrics parsed (and arrays decoded if asked)."""
        cols = "id, point_id, config, seed, metrics, array_names, started, finished, duration, worker, spec_hash"
        if with_arrays:
            cols += ", arrays"
        for r in self.conn.execute(f"SELECT {cols} FROM tasks ORDER BY id"):
            d = {"id": r[0], "point_id": r[1], "config": json.loads(r[2]), "seed": r[3],
                 "metrics": json.loads(r[4]), "array_names": json.loads(r[5]), "started": r[6],
                 "finished": r[7], "duration": r[8], "worker": r[9], "spec_hash": r[10]}
            if with_arrays:
                d["arrays_blob"] = bytes(r[11])
                d["arrays"] = decode_arrays(d["array_names"], d["arrays_blob"])
            yield d

    def failures(self) -> list[tuple[str, str]]:
        return self.conn.execute("SELECT id, error FROM failures ORDER BY id").fetchall()

    def fingerprint(self) -> list[tuple]:
        """(id, config, seed, metrics, array_names, arrays) of every finished task, sorted by id: equal for two
        stores iff they hold the same results (timings and worker names excluded)."""
        return self.conn.execute("SELECT id, config, seed, metrics, array_names, arrays FROM tasks "
                                 "ORDER BY id").fetchall()
