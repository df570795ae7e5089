"""Helpers for AppTest-based page tests: open a page (and check it is the page asked for), read back its figures.

Every test opens a page through ``open_page``; none calls AppTest.from_file or switch_page itself."""

from __future__ import annotations

import base64
import json
import tomllib
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from tests.pages import HOME, page

APP = str(Path(__file__).resolve().parent.parent / "streamlit_app.py")
LOCALES = Path(__file__).resolve().parent.parent / "locales"
DEFAULT_LANG = "en"  # what the frame falls back to for a ?lang= it does not know


def page_title(section: str, lang: str) -> str:
    """``<section>.title`` of locales/<lang>/<section>.toml (read here, not through the app's own loader)."""
    known = {d.name for d in LOCALES.iterdir() if d.is_dir()}
    path = LOCALES / (lang if lang in known else DEFAULT_LANG) / f"{section}.toml"
    with path.open("rb") as fh:
        return tomllib.load(fh)["title"]


def assert_page_drawn(at: AppTest, section: str, lang: str = "en") -> None:
    """The last run drew the page of ``section``, in ``lang``: its title is the page's first title."""
    assert at.title, f"no title drawn, {section!r} was asked for; exceptions: {[e.message for e in at.exception]}"
    expected = page_title(section, lang)
    assert at.title[0].value == expected, f"asked for {section!r} ({lang}), drew {at.title[0].value!r}"


def open_page(section: str, lang: str = "en", query: dict | None = None, timeout: float = 60) -> AppTest:
    """Open the page of ``section`` as a link /<page>?lang=<lang>&<query> does, and check it is that page.

    The frame runs first with the query parameters, then the page: AppTest's switch_page before the first run
    draws the home page for pages with a url_path. ``at.opening_toasts`` keeps the toasts of both runs (the frame
    reports a link value it drops in the run that drops it)."""
    info = page(section)
    wait_for_startup_work(section)
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params["lang"] = lang
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    toasts = [t.value for t in at.toast]
    if info.file != HOME.file:
        at.switch_page(info.file).run()
        toasts += [t.value for t in at.toast]
    assert_page_drawn(at, section, (query or {}).get("lang", lang))
    at.opening_toasts = toasts
    return at


# Lesson 10 draws a waiting box (which reruns the page by itself in a browser) until its start-up work is done: a test
# reads the page as a class meets it after the server's start-up, so that work (on disk after dev.py's build) is
# waited for first. Its own waiting tests replace these objects in ui.heads.results; the originals are waited for.
STARTUP_FIRST = {"heads": (("ui.heads.study", ("BASE", "BAND", "DEFAULTS")), ("ui.heads.referent", ("REFERENT",)))}


def wait_for_startup_work(section: str) -> None:
    import importlib

    for module_name, names in STARTUP_FIRST.get(section, ()):
        module = importlib.import_module(module_name)
        for name in names:
            try:
                getattr(module, name).result()
            except Exception:  # noqa: BLE001 - a missing model: the page says so itself
                pass


def plotly_figures(at: AppTest) -> list[dict]:
    """The figure JSON of every st.plotly_chart on the page, in order."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def decode_array(value) -> np.ndarray:
    """A Plotly figure array (a list, or Plotly 6+'s {"bdata", "dtype", "shape"}) -> numpy array."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        if shape:
            arr = arr.reshape([int(s) for s in str(shape).split(",")] if isinstance(shape, str) else shape)
        return arr
    return np.asarray(value, dtype=float)


def assert_clean(at: AppTest) -> None:
    """No exception and no error box on the page."""
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def recorded_downloads(monkeypatch):
    """Make AppTest keep every media file it stores (downloads): {url: bytes}."""
    import streamlit.testing.v1.app_test as app_test
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    files = {}

    class Recording(MemoryMediaFileStorage):
        def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):
            file_id = super().load_and_get_id(path_or_data, mimetype, kind, filename)
            files[self.get_url(file_id)] = path_or_data
            return file_id

    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", Recording)
    return files
