"""The default class store: one SQLite file in WAL mode, shared by every replica on the host (each thread its own
connection; writers take the lock at the start of a transaction, so two never deadlock upgrading a read lock)."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from classroom.codes import ClassroomError
from classroom.store import ClassStore

BUSY_TIMEOUT_MS = 10_000  # a writer waits this long for another replica's transaction


def default_path() -> Path:
    """-> $ATTENTION_CLASS_DB, or $XDG_CACHE_HOME/attention-live/classes.sqlite3 (~/.cache when unset)."""
    if os.environ.get("ATTENTION_CLASS_DB"):
        return Path(os.environ["ATTENTION_CLASS_DB"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-live" / "classes.sqlite3"


class SqliteStore(ClassStore):
    def __init__(self, path: str | Path | None = None, clock: Callable[[], float] = time.time):
        super().__init__(clock)
        self.path = Path(path) if path is not None else default_path()
        self._local = threading.local()
        self._schema_ready = False

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False)
            # switching to WAL takes a lock that ignores the busy timeout: only the first opener of the file switches
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a commit survives a process crash
            self._local.conn = conn
        return conn

    @contextmanager
    def _transaction(self):
        try:
            conn = self._connection()
            if not self._schema_ready:
                self._schema_ready = True
                self.create_schema()
            conn.execute("BEGIN IMMEDIATE")
        except (sqlite3.Error, OSError) as exc:
            self.close()
            self._schema_ready = False
            raise ClassroomError("unavailable", str(exc)) from exc
        try:
            yield lambda sql, params: conn.execute(sql, params).fetchall()
            conn.execute("COMMIT")
        except BaseException as exc:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                self.close()
            if isinstance(exc, sqlite3.Error):
                raise ClassroomError("unavailable", str(exc)) from exc
            raise

    def create_schema(self) -> None:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            from classroom.store import SCHEMA
            for statement in SCHEMA:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()
