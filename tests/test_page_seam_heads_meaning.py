""""What heads do" at its defaults, read from the same opened page as tests/test_page_seam_heads.py (no page run of its
own): each label means what it says (its meaning pinned here, not read from the locale it checks), each series of
the switch-off chart is drawn under its own label with the zeroed random band checked against model.py's pass, the
learner's own heads are mean-ablated with the picking set's means and set against the mean-ablated random band,
nothing answers a question before it is answered, and the held-out paragraphs' figure is the study's."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from attention_core.smollm2 import weights as gpt_weights
from tests.seam import figure, find_sentence, find_sentences, number, strings, texts

try:
    gpt_weights.gguf_path()
except gpt_weights.GPTUnavailable as missing:
    pytest.skip(f"the model package is absent: {missing}", allow_module_level=True)

from attention_core import smollm2  # noqa: E402
from attention_core.gpt_studies import causal_study as cs  # noqa: E402
from attention_core.smollm2 import interventions as iv  # noqa: E402
from tests.apptest_utils import decode_array  # noqa: E402
from tests.test_page_seam_heads import (ANSWERS, PERIOD, answered, one_blas_thread, opened, picked,  # noqa: E402,F401
                                        results, second_copy_loss, sets)

OWN_K = 4  # the learner's own heads at the defaults: the top 4, mean-ablated
# what each label means, pinned here: {lang: (words it must hold, words it must not)}; a swap of two labels fails
MEANING = {
    "series_induction_zero": {"en": (("induction", "zeroed"), ("mean", "sink")),
                             "ja": (("インダクション", "0 にする"), ("平均", "シンク"))},
    "series_induction_mean": {"en": (("induction", "mean"), ("zeroed", "sink")),
                             "ja": (("インダクション", "平均"), ("0 にする", "シンク"))},
    "series_sink_zero": {"en": (("sink", "zeroed"), ("induction", "mean")),
                        "ja": (("シンク", "0 にする"), ("インダクション", "平均"))},
    "series_random": {"en": (("random", "zeroed"), ("mean",)),
                     "ja": (("ランダム", "0 にする"), ("平均",))},
    "level_clean": {"en": (("every head on",), ("first",)),
                   "ja": (("すべてのヘッドが動いて",), ("1 回目",))},
    "level_first": {"en": (("first copy",), ("every head",)),
                   "ja": (("1 回目",), ("すべて",))},
    "kind_zero": {"en": (("zeroed",), ("mean",)),
                 "ja": (("0 に",), ("平均",))},
    "kind_mean": {"en": (("mean",), ("zero",)),
                 "ja": (("平均",), ("0 に",))},
    "comp_clean": {"en": (("as it is",), ("off", "removed")),
                  "ja": (("そのまま",), ("止め", "取り除"))},
    "comp_off": {"en": (("off",), ("removed",)),
                "ja": (("止め",), ("取り除",))},
    "comp_keys": {"en": (("keys",), ("queries",)),
                 "ja": (("キー",), ("クエリ",))},
    "comp_queries": {"en": (("queries",), ("keys",)),
                    "ja": (("クエリ",), ("キー",))},
    "lens_yours": {"en": (("your prompt",), ("untrained", "held-out")),
                  "ja": (("このプロンプト",), ("未学習", "評価用"))},
    "lens_untrained": {"en": (("your prompt", "untrained"), ("held-out",)),
                      "ja": (("このプロンプト", "未学習"), ("評価用",))},
    "lens_held_median": {"en": (("held-out",), ("untrained",)),
                        "ja": (("評価用",), ("未学習",))},
    "lens_held_untrained": {"en": (("held-out", "untrained"), ()),
                           "ja": (("評価用", "未学習"), ())},
    "sink_all_heads": {"en": (("all heads",), ("sink",)),
                      "ja": (("すべてのヘッド",), ("シンク",))},
    "sink_sink_heads": {"en": (("sink heads",), ("all heads",)),
                       "ja": (("シンクヘッド",), ("すべて",))},
    "col_first_time": {"en": (("first",), ("second",)),
                      "ja": (("1 回目",), ("2 回目",))},
    "col_second_time": {"en": (("second", "every head on"), ("off",)),
                       "ja": (("2 回目", "すべて動いて"), ("止め",))},
    "col_second_off": {"en": (("second", "off"), ("every head",)),
                      "ja": (("2 回目", "止め"), ("すべて",))},
}
# every sentence that answers one of the page's questions (none may show before the learner answers)
ANSWER_SENTENCES = ("heads.off_numbers", "heads.off_high_draws", "heads.writers_numbers", "heads.own_loss",
                    "heads.own_band", "heads.comp_numbers", "heads.comp_direct", "heads.lens_numbers",
                    "heads.lens_held_out", "heads.sink_numbers", "heads.scatter_numbers", "heads.scatter_split",
                    "heads_referent.numbers", "heads_ordinary.numbers", "heads_ordinary.held_out",
                    "heads_ordinary.probability", "heads_ordinary.elsewhere")
REVEALED_CHARTS = ("heads_off_chart", "heads_comp_chart", "heads_referent_chart", "heads_lens_chart",
                   "heads_sink_chart", "heads_sink_scatter", "heads_text_arrows")


@functools.cache
def picking_trace():
    """A fresh recorded run of the picking set (not the page's)."""
    weights = smollm2.default_model()[0]
    return iv.run(weights, np.asarray(sets().picking, dtype=np.int64), rows=(), record=True).trace


@functools.cache
def mean_ablated_loss(heads: tuple) -> np.ndarray:
    """(S,) the scoring set's second-copy losses with each head's output replaced by its mean over the picking set,
    position by position (written out here from a fresh run of the picking set)."""
    from ui.heads import study

    weights, picking = smollm2.default_model()[0], picking_trace()
    writes = tuple(iv.HeadWrite(l, h, picking.heads[l, :, h].mean(axis=0)) for l, h in heads)
    return cs.ablated_losses(weights, study.BASE.result().scoring.trace, PERIOD, writes)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_each_label_means_what_it_says(lang):
    w = strings(lang)
    for key, words in MEANING.items():
        holds, lacks = words[lang]
        text = w[f"heads.{key}"].lower()
        assert all(word in text for word in holds) and not any(word in text for word in lacks), (key, text)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_nothing_answers_a_question_before_it_is_answered(lang, results):
    (shown, drawn, above), _ = opened(lang)
    assert [key for key in ANSWER_SENTENCES if find_sentences(shown, key, lang)] == []
    assert not set(drawn) & set(REVEALED_CHARTS), drawn
    assert list(above) == list(ANSWERS) and all(above.values())  # every question drawn, each below something
    for key in ANSWERS:  # and no answer sentence above any question (read as the locale writes it, fields and all)
        assert not [s for s in ANSWER_SENTENCES if find_sentences(above[key].split("\n"), s, lang)], key


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_switch_off_chart_draws_each_series_under_its_label(lang, results):
    base, band = results
    a = band.ablation
    w = strings(lang)
    dots, zero, mean, sinks = figure(answered(lang), "heads_off_chart")["data"][:4]
    assert dots["name"] == w["heads.series_random"].format(draws=a.random_zero.shape[1])
    assert (zero["name"], mean["name"], sinks["name"]) == (
        w["heads.series_induction_zero"], w["heads.series_induction_mean"], w["heads.series_sink_zero"])
    ranked, _ = picked()
    for row, k in enumerate(a.ks):  # the zeroed curve, through model.py's own pass
        assert decode_array(zero["y"])[row] == pytest.approx(second_copy_loss(tuple(ranked[:k])).mean(), abs=1e-3)
    drawn = decode_array(dots["y"]).reshape(len(a.ks), -1)
    row = a.ks.index(OWN_K)
    first_set = tuple(a.random_sets[row][0])  # the band's first random set: zeroed, through model.py's own pass
    assert drawn[row][0] == pytest.approx(second_copy_loss(first_set).mean(), abs=1e-3)
    assert not np.allclose(a.random_zero[row], a.random_mean[row])  # two bands: the page shows the zeroed one


def test_own_heads_are_mean_ablated_with_the_picking_sets_means(results):
    """The default (top 4, mean-ablated): the loss with each head's output replaced by its mean over the picking set
    (computed here from a fresh recorded run of the picking set), and the band it is set against the mean-ablated
    random draws."""
    base, band = results
    a = band.ablation
    at = answered("en")
    w = strings("en")
    shown = find_sentence(texts(at), "heads.own_loss", "en")
    ranked, _ = picked()
    heads = tuple(sorted(ranked[:OWN_K]))
    assert (int(shown["count"]), shown["kind"]) == (OWN_K, w["heads.kind_mean"])
    expected = mean_ablated_loss(heads)
    assert number(shown["loss"]) == pytest.approx(expected.mean(), abs=0.006)
    band_said = find_sentence(texts(at), "heads.own_band", "en")
    draws = a.random_mean[a.ks.index(OWN_K)]
    assert number(band_said["median"]) == pytest.approx(np.median(draws), abs=0.006)
    assert number(band_said["percentile"]) == pytest.approx(100 * np.mean(draws < expected.mean()), abs=0.5)
    zeroed = a.random_zero[a.ks.index(OWN_K)]
    assert abs(np.median(zeroed) - np.median(draws)) > 0.006  # (so a band read from the wrong kind shows)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_held_out_paragraphs_figure_is_the_studys(lang, results):
    """Lesson 10's sentence on the held-out paragraphs says the stored study's numbers for the picked head (the study
    itself is checked against loops over model.py's maps in tests/test_page_seam_heads_ordinary.py)."""
    from ui.shared.held_out_text import held_out_score

    ranked, _ = picked()
    score = held_out_score(ranked[0])
    shown = find_sentence(texts(answered(lang)), "heads_ordinary.held_out", lang)
    weight, low, high = score.mean
    assert shown["head"] == f"L{ranked[0][0]}H{ranked[0][1]}"
    assert (int(shown["paragraphs"]), int(shown["k"]), int(shown["tokens"])) == (
        score.paragraphs, score.top_count.k, score.top_count.n)
    assert [number(shown[k]) for k in ("weight", "low", "high")] == pytest.approx([weight, low, high], abs=0.006)
    assert number(shown["untrained"]) == pytest.approx(float(score.untrained.mean()), abs=6e-4)
    assert number(shown["uniform"]) == pytest.approx(float(score.uniform.mean()), abs=6e-4)
