"""Lesson 9: the causal mask in a real model. The 270 maps of the prompt (heads sharing keys and values in threes),
the weights above the diagonal counted, the leak test (a later token changed: earlier rows and logits compared bit for
bit), and the famous sentence with "tired" and "wide": the row of "it" cannot differ; where the two do differ."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from attention_core import smollm2
from attention_core.gpt_studies import heads as gpt_heads  # (here "heads" counts a layer's heads)
from ui.gpt.serving import presets_on_disk, results_on_disk
from charts.gpt import grouped_bars
from charts.model_view import model_view, model_view_table
from ui.shared.common import explanation, guarded_fragment, md_escape, predict_then_reveal
from ui.shared.display import model_view_px, on_touch_device, show_plotly
from ui.shared.figures import figure_spec
from ui.gpt.page import (GEMMA, S, Prompt, answer_for, config_of, encode, gemma_encode, model, prompt_pass,
                         shown_tokens, texts, weights_and_tokenizer)

MAP_TOKENS = 16  # the maps drawn: a causal row never depends on later tokens, so these are the whole pass's corner
REPLACEMENT = " zebra"  # the later token put in for the leak test


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


# ---------------------------------------------------------------- measurements (cached per prompt)

@dataclass(frozen=True)
class Leak:
    position: int  # the token changed (0-based)
    old: int
    new: int
    attention_diff: float  # max |difference| over every earlier row of every map
    logits_diff: float  # max |difference| over every earlier position's logits
    later_changed: float  # max |difference| in the changed token's own row (it does change)


@st.cache_data(show_spinner=False, max_entries=64)
@presets_on_disk("leak-test", Leak)
def leak_test(ids: tuple[int, ...]) -> Leak:
    """The last token replaced by another and the changed text run again in full (a pass of its own, no cache):
    its earlier rows of all maps and its earlier logits against the prompt's pass (``prompt_pass``, computed once).
    ids: at least 2 tokens. A preset's is read from disk (the same at every start)."""
    new = encode(REPLACEMENT)[0]
    if new == ids[-1]:
        new = encode(" apple")[0]
    changed = ids[:-1] + (new,)
    weights = model()[0]
    a, b = prompt_pass(ids), smollm2.forward(weights, list(changed))
    a_logits = smollm2.lm_head(a.hidden, weights.embedding)  # every row, as b's pass computes them: the same products
    j = len(ids) - 1
    return Leak(j, ids[-1], new, *gpt_heads.leak_differences(a.attention, a_logits, b.attention, b.logits, j))


@st.cache_data(show_spinner=False, max_entries=64)
def gemma_leak_test(ids: tuple[int, ...]) -> Leak:
    """Gemma's leak test: the last token replaced (as leak_test), both texts run in full, every row's logits kept.
    ids: the start token and at least one more."""
    from attention_core import gemma

    new = gemma_encode(REPLACEMENT)[1]  # (after the start token)
    if new == ids[-1]:
        new = gemma_encode(" apple")[1]
    changed = ids[:-1] + (new,)
    weights = weights_and_tokenizer(GEMMA)[0]
    a, b = gemma.forward(weights, list(ids)), gemma.forward(weights, list(changed))
    j = len(ids) - 1
    return Leak(j, ids[-1], new, *gpt_heads.leak_differences(a.attention, a.logits, b.attention, b.logits, j))


@dataclass(frozen=True)
class MinimalPairSentences:
    words: tuple[str, str]  # the last word of each sentence
    it_diff: float  # max |difference| of the row of "it", over all 270 maps
    last_rows: np.ndarray  # (2, L, H, 2): the last word's weight on the two nouns, per sentence
    flips: int  # heads whose preferred noun differs between the two sentences
    heads: int
    best: tuple[int, int]  # the head whose weight on the second noun grows most
    it_position: int
    n: int


@st.cache_resource(show_spinner=False)
@results_on_disk("minimal-pair", MinimalPairSentences)
def minimal_pair_sentences() -> MinimalPairSentences:
    data = texts()
    first = data.minimal_pair_text
    last_word = first.split()[-1]
    second = first[: len(first) - len(last_word)] + data.minimal_pair_other
    ids = [encode(first), encode(second)]
    tokens = shown_tokens(ids[0])
    it = tokens.index("·" + data.pronoun)
    nouns = [tokens.index("·" + noun) for noun in data.nouns]
    passes = [smollm2.forward(model()[0], list(i)) for i in ids]
    pair = gpt_heads.minimal_pair_heads(passes[0].attention, passes[1].attention, it, nouns)
    return MinimalPairSentences((last_word, data.minimal_pair_other), pair.it_diff, pair.last_rows, pair.flips,
                                pair.heads, pair.best, it, len(ids[0]))


