""""What heads do" at its defaults, as shown, against computations made here another way: the losses with heads
switched off through model.py's own pass (model.run's ablate, every logit, heads.copy_losses), the induction and
previous-token heads picked from lesson 9's forward_many maps, the induction head's score with the previous-token
head off from model.run's maps, the lens from the float64 reference forward (tests/reference_gpt.py, its residual
streams recorded), the sink's weight from smollm2.forward's maps. Each qualitative sentence is held at the defaults."""

from __future__ import annotations

import functools
import tomllib

import numpy as np
import pytest

from attention_core.blas import single_blas_thread
from attention_core.smollm2 import weights as gpt_weights
from tests.apptest_utils import assert_clean, decode_array, open_page
from tests.seam import LOCALES, figure, find_sentence, find_sentences, number, strings, texts
from tests.test_predictions import shown_before

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


@functools.lru_cache(maxsize=None)  # (several tests ask for the same heads: one pass each per process)
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
def opened(lang: str):
    """The page opened once per language: (what it showed before any answer, each question's text above it, the
    page with every question answered). The tests below only read it (each opened it again before: about 8 s of the
    fast loop each)."""
    at = open_page("heads", lang)
    assert_clean(at)
    before = (texts(at), charts(at), {key: shown_before(at, key) for key in ANSWERS})
    return before, answer_all(at)


def answered(lang: str):
    return opened(lang)[1]


def charts(at) -> list[str]:
    return [el.proto.id.split("-", 2)[-1] for el in at.get("plotly_chart")]


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


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_what_the_high_random_sets_hold_as_shown(lang, results):
    """The sets that land high are counted from the band as drawn (a loop here over the figure's dots and the band's
    sets): mostly not sets holding an induction head, which is why the page no longer says they are."""
    base, band = results
    a = band.ablation
    at = answered(lang)
    shown = find_sentence(texts(at), "heads.off_high_draws", lang)
    draws = decode_array(figure(at, "heads_off_chart")["data"][0]["y"]).reshape(len(a.ks), -1)
    ranked, previous_scores = picked()
    layer = base.composition.induction_head[0]
    previous = divmod(int(np.argmax(previous_scores[:layer].ravel())), 9)
    assert shown["head"] == f"L{previous[0]}H{previous[1]}"
    counts = {"previous": 0, "induction": 0, "early": 0, "other": 0}
    for row in range(len(a.ks)):
        for d in np.flatnonzero(draws[row] >= np.quantile(draws[row], 0.95)):
            costs = {h: band.single[h] for h in a.random_sets[row][d]}
            top = max(costs, key=costs.get)
            counts["previous" if top == previous else "induction" if top in ranked[:K] else
                   "early" if top[0] < 2 else "other"] += 1
    assert {key: int(shown[key]) for key in counts} == counts and int(shown["n"]) == sum(counts.values())
    assert counts["induction"] < sum(counts.values()) / 2  # the claim: high draws mostly hold no induction head


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_why_the_key_side_hurts_more_is_said(lang, results):
    at = answered(lang)
    bars = decode_array(figure(at, "heads_comp_chart")["data"][0]["y"])
    shown = find_sentence(texts(at), "heads.comp_direct", lang)
    assert number(shown["keys"]) == pytest.approx(bars[2], abs=0.006)
    assert number(shown["off"]) == pytest.approx(bars[1], abs=0.006)
    assert bars[2] < bars[1]  # the sentence's premise at the defaults: keys only hurts more than switching off


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_sink_said_as_measured_and_each_count_labelled(lang, results):
    base, band = results
    at = answered(lang)
    w = strings(lang)
    shown = find_sentence(texts(at), "heads.sink_numbers", lang)
    assert shown["moved"] == shown["share"]  # hiding position 0 moves its share of the weight elsewhere
    assert number(shown["first"]) > number(shown["second"]) > 0  # as measured: it costs more than the second token
    with (LOCALES / lang / "heads.toml").open("rb") as fh:
        why = tomllib.load(fh)["sink"]["predict_why"]  # (a question's texts are a table: strings() skips tables)
    assert "short vector" not in why and "短いバリュー" not in why
    scatter = find_sentence(texts(at), "heads.scatter_numbers", lang)
    sentences = int(shown["sink_heads"])
    repeated = int((base.scoring.sink.mean(axis=0) > 0.5).sum())
    assert int(scatter["sentence_sinks"]) == sentences and int(scatter["sink_heads"]) == repeated
    assert sentences != repeated  # two counts: each sentence says which texts it counts on
    bars = figure(at, "heads_sink_chart")["data"]
    assert bars[1]["name"] == w["heads.sink_sink_heads"].format(n=sentences)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_induction_heads_against_the_rest_as_shown(lang, results):
    """The comparison that answers "do induction heads matter more": counts, medians and a permutation baseline,
    against numpy here (the scatter's effects, the scoring set's induction scores)."""
    base, band = results
    at = answered(lang)
    shown = find_sentence(texts(at), "heads.scatter_split", lang)
    induction = base.scoring.induction.mean(axis=0).ravel()
    effect = band.single.ravel()
    strong = induction > number(shown["threshold"])
    assert (int(shown["strong"]), int(shown["rest"])) == (strong.sum(), (~strong).sum())
    assert number(shown["strong_median"]) == pytest.approx(np.median(effect[strong]), abs=6e-4)
    assert number(shown["rest_median"]) == pytest.approx(np.median(effect[~strong]), abs=6e-4)
    rng = np.random.default_rng(11)
    null = []
    for _ in range(500):
        p = rng.permutation(strong)
        null.append(np.median(effect[p]) - np.median(effect[~p]))
    difference = np.median(effect[strong]) - np.median(effect[~strong])
    assert difference > np.quantile(null, 0.99) and number(shown["p"]) < 0.01  # the claim: far beyond shuffles


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_which_heads_write_the_copied_token_as_shown(lang, results):
    """The copied token's logit shown is model.py's own (every logit of its pass); the shown terms add up to it; the
    head needed most when zeroed alone writes little of it directly (the sentence's claim at the defaults)."""
    base, band = results
    at = answered(lang)
    shown = find_sentence(texts(at), "heads.writers_numbers", lang)
    weights = smollm2.default_model()[0]
    copied = []
    for ids in sets().scoring:
        cache = gpt_model.KVCache(weights.config, capacity=len(ids))
        logits, _ = gpt_model.run(weights, [cache], [[int(i) for i in ids]], all_logits=True)
        logits = np.asarray(logits).reshape(len(ids), -1)
        copied += [float(logits[p, ids[p + 1]]) for p in range(PERIOD, 2 * PERIOD - 1)]
    assert int(shown["rows"]) == len(copied)
    assert number(shown["logit"]) == pytest.approx(np.mean(copied), abs=0.02)
    parts = number(shown["heads_sum"]) + number(shown["mlps"]) + number(shown["embedding"])
    assert parts == pytest.approx(number(shown["logit"]), abs=0.02)  # the identity, as shown (rounded terms)
    layer, head = (int(x) for x in shown["needed"][1:].split("H"))
    assert band.single[layer, head] == max(band.single[h] for h in band.ablation.induction_heads[:K])
    writers = [number(part.rsplit("(", 1)[1].rstrip(")（）")) for part in
               shown["writers"].split("、" if lang == "ja" else "), ")]
    assert abs(number(shown["term"])) < 0.25 * max(writers)  # needed most, yet writes little directly
