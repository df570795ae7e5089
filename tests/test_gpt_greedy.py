"""Lesson 9's copied name: the greedy continuation read off one pass (while the model writes the known tokens) and
decoded step by step from the first other token on, against greedy decoding done naively here (one full pass
per new token, no cache, no shortcut)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import smollm2
from attention_core.smollm2 import weights as gpt_weights
from attention_core.blas import single_blas_thread
from attention_core.smollm2.serving import greedy_continuation

try:
    gpt_weights.gguf_path()
except gpt_weights.GPTUnavailable as missing:
    pytest.skip(f"the model package is absent: {missing}", allow_module_level=True)


@pytest.fixture(scope="module")
def model():
    with single_blas_thread():
        yield smollm2.default_model()


def naive_greedy(weights, prefix: list[int], count: int) -> tuple[int, ...]:
    ids = list(prefix)
    for _ in range(count):
        ids.append(int(np.argmax(smollm2.forward(weights, ids).logits[-1])))
    return tuple(ids[len(prefix):])


@pytest.mark.parametrize("known", ["copied", "diverges at once", "diverges later", "too short"])
def test_greedy_continuation_is_greedy_decoding(model, known):
    weights, tokenizer = model
    prefix = tokenizer.encode("My friend Zorblax Quintavelle came over. Later, Zorblax")
    expected = naive_greedy(weights, prefix, 4)
    follow = {"copied": list(expected),  # the known tokens are what greedy writes: the shortcut all the way
              "diverges at once": [expected[0] + 1] + list(expected[1:]),
              "diverges later": [expected[0], expected[1], expected[2] + 1, expected[3]],
              "too short": [expected[0]]}[known]
    text = prefix + follow
    logits = smollm2.forward(weights, text).logits[len(prefix) - 1:]
    assert greedy_continuation(weights, prefix, logits, tuple(follow), 4) == expected
