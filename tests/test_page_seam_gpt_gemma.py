"""Lesson 9 read by Gemma 3 (issue 39 item 2), as shown, against computations made here: the prompt's tokens from
Gemma's tokenizer (the start token first), the next-token bars and the 72 maps against the separately written float64
Gemma (tests/reference_gemma.py, reading the GGUF through the `gguf` package), a generation's tokens against the text
run again in full at every step and sampled here, the leak test's zeros; a Japanese prompt read by SmolLM2 offers
Gemma and its button switches the page; with Gemma picked, the page says the later sections measure SmolLM2."""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pytest

from attention_core.gemma import weights as gemma_weights
from attention_core.smollm2 import weights as gpt_weights
from tests.apptest_utils import assert_clean, decode_array, open_page
from tests.seam import figure, find_sentence, number, strings, texts

try:
    gpt_weights.gguf_path()
    GGUF = gemma_weights.gguf_path()
except (gpt_weights.GPTUnavailable, gemma_weights.GemmaUnavailable) as missing:
    pytest.skip(f"a model package is absent: {missing}", allow_module_level=True)

from attention_core import gemma, smollm2  # noqa: E402
from attention_core.gpt.batching import step_seed  # noqa: E402
from tests import reference_gemma  # noqa: E402

PROMPT = "The capital of France is"  # the page's first preset
JAPANESE = "日本の首都は"
GEMMA = {"gpt_model": "gemma"}
MAP_TOKENS = 16  # the maps the page draws (ui/gpt/mask.py)


@functools.cache
def reference_pass(text: str) -> tuple[list[int], np.ndarray, np.ndarray]:
    """-> (Gemma's ids of the text, its last row of logits (V,), its maps (L, H, n, n)), float64."""
    ids = gemma.encode(text)
    logits, maps = reference_gemma.forward(reference_gemma.GGUFTensors(GGUF), ids, logit_rows=[len(ids) - 1])
    return ids, logits[-1], maps


def piece(token_id: int) -> str:
    """A Gemma token as the page shows it ('·' a space), from the tokenizer's vocabulary, not the page's helper."""
    tokenizer = gemma.default_model()[1]
    return tokenizer.tokens[token_id].replace("▁", "·").replace(" ", "·").replace("\n", "⏎")


