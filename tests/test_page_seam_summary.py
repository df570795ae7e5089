"""Lesson 9 (the summary) as shown, against the same independent references as the lessons' own seam tests: each
claim's numbers (the RNN's ratio, the best book's share, n × n weights and the pronoun's weight, the masked count and
the first row) and its two heat maps (axes, labels, z[query][key], grey above the diagonal), in both languages."""

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import assert_attention_map, figure, find_sentence, heatmap, number, strings, texts, title_text
from tests.test_page_seam_causal import default_words as causal_words
from tests.test_page_seam_qkv import library, reference as qkv_reference
from tests.test_page_seam_rnn import default_words as rnn_words, jacobian_norms
from tests.test_page_seam_self_attention import reference as self_attention_reference


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_each_claims_numbers_and_maps(lang, glove):
    w = strings(lang)
    at = open_page("summary", lang)
    assert_clean(at)
    shown = texts(at)

    words = rnn_words()
    norms = jacobian_norms(np.array([glove[x] for x in words], dtype=np.float64))
    rnn = find_sentence(shown, "summary.claim_rnn", lang)
    assert (int(rnn["hidden"]), int(rnn["n"]), int(rnn["rnn_steps"]), int(rnn["att_steps"])) == (32, len(words),
                                                                                               len(words), 1)
    assert number(rnn["ratio"]) == pytest.approx(norms[0] / norms[-1], rel=0.05)  # (written to 2 digits)

    lib = library()
    _, _, _, weights, _ = qkv_reference()
    best = int(np.argmax(weights))
    qkv = find_sentence(shown, "summary.claim_qkv", lang)
    assert qkv["query"] == lib["queries"][0]["text"][lang] and qkv["book"] == lib["books"][best]["title"][lang]
    assert number(qkv["share"]) == pytest.approx(100 * weights[best], abs=0.05)
    assert int(qkv["books"]) == sum(x > 0.01 for x in weights) and int(qkv["n"]) == len(weights)

    tokens, pronoun, heads = self_attention_reference(lang)
    n, coref = len(tokens), heads[0]
    sa = find_sentence(shown, "summary.claim_self_attention", lang)
    target = int(np.argmax(coref[pronoun]))
    assert (int(sa["n"]), int(sa["pairs"])) == (n, n * n)
    assert (sa["pronoun"], sa["target"]) == (tokens[pronoun], tokens[target])
    assert number(sa["share"]) == pytest.approx(100 * coref[pronoun, target], abs=0.05)
    fig = figure(at, "summary_self_attention")
    assert title_text(fig["layout"]) == w["summary.fig_self_attention"]
    assert_attention_map(fig, coref, tokens, tokens, lang)

    cw = causal_words()
    m = len(cw)
    causal = find_sentence(shown, "summary.claim_causal", lang)
    assert int(causal["masked"]) == m * (m - 1) // 2 and number(causal["above"]) == 0
    assert number(causal["first"]) == 100
    fig = figure(at, "summary_causal")
    assert title_text(fig["layout"]) == w["summary.fig_causal"]
    z = heatmap(fig)
    above = np.triu(np.ones((m, m), dtype=bool), k=1)
    assert z.shape == (m, m) and np.isnan(z[above]).all() and not np.isnan(z[~above]).any()
    np.testing.assert_allclose(np.nansum(z, axis=1), 1.0, atol=1e-9)
    assert z[0, 0] == 1.0
    assert_attention_map(fig, np.where(above, np.nan, z), cw, cw, lang)  # (axes and labels; the values: lesson 5's)

    scaling = find_sentence(shown, "summary.claim_scaling", lang)
    keys = int(scaling["keys"])
    assert number(scaling["uniform"]) == pytest.approx(1 / keys, abs=5.01e-4)  # (3 decimals, half to even)
    assert number(scaling["scaled"]) < 0.5 < 0.9 < number(scaling["unscaled"]) <= 1
