"""Lesson 3 page (AppTest): presets (each language its own), the selected token, the cut-off, the heads, the mixing,
the forward link to lesson 6 and old links to the GloVe part it no longer has; both languages."""

import numpy as np
import pytest

from attention_core.self_attention import HEADS, load_self_attention, mix_steps, multi_head_parts, preset_heads
from charts.tokens import LINE_TRACE_PREFIX
from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures, recorded_downloads
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.pages

PAGE = "self_attention"
DATA = load_self_attention()
EN, JA = load_strings("en"), load_strings("ja")
DEFAULT = {"en": "animal", "ja": "cat"}  # the sentence each UI language opens on, as the lesson states it
DEFAULT_CUTOFF = 0.8


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


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_default_view_shows_the_coreference_row(lang):
    at = open_page(PAGE, lang)
    assert_clean(at)
    strings = EN if lang == "en" else JA
    assert at.title[0].value == strings["self_attention.title"]
    assert any(i.value == strings["common.hand_designed"] for i in at.info)
    cat = DATA.by_id(DEFAULT[lang])
    assert at.selectbox(key="sa_preset").value == cat.id
    assert at.selectbox(key="sa_token").value == cat.pronoun
    assert cat.tokens[cat.pronoun] == ("it" if lang == "en" else "それ")
    figs = plotly_figures(at)
    assert len(figs) == 5  # lines, matrix, three heads
    W = coref(cat.id)
    np.testing.assert_allclose(decode_array(figs[1]["data"][0]["z"]), W, atol=1e-12)
    np.testing.assert_allclose(key_weights(figs[0]), W[cat.pronoun], atol=1e-12)
    assert set(drawn_lines(figs[0])) == fewest_largest(list(W[cat.pronoun]), DEFAULT_CUTOFF)
    assert max(drawn_lines(figs[0]), key=drawn_lines(figs[0]).get) == cat.antecedent
    shape = figs[1]["layout"]["shapes"][0]
    assert shape["y0"] == cat.pronoun - 0.5  # the selected row is outlined
    for fig, head in zip(figs[2:], preset_heads(cat, DATA.rule_score)):
        np.testing.assert_allclose(decode_array(fig["data"][0]["z"]), head, atol=1e-12)
        assert fig["layout"]["shapes"][0]["y0"] == cat.pronoun - 0.5
    caption = " ".join(c.value for c in at.caption)
    assert f"{W[cat.pronoun, cat.antecedent]:.1%}".replace("%", " %") in caption  # the text alternative carries the key number
    assert at.get("download_button")


def test_the_english_preset_is_document_as_sentence():
    assert " ".join(DATA.by_id("animal").tokens) == "The animal did not cross the street because it was too tired"


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("preset_id", ["cat", "hanako", "animal"])
def test_a_link_that_names_a_preset_wins_over_the_language_default(lang, preset_id):
    at = open_page(PAGE, lang, query={"sa_preset": preset_id})
    assert_clean(at)
    assert at.selectbox(key="sa_preset").value == preset_id
    assert at.selectbox(key="sa_token").value == DATA.by_id(preset_id).pronoun


@pytest.mark.parametrize("path", [["hanako"], ["animal"], ["animal", "cat"]], ids="->".join)
def test_switching_preset_moves_to_its_pronoun(path):
    at = open_page(PAGE, "ja")
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
    at = open_page(PAGE, "ja")
    before = drawn_lines(plotly_figures(at)[0])
    at.selectbox(key="sa_token").set_value(0).run()
    assert_clean(at)
    figs = plotly_figures(at)
    after = drawn_lines(figs[0])
    assert after != before
    W = coref("cat")
    assert set(after) == fewest_largest(list(W[0]), DEFAULT_CUTOFF)
    assert all(tr["y"][0] == 0 for tr in line_traces(figs[0]))
    assert figs[1]["layout"]["shapes"][0]["y0"] == -0.5
    np.testing.assert_allclose(key_weights(figs[0]), W[0], atol=1e-12)


def fewest_largest(row, mass: float) -> set[int]:
    """The reference for the cut-off, as the page states it: the largest weights first until they carry ``mass`` of
    the row, then every weight as large as the last one taken."""
    kept, total = [], 0.0
    for i in sorted(range(len(row)), key=lambda i: -row[i]):
        kept.append(i)
        total += row[i]
        if total >= mass * sum(row) - 1e-12:
            break
    return {i for i in range(len(row)) if row[i] >= row[kept[-1]] * (1 - 1e-12)}


