"""Lesson 3 core (attention_core.self_attention) against independent references: naive loops, brute force, parsing back."""

import csv
import io
import itertools
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.attention import concat_heads_output, multi_head_attention, split_heads
from attention_core.presets import DATA_DIR, PresetError
from attention_core.self_attention import (
    HEADS,
    lines_to_keep,
    load_self_attention,
    matrix_csv,
    mix_steps,
    multi_head_parts,
    position_labels,
    preset_heads,
    preset_scores,
    previous_word_scores,
    top_targets,
)
from tests.hypothesis_budget import examples

DATA = load_self_attention()


def naive_softmax_rows(scores):
    """Row-wise softmax with Python loops and math.exp."""
    out = []
    for row in scores:
        top = max(row)
        exps = [math.exp(s - top) for s in row]
        total = sum(exps)
        out.append([e / total for e in exps])
    return np.array(out)


def naive_preset_weights(preset, head="coreference"):
    n = len(preset.tokens)
    links = {(link.source, link.target): link.score
             for link in (preset.links if head == "coreference" else preset.syntax_links)}
    scores = [[links.get((i, j), preset.self_score if i == j else preset.base_score) for j in range(n)] for i in range(n)]
    return naive_softmax_rows(scores)


def naive_previous_word(n, score):
    scores = [[0.0] * n for _ in range(n)]
    for i in range(n):
        scores[i][i - 1 if i > 0 else 0] = score
    return scores


# ---- the presets -----------------------------------------------------------------------------------------

def test_three_presets_with_the_lesson_sentences():
    ids = [p.id for p in DATA.presets]
    assert ids == ["cat", "hanako", "animal"]
    cat, hanako, animal = DATA.presets
    assert (cat.tokens[cat.pronoun], cat.tokens[cat.antecedent]) == ("それ", "マット")  # それ is for things, not the cat
    assert (hanako.tokens[hanako.pronoun], hanako.tokens[hanako.antecedent]) == ("彼女", "花子")
    assert (animal.tokens[animal.pronoun], animal.tokens[animal.antecedent]) == ("it", "animal")
    assert DATA.by_id("nope") is cat
    assert (DATA.default_for("en"), DATA.default_for("ja"), DATA.default_for("fr")) == ("animal", "cat", "animal")


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_every_head_row_is_a_distribution(preset):
    heads = preset_heads(preset, DATA.rule_score)
    n = len(preset.tokens)
    assert heads.shape == (len(HEADS), n, n)
    assert np.isfinite(heads).all() and (heads >= 0).all()
    np.testing.assert_allclose(heads.sum(axis=-1), 1.0, atol=1e-12)


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_coreference_link_is_the_largest_weight_of_its_row(preset):
    row = preset_heads(preset, DATA.rule_score)[0][preset.pronoun]
    others = np.delete(row, preset.antecedent)
    assert row[preset.antecedent] > others.max()
    assert top_targets(row, 1) == [preset.antecedent]


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_preset_weights_match_a_naive_softmax_of_the_sparse_scores(preset):
    np.testing.assert_allclose(preset_heads(preset, DATA.rule_score)[0], naive_preset_weights(preset), atol=1e-12)
    scores = preset_scores(preset)
    for link in preset.links:
        assert scores[link.source, link.target] == link.score


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_rule_heads_of_the_presets_match_naive_loops(preset):
    heads = preset_heads(preset, DATA.rule_score)
    n = len(preset.tokens)
    assert HEADS == ("coreference", "syntax", "previous_word")
    np.testing.assert_allclose(heads[1], naive_preset_weights(preset, "syntax"), atol=1e-12)
    np.testing.assert_allclose(heads[2], naive_softmax_rows(naive_previous_word(n, DATA.rule_score)), atol=1e-12)


def test_rule_heads_point_where_the_rule_says():
    animal = DATA.by_id("animal")
    heads = preset_heads(animal, DATA.rule_score)
    assert heads[2][0].argmax() == 0  # the first token has no previous word: itself
    n = len(animal.tokens)
    assert [int(heads[2][i].argmax()) for i in range(1, n)] == list(range(n - 1))


SUBJECTS = {  # the syntax head's hand-designed relation, predicate -> subject, in words
    "cat": {"座った": "猫", "気に入った": "猫", "らしい": "猫"},  # (the dropped subject: no token says it again)
    "hanako": {"貸した": "花子", "親切": "彼女", "だった": "彼女"},
    "animal": {"did": "animal", "cross": "animal", "was": "it", "tired": "it"},
}


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_syntax_head_sends_each_predicate_to_its_subject(preset):
    syntax = preset_heads(preset, DATA.rule_score)[1]
    tokens = preset.tokens
    pairs = {tokens[link.source]: tokens[link.target] for link in preset.syntax_links}
    assert pairs == SUBJECTS[preset.id]
    for link in preset.syntax_links:
        assert top_targets(syntax[link.source], 1) == [link.target]
        assert syntax[link.source, link.target] > 0.5  # most of the row, not just the largest
    # a token without a syntax link keeps its largest weight on itself (self_score > base_score)
    free = sorted(set(range(len(tokens))) - {link.source for link in preset.syntax_links})
    assert all(int(syntax[i].argmax()) == i for i in free)
    # the syntax head differs from the coreference head: the pronoun's row stays on the pronoun
    assert int(syntax[preset.pronoun].argmax()) == preset.pronoun


