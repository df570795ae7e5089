"""Lesson "Attention as it is built today" as shown, against computations made here another way: the maps from
gemma.forward (not the lesson's own pass), the distances between heads by a loop over pairs, the KV cache's bytes
from a prefill's cache, the tokens from Gemma's tokenizer. One AppTest run with every question answered (the fast
loop: a wrong page fails here)."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

import numpy as np
import pytest

from attention_core.blas import single_blas_thread
from attention_core.gemma import weights as gemma_weights
from tests.apptest_utils import assert_clean, open_page
from tests.seam import assert_attention_map, figure, find_sentence, number, strings, texts

try:
    gemma_weights.gguf_path()
except gemma_weights.GemmaUnavailable as missing:
    pytest.skip(f"Gemma's packages are absent: {missing}", allow_module_level=True)

from attention_core import gemma  # noqa: E402

DATA = tomllib.loads((Path(__file__).resolve().parent.parent / "data" / "modern.toml").read_text(encoding="utf-8"))
QUESTIONS = ("modern_gqa_predict", "modern_window_predict", "modern_rope_predict", "modern_ja_predict")


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    with single_blas_thread():
        yield


@functools.lru_cache(maxsize=None)
def model():
    return gemma.default_model()


def labels(ids) -> list[str]:
    return [p.replace(" ", "·") for p in model()[1].pieces(ids)]


@pytest.fixture(scope="module")
def page():
    at = open_page("modern", timeout=600)
    early = [el.proto.id.split("-", 2)[-1] for el in at.get("plotly_chart")]
    assert early == ["modern_kv_bars"], "a figure before any question is answered (the configs' KV bars answer none)"
    for key in QUESTIONS:
        at.radio(key=key).set_value(2)
    at.run(timeout=600)
    assert_clean(at)
    return at


def test_the_maps_of_one_layer_are_gemmas_and_their_distances_a_loop_over_pairs(page):
    weights = model()[0]
    ids = model()[1].encode(DATA["text"]["en"])
    maps = gemma.forward(weights, ids, all_logits=False).attention.astype(np.float64)
    for head in range(4):
        assert_attention_map(figure(page, f"modern_gqa_map_{head}"), maps[0, head], labels(ids), labels(ids), "en",
                             atol=1e-5)
    within, between = [], []
    flat = [(layer, head) for layer in range(18) for head in range(4)]
    for a in range(len(flat)):
        for b in range(a + 1, len(flat)):
            rows = maps[flat[a]][1:] - maps[flat[b]][1:]
            (within if flat[a][0] == flat[b][0] else between).append(np.abs(rows).sum(axis=1).mean() / 2)
    shown = find_sentence(texts(page), "modern.gqa_numbers", "en")
    assert number(shown["within"]) == pytest.approx(np.mean(within), abs=0.006)
    assert number(shown["between"]) == pytest.approx(np.mean(between), abs=0.006)
    assert (int(shown["within_pairs"]), int(number(shown["between_pairs"]))) == (len(within), len(between))
    _, cache = gemma.prefill(weights, ids)
    kv = find_sentence(texts(page), "modern.kv_numbers", "en")
    measured = (cache.keys.nbytes + cache.values.nbytes) / cache.length / 1024
    assert number(kv["measured"]) == pytest.approx(measured, abs=0.05) and number(kv["gemma"]) == 18 * 2 * 256 * 4 / 1024


def test_japanese_tokens_and_the_picked_heads_map(page):
    ids = model()[1].encode(DATA["japanese"])
    shown = find_sentence(texts(page), "modern.ja_gemma", "en")
    assert int(shown["n"]) == len(ids) and shown["tokens"].replace("\\", "").split(" | ") == labels(ids)
    head = find_sentence(texts(page), "modern.ja_numbers", "en")["head"].strip("*")
    layer, h = int(head[1:head.index("H")]), int(head[head.index("H") + 1:])
    maps = gemma.forward(model()[0], ids, all_logits=False).attention.astype(np.float64)
    assert_attention_map(figure(page, "modern_ja_map"), maps[layer, h], labels(ids), labels(ids), "en", atol=1e-5)


def test_the_licence_notice_is_shown(page):
    notice = strings("en")["common.gemma_notice"].split("{")[0]
    assert any(text.startswith(notice) for text in texts(page))
