"""Lesson 8's sections on the learner's sentence: the sentence, the [CLS] sink, the predictions, find the head.

The model is read once per process and shared read-only (st.cache_resource); a sentence's attention is computed
once per distinct text (st.cache_data). The measurements on the built-in sets (attention_core.pretrained.measure),
for the model and its untrained copy, are registered as start-up work (ui/shared/startup.py: made in the background from
the server's first run on), and a page that asks first waits for them. ``find_section`` is a fragment: a word
picked inside reruns only that section. The measured sections are in ui/pretrained/measures.py, the model view in
ui/pretrained/view.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import streamlit as st

from attention_core.pretrained import heads
from attention_core.glove.pronouns import DefaultWords, capitalised_words, default_words
from attention_core.pretrained import (
    INSTALL_COMMAND, ModelUnavailable, build_untrained_copy, load_model, read_text, vocabulary_check,
)
from attention_core.pretrained.measure import LessonMeasures, SetResults, lesson_measures, set_results
from attention_core.pretrained.sets import load_pretrained_sets
from charts.bars import weight_bars
from charts.matrix import attention_heatmap
from ui.shared.common import (
    MAX_TOKENS, data_table, explanation, guarded_fragment, md_escape, predict_then_reveal, preset_or_own_text,
    text_limits,
)
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.shared.links import url_selectbox
from ui.shared.startup import register_startup
from ui.shared.streamlit_compat import return_freed_memory

S = "pretrained"
READABLE_CODE = "attention_core/pretrained/bert_readable.py"  # the encoder a learner reads (the app runs bert.py, held to it)
RANKED_SHOWN = 12  # heads in the "find the head" bar chart (the table lists all of them)
UNTRAINED_SEED = 0  # lesson 8's control: one seeded untrained copy, the same for every session


def _untrained_results() -> SetResults:
    model = build_untrained_copy(UNTRAINED_SEED)
    results = set_results(model, load_pretrained_sets())
    del model  # the copy's weights (~86 MB) live only while its results are made
    return_freed_memory()
    return results


# Start-up work, in this order: the trained model's results (the page needs them on opening), the untrained copy's
# (early, before a class's pages fill the memory), then what the page reports from both.
TRAINED = register_startup("pretrained-trained", lambda: set_results(load_model(), load_pretrained_sets()))
UNTRAINED = register_startup("pretrained-untrained", _untrained_results)
MEASURES = register_startup("pretrained-measures",
                            lambda: lesson_measures(TRAINED.result(), UNTRAINED.result(), load_pretrained_sets()))


def trained_results() -> SetResults:
    """The trained model on the built-in sets (shared read-only); raises what computing them raised
    (ModelUnavailable without the model package, PresetError for a broken file)."""
    return TRAINED.result()


def untrained_results() -> SetResults:
    return UNTRAINED.result()


def measures() -> LessonMeasures:
    """Everything the page reports from the built-in sets (attention_core.pretrained.measure.lesson_measures)."""
    return MEASURES.result()


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


# ---------------------------------------------------------------- cached calls

@st.cache_resource(show_spinner=False)
def _model():
    return load_model()


@st.cache_resource(show_spinner=False)
def lesson_sets():
    return load_pretrained_sets()


@dataclass(frozen=True)
class SentenceView:
    """One sentence through the trained model: its text, tokens, words (text, first, stop), attention (L, H, n, n)."""

    text: str
    tokens: tuple[str, ...]
    words: tuple[tuple[str, int, int], ...]
    attentions: np.ndarray

    def spans(self) -> list[tuple[int, int]]:
        return [(first, stop) for _, first, stop in self.words if stop > first]


@st.cache_data(show_spinner=False, max_entries=256)
def sentence_view(text: str) -> SentenceView:
    reading = read_text(text, _model())
    return SentenceView(text, tuple(reading.token_texts), tuple((w.text, w.first, w.stop) for w in reading.words),
                        reading.attentions)


@st.cache_resource(show_spinner=False, max_entries=8)
def viewed(text: str, hide: bool) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """-> (tokens shown, weights shown (L, H, m, m), weights at full size (L, H, n, n)); hidden: renormalised."""
    view = sentence_view(text)
    if not hide:
        return view.tokens, view.attentions, view.attentions
    full = heads.hide_special(view.attentions, view.tokens)
    keep = ~heads.special_mask(view.tokens)
    shown = full[..., keep, :][..., keep]
    return tuple(tok for tok, k in zip(view.tokens, keep) if k), shown, full


def featured():
    """-> (the head with most weight from "it" to "animal" in the famous sentence, the pair, the trained model's
    minimal-pair test on it): from the once-per-process results of the trained model."""
    results = trained_results()
    return results.featured, lesson_sets().winograd[0], results.featured_test


def sentence_words(view: SentenceView) -> list[str]:
    """-> the sentence's words as the model reads them (lower case), those that make at least one token."""
    return [w.lower() for w, first, stop in view.words if stop > first]