@pytest.mark.parametrize("preset", DATA.presets, ids=lambda p: p.id)
def test_multi_head_parts_match_a_naive_loop(preset):
    heads = preset_heads(preset, DATA.rule_score)
    parts = multi_head_parts(heads, d_model=12, seed=0)
    h, n = heads.shape[:2]
    assert parts.X.shape == (n, 12) and parts.W_V.shape == (h, 12, 4) and parts.W_O.shape == (12, 12)
    assert parts.head_outputs.shape == (h, n, 4) and parts.concat.shape == (n, 12) and parts.output.shape == (n, 12)
    for i in range(n):
        concat = []
        for k in range(h):
            V = [[sum(parts.X[j, m] * parts.W_V[k, m, c] for m in range(12)) for c in range(4)] for j in range(n)]
            out = [sum(heads[k, i, j] * V[j][c] for j in range(n)) for c in range(4)]
            np.testing.assert_allclose(parts.head_outputs[k, i], out, atol=1e-12)
            concat += out
        np.testing.assert_allclose(parts.concat[i], concat, atol=1e-12)
        mixed = [sum(concat[m] * parts.W_O[m, c] for m in range(12)) for c in range(12)]
        np.testing.assert_allclose(parts.output[i], mixed, atol=1e-12)
    again = multi_head_parts(heads, d_model=12, seed=0)
    np.testing.assert_array_equal(again.output, parts.output)  # seeded: the page shows the same numbers every time
    assert not np.allclose(multi_head_parts(heads, d_model=12, seed=1).output, parts.output)


def test_concat_heads_output_agrees_with_multi_head_attention():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5, 8))
    W_q, W_k, W_v = (rng.normal(size=(8, 8)) for _ in range(3))
    out, weights = multi_head_attention(X, W_q, W_k, W_v, n_heads=2)
    V = split_heads(X @ W_v, 2)
    concat, mixed = concat_heads_output(weights @ V, np.eye(8))
    np.testing.assert_allclose(concat, out, atol=1e-12)
    np.testing.assert_allclose(mixed, out, atol=1e-12)
    with pytest.raises(ValueError):
        concat_heads_output(weights @ V, np.eye(6))


def test_mix_steps_lays_each_head_in_its_columns():
    parts = multi_head_parts(preset_heads(DATA.by_id("cat"), DATA.rule_score))
    steps = mix_steps(parts, 8)
    assert steps.shape == (5, 12)
    for k in range(3):
        block = steps[k, 4 * k:4 * k + 4]
        np.testing.assert_array_equal(block, parts.head_outputs[k, 8])
        assert np.isnan(np.delete(steps[k], range(4 * k, 4 * k + 4))).all()
    np.testing.assert_array_equal(np.nansum(steps[:3], axis=0), steps[3])  # the concatenation is the heads side by side
    np.testing.assert_array_equal(steps[4], parts.output[8])


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(0, 12), st.floats(-20, 20, allow_nan=False))
def test_previous_word_scores_match_naive_loop(n, score):
    np.testing.assert_array_equal(previous_word_scores(n, score), np.array(naive_previous_word(n, score)).reshape(n, n))


# ---- the cumulative-mass cut-off -----------------------------------------------------------------------

def brute_force_min_lines(row, mass):
    """The fewest lines whose weights sum to at least mass * total, by trying every subset size."""
    total = sum(row)
    for k in range(1, len(row) + 1):
        if any(sum(c) >= mass * total - 1e-12 for c in itertools.combinations(row, k)):
            return k
    return len(row)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.floats(0.0, 10.0, allow_nan=False), min_size=1, max_size=7).filter(lambda r: sum(r) > 1e-6),
       st.floats(0.01, 1.0))
def test_lines_to_keep_is_the_smallest_set_reaching_the_mass_and_its_ties(raw, mass):
    row = np.array(raw) / sum(raw)
    keep = lines_to_keep(row, mass)
    assert keep.dtype == bool and keep.shape == row.shape
    k = brute_force_min_lines(list(row), mass)
    last = sorted(row, reverse=True)[k - 1]  # the lightest line the fewest lines need
    assert keep.tolist() == [bool(w >= last) for w in row]  # ...and every line as heavy as it
    assert row[keep].sum() >= mass - 1e-9
    if (~keep).any():
        assert row[keep].min() > row[~keep].max()  # equal weights are never split


