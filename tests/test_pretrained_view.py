"""AppTest: lesson 8's opened head offers its matrix as a CSV (BOM, headers in the page's language) whose cells are the
weights of the head shown, checked against the separately written float64 BERT (tests/reference_bert.py) and the
model's own tokenizer (the tokenizers library); on a phone the model view's caption does not say "hover"."""

from __future__ import annotations

import csv
import io
import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests import reference_bert
from tests.apptest_utils import assert_clean, open_page, recorded_downloads

pytestmark = pytest.mark.pages

LOCALES = Path(__file__).resolve().parent.parent / "locales"
FAMOUS = "The animal did not cross the street because it was too tired"


def view_strings(lang: str) -> dict:
    with (LOCALES / lang / "pretrained.toml").open("rb") as fh:
        return tomllib.load(fh)


@pytest.fixture(scope="module")
def reference():
    """(tokens, attentions (6, 12, n, n)) of FAMOUS from the float64 reference BERT and the model's tokenizer."""
    tokenizers = pytest.importorskip("tokenizers")
    from attention_core.pretrained import model_dir

    folder = Path(model_dir())
    tok = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    encoded = tok.encode(FAMOUS)
    config = json.loads((folder / "config.json").read_text())
    attentions, _ = reference_bert.forward(reference_bert.read_tensors(folder / "model.safetensors"), config,
                                           encoded.ids)
    return encoded.tokens, attentions


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_opened_heads_csv_holds_its_weights(lang, reference, monkeypatch):
    files = recorded_downloads(monkeypatch)
    at = open_page("pretrained", lang, timeout=300)
    at.radio(key="pretrained_predict").set_value(1).run()
    at.radio(key="pretrained_switch_predict").set_value(1).run()
    at.selectbox(key="pretrained_layer").set_value(0).run()
    at.selectbox(key="pretrained_head").set_value(2).run()
    assert_clean(at)
    buttons = {b.key: b for b in at.get("download_button")}
    assert "pretrained_head_csv" in buttons
    button = buttons["pretrained_head_csv"]
    strings = view_strings(lang)["view"]
    assert button.proto.label == strings["download"].format(head="L0H2")
    data = files[button.proto.url]
    assert data.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0] == [strings[k] for k in ("col_query_position", "col_query", "col_key_position", "col_key",
                                            "col_weight")]
    tokens, attentions = reference
    n = len(tokens)
    assert len(rows) == 1 + n * n
    body = rows[1:]
    assert [r[1] for r in body[::n]] == tokens and [r[3] for r in body[:n]] == tokens  # rows = queries, then keys
    assert [(int(r[0]), int(r[2])) for r in body] == [(q + 1, k + 1) for q in range(n) for k in range(n)]
    weights = np.array([float(r[4]) for r in body]).reshape(n, n)
    np.testing.assert_allclose(weights, attentions[0, 2], atol=2e-6)
    if lang == "ja":
        assert not any(w in ",".join(rows[0]) for w in ("query", "key", "weight"))


def test_on_a_phone_the_model_view_says_tap_not_hover(monkeypatch):
    from ui.shared import display

    monkeypatch.setattr(display, "on_touch_device", lambda: True)
    import ui.pretrained.view as view

    monkeypatch.setattr(view, "on_touch_device", lambda: True)
    at = open_page("pretrained", "en", timeout=300)
    at.radio(key="pretrained_predict").set_value(1).run()
    at.radio(key="pretrained_switch_predict").set_value(1).run()
    captions = [c.value for c in at.caption]
    assert view_strings("en")["view"]["caption_touch"] in captions
    assert not [c for c in captions if "hover" in c.lower()]
