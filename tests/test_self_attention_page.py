"""Lesson 3 page (AppTest): presets, the selected token, the cut-off, the GloVe part; both languages."""

import numpy as np
import pytest

from attention_core.glove import embed, load_glove
from attention_core.self_attention import (
    HEADS, glove_self_attention, load_self_attention, mix_steps, multi_head_parts, preset_heads,
)
from attention_core.text import tokenize
from charts.tokens import LINE_TRACE_PREFIX
from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures, recorded_downloads
from ui.common import MAX_CHARS
from ui.i18n import load_strings

pytestmark = pytest.mark.pages

PAGE = "self_attention"
DATA = load_self_attention()
EN, JA = load_strings("en"), load_strings("ja")


def coref(preset_id):
    return preset_heads(DATA.by_id(preset_id), DATA.rule_score)[0]


def line_traces(fig):
    """The line traces of a token_lines figure (named "line <i>")."""
    return [tr for tr in fig["data"] if str(tr.get("name", "")).startswith(LINE_TRACE_PREFIX + " ")]


def drawn_lines(fig):
    """Line traces of a token_lines figure -> {key position: width}, all starting at the selected query."""
    return {int(tr["y"][1]): tr["line"]["width"] for tr in line_traces(fig)}


def key_weights(fig):
    keys = [tr for tr in fig["data"] if tr.get("mode") == "markers+text" and tr["x"][0] == 1.0]
    return decode_array(keys[0]["customdata"])[:, 1]


FRAMES = ("sa_table", "sa_mix_steps", "sa_mix_concat", "sa_mix_output")  # the page's tables, in page order


def frame(at, key):
    """The st.dataframe of this name (AppTest gives dataframes no key: they are found by their order on the page)."""
    assert len(at.dataframe) == len(FRAMES)
    return at.dataframe[FRAMES.index(key)]


def reveal(at):
    at.radio(key="sa_predict").set_value(3).run()
    assert_clean(at)
    return at


@pytest.fixture(scope="module")
def kv():
    return load_glove()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_default_view_shows_the_coreference_row(lang):
    at = open_page(PAGE, lang)
    assert_clean(at)
    strings = EN if lang == "en" else JA
    assert at.title[0].value == strings["self_attention.title"]
    assert any(i.value == strings["common.hand_designed"] for i in at.info)
    cat = DATA.by_id("cat")
    assert at.selectbox(key="sa_preset").value == "cat"
    assert at.selectbox(key="sa_token").value == cat.pronoun
    figs = plotly_figures(at)
    assert len(figs) == 5  # lines, matrix, three heads; GloVe waits for the prediction
    W = coref("cat")
    np.testing.assert_allclose(decode_array(figs[1]["data"][0]["z"]), W, atol=1e-12)
    np.testing.assert_allclose(key_weights(figs[0]), W[cat.pronoun], atol=1e-12)
    assert set(drawn_lines(figs[0])) == fewest_largest(list(W[cat.pronoun]), 0.9)
    assert max(drawn_lines(figs[0]), key=drawn_lines(figs[0]).get) == cat.antecedent
    shape = figs[1]["layout"]["shapes"][0]
    assert shape["y0"] == cat.pronoun - 0.5  # the selected row is outlined
    for fig, head in zip(figs[2:], preset_heads(cat, DATA.rule_score)):
        np.testing.assert_allclose(decode_array(fig["data"][0]["z"]), head, atol=1e-12)
        assert fig["layout"]["shapes"][0]["y0"] == cat.pronoun - 0.5
    caption = " ".join(c.value for c in at.caption)
    assert f"{W[cat.pronoun, cat.antecedent]:.1%}" in caption  # the text alternative carries the key number
    assert at.get("download_button")