@pytest.mark.parametrize("cutoff, expected", [(1.0, 13), (0.05, 1), (0.5, 1), (0.8, 2), (0.9, 13)])  # of 13 tokens
def test_cutoff_hides_lines(cutoff, expected):
    """At 0.9 the three largest weights carry less than 90 %, and the ten equal weights after them are drawn all
    together, not some of them."""
    at = open_page(PAGE, "ja")
    at.slider(key="sa_cutoff").set_value(cutoff).run()
    assert_clean(at)
    cat = DATA.by_id("cat")
    row = coref("cat")[cat.pronoun]
    lines = drawn_lines(plotly_figures(at)[0])
    assert set(lines) == fewest_largest(list(row), cutoff)
    assert len(lines) == expected
    assert at.query_params.get("sa_cutoff") in (None, [str(cutoff)], str(cutoff))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_equal_weights_are_drawn_alike_and_the_rule_is_stated(lang):
    at = open_page(PAGE, lang, query={"sa_cutoff": "0.9"})
    assert_clean(at)
    preset = DATA.by_id(DEFAULT[lang])
    row = coref(preset.id)[preset.pronoun]
    lines = drawn_lines(plotly_figures(at)[0])
    for level in set(np.round(row, 12)):  # every weight level is drawn whole or not at all
        members = {i for i in range(len(row)) if round(row[i], 12) == level}
        assert members <= set(lines) or not members & set(lines), (level, members, sorted(lines))
    rule = (EN if lang == "en" else JA)["self_attention.lines_caption"]
    stated = rule.split("{cutoff}")[1][:30]  # the rule's words after the cut-off's share
    assert any(stated in c.value and "90 %" in c.value for c in at.caption)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_column_of_the_heat_maps_is_labelled_readably(lang):
    """Every token labels its column (none thinned out); Japanese labels are written vertically, not turned 90°."""
    at = open_page(PAGE, lang)
    tokens = DATA.by_id(DEFAULT[lang]).tokens
    for fig in plotly_figures(at)[1:5]:
        xaxis = fig["layout"]["xaxis"]
        assert list(xaxis["tickvals"]) == list(range(len(tokens)))
        assert [t.replace("<br>", "") for t in xaxis["ticktext"]] == list(tokens)
        if lang == "ja":
            assert xaxis["tickangle"] == 0 and "マ<br>ッ<br>ト" in xaxis["ticktext"]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_page_points_to_lesson_6_without_its_result(lang):
    strings = EN if lang == "en" else JA
    at = open_page(PAGE, lang)
    assert_clean(at)
    links = [(link.proto.label, link.proto.page) for link in at.get("page_link")]
    assert (strings["self_attention.glove_link"], "glove") in links
    shown = " ".join(str(getattr(el, "value", "")) for kind in ("markdown", "caption", "info", "subheader")
                     for el in at.get(kind))
    assert "GloVe" in shown
    for giveaway in ("rank", "10 of 12", "11th", "順位", " 位", "12 語中 10"):
        assert giveaway not in shown, giveaway
    asked = [r.label for r in at.radio if r.key == "sa_predict"]  # its own question (the heads), not lesson 6's
    assert len(asked) == 1 and "GloVe" not in asked[0] and strings["self_attention.predict_q"].split("{")[0] in asked[0]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_an_old_link_to_the_glove_part_opens_the_page_cleanly(lang):
    """sa_text, sa_random and sa_seed belonged to the GloVe part (now lesson 6): the page opens as it is, says where
    the experiment went, and reports no bad link."""
    query = {"sa_preset": "animal", "sa_text": "the animal was tired because it ran", "sa_random": "true",
             "sa_seed": "3"}
    at = open_page(PAGE, lang, query=query)
    assert_clean(at)
    strings = EN if lang == "en" else JA
    assert any(i.value == strings["self_attention.retired_link"] for i in at.info)
    assert at.selectbox(key="sa_preset").value == "animal"
    assert len(plotly_figures(at)) == 5
    assert at.opening_toasts == []
    assert [w.key for w in list(at.text_input) + list(at.toggle) + list(at.number_input) if w.key in query] == []


def test_no_note_without_an_old_link():
    at = open_page(PAGE)
    assert not any(i.value == EN["self_attention.retired_link"] for i in at.info)


