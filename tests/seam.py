"""Helpers for the page-seam tests (tests/test_page_seam_*.py): read what a page SHOWS (a figure by its widget key,
a sentence by its locale template) without going through the page's own ui/ or charts/ helpers.

Expected labels come from locales/<lang>/*.toml, read here with tomllib (not through ui.shared.i18n), so a test survives a
rewording of a sentence but fails when the page shows the wrong key, the wrong number or the wrong order."""

from __future__ import annotations

import json
import re
import tomllib
from functools import cache
from pathlib import Path

import numpy as np

from tests.apptest_utils import decode_array

LOCALES = Path(__file__).resolve().parent.parent / "locales"
LANGS = ("en", "ja")


@cache
def strings(lang: str) -> dict[str, str]:
    """Every ``<stem>.<key>`` of locales/<lang>/ (top-level string keys only)."""
    out = {}
    for path in sorted((LOCALES / lang).glob("*.toml")):
        with path.open("rb") as fh:
            for key, value in tomllib.load(fh).items():
                if isinstance(value, str):
                    out[f"{path.stem}.{key}"] = value
    return out


def figure(at, key: str) -> dict:
    """The figure JSON of the one st.plotly_chart whose widget key is ``key``."""
    found = [json.loads(el.proto.spec) for el in at.get("plotly_chart") if el.proto.id.endswith("-" + key)]
    assert len(found) == 1, (key, [el.proto.id.split("-", 2)[-1] for el in at.get("plotly_chart")])
    return found[0]


def title_text(obj) -> str | None:
    title = (obj or {}).get("title")
    return title.get("text") if isinstance(title, dict) else title


def y_title(fig: dict, axis: str = "yaxis") -> str:
    """A y axis's title where the learner reads it: Plotly's own (turned 90°) or, on a Japanese page, the horizontal
    label drawn upright above the axis instead (an annotation at the top of the axis's domain, not turned).
    Exactly one of the two is drawn: a title shown twice, or neither, fails here."""
    own = title_text(fig["layout"].get(axis)) or ""
    yref = "y" + axis.removeprefix("yaxis") + " domain"
    above = [a for a in fig["layout"].get("annotations", ()) if a.get("yref") == yref and a.get("y") == 1
             and a.get("yanchor") == "bottom" and not a.get("showarrow", True) and not a.get("textangle")]
    assert len([t for t in [own, *(a.get("text") for a in above)] if t]) == 1, (axis, own, above)
    return own or above[0]["text"]


def heatmap(fig: dict) -> np.ndarray:
    """z of the figure's (first) heat-map trace, as drawn: z[i][j] is row i (y), column j (x)."""
    traces = [tr for tr in fig["data"] if tr.get("type") == "heatmap"]
    assert traces, [tr.get("type") for tr in fig["data"]]
    return decode_array(traces[0]["z"]).astype(float)


def query_key_terms(lang: str) -> tuple[str, str]:
    """(the language's word for "query", for "key"), read where a lesson names them outside the heat maps: lesson 3's
    token-line labels, checked against lesson 2's "query q" row. Not common.axis_query / axis_key, the heat maps'
    own labels: a swap there must show as a mismatch, not travel into the expected value."""
    words = strings(lang)
    query, key = words["self_attention.query_label"], words["self_attention.key_label"]
    assert query in words["qkv.query_row"] and key not in words["qkv.query_row"], (query, key, words["qkv.query_row"])
    return query, key


def assert_attention_map(fig: dict, weights, row_labels, col_labels, lang: str, atol: float = 1e-6) -> None:
    """An attention heat map as a learner reads it: the y axis is titled "query" and lists the queries top to
    bottom, the x axis "key" and the keys, and the cell in row i, column j is query i's weight on key j."""
    query, key = query_key_terms(lang)
    layout = fig["layout"]
    xaxis, yaxis = layout["xaxis"], layout["yaxis"]
    assert title_text(xaxis) == key, ("x axis", title_text(xaxis), "expected", key)
    assert y_title(fig) == query, ("y axis", y_title(fig), "expected", query)
    assert yaxis.get("autorange") == "reversed", "the first query is the top row"
    row_at = dict(zip(yaxis["tickvals"], yaxis["ticktext"]))
    assert [row_at[i] for i in range(len(row_labels))] == [str(r) for r in row_labels]
    col_at = dict(zip(xaxis["tickvals"], xaxis["ticktext"]))
    assert col_at, "no column labels"
    for j, text in col_at.items():  # dense maps label every k-th column; the ones shown name the right key
        assert text.replace("<br>", "") == str(col_labels[j]), (j, text, col_labels[j])
    z = heatmap(fig)
    trace = next(tr for tr in fig["data"] if tr.get("type") == "heatmap")
    if "x" in trace:
        assert list(trace["x"]) == list(range(z.shape[1]))
        assert list(trace["y"]) == list(range(z.shape[0]))
    expected = np.asarray(weights, dtype=float)
    assert z.shape == expected.shape, (z.shape, expected.shape)
    shown = ~np.isnan(z)
    np.testing.assert_allclose(z[shown], expected[shown], atol=atol)


