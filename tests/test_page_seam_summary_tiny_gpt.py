"""The summary's lesson-11 claim as shown, against lesson 11's own seam references: the losses of the runs' weights
through the forward pass written in tests/test_tiny_gpt_core (a sequence and a head at a time), the bound by loops
over the evaluation sequences, the step the head formed read from the curve drawn, in both languages."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.tiny_gpt import Config
from tests.apptest_utils import assert_clean, decode_array, open_page
from tests.seam import figure, find_sentence, number, strings, texts
from tests.test_page_seam_tiny_gpt import lines, losses, reference  # noqa: F401 - a fixture
from ui.tiny_gpt.runs import shared_runs


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_tiny_gpt_claim_is_the_lessons_measurement(lang, reference):  # noqa: F811 - the fixture
    seqs, bound = reference
    w = strings(lang)
    at = open_page("summary", lang, timeout=900)
    assert_clean(at)
    said = find_sentence(texts(at), "summary.claim_tiny_gpt", lang)
    two, one = (shared_runs().get((Config(n_layer=n), 0, True)) for n in (2, 1))  # the runs drawn: their weights
    start, end = losses(two.params_at(0), seqs)[0], losses(two.params, seqs)[0]
    one_end = losses(one.params, seqs)[0]
    assert number(said["start"]) == pytest.approx(start, abs=0.006)
    assert number(said["end"]) == pytest.approx(end, abs=0.006)
    assert number(said["one"]) == pytest.approx(one_end, abs=0.006)
    assert number(said["bound"]) == pytest.approx(bound, abs=0.006)
    assert (number(said["steps"]), int(said["seed"])) == (1500, 0)
    fig = figure(at, "summary_tiny_gpt")
    curves = lines(fig)
    steps, rep = curves[w["tiny_gpt.two_layers"]]
    np.testing.assert_allclose(curves[w["tiny_gpt.one_layer"]][1][-1], one_end, atol=2e-5)
    assert rep[-1] == pytest.approx(end, abs=2e-5)
    [line] = [s for s in fig["layout"]["shapes"] if s.get("xref") == "paper"]
    assert line["y0"] == pytest.approx(bound, rel=1e-9)
    # the step it formed: the first where the best layer-2 induction score >= 0.4 and the loss below half the bound
    formed = next(int(s) for s, r, ind in zip(two.steps, rep, two.induction) if ind[1].max() >= 0.4 and r < bound / 2)
    assert said["formed"] == w["tiny_gpt.at_step"].format(step=f"{formed:,}")
    [marker] = [s for s in fig["layout"]["shapes"] if s.get("yref") == "paper"]
    assert marker["x0"] == formed
    assert number(said["prev"]) == pytest.approx(two.previous_token[-1, 0].max(), abs=0.006)
    # the claim's words hold: the two-layer loss ends far below the bound, the one-layer loss above it
    assert end < bound / 2 < bound < one_end and two.previous_token[-1, 0].max() >= 0.5
    assert decode_array(fig["data"][0]["x"]).tolist() == list(range(0, 1501, 25))
