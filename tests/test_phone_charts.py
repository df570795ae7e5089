"""On a phone: a long chart title wraps into lines that fit (Plotly never wraps one: lesson 10's titles were cut
mid-word), a legend under the plot hangs down clear of the x axis's labels, and a bar's value is never drawn tiny.
(tests/browser/test_phone.py measures the same in the browser.)"""

from __future__ import annotations

import re
import unicodedata

import pytest

from charts.heads import ablation_band, head_scatter, interval_bars, rank_by_layer
from charts.style import PHONE_TITLE_PX, narrow_titles, wrap_text
from charts.tiny_gpt import step_lines
from ui.shared.display import touch_spec
from ui.shared.i18n import load_strings


def width(line: str, size: float = 17) -> float:
    """A generous measure, independent of the code under test: 0.55 em a Latin character, 1 em a wide one."""
    return sum(size * (1.0 if unicodedata.east_asian_width(c) in "WF" else 0.55) for c in line)


def chart_titles(lang: str) -> list[str]:
    strings = load_strings(lang)
    keys = [k for k in strings if k.split(".")[0] in ("heads", "tiny_gpt", "pretrained", "heads_referent",
                                                      "heads_ordinary")
            and re.search(r"(_chart|_map|_title)$", k)]
    return [re.sub(r"\{[^}]*\}", "12345", strings[k]) for k in keys]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_title_of_lessons_8_to_11_wraps_into_lines_that_fit_a_phone(lang):
    titles = chart_titles(lang)
    assert len(titles) > 20
    long = [t for t in titles if width(t) > PHONE_TITLE_PX]
    assert long, "some title is longer than a phone's chart"
    for text in titles:
        lines = wrap_text(text, PHONE_TITLE_PX).split("<br>")
        assert all(width(line) <= PHONE_TITLE_PX + 17 or " " not in line.strip() and lang == "en" for line in lines), \
            lines
        # nothing lost or reordered: the lines joined are the title (spaces at the breaks aside)
        assert re.sub(r"\s+", "", "".join(lines)) == re.sub(r"\s+|<br>", "", text)
        if lang == "en":  # never a word cut in two
            assert set(" ".join(lines).split()) == set(text.replace("<br>", " ").split())


def test_a_wrapped_title_gets_room_and_the_plot_keeps_its_size():
    text = "Second-copy loss with k heads switched off (8 held-out sequences, 30 random draws)"
    spec = {"data": [], "layout": {"title": {"text": text}, "height": 400, "margin": {"t": 50, "b": 60}}}
    out = touch_spec(spec)
    lines = out["layout"]["title"]["text"].count("<br>")
    assert lines >= 1
    assert out["layout"]["height"] - 400 == out["layout"]["margin"]["t"] - 50 > 0
    assert spec["layout"]["title"]["text"] == text  # the cached dict is not changed
    short = {"data": [], "layout": {"title": {"text": "L1·H1"}, "height": 300}}
    assert narrow_titles(short) is short


def test_legends_under_the_plot_hang_down_and_bar_values_never_shrink_below_8_px():
    figures = [ablation_band([1, 2], [[1.0, 2.0], [3.0, 4.0]], {"a": [1, 2]}, {"b": 1.0}),
               rank_by_layer({"a": [3, 2, 1]}), head_scatter([0.1, 0.2], [1, 2], ["L0H0", "L0H1"]),
               step_lines([0, 10], {"a": [1.0, 2.0]})]
    for fig in figures:
        legend = fig["layout"]["legend"]
        # hanging down from under the plot (Plotly's "auto" anchors it by its bottom there), or at the figure's foot
        assert (legend["y"] < 0 and legend["yanchor"] == "top") or \
            (legend.get("yref") == "container" and legend["y"] == 0 and legend["yanchor"] == "bottom")
    training = step_lines(list(range(0, 1500, 100)), {f"series {i}": [0.5] * 15 for i in range(8)})
    assert training["layout"]["legend"]["yref"] == "container"  # 8 series wrap on a phone: not "a fraction below"
    bars = interval_bars(["a", "b"], [0.01, 2.0], [0.0, 1.5], [0.02, 2.5])
    assert bars["layout"]["uniformtext"]["minsize"] >= 8 and bars["layout"]["uniformtext"]["mode"] == "hide"


def test_lesson_9_and_10b_bars_keep_their_values_legible_and_their_legend_clear_of_the_labels():
    """The phone test found lesson 10b's 36 bar values drawn at 3.4 px, lesson 9's "77.3%" at 7.5 px and its legend
    over the x axis's title, and lesson 10's long group names turned on their side down into the legend."""
    from charts.gpt import grouped_bars, next_token_bars

    layers = grouped_bars(list(range(18)), {"past": [0.1] * 18, "start": [0.5] * 18})
    assert layers["layout"]["uniformtext"] == {"minsize": 10, "mode": "hide"}
    names = ["attention weight on position 0", "weight × value length"]
    sink = grouped_bars(names, {"all": [40, 20], "sinks": [90, 30]}, fmt=".0f")
    xaxis = sink["layout"]["xaxis"]
    assert xaxis["tickangle"] == 0 and xaxis["tickvals"] == names
    assert [text.replace("<br>", " ") for text in xaxis["ticktext"]] == names  # the same words, on lines
    assert all(width(line, 12) <= 150 for text in xaxis["ticktext"] for line in text.split("<br>"))  # half a phone
    top = next_token_bars(["Paris", "the"], [0.773, 0.05], [0.9, 0.02])
    legend = top["layout"]["legend"]
    assert legend["y"] < 0 and legend["yanchor"] == "top"
    assert top["layout"]["xaxis"]["range"][1] >= 90 * 1.3  # room right of the longest bar (90 %) for its value
    from charts.bars import weight_bars

    heads = weight_bars([f"L{i}H0" for i in range(12)], [0.304] * 12, as_percent=True)  # lesson 8's 12 heads
    assert heads["layout"]["uniformtext"] == {"minsize": 10, "mode": "hide"}
