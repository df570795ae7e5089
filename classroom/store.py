"""The class store's one interface (ClassStore) and the SQL both backends share: SQLite (sqlite_store.py, the
default) and PostgreSQL (postgres_store.py, for replicas on several hosts) run the same statements.

A backend supplies only ``_transaction()``: a context manager yielding ``run(sql, params) -> rows`` inside one
transaction (written with ``?`` placeholders), and turns its driver's errors into ClassroomError('unavailable').
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Callable

from classroom.codes import (LIFETIME_S, ClassroomError, check_name, check_option, check_setting, check_student,
                             clean_code, key_hash, key_matches, new_code, new_key)

FLOOD_WINDOW_S = 60.0
FLOOD_WRITES = 30  # answers one seat may give per minute (a class answers one question a minute at most)
MAX_SEATS = 1000  # seats per class: ids made up by one client cannot grow a class without end

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS classes (code TEXT PRIMARY KEY, key_hash TEXT NOT NULL,
       created DOUBLE PRECISION NOT NULL, expires DOUBLE PRECISION NOT NULL)""",
    # what the teacher has done with a question: the open vote (1, or 2 after "vote again"), spread shown, revealed
    """CREATE TABLE IF NOT EXISTS questions (code TEXT NOT NULL, lesson TEXT NOT NULL, question TEXT NOT NULL,
       vote INTEGER NOT NULL DEFAULT 1, shown INTEGER NOT NULL DEFAULT 0, revealed INTEGER NOT NULL DEFAULT 0,
       PRIMARY KEY (code, lesson, question))""",
    # one answer per seat, question, setting and vote: a changed answer replaces the earlier one
    """CREATE TABLE IF NOT EXISTS answers (code TEXT NOT NULL, student TEXT NOT NULL, lesson TEXT NOT NULL,
       question TEXT NOT NULL, setting TEXT NOT NULL, vote INTEGER NOT NULL, n_options INTEGER NOT NULL,
       choice INTEGER NOT NULL, PRIMARY KEY (code, student, lesson, question, setting, vote))""",
    "CREATE INDEX IF NOT EXISTS answers_by_question ON answers (code, lesson, question, setting, vote)",
    # a seat's answers in the current minute (the flood limit)
    """CREATE TABLE IF NOT EXISTS seats (code TEXT NOT NULL, student TEXT NOT NULL,
       window_start DOUBLE PRECISION NOT NULL, writes INTEGER NOT NULL, PRIMARY KEY (code, student))""",
)


@dataclass(frozen=True)
class QuestionState:
    """What the teacher has done with a question: the open vote (1 or 2), spread shown to the class, revealed."""
    vote: int = 1
    shown: bool = False
    revealed: bool = False


@dataclass(frozen=True)
class Counts:
    """A question's answers in one setting: per option (index 0 = option 1) for the first vote and the revote, and how
    many seats answered the first vote in another setting."""
    first: tuple[int, ...]
    second: tuple[int, ...]
    other_settings: int = 0

    @property
    def answered(self) -> tuple[int, int]:
        return sum(self.first), sum(self.second)


@dataclass(frozen=True)
class ExportRow:
    lesson: str
    question: str
    setting: str
    option: int
    first: int
    second: int


ACTIONS = ("show", "hide", "revote", "reveal")