@pytest.mark.parametrize("path", [["hanako"], ["animal"], ["animal", "cat"]], ids="->".join)
def test_switching_preset_moves_to_its_pronoun(path):
    at = open_page(PAGE)
    for preset_id in path:
        at.selectbox(key="sa_token").set_value(2).run()
        at.selectbox(key="sa_preset").set_value(preset_id).run()
    assert_clean(at)
    preset = DATA.by_id(preset_id)
    assert at.selectbox(key="sa_token").value == preset.pronoun
    figs = plotly_figures(at)
    np.testing.assert_allclose(decode_array(figs[1]["data"][0]["z"]), coref(preset_id), atol=1e-12)
    assert preset.tokens[preset.pronoun] in figs[0]["layout"]["title"]["text"]
    assert max(drawn_lines(figs[0]), key=drawn_lines(figs[0]).get) == preset.antecedent


def test_selecting_a_token_by_the_selectbox_redraws_lines_and_row():
    at = open_page(PAGE)
    before = drawn_lines(plotly_figures(at)[0])
    at.selectbox(key="sa_token").set_value(0).run()
    assert_clean(at)
    figs = plotly_figures(at)
    after = drawn_lines(figs[0])
    assert after != before
    W = coref("cat")
    assert set(after) == fewest_largest(list(W[0]), 0.9)
    assert all(tr["y"][0] == 0 for tr in line_traces(figs[0]))
    assert figs[1]["layout"]["shapes"][0]["y0"] == -0.5
    np.testing.assert_allclose(key_weights(figs[0]), W[0], atol=1e-12)


def fewest_largest(row, mass: float) -> set[int]:
    """The reference for the cut-off: take the largest weights, earliest first among equals, until ``mass`` of the row."""
    kept, total = set(), 0.0
    for i in sorted(range(len(row)), key=lambda i: (-row[i], i)):
        kept.add(i)
        total += row[i]
        if total >= mass * sum(row) - 1e-12:
            break
    return kept


@pytest.mark.parametrize("cutoff, expected", [(1.0, 14), (0.05, 1), (0.5, 1), (0.8, 2)])  # of the 14 tokens
def test_cutoff_hides_lines(cutoff, expected):
    at = open_page(PAGE)
    at.slider(key="sa_cutoff").set_value(cutoff).run()
    assert_clean(at)
    cat = DATA.by_id("cat")
    row = coref("cat")[cat.pronoun]
    lines = drawn_lines(plotly_figures(at)[0])
    assert set(lines) == fewest_largest(list(row), cutoff)
    assert len(lines) == expected
    assert at.query_params.get("sa_cutoff") in (None, [str(cutoff)], str(cutoff))


def test_glove_part_waits_for_the_prediction_then_contrasts(kv):
    at = reveal(open_page(PAGE))
    figs = plotly_figures(at)
    assert len(figs) == 7
    tokens = tokenize(DATA.by_id("animal").glove_text)
    G = glove_self_attention(embed(tokens, kv)[0], "raw")
    np.testing.assert_allclose(decode_array(figs[6]["data"][0]["z"]), G, atol=1e-9)
    metrics = {m.label: m.value for m in at.metric}
    hand = coref("animal")[7, 1]
    assert metrics["Hand-designed: it → animal"] == f"{hand:.1%}"
    assert metrics["GloVe: it → animal"] == f"{G[8, 1]:.1%}"
    caption = " ".join(c.value for c in at.caption)
    rank = int(np.sum(G[8] > G[8, 1]) + 1)
    assert f"rank {rank} of 12" in caption and "rank 1 of 11" in caption


