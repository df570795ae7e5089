"""Lesson 3 at its defaults, as shown, against data/self_attention.toml read and softmaxed here (not the core's
preset_heads): the coreference map and the three head maps (axes, labels, z[query][key]), their titles, the outlined
row, the lines caption's top three and the head captions, in both languages."""

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import (
    assert_attention_map, figure, find_sentence, number, softmax_rows, strings, texts, title_text,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "self_attention.toml"


def reference(lang: str):
    """(tokens, pronoun, [coreference, syntax, previous-word] weights) of the preset the page opens on in ``lang``."""
    with DATA.open("rb") as fh:
        data = tomllib.load(fh)
    preset = next(p for p in data["presets"] if p["id"] == data["default_preset"][lang])
    n = len(preset["tokens"])
    heads = []
    for links in (preset["links"], preset["syntax_links"]):
        scores = np.full((n, n), float(preset["base_score"]))
        for i in range(n):
            scores[i, i] = preset["self_score"]
        for link in links:
            scores[link["from"], link["to"]] = link["score"]
        heads.append(softmax_rows(scores))
    previous = np.zeros((n, n))
    for i in range(n):
        previous[i, max(i - 1, 0)] = data["rule_score"]
    heads.append(softmax_rows(previous))
    return preset["tokens"], preset["pronoun"], heads


def outlined_row(fig) -> int:
    rects = [s for s in fig["layout"].get("shapes", []) if s.get("type") == "rect"]
    assert len(rects) == 1, rects
    return int(round((rects[0]["y0"] + rects[0]["y1"]) / 2))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_maps_axes_titles_and_captions_show_the_hand_designed_heads(lang):
    at = open_page("self_attention", lang)
    assert_clean(at)
    words = strings(lang)
    tokens, pronoun, heads = reference(lang)

    coref = figure(at, "sa_heat")
    assert title_text(coref["layout"]) == words["self_attention.heat_title"]
    assert_attention_map(coref, heads[0], tokens, tokens, lang)
    assert outlined_row(coref) == pronoun
    for k, (name, weights) in enumerate(zip(("coreference", "syntax", "previous_word"), heads)):
        fig = figure(at, f"sa_head_{name}")
        title = title_text(fig["layout"])
        assert title == words[f"self_attention.head_{name}"]
        assert re.search(rf"(?<!\d){k + 1}(?!\d)", title), ("the k-th map is titled head k", k + 1, title)
        assert_attention_map(fig, weights, tokens, tokens, lang)
        assert outlined_row(fig) == pronoun

    shown = texts(at)
    lines = find_sentence(shown, "self_attention.lines_caption", lang)
    assert lines["token"].replace("\\", "") == tokens[pronoun] and int(lines["pos"]) == pronoun + 1
    row = heads[0][pronoun]
    order = sorted(range(len(tokens)), key=lambda j: (-row[j], j))[:3]
    sep = "、" if lang == "ja" else ", "
    tops = [re.fullmatch(r"(.+) (\d+\.\d %)", part) for part in lines["top"].split(sep)]  # "animal 77.1 %"
    assert all(tops), ("each of the top three is a word and its share written as 77.1 %", lines["top"])
    assert [m.group(1).replace("\\", "") for m in tops] == [tokens[j] for j in order]
    np.testing.assert_allclose([number(m.group(2)) for m in tops], [100 * row[j] for j in order], atol=0.05)
    assert int(lines["n"]) == len(tokens)

    # each head's caption: the pronoun's strongest key and its weight
    captions = [c.value for c in at.caption]
    for weights in heads:
        target = int(np.argmax(weights[pronoun]))
        share = f"{100 * weights[pronoun, target]:.1f} %"  # the locales' share style: a space before %
        expected = words["self_attention.head_caption"].format(source=tokens[pronoun], target=tokens[target],
                                                               weight=share)
        assert expected in captions, (expected, captions)