def pronoun_link(view: SentenceView):
    """-> lesson 6's rule on this sentence (attention_core.glove.pronouns.default_words: the first pronoun, and the
    noun it most plausibly refers to): DefaultWords over sentence_words; query_rule "last_word" means no pronoun."""
    words = sentence_words(view)
    if len(set(words)) < 2:  # one word repeated ("word word word"): no rule to apply; the last word and the first
        return DefaultWords(len(words) - 1, 0, "last_word", "first_other", frozenset())
    return default_words(words, capitalised_words(view.text))


def pronoun_token(view: SentenceView) -> int | None:
    """-> the token position of the sentence's first pronoun (lesson 6's rule), None when it has none."""
    choice = pronoun_link(view)
    if choice.query_rule != "pronoun":
        return None
    return [first for _, first, stop in view.words if stop > first][choice.query]


# ---------------------------------------------------------------- the sentence

def formula() -> str:
    """The page's formula in LaTeX, with the model's own sizes when it is installed."""
    try:
        config = _model().weights.config
        d_k, last_layer, last_head = config.head_size, config.num_layers - 1, config.num_heads - 1
    except ModelUnavailable:
        d_k, last_layer, last_head = "d_k", "L - 1", "H - 1"
    return (r"A^{(\ell, h)} = \mathrm{softmax}\!\left(\frac{(X_\ell W_Q^{(\ell, h)})(X_\ell W_K^{(\ell, h)})^\top}"
            rf"{{\sqrt{{{d_k}}}}}\right),\qquad \ell = 0, \dots, {last_layer},\quad h = 0, \dots, {last_head}")


def model_or_message(t) -> bool:
    """True when the model is installed; otherwise the page says how to install it."""
    try:
        with st.spinner(t(f"{S}.loading")):
            _model()
        st.caption(t("common.read_the_code", path=READABLE_CODE))
        return True
    except ModelUnavailable as exc:
        st.error(t(f"{S}.missing", command=INSTALL_COMMAND, detail=md_escape(str(exc))), icon=":material/download:")
        return False


def sentence_picker(t) -> SentenceView | None:
    """The preset or the learner's own sentence -> its view; None (with a message shown) when it cannot be read."""
    presets = lesson_sets().presets
    text = preset_or_own_text(t, S, "pretrained", presets, presets, own_caption=text_limits(t),
                              caption=t(f"{S}.english_only"))
    if not text.strip():
        st.warning(t("common.empty_sentence"))
        return None
    check = vocabulary_check(text, _model())
    if check.mostly_outside:
        st.warning(t(f"{S}.not_english", share=f"{check.share_outside:.0%}"), icon=":material/translate:")
        return None
    n = len(read_tokens(text))
    if n > MAX_TOKENS:  # shown on its first words that fit, with a notice, rather than refused
        text = first_words_within(text, MAX_TOKENS)
        st.info(t(f"{S}.too_many_tokens", n=n, limit=MAX_TOKENS, shown=len(read_tokens(text))),
                icon=":material/content_cut:")
    view = sentence_view(text)
    if len(view.spans()) < 2:
        st.warning(t(f"{S}.one_word"))
        return None
    st.caption(t(f"{S}.tokens", n=len(view.tokens), tokens=" · ".join(md_escape(tok) for tok in view.tokens)))
    if check.outside_words:
        st.caption(t(f"{S}.outside", words=", ".join(md_escape(w) for w in check.outside_words)))
    return view


def first_words_within(text: str, limit: int) -> str:
    """-> the longest run of the text's first whitespace-separated words that reads as at most ``limit`` tokens."""
    words = text.split()
    low, high = 0, len(words)  # the first `low` words fit; the first `high + 1` do not (or there are no more)
    while low < high:
        mid = (low + high + 1) // 2
        if len(read_tokens(" ".join(words[:mid]))) <= limit:
            low = mid
        else:
            high = mid - 1
    return " ".join(words[:low])


def read_tokens(text: str) -> list[str]:
    """text -> its tokens (no forward pass: an over-long text is refused before the model runs)."""
    from attention_core.pretrained import wordpiece

    return wordpiece.tokenize(text, _model().vocabulary)


# ---------------------------------------------------------------- where the weight goes: the [CLS] sink

def grid_labels(t, layers: int, count: int) -> tuple[list[str], list[str]]:
    return ([t(f"{S}.layer_short", k=k) for k in range(layers)], [t(f"{S}.head_short", k=k) for k in range(count)])


