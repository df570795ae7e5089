"""Lesson "Attention as it is built today": each qualitative sentence of the page holds at the defaults (the data the
page shows: its cached calls, the long text's and the Japanese study's results kept on disk)."""

from __future__ import annotations

import pytest

from attention_core.gemma import weights as gemma_weights

try:
    gemma_weights.gguf_path()
except gemma_weights.GemmaUnavailable as missing:
    pytest.skip(f"Gemma's packages are absent: {missing}", allow_module_level=True)

from attention_core.blas import single_blas_thread  # noqa: E402
from attention_core.gpt_studies import modern as study  # noqa: E402
from attention_core.measure.head_stats import Count  # noqa: E402
from ui.modern import page, sections  # noqa: E402

G = gemma_weights.GemmaConfig()


@pytest.fixture(scope="module")
def numbers():
    with single_blas_thread():
        ids = tuple(page.model()[1].encode(page.texts().text["en"]))
        return page.text_numbers(ids)


def test_heads_sharing_keys_differ_about_as_much_as_heads_that_do_not(numbers):
    assert sections.gqa_answer(numbers) == 3  # within >= 0.75 x between: "about as different"
    assert numbers.spread.within > 0.2


def test_sharing_saves_what_the_page_says(numbers):
    assert numbers.cache_bytes_per_token * G.n_head == study.kv_bytes_per_token(G.n_layer, G.n_head, G.head_dim)
    assert study.kv_bytes_per_token(G.n_layer, G.n_kv_head, G.head_dim) < study.kv_bytes_per_token(30, 3, 64)


def test_local_layers_see_nothing_past_the_window_and_global_layers_read_mostly_the_sink():
    with single_blas_thread():
        summary = page.window_summary()
    local = [layer for layer in range(G.n_layer) if layer not in G.global_layers]
    assert summary["tokens"] > G.window and summary["past_max"][local].max() == 0.0
    past, start = summary["past"][list(G.global_layers)], summary["on_start"][list(G.global_layers)]
    assert sections.window_answer(summary) == 3 and past.mean() > 0.3
    assert start.mean() > past.mean() / 2  # "mostly the sink"


def test_base_ten_thousand_moves_the_score_more_far_apart(numbers):
    assert sections.rope_answer(numbers) == 1
    assert study.slow_pairs(G.head_dim, G.rope_global_base, 32768) > study.slow_pairs(G.head_dim, G.rope_local_base,
                                                                                        32768)


def test_qk_norm_narrows_the_lengths(numbers):
    raw, normed = numbers.lengths["q_raw"], numbers.lengths["q_normed"]
    assert normed[2] / normed[1] < raw[2] / raw[1] / 3


def test_the_japanese_previous_token_head_beats_chance_and_the_untrained_copy():
    with single_blas_thread():
        result = page.japanese_heads()
    held = Count(result["trained"]["k"], result["trained"]["n"])
    untrained = Count(result["untrained"]["k"], result["untrained"]["n"])
    assert sections.japanese_answer(result) == 3 and held.share > 0.5
    assert held.interval[0] > untrained.interval[1] and held.interval[0] > result["chance"] / held.n
