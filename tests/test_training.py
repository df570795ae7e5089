"""The pronoun head's training: analytic gradients against finite differences, the context step against a loop,
and a fixed-seed run that reaches the held-out accuracy the page reports."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.attention import ranks_in_rows
from attention_core.glove.pronouns import load_pronoun_dataset, pronoun_batch
from attention_core.text import tokenize
from attention_core.glove import embed
from attention_core.glove.training import (
    TrainSetting, accuracy, head_inputs, head_rows, loss_and_gradients, pack_batch, projection_pair,
    right_context, sentence_row, train_head,
)


def random_batch(rng, m=5, d=7, lengths=(3, 6)):
    vectors = [rng.normal(size=(int(rng.integers(*lengths)), d)) for _ in range(m)]
    query = [int(rng.integers(len(v))) for v in vectors]
    answer = [int(rng.integers(len(v))) for v in vectors]
    return pack_batch(vectors, query, answer)


def naive_loss(W_q, W_k, batch, context, weight_decay):
    """The loss with Python loops: per sentence, the softmax row of the query over its real tokens."""
    H = head_inputs(batch, context)
    total = 0.0
    for i in range(batch.size):
        n = int(batch.mask[i].sum())
        q = H[i, batch.query[i]] @ W_q
        scores = [float(q @ (H[i, j] @ W_k)) / math.sqrt(W_q.shape[1]) for j in range(n)]
        top = max(scores)
        log_z = top + math.log(sum(math.exp(s - top) for s in scores))
        total -= scores[batch.answer[i]] - log_z
    return total / batch.size + 0.5 * weight_decay * (np.sum(W_q**2) + np.sum(W_k**2))


@pytest.mark.parametrize("context", [True, False])
@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_analytic_gradient_matches_central_differences(context, weight_decay):
    rng = np.random.default_rng(11)
    batch = random_batch(rng)
    W_q, W_k = rng.normal(size=(7, 3)), rng.normal(size=(7, 3))
    H = head_inputs(batch, context)
    loss, g_q, g_k = loss_and_gradients(W_q, W_k, H, batch.mask, batch.query, batch.answer, weight_decay)
    assert loss == pytest.approx(naive_loss(W_q, W_k, batch, context, weight_decay), rel=1e-12)
    h = 1e-5
    for W, grad, which in ((W_q, g_q, 0), (W_k, g_k, 1)):
        numeric = np.zeros_like(W)
        for idx in np.ndindex(*W.shape):
            plus, minus = W.copy(), W.copy()
            plus[idx] += h
            minus[idx] -= h
            args_p = (plus, W_k) if which == 0 else (W_q, plus)
            args_m = (minus, W_k) if which == 0 else (W_q, minus)
            lp = loss_and_gradients(*args_p, H, batch.mask, batch.query, batch.answer, weight_decay)[0]
            lm = loss_and_gradients(*args_m, H, batch.mask, batch.query, batch.answer, weight_decay)[0]
            numeric[idx] = (lp - lm) / (2 * h)
        rel = np.linalg.norm(grad - numeric) / np.linalg.norm(numeric)
        assert rel < 1e-6, rel


def test_gradient_on_real_sentences(glove):
    ds = load_pronoun_dataset()
    batch = pronoun_batch(ds.train[:12], glove)
    W_q, W_k = projection_pair(50, 4, 5)
    H = head_inputs(batch, True)
    _, g_q, g_k = loss_and_gradients(W_q, W_k, H, batch.mask, batch.query, batch.answer, 1e-3)
    rng = np.random.default_rng(0)
    h = 1e-5
    for W, grad, which in ((W_q, g_q, 0), (W_k, g_k, 1)):
        picks = [tuple(int(rng.integers(s)) for s in W.shape) for _ in range(20)]
        numeric, analytic = [], []
        for idx in picks:
            plus, minus = W.copy(), W.copy()
            plus[idx] += h
            minus[idx] -= h
            f = (lambda M: loss_and_gradients(M, W_k, H, batch.mask, batch.query, batch.answer, 1e-3)[0]) if which == 0 \
                else (lambda M: loss_and_gradients(W_q, M, H, batch.mask, batch.query, batch.answer, 1e-3)[0])
            numeric.append((f(plus) - f(minus)) / (2 * h))
            analytic.append(grad[idx])
        rel = np.linalg.norm(np.subtract(analytic, numeric)) / np.linalg.norm(numeric)
        assert rel < 1e-6, rel


def test_right_context_matches_a_loop():
    rng = np.random.default_rng(2)
    batch = random_batch(rng, m=4, d=5, lengths=(1, 7))
    H = right_context(batch.X, batch.mask)
    for i in range(batch.size):
        n = int(batch.mask[i].sum())
        for j in range(batch.X.shape[1]):
            if j >= n:
                assert not H[i, j].any()  # padding stays zero
                continue
            after = [batch.X[i, k] for k in range(j + 1, n)]
            expected = batch.X[i, j] + (np.mean(after, axis=0) if after else 0.0)
            np.testing.assert_allclose(H[i, j], expected, atol=1e-12)


def test_rows_match_a_direct_computation():
    rng = np.random.default_rng(4)
    batch = random_batch(rng)
    W_q, W_k = rng.normal(size=(7, 4)), rng.normal(size=(7, 4))
    rows = head_rows(W_q, W_k, batch, True)
    H = head_inputs(batch, True)
    for i in range(batch.size):
        n = int(batch.mask[i].sum())
        s = np.array([(H[i, batch.query[i]] @ W_q) @ (H[i, j] @ W_k) / 2.0 for j in range(n)])
        ref = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        np.testing.assert_allclose(rows[i, :n], ref, atol=1e-12)
        assert not rows[i, n:].any()
        values = sorted(rows[i, :n].tolist(), reverse=True)
        assert ranks_in_rows(rows, batch.answer)[i] == values.index(rows[i, batch.answer[i]]) + 1


def test_accuracy_counts_only_clear_wins():
    w = np.array([[0.5, 0.5, 0.0], [0.2, 0.7, 0.1], [0.6, 0.3, 0.1]])
    assert accuracy(w, [0, 1, 1]) == pytest.approx(1 / 3)  # a tie for first is not a win
    assert ranks_in_rows(w, [0, 1, 1]).tolist() == [1, 1, 2]


def test_pack_batch_rejects_bad_input():
    with pytest.raises(ValueError):
        pack_batch([], [])
    with pytest.raises(ValueError):
        pack_batch([np.ones((2, 3))], [2])
    with pytest.raises(ValueError):
        train_head(pack_batch([np.ones((2, 3))], [0]), TrainSetting(d_k=0))


@pytest.fixture(scope="module")
def batches(glove):
    ds = load_pronoun_dataset()
    return ds, pronoun_batch(ds.train, glove), pronoun_batch(ds.held_out, glove)


def test_default_run_reaches_90_percent_held_out(batches, glove):
    ds, train, held = batches
    steps_seen = []
    result = train_head(train, TrainSetting(), callback=lambda step, loss: steps_seen.append((step, loss)))
    assert [s for s, _ in steps_seen] == list(range(1, TrainSetting().steps + 1))
    assert np.isfinite(result.losses).all() and result.losses[-1] < 0.1 * result.losses[0]
    assert [l for _, l in steps_seen] == result.losses[:-1].tolist()
    held_acc = accuracy(head_rows(result.W_q, result.W_k, held, True), held.answer)
    before = accuracy(head_rows(result.W_q_init, result.W_k_init, held, True), held.answer)
    assert held_acc >= 0.90, held_acc
    assert before < 0.5
    assert accuracy(head_rows(result.W_q, result.W_k, train, True), train.answer) == 1.0
    # the page's default sentence (held out) and its "wide" minimal pair now rank the right noun first
    for text, answer in ((ds.held_out[0].text, "animal"), (ds.held_out[1].text, "street")):
        words = tokenize(text)
        X, _ = embed(words, glove)
        row = sentence_row(result.W_q, result.W_k, X, words.index("it"), True)
        assert int(np.argmax(row)) == words.index(answer)


def test_training_is_deterministic_for_a_seed(batches):
    _, train, _ = batches
    short = TrainSetting(steps=15)
    a, b = train_head(train, short), train_head(train, short)
    np.testing.assert_array_equal(a.W_q, b.W_q)
    np.testing.assert_array_equal(a.losses, b.losses)
    c = train_head(train, TrainSetting(steps=15, seed=1))
    assert not np.allclose(a.W_q, c.W_q)


def test_without_context_a_pair_is_never_both_right(batches):
    """With raw vectors the query of "it" is the same in both sentences of a pair, so accuracy is at most 50 %."""
    _, train, held = batches
    result = train_head(train, TrainSetting(context=False, steps=100))
    for batch in (train, held):
        rows = head_rows(result.W_q, result.W_k, batch, False)
        wins = np.argmax(rows, axis=1) == batch.answer
        assert not (wins[::2] & wins[1::2]).any()
        assert accuracy(rows, batch.answer) <= 0.5