def sink_section(t, view: SentenceView, hide: bool) -> None:
    """The share of each head's weight on [CLS] over this sentence's words, why [CLS] works as a sink (its hidden
    state is nearly the same in every sentence), and what the switch does about it."""
    st.subheader(t(f"{S}.sink_title"))
    words = heads.SpannedSentence(tuple(view.spans()), ())
    share = heads.sink_scores([view.attentions], [words]).mean_weight
    layers, count = share.shape
    rows, cols = grid_labels(t, layers, count)
    show_plotly(figure_spec(attention_heatmap, share, rows, cols, title=t(f"{S}.sink_map_title"),
                            value_label=t(f"{S}.share_label"), axis_titles=(t(f"{S}.axis_head"), t(f"{S}.axis_layer")),
                            plot_width=600, height=360), key="pretrained_sink_map")
    st.markdown(t(f"{S}.sink_numbers", share=f"{share.mean():.0%}", over=int((share > 0.5).sum()), heads=share.size))
    with st.spinner(t(f"{S}.catalogue_running")):  # shown only if the server started moments ago
        cosine = trained_results().cls_cosine
    presets = lesson_sets().presets
    st.markdown(t(f"{S}.sink_cosine", first=md_escape(presets[0]), second=md_escape(presets[-1]),
                  lowest=f"{cosine.min():.4f}", layers=cosine.size))
    _explain(t, "sink_explain")
    st.caption(t(f"{S}.hide_on") if hide else t(f"{S}.hide_off"))


# ---------------------------------------------------------------- the two predictions

def predictions(t) -> bool:
    """Two questions about the famous sentence, before any figure of its heads; True once both are answered."""
    with st.spinner(t(f"{S}.catalogue_running")):  # shown only if the server started moments ago
        best, pair, test = featured()
    st.subheader(t(f"{S}.predict_title"))
    first = predict_then_reveal(t, f"{S}.link", 3, 1 if best.weight > 0.5 else (2 if best.weight > 0.2 else 3),
                                key="pretrained_predict")
    if first:
        with st.spinner(t(f"{S}.catalogue_running")):
            control = untrained_results().featured
        st.caption(t(f"{S}.link_numbers", head=best.name, weight=f"{best.weight:.0%}",
                     untrained=f"{control.weight:.0%}", untrained_head=control.name))
    street_wins = int(test.preferred[1, best.layer, best.head]) == 1
    # The second question names "the head that links it to animal": asked only once the first is answered.
    second = first and predict_then_reveal(t, f"{S}.switch", 2, 1 if street_wins else 2, key="pretrained_switch_predict")
    if second:
        w = test.weights[:, best.layer, best.head]
        st.caption(t(f"{S}.switch_numbers", head=best.name, tired_animal=f"{w[0, 0]:.0%}",
                     tired_street=f"{w[0, 1]:.0%}",
                     wide_animal=f"{w[1, 0]:.0%}", wide_street=f"{w[1, 1]:.0%}", flips=int(test.flips.sum()),
                     heads=test.flips.size))
    if not (first and second):
        st.info(t(f"{S}.answer_first"), icon=":material/arrow_upward:")
    return first and second


# ---------------------------------------------------------------- find the head

@guarded_fragment
def find_section(t, text: str, hide: bool) -> None:
    """Two words (starting at lesson 6's rule: the first pronoun, the noun it most plausibly refers to) -> every
    head ranked by the weight from the first to the second."""
    view = sentence_view(text)
    shown, _, full = viewed(text, hide)
    words = [w for w, first, stop in view.words if stop > first]
    spans = view.spans()
    choice = pronoun_link(view)
    st.subheader(t(f"{S}.find_title"))
    _explain(t, "find_explain")
    c_from, c_to = st.columns(2)
    label = lambda i: f"{words[i]} ({i + 1})"  # noqa: E731
    with c_from:
        source = url_selectbox(t(f"{S}.from_word"), list(range(len(words))), "pretrained_from", format_func=label,
                               default=choice.query)
    with c_to:
        target = url_selectbox(t(f"{S}.to_word"), list(range(len(words))), "pretrained_to", format_func=label,
                               default=choice.target)
    if choice.query_rule != "pronoun":
        st.info(t(f"{S}.find_no_pronoun"), icon=":material/info:")
    elif (source, target) == (choice.query, choice.target):
        st.caption(t(f"{S}.find_rule", source=md_escape(words[source]), target=md_escape(words[target])))
    if source == target:
        st.info(t(f"{S}.same_word"))
        return
    ranked = heads.rank_heads(full, spans[source], spans[target])
    names = [t(f"{S}.head_name", layer=h.layer, head=h.head) for h in ranked]
    show_plotly(figure_spec(weight_bars, names[:RANKED_SHOWN], [h.weight for h in ranked[:RANKED_SHOWN]],
                            title=t(f"{S}.find_chart", source=words[source], target=words[target], shown=RANKED_SHOWN),
                            highlight=0, value_label=t("common.weight"), as_percent=True),
                key="pretrained_find_bars")
    weights = np.array([h.weight for h in ranked])
    st.caption(t(f"{S}.find_caption", source=md_escape(words[source]), target=md_escape(words[target]),
                 head=names[0], weight=f"{weights[0]:.1%}", median=f"{np.median(weights):.1%}",
                 even=f"{1 / len(shown):.1%}", n=len(shown)))
    with st.expander(t(f"{S}.find_table")):
        data_table(pa.table({t(f"{S}.col_head"): names, t("common.weight"): np.round(weights, 4)}), hide_index=True,
                   key="pretrained_find_table")
