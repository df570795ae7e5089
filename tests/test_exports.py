"""AppTest: the summary offers its claims and their numbers as a CSV (BOM, headers in the page's language), one row per
claim in lesson order, whose numbers are the ones computed here from attention_core at the lessons' defaults.
(Lesson 8's CSV of the opened head: tests/test_pretrained_view.py.)"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from attention_core.causal import RANDOM_DIM, causal_vs_bidirectional, random_word_vectors
from attention_core.qkv import load_library, lookup
from attention_core.scaling import sweep_table
from attention_core.sentences import load_sentences
from attention_core.text import tokenize
from tests.apptest_utils import assert_clean, open_page, recorded_downloads
from ui.shared.i18n import load_strings
from ui.scaling import TABLE_SEED as SCALING_TABLE_SEED

pytestmark = pytest.mark.pages

CLAIMS = ("rnn", "qkv", "self_attention", "scaling", "causal", "glove", "gpt", "heads", "tiny_gpt")  # in lesson order


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_summary_offers_its_claims_and_numbers_as_csv(lang, monkeypatch):
    files = recorded_downloads(monkeypatch)
    at = open_page("summary", lang, timeout=300)
    assert_clean(at)
    strings = load_strings(lang)
    button = next(b for b in at.get("download_button") if b.key == "summary_csv")
    assert button.proto.label == strings["summary.download"]
    data = files[button.proto.url]
    assert data.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0] == [strings[f"summary.col_{c}"] for c in ("lesson", "claim", "values")]
    body = rows[1:]
    assert [r[0] for r in body] == [strings[f"nav.{s}"] for s in CLAIMS]
    for section, row in zip(CLAIMS, body):
        heading = strings[f"summary.claim_{section}"].split("**")[1]  # the claim's bold heading, without the marks
        assert row[1].startswith(heading) and "**" not in row[1], section
    by = dict(zip(CLAIMS, body))
    # numbers computed here, not by the page: lesson 2's best book, lesson 4's table at d = 1024, lesson 5's mask
    lib = load_library()
    found = lookup(lib.queries[0].vector, lib.keys, lib.values, lib.default_temperature)
    share = f"{100 * found.weights.max():.1f} %"  # the course's number style: a space before %
    assert f"share = {share}" in by["qkv"][2] and share in by["qkv"][1]
    table = sweep_table(SCALING_TABLE_SEED)
    for name in ("unscaled", "scaled"):
        value = f"{table[f'max_{name}'][-1]:.3f}"
        assert f"{name} = {value}" in by["scaling"][2] and value in by["scaling"][1]
    words = tokenize(load_sentences()[0].text)
    W = causal_vs_bidirectional(random_word_vectors(words, RANDOM_DIM, 0), 0)["causal"].weights
    masked = int(np.triu(np.ones_like(W, dtype=bool), k=1).sum())
    assert f"masked = {masked}" in by["causal"][2] and f"dim = {RANDOM_DIM}" in by["causal"][2]
