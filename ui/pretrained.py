"""Lesson 8's sections: a trained model's heads on the learner's sentence, measured.

The model is read once per process and shared read-only (st.cache_resource); a sentence's attention is computed
once per distinct text (st.cache_data); the catalogue, the Winograd study and the featured head, for the model and
its untrained twin, are computed on the built-in sets once per process in the background from the server's first
run on (ui/startup.py), and a page that asks first waits for them. ``heads_section`` and ``find_section`` are fragments: a head, token
or word picked inside reruns only that section.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import streamlit as st

from attention_core import pretrained_heads as heads
from attention_core.pretrained import INSTALL_COMMAND, ModelUnavailable, load_model, read_text, vocabulary_check
from attention_core.pretrained_sets import KINDS, load_pretrained_sets
from charts.bars import weight_bars
from charts.matrix import attention_heatmap
from charts.tokens import token_lines
from ui.common import (
    MAX_CHARS, MAX_TOKENS, data_table, explanation, guarded_fragment, md_escape, predict_then_reveal,
    url_selectbox,
)
from ui.display import show_plotly
from ui.figures import figure_spec
from ui.startup import PRETRAINED_TWIN_SEED as TWIN_SEED, trained_results, twin_results

S = "pretrained"
CUSTOM = "custom"
RANKED_SHOWN = 12  # heads in the "find the head" bar chart (the table lists all of them)
RESOLVES_AT = 0.75  # held-out sentence accuracy at which the page would say the model resolves the pairs


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


# ---------------------------------------------------------------- cached calls

@st.cache_resource(show_spinner=False)
def _model():
    return load_model()


@st.cache_resource(show_spinner=False)
def _sets():
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

    def word_index(self, word: str, default: int) -> int:
        names = [w.lower() for w, first, stop in self.words if stop > first]
        return names.index(word) if word in names else default


@st.cache_data(show_spinner=False, max_entries=256)
def sentence_view(text: str) -> SentenceView:
    reading = read_text(text, _model())
    return SentenceView(text, tuple(reading.token_texts), tuple((w.text, w.first, w.stop) for w in reading.words),
                        reading.attentions)


@st.cache_resource(show_spinner=False, max_entries=8)
def _viewed(text: str, hide: bool) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
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
    twin test on it): from the once-per-process results of the trained model."""
    results = trained_results()
    return results.featured, _sets().winograd[0], results.featured_test


def catalogue(hide: bool):
    """-> ({kind: CatalogueEntry} of the trained model, of the twin), [CLS]/[SEP] hidden or not."""
    trained, twin = trained_results(), twin_results()
    if hide:
        return trained.catalogue_hidden, twin.catalogue_hidden
    return trained.catalogue, twin.catalogue


def winograd():
    """-> per-head scores of the trained model and the twin, and a head picked on the even pairs scored on the odd."""
    margins = trained_results().margins
    chosen = np.arange(margins.shape[0]) % 2 == 0
    return (heads.winograd_scores(margins), heads.winograd_scores(twin_results().margins),
            heads.held_out_choice(margins, chosen))


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
        return True
    except ModelUnavailable as exc:
        st.error(t(f"{S}.missing", command=INSTALL_COMMAND, detail=md_escape(str(exc))), icon=":material/download:")
        return False