def test_link_opens_the_same_view():
    # sa_preset is the preset's id (ui.shared.links.url_selectbox), not its label
    query = {"sa_preset": "animal", "sa_cutoff": "0.5", "sa_token": "4"}
    at = open_page(PAGE, "ja", query=query)
    assert at.selectbox(key="sa_preset").value == "animal"
    assert at.selectbox(key="sa_token").value == 4
    assert all(tr["y"][0] == 4 for tr in line_traces(plotly_figures(at)[0]))
    assert at.slider(key="sa_cutoff").value == 0.5


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_broken_link_falls_back_cleanly(lang):
    at = open_page(PAGE, lang, query={"sa_cutoff": "7", "sa_preset": "nope"})
    assert_clean(at)
    assert at.selectbox(key="sa_preset").value == DEFAULT[lang]
    assert at.selectbox(key="sa_token").value == DATA.by_id(DEFAULT[lang]).pronoun
    assert 0.05 <= at.slider(key="sa_cutoff").value <= 1.0


# ---- multi-head: three heads, concatenated, mixed by W_O ----------------------------------

@pytest.mark.parametrize("lang", ["en", "ja"])
def test_heads_are_coreference_syntax_previous_word_and_follow_the_token(lang):
    at = open_page(PAGE, lang, query={"sa_preset": "cat"})
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
    assert f"座った → 猫{sep}{heads[1][6, 0]:.1%}".replace("%", " %") in caption


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_concatenation_and_w_o_show_shapes_and_the_selected_row(lang):
    at = open_page(PAGE, lang, query={"sa_preset": "cat"})
    assert not [m for m in at.markdown if "W_O (" in m.value], "the mixing waits for the question"
    at.radio(key="sa_predict").set_value(3).run()
    strings = EN if lang == "en" else JA
    parts = multi_head_parts(preset_heads(DATA.by_id("cat"), DATA.rule_score))
    shapes = strings["self_attention.mix_shapes"].format(h=3, n=13, d_v=4, hd=12, d_model=12)
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
    at.radio(key="sa_predict").set_value(1).run()  # answered once, the mixing stays for every preset
    for preset_id, token in [("cat", 12), ("animal", 11), ("hanako", 13), ("animal", 0), ("cat", 2), ("hanako", 4)]:
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
    at = open_page(PAGE, query={"sa_preset": "animal", "sa_token": "13"})  # animal has 12 tokens
    assert_clean(at)
    assert at.selectbox(key="sa_token").value == DATA.by_id("animal").pronoun


def test_going_back_to_the_default_token_raises_no_bad_link_toast():
    at = open_page(PAGE, "ja")
    at.selectbox(key="sa_token").set_value(0).run()
    at.selectbox(key="sa_token").set_value(DATA.by_id("cat").pronoun).run()
    assert_clean(at)
    assert not at.toast, [t.value for t in at.toast]
    assert "sa_token" not in at.query_params




@pytest.mark.parametrize("lang", ["en", "ja"])
def test_csv_downloads_have_a_bom_and_headers_in_the_page_language(lang, monkeypatch):
    files = recorded_downloads(monkeypatch)
    at = open_page(PAGE, lang, query={"sa_preset": "cat"})
    at.radio(key="sa_predict").set_value(3).run()
    buttons = {b.key: files[b.proto.url] for b in at.get("download_button")}
    assert set(buttons) == {"sa_csv", "sa_head_csv_coreference", "sa_head_csv_syntax", "sa_head_csv_previous_word",
                            "sa_mix_csv"}
    assert all(data.startswith(b"\xef\xbb\xbf") for data in buttons.values())
    corner = "クエリ \\ キー" if lang == "ja" else "query \\ key"
    for key in ("sa_csv", "sa_head_csv_syntax"):
        assert buttons[key].decode("utf-8-sig").splitlines()[0].startswith(corner + ",")
    mix = buttons["sa_mix_csv"].decode("utf-8-sig").splitlines()
    assert mix[0].split(",")[:2] == (["トークン", "連結_1"] if lang == "ja" else ["token", "concat_1"])
    assert len(mix) == 1 + len(DATA.by_id("cat").tokens)
    parts = multi_head_parts(preset_heads(DATA.by_id("cat"), DATA.rule_score))
    np.testing.assert_allclose([float(x) for x in mix[1].split(",")[1:]],
                               np.concatenate([parts.concat[0], parts.output[0]]), atol=1e-6)