@dataclass(frozen=True)
class ReferentStudy:
    """The famous sentence with more last words: which heads flip between words of the same referent (the null of
    the flip count), the featured head on held-out pairs, and which noun the model names when asked."""

    words: tuple[str, ...]  # the text's last word, the first referent's others, other_word, the second's others
    first: int  # the first `first` words fit the first noun
    flips: np.ndarray  # (S, S) heads preferring a different noun, per pair of words
    same_mean: float  # over the pairs of first-referent words
    same_low: int
    same_high: int
    same_pairs: int
    held_out_grows: int  # held-out (first, second) word pairs where the featured head's weight on noun 2 grows
    held_out_pairs: int
    names_first: tuple[int, int]  # the model names the first noun for (k of first-referent words, k of second's)


@st.cache_resource(show_spinner=False)
@results_on_disk("referent-study", ReferentStudy)
def referent_study() -> ReferentStudy:
    """The famous sentence's other last words (16 passes, and 16 more with the question): the same at every start,
    kept on disk."""
    data = texts()
    pair = minimal_pair_sentences()
    stem = data.minimal_pair_text[: len(data.minimal_pair_text) - len(pair.words[0])]
    words = (pair.words[0], *data.first_referent, pair.words[1], *data.second_referent)
    first = 1 + len(data.first_referent)
    nouns = [shown_tokens(encode(stem)).index("·" + noun) for noun in data.nouns]
    weights = model()[0]
    passes = [smollm2.forward(weights, list(encode(stem + w)), all_logits=False) for w in words]  # as the pair's own
    last = np.stack([out.attention[..., -1, nouns] for out in passes])  # (S, L, H, 2)
    flips = gpt_heads.noun_flips(last)
    same = [int(flips[i, j]) for i in range(first) for j in range(i + 1, first)]
    layer, head = pair.best  # picked on the text's own pair: checked on the others
    held = list(zip(range(1, first), range(first + 1, len(words))))
    grows = sum(int(last[b, layer, head, 1] > last[a, layer, head, 1]) for a, b in held)
    noun_ids = [encode(" " + noun)[0] for noun in data.nouns]
    asked = smollm2.forward_many(weights, [list(encode(stem + w + data.question)) for w in words])
    names = [bool(out.logits[-1][noun_ids[0]] > out.logits[-1][noun_ids[1]]) for out in asked]
    return ReferentStudy(words, first, flips, float(np.mean(same)), min(same), max(same), len(same), grows, len(held),
                         (sum(names[:first]), sum(names[first:])))


# ---------------------------------------------------------------- the sections

def _exact(t, value: float) -> str:
    return t(f"{S}.exactly_zero") if value == 0.0 else f"{value:.2e}"


