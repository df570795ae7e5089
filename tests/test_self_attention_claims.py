"""Lesson 3: every claim the page's text makes, computed from the core at the page's default settings.

- The prediction's answer (sa_predict, en + ja): with Q = K = X, "it" gives its LARGEST weight to itself, but not
  MOST of its weight; that self-preference comes from Q = K and disappears with random W_Q != W_K.
- The self-preference caption's figures are formatted from attention_core.self_attention.self_preference.
- Multi-head: W_O lets every output feature draw on every head (no zero block); the dict tricks the page uses for
  speed (charts.self_attention) give the same JSON as the builder.
"""

import json

import numpy as np
import pytest
from plotly.utils import PlotlyJSONEncoder

from attention_core.attention import attention_weights
from attention_core.glove import embed, load_glove, split_known
from attention_core.self_attention import (
    HEADS, SELF_PREFERENCE_SEEDS, glove_self_attention, load_self_attention, multi_head_parts, preset_heads,
    self_preference,
)
from attention_core.attention import random_projection
from attention_core.text import tokenize
from charts.self_attention import outline_row, swap_matrix
from charts.matrix import attention_heatmap
from tests.apptest_utils import assert_clean, open_page
from ui.i18n import load_strings

DATA = load_self_attention()
EN, JA = load_strings("en"), load_strings("ja")
PAGE = "self_attention"


@pytest.fixture(scope="module")
def default_row():
    """The page's default GloVe sentence, its known words and vectors, and the row of "it"."""
    kv = load_glove()
    known, _ = split_known(tokenize(DATA.by_id("animal").glove_text), kv)
    return known, embed(known, kv)[0], known.index("it")


def test_it_gives_its_largest_weight_to_itself_but_not_most_of_it(default_row):
    known, X, q = default_row
    pref = self_preference(X, q)
    assert pref["raw_rank"] == 1  # the prediction's answer 3, "“it” itself", is right
    assert pref["raw_self"] < 0.5  # "largest is not most": most of the row goes to the other words
    assert 1 - pref["raw_self"] > 0.5
    n = pref["n"]
    assert pref["raw_top_rows"] > n / 2  # the diagonal wins in most rows with Q = K


def test_the_self_preference_disappears_with_random_projections(default_row):
    known, X, q = default_row
    pref = self_preference(X, q)
    n = pref["n"]
    assert abs(pref["random_self"] - 1 / n) < 0.5 / n  # about what equal weights would give
    assert n / 3 <= pref["random_rank"] <= 2 * n / 3 + 1  # its own rank sits in the middle, not at the top
    assert pref["random_top_share"] < 2 / n  # the diagonal wins about as often as any other key (1/n)
    assert pref["raw_top_rows"] / n > 4 * pref["random_top_share"]  # "only ...": far less than with Q = K
    assert pref["raw_self"] > 1.5 * pref["random_self"]


def test_self_preference_matches_a_naive_computation(default_row):
    known, X, q = default_row
    pref = self_preference(X, q, seeds=5)
    n = len(known)
    raw = attention_weights(X, X)
    assert pref["raw_self"] == pytest.approx(raw[q, q])
    assert pref["raw_rank"] == 1 + sum(raw[q, j] > raw[q, q] for j in range(n))
    assert pref["raw_top_rows"] == sum(max(range(n), key=lambda j: raw[i, j]) == i for i in range(n))
    selfs, ranks, tops = [], [], 0
    for seed in range(5):
        rng = np.random.default_rng(seed)
        W_q, W_k = random_projection(50, 50, rng), random_projection(50, 50, rng)
        R = attention_weights(X @ W_q, X @ W_k)
        np.testing.assert_allclose(R, glove_self_attention(X, "random", seed), atol=1e-12)
        selfs.append(R[q, q])
        ranks.append(1 + sum(R[q, j] > R[q, q] for j in range(n)))
        tops += sum(max(range(n), key=lambda j: R[i, j]) == i for i in range(n))
    assert pref["random_self"] == pytest.approx(np.mean(selfs))
    assert pref["random_rank"] == pytest.approx(np.mean(ranks))
    assert pref["random_top_share"] == pytest.approx(tops / (5 * n))


