"""Structural rules of the codebase: the core stays pure, the UI text stays in step across languages."""

import ast
import re
import string
import sys
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


def core_imports(path: Path) -> set[str]:
    """The attention_core modules a file imports, as dotted names (``from attention_core.gpt_studies import heads`` gives
    attention_core.gpt_studies and attention_core.gpt_studies.heads; a name that is no module, e.g. a function, is
    dropped). Imports inside functions count too: a lazy import is still an import."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return {name for name in names if name.startswith(("attention_core.", "ui.")) and module_exists(name)}


def module_exists(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


CORE = ROOT / "attention_core"
CORE_ROOMS = sorted(p.name for p in CORE.iterdir() if (p / "__init__.py").is_file())
MECHANISM = sorted(p for p in CORE.glob("*.py") if p.name != "__init__.py")  # the index re-exports the GloVe loader
# In each model's room, the modules that measure what the lesson claims; every other module is the model itself
MEASUREMENT = {"smollm2": set(), "gemma": set(), "pretrained": {"sets", "heads", "measure"}}
GPT_MODELS = ("smollm2", "gemma")  # the GPTs: each imports the shared room (gpt) and no study of it (gpt_studies)


def test_the_core_is_laid_out_in_rooms():
    assert {"glove", "gpt", "gpt_studies", "measure", "pretrained", "smollm2", "tiny_gpt"} <= set(CORE_ROOMS)
    flat = {p.stem for p in MECHANISM}
    # no room's files left at the top under a shared prefix (gpt_*.py, pretrained_*.py, glove_*.py, bert_*.py ...)
    assert not {name for name in flat if name.split("_")[0] in {*CORE_ROOMS, "bert", "head", "wordpiece"}}


@pytest.mark.parametrize("path", MECHANISM, ids=lambda p: p.name)
def test_the_mechanism_imports_no_model(path):
    rooms = {name.split(".")[1] for name in core_imports(path) if name.startswith("attention_core.")}
    assert not rooms & set(CORE_ROOMS), f"{path.name} imports the room(s) {rooms & set(CORE_ROOMS)}"


@pytest.mark.parametrize("room", sorted(MEASUREMENT))
def test_a_model_imports_no_measurement(room):
    for path in sorted((CORE / room).glob("*.py")):
        if path.stem in MEASUREMENT[room] or path.stem == "__init__":
            continue
        measuring = ({f"attention_core.{room}.{m}" for m in MEASUREMENT[room]}
                     | {"attention_core.measure", "attention_core.gpt_studies"})
        found = {name for name in core_imports(path) if any(name == m or name.startswith(m + ".") for m in measuring)}
        assert not found, f"{path.relative_to(ROOT)} (the model) imports measurement: {sorted(found)}"


def test_the_shared_gpt_room_imports_no_model_and_no_study():
    """attention_core.gpt serves every GPT: a model imports it, never the other way round (no circle through a lazy
    import), and the studies sit beside the models (gpt_studies), not inside the shared room."""
    for path in sorted((CORE / "gpt").glob("*.py")):
        found = {n for n in core_imports(path) if n.split(".")[1] in {*GPT_MODELS, "gpt_studies"}}
        assert not found, f"{path.relative_to(ROOT)} imports {sorted(found)}"


def import_graph(*rooms: Path) -> dict[str, set[str]]:
    """-> {module: the modules it imports (at the top or inside a function)} over the packages under `rooms`, as
    dotted names; a package's __init__ re-exporting its own modules is left out (not a cycle worth naming)."""
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
               for room in rooms for p in room.rglob("*.py")}
    graph = {name: {n for n in core_imports(path) if n in modules and n != name} for name, path in modules.items()}
    for name in graph:
        graph[name] = {n for n in graph[name] if not (modules[n].name == "__init__.py" and name.startswith(n + "."))}
    return graph


def assert_no_cycle(graph: dict[str, set[str]]) -> None:
    state: dict[str, int] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        state[name] = 1
        for nxt in sorted(graph[name]):
            assert state.get(nxt) != 1, "import cycle: " + " -> ".join((*path, name, nxt))
            if nxt not in state:
                visit(nxt, (*path, name))
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, ())


def test_the_core_has_no_import_cycle():
    """Module A imports B (at the top or inside a function) and B imports A back, directly or through others: none."""
    assert_no_cycle(import_graph(CORE))


def test_the_ui_has_no_import_cycle():
    """The same over the ui packages and the core together: a section's start-up work, a disk decorator and the page
    it serves import one way (a registry imports the sections; a module both sides need sits below both)."""
    graph = import_graph(ROOT / "ui", CORE)
    assert "ui.heads.study" in graph and "ui.gpt.serving" in graph  # (the rooms are read)
    assert_no_cycle(graph)


