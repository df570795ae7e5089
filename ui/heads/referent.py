"""Does the model decide "it" at all? Lesson 9's famous sentence with many last words, asked which noun "it" is: the
behaviour first (counted on words the claim was not found on, against chance), then patching the two runs of
"...too tired" / "...too wide" per head and per layer x position: what moves the logit difference between them.

The study (attention_core/gpt_studies/referent_study.py) is start-up work, once per server and kept on disk (ui/heads/results.py's
`stored`): it waits for the start-up work registered before it, so it never delays another lesson's. The texts:
lesson 9's sentence, nouns, words and question (data/gpt.toml) and the held-out words (data/heads.toml [referent])."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import streamlit as st

from attention_core.gpt_studies import referent_study as rs
from attention_core.presets import read_preset
from charts.heads import interval_bars
from charts.transformer import feature_heatmap
from ui.shared.gpt_models import texts as lesson9_texts  # the famous sentence, its words and its question: lesson 9's
from ui.heads.results import BAND_WAIT, STUDY_SOURCES, head_label, model, shown_token, stored, stored_folder
from ui.heads.waiting import fill_in_when_done  # the waiting box that reruns the page once the study is done
from ui.shared.common import data_table, explanation, md_escape, predict_then_reveal
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.heads.sections import f2, joined, pct  # the lesson's number style
from ui.shared.startup import register_startup, registered

S = "heads_referent"
NAME = "referent"  # its disk folder's name (with the model's hash and its sources' digest, REFERENT_SOURCES)
REFERENT_SOURCES = (rs, *STUDY_SOURCES, Path(__file__), Path(__file__).resolve().parents[2] / "data" / "gpt.toml")
SHOWN_K = 10  # the picked heads patched together in the headline sentence
HALF = 0.5  # "carries the difference": at least half the gap restored from that one place


# ---------------------------------------------------------------- the texts

@dataclass(frozen=True)
class ReferentTexts:
    stem: str  # the sentence up to its last word
    nouns: tuple[str, str]
    question: str  # lesson 9's
    second_question: str
    words: tuple[str, ...]  # lesson 9's words for the first noun, for the second, then the held-out ones likewise
    fits_first: tuple[bool, ...]
    lesson9: tuple[bool, ...]


def _validate(data: dict, check) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    table = check.get(data, "referent", dict)
    lists = []
    for key in ("held_out_first", "held_out_second"):
        words = check.get(table, key, list, "referent")
        if not words or not all(isinstance(w, str) and w and w.strip() == w and " " not in w for w in words):
            check.fail(f"referent.{key}", "must be a list of single words")
        lists.append(tuple(words))
    if len(lists[0]) != len(lists[1]):
        check.fail("referent.held_out_second", "must be as long as held_out_first (the i-th of each make a pair)")
    return lists[0], lists[1], check.text(table, "second_question", "referent")


@st.cache_data(show_spinner=False)
def referent_texts() -> ReferentTexts:
    g = lesson9_texts()
    held_first, held_second, second_question = read_preset("heads", _validate)
    last = g.minimal_pair_text.split()[-1]
    first9, second9 = (last, *g.first_referent), (g.minimal_pair_other, *g.second_referent)
    if set(held_first + held_second) & set(first9 + second9):
        raise ValueError("data/heads.toml [referent]: a held-out word is one of lesson 9's (data/gpt.toml)")
    words = first9 + second9 + held_first + held_second
    fits = [True] * len(first9) + [False] * len(second9) + [True] * len(held_first) + [False] * len(held_second)
    return ReferentTexts(g.minimal_pair_text[: len(g.minimal_pair_text) - len(last)], g.nouns, g.question,
                         second_question, words, tuple(fits), tuple(i < len(first9) + len(second9)
                                                                    for i in range(len(words))))


# ---------------------------------------------------------------- the study (start-up work, kept on disk)

@dataclass(frozen=True)
class ReferentResult:
    texts: ReferentTexts
    asked: rs.Behaviour  # lesson 9's question, every word
    second: rs.Behaviour  # the second wording
    patching: rs.PatchingStudy
    corrupted_ids: tuple[int, ...]  # the run of the second word ("...too wide" + question): the residual map's rows


class Status:
    """Where the study is, read by the page while the start-up thread writes it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.phase, self.done, self.total, self.detail = "", 0, 0, ""

    def __call__(self, phase: str, done: int = 0, total: int = 0, detail: str = "") -> None:
        with self._lock:
            self.phase, self.done, self.total, self.detail = phase, done, total, detail

    def read(self) -> tuple[str, int, int]:
        with self._lock:
            return self.phase, self.done, self.total


