"""Structural rules of the codebase: the core stays pure, the UI text stays in step across languages."""

import ast
import re
import string
from pathlib import Path

import pytest

from ui.shared.i18n import LANGUAGES, LOCALES_DIR, load_strings

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "attention_core").rglob("*.py")), ids=lambda p: p.name)
def test_core_imports_no_ui_package(path):
    assert not imported_modules(path) & {"streamlit", "plotly", "altair"}


@pytest.mark.parametrize("path", sorted((ROOT / "charts").glob("*.py")), ids=lambda p: p.name)
def test_charts_never_import_streamlit(path):
    assert "streamlit" not in imported_modules(path)


def test_both_languages_have_the_same_keys():
    en, ja = load_strings("en"), load_strings("ja")
    assert sorted(set(en) - set(ja)) == [], "keys missing in Japanese"
    assert sorted(set(ja) - set(en)) == [], "keys missing in English"
    assert {p.name for p in (LOCALES_DIR / "en").glob("*.toml")} == {p.name for p in (LOCALES_DIR / "ja").glob("*.toml")}


def test_placeholders_match_across_languages():
    en, ja = load_strings("en"), load_strings("ja")
    fields = lambda s: sorted({f for _, f, _, _ in string.Formatter().parse(s) if f})
    for key in en:
        assert fields(en[key]) == fields(ja.get(key, "")), key


def test_no_empty_strings():
    for lang in LANGUAGES:
        assert [k for k, v in load_strings(lang).items() if not v.strip()] == []


def test_every_used_key_exists():
    """Every literal t("section.key") in the code names a key that exists."""
    en = load_strings("en")
    used = set()
    for path in list(ROOT.glob("lessons/*.py")) + list(ROOT.glob("ui/**/*.py")) + [ROOT / "streamlit_app.py"]:
        used |= set(re.findall(r"""\bt\(\s*["']([a-z_]+\.[a-z0-9_]+)["']""", path.read_text(encoding="utf-8")))
    assert sorted(k for k in used if k not in en and k != "section.key") == []


@pytest.mark.parametrize("path", sorted((ROOT / "lessons").glob("*.py")), ids=lambda p: p.name)
def test_pages_do_no_math_and_stay_short(path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert not re.search(r"np\.(exp|linalg|einsum)|@ .*\.T\b", text)


def test_no_unsafe_html_outside_tests():
    offenders = [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*.py")
        if ".venv" not in p.parts and "tests" not in p.parts and re.search(r"unsafe_allow_html\s*=\s*True", p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_no_pages_folder():
    """Streamlit 1.67 runs a pages/ folder as a v1 multipage app until st.navigation has run once in the
    process, so the first deep link after a restart would open a lesson without the frame. Lessons live in lessons/."""
    assert not (ROOT / "pages").exists()


def test_every_page_of_the_frame_is_in_the_test_list_and_on_the_home_map():
    """streamlit_app.py's st.Page entries, tests/pages.py and the home page's lesson map name the same pages."""
    from tests.pages import PAGES
    from ui.home import LESSONS

    lines = [line for line in (ROOT / "streamlit_app.py").read_text(encoding="utf-8").splitlines() if "st.Page(" in line]
    frame = [(re.search(r'st\.Page\("([^"]+)"', line).group(1), "".join(re.findall(r'url_path="([^"]*)"', line)))
             for line in lines]
    assert frame == [(p.file, p.url_path) for p in PAGES]
    assert [file for file, _ in LESSONS] == [p.file for p in PAGES[1:]]
    assert PAGES[-1].section == "summary" and PAGES[-2].section == "gpt"  # the summary closes the lesson
