"""Every page against bad input: each text box with hostile text, each slider and number at both ends.

The pages are discovered, not listed: whatever text inputs, sliders and number inputs a page has are driven.
A page passes when it shows no exception, no error box, and no NaN or inf in what it displays.
"""

import json
import math
import re

import numpy as np
import pytest

from tests.apptest_utils import decode_array, run_page
from tests.pages import PAGES

BAD_TEXTS = {
    "empty": "",
    "spaces": "     ",
    "one_token": "it",
    "too_many_tokens": " ".join(["word"] * 60),
    "ten_thousand_chars": "the cat sat on the mat " * 435,
    "unknown_only": "xqzzyv blorptang fnordle",
    "emoji": "😀 🙃 🐱",
    "japanese": "猫がマットの上に座った。それは満足そうだった。",
    "rtl": "שלום עולם مرحبا بالعالم",
    "control_chars": "the\x00cat\x07sat\x1b[31m on",
    "script": "<script>alert(1)</script>",
    "img_onerror": "<img src=x onerror=alert(1)>",
    "markdown": "**bold** [x](javascript:alert(1)) # heading",
    "latex": "$\\ $$ \\frac{1}{0} $",
}

NUMBER_WORD = re.compile(r"(?<![A-Za-z])(nan|inf|-inf)(?![A-Za-z])", re.IGNORECASE)


def shown_text(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "text", "info", "warning", "success", "metric", "latex", "subheader", "header", "title"):
        for el in at.get(kind):
            parts.append(str(getattr(el, "value", "")))
    return "\n".join(parts)


def assert_nothing_broken(at):
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    text = shown_text(at)
    assert not NUMBER_WORD.search(text.replace("-∞", "")), NUMBER_WORD.search(text)
    for el in at.get("plotly_chart"):
        fig = json.loads(el.proto.spec)
        for trace in fig.get("data", []):
            if trace.get("type") == "heatmap":
                continue  # NaN cells in heat maps are the grey masked/hidden cells by design
            for axis in ("x", "y", "z"):
                if axis in trace and trace[axis] is not None:
                    try:
                        arr = decode_array(trace[axis])
                    except (ValueError, TypeError):
                        continue  # category labels
                    if arr.dtype.kind in "fc":
                        assert np.isfinite(arr).all(), (trace.get("type"), axis)


@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
@pytest.mark.parametrize("case", list(BAD_TEXTS), ids=list(BAD_TEXTS))
def test_text_inputs_survive_bad_text(page, case):
    at = run_page(page.file)
    boxes = [b for b in list(at.text_input) + list(at.text_area) if not b.disabled]
    if not boxes:
        pytest.skip("this page has no text box")
    for box in boxes:
        box.input(BAD_TEXTS[case]).run()
        assert_nothing_broken(at)


def _ends(widget):
    lo, hi = widget.min, widget.max
    return [v for v in (lo, hi) if v is not None and not (isinstance(v, float) and math.isinf(v))]


@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
def test_sliders_and_numbers_at_both_ends(page):
    at = run_page(page.file)
    keys = [("slider", s.key) for s in at.slider] + [("number_input", n.key) for n in at.number_input]
    for kind, key in keys:
        if key is None:
            continue
        for end in ("min", "max"):
            widgets = [w for w in getattr(at, kind) if w.key == key and not w.disabled]
            if not widgets:
                continue  # the widget is hidden at this state
            w = widgets[0]
            value = getattr(w, end)
            if kind == "slider" and isinstance(w.value, tuple):
                value = (w.min, w.max)
            w.set_value(value).run()
            assert_nothing_broken(at)
