"""The class store on a PostgreSQL server, for replicas on several hosts (psycopg 3, imported only here: a page not
in a class never loads it). Connections are pooled (Streamlit runs each script run in a new thread, so one per thread
would connect on every run); a broken one is dropped and another opened on the next call, so a server restart costs the calls made while it is down (ClassroomError('unavailable')), nothing else."""

from __future__ import annotations

import queue
import time
from contextlib import contextmanager
from typing import Callable

from classroom.codes import ClassroomError
from classroom.store import SCHEMA, ClassStore

CONNECT_TIMEOUT_S = 3
POOL_SIZE = 16  # idle connections kept per process


class PostgresStore(ClassStore):
    def __init__(self, url: str, clock: Callable[[], float] = time.time):
        super().__init__(clock)
        self.url = url
        self._idle: queue.LifoQueue = queue.LifoQueue(maxsize=POOL_SIZE)
        self._schema_ready = False

    def _connection(self):
        import psycopg  # (lazily: only a class on a server backend needs the driver)

        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                return psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True)
            if not (conn.closed or conn.broken):
                return conn

    def _release(self, conn) -> None:
        try:
            self._idle.put_nowait(conn)
        except queue.Full:
            conn.close()

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
            conn.close()
            self.close()  # (a server restart breaks every idle connection too)
            raise ClassroomError("unavailable", str(exc)) from exc
        except BaseException:
            self._release(conn)
            raise
        self._release(conn)

    def close(self) -> None:
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                return
            try:
                conn.close()
            except Exception:  # (a connection to a server that went away may fail to close: it is gone either way)
                pass