def test_random_mode_and_seed_change_the_glove_matrix(kv):
    at = reveal(open_page(PAGE))
    raw = decode_array(plotly_figures(at)[6]["data"][0]["z"])
    assert at.number_input(key="sa_seed").proto.disabled
    at.toggle(key="sa_random").set_value(True).run()
    assert_clean(at)
    seed0 = decode_array(plotly_figures(at)[6]["data"][0]["z"])
    at.number_input(key="sa_seed").set_value(7).run()
    assert_clean(at)
    fig = plotly_figures(at)[6]
    seed7 = decode_array(fig["data"][0]["z"])
    assert "7" in fig["layout"]["title"]["text"]
    X = embed(tokenize(DATA.by_id("animal").glove_text), kv)[0]
    np.testing.assert_allclose(seed0, glove_self_attention(X, "random", 0), atol=1e-9)
    np.testing.assert_allclose(seed7, glove_self_attention(X, "random", 7), atol=1e-9)
    assert not np.allclose(raw, seed0) and not np.allclose(seed0, seed7)
    np.testing.assert_allclose(seed7.sum(axis=1), 1.0, atol=1e-6)
    at.number_input(key="sa_seed").set_value(2**31 - 1).run()
    assert_clean(at)


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize(
    "text, message",
    [
        ("", "common.empty_sentence"),
        ("   ", "common.empty_sentence"),
        (" ".join(["word"] * 41), "common.too_many_tokens"),
        ("😀 🐈 🎉", "self_attention.few_known"),
        ("猫がマットの上に座った。それは満足そうだった", "self_attention.few_known"),
    ],
    ids=["empty", "spaces", "41-tokens", "emoji", "japanese"],
)
def test_bad_sentences_give_a_clear_message(text, message, lang):
    at = reveal(open_page(PAGE, lang))
    at.text_input(key="sa_text").input(text).run()
    assert_clean(at)
    strings = EN if lang == "en" else JA
    expected = strings[message].split("{")[0].strip()
    assert any(w.value.startswith(expected) for w in at.warning), [w.value for w in at.warning]
    assert len(plotly_figures(at)) == 5  # the hand-designed part stays, no blank GloVe figure


def test_ten_thousand_characters_are_refused_cleanly():
    at = reveal(open_page(PAGE))
    at.text_input(key="sa_text").input("x " * 5000).run()
    assert_clean(at)
    assert len(at.text_input(key="sa_text").value) <= MAX_CHARS  # max_chars: Streamlit keeps the text short
    assert len(plotly_figures(at)) == 7


def test_html_and_markdown_are_shown_literally():
    at = reveal(open_page(PAGE))
    at.text_input(key="sa_text").input("<script>alert(1)</script> it was **bold** $x$ [a](http://e.x) the animal").run()
    assert_clean(at)
    figs = plotly_figures(at)
    assert len(figs) == 7
    labels = figs[6]["layout"]["yaxis"]["ticktext"]  # every row is labelled (dense columns are thinned)
    assert "<" in labels and "script" in labels
    for md in list(at.markdown) + list(at.caption):
        assert "<script>" not in md.value and "](http" not in md.value
    assert all(np.isfinite(decode_array(figs[6]["data"][0]["z"])).all() for _ in [0])


def test_sentence_without_a_pronoun_pair_says_so():
    at = reveal(open_page(PAGE))
    at.text_input(key="sa_text").input("the cat sat on the mat").run()
    assert_clean(at)
    assert not at.metric
    assert any("“it” and “cat”" in i.value for i in at.info)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_use_preset_sentence_button_compares_with_that_preset(lang):
    at = open_page(PAGE, lang)
    at.selectbox(key="sa_preset").set_value("hanako").run()
    reveal(at)
    at.button(key="sa_use_preset").click().run()
    assert_clean(at)
    assert at.text_input(key="sa_text").value == DATA.by_id("hanako").glove_text
    labels = [m.label for m in at.metric]
    assert any("彼女 → 花子" in label for label in labels) and any("she → hanako" in label for label in labels)


def test_link_opens_the_same_view():
    # sa_preset is the preset's id (ui.common.url_selectbox), not its label
    query = {"sa_preset": "animal", "sa_cutoff": "0.5", "sa_random": "true", "sa_seed": "3",
             "sa_text": "the animal was tired because it ran"}
    at = reveal(open_page(PAGE, "ja", query=query))
    assert at.selectbox(key="sa_preset").value == "animal"
    assert at.selectbox(key="sa_token").value == DATA.by_id("animal").pronoun
    assert all(tr["y"][0] == DATA.by_id("animal").pronoun for tr in line_traces(plotly_figures(at)[0]))
    assert at.slider(key="sa_cutoff").value == 0.5
    assert at.toggle(key="sa_random").value is True
    assert at.number_input(key="sa_seed").value == 3
    assert at.text_input(key="sa_text").value == "the animal was tired because it ran"
    assert len(plotly_figures(at)) == 7