@pytest.mark.parametrize("strings", [EN, JA], ids=["en", "ja"])
def test_the_prediction_text_says_what_is_true(strings):
    why = strings["self_attention.predict_why"]
    assert "W_Q ≠ W_K" in why and "Q = K" in why
    if strings is EN:
        assert "mostly looks at the word itself" not in why
        assert "largest weight to itself" in why and "most of the row still goes to the other words" in why
        assert "disappears" in why
    else:
        assert "主に自分自身を見ます" not in why
        assert "最大" in why and "大部分は他の語" in why and "消えます" in why


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_caption_formats_the_computed_numbers(lang, default_row):
    known, X, q = default_row
    pref = self_preference(X, q)
    at = open_page(PAGE, lang)
    at.radio(key="sa_predict").set_value(3).run()
    assert_clean(at)
    caption = " ".join(c.value for c in at.caption)
    n = pref["n"]
    for figure in (f"{pref['raw_self']:.1%}", f"{1 - pref['raw_self']:.1%}", f"{pref['random_self']:.1%}",
                   f"{1 / n:.1%}", f"{pref['random_rank']:.1f}", f"{pref['random_top_share']:.1%}"):
        assert figure in caption, figure
    assert f"0–{SELF_PREFERENCE_SEEDS - 1}" in caption or f"0〜{SELF_PREFERENCE_SEEDS - 1}" in caption
    if lang == "en":
        assert f"rank {pref['raw_rank']} of {n}" in caption and f"{pref['raw_top_rows']} of the {n} words" in caption
    else:
        assert f"{n} 語中 {pref['raw_rank']} 位" in caption and f"{n} 語のうち {pref['raw_top_rows']} 語" in caption


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_w_o_lets_every_output_feature_draw_on_every_head(preset):
    parts = multi_head_parts(preset_heads(preset, DATA.rule_score))
    h, _, d_v = parts.head_outputs.shape
    for k in range(h):
        block = parts.W_O[k * d_v:(k + 1) * d_v]  # the rows of W_O that read head k
        assert (np.abs(block) > 1e-6).any(axis=0).all()  # every output column reads head k
    # so changing one head changes every output feature
    heads = preset_heads(preset, DATA.rule_score).copy()
    heads[2] = np.eye(len(preset.tokens))
    changed = multi_head_parts(heads).output - parts.output
    assert (np.abs(changed) > 1e-9).any(axis=0).all()


def _json(spec):
    return json.dumps(spec, sort_keys=True, cls=PlotlyJSONEncoder)


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_the_dict_shortcuts_give_the_builders_json(preset):
    heads = preset_heads(preset, DATA.rule_score)
    tokens = list(preset.tokens)
    kwargs = dict(height=460, show_values=False, value_label="weight", axis_titles=("key", "query"))
    first = attention_heatmap(heads[0], tokens, title="head 0", highlight_row=0, **kwargs)
    for k in range(len(HEADS)):
        for row in (0, 3, len(tokens) - 1, None):
            expected = attention_heatmap(heads[k], tokens, title=f"head {k}", highlight_row=row, **kwargs)
            assert _json(outline_row(swap_matrix(first, heads[k], f"head {k}"), row)) == _json(expected)
    with pytest.raises(ValueError):
        swap_matrix(first, np.eye(3), "wrong shape")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_hand_designed_heads_point_to_the_measured_ones(lang):
    """After the heads, a link to lesson 8 asks (without answering) whether training grows such heads."""
    at = open_page("self_attention", lang)
    links = [(link.proto.label, link.proto.page) for link in at.get("page_link")]
    assert links == [(load_strings(lang)["self_attention.trained_heads_link"], "trained-model")]