def test_the_cycle_check_finds_a_lazy_cycle(tmp_path, monkeypatch):
    """assert_no_cycle fails on a circle closed by an import inside a function (as ui/heads/study.py's once did)."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    room = tmp_path / "ui" / "lesson"
    room.mkdir(parents=True)
    (tmp_path / "ui" / "__init__.py").write_text("")
    (room / "__init__.py").write_text("")
    (room / "study.py").write_text("def work():\n    from ui.lesson.section import reading\n")
    (room / "section.py").write_text("from ui.lesson.study import work\n")
    graph = import_graph(tmp_path / "ui")
    assert graph["ui.lesson.study"] == {"ui.lesson.section"} and graph["ui.lesson.section"] == {"ui.lesson.study"}
    with pytest.raises(AssertionError, match="import cycle"):
        assert_no_cycle(graph)


def test_the_measurement_toolkit_imports_no_model():
    for path in sorted((CORE / "measure").glob("*.py")):
        assert not {n for n in core_imports(path) if n.split(".")[1] in set(CORE_ROOMS) - {"measure"}}, path.name


# A lesson's ui imports ui.shared, its own ui room, its own core room, the mechanism, the measurement toolkit and the
# GloVe loader every lesson may use; beyond that only these, each for a reason the lesson gives on screen.
UI_ALSO = {
    "glove": {"attention_core.pretrained"},  # lesson 6 puts lesson 8's trained encoder beside its trained head
    "pretrained": {"attention_core.glove.pronouns"},  # lesson 8 reads lesson 6's pronoun sentences
    "transformer": {"attention_core.pretrained"},  # lesson 7 shows the real model's sizes
    # lesson 9 runs a GPT (the shared room is its own stem, gpt) and measures it: SmolLM2, or Gemma 3 on the prompt
    "gpt": {"attention_core.smollm2", "attention_core.gemma", "attention_core.gpt_studies"},
    # "What heads do" tests lesson 9's model (and loads it the same way)
    "heads": {"attention_core.gpt", "attention_core.smollm2", "attention_core.gpt_studies"},
    # "Watch a head form" ends on lesson 9's study of the real model (its shared, disk-kept result) beside its own run
    # "Attention as it is built today" runs Gemma, measures it, and sets SmolLM2's tokens and KV cache beside it
    "modern": {"attention_core.gemma", "attention_core.gpt", "attention_core.gpt_studies", "attention_core.smollm2"},
    "tiny_gpt": {"attention_core.smollm2.weights", "attention_core.gpt.float_cache", "ui.gpt.study", "ui.gpt.page"},
}
# (ui/summary.py is not among them: the summary draws one live figure from every lesson, so it imports them all)
UI_FILES = sorted(p for p in (ROOT / "ui").rglob("*.py")
                  if p.parent.name != "shared" and p.name not in ("__init__.py", "summary.py"))


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: p.relative_to(ROOT / "ui").as_posix())
def test_a_lessons_ui_imports_only_its_own_room_and_shared_pieces(path):
    stem = path.relative_to(ROOT / "ui").parts[0].removesuffix(".py")
    allowed_core = {"measure", "glove" if stem == "glove" else None, stem}
    wrong = set()
    for name in core_imports(path):
        parts = name.split(".")
        also = any(name == other or name.startswith(other + ".") for other in UI_ALSO.get(stem, ()))
        if parts[0] == "ui" and parts[1] not in ("shared", stem) and not also:
            wrong.add(name)
        elif parts[0] == "attention_core" and parts[1] in CORE_ROOMS and parts[1] not in allowed_core:
            glove_loader = parts[1] == "glove" and len(parts) == 2
            if not glove_loader and not also:
                wrong.add(name)
    assert not wrong, f"ui/{path.relative_to(ROOT / 'ui')} imports another lesson's room: {sorted(wrong)}"


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
    assert PAGES[-1].section == "summary" and PAGES[-2].section in ("heads", "tiny_gpt")  # the summary closes the lesson


def test_the_sidebar_lists_every_lesson_without_a_click():
    """Past twelve pages Streamlit 1.67 shows ten and a "View more" button unless st.navigation(expanded=True): the
    summary and the last lessons would hide behind it (tests/browser/test_gpt.py clicks the summary's link)."""
    from tests.pages import PAGES

    calls = [node for node in ast.walk(ast.parse((ROOT / "streamlit_app.py").read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "navigation"]
    assert len(calls) == 1 and len(PAGES) > 12
    assert any(k.arg == "expanded" and getattr(k.value, "value", None) is True for k in calls[0].keywords)
