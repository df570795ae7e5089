"""How a page writes numbers and lists, read off everything it shows (tests/visible_text.py plus the cells of its
tables): a power of ten as 1.7 × 10⁻⁷ (never 1.7e-07), a count of thousands with its separator (2,000), a share with
a space before its sign in both languages (50 %, never 50%), and in Japanese a list joined with 、 (never an ASCII ", "
before a Japanese word). ``locale_problems`` applies the same rules to every text of a locale as written."""

from __future__ import annotations

import re

from tests.visible_text import visible_texts

E_NOTATION = re.compile(r"\d(?:\.\d+)?e[-+]?\d+", re.IGNORECASE)
# Four or more digits with no separator, not part of a decimal or a grouped number. 1024, the largest d, is a
# setting's value written as its slider writes it ("d = 1024"), not a count.
UNGROUPED = re.compile(r"(?<![\d.,])(?!1024(?![\d,]|\.\d))\d{4,}(?![\d,]|\.\d)")
ASCII_LIST_IN_JAPANESE = re.compile("[^\\s], (?=[\u3040-\u30ff\u3400-\u9fff])")
PERCENT_WITHOUT_SPACE = re.compile(r"\d%")


def shown_texts(at) -> list[str]:
    """Every visible text of the page, with the cells of its tables."""
    texts = visible_texts(at)
    for table in at.dataframe:
        texts += [str(v) for v in table.value.to_numpy().ravel()]
    return texts


def number_style_problems(at, lang: str) -> list[str]:
    """Every number or list the page shows that breaks a rule above (empty: none)."""
    return text_problems(shown_texts(at), lang)


def text_problems(texts, lang: str) -> list[str]:
    """The rules above applied to a list of texts."""
    problems = []
    for text in texts:
        text = re.sub(r"%\{[^}]*\}", "", text)  # a hover template's fields: Plotly formats them in the browser
        problems += [f"e-notation {m.group(0)!r} in {text[:80]!r}" for m in E_NOTATION.finditer(text)]
        problems += [f"no thousands separator {m.group(0)!r} in {text[:80]!r}" for m in UNGROUPED.finditer(text)]
        problems += [f"no space before % in {text[max(m.start() - 30, 0):m.end() + 10]!r}"
                     for m in PERCENT_WITHOUT_SPACE.finditer(text)]
        if lang == "ja":
            problems += [f"ASCII list comma in {text[max(m.start() - 20, 0):m.end() + 10]!r}"
                         for m in ASCII_LIST_IN_JAPANESE.finditer(text)]
    return problems


def locale_problems(lang: str, skip: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """key -> the rules above broken by that locale text as written ({placeholders} left out), for every file of the
    language except ``skip`` (file stems)."""
    from ui.shared.i18n import load_strings

    found = {}
    for key, text in load_strings(lang).items():
        if key.split(".")[0] in skip or re.fullmatch(r"[\d.e+-]+", text):
            continue  # (a bare number is a setting the code reads, e.g. the unit a count is written in: not prose)
        problems = text_problems([re.sub(r"\{[^{}]*\}", "", text)], lang)
        problems += [f"no space before % after a value in {text[max(m.start() - 30, 0):m.end() + 10]!r}"
                     for m in re.finditer(r"\}%", text)]
        if problems:
            found[key] = problems
    return found