STATUS = Status()


def _sentences(data: ReferentTexts, question: str) -> np.ndarray:
    """-> (W, n) the ids of the sentence with each word and the question; ValueError when a word is not one token
    (the runs must line up position by position)."""
    tokenizer = model()[1]
    ids = [tokenizer.encode(data.stem + word + question) for word in data.words]
    one = len(tokenizer.encode(data.stem + data.words[0]))
    bad = [w for w, i in zip(data.words, ids) if len(i) != len(ids[0]) or len(tokenizer.encode(data.stem + w)) != one]
    if bad:
        raise ValueError(f"these words are not one token after the sentence: {bad}")
    return np.array(ids)


def compute_study() -> ReferentResult:
    STATUS("")  # (a new attempt after a failure)
    try:
        return _compute_study()
    except Exception as exc:
        STATUS("failed", detail=str(exc))  # the page says so (a new visit tries again)
        raise


def _compute_study() -> ReferentResult:
    weights, tokenizer = model()
    data = referent_texts()
    nouns = tuple(tokenizer.encode(" " + noun)[0] for noun in data.nouns)
    fits, lesson9 = np.array(data.fits_first), np.array(data.lesson9)
    asked_ids, second_ids = _sentences(data, data.question), _sentences(data, data.second_question)
    first9, second9 = np.flatnonzero(fits & lesson9), np.flatnonzero(~fits & lesson9)
    held_first, held_second = np.flatnonzero(fits & ~lesson9), np.flatnonzero(~fits & ~lesson9)

    def runs() -> tuple:
        STATUS("running")
        asked = rs.ask(weights, asked_ids, nouns, fits)
        second = rs.ask(weights, second_ids, nouns, fits)
        patching = rs.patching_study(weights, (asked_ids[first9[0]], asked_ids[second9[0]]),
                                     (asked_ids[held_first], asked_ids[held_second]), nouns,
                                     progress=lambda done, total: STATUS("running", done, total))
        return asked, second, patching

    if not _on_disk():
        STATUS("waiting")
        _after_earlier_work()
    asked, second, patching = stored(NAME, runs, REFERENT_SOURCES)
    return ReferentResult(data, asked, second, patching, tuple(int(i) for i in asked_ids[second9[0]]))


def _on_disk() -> bool:
    """Whether stored(NAME, ...) will read its result rather than compute it (its folder as study.stored names it)."""
    return stored_folder(NAME, REFERENT_SOURCES).is_dir()


def _after_earlier_work() -> None:
    """Wait for every start-up work registered before this one (lessons 8, 4, 9 and this lesson's own): on two cores
    this sweep would otherwise slow them down. (Outside stored: its folder lock would hold theirs.)"""
    for work in registered():
        if work is REFERENT:
            return
        try:
            work.result()
        except Exception:  # noqa: BLE001 - that page shows its own message
            pass


REFERENT = register_startup("heads-referent", compute_study)