def softmax(z, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()


def boxed(tokens) -> str:
    return " ".join(f"`{tok}`" for tok in tokens)


@functools.cache
def answered(lang: str):
    """Lesson 9 opened with Gemma picked (a link's ?gpt_model=gemma), the next-token and leak questions answered."""
    at = open_page("gpt", lang, query=GEMMA, timeout=600)
    for key in ("gpt_next_predict", "gpt_leak_predict"):
        at.radio(key=key).set_value(1).run()
    assert_clean(at)
    return at


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_gemma_reads_the_prompt_with_its_start_token_first(lang):
    at = answered(lang)
    assert at.radio(key="gpt_model").value == "gemma"
    ids = gemma.default_model()[1].encode(PROMPT)
    assert ids[0] == 2 and len(ids) == 6
    said = find_sentence([c.value for c in at.caption], "gpt.tokens_gemma", lang)
    assert int(said["n"]) == len(ids)
    assert said["tokens"] == boxed(["<bos>"] + [piece(i) for i in ids[1:]])
    w = strings(lang)
    card = find_sentence([i.value for i in at.info], "gpt.model_card_gemma", lang)
    assert (int(card["layers"]), int(card["heads"]), int(card["kv_heads"])) == (18, 4, 1)
    assert not find_sentences_of(at, "gpt.model_card", lang)  # SmolLM2's card is not shown
    rest = [i.value for i in at.info if i.value == w["gpt.rest_on_smollm2"]]
    assert len(rest) == 1  # the page says which model the later sections measure


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_next_token_bars_are_the_float64_gemmas_top_ten(lang):
    _, logits, _ = reference_pass(PROMPT)
    probs = softmax(logits)
    top = [int(i) for i in np.argsort(-probs, kind="stable")[:10]]
    w = strings(lang)
    bars = {tr["name"]: tr for tr in figure(answered(lang), "gpt_next_bars")["data"] if tr.get("name")}
    model, knobbed = bars[w["gpt.model_probs"]], bars[w["gpt.knob_probs"]]
    assert list(model["y"]) == [f"{k + 1}. {piece(i)}" for k, i in enumerate(top)]
    np.testing.assert_allclose(decode_array(model["x"]), 100 * probs[top], atol=0.05)  # percent; float32 vs 64
    np.testing.assert_allclose(decode_array(knobbed["x"]), 100 * probs[top], atol=0.05)
    said = find_sentence(texts(answered(lang)), "gpt.next_numbers", lang)
    assert said["token"].replace("\\", "") == piece(top[0])
    assert number(said["p"]) == pytest.approx(100 * probs[top[0]], abs=0.1)
    assert number(said["vocab"]) == 262144
    assert w["gpt.base_model_gemma"] in [c.value for c in answered(lang).caption]  # no chat numbers: a base model
    assert not find_sentences_of(answered(lang), "gpt.chat_numbers", lang)


def test_temperature_sharpens_gemmas_knobbed_bars_and_not_the_models():
    _, logits, _ = reference_pass(PROMPT)
    plain, sharp = softmax(logits), softmax(logits, 0.5)
    top = [int(i) for i in np.argsort(-plain, kind="stable")[:10]]
    at = open_page("gpt", "en", query=GEMMA, timeout=600)
    at.radio(key="gpt_next_predict").set_value(1).run()
    at.slider(key="gpt_temperature").set_value(0.5).run()
    assert_clean(at)
    w = strings("en")
    bars = {tr["name"]: tr for tr in figure(at, "gpt_next_bars")["data"] if tr.get("name")}
    np.testing.assert_allclose(decode_array(bars[w["gpt.model_probs"]]["x"]), 100 * plain[top], atol=0.05)
    np.testing.assert_allclose(decode_array(bars[w["gpt.knob_probs"]]["x"]), 100 * sharp[top], atol=0.05)
    said = find_sentence(texts(at), "gpt.next_numbers", "en")
    assert number(said["p_knobbed"]) == pytest.approx(100 * sharp[top[0]], abs=0.1)


def find_sentences_of(at, key: str, lang: str) -> list:
    from tests.seam import find_sentences

    return find_sentences(texts(at), key, lang)


def shown_maps(at) -> np.ndarray:
    """The model view's weights as the page sent them: (18, 4, m, m), decoded from its one uint16 column."""
    (chart,) = at.get("vega_lite_chart")
    table = pa.ipc.open_stream(chart.proto.data.data).read_all()
    fixed = np.asarray(table.column(0).to_numpy(), dtype=np.float64) / 65535
    m = round((fixed.size / 72) ** 0.5)
    return fixed.reshape(18, 4, m, m)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_72_maps_are_the_float64_gemmas_and_nothing_leaks(lang):
    ids, _, maps = reference_pass(PROMPT)
    at = answered(lang)
    shown = shown_maps(at)
    m = min(len(ids), MAP_TOKENS)
    assert shown.shape == (18, 4, m, m)
    np.testing.assert_allclose(shown, maps[..., :m, :m], atol=2e-5)  # fixed point (1/131070) and float32
    said = find_sentence(texts(at), "gpt.zeros", lang)
    cells = 72 * len(ids) * (len(ids) - 1) // 2
    assert (number(said["cells"]), number(said["zeros"]), int(said["maps"])) == (cells, cells, 72)
    leak = find_sentence(texts(at), "gpt.leak_numbers", lang)
    zero = strings(lang)["gpt.exactly_zero"]
    assert leak["attention"].strip("*") == zero and leak["logits"].strip("*") == zero
    assert int(leak["position"]) == len(ids) and int(leak["maps"]) == 72


def test_a_generation_by_gemma_lists_each_token_drawn_with_its_probability():
    """Generate at the defaults (seed 1, T = 1) for 5 tokens: each token is the one the text run again in full gives,
    drawn here with NumPy's generator seeded as the server's step_seed, and its probability is that draw's."""
    at = open_page("gpt", "en", query=GEMMA, timeout=600)
    at.radio(key="gpt_next_predict").set_value(1).run()
    at.slider(key="gpt_new_tokens").set_value(5).run()
    at.button(key="gpt_generate").click().run()
    assert_clean(at)
    weights = gemma.default_model()[0]
    ids, expected = list(gemma.encode(PROMPT)), []
    for step in range(5):
        p = softmax(gemma.forward(weights, ids, all_logits=False).logits[-1])
        token = int(np.random.default_rng(step_seed(1, step)).choice(p.size, p=p))
        expected.append((piece(token), p[token]))
        ids.append(token)
        if token == 1:  # <eos>
            break
    (table,) = [df for df in (el.value for el in at.dataframe) if "token" in df.columns]
    assert list(table["token"]) == [tok for tok, _ in expected]
    for shown, (_, p) in zip(table["probability"], expected):
        assert number(shown) == pytest.approx(100 * p, rel=0.06, abs=0.006)  # written to 2 significant digits


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_japanese_prompt_read_by_smollm2_offers_gemma_and_the_button_reads_it_with_gemma(lang):
    at = open_page("gpt", lang, query={"gpt_preset": "custom"}, timeout=600)
    at.text_input(key="gpt_text").input(JAPANESE).run()
    assert at.radio(key="gpt_model").value == "smollm2"
    at.button(key="gpt_read_with_gemma").click().run()
    assert_clean(at)
    assert at.radio(key="gpt_model").value == "gemma"
    ids = gemma.default_model()[1].encode(JAPANESE)
    said = find_sentence([c.value for c in at.caption], "gpt.tokens_gemma", lang)
    assert said["tokens"] == boxed(["<bos>"] + [piece(i) for i in ids[1:]])
    theirs = smollm2.default_model()[1].encode(JAPANESE)
    side = find_sentence([i.value for i in at.info], "gpt.ja_prompt_gemma", lang)
    assert (int(side["m"].strip("*")), int(side["n"].strip("*"))) == (len(ids) - 1, len(theirs))
    assert int(side["chars"]) == len(JAPANESE) and int(side["pieces"]) > len(theirs) // 2
    assert len(ids) - 1 < len(theirs) // 2  # Gemma reads it in fewer than half SmolLM2's tokens


@pytest.mark.parametrize("text", ["   ", "🙂🙂 <b>bold</b> & <script>x</script>", "word " * 2000, "𠮷野家の牛丼"])
def test_hostile_prompts_on_gemma_get_a_message_never_a_traceback(text):
    at = open_page("gpt", "en", query={**GEMMA, "gpt_preset": "custom"}, timeout=600)
    at.text_input(key="gpt_text").input(text).run()
    assert_clean(at)
    w = strings("en")
    if not text.strip():
        assert w["gpt.empty"] in [el.value for el in at.warning]
        return
    if len(text) > 1000:
        assert any(f"{len(text):,}" in el.value and "500" in el.value for el in at.toast)  # the paste is cut, said
    at.radio(key="gpt_next_predict").set_value(1).run()
    assert_clean(at)
    said = find_sentence([c.value for c in at.caption], "gpt.tokens_gemma", "en")
    assert 2 <= int(said["n"]) <= 40 and said["tokens"].startswith("`<bos>`")
    if len(text) > 1000:
        assert any(w["gpt.cut"][:10] in el.value for el in at.warning)


@functools.cache
def gemma_induction_by_loops() -> dict:
    """Gemma on the two sets of repeated random sequences (each read after the start token, by gemma.forward, one
    sequence a pass): each head's induction score by a loop over the second copy's rows, the head picked on the
    picking set and its mean on the scoring set, the scoring set's copy losses by a loop over log-softmax rows."""
    from attention_core.gemma.tokenizer import NORMAL_IDS
    from attention_core.gpt_studies import heads  # (only the study's input sequences are taken from here)

    sets = heads.induction_sets(count=8, length=20, low=NORMAL_IDS.start, high=NORMAL_IDS.stop)
    weights, period = gemma.default_model()[0], sets.period

    def measure(seq):
        out = gemma.forward(weights, [2] + [int(i) for i in seq])
        score = np.zeros(out.attention.shape[:2])
        for j in range(period):  # the query at the second copy's j-th token, the target after its first occurrence
            score += out.attention[:, :, 1 + period + j, 1 + j + 1]
        logits = out.logits.astype(np.float64)
        losses = []
        for i in range(1, 2 * period):  # row i (the i-th token of the sequence) predicts token i + 1
            row = logits[i]
            losses.append(np.log(np.exp(row - row.max()).sum()) + row.max() - row[int(seq[i])])
        first, second = np.mean(losses[:period - 1]), np.mean(losses[period:2 * period - 1])
        return score / period, first, second

    picking = [measure(seq)[0] for seq in sets.picking]
    scoring = [measure(seq) for seq in sets.scoring]
    head = np.unravel_index(np.argmax(np.mean(picking, axis=0)), picking[0].shape)
    scores = np.mean([s for s, _, _ in scoring], axis=0)
    return {"head": (int(head[0]), int(head[1])), "score": float(scores[head]), "strong": int((scores > 0.3).sum()),
            "first": float(np.mean([f for _, f, _ in scoring])), "second": float(np.mean([s for _, _, s in scoring]))}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_gemmas_induction_head_is_picked_on_one_set_and_scored_on_the_other(lang):
    at = open_page("gpt", lang, query=GEMMA, timeout=600)
    at.radio(key="gpt_induction_predict").set_value(1).run()
    assert_clean(at)
    want = gemma_induction_by_loops()
    said = find_sentence(texts(at), "gpt.induction_numbers", lang)
    assert said["head"].strip("*") == "L{}H{}".format(*want["head"])
    assert number(said["score"]) == pytest.approx(want["score"], abs=0.006)
    assert int(said["strong"]) == want["strong"] and int(said["heads"]) == 72
    loss = find_sentence(texts(at), "gpt.loss_numbers", lang)
    assert number(loss["first"]) == pytest.approx(want["first"], abs=0.06)
    assert number(loss["second"]) == pytest.approx(want["second"], abs=0.06)
    w = strings(lang)
    bars = {tr["name"]: tr for tr in figure(at, "gpt_loss_bars")["data"] if tr.get("name")}
    np.testing.assert_allclose(decode_array(bars[w["gpt.trained"]]["y"]), [want["first"], want["second"]], atol=0.01)
    assert want["second"] < want["first"] / 2  # the claim the question's answer key holds at the defaults
    assert w["gpt.induction_limits_gemma"].split("{")[0] in " ".join(c.value for c in at.caption)
    assert "gpt_name" not in [box.key for box in at.text_input]  # the made-up name is SmolLM2's section


def test_switching_model_asks_the_induction_question_again():
    at = open_page("gpt", "en", timeout=600)
    at.radio(key="gpt_induction_predict").set_value(1).run()
    assert find_sentences_of(at, "gpt.induction_numbers", "en")
    at.radio(key="gpt_model").set_value("gemma").run()
    assert_clean(at)
    assert at.radio(key="gpt_induction_predict").value is None
    assert not find_sentences_of(at, "gpt.induction_numbers", "en")


def first_token_share(maps) -> float:
    """The mean over every head and every row but the first of the weight on position 0, by a loop over rows."""
    maps = np.asarray(maps, dtype=np.float64)
    return float(np.mean([maps[:, :, i, 0] for i in range(1, maps.shape[-1])]))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_gemmas_sink_is_its_start_token_against_the_untrained_copy_and_a_random_first_token(lang):
    from attention_core.gemma.weights import untrained_weights

    ids, _, maps = reference_pass(PROMPT)
    share = first_token_share(maps)
    weights = gemma.default_model()[0]
    untrained = first_token_share(gemma.forward(untrained_weights(weights.config, 0), ids).attention)
    rng = np.random.default_rng(0)  # the control's rule: a seeded random normal token in the start token's place
    token = int(rng.integers(494, 255968))
    while token == ids[0]:
        token = int(rng.integers(494, 255968))
    swapped = first_token_share(gemma.forward(weights, [token] + ids[1:]).attention)
    at = open_page("gpt", lang, query=GEMMA, timeout=600)
    at.radio(key="gpt_sink_predict").set_value(1).run()
    assert_clean(at)
    said = find_sentence(texts(at), "gpt.sink_numbers", lang)
    assert number(said["share"]) == pytest.approx(100 * share, abs=0.6)
    assert number(said["untrained"]) == pytest.approx(100 * untrained, abs=0.6)
    assert said["token"].replace("\\", "") == "<bos>"
    assert swapped < share / 2  # the claim the page makes at the defaults: the sink goes with the start token
    control = find_sentence(texts(at), "gpt.sink_random_first_gemma_gone", lang)
    assert control["token"].replace("\\", "") == piece(token)
    assert number(control["share"]) == pytest.approx(100 * swapped, abs=0.6)
    assert number(control["original"]) == pytest.approx(100 * share, abs=0.6)
    w = strings(lang)
    traces = {tr["name"]: tr for tr in figure(at, "gpt_sink_chart")["data"] if tr.get("name")}
    per_layer = np.asarray(maps, dtype=np.float64)[:, :, 1:, 0].mean(axis=(1, 2))
    np.testing.assert_allclose(decode_array(traces[w["gpt.trained"]]["y"]), 100 * per_layer, atol=0.01)  # percent


def test_gemmas_kv_cache_in_numbers_and_its_sliding_window():
    """Gemma's cache at the defaults from its sizes, written out here: 2 x 18 layers x 1 key/value head x 256 numbers
    x 4 bytes a token; at 32,768 tokens against its float32 weights; the 15 local layers keeping only 512 tokens."""
    at = open_page("gpt", "en", query=GEMMA, timeout=600)
    at.radio(key="gpt_cache_predict").set_value(1).run()
    assert_clean(at)
    per_token = 2 * 18 * 1 * 256 * 4
    n = len(gemma.encode(PROMPT))
    size = find_sentence(texts(at), "gpt.cache_size", "en")
    assert size["per_token"] == f"{per_token / 1e3:.1f} kB" and size["size"].strip("*") == f"{n * per_token / 1e3:.1f} kB"
    assert size["full"] == f"{4 * per_token / 1e3:.1f} kB" and int(size["kv"]) == 1 and int(size["layers"]) == 18
    params = sum(int(a.size) for a in vars(gemma.default_model()[0]).values() if isinstance(a, np.ndarray))
    full = per_token * 32768
    context = find_sentence(texts(at), "gpt.cache_context", "en")
    assert context["size"].strip("*") == f"{full / 1e6:,.0f} MB" and context["context"] == "32,768"
    assert number(context["share"]) == pytest.approx(100 * full / (4 * params), abs=0.5)
    kept = sum(32768 if layer in (5, 11, 17) else 512 for layer in range(18)) * per_token // 18
    window = find_sentence(texts(at), "gpt.cache_window_gemma", "en")
    assert window["size"].strip("*") == f"{kept / 1e6:,.0f} MB" and number(window["share"]) == round(100 * kept / full)
    assert full > 4 * params  # the question's answer at the defaults: more than half the weights (more than all)