def test_a_broken_link_falls_back_cleanly():
    at = open_page(PAGE, query={"sa_cutoff": "7", "sa_seed": "-4", "sa_preset": "nope"})
    assert_clean(at)
    assert at.selectbox(key="sa_preset").value == "cat"
    assert at.selectbox(key="sa_token").value == DATA.by_id("cat").pronoun
    assert 0.05 <= at.slider(key="sa_cutoff").value <= 1.0


# ---- multi-head: three heads, concatenated, mixed by W_O ----------------------------------

@pytest.mark.parametrize("lang", ["en", "ja"])
def test_heads_are_coreference_syntax_previous_word_and_follow_the_token(lang):
    at = open_page(PAGE, lang)
    strings = EN if lang == "en" else JA
    figs = plotly_figures(at)
    titles = [fig["layout"]["title"]["text"] for fig in figs[2:5]]
    assert titles == [strings[f"self_attention.head_{name}"] for name in HEADS]
    assert all(("hand-designed" in title) if lang == "en" else ("人が決めた" in title) for title in titles[:2])
    at.selectbox(key="sa_token").set_value(6).run()  # 座った: the syntax head sends it to its subject 猫
    assert_clean(at)
    figs = plotly_figures(at)
    heads = preset_heads(DATA.by_id("cat"), DATA.rule_score)
    for fig, head in zip(figs[2:5], heads):
        np.testing.assert_allclose(decode_array(fig["data"][0]["z"]), head, atol=1e-12)
        assert fig["layout"]["shapes"][0]["y0"] == 6 - 0.5
    caption = " ".join(c.value for c in at.caption)
    sep = "：" if lang == "ja" else ": "
    assert f"座った → 猫{sep}{heads[1][6, 0]:.1%}" in caption


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_concatenation_and_w_o_show_shapes_and_the_selected_row(lang):
    at = open_page(PAGE, lang)
    strings = EN if lang == "en" else JA
    parts = multi_head_parts(preset_heads(DATA.by_id("cat"), DATA.rule_score))
    shapes = strings["self_attention.mix_shapes"].format(h=3, n=14, d_v=4, hd=12, d_model=12)
    assert any(shapes in m.value for m in at.markdown)
    assert any(("seed 0" in m.value and "not trained" in m.value) if lang == "en" else ("シード 0" in m.value and "学習したものではありません" in m.value)
               for m in at.markdown)
    for sel in (DATA.by_id("cat").pronoun, 0):
        if sel == 0:
            at.selectbox(key="sa_token").set_value(0).run()
            assert_clean(at)
        table = frame(at, "sa_mix_steps").value
        steps = mix_steps(parts, sel)
        shown = table.iloc[:, 1:].to_numpy()
        assert shown.shape == (5, 12)
        for r in range(5):
            for c in range(12):
                want = "" if np.isnan(steps[r, c]) else f"{steps[r, c]:+.2f}"
                assert shown[r, c] == want
    concat = frame(at, "sa_mix_concat").value.iloc[:, 1:].to_numpy(dtype=float)
    np.testing.assert_allclose(concat, np.round(parts.concat, 3), atol=1e-12)
    output = frame(at, "sa_mix_output").value.iloc[:, 1:].to_numpy(dtype=float)
    np.testing.assert_allclose(output, np.round(parts.output, 3), atol=1e-12)


# ---- one session, widgets follow the sentence; the state is said next to the text box ---------------

