"""Lesson 3: every claim the page's text makes, computed from the core at the page's default settings.

- The coreference head is coreference only: the pronoun's largest weight goes to its noun, and every other token,
  with nothing to look for, spreads its attention almost evenly (the heads' explanation, both languages).
- The page opens on the sentence's first pronoun ("it", それ; "she" in "Mary gave John the book because she liked him").
- Multi-head: W_O lets every output feature draw on every head (no zero block); the dict tricks the page uses for
  speed (charts.self_attention) give the same JSON as the builder.
"""

import json

import numpy as np
import pytest
from plotly.utils import PlotlyJSONEncoder

from attention_core.self_attention import (
    HEADS, first_pronoun, load_self_attention, multi_head_parts, preset_heads,
)
from attention_core.text import tokenize
from charts.self_attention import outline_row, swap_matrix
from charts.matrix import attention_heatmap
from tests.apptest_utils import open_page
from ui.shared.i18n import load_strings

DATA = load_self_attention()
EN, JA = load_strings("en"), load_strings("ja")
PAGE = "self_attention"


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_the_coreference_head_sends_only_the_pronoun_to_its_noun(preset):
    coref = preset_heads(preset, DATA.rule_score)[0]
    assert int(np.argmax(coref[preset.pronoun])) == preset.antecedent
    for i in range(len(preset.tokens)):
        if i == preset.pronoun:
            continue
        others = np.delete(coref[i], i)
        np.testing.assert_allclose(others, others[0], rtol=1e-12)  # an even spread over the other tokens...
        assert coref[i, i] / others[0] <= np.e + 1e-9  # ...with at most the self score's e-fold on itself ("almost")


@pytest.mark.parametrize("strings", [EN, JA], ids=["en", "ja"])
def test_the_heads_text_says_so(strings):
    text = strings["self_attention.heads_explain"]
    assert ("only the pronoun" in text and "almost evenly" in text) if strings is EN else (
        "代名詞だけ" in text and "ほぼ均等" in text)
    assert ("pronoun has something to look for (its noun)" in text) if strings is EN else ("代名詞だけ" in text)


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_each_preset_opens_on_its_first_pronoun(preset):
    assert preset.pronoun == first_pronoun(preset.tokens)
    assert preset.tokens[preset.pronoun] in ("it", "それ", "彼女")


@pytest.mark.parametrize(
    "sentence, word",
    [("Mary gave John the book because she liked him", "she"),
     ("The animal did not cross the street because it was too tired", "it"),
     ("It rained", "It"), ("the cat sat on the mat", None)],
)
def test_first_pronoun_of_a_typed_sentence(sentence, word):
    tokens = tokenize(sentence) if word != "It" else sentence.split()
    found = first_pronoun(tokens)
    assert (tokens[found] if found is not None else None) == word


def test_first_pronoun_of_japanese_tokens():
    assert first_pronoun(["猫", "が", "座った", "。", "それ", "は"]) == 4
    assert first_pronoun(["花子", "は", "彼女", "の"]) == 2


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
    """After the heads, a link to lesson 8 asks (without answering) whether training grows such heads; at the end a
    link to lesson 6 asks what real, untrained word vectors do."""
    at = open_page("self_attention", lang)
    links = [(link.proto.label, link.proto.page) for link in at.get("page_link")]
    strings = load_strings(lang)
    assert links == [(strings["self_attention.trained_heads_link"], "trained-model"),
                     (strings["self_attention.glove_link"], "glove")]
