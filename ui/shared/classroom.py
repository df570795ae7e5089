"""A class in the app (imported only when a link carries ?class=, or the teacher starts one): the pooled answer of a
predict-then-reveal question, the teacher's live counts and buttons, and the sidebar's "Start a class".

The link holds the class: ``?class=CODE``, the seat ``?seat=ID`` (a random id the app adds on the first visit, so a
reconnect or a replica restart keeps the seat; the join link and QR code never carry one) and, for the teacher only,
``?teacher=KEY``. All three are kept over page changes by hidden boxes bound to the link (streamlit_app.py).

Before the teacher reveals a question, a student who has answered sees that the answer is in, and the spread once
the teacher shows it, but not whether it was right nor the figure that settles it: nothing answers a prediction
before the reveal. While a question waits for the teacher, a small fragment asks the store again every
STUDENT_EVERY_S seconds (the browser's timer): it redraws the spread, and reruns the page when the teacher starts
the second vote or reveals. The question's box is itself a fragment in a class (ui.shared.common.predict_then_reveal):
an answer reruns the box, not the page. Any error (unknown or expired code, database down) shows a message and the
page works alone.
"""

from __future__ import annotations

import csv
import io
import logging

import streamlit as st

from classroom import ClassroomError, ClassStore, Counts, QuestionState, clean_code, new_student, open_store, setting_id
from ui.shared.i18n import Translator

log = logging.getLogger("attention_app")
LIVE_EVERY_S = 1.0  # the teacher's counts refresh this often (only with the teacher key)
STUDENT_EVERY_S = 3.0  # a student's page asks whether the teacher has shown, started the revote or revealed
# (every 1 s tripled the polls of bench.bench_classroom --replicas, 300 -> 900 in its window, for a reveal 2 s sooner)


@st.cache_resource
def class_store() -> ClassStore:
    """One store per process (thread-safe: a connection per thread)."""
    return open_store()


def ensure_seat() -> None:
    """Give a class's page a seat id before the frame draws the bound ``seat`` box (so it goes into the link)."""
    if not st.session_state.get("seat") and not st.query_params.get("seat"):
        drawn = "seat" in st.session_state  # (drawn in an earlier run: bound, so setting it writes the URL)
        st.session_state.seat = seat = new_student()
        if not drawn:  # (before the box's first draw, a set alone writes no URL; once bound, Streamlit refuses this)
            st.query_params["seat"] = seat


def _fail(t: Translator, exc: ClassroomError) -> None:
    log.info("class: %s", exc)
    (st.error if exc.reason in ("unknown", "expired", "bad_input", "forbidden") else st.warning)(
        t(f"classroom.error_{exc.reason}"), icon=":material/groups:")


def _counts_table(t: Translator, say, section: str, counts: Counts, n_options: int):
    return {t("classroom.option"): [say(f"{section}.predict_{i}") for i in range(1, n_options + 1)],
            t("classroom.first_vote"): list(counts.first), t("classroom.second_vote"): list(counts.second)}


def pooled_question(t: Translator, say, section: str, n_options: int, key: str, values: dict,
                    choice: int | None) -> tuple[bool, bool]:
    """Record this seat's answer and draw the class's part of the question -> (hold the reveal, revealed by teacher).

    Called by ui.shared.common.predict_then_reveal inside the question's box, only in a class.
    """
    store, state_ = class_store(), st.session_state
    lesson, setting = section.split(".")[0], setting_id(values)
    try:
        code = clean_code(state_.get("class", ""))
        teacher = bool(state_.get("teacher")) and store.is_teacher(code, state_.get("teacher"))
        state = store.state(code, lesson, key)
        if state_.get("teacher") and not teacher:  # (a wrong teacher link: said, and the page goes on as a student's)
            _fail(t, ClassroomError("forbidden"))
    except ClassroomError as exc:
        _fail(t, exc)
        return False, False
    if teacher:
        teacher_panel(t, say, code, state_.get("teacher"), section, lesson, key, setting, n_options)
        return not state.revealed, state.revealed
    st.caption(t("classroom.in_class", code=code))
    if choice is None or state.revealed and not choice:
        if not state.revealed:  # (no answer yet: nothing to show, but the reveal still reaches this page)
            waiting_for_the_teacher(t, say, section, code, lesson, key, setting, n_options, state, answered=False)
        return False, state.revealed
    try:
        seat = state_.get("seat", "")
        mine = store.my_answers(code, seat, lesson, key, setting)
        if state.vote == 1 and not state.revealed and mine.get(1) != choice:
            store.answer(code, seat, lesson, key, setting, n_options, choice, vote=1)
        if state.vote == 2 and not state.revealed:
            again = st.radio(t("classroom.revote_q"), range(1, n_options + 1), index=None, key=f"{key}_revote",
                             format_func=lambda i: say(f"{section}.predict_{i}"))
            if again is not None and mine.get(2) != again:
                store.answer(code, seat, lesson, key, setting, n_options, again, vote=2)
        spread = store.spread(code, lesson, key, setting, n_options) if state.revealed else None
    except ClassroomError as exc:
        _fail(t, exc)
        return exc.reason not in ("unknown", "expired", "bad_input", "unavailable") and not state.revealed, False
    if state.revealed:
        _spread_table(t, say, section, spread, n_options)
        return False, True
    waiting_for_the_teacher(t, say, section, code, lesson, key, setting, n_options, state, answered=True)
    return True, False


