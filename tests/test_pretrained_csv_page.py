"""AppTest: lesson 8's CSV buttons are reachable by answering the questions as a learner meets them, with no other
click (issue 33, item 9). The page asks its second question only once the first is answered, so a render that
answers only the questions drawn at the start (one) shows no button; answering each question as it appears shows
both: the picked head's weights and the catalogue."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from tests.apptest_utils import assert_clean, open_page, recorded_downloads

pytestmark = pytest.mark.pages

LOCALES = Path(__file__).resolve().parent.parent / "locales"


def answer_as_they_appear(at):
    """Answer every prediction the page draws, one at a time, until none is left open -> the keys answered."""
    answered = []
    for _ in range(10):
        open_ones = [r for r in at.radio if r.key and r.key.startswith("pretrained_") and r.key.endswith("_predict")
                     and r.value is None]
        if not open_ones:
            return answered
        open_ones[0].set_value(1).run()
        answered.append(open_ones[0].key)
    raise AssertionError(f"questions kept appearing: {answered}")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_csv_button_appears_once_every_question_is_answered(lang, monkeypatch):
    files = recorded_downloads(monkeypatch)
    at = open_page("pretrained", lang, timeout=300)
    first = [r.key for r in at.radio if r.key.endswith("_predict")]
    assert first == ["pretrained_predict"] and at.get("download_button") == []  # nothing before the first answer
    assert answer_as_they_appear(at) == ["pretrained_predict", "pretrained_switch_predict"]
    assert_clean(at)
    buttons = {b.key: files[b.proto.url] for b in at.get("download_button")}
    assert set(buttons) == {"pretrained_head_csv", "pretrained_catalogue_csv"}
    with (LOCALES / lang / "pretrained.toml").open("rb") as fh:
        view = tomllib.load(fh)["view"]
    data = buttons["pretrained_head_csv"]
    assert data.startswith(b"\xef\xbb\xbf")
    table = pd.read_csv(io.StringIO(data.decode("utf-8-sig")), keep_default_na=False)
    assert list(table.columns)[0] == view["col_query_position"] and view["col_weight"] in table.columns
    n = int(table[view["col_query_position"]].max())
    assert len(table) == n * n  # one row per (query, key) cell of the picked head
    sums = table.groupby(view["col_query_position"])[view["col_weight"]].sum()
    assert all(abs(v - 1) < 1e-4 for v in sums)  # each query's row of weights sums to 1