class ClassStore:
    """A class's codes, answers and question states; every method raises ClassroomError on bad input, an unknown or
    expired class, a wrong key or an unreachable database, and changes nothing then."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock

    def _transaction(self) -> AbstractContextManager[Callable[[str, tuple], list[tuple]]]:
        raise NotImplementedError

    def close(self) -> None:
        """Release connections (a later call opens them again)."""

    def create_schema(self) -> None:
        with self._transaction() as run:
            for statement in SCHEMA:
                run(statement, ())

    # ------------------------------------------------------------------ classes

    def create_class(self) -> tuple[str, str]:
        """Start a class -> (join code, teacher key). Only the key's hash is stored; expired classes are purged."""
        now = self.clock()
        key = new_key()
        with self._transaction() as run:
            self._purge(run, now)
            for _ in range(20):
                code = new_code()
                if not run("SELECT 1 FROM classes WHERE code = ?", (code,)):
                    run("INSERT INTO classes (code, key_hash, created, expires) VALUES (?, ?, ?, ?)",
                        (code, key_hash(key), now, now + LIFETIME_S))
                    return code, key
        raise ClassroomError("full", "no free code")

    def check_class(self, code: str) -> float:
        """The class's expiry time (Unix seconds); ClassroomError if the code is malformed, unknown or expired."""
        code = clean_code(code)
        with self._transaction() as run:
            return self._open_class(run, code)[1]

    def is_teacher(self, code: str, key: str | None) -> bool:
        """True when ``key`` is the teacher key of the open class ``code``."""
        code = clean_code(code)
        with self._transaction() as run:
            return key_matches(key, self._open_class(run, code)[0])

    def _open_class(self, run, code: str) -> tuple[str, float]:
        rows = run("SELECT key_hash, expires FROM classes WHERE code = ?", (code,))
        if not rows:
            raise ClassroomError("unknown")
        if rows[0][1] <= self.clock():
            raise ClassroomError("expired")
        return rows[0][0], rows[0][1]

    def _teacher(self, run, code: str, key: str | None) -> None:
        if not key_matches(key, self._open_class(run, code)[0]):
            raise ClassroomError("forbidden")

    def _purge(self, run, now: float) -> None:
        for table in ("answers", "questions", "seats"):
            run(f"DELETE FROM {table} WHERE code IN (SELECT code FROM classes WHERE expires <= ?)", (now,))
        run("DELETE FROM classes WHERE expires <= ?", (now,))

    # ------------------------------------------------------------------ students

    def answer(self, code: str, student: str, lesson: str, question: str, setting: str, n_options: int,
               choice: int, vote: int = 1) -> None:
        """Record (or replace) a seat's answer ``choice`` (1..n_options) in vote 1 or 2 of a question in a setting.

        Vote 1 is open until the teacher starts the revote, vote 2 until the reveal (ClassroomError('closed')).
        """
        code, student = clean_code(code), check_student(student)
        lesson, question, setting = check_name(lesson), check_name(question), check_setting(setting)
        choice = check_option(choice, n_options)
        if vote not in (1, 2):
            raise ClassroomError("bad_input", "vote")
        now = self.clock()
        with self._transaction() as run:
            self._open_class(run, code)
            state = self._state(run, code, lesson, question)
            if state.revealed or state.vote != vote:
                raise ClassroomError("closed")
            self._count_write(run, code, student, now)
            run("""INSERT INTO answers (code, student, lesson, question, setting, vote, n_options, choice)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (code, student, lesson, question, setting, vote)
                   DO UPDATE SET choice = excluded.choice, n_options = excluded.n_options""",
                (code, student, lesson, question, setting, vote, n_options, choice))

    def _count_write(self, run, code: str, student: str, now: float) -> None:
        known = run("SELECT 1 FROM seats WHERE code = ? AND student = ?", (code, student))
        if not known and run("SELECT COUNT(*) FROM seats WHERE code = ?", (code,))[0][0] >= MAX_SEATS:
            raise ClassroomError("full")
        writes = run("""INSERT INTO seats (code, student, window_start, writes) VALUES (?, ?, ?, 1)
                        ON CONFLICT (code, student) DO UPDATE SET
                          writes = CASE WHEN seats.window_start <= ? THEN 1 ELSE seats.writes + 1 END,
                          window_start = CASE WHEN seats.window_start <= ? THEN ? ELSE seats.window_start END
                        RETURNING writes""",
                     (code, student, now, now - FLOOD_WINDOW_S, now - FLOOD_WINDOW_S, now))[0][0]
        if writes > FLOOD_WRITES:
            raise ClassroomError("flood")  # (the transaction rolls back: the count stays as it was)

    def my_answers(self, code: str, student: str, lesson: str, question: str, setting: str) -> dict[int, int]:
        """A seat's own answers to a question in a setting -> {vote: choice}."""
        code, student = clean_code(code), check_student(student)
        lesson, question, setting = check_name(lesson), check_name(question), check_setting(setting)
        with self._transaction() as run:
            self._open_class(run, code)
            rows = run("""SELECT vote, choice FROM answers WHERE code = ? AND student = ? AND lesson = ?
                          AND question = ? AND setting = ?""", (code, student, lesson, question, setting))
        return {vote: choice for vote, choice in rows}

    def state(self, code: str, lesson: str, question: str) -> QuestionState:
        """What the teacher has done with a question (anyone in the class may ask)."""
        code, lesson, question = clean_code(code), check_name(lesson), check_name(question)
        with self._transaction() as run:
            self._open_class(run, code)
            return self._state(run, code, lesson, question)

    def _state(self, run, code: str, lesson: str, question: str) -> QuestionState:
        rows = run("SELECT vote, shown, revealed FROM questions WHERE code = ? AND lesson = ? AND question = ?",
                   (code, lesson, question))
        return QuestionState(rows[0][0], bool(rows[0][1]), bool(rows[0][2])) if rows else QuestionState()

    def spread(self, code: str, lesson: str, question: str, setting: str, n_options: int) -> Counts | None:
        """The counts, once the teacher has shown them to the class (None before)."""
        code, lesson, question = clean_code(code), check_name(lesson), check_name(question)
        setting = check_setting(setting)
        check_option(1, n_options)
        with self._transaction() as run:
            self._open_class(run, code)
            if not self._state(run, code, lesson, question).shown:
                return None
            return self._counts(run, code, lesson, question, setting, n_options)

    # ------------------------------------------------------------------ the teacher

    def counts(self, code: str, key: str | None, lesson: str, question: str, setting: str, n_options: int) -> Counts:
        """The question's counts in a setting (teacher key needed)."""
        code, lesson, question = clean_code(code), check_name(lesson), check_name(question)
        setting = check_setting(setting)
        check_option(1, n_options)
        with self._transaction() as run:
            self._teacher(run, code, key)
            return self._counts(run, code, lesson, question, setting, n_options)

    def _counts(self, run, code, lesson, question, setting, n_options) -> Counts:
        per_vote = {1: [0] * n_options, 2: [0] * n_options}
        for vote, choice, n in run("""SELECT vote, choice, COUNT(*) FROM answers WHERE code = ? AND lesson = ?
                                      AND question = ? AND setting = ? AND n_options = ? GROUP BY vote, choice""",
                                   (code, lesson, question, setting, n_options)):
            per_vote[vote][choice - 1] = n
        other = run("""SELECT COUNT(*) FROM answers WHERE code = ? AND lesson = ? AND question = ? AND vote = 1
                       AND setting <> ?""", (code, lesson, question, setting))[0][0]
        return Counts(tuple(per_vote[1]), tuple(per_vote[2]), other)

    def act(self, code: str, key: str | None, lesson: str, question: str, action: str) -> QuestionState:
        """The teacher's buttons: 'show' / 'hide' the spread, 'revote' (open vote 2, close vote 1), 'reveal'."""
        code, lesson, question = clean_code(code), check_name(lesson), check_name(question)
        if action not in ACTIONS:
            raise ClassroomError("bad_input", "action")
        with self._transaction() as run:
            self._teacher(run, code, key)
            old = self._state(run, code, lesson, question)
            new = QuestionState(
                vote=2 if action == "revote" else old.vote,
                shown={"show": True, "hide": False}.get(action, old.shown),
                revealed=old.revealed or action == "reveal")
            run("""INSERT INTO questions (code, lesson, question, vote, shown, revealed) VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT (code, lesson, question) DO UPDATE SET vote = excluded.vote, shown = excluded.shown,
                   revealed = excluded.revealed""",
                (code, lesson, question, new.vote, int(new.shown), int(new.revealed)))
            return new

    def export(self, code: str, key: str | None) -> list[ExportRow]:
        """Every question's counts, one row per (lesson, question, setting, option) (teacher key needed)."""
        code = clean_code(code)
        with self._transaction() as run:
            self._teacher(run, code, key)
            rows = run("""SELECT lesson, question, setting, n_options, vote, choice, COUNT(*) FROM answers
                          WHERE code = ? GROUP BY lesson, question, setting, n_options, vote, choice""", (code,))
        table: dict[tuple, list[int]] = {}
        for lesson, question, setting, n_options, vote, choice, n in rows:
            for option in range(1, n_options + 1):
                table.setdefault((lesson, question, setting, option), [0, 0])
            table[(lesson, question, setting, choice)][vote - 1] = n
        return [ExportRow(*k, *v) for k, v in sorted(table.items())]