def sentence_picker(t) -> SentenceView | None:
    """The preset or the learner's own sentence -> its view; None (with a message shown) when it cannot be read."""
    presets = _sets().presets
    options = [str(i) for i in range(len(presets))] + [CUSTOM]
    c_preset, c_text = st.columns(2)
    with c_preset:
        choice = url_selectbox(t(f"{S}.preset"), options, "pretrained_preset",
                               format_func=lambda o: t(f"{S}.own") if o == CUSTOM else presets[int(o)])
    if choice == CUSTOM:
        text = c_text.text_input(t(f"{S}.text"), value=presets[0], max_chars=MAX_CHARS, key="pretrained_text",
                                 bind="query-params")
    else:
        text = presets[int(choice)]
    st.caption(t(f"{S}.english_only"))
    if not text.strip():
        st.warning(t("common.empty_sentence"))
        return None
    check = vocabulary_check(text, _model())
    if check.mostly_outside:
        st.warning(t(f"{S}.not_english", share=f"{check.share_outside:.0%}"), icon=":material/translate:")
        return None
    n = len(read_tokens(text))
    if n > MAX_TOKENS:
        st.warning(t(f"{S}.too_many_tokens", n=n, limit=MAX_TOKENS))
        return None
    view = sentence_view(text)
    if len(view.spans()) < 2:
        st.warning(t(f"{S}.one_word"))
        return None
    st.caption(t(f"{S}.tokens", n=len(view.tokens), tokens=" · ".join(md_escape(tok) for tok in view.tokens)))
    if check.outside_words:
        st.caption(t(f"{S}.outside", words=", ".join(md_escape(w) for w in check.outside_words)))
    return view


def read_tokens(text: str) -> list[str]:
    """text -> its tokens (no forward pass: an over-long text is refused before the model runs)."""
    from attention_core import wordpiece

    return wordpiece.tokenize(text, _model().vocabulary)


# ---------------------------------------------------------------- where the weight goes: the [CLS] sink

def _grid_labels(t, layers: int, count: int) -> tuple[list[str], list[str]]:
    return ([t(f"{S}.layer_short", k=k) for k in range(layers)], [t(f"{S}.head_short", k=k) for k in range(count)])


def sink_section(t, view: SentenceView, hide: bool) -> None:
    """The share of each head's weight on [CLS] over this sentence's words, and what the switch does about it."""
    st.subheader(t(f"{S}.sink_title"))
    words = heads.SpannedSentence(tuple(view.spans()), ())
    share = heads.sink_scores([view.attentions], [words]).mean_weight
    layers, count = share.shape
    rows, cols = _grid_labels(t, layers, count)
    show_plotly(figure_spec(attention_heatmap, share, rows, cols, title=t(f"{S}.sink_map_title"),
                            value_label=t(f"{S}.share_label"), axis_titles=(t(f"{S}.axis_head"), t(f"{S}.axis_layer")),
                            plot_width=600, height=360), key="pretrained_sink_map")
    st.markdown(t(f"{S}.sink_numbers", share=f"{share.mean():.0%}", over=int((share > 0.5).sum()), heads=share.size))
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
            twin_best = twin_results().featured
        st.caption(t(f"{S}.link_numbers", head=best.name, weight=f"{best.weight:.0%}",
                     twin=f"{twin_best.weight:.0%}", twin_head=twin_best.name))
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
def find_section(text: str, hide: bool) -> None:
    """Two words -> every head ranked by the weight from the first to the second."""
    from ui.common import translator

    t = translator()
    view = sentence_view(text)
    _, _, full = _viewed(text, hide)
    words = [w for w, first, stop in view.words if stop > first]
    spans = view.spans()
    st.subheader(t(f"{S}.find_title"))
    _explain(t, "find_explain")
    c_from, c_to = st.columns(2)
    label = lambda i: f"{words[i]} ({i + 1})"  # noqa: E731
    with c_from:
        source = url_selectbox(t(f"{S}.from_word"), list(range(len(words))), "pretrained_from", format_func=label,
                               default=view.word_index("it", 0))
    with c_to:
        target = url_selectbox(t(f"{S}.to_word"), list(range(len(words))), "pretrained_to", format_func=label,
                               default=view.word_index("animal", 1 if source == 0 else 0))
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
                 even=f"{1 / len(view.tokens):.1%}", n=len(view.tokens)))
    with st.expander(t(f"{S}.find_table")):
        data_table(pa.table({t(f"{S}.col_head"): names, t("common.weight"): np.round(weights, 4)}), hide_index=True,
                   key="pretrained_find_table")


