"""Lesson 6's side by side: our trained head and lesson 8's model on the same held-out sentences, one two-way choice.
References: hand-built pairs and weights with known answers, per-head loops over the attention read_text gives."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.glove.pretrained import candidates, choice_weights, picked_head, two_way_accuracy, two_way_rows
from attention_core.glove.pronouns import PronounSentence, load_pronoun_dataset
from attention_core.pretrained import load_model, read_text
from tests.apptest_utils import assert_clean, open_page
from ui.shared.i18n import load_strings


def attention_maps(text: str, model=None):
    """text -> (token texts, attentions (L, H, n, n)) of the model (the trained one unless given), via read_text."""
    reading = read_text(text, model)
    return reading.token_texts, reading.attentions


def pair(tokens, pronoun, animal, place, number=0):
    return (PronounSentence(tuple(tokens), pronoun, animal, "animal", "train", number),
            PronounSentence(tuple(tokens), pronoun, place, "place", "train", number))


def test_candidates_take_the_other_noun_from_the_pair_partner():
    sentences = [*pair("the cat sat on the mat because it was tired".split(), 7, 1, 5),
                 *pair("a dog ran to a park since it was wide".split(), 6, 1, 4, number=1)]
    assert candidates(sentences).tolist() == [[1, 5], [5, 1], [1, 4], [4, 1]]
    with pytest.raises(ValueError):
        candidates(sentences[:3])
    with pytest.raises(ValueError):
        candidates([sentences[0], sentences[2]])


def test_two_way_rows_and_accuracy_against_loops():
    rng = np.random.default_rng(0)
    rows, choices = rng.random((6, 9)), rng.integers(0, 9, size=(6, 2))
    assert two_way_rows(rows, choices).tolist() == [rows[i, a] > rows[i, b] for i, (a, b) in enumerate(choices)]
    weights = rng.random((5, 2, 3, 2))
    expected = [[np.mean([weights[m, l, h, 0] > weights[m, l, h, 1] for m in range(5)]) for h in range(3)]
                for l in range(2)]
    np.testing.assert_allclose(two_way_accuracy(weights), expected)


def test_picked_head_is_chosen_on_training_and_scored_on_held_out():
    train, held = np.zeros((2, 2, 3, 2)), np.zeros((2, 2, 3, 2))
    train[:, 1, 2] = [1.0, 0.0]  # layer 1 head 2 is right on both training sentences
    held[0, 1, 2] = [1.0, 0.0]  # ... and on one of the two held-out ones
    held[:, 0, 0] = [1.0, 0.0]  # a head that is better on held-out must not be picked
    assert picked_head(train, held) == (1, 2, 1.0, 0.5)


def test_choice_weights_are_the_pronouns_row_where_every_word_is_one_token():
    sentences = pair("the cat sat on the mat because it was tired".split(), 7, 1, 5)
    got = choice_weights(load_model(), sentences)
    tokens, weights = attention_maps(sentences[0].text)
    assert tokens[1:-1] == list(sentences[0].tokens)  # one WordPiece token per word: word i is token i + 1
    np.testing.assert_allclose(got[0], np.stack([weights[:, :, 8, 2], weights[:, :, 8, 6]], axis=-1), rtol=1e-6)
    np.testing.assert_allclose(got[1], got[0][..., ::-1], rtol=1e-6)


@pytest.mark.pages
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_after_training_the_page_puts_both_heads_side_by_side(lang):
    at = open_page("glove", lang)
    at.radio(key="glove_predict").set_value(3).run()
    at.button(key="glove_train").click().run()
    assert_clean(at)
    strings = load_strings(lang)
    table = next(df for df in at.dataframe if strings["glove.compare_col_acc"] in df.value.columns).value
    heads = table[strings["glove.compare_col_head"]].tolist()
    assert heads[:2] == [strings["glove.compare_ours_before"], strings["glove.compare_ours_after"]] and len(heads) == 3
    dataset = load_pronoun_dataset()
    model = load_model()
    picking = dataset.train[:48]
    train_acc = np.zeros((6, 12))
    for s in picking:  # the real model's head, picked by a loop over attention_maps (single-token words only)
        partner = picking[picking.index(s) ^ 1]
        tokens, weights = attention_maps(s.text, model)
        if tokens[1:-1] != list(s.tokens):
            continue
        train_acc += weights[:, :, s.pronoun_index + 1, s.answer_index + 1] > weights[:, :, s.pronoun_index + 1,
                                                                                       partner.answer_index + 1]
    assert heads[2].endswith("L{}H{}".format(*np.unravel_index(int(np.argmax(train_acc)), train_acc.shape)))
    chance_free = [float(v.split()[0]) for v in table[strings["glove.compare_col_acc"]]]
    assert all(0 <= v <= 100 for v in chance_free) and chance_free[1] > chance_free[0]
