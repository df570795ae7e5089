"""A class in the app: join codes and teacher keys (codes.py), the store's one interface (store.py) and its two
backends, SQLite by default (sqlite_store.py) and PostgreSQL for replicas on several hosts (postgres_store.py).
Pure Python: no Streamlit. Read store.py first.

``open_store()`` picks the backend: $ATTENTION_CLASS_DATABASE_URL (postgresql://...) when set, else the SQLite file.
"""

from __future__ import annotations

import os

from classroom.codes import (CODE_ALPHABET, CODE_LENGTH, LIFETIME_S, ClassroomError, clean_code, new_student,
                             setting_id)
from classroom.store import ACTIONS, FLOOD_WRITES, ClassStore, Counts, ExportRow, QuestionState

DATABASE_URL_ENV = "ATTENTION_CLASS_DATABASE_URL"


def open_store() -> ClassStore:
    """The store this process uses: PostgreSQL when $ATTENTION_CLASS_DATABASE_URL is set, else SQLite."""
    url = os.environ.get(DATABASE_URL_ENV, "").strip()
    if url:
        from classroom.postgres_store import PostgresStore

        return PostgresStore(url)
    from classroom.sqlite_store import SqliteStore

    return SqliteStore()


__all__ = ["ACTIONS", "CODE_ALPHABET", "CODE_LENGTH", "FLOOD_WRITES", "LIFETIME_S", "ClassStore", "ClassroomError",
           "Counts", "ExportRow", "QuestionState", "clean_code", "new_student", "open_store", "setting_id"]