@guarded_fragment
def mask_section(t, prompt: Prompt) -> None:
    st.subheader(t(f"{S}.mask_title"))
    c = config_of(prompt.model)
    if prompt.model == GEMMA:
        _explain(t, "mask_explain_gemma", layers=c.n_layer, heads=c.n_head, total=c.n_layer * c.n_head,
                 ff=f"{c.d_ff:,}", window=c.window, global_layers=len(c.global_layers),
                 local_layers=c.n_layer - len(c.global_layers))
    else:
        _explain(t, "mask_explain", layers=c.n_layer, heads=c.n_head, total=c.n_layer * c.n_head, kv=c.n_kv_head,
                 ff=f"{c.d_ff:,}")
    leak_of = gemma_leak_test if prompt.model == GEMMA else leak_test
    if len(prompt.ids) < 2:
        st.warning(t(f"{S}.mask_short"))
        return

    def answer() -> int:  # the leak test's second pass runs only once the learner has answered
        leak = leak_of(prompt.ids)
        return 1 if leak.attention_diff == 0.0 and leak.logits_diff == 0.0 else 2

    answer_for("gpt_leak_predict", (prompt.model, prompt.ids))  # a new prompt (or model) asks again
    if not predict_then_reveal(t, f"{S}.leak", 3, answer, key="gpt_leak_predict"):
        return
    leak = leak_of(prompt.ids)
    attention = prompt_pass(prompt.ids, model_key=prompt.model).attention
    layers, heads, n = attention.shape[0], attention.shape[1], attention.shape[-1]
    shown = min(n, MAP_TOKENS)
    spec = model_view(prompt.tokens[:shown], layers, heads, (0, 0), layer_label=t(f"{S}.layer_short"),
                      head_label=t(f"{S}.head_short"), query_label=t("common.axis_query"),
                      key_label=t("common.axis_key"), value_label=t("common.weight"),
                      title=t(f"{S}.maps_title", total=layers * heads, layers=layers, heads=heads),
                      **model_view_px(heads, shown))  # (a phone: maps that fit; presenter mode: larger labels)
    # width="content": the spec's own width, so each map stays square (the column's width would stretch it)
    st.vega_lite_chart(model_view_table(attention[..., :shown, :shown]), spec, key="gpt_maps", width="content")
    config = c
    group = config.n_head // config.n_kv_head
    caption = f"{S}.maps_caption_touch" if on_touch_device() else f"{S}.maps_caption"  # no "hover" on a phone
    if prompt.model == GEMMA:
        caption += "_gemma"
    st.caption(t(caption, shown=shown, n=n, kv=config.n_kv_head, group=group,
                 groups=t.join(f"H{g * group}–H{g * group + group - 1}" for g in range(config.n_kv_head))))
    cells, zeros = gpt_heads.above_diagonal(attention)
    st.markdown(t(f"{S}.zeros", cells=f"{cells:,}", zeros=f"{zeros:,}", maps=layers * heads))
    tokens = shown_tokens([leak.old, leak.new], prompt.model)
    st.markdown(t(f"{S}.leak_numbers", position=leak.position + 1, old=md_escape(tokens[0]), new=md_escape(tokens[1]),
                  rows=leak.position, maps=layers * heads, attention=_exact(t, leak.attention_diff),
                  logits=_exact(t, leak.logits_diff),
                  own=f"{leak.later_changed:.2f}"))


@guarded_fragment
def minimal_pair_section(t) -> None:
    st.subheader(t(f"{S}.minimal_pair_title"))
    minimal_pair = minimal_pair_sentences()
    data = texts()
    sleepy = data.first_referent[0]

    def answer() -> int:  # the passes over the other last words run once the learner has answered
        flips = int(referent_study().flips[0, 1])
        return 1 if flips == 0 else (2 if flips < 10 else 3)

    if not predict_then_reveal(t, f"{S}.it", 3, answer, key="gpt_it_predict", tired=minimal_pair.words[0],
                               sleepy=sleepy, heads=minimal_pair.heads):
        return
    study = referent_study()
    st.markdown(t(f"{S}.it_numbers", diff=_exact(t, minimal_pair.it_diff), maps=minimal_pair.heads,
                  tired=minimal_pair.words[0],
                  wide=minimal_pair.words[1]))
    layer, head = minimal_pair.best
    name = f"L{layer}H{head}"
    weights = minimal_pair.last_rows[:, layer, head, :]  # (sentence, noun)
    show_plotly(figure_spec(grouped_bars, [f"“…{w}”" for w in minimal_pair.words],
                            {data.nouns[0]: weights[:, 0], data.nouns[1]: weights[:, 1]},
                            title=t(f"{S}.minimal_pair_chart", head=name), value_label=t("common.weight"), fmt=".2f"),
                key="gpt_minimal_pair_bars")
    st.markdown(t(f"{S}.flip_numbers", flips=minimal_pair.flips, heads=minimal_pair.heads,
                  tired=minimal_pair.words[0], wide=minimal_pair.words[1], sleepy=sleepy,
                  same=f"{study.same_mean:.0f}", low=study.same_low, high=study.same_high, pairs=study.same_pairs,
                  words=study.first, noun=data.nouns[0], to_sleepy=int(study.flips[0, 1])))
    st.markdown(t(f"{S}.featured_numbers", head=name, heads=minimal_pair.heads, street=data.nouns[1],
                  before=f"{weights[0, 1]:.2f}", after=f"{weights[1, 1]:.2f}", grows=study.held_out_grows,
                  pairs=study.held_out_pairs))
    _explain(t, "encoder_decoder", question=md_escape(data.question.strip(". ")), animal=data.nouns[0],
             street=data.nouns[1], a=study.names_first[0], na=study.first, b=study.names_first[1],
             nb=len(study.words) - study.first)
