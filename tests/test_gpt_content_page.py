"""AppTest: what lesson 9 says to a student, issue 33's content items: the default seed and how often each first token
is drawn over seeds, small probabilities never shown as 0, a prediction asked again for a new prompt, tokens that
cannot be confused with a separator, the made-up name's two different problems, the KV-cache timing measured again on
every press, and the page's CSV downloads (BOM, headers in the page's language, numbers against independent loops)."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

from attention_core import smollm2
from tests.apptest_utils import assert_clean, open_page, recorded_downloads
from tests.test_gpt_page import (
    DEFAULT_SEED, PROMPT, answer_all, custom, full_pass, ids_of, shown, softmax, strings)

pytestmark = pytest.mark.pages


def first_draw(probs, seed: int) -> int:
    """The generation server's first draw, from its documented rule: numpy's default_rng seeded with
    SeedSequence([seed, 0])'s first word, choice over the vocabulary with these probabilities."""
    word = int(np.random.SeedSequence([seed, 0]).generate_state(1)[0])
    return int(np.random.default_rng(word).choice(len(probs), p=probs))


def csv_of(at, files, key: str) -> tuple[bytes, pd.DataFrame]:
    data = {b.key: files[b.proto.url] for b in at.get("download_button")}[key]
    return data, pd.read_csv(io.StringIO(data.decode("utf-8-sig")), keep_default_na=False)


# --- the default seed --------------------------------------------------------------------------------------------


def test_the_default_seed_draws_the_likely_token_and_the_page_says_how_often_seeds_do():
    probs = softmax(full_pass(ids_of(PROMPT)).logits[-1])
    top = int(np.argmax(probs))
    assert first_draw(probs, DEFAULT_SEED) == top  # held: the first demo starts with " Paris" (77 %)
    assert first_draw(probs, 0) != top  # seed 0 drew a 0.7 % token: the reason the default moved
    count = sum(first_draw(probs, s) == top for s in range(100))
    at = answer_all(open_page("gpt", timeout=600))
    assert at.number_input(key="gpt_seed").value == DEFAULT_SEED
    at.slider(key="gpt_new_tokens").set_value(1).run()
    at.button(key="gpt_generate").click().run()
    assert_clean(at)
    line = [c for c in shown(at) if "Over the seeds 0–99" in c]
    assert len(line) == 1 and f"for {count} of 100 seeds" in line[0] and "·Paris" in line[0]
    assert f"the model gives it {probs[top] * 100:.1f} %" in line[0]


# --- small probabilities -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("p, text", [(4e-5, "0.004 %"), (0.0043, "0.43 %"), (0.7725, "77.2 %"), (1.2e-7, "1.2e-05 %"),
                                     (0.0, "0 %")])
def test_a_small_probability_is_never_shown_as_zero(p, text):
    from ui.gpt.page import percent

    assert percent(p) == text


def test_a_drawn_token_with_a_tiny_probability_keeps_its_digits_in_the_table(monkeypatch):
    files = recorded_downloads(monkeypatch)
    at = answer_all(open_page("gpt", timeout=600))
    at.slider(key="gpt_temperature").set_value(3.0).run()  # flat: most drawn tokens are far below 1 %
    at.slider(key="gpt_new_tokens").set_value(12).run()
    at.button(key="gpt_generate").click().run()
    assert_clean(at)
    _, table = csv_of(at, files, "gpt_gen_csv")
    page = [df.value for df in at.dataframe if "step" in df.value.columns][0]
    small = [i for i, p in enumerate(table["probability"]) if p < 1e-4]
    assert small, list(table["probability"])  # held at these settings: some token drawn below 0.01 %
    for i in small:
        assert page["probability"][i] != "0 %" and float(page["probability"][i].split()[0]) > 0


# --- predictions belong to their prompt --------------------------------------------------------------------------


@pytest.mark.parametrize("key, reveal", [("gpt_next_predict", "gpt_next_bars"), ("gpt_sink_predict", "gpt_sink_chart")])
def test_an_answer_does_not_carry_over_to_a_new_prompt(key, reveal):
    at = open_page("gpt", timeout=600)
    at.radio(key=key).set_value(1).run()
    assert any(el.proto.id.endswith("-" + reveal) for el in at.get("plotly_chart"))
    at.selectbox(key="gpt_preset").set_value("1").run()  # another prompt, never predicted on
    assert_clean(at)
    assert at.radio(key=key).value is None
    assert not any(el.proto.id.endswith("-" + reveal) for el in at.get("plotly_chart"))
    at.radio(key=key).set_value(1).run()  # answered for this prompt: revealed
    assert any(el.proto.id.endswith("-" + reveal) for el in at.get("plotly_chart"))


def test_the_leak_answer_is_asked_again_for_a_new_prompt():
    at = open_page("gpt", timeout=600)
    at.radio(key="gpt_leak_predict").set_value(1).run()
    assert len(at.get("vega_lite_chart")) == 1
    at.selectbox(key="gpt_preset").set_value("1").run()
    assert at.radio(key="gpt_leak_predict").value is None and at.get("vega_lite_chart") == []


# --- tokens in boxes ---------------------------------------------------------------------------------------------