def test_lines_to_keep_examples_and_ends():
    row = np.array([0.1, 0.6, 0.3])
    assert lines_to_keep(row, 0.5).tolist() == [False, True, False]
    assert lines_to_keep(row, 0.6).tolist() == [False, True, False]
    assert lines_to_keep(row, 0.61).tolist() == [False, True, True]
    assert lines_to_keep(row, 1.0).tolist() == [True, True, True]
    assert lines_to_keep([0.5, 0.5], 0.5).tolist() == [True, True]  # equal weights are drawn alike
    assert lines_to_keep([0.6, 0.2, 0.2], 0.7).tolist() == [True, True, True]
    assert lines_to_keep([], 0.5).tolist() == []
    for bad in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError):
            lines_to_keep(row, bad)


# ---- small helpers -------------------------------------------------------------------------------------

def test_top_targets():
    W = np.array([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2], [1.0, 0.0, 0.0]])
    assert top_targets(W[0], 2) == [1, 2]
    assert top_targets(W[1], 3) == [0, 1, 2]


def test_matrix_csv_parses_back():
    tokens = ["=cmd", "a,b", '"q"', "猫"]
    W = np.random.default_rng(0).dirichlet(np.ones(4), size=4)
    rows = list(csv.reader(io.StringIO(matrix_csv(W, tokens))))
    assert rows[0] == ["query \\ key", *position_labels(tokens)]
    assert next(csv.reader(io.StringIO(matrix_csv(W, tokens, "クエリ \\ キー"))))[0] == "クエリ \\ キー"
    assert [r[0] for r in rows[1:]] == ["1:=cmd", "2:a,b", '3:"q"', "4:猫"]
    np.testing.assert_allclose(np.array([[float(x) for x in r[1:]] for r in rows[1:]]), W, atol=5e-7)
    assert all(cell[0].isdigit() for r in rows[1:] for cell in r)  # no cell starts with = + - @


# ---- the validator -------------------------------------------------------------------------------------

GOOD = (DATA_DIR / "self_attention.toml").read_text(encoding="utf-8")


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "self_attention.toml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "old, new, field",
    [
        ("rule_score = 5.0", 'rule_score = "high"', "rule_score"),
        ("{ from = 8, to = 0, score = 1.5 }", "{ from = 8, to = 99, score = 1.5 }", "presets[0].links[1].to"),
        ("{ from = 8, to = 0, score = 1.5 }", '{ from = 8, to = 0, score = "big" }', "presets[0].links[1].score"),
        ("{ from = 8, to = 0, score = 1.5 }", "{ from = 8, to = 2, score = 1.5 }", "presets[0].links[1]"),
        ("{ from = 8, to = 0, score = 1.5 }", "{ to = 0, score = 1.5 }", "presets[0].links[1].from"),
        ("{ from = 8, to = 0, score = 1.5 }", "{ from = 1, to = 0, score = 2.5 }", "presets[0].links"),
        ("pronoun = 8\nantecedent = 2", "pronoun = 8\nantecedent = 1", "presets[0].links"),
        ("pronoun = 8\nantecedent = 2", "pronoun = 9\nantecedent = 2", "presets[0].pronoun"),
        ("base_score = 0.0\nself_score = 1.0\npronoun = 8\nantecedent = 0\nsyntax_links = [\n  { from = 6, to = 0, score = 4.0 },   # 貸した",
         "base_score = 0.0\nself_score = nan\npronoun = 8\nantecedent = 0\nsyntax_links = [\n  { from = 6, to = 0, score = 4.0 },   # 貸した",
         "presets[1].self_score"),
        ('id = "hanako"', 'id = "cat"', "presets[].id"),
        ("{ from = 6, to = 0, score = 4.0 },   # 座った -> 猫 (who sat)", "{ from = 6, to = 40, score = 4.0 },",
         "presets[0].syntax_links[0].to"),
        ('default_preset = { en = "animal", ja = "cat" }', 'default_preset = { en = "dog", ja = "cat" }',
         "default_preset.en"),
        ('default_preset = { en = "animal", ja = "cat" }', 'default_preset = { en = "animal" }', "default_preset.ja"),
    ],
)
def test_validator_names_file_and_field(tmp_path, old, new, field):
    assert old in GOOD, old
    with pytest.raises(PresetError) as err:
        load_self_attention(write(tmp_path, GOOD.replace(old, new, 1)))
    message = str(err.value)
    assert message.startswith("self_attention.toml:"), message
    assert f"'{field}'" in message, message


def test_validator_names_the_file_when_tokens_are_bad_or_the_file_is_missing(tmp_path):
    bad = GOOD.replace('tokens = ["猫"', 'tokens = ["", "猫"', 1)
    with pytest.raises(PresetError, match=r"self_attention\.toml: field 'presets\[0\]\.tokens'"):
        load_self_attention(write(tmp_path, bad))
    with pytest.raises(PresetError, match=r"self_attention\.toml: not valid TOML"):
        load_self_attention(write(tmp_path, "rule_score = = 1"))
    shutil.rmtree(tmp_path)
    tmp_path.mkdir()
    with pytest.raises(PresetError, match=r"self_attention\.toml: the preset file is missing"):
        load_self_attention(tmp_path)
