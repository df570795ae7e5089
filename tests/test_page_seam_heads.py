""""What heads do" at its defaults, as shown, against computations made here another way: the losses with heads
switched off through model.py's own pass (model.run's ablate, every logit, heads.copy_losses), the induction and
previous-token heads picked from lesson 9's forward_many maps, the induction head's score with the previous-token
head off from model.run's maps, the lens from the float64 reference forward (tests/reference_gpt.py, its residual
streams recorded), the sink's weight from smollm2.forward's maps. Each qualitative sentence is held at the defaults."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from attention_core.blas import single_blas_thread
from attention_core.smollm2 import weights as gpt_weights
from tests.apptest_utils import assert_clean, decode_array, open_page
from tests.seam import figure, find_sentence, number, strings, texts

try:
    gpt_weights.gguf_path()
except gpt_weights.GPTUnavailable as missing:
    pytest.skip(f"the model package is absent: {missing}", allow_module_level=True)

from attention_core import smollm2  # noqa: E402
from attention_core.gpt_studies import heads  # noqa: E402
from attention_core.smollm2 import model as gpt_model  # noqa: E402
from tests import reference_gpt  # noqa: E402

PERIOD, SEQUENCES, K = 20, 8, 8
ANSWERS = {"heads_off_predict": 3, "heads_comp_predict": 3, "heads_referent_predict": 3, "heads_lens_predict": 3,
           "heads_sink_predict": 2, "heads_text_predict": 2}  # the right answers at the defaults, in the page's order


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    with single_blas_thread():
        yield


@pytest.fixture(scope="module")
def results():
    """The start-up work, waited for (read from disk after the machine's first server computed it)."""
    from ui.heads import study

    return study.BASE.result(), study.BAND.result()


@functools.lru_cache(maxsize=None)
def sets():
    return heads.induction_sets(SEQUENCES, PERIOD)


def second_copy_loss(ablate=()) -> np.ndarray:
    """The scoring set's second-copy loss per sequence through model.py's pass (not interventions.py)."""
    weights = smollm2.default_model()[0]
    out = []
    for ids in sets().scoring:
        cache = gpt_model.KVCache(weights.config, capacity=len(ids))
        logits, _ = gpt_model.run(weights, [cache], [[int(i) for i in ids]], all_logits=True, ablate=ablate)
        out.append(heads.copy_losses(heads.token_losses(logits, ids), PERIOD)[1])
    return np.array(out)


@functools.lru_cache(maxsize=None)
def picked():
    """Top induction heads and the best previous-token head, from lesson 9's forward_many maps of the picking set."""
    weights = smollm2.default_model()[0]
    maps = np.stack([o.attention for o in smollm2.forward_many(weights, [list(map(int, s)) for s in sets().picking])])
    induction = heads.induction_score(maps, PERIOD).mean(axis=0)
    order = np.argsort(-induction.ravel(), kind="stable")
    return [divmod(int(i), 9) for i in order], heads.previous_token_score(maps).mean(axis=0)


def answer_all(at):
    for key, value in ANSWERS.items():
        at.radio(key=key).set_value(value).run()
    assert_clean(at)
    return at


@functools.lru_cache(maxsize=None)
def answered(lang: str):
    """The page with every question answered, opened once per language: the tests below only read it (each opened
    it again before: about 8 s of the fast loop each)."""
    return answer_all(open_page("heads", lang))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_switching_off_as_shown(lang, results):
    base, band = results
    at = answered(lang)
    ranked, _ = picked()
    shown = find_sentence(texts(at), "heads.off_numbers", lang)
    sep = "、" if lang == "ja" else ", "
    assert shown["heads"].split(sep) == [f"L{l}H{h}" for l, h in ranked[:K]]  # picked on the picking set
    top = second_copy_loss(tuple(ranked[:K]))
    clean = second_copy_loss()
    assert number(shown["loss"]) == pytest.approx(top.mean(), abs=0.006)
    assert number(shown["clean"]) == pytest.approx(clean.mean(), abs=0.006)
    assert (int(shown["rose"]), int(shown["sequences"])) == (int((top > clean).sum()), SEQUENCES)
    fig = figure(at, "heads_off_chart")
    dots, zero, mean, sinks = fig["data"][:4]
    draws = decode_array(dots["y"]).reshape(4, -1)
    assert draws.shape[1] == int(shown["draws"])
    assert number(shown["median"]) == pytest.approx(np.median(draws[3]), abs=0.006)
    assert number(shown["percentile"]) == pytest.approx(100 * np.mean(draws[3] < top.mean()), abs=0.5)
    assert decode_array(zero["y"])[3] == pytest.approx(top.mean(), abs=1e-3)
    # the claims at the defaults: switching off 8 induction heads takes the loss more than halfway to the first copy,
    # above every random set of 8's 95th percentile; mean-ablation (the gentler control) moves it less at every k
    first = number(shown["first"])
    assert top.mean() > clean.mean() + 0.5 * (first - clean.mean()) and top.mean() > np.quantile(draws[3], 0.95)
    assert np.all(decode_array(mean["y"]) < decode_array(zero["y"]))
    assert np.all(decode_array(sinks["y"]) < np.quantile(draws, 0.95, axis=1))  # the sink heads: within the random band


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_composition_as_shown(lang, results):
    base, _ = results
    at = answered(lang)
    _, previous_scores = picked()
    comp = base.composition
    layer, head = comp.induction_head
    assert comp.previous_head == divmod(int(np.argmax(previous_scores[:layer].ravel())), 9)
    weights = smollm2.default_model()[0]
    ids = [[int(i) for i in s] for s in sets().scoring]
    clean = heads.induction_score(np.stack([o.attention for o in smollm2.forward_many(weights, ids)])[:, layer, head],
                                  PERIOD)
    off = []
    for seq in ids:
        _, maps = gpt_model.run(weights, [gpt_model.KVCache(weights.config, len(seq))], [seq], keep_maps=True,
                                ablate=(comp.previous_head,))
        off.append(heads.induction_score(maps[0][layer, head], PERIOD))
    bars = decode_array(figure(at, "heads_comp_chart")["data"][0]["y"])
    assert bars[0] == pytest.approx(clean.mean(), abs=1e-3) and bars[1] == pytest.approx(np.mean(off), abs=1e-3)
    shown = find_sentence(texts(at), "heads.comp_numbers", lang)
    assert number(shown["clean"]) == pytest.approx(clean.mean(), abs=0.006)
    # the claim: the keys need the previous-token head (under a quarter left), the queries barely (three quarters
    # kept), and no other earlier head switched off alone brings the score as low
    keys, queries = bars[2], bars[3]
    assert keys < 0.25 * bars[0] and queries > 0.75 * bars[0]
    assert int(shown["below"]) == 0 and number(shown["lowest"]) > bars[1]


def lens_ranks(text: str) -> np.ndarray:
    """The rank of the final answer per layer, from the float64 reference's recorded residual streams."""
    tensors = reference_gpt.GGUFTensors(smollm2.gguf_path())
    ids = smollm2.default_model()[1].encode(text)
    record = {}
    reference_gpt.forward(tensors, ids, record=record)
    embedding, gain = tensors["token_embd.weight"], tensors["output_norm.weight"]
    rows = np.stack([r[-1] for r in record["resid"]])
    lens = (rows / np.sqrt(np.mean(rows ** 2, axis=1, keepdims=True) + 1e-5) * gain) @ embedding.T
    answer = int(np.argmax(lens[-1]))
    return (lens > lens[:, [answer]]).sum(axis=1)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_lens_as_shown(lang, results):
    base, _ = results
    at = answered(lang)
    traces = figure(at, "heads_lens_chart")["data"]
    assert traces[0]["name"] == strings(lang)["heads.lens_yours"]
    shown_ranks = decode_array(traces[0]["y"]) - 1
    expected = lens_ranks("The capital of France is")
    assert shown_ranks[-1] == expected[-1] == 0
    np.testing.assert_allclose(np.log10(shown_ranks + 1), np.log10(expected + 1), atol=0.05)
    shown = find_sentence(texts(at), "heads.lens_numbers", lang)
    first = int(shown["first"])
    assert first == int(np.flatnonzero(expected >= 10)[-1] + 1) and first >= 20  # late: the last third
    held = find_sentence(texts(at), "heads.lens_held_out", lang)
    late = [r.first_in_top() for r in base.trained]
    assert int(held["late"]) == sum(f >= 20 for f in late) >= 2 * len(late) // 3
    # "the others: frequent tokens the lens ranks high from the start"; "keeps its answer buried": at the middle
    # layer the trained model's median rank is far (10x) above the untrained copy's
    assert all(r.ranks[0] < 10 for r, f in zip(base.trained, late) if f < 20)
    assert number(held["middle_trained"]) > 10 * number(held["middle_untrained"])
    # "the middle layers mostly decode to punctuation and spaces": the lens's top token at layers 10-20
    tokenizer = smollm2.default_model()[1]
    middle = [tokenizer.decode([int(r.top[layer, 0])]) for r in base.trained for layer in range(10, 21)]
    assert np.mean([not any(ch.isalnum() for ch in tok) for tok in middle]) > 0.5


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_sink_as_shown(lang, results):
    base, band = results
    at = answered(lang)
    weights, tokenizer = smollm2.default_model()
    from ui.heads.study import texts as lesson_texts

    total, rows = 0.0, 0
    for text in lesson_texts().sink:
        maps = smollm2.forward(weights, tokenizer.encode(text)).attention
        total += float(maps[:, :, 1:, 0].sum())
        rows += maps.shape[2] - 1
    share = total / rows / 270
    bars = figure(at, "heads_sink_chart")["data"]
    assert decode_array(bars[0]["y"])[0] == pytest.approx(100 * share, abs=1e-3)
    shown = find_sentence(texts(at), "heads.sink_numbers", lang)
    assert number(shown["share"]) == pytest.approx(100 * share, abs=0.5)
    # the claims: the value vectors of position 0 are shorter, so its norm-weighted share falls; hiding it costs
    # about what hiding the second token does (between half and twice)
    assert number(shown["ratio"]) < 1 and number(shown["norm"]) < number(shown["weight"])
    first, second = number(shown["first"]), number(shown["second"])
    assert 0.5 * second <= first <= 2 * second


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_weight_against_effect_as_shown(lang, results):
    base, band = results
    at = answered(lang)
    points = figure(at, "heads_sink_scatter")["data"]
    weight = np.concatenate([decode_array(tr["x"]) for tr in points])
    effect = np.concatenate([decode_array(tr["y"]) for tr in points])
    assert len(weight) == 270
    np.testing.assert_allclose(np.sort(effect), np.sort(band.single.ravel()), atol=1e-9)
    ranked, _ = picked()
    one = second_copy_loss((ranked[0],)).mean() - second_copy_loss().mean()  # the best induction head alone
    assert band.single[ranked[0]] == pytest.approx(one, abs=2e-3)
    scatter = find_sentence(texts(at), "heads.scatter_numbers", lang)
    assert int(scatter["quiet"]) > int(scatter["sink_heads"]) // 2  # most sink heads do nothing here alone
    assert number(scatter["rho_i"]) > number(scatter["rho"])  # the induction weight tracks effect better