def test_token_and_sections_follow_preset_changes_in_one_session():
    at = open_page(PAGE)
    for preset_id, token in [("cat", 13), ("animal", 10), ("hanako", 13), ("animal", 0), ("cat", 2), ("hanako", 4)]:
        at.selectbox(key="sa_preset").set_value(preset_id).run()
        assert_clean(at)
        preset = DATA.by_id(preset_id)
        assert at.selectbox(key="sa_token").value == preset.pronoun
        at.selectbox(key="sa_token").set_value(token).run()
        assert_clean(at)
        figs = plotly_figures(at)
        assert all(tr["y"][0] == token for tr in line_traces(figs[0]))
        assert all(fig["layout"]["shapes"][0]["y0"] == token - 0.5 for fig in figs[1:5])
        assert frame(at, "sa_mix_steps").value.shape[0] == 5
        assert len(frame(at, "sa_mix_concat").value) == len(preset.tokens)


def test_a_token_past_the_end_of_a_shorter_preset_falls_back_to_its_pronoun():
    at = open_page(PAGE, query={"sa_preset": "animal", "sa_token": "13"})  # animal has 11 tokens
    assert_clean(at)
    assert at.selectbox(key="sa_token").value == DATA.by_id("animal").pronoun


def test_glove_sentences_long_short_one_word_long_in_one_session(kv):
    at = reveal(open_page(PAGE))
    long_text = "the animal did not cross the busy street because it was far too tired after the long walk"
    for text, figures in [(long_text, 7), ("it ran", 7), ("it", 5), ("", 5), (long_text, 7),
                          ("the animal was tired because it ran", 7)]:
        at.text_input(key="sa_text").input(text).run()
        assert_clean(at)
        assert len(plotly_figures(at)) == figures, text
    at.toggle(key="sa_random").set_value(True).run()
    at.text_input(key="sa_text").input("it").run()
    assert_clean(at)
    at.text_input(key="sa_text").input(long_text).run()
    assert_clean(at)
    assert len(plotly_figures(at)) == 7


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_typing_before_answering_says_to_answer_first_next_to_the_box(lang):
    at = open_page(PAGE, lang)
    strings = EN if lang == "en" else JA
    at.text_input(key="sa_text").input("the dog sat because it was tired").run()
    assert_clean(at)
    assert len(plotly_figures(at)) == 5
    assert any(i.value == strings["self_attention.answer_first"] for i in at.info)
    reveal(at)
    assert len(plotly_figures(at)) == 7
    assert not any(i.value == strings["self_attention.answer_first"] for i in at.info)


def test_going_back_to_the_default_token_raises_no_bad_link_toast():
    at = open_page(PAGE, "ja")
    at.selectbox(key="sa_token").set_value(0).run()
    at.selectbox(key="sa_token").set_value(DATA.by_id("cat").pronoun).run()
    assert_clean(at)
    assert not at.toast, [t.value for t in at.toast]
    assert "sa_token" not in at.query_params




@pytest.mark.parametrize("lang", ["en", "ja"])
def test_csv_downloads_have_a_bom_and_headers_in_the_page_language(lang, monkeypatch, kv):
    files = recorded_downloads(monkeypatch)
    at = reveal(open_page(PAGE, lang))
    buttons = {b.key: files[b.proto.url] for b in at.get("download_button")}
    assert set(buttons) == {"sa_csv", "sa_head_csv_coreference", "sa_head_csv_syntax", "sa_head_csv_previous_word",
                            "sa_mix_csv", "sa_glove_csv"}
    assert all(data.startswith(b"\xef\xbb\xbf") for data in buttons.values())
    corner = "クエリ \\ キー" if lang == "ja" else "query \\ key"
    for key in ("sa_csv", "sa_head_csv_syntax", "sa_glove_csv"):
        assert buttons[key].decode("utf-8-sig").splitlines()[0].startswith(corner + ",")
    mix = buttons["sa_mix_csv"].decode("utf-8-sig").splitlines()
    assert mix[0].split(",")[:2] == (["トークン", "連結_1"] if lang == "ja" else ["token", "concat_1"])
    assert len(mix) == 1 + len(DATA.by_id("cat").tokens)
    parts = multi_head_parts(preset_heads(DATA.by_id("cat"), DATA.rule_score))
    np.testing.assert_allclose([float(x) for x in mix[1].split(",")[1:]],
                               np.concatenate([parts.concat[0], parts.output[0]]), atol=1e-6)