# ---------------------------------------------------------------- the twin test and the Winograd pairs

def twin_section(t, hide: bool) -> None:
    best, pair, test = featured()
    st.subheader(t(f"{S}.twin_title"))
    _explain(t, "twin_explain")
    name = t(f"{S}.head_name", layer=best.layer, head=best.head)
    columns = st.columns(2, gap="medium")
    for s, column in enumerate(columns):
        _, _, full = _viewed(pair.sentences[s], hide)
        view = sentence_view(pair.sentences[s])
        row_at = view.tokens.index(pair.pronoun)
        weights = np.asarray(full[best.layer, best.head, row_at], dtype=np.float64)
        with column:
            show_plotly(figure_spec(token_lines, list(view.tokens), weights, row_at,
                                    title=t(f"{S}.twin_lines", head=name, word=pair.sentences[s].split()[-1]),
                                    value_label=t("common.weight"), query_label=t("common.axis_query"),
                                    key_label=t("common.axis_key")), key=f"pretrained_twin_{s}")
    largest = test.weights.max(axis=(0, 3))[test.flips].max() if test.flips.any() else 0.0
    st.markdown(t(f"{S}.flips", flips=int(test.flips.sum()), heads=test.flips.size, largest=f"{largest:.0%}",
                  right_both=int(test.right_in_both.sum())))
    with st.spinner(t(f"{S}.catalogue_running")):
        scores, twin_scores, (picked, held) = winograd()
    layers, count = scores.sentence_accuracy.shape
    rows, cols = _grid_labels(t, layers, count)
    show_plotly(figure_spec(attention_heatmap, scores.sentence_accuracy, rows, cols, title=t(f"{S}.wino_title",
                            pairs=scores.pairs), value_label=t(f"{S}.accuracy"), plot_width=600, height=360,
                            axis_titles=(t(f"{S}.axis_head"), t(f"{S}.axis_layer"))), key="pretrained_wino_map")
    best_w = scores.best
    verdict = "resolves" if held >= RESOLVES_AT else "does_not_resolve"
    st.markdown(t(f"{S}.wino_numbers", sentences=2 * scores.pairs, pairs=scores.pairs, best=best_w.name,
                  best_acc=f"{best_w.weight:.0%}", mean=f"{scores.mean:.0%}",
                  twin_best=f"{twin_scores.best.weight:.0%}",
                  picked=picked.name, held=f"{held:.0%}", pair_best=f"{scores.pair_accuracy.max():.0%}"))
    st.markdown(f"**{t(f'{S}.{verdict}')}**")


# ---------------------------------------------------------------- the catalogue

def catalogue_section(t, hide: bool) -> None:
    st.subheader(t(f"{S}.catalogue_title"))
    _explain(t, "catalogue_explain")
    with st.spinner(t(f"{S}.catalogue_running")):
        trained, twin = catalogue(hide)
    pct = lambda v: "" if v is None else f"{v:.0%}"  # noqa: E731
    table = pa.table({
        t(f"{S}.col_kind"): [t(f"{S}.kind_{k}") for k in KINDS],
        t(f"{S}.col_best"): [trained[k].best.name for k in KINDS],
        t(f"{S}.col_weight"): [pct(trained[k].best.weight) for k in KINDS],
        t(f"{S}.col_accuracy"): [pct(trained[k].best_accuracy) for k in KINDS],
        t(f"{S}.col_twin_best"): [twin[k].best.name for k in KINDS],
        t(f"{S}.col_twin_weight"): [pct(twin[k].best.weight) for k in KINDS],
        t(f"{S}.col_sentences"): [trained[k].sentences for k in KINDS],
    })
    data_table(table, hide_index=True, key="pretrained_catalogue")
    ratio = min(trained[k].best.weight / max(twin[k].best.weight, 1e-9) for k in KINDS)
    st.caption(t(f"{S}.catalogue_caption", ratio=f"{ratio:.1f}", twin_seed=TWIN_SEED))
