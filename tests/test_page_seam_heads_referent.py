""""What heads do", section "Does the model decide 'it' at all?", at its defaults, as shown, against computations
made here another way: the model's answers after every held-out word through model.py's own pass (forward_many,
not interventions.py), the texts read from data/*.toml with tomllib, the counts' Wilson intervals written out, and
the patches (the top head at the last position, one residual state) through the float64 reference forward
(tests/reference_gpt.py, its head and residual overrides). Each qualitative sentence is held at the defaults."""

from __future__ import annotations

import functools
import math
import tomllib
from pathlib import Path

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
from tests import reference_gpt  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"
KEY = "heads_referent_predict"


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    with single_blas_thread():
        yield


@pytest.fixture(scope="module")
def ready():
    """The section's start-up work, waited for (read from disk after the machine's first server computed it)."""
    from ui.heads import referent, study

    study.BASE.result()
    referent.REFERENT.result()


@functools.lru_cache(maxsize=None)
def data() -> dict:
    """The sentence, nouns, words and questions, read from the data files here (not through the page's parsing)."""
    with open(DATA / "gpt.toml", "rb") as fh:
        pair = tomllib.load(fh)["minimal_pair"]
    with open(DATA / "heads.toml", "rb") as fh:
        held = tomllib.load(fh)["referent"]
    last = pair["text"].split()[-1]
    return {"stem": pair["text"][: -len(last)], "nouns": pair["nouns"], "question": pair["question"],
            "question2": held["second_question"], "first9": [last, *pair["first_referent"]],
            "second9": [pair["other_word"], *pair["second_referent"]], "first": held["held_out_first"],
            "second": held["held_out_second"]}


