"""Japanese terminology and punctuation: locales/glossary.toml names one Japanese term per concept
and its forbidden variants; every Japanese UI text is checked against it and against the full-width punctuation rules.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.apptest_utils import assert_clean, open_page
from ui.shared.i18n import LOCALES_DIR, load_strings

GLOSSARY = tomllib.loads((LOCALES_DIR / "glossary.toml").read_text(encoding="utf-8"))
JA = f"[{GLOSSARY['punctuation']['japanese_chars']}]"
ASCII_COMMA = re.compile(f"{JA}\\s*, *{JA}")  # "猫, 犬": a list of Japanese items takes 、
ASCII_PAREN = re.compile(f"(?<![A-Za-z])\\([^()]*{JA}[^()]*\\)")  # "(スコア)" takes （）; "(a)", "(P X)", "softmax(スコア)" stay
SPACE_AFTER_STOP = re.compile("。[ \u00a0]")


def japanese_texts() -> dict[str, str]:
    return load_strings("ja")


def violations(text: str) -> list[str]:
    found = [f"forbidden {bad!r} (use {term['ja']!r})" for term in GLOSSARY["term"] for bad in term["forbidden"]
             if bad in text]
    found += [f"ASCII comma in {m.group(0)!r}" for m in ASCII_COMMA.finditer(text)]
    found += [f"ASCII parentheses in {m.group(0)!r}" for m in ASCII_PAREN.finditer(text)]
    found += [f"half-width space after 。 in {text[max(m.start() - 8, 0):m.end() + 8]!r}"
              for m in SPACE_AFTER_STOP.finditer(text)]
    return found


def test_glossary_is_well_formed():
    terms = GLOSSARY["term"]
    assert len(terms) >= 6
    for term in terms:
        assert term["ja"] and term["forbidden"], term
        assert all(bad not in term["ja"] for bad in term["forbidden"]), term
    assert {t["ja"] for t in terms} >= {"アテンション", "セルフアテンション", "リークテスト", "一時停止", "再生"}


def test_every_japanese_text_follows_the_glossary_and_punctuation():
    bad = {key: v for key, text in japanese_texts().items() if (v := violations(text))}
    assert bad == {}


def test_the_preferred_terms_are_the_ones_used():
    texts = "\n".join(japanese_texts().values())
    for term in ("アテンション", "セルフアテンション", "リークテスト", "一時停止", "再生", "次元 d（q と k の要素数）",
                 "位置番号", "ポストノルム", "KV キャッシュ", "スマートフォン", "選択欄"):
        assert term in texts, term


def test_the_check_catches_each_rule():
    assert violations("自己注意の仕組み")
    assert violations("漏れテストを実行")
    assert violations("❚❚ 停止")
    assert violations("次元 d（q と k の長さ）")
    assert violations("惜しい。")
    assert violations("猫, 犬, 鳥")
    assert violations("重み (スコア) を見る")
    assert violations("です。 次に")
    assert violations("次のトークンを写すヘッド") and violations("ヘッドが形成した")  # lesson 11: コピーする, 形成されました
    assert violations("セルフアテンション、リークテスト。次に f(x) = 1 と d = 64 (q, k)、(a) 生のベクトル") == []


@pytest.mark.parametrize("answer", [1, 2])
def test_prediction_feedback_reads_as_japanese(answer):
    """Right or wrong, the feedback is neutral and joined without a half-width space after 。."""
    at = open_page("scaling", "ja")
    at.radio(key="scaling_predict").set_value(answer).run()
    assert_clean(at)
    shown = [box.value for box in list(at.success) + list(at.warning)]
    assert len(shown) == 1 and violations(shown[0]) == [], shown
    assert shown[0].startswith(load_strings("ja")["common.predict_wrong"].split("{")[0] + "「")


# ---- one number style per language, in every locale file as written ----------------------------------------------

# locales/*/pretrained.toml is engineer H4's and gpt.toml engineer H2's: each applies the same rules to its own file.
NUMBER_STYLE_ELSEWHERE = ("pretrained", "gpt")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_locale_text_follows_the_number_style(lang):
    """tests/number_style.py's rules (50 %, 2,000, 1.7 × 10⁻⁷, 、 in a Japanese list) on every text of the locale."""
    from tests.number_style import locale_problems

    assert locale_problems(lang, skip=NUMBER_STYLE_ELSEWHERE) == {}


def test_the_number_style_check_catches_a_share_without_its_space():
    from tests.number_style import text_problems

    assert text_problems(["猫 78.9%、犬 10.0 %"], "ja") and text_problems(["50% of the weight"], "en")
    assert text_problems(["50 % of the weight", "%{y:.1%}"], "en") == []


def test_lesson_1_says_tokens_in_its_caption_as_in_its_answer():
    """Lesson 1 counted "38 words" in a caption and "38 tokens" in its answer: one word for the same count."""
    for lang, word in (("en", "tokens"), ("ja", "トークン")):
        strings = load_strings(lang)
        assert strings["rnn.fig1_caption"].startswith("{n} " + word)
        assert "{n} " + word in strings["rnn.predict_number"]


def test_lesson_11_says_copy_and_formed_as_the_glossary_does_with_one_range_separator():
    """Lesson 11 said 写す for what the glossary calls コピーする and 形成した for a head that training formed; its
    ranges take 〜, never an en dash."""
    strings = {k: v for k, v in load_strings("ja").items() if k.startswith("tiny_gpt.")}
    text = "\n".join(strings.values())
    assert "コピーする" in text and "写" not in text and "形成した" not in text
    assert strings["tiny_gpt.at_step"].endswith("形成されました") and strings["tiny_gpt.never"] == "形成されませんでした"
    assert "–" not in text and "〜" in strings["tiny_gpt.flat_found"]


def test_lesson_10_says_its_terms_as_the_glossary_does_with_one_range_separator():
    """Lesson 10 said 切る beside 止める, 直前トークンのヘッド, シンクのヘッド, 普通/ふつう, くり返し/繰り返し, 作った名前 and
    休ませる; its ranges took both – and 〜; it called mean-ablation a 対照 (a control)."""
    strings = {k: v for k, v in load_strings("ja").items() if k.startswith(("heads.", "heads_"))}
    text = "\n".join(strings.values())
    for bad in ("ヘッドを切", "直前トークンのヘッド", "シンクのヘッド", "普通", "くり返", "作った名前", "休ませ", "–"):
        assert bad not in text, bad
    assert "止める" in text and "直前トークンヘッド" in text and "シンクヘッド" in text and "架空の名前" in text
    assert "〜" in strings["heads.off_numbers"]
    assert "対照ではありません" in strings["heads.off_numbers"]
    english = load_strings("en")["heads.off_numbers"]
    assert "not a control" in english and "gentler control" not in english