def bar_values(fig: dict) -> list[float]:
    """The bar lengths of a one-trace bar chart, in category order (the books top to bottom or left to right)."""
    bars = [tr for tr in fig["data"] if tr.get("type") == "bar"]
    assert len(bars) == 1, [tr.get("type") for tr in fig["data"]]
    bar = bars[0]
    values = decode_array(bar["x"] if bar.get("orientation") == "h" else bar["y"])
    return [float(v) for v in values]


def bar_labels(fig: dict) -> list[str]:
    bar = next(tr for tr in fig["data"] if tr.get("type") == "bar")
    axis = fig["layout"]["yaxis" if bar.get("orientation") == "h" else "xaxis"]
    if axis.get("ticktext"):
        return [unwrapped(str(s)) for s in axis["ticktext"]]
    return [str(s) for s in (bar["y"] if bar.get("orientation") == "h" else bar["x"])]


def unwrapped(label: str) -> str:
    """A tick label as one line, as a learner reads it: a line break between words stands for a space, one inside
    Japanese (written without spaces) for nothing."""
    cjk = r"\u3000-\u30ff\u3400-\u9fff\uff00-\uffef"
    label = re.sub(rf"(?<=[{cjk}])<br>|<br>(?=[{cjk}])", "", label)
    return label.replace("<br>", " ")


def template_regex(template: str) -> re.Pattern:
    """A locale sentence with ``{name}`` (or ``{name:.2f}``) fields -> a regex with one named group per field.
    Markdown emphasis (``**``) around a field is optional in the shown text (st.caption keeps it, a table does not)."""
    parts = re.split(r"(\{[a-zA-Z_]\w*(?::[^}]*)?\})", template)
    out, seen = [], set()
    for part in parts:
        m = re.fullmatch(r"\{([a-zA-Z_]\w*)(?::[^}]*)?\}", part)
        if m:
            name = m.group(1)
            out.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
            seen.add(name)
        else:
            out.append(re.escape(part))
    return re.compile("".join(out) + "$", re.DOTALL)


def find_sentences(texts, key: str, lang: str) -> list[dict[str, str]]:
    """The fields of every shown text that the locale sentence ``key`` wrote, in order."""
    pattern = template_regex(strings(lang)[key])
    return [m.groupdict() for m in (pattern.match(text.strip()) for text in texts) if m]


def find_sentence(texts, key: str, lang: str) -> dict[str, str]:
    """The fields of the one shown text that the locale sentence ``key`` wrote, e.g. {"top": "animal 77.1 %"}."""
    hits = find_sentences(texts, key, lang)
    assert len(hits) == 1, (key, len(hits), strings(lang)[key][:120])
    return hits[0]


def texts(at) -> list[str]:
    """Markdown, captions and alert boxes of the page, in order."""
    return [el.value for kind in ("markdown", "caption", "info", "success", "warning") for el in getattr(at, kind)]


def number(text: str) -> float:
    """A number as the page writes it: '77.1 %' -> 77.1, '−0.5' -> -0.5, '2,000' -> 2000, '1.7 × 10⁻⁷' -> 1.7e-7."""
    text = text.strip().replace("−", "-").replace(",", "").replace("*", "").rstrip("%").strip()
    m = re.fullmatch(r"(-?[\d.]+) × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
    if m:
        return float(m.group(1)) * 10.0 ** int(m.group(2).translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
    return float(text)


def softmax_rows(scores) -> np.ndarray:
    """Row-wise softmax written out in float64 (the reference, not the core's)."""
    s = np.asarray(scores, dtype=np.float64)
    e = np.exp(s - np.nanmax(np.where(np.isfinite(s), s, np.nan), axis=-1, keepdims=True))
    e = np.where(np.isfinite(s), e, 0.0)
    return e / e.sum(axis=-1, keepdims=True)
