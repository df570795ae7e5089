"""A class in AppTest (lesson 4's question, causal_predict: 4 options, the right one is 1): students' answers pooled
anonymously, the teacher's counts against the answers given, show / second vote / reveal reaching a student's page
with no click (its timer: a fragment the browser reruns), the key needed for counts, and a page outside a class that
imports nothing of it."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from classroom import new_student, setting_id
from classroom.sqlite_store import SqliteStore
from tests.apptest_utils import open_page
from ui.shared.i18n import load_strings

QUESTION, N, RIGHT = "causal_predict", 4, 1


@pytest.fixture
def db(tmp_path, monkeypatch):
    """A fresh SQLite class store for the app (the process's cached store is dropped before and after)."""
    from ui.shared.classroom import class_store

    monkeypatch.setenv("ATTENTION_CLASS_DB", str(tmp_path / "classes.sqlite3"))
    class_store.clear()
    yield SqliteStore(tmp_path / "classes.sqlite3")
    class_store.clear()


@pytest.fixture
def timers(monkeypatch):
    """The fragment timers the app's runs ask the browser for (the interval of each ForwardMsg auto_rerun, in s)."""
    from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

    asked, enqueue = [], ForwardMsgQueue.enqueue

    def recording(self, msg):
        if msg.WhichOneof("type") == "auto_rerun":
            asked.append(msg.auto_rerun.interval)
        enqueue(self, msg)

    monkeypatch.setattr(ForwardMsgQueue, "enqueue", recording)
    return asked


def student(code: str, lang: str = "en", seat: str | None = None):
    return open_page("causal", lang=lang, query={"class": code, "seat": seat or new_student()})


def teacher_counts(at, lang: str) -> dict[str, list[int]]:
    s = load_strings(lang)
    frames = [f.value for f in at.table if s["classroom.first_vote"] in f.value.columns]
    assert len(frames) == 1
    return {"first": frames[0][s["classroom.first_vote"]].tolist(), "second": frames[0][s["classroom.second_vote"]].tolist()}


def texts(at, kind: str) -> list[str]:
    return [e.value for e in getattr(at, kind)]


@pytest.mark.pages
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_students_answers_are_counted_and_held_until_the_teacher_reveals(db, timers, lang):
    s = load_strings(lang)
    code, key = db.create_class()
    choices = [2, 1, 2, 4, 2]
    pupils = []
    for choice in choices:
        at = student(code, lang)
        timers.clear()
        at.radio(key=QUESTION).set_value(choice).run()
        assert not at.exception
        assert s["classroom.recorded"] in texts(at, "info")
        assert not [m for m in texts(at, "success") + texts(at, "warning") if s["causal.predict_why"] in m]
        assert not [f for f in at.table if s["classroom.first_vote"] in f.value.columns]  # no counts for a student
        assert len(timers) == 1 and 0 < timers[0] <= 5  # the page asks again by itself (every few s): no button
        assert not [b for b in at.button if (b.key or "").startswith(QUESTION)]  # (nothing to click for it)
        pupils.append(at)
    timers.clear()
    late = student(code, lang)  # not answered yet: its page still waits for the reveal
    assert len(timers) == 1 and s["classroom.recorded"] not in texts(late, "info")
    pupils[0].radio(key=QUESTION).set_value(3).run()  # a changed answer replaces the earlier one
    choices[0] = 3
    tally = Counter(choices)

    te = open_page("causal", lang=lang, query={"class": code, "teacher": key})
    assert teacher_counts(te, lang) == {"first": [tally[i] for i in range(1, N + 1)], "second": [0] * N}
    assert s["classroom.teacher_counts"].format(answered=len(choices), answered2=0, other=0) in texts(te, "markdown")

    te.button(key=f"{QUESTION}_show").click().run()
    pupils[1].run()  # (what the page's timer does: the fragment's own run is not simulated by AppTest)
    shown = [f.value for f in pupils[1].table if s["classroom.first_vote"] in f.value.columns]
    assert len(shown) == 1 and shown[0][s["classroom.first_vote"]].tolist() == [tally[i] for i in range(1, N + 1)]

    te.button(key=f"{QUESTION}_revote").click().run()
    for at, again in zip(pupils[:3], (1, 1, 2)):
        at.run()
        at.radio(key=f"{QUESTION}_revote").set_value(again).run()
        assert not at.exception
    te.run()
    assert teacher_counts(te, lang)["second"] == [2, 1, 0, 0]

    te.button(key=f"{QUESTION}_reveal").click().run()
    assert [m for m in texts(te, "info") if s["causal.predict_why"] in m]
    at = pupils[3]  # answered 4: told the right answer now, and its page stops asking
    timers.clear()
    at.run()
    assert s["classroom.recorded"] not in texts(at, "info")
    assert [m for m in texts(at, "warning") if s["causal.predict_why"] in m]
    assert timers == []
    late.run()  # never answered: told the answer too
    assert [m for m in texts(late, "info") if s["causal.predict_why"] in m]


@pytest.mark.pages
def test_a_wrong_key_sees_no_counts_and_an_unknown_code_leaves_the_page_working(db):
    s = load_strings("en")
    code, key = db.create_class()
    db.answer(code, new_student(), "causal", QUESTION, setting_id({}), N, 2)
    wrong = open_page("causal", query={"class": code, "teacher": "A" * 32})
    assert s["classroom.error_forbidden"] in texts(wrong, "error")
    assert not [f for f in wrong.table if s["classroom.first_vote"] in f.value.columns]
    lost = student("ACDEFG" if code != "ACDEFG" else "ACDEFH")
    lost.radio(key=QUESTION).set_value(RIGHT).run()
    assert s["classroom.error_unknown"] in texts(lost, "error")
    assert [m for m in texts(lost, "success") if s["causal.predict_why"] in m]  # the page works alone
    for bad in ("", "<b>x</b>", "😀" * 6, "x" * 10_000):
        at = student(bad) if bad else open_page("causal", query={"class": bad})
        at.radio(key=QUESTION).set_value(RIGHT).run()
        assert not at.exception


def test_a_page_outside_a_class_imports_nothing_of_it():
    script = ("import sys; from tests.apptest_utils import open_page; at = open_page('causal');"
              "at.radio(key='causal_predict').set_value(1).run(); assert not at.exception;"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('classroom', 'psycopg', 'segno', 'sqlite3')"
              " or m == 'ui.shared.classroom'))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         cwd=str(Path(__file__).resolve().parent.parent))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def plotly_keys(at) -> list[str]:
    return [el.proto.id.split("-", 2)[-1] for el in at.get("plotly_chart")]


@pytest.mark.pages
def test_a_question_inside_a_sections_fragment_is_pooled_and_held_too(db):
    """Lesson 10b's sections are fragments, and in a class the question's box is one more inside them: a student's
    answer is counted, the four maps stay hidden until the teacher reveals, then they are drawn."""
    s = load_strings("en")
    code, key = db.create_class()
    at = open_page("modern", query={"class": code, "seat": new_student()}, timeout=600)
    at.radio(key="modern_gqa_predict").set_value(2).run()
    assert not at.exception
    assert s["classroom.recorded"] in texts(at, "info")
    assert not [k for k in plotly_keys(at) if k.startswith("modern_gqa_map_")]  # held: no map before the reveal
    assert db.counts(code, key, "modern", "modern_gqa_predict", setting_id({}), 3).first == (0, 1, 0)
    te = open_page("modern", query={"class": code, "teacher": key}, timeout=600)
    te.button(key="modern_gqa_predict_reveal").click().run()
    at.run()
    assert not at.exception
    assert sorted(k for k in plotly_keys(at) if k.startswith("modern_gqa_map_")) == [f"modern_gqa_map_{h}"
                                                                                   for h in range(4)]
