"""The class store on a PostgreSQL server, for replicas on several hosts (psycopg 3, imported only here: a page not
in a class never loads it). Each thread keeps its own connection; a broken one is dropped and opened again on the
next call, so a server restart costs the calls made while it is down (ClassroomError('unavailable')), nothing else."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable

from classroom.codes import ClassroomError
from classroom.store import SCHEMA, ClassStore

CONNECT_TIMEOUT_S = 3


class PostgresStore(ClassStore):
    def __init__(self, url: str, clock: Callable[[], float] = time.time):
        super().__init__(clock)
        self.url = url
        self._local = threading.local()
        self._schema_ready = False

    def _connection(self):
        import psycopg  # (lazily: only a class on a server backend needs the driver)

        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or conn.broken:
            conn = psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True)
            self._local.conn = conn
        return conn

    @contextmanager
    def _transaction(self):
        import psycopg

        try:
            conn = self._connection()
            if not self._schema_ready:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(4141)")  # (CREATE IF NOT EXISTS races between replicas)
                    for statement in SCHEMA:
                        conn.execute(statement)
                self._schema_ready = True
        except psycopg.Error as exc:
            self.close()
            raise ClassroomError("unavailable", str(exc)) from exc

        def run(sql: str, params: tuple) -> list[tuple]:
            cursor = conn.execute(sql.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description is not None else []

        try:
            with conn.transaction():
                yield run
        except psycopg.Error as exc:
            self.close()
            raise ClassroomError("unavailable", str(exc)) from exc

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # (a connection to a server that went away may fail to close: it is gone either way)
                pass