def study_or_progress(t) -> ReferentResult | None:
    """-> the study when it is ready (or read from disk within BAND_WAIT); otherwise None after saying how far it is."""
    REFERENT.start()
    deadline = time.monotonic() + BAND_WAIT
    while not REFERENT.wait(0.05) and time.monotonic() < deadline and not STATUS.read()[0]:
        pass
    if REFERENT.ready():
        return REFERENT.result()
    phase, done, total = STATUS.read()
    if phase == "failed":
        st.warning(t(f"{S}.failed", detail=md_escape(STATUS.detail)))
        return None
    fill_in_when_done(t, REFERENT, referent_message)  # (the page reruns by itself once the study is done)
    return None


def referent_message(t) -> str:
    """-> what the study is doing: waiting for the earlier start-up work, or how many of its runs are done."""
    phase, done, total = STATUS.read()
    key = "waiting" if phase == "waiting" else "running"
    return t(f"{S}.{key}", done=done, total=total or "…", words=len(referent_texts().words))


# ---------------------------------------------------------------- the section

def referent_answer(r: ReferentResult) -> int:
    """1: right nearly always (at least 90 % of the held-out words); 2: above chance (the interval above half);
    3: no better than chance."""
    right = r.asked.right(~np.array(r.texts.lesson9))
    return 1 if right.share >= 0.9 else (2 if right.interval[0] > 0.5 else 3)


def referent_section(t) -> None:
    st.subheader(t(f"{S}.title"))
    data = referent_texts()
    first, second = data.nouns
    lesson9 = np.array(data.lesson9)
    explanation(t(f"{S}.explain", question=md_escape(data.question.strip(". ")), first=first, second=second,
                  lesson9=int(lesson9.sum()), held=int((~lesson9).sum())))
    result = study_or_progress(t)
    if result is None:
        return
    if not predict_then_reveal(t, S, 3, lambda: referent_answer(result), key="heads_referent_predict",
                               tired=data.words[0], wide=data.words[int(np.argmin(data.fits_first))],
                               first=first, second=second, words=len(data.words)):
        return
    behaviour(t, result)
    patching(t, result)


def behaviour(t, r: ReferentResult) -> None:
    data, asked = r.texts, r.asked
    first, second = data.nouns
    lesson9, fits = np.array(data.lesson9), asked.fits_first
    groups = [(fits & lesson9, "bar_first_lesson9"), (~fits & lesson9, "bar_second_lesson9"),
              (fits & ~lesson9, "bar_first_held"), (~fits & ~lesson9, "bar_second_held")]
    counts = [asked.named_first(mask) for mask, _ in groups]
    show_plotly(figure_spec(interval_bars, [t(f"{S}.{key}", first=first, second=second, n=c.n)
                                            for (_, key), c in zip(groups, counts)],
                            [100 * c.share for c in counts], [100 * c.interval[0] for c in counts],
                            [100 * c.interval[1] for c in counts], title=t(f"{S}.chart", first=first),
                            value_label=t(f"{S}.value_label", first=first), highlight=3, fmt=".0f"),
                key="heads_referent_chart")
    held = ~lesson9
    right, right2 = asked.right(held), r.second.right(held)
    low, high = right.interval
    probabilities = asked.probabilities[held]
    st.markdown(t(f"{S}.numbers", first=first, second=second, n9=counts[0].n + counts[1].n,
                  a9=counts[0].k + counts[1].k, held=right.n, named_first=counts[2].k, n_first=counts[2].n,
                  named_second=counts[3].k, n_second=counts[3].n, right=right.k, share=pct(right.share),
                  low=pct(low), high=pct(high), half=right.n // 2, p_low=f2(probabilities[:, 0].min()),
                  p_high=f2(probabilities[:, 0].max()), s_high=f"{probabilities[:, 1].max():.4f}",
                  question2=md_escape(data.second_question.strip(". ")), right2=right2.k, all2=right2.n,
                  share2=pct(right2.share)))
    pairs = rs.paired_leads(asked.lead[fits & held], asked.lead[~fits & held])
    nudge = asked.lead[fits & held] - asked.lead[~fits & held]
    p_low, p_high = pairs.interval
    st.markdown(t(f"{S}.nudge", first=first, second=second, k=pairs.k, pairs=pairs.n, low=pct(p_low),
                  high=pct(p_high), nudge=f2(float(np.median(nudge))), factor=f"{np.exp(np.median(nudge)):.1f}",
                  lead_low=f2(asked.lead[held].min()), lead_high=f2(asked.lead[held].max())))
    table = pa.table({t(f"{S}.col_word"): list(data.words),
                      t(f"{S}.col_fits"): [first if f else second for f in fits],
                      t(f"{S}.col_source"): [t(f"{S}.source_{'lesson9' if s else 'held'}") for s in lesson9],
                      # (fixed decimals as text: a float cell would show 8e-05; these still sort right)
                      t(f"{S}.col_p_first", first=first): [f"{p:.3f}" for p in asked.probabilities[:, 0]],
                      t(f"{S}.col_p_second", second=second): [f"{p:.5f}" for p in asked.probabilities[:, 1]],
                      t(f"{S}.col_lead"): [round(float(x), 2) for x in asked.lead]})
    data_table(table, hide_index=True, key="heads_referent_table")
    st.markdown(t(f"{S}.verdict", first=first))