@functools.lru_cache(maxsize=None)
def answers(words: tuple, question: str) -> tuple[np.ndarray, np.ndarray]:
    """-> (probabilities (W, 2) of the two nouns, leads (W,)) after each word, through model.py's forward_many."""
    weights, tokenizer = smollm2.default_model()
    d = data()
    nouns = [tokenizer.encode(" " + n)[0] for n in d["nouns"]]
    outs = smollm2.forward_many(weights, [tokenizer.encode(d["stem"] + w + question) for w in words])
    logits = np.stack([o.logits[-1] for o in outs]).astype(np.float64)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return p[:, nouns], logits[:, nouns[0]] - logits[:, nouns[1]]


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    centre, half = (k / n + z * z / (2 * n)) / (1 + z * z / n), \
        z / (1 + z * z / n) * math.sqrt(k / n * (1 - k / n) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@functools.lru_cache(maxsize=None)
def reference_patches(head: tuple[int, int], state: int) -> dict:
    """The float64 reference: the leads of "...tired" and "...wide" (lesson 9's question), "...wide" with `head`'s
    output at the last position from "...tired", and with the residual stream entering layer `state` at the last
    position from "...tired"."""
    d = data()
    tensors = reference_gpt.GGUFTensors(smollm2.gguf_path())
    tokenizer = smollm2.default_model()[1]
    nouns = [tokenizer.encode(" " + n)[0] for n in d["nouns"]]
    clean, corrupted = (tokenizer.encode(d["stem"] + w + d["question"]) for w in (d["first9"][0], d["second9"][0]))
    lead = lambda logits: float(logits[-1, nouns[0]] - logits[-1, nouns[1]])  # noqa: E731
    record = {}
    out = {"clean": lead(reference_gpt.forward(tensors, clean, record=record)[0]),
           "corrupted": lead(reference_gpt.forward(tensors, corrupted)[0])}
    last = len(corrupted) - 1
    out["head"] = lead(reference_gpt.forward(tensors, corrupted, head_override={
        (*head, last): record["heads"][head][last]})[0])
    out["state"] = lead(reference_gpt.forward(tensors, corrupted, resid_override={
        (state, last): record["resid"][state][last]})[0])
    return out


def opened(lang: str):
    at = open_page("heads", lang)
    assert_clean(at)
    at.radio(key=KEY).set_value(3).run()  # "about half the time": the answer at the defaults
    assert_clean(at)
    assert any(s.value.startswith(strings(lang)["common.predict_right"]) for s in at.success)
    return at


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_behaviour_as_shown(lang, ready):
    at = opened(lang)
    d = data()
    p_first, lead_first = answers(tuple(d["first"]), d["question"])
    p_second, lead_second = answers(tuple(d["second"]), d["question"])
    _, lead9 = answers(tuple(d["first9"] + d["second9"]), d["question"])
    _, lead2 = answers(tuple(d["first"] + d["second"]), d["question2"])
    shown = find_sentence(texts(at), "heads_referent.numbers", lang)
    named_first, named_second = int((lead_first > 0).sum()), int((lead_second > 0).sum())
    assert (int(shown["named_first"]), int(shown["n_first"])) == (named_first, len(d["first"]))
    assert (int(shown["named_second"]), int(shown["n_second"])) == (named_second, len(d["second"]))
    assert (int(shown["a9"]), int(shown["n9"])) == (int((lead9 > 0).sum()), len(lead9))
    held = len(d["first"]) + len(d["second"])
    right = named_first + (len(d["second"]) - named_second)
    assert (int(shown["right"]), int(shown["held"])) == (right, held)
    low, high = wilson(right, held)
    assert number(shown["low"]) == pytest.approx(100 * low, abs=0.5)
    assert number(shown["high"]) == pytest.approx(100 * high, abs=0.5)
    probabilities = np.concatenate([p_first, p_second])
    assert number(shown["p_low"]) == pytest.approx(probabilities[:, 0].min(), abs=0.006)
    assert number(shown["p_high"]) == pytest.approx(probabilities[:, 0].max(), abs=0.006)
    assert number(shown["s_high"]) == pytest.approx(probabilities[:, 1].max(), abs=6e-5)
    right2 = int((lead2[:len(d["first"])] > 0).sum() + (lead2[len(d["first"]):] <= 0).sum())
    assert int(shown["right2"]) == right2
    bars = decode_array(figure(at, "heads_referent_chart")["data"][0]["y"])
    counts = [((lead9[:len(d["first9"])] > 0).sum(), len(d["first9"])),
              ((lead9[len(d["first9"]):] > 0).sum(), len(d["second9"])),
              (named_first, len(d["first"])), (named_second, len(d["second"]))]
    np.testing.assert_allclose(bars, [100 * k / n for k, n in counts], atol=1e-6)
    # the claims: the model names the first noun after every word, of either kind, in both wordings ("whichever
    # noun the word fits"), so it is right for about half, chance inside the interval ("does not decide")
    assert named_first == len(d["first"]) and named_second == len(d["second"]) and np.all(lead9 > 0)
    assert np.all(lead2 > 0) and low < 0.5 < high
    nudge = find_sentence(texts(at), "heads_referent.nudge", lang)
    k = int((lead_first > lead_second).sum())
    assert (int(nudge["k"]), int(nudge["pairs"])) == (k, len(d["first"]))
    assert number(nudge["nudge"]) == pytest.approx(np.median(lead_first - lead_second), abs=0.006)
    assert number(nudge["lead_low"]) == pytest.approx(min(lead_first.min(), lead_second.min()), abs=0.006)
    # "not ignored" (beyond chance) and "never turns the answer" (every lead above zero)
    assert wilson(k, len(d["first"]))[0] > 0.5 and number(nudge["lead_low"]) > 0


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_section_follows_the_house_style(lang, ready):
    from tests.number_style import number_style_problems
    from tests.test_japanese_ui import english_leaks
    from tests.visible_text import visible_texts

    at = opened(lang)
    assert number_style_problems(at, lang) == []
    if lang == "ja":
        assert english_leaks(visible_texts(at)) == []


def test_the_sweep_waits_for_the_start_up_work_registered_before_it(monkeypatch):
    """On two cores the sweep would slow the other lessons' start-up: it waits for every work registered before it
    (a failed one included) and for none after it."""
    from ui.heads import referent

    waited = []

    class Work:
        def __init__(self, name, fails=False):
            self.name, self.fails = name, fails

        def result(self):
            waited.append(self.name)
            if self.fails:
                raise RuntimeError("its page says why")

    works = [Work("lesson 8"), Work("lesson 9", fails=True), Work("heads-band"), referent.REFERENT, Work("later")]
    monkeypatch.setattr(referent, "registered", lambda: works)
    referent._after_earlier_work()
    assert waited == ["lesson 8", "lesson 9", "heads-band"]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_patching_as_shown(lang, ready):
    at = opened(lang)
    shown = find_sentence(texts(at), "heads_referent.heads_numbers", lang)
    first_head = shown["heads"].split(" ")[0]  # "L22H8 (0.35), ..." -> the best head on the picking pair
    layer, head = (int(x) for x in first_head[1:].split("H"))
    z = np.array(figure(at, "heads_referent_heads")["data"][0]["z"], dtype=float)  # (heads, layers)
    assert np.unravel_index(np.argmax(z), z.shape) == (head, layer)  # the best cell of the map is the one named
    resid = np.array(figure(at, "heads_referent_resid")["data"][0]["z"], dtype=float)  # (positions, states)
    carried = find_sentence(texts(at), "heads_referent.resid_numbers", lang)
    until, since = int(carried["until"]), int(carried["since"])
    ref = reference_patches((layer, head), since)
    gap = ref["clean"] - ref["corrupted"]
    explained = find_sentence(texts(at), "heads_referent.patch_explain", lang)
    assert number(explained["clean"]) == pytest.approx(ref["clean"], abs=0.01)
    assert number(explained["corrupted"]) == pytest.approx(ref["corrupted"], abs=0.01)
    fraction = (ref["head"] - ref["corrupted"]) / gap
    assert z[head, layer] == pytest.approx(fraction, abs=0.02)
    assert number(shown["heads"].split("(")[1].split(")")[0]) == pytest.approx(fraction, abs=0.02)
    assert resid[-1, since] == pytest.approx((ref["state"] - ref["corrupted"]) / gap, abs=0.02)
    # the claims: both runs name the first noun; the gap is small beside the lead both share; patching every head
    # at the last position restores it all (an identity); the picked heads beat random sets on held-out pairs; the
    # difference sits at the word, then at the last position
    assert ref["clean"] > 0 and ref["corrupted"] > 0 and gap < 0.25 * ref["corrupted"]
    assert number(shown["at_last"]) == pytest.approx(1.0, abs=0.01)
    assert number(shown["median"]) > number(shown["random"]) and number(shown["percentile"]) >= 95
    assert int(shown["beat"]) > int(shown["pairs"]) // 2
    word = int(np.argmax(resid[:, 0]))  # entering layer 0 only the word's position differs
    assert resid[word, 0] == pytest.approx(1.0, abs=1e-3) and resid[word, until] >= 0.5 > resid[word, until + 1]
    assert np.all(resid[-1, since:] >= 0.5) and resid[-1, since - 1] < 0.5 and until < since


class Pending:
    """A start-up work still running (the first visit on a machine without the stored study)."""

    runs = 1  # started once (the waiting box reruns the page when this changes: a failed work started again)

    def start(self):
        pass

    def wait(self, timeout):
        return False

    def ready(self):
        return False


@pytest.mark.parametrize("phase", ["waiting", "running", "failed"])
def test_until_the_study_is_done_the_section_says_how_far_it_is(phase, monkeypatch, ready):
    from ui.heads import referent

    status = referent.Status()
    status(phase, 5, 156, detail="a word is two tokens")
    monkeypatch.setattr(referent, "REFERENT", Pending())
    monkeypatch.setattr(referent, "STATUS", status)
    at = open_page("heads", "en")
    assert not at.exception
    words = len(data()["first9"] + data()["second9"] + data()["first"] + data()["second"])
    expected = strings("en")[f"heads_referent.{phase}"].format(done=5, total=156, words=words,
                                                                detail="a word is two tokens")
    assert expected in [x.value for x in (*at.info, *at.warning)]
    assert KEY not in [r.key for r in at.radio]  # no question before there is an answer to reveal