def code_spans(markdown: str) -> list[str]:
    """CommonMark code spans: a run of n backticks, the content, the same run (one space each side stripped)."""
    spans = []
    for m in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", markdown):
        content = m.group(2)
        if content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        spans.append(content)
    return spans


@pytest.mark.parametrize("text", ["a | b || c |", "x ` y `` z"])
def test_every_token_is_its_own_box_so_a_pipe_token_is_not_a_separator(text):
    at = custom(text)
    assert_clean(at)
    tokenizer = smollm2.default_model()[1]
    ids = ids_of(text)
    expected = [tokenizer.decode([i]).replace(" ", "·") for i in ids]
    line = [c for c in shown(at) if f"reads {len(ids)} tokens" in c]
    assert len(line) == 1 and code_spans(line[0].split("): ", 1)[1]) == expected


# --- the made-up name --------------------------------------------------------------------------------------------


def test_a_name_that_merges_with_the_text_gets_the_message_that_applies():
    at = answer_all(open_page("gpt", timeout=600))
    at.text_input(key="gpt_name").input("<script>").run()
    assert_clean(at)
    tokenizer = smollm2.default_model()[1]
    text = "My new neighbour is called <script>. This morning I said hello to <script>."
    assert "Ġ<" in tokenizer.token_strings(list(ids_of(" <script>"))) and ">." in tokenizer.token_strings(list(ids_of(text)))
    said = [w.value for w in at.warning]
    assert [w for w in said if w.startswith(strings("en")["copy_merged"].split("{")[0]) and "`>.`" in w]
    assert strings("en")["copy_one_token"] not in said
    at.text_input(key="gpt_name").input("Bob").run()  # one token
    assert len(ids_of(" Bob")) == 1 and strings("en")["copy_one_token"] in [w.value for w in at.warning]


# --- the KV cache: measured again on every press ---------------------------------------------------------------


def test_pressing_again_measures_again_and_says_when(monkeypatch):
    import ui.gpt.cache as cache

    calls = []
    real = cache._in_child

    def counting(jobs, *args, **kwargs):  # the lengths sent to the child process on each press
        calls.extend(len(ids) for ids, _ in jobs)
        return real(jobs, *args, **kwargs)

    monkeypatch.setattr(cache, "_in_child", counting)
    at = answer_all(open_page("gpt", timeout=600))
    n = len(ids_of(PROMPT))
    at.button(key="gpt_cache_measure").click().run()
    first = at.session_state["gpt_cache_timing"]["finished"]
    at.button(key="gpt_cache_measure").click().run()
    assert_clean(at)
    assert calls == [n, 200, n, 200]  # both lengths, timed again on the second press
    second = at.session_state["gpt_cache_timing"]["finished"]
    assert second > first
    import time

    when = time.strftime("%H:%M:%S", time.gmtime(second))
    assert [m for m in shown(at) if f"at {when} UTC" in m and "200 tokens" in m]


# --- the CSV downloads -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_lesson_9_offers_its_tables_as_csv_with_a_bom_and_headers_in_the_pages_language(lang, monkeypatch):
    files = recorded_downloads(monkeypatch)
    at = answer_all(open_page("gpt", lang, timeout=600))
    at.slider(key="gpt_new_tokens").set_value(3).run()
    at.button(key="gpt_generate").click().run()
    assert_clean(at)
    s = strings(lang)
    data, top = csv_of(at, files, "gpt_next_csv")
    assert data.startswith(b"\xef\xbb\xbf")
    assert list(top.columns) == [s["col_rank"], s["col_token"], s["col_id"], s["model_probs"], s["knob_probs"]]
    probs = softmax(full_pass(ids_of(PROMPT)).logits[-1])
    order = np.argsort(-probs)[:10]
    assert list(top[s["col_id"]]) == [int(i) for i in order]
    # the page's pass is the server's (batched prompts, a KV cache): float32 sums in another order, 2e-6 apart on CI
    np.testing.assert_allclose(top[s["model_probs"]], probs[order], rtol=2e-5, atol=1e-6)
    data, made = csv_of(at, files, "gpt_gen_csv")
    assert data.startswith(b"\xef\xbb\xbf") and list(made.columns) == [s["col_step"], s["col_token"], s["col_id"],
                                                                       s["probability"]]
    assert list(made[s["col_step"]]) == [1, 2, 3]
    data, per_head = csv_of(at, files, "gpt_heads_csv")
    assert data.startswith(b"\xef\xbb\xbf") and len(per_head) == 270
    sink, previous = s["col_sink"], s["col_previous"]
    assert list(per_head.columns) == [s["col_layer"], s["col_head"], s["col_induction"].format(sequences=8), sink,
                                      previous]
    attention = full_pass(ids_of(PROMPT)).attention
    n = attention.shape[-1]
    for layer, head in [(0, 0), (16, 0), (18, 6), (29, 8)]:
        row = per_head[(per_head[s["col_layer"]] == layer) & (per_head[s["col_head"]] == head)].iloc[0]
        assert row[sink] == pytest.approx(np.mean([attention[layer, head, i, 0] for i in range(1, n)]), abs=1e-6)
        assert row[previous] == pytest.approx(np.mean([attention[layer, head, i, i - 1] for i in range(1, n)]), abs=1e-6)