def patching(t, r: ReferentResult) -> None:
    data, p = r.texts, r.patching
    first, second = data.nouns
    clean_word, corrupted_word = data.words[0], data.words[int(np.argmin(data.fits_first))]
    st.markdown(f"**{t(f'{S}.patch_title')}**")
    explanation(t(f"{S}.patch_explain", tired=clean_word, wide=corrupted_word, first=first, second=second,
                  clean=f2(p.clean_lead), corrupted=f2(p.corrupted_lead), gap=f2(p.gap)))
    layers, heads = p.heads.shape
    show_plotly(figure_spec(feature_heatmap, p.heads.T, [f"H{h}" for h in range(heads)],
                            title=t(f"{S}.heads_chart", tired=clean_word, wide=corrupted_word),
                            value_label=t(f"{S}.fraction_label"),
                            axis_titles=(t(f"{S}.layer_label"), t(f"{S}.head_label"))), key="heads_referent_heads")
    row = p.ks.index(SHOWN_K)
    top = p.picked[:3]
    beat = p.beats_random(row)
    st.markdown(t(f"{S}.heads_numbers", heads=joined(t, [f"{head_label(h)} ({f2(p.heads[h])})" for h in top]),
                  k=SHOWN_K, pairs=p.held_out.shape[1], median=f2(float(np.median(p.held_out[row]))),
                  draws=p.random.shape[1], random=f2(float(np.median(np.median(p.random[row], axis=-1)))),
                  percentile=f"{p.percentile(row):.0f}", beat=beat.k, all=layers * heads, tired=clean_word,
                  at_word=f2(p.all_heads_at_word), at_last=f2(p.all_heads_at_last)))
    labels = [f"{i} {shown_token(token)}" for i, token in enumerate(r.corrupted_ids)]
    show_plotly(figure_spec(feature_heatmap, p.resid.T, labels,
                            title=t(f"{S}.resid_chart", tired=clean_word, wide=corrupted_word),
                            value_label=t(f"{S}.fraction_label"),
                            axis_titles=(t(f"{S}.state_label"), t(f"{S}.position_label"))), key="heads_referent_resid")
    until, since = p.carried(HALF)
    st.markdown(t(f"{S}.resid_numbers", tired=clean_word, until=until, since=since, layers=layers))
    explanation(t(f"{S}.meaning", gap=f2(p.gap), first=first, lead=f2(float(np.median(r.asked.lead)))))
    st.caption(t(f"{S}.limits", tired=clean_word, wide=corrupted_word, pairs=p.held_out.shape[1],
                 draws=p.random.shape[1]))
