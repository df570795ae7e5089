"""Helpers for AppTest-based page tests: open a page, read back the figures it drew."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "streamlit_app.py")


def run_page(file: str, lang: str = "en", timeout: float = 60, query: dict | None = None) -> AppTest:
    """Run the entry point with ?lang=<lang> (and any other query params), then switch to ``file``."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params["lang"] = lang
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if file != "lessons/home.py":
        at.switch_page(file).run()
    return at


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