def _spread_table(t, say, section: str, spread: Counts | None, n_options: int) -> None:
    if spread is not None:
        st.caption(t("classroom.spread"))
        st.table(_counts_table(t, say, section, spread, n_options), hide_index=True)


def waiting_for_the_teacher(t, say, section, code, lesson, key, setting, n_options, seen: QuestionState,
                            answered: bool) -> None:
    """A student's part of a question the teacher has not revealed: the answer is in and the spread once shown,
    asked again every STUDENT_EVERY_S s; a second vote or the reveal reruns the page, which draws them."""
    store = class_store()

    @st.fragment(run_every=STUDENT_EVERY_S)
    def waiting():
        try:
            state = store.state(code, lesson, key)
            spread = store.spread(code, lesson, key, setting, n_options) if answered and state.shown else None
        except ClassroomError as exc:
            _fail(t, exc)
            return
        if (state.vote, state.revealed) != (seen.vote, seen.revealed):
            st.rerun()  # (the whole page: the second vote's question or the figure is the page's to draw)
        if answered:
            _spread_table(t, say, section, spread, n_options)
            st.info(t("classroom.recorded"), icon=":material/how_to_vote:")

    waiting()


def teacher_panel(t, say, code, teacher_key, section, lesson, key, setting, n_options) -> None:
    """The counts of the question on screen (live) and the teacher's buttons."""
    store = class_store()

    @st.fragment(run_every=LIVE_EVERY_S)
    def live_counts():
        try:
            counts = store.counts(code, teacher_key, lesson, key, setting, n_options)
        except ClassroomError as exc:
            _fail(t, exc)
            return
        first, second = counts.answered
        st.markdown(t("classroom.teacher_counts", answered=first, answered2=second, other=counts.other_settings))
        st.table(_counts_table(t, say, section, counts, n_options), hide_index=True)  # (plain text: read on a projector)

    live_counts()
    columns = st.columns(4)
    state = store.state(code, lesson, key)
    for column, action in zip(columns, ("hide" if state.shown else "show", "revote", "reveal")):
        disabled = (action == "revote" and state.vote == 2) or (action in ("revote", "reveal") and state.revealed)
        if column.button(t(f"classroom.{action}"), key=f"{key}_{action}", disabled=disabled):
            try:
                store.act(code, teacher_key, lesson, key, action)
            except ClassroomError as exc:
                _fail(t, exc)
                return
            st.rerun()
    columns[3].download_button(t("classroom.export"), data=lambda: export_csv(code, teacher_key),
                               file_name=f"class-{code}.csv", mime="text/csv", key=f"{key}_export")


def export_csv(code: str, teacher_key: str) -> bytes:
    """The class's answers: lesson, question, setting, option, first vote, second vote (one row per option)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["lesson", "question", "setting", "option", "first_vote", "second_vote"])
    for row in class_store().export(code, teacher_key):
        writer.writerow([row.lesson, row.question, row.setting, row.option, row.first, row.second])
    return out.getvalue().encode("utf-8")


def class_sidebar(t: Translator, start: bool) -> None:
    """The sidebar's class: start one (``start``: the button was clicked), then its code, links and QR code."""
    if start:
        try:
            st.session_state._class_started = class_store().create_class()  # (the frame moves it into the link)
        except ClassroomError as exc:
            _fail(t, exc)
            return
        st.rerun()
    code, key = st.session_state.get("class"), st.session_state.get("teacher")
    if not (code and key):
        return
    base = str(st.context.url or "").split("?")[0]
    join = f"{base}?class={code}"
    st.markdown(t("classroom.started", code=code))
    st.text_input(t("classroom.join_link"), value=join, disabled=True, key="class_join_link")
    st.image(qr_png(join), caption=t("classroom.qr_caption", code=code))
    st.text_input(t("classroom.teacher_link"), value=f"{join}&teacher={key}&presenter=true", disabled=True,
                  key="class_teacher_link", type="password")


@st.cache_data(max_entries=16)
def qr_png(link: str) -> bytes:
    import segno  # (only a teacher who starts a class draws a QR code)

    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="png", scale=6, border=2)
    return out.getvalue()
