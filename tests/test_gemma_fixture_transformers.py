"""attention_core.gemma against transformers' Gemma3ForCausalLM reading the same GGUF file
(tests/fixtures/gemma_transformers.npz, written by tests/reference/make_gemma_fixtures.py): on 12 texts it never
saw (English, Japanese, code, runs of whitespace, emoji, HTML, digits, mixed scripts, a text past the 512-token
window) the ids, the top next token, the logits and the attention maps are the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attention_core import gemma
from attention_core.gemma import weights as gemma_weights

FIXTURE = np.load(Path(__file__).parent / "fixtures" / "gemma_transformers.npz")
NAMES = [str(name) for name in FIXTURE["names"]]
TEXTS = dict(zip(NAMES, (str(text) for text in FIXTURE["texts"])))
SHORT = [name for name in NAMES if name != "long"]
try:
    gemma_weights.gguf_path()
except gemma_weights.GemmaUnavailable as missing:
    pytest.skip(f"Gemma's packages are absent: {missing}", allow_module_level=True)


def test_the_fixture_holds_every_kind_of_text():
    assert len(SHORT) == 11 and "long" in NAMES
    assert any("今日" in TEXTS[n] for n in SHORT) and any("def " in TEXTS[n] for n in SHORT)
    assert len(FIXTURE["long/ids"]) > FIXTURE["long/rows"].max() > 512
    assert sum(f"{name}/logits" in FIXTURE.files for name in NAMES) == 4


@pytest.mark.parametrize("name", [*SHORT, pytest.param("long", marks=pytest.mark.slow)])
def test_ids_and_the_next_token_equal_transformers(name):
    assert gemma.encode(TEXTS[name]) == FIXTURE[f"{name}/ids"].tolist()
    logits = gemma.next_token_logits(TEXTS[name])
    top = FIXTURE[f"{name}/top_ids"]
    assert int(np.argmax(logits)) == int(top[0])
    tolerance = 1e-2 if name == "long" else 2e-4  # float32 sums over 680 positions drift further
    np.testing.assert_allclose(logits[top], FIXTURE[f"{name}/top_logits"], rtol=0, atol=tolerance)
    if f"{name}/logits" in FIXTURE.files:
        np.testing.assert_allclose(logits, FIXTURE[f"{name}/logits"], rtol=0, atol=tolerance)


@pytest.mark.parametrize("name", SHORT)
def test_every_attention_map_equals_transformers(name):
    maps = gemma.attention_maps(TEXTS[name])
    assert maps.shape == FIXTURE[f"{name}/attention"].shape
    np.testing.assert_allclose(maps, FIXTURE[f"{name}/attention"], rtol=0, atol=2e-5)


@pytest.mark.slow
def test_attention_past_the_window_equals_transformers():
    ids = FIXTURE["long/ids"].tolist()
    weights = gemma.default_model()[0]
    maps = gemma.forward(weights, ids, all_logits=False).attention
    rows, layers = FIXTURE["long/rows"], FIXTURE["long/layers"]
    expected = FIXTURE["long/attention_rows"]
    np.testing.assert_allclose(maps[layers][:, :, rows, :], expected, rtol=0, atol=2e-5)
    local = list(layers).index(0)
    assert np.all(expected[local, :, :, : rows.min() - 511] == 0)  # the window, as transformers has it
    assert expected[1 - local, :, :, : rows.min() - 511].sum() > 0.1  # the global layer sees past it
