"""The QKV library core against independent references: naive loops with math.exp, brute-force geometry, limits."""

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core.qkv import (
    PresetError,
    centroid,
    convex_hull,
    dot_product_expression,
    dot_products,
    load_library,
    lookup,
    matching_query,
    output_path,
    rgb_hex,
    rgb_plane,
    temperature_sweep,
    weighted_sum_expression,
    zero_temperature_output,
)
from attention_core.presets import DATA_DIR
from tests.hypothesis_budget import examples

LIB = load_library()
KEYS, VALUES = LIB.keys, LIB.values
queries = arrays(np.float64, 4, elements=st.floats(-3, 3, allow_nan=False, width=32))
temperatures = st.floats(0.05, 20.0)


def naive_lookup(q, keys, values, temperature):
    """The soft lookup as written: dot products by loops, softmax with math.exp, the weighted sum by loops."""
    scores = [sum(q[c] * k[c] for c in range(len(q))) / temperature for k in keys]
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    weights = [e / sum(exps) for e in exps]
    out = [sum(weights[i] * values[i][c] for i in range(len(values))) for c in range(len(values[0]))]
    return np.array(scores), np.array(weights), np.array(out)


def inside_polygon(point, corners, tol=1e-7):
    """point (2,) inside or on the counter-clockwise polygon ``corners`` (h, 2)."""
    n = len(corners)
    for i in range(n):
        a, b = corners[i], corners[(i + 1) % n]
        if (b[0] - a[0]) * (point[1] - a[1]) - (b[1] - a[1]) * (point[0] - a[0]) < -tol * (1 + np.abs(corners).max()) ** 2:
            return False
    return True


# --- the preset ---------------------------------------------------------------------------------------------


def test_preset_shape_and_default_query():
    assert [f.id for f in LIB.features] == ["cats", "feelings", "dogs", "cooking"]
    assert len(LIB.books) == 4 and KEYS.shape == (4, 4) and VALUES.shape == (4, 3)
    assert LIB.queries[0].text["en"] == "I want to know how cats feel"
    assert len(LIB.queries) >= 4
    assert ((VALUES >= 0) & (VALUES <= 255)).all()


def test_default_query_gives_the_cat_psychology_book_about_79_percent():
    found = lookup(LIB.queries[0].vector, KEYS, VALUES, LIB.default_temperature)
    assert LIB.books[found.best].id == "cat_mind"
    assert 0.785 <= found.weights[found.best] <= 0.795
    _, ref, _ = naive_lookup(LIB.queries[0].vector, KEYS, VALUES, LIB.default_temperature)
    assert ref[0] == pytest.approx(math.exp(4) / (math.exp(4) + math.exp(1) + math.exp(1.5) + math.exp(2)))


def test_no_preset_query_is_a_hard_pick_at_temperature_one():
    """Every preset query ends in a blend: the best book gets less than 95 %, the worst more than 0."""
    for q in LIB.queries:
        w = lookup(q.vector, KEYS, VALUES, 1.0).weights
        assert w.max() < 0.95 and w.min() > 0.0, q.id


# --- the lookup against the naive reference -------------------------------------------------------------------


@settings(max_examples=examples(150), deadline=None)
@given(q=queries, tau=temperatures)
def test_weights_sum_to_one_and_output_is_the_convex_combination(q, tau):
    found = lookup(q, KEYS, VALUES, tau)
    scores, weights, out = naive_lookup(q, KEYS, VALUES, tau)
    np.testing.assert_allclose(found.scores, scores, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(found.weights, weights, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(found.output, out, rtol=1e-9, atol=1e-9)
    assert found.total == pytest.approx(1.0, abs=1e-12)
    assert (found.weights >= 0).all()
    np.testing.assert_allclose(found.contributions.sum(axis=0), found.output, atol=1e-9)
    # a convex combination stays within the values' range, channel by channel ...
    assert (found.output >= VALUES.min(axis=0) - 1e-9).all() and (found.output <= VALUES.max(axis=0) + 1e-9).all()
    # ... and inside their hull on the colour plane
    points = rgb_plane(VALUES)
    assert inside_polygon(rgb_plane(found.output), points[convex_hull(points)])


def test_dot_products_match_a_loop():
    q = np.array([1.5, -2.0, 0.25, 3.0])
    expected = [sum(q[c] * k[c] for c in range(4)) for k in KEYS]
    np.testing.assert_allclose(dot_products(q, KEYS), expected)
    with pytest.raises(ValueError):
        dot_products([1.0, 2.0], KEYS)


def test_scores_are_dot_products_over_temperature_without_sqrt_d():
    found = lookup(LIB.queries[0].vector, KEYS, VALUES, 2.0)
    np.testing.assert_allclose(found.dots, [4.0, 1.0, 1.5, 2.0])
    np.testing.assert_allclose(found.scores, [2.0, 0.5, 0.75, 1.0])


# --- the temperature limits -----------------------------------------------------------------------------------


@pytest.mark.parametrize("query", LIB.queries[:-1], ids=lambda q: q.id)
def test_cold_limit_is_the_argmax_books_value(query):
    best = int(np.argmax(dot_products(query.vector, KEYS)))
    np.testing.assert_allclose(zero_temperature_output(query.vector, KEYS, VALUES), VALUES[best])
    np.testing.assert_allclose(lookup(query.vector, KEYS, VALUES, 1e-3).output, VALUES[best], atol=1e-6)


def test_cold_limit_with_a_tie_is_the_mean_of_the_tied_books():
    q = np.array([0.0, 1.0, 0.0, 0.0])  # cat_mind and emotions both score 2
    np.testing.assert_allclose(zero_temperature_output(q, KEYS, VALUES), (VALUES[0] + VALUES[3]) / 2)
    np.testing.assert_allclose(lookup(q, KEYS, VALUES, 1e-4).output, (VALUES[0] + VALUES[3]) / 2, atol=1e-6)


@settings(max_examples=examples(50), deadline=None)
@given(q=queries)
def test_hot_limit_is_the_centroid(q):
    np.testing.assert_allclose(lookup(q, KEYS, VALUES, 1e7).output, centroid(VALUES), atol=1e-3)
    np.testing.assert_allclose(centroid(VALUES), [sum(v[c] for v in VALUES) / 4 for c in range(3)])


def test_zero_query_is_uniform_at_every_temperature():
    for tau in (0.05, 1.0, 20.0):
        found = lookup(np.zeros(4), KEYS, VALUES, tau)
        np.testing.assert_allclose(found.weights, 0.25)
        assert found.all_tied
        np.testing.assert_allclose(found.output, centroid(VALUES))
    assert not lookup(LIB.queries[0].vector, KEYS, VALUES, 1.0).all_tied


def test_output_path_matches_lookup_and_moves_from_argmax_to_centroid():
    q = LIB.queries[0].vector
    temps = temperature_sweep(0.01, 1000.0, 41)
    assert temps[0] == pytest.approx(0.01) and temps[-1] == pytest.approx(1000.0)
    np.testing.assert_allclose(np.diff(np.log(temps)), np.log(1e5) / 40)
    path = output_path(q, KEYS, VALUES, temps)
    assert path.shape == (41, 3)
    for tau, point in zip(temps[::10], path[::10]):
        np.testing.assert_allclose(point, lookup(q, KEYS, VALUES, tau).output, atol=1e-9)
    np.testing.assert_allclose(path[0], VALUES[0], atol=1e-6)
    np.testing.assert_allclose(path[-1], centroid(VALUES), atol=0.5)
    dist = np.linalg.norm(path - VALUES[0], axis=1)
    assert (np.diff(dist) >= -1e-9).all(), "heating moves the output steadily away from the best book"
    with pytest.raises(ValueError):
        output_path(q, KEYS, VALUES, [0.0, 1.0])
    with pytest.raises(ValueError):
        temperature_sweep(2.0, 1.0)


def test_softmax_input_is_stable_at_the_slider_extremes():
    q = np.array([3.0, 3.0, -3.0, 3.0])
    found = lookup(q, KEYS, VALUES, 0.05)
    assert np.isfinite(found.weights).all() and np.isfinite(found.output).all()
    assert found.total == pytest.approx(1.0)


# --- geometry -------------------------------------------------------------------------------------------------


def test_rgb_plane_known_points_and_linearity():
    np.testing.assert_allclose(rgb_plane([255, 0, 0]), [255, 0])
    np.testing.assert_allclose(rgb_plane([128, 128, 128]), [0, 0], atol=1e-12)
    np.testing.assert_allclose(rgb_plane([0, 255, 0]), [-127.5, 255 * math.sqrt(3) / 2])
    w = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(rgb_plane(w @ VALUES), w @ rgb_plane(VALUES))
    with pytest.raises(ValueError):
        rgb_plane([1, 2])


@settings(max_examples=examples(100), deadline=None)
@given(pts=arrays(np.float64, (9, 2), elements=st.floats(-100, 100, allow_nan=False, width=32)))
def test_convex_hull_contains_every_point(pts):
    hull = convex_hull(pts)
    assert len(set(hull.tolist())) == len(hull)
    if len(hull) >= 3:
        corners = pts[hull]
        area2 = sum(corners[i, 0] * corners[(i + 1) % len(hull), 1] - corners[(i + 1) % len(hull), 0] * corners[i, 1]
                    for i in range(len(hull)))
        assert area2 > 0, "counter-clockwise"
        assert all(inside_polygon(p, corners) for p in pts)


def test_convex_hull_degenerate_cases_and_the_library():
    assert convex_hull([[1.0, 1.0]]).tolist() == [0]
    assert convex_hull([[2.0, 2.0], [2.0, 2.0]]).tolist() == [0]
    assert sorted(convex_hull([[0, 0], [1, 1], [2, 2], [3, 3]]).tolist()) == [0, 3]
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]])
    assert sorted(convex_hull(square).tolist()) == [0, 1, 2, 3]
    assert sorted(convex_hull(rgb_plane(VALUES)).tolist()) == [0, 1, 2, 3], "all four books are corners"


# --- text helpers ---------------------------------------------------------------------------------------------


def test_dot_product_expression_writes_the_arithmetic_out():
    assert dot_product_expression(LIB.queries[0].vector, KEYS[0]) == "1.0×2.0 + 1.0×2.0 + 0.0×0.0 + 0.0×0.0 = 4.00"
    assert dot_product_expression([-1.0, 0.5], [2.0, -0.4]) == "(−1.0)×2.0 + 0.5×(−0.4) = −2.20"
    assert dot_product_expression([-0.0, 1e-9], [1.0, 1.0]) == "0.0×1.0 + 0.0×1.0 = 0.00"


def test_weighted_sum_expression_and_hex():
    text = weighted_sum_expression([0.5, 0.5], [[0, 0, 0], [255, 255, 255]])
    assert text == "0.500×(0, 0, 0) + 0.500×(255, 255, 255) = (127.5, 127.5, 127.5)"
    assert rgb_hex([230, 159, 0]) == "#e69f00"
    assert rgb_hex([300.0, -5.0, 127.6]) == "#ff0080"


def test_matching_query_finds_presets_only():
    assert matching_query(LIB.queries, [1.0, 1.0, 0.0, 0.0]).id == "cats_feel"
    assert matching_query(LIB.queries, [1.0, 1.1, 0.0, 0.0]) is None


# --- the validator names the file and the field ----------------------------------------------------------------

GOOD = (DATA_DIR / "qkv.toml").read_text(encoding="utf-8")
BAD_CASES = {
    "not_toml": (GOOD.replace("[[books]]", "[[books", 1), "not valid TOML"),
    "no_books": (GOOD.split("[[books]]")[0] + "[[queries]]" + GOOD.split("[[queries]]", 1)[1], "'books': is missing"),
    "one_book": (GOOD.split("[[books]]")[0] + "[[books]]" + GOOD.split("[[books]]")[1] + "[[queries]]"
                 + GOOD.split("[[queries]]", 1)[1], "'books'"),
    "short_key": (GOOD.replace("key = [0.5, 0.5, 2.0, 0.0]", "key = [0.5, 0.5]"), "books[1].key"),
    "text_in_key": (GOOD.replace("key = [0.5, 0.5, 2.0, 0.0]", 'key = [0.5, "a", 2.0, 0.0]'), "books[1].key"),
    "colour_out_of_range": (GOOD.replace("value = [230, 159, 0]", "value = [230, 300, 0]"), "books[0].value"),
    "no_japanese_title": (GOOD.replace(', ja = "猫の気持ちがわかる本"', ""), "books[0].title.ja"),
    "duplicate_book": (GOOD.replace('id = "emotions"', 'id = "cat_mind"'), "books[].id"),
    "query_length": (GOOD.replace("vector = [1.0, 0.0, 1.0, 0.0]", "vector = [1.0, 0.0, 1.0]"), "queries[4].vector"),
    "bad_temperature": (GOOD.replace("default_temperature = 1.0", "default_temperature = -1.0"), "default_temperature"),
    "no_temperature": (GOOD.replace("default_temperature = 1.0", ""), "default_temperature"),
}


def test_bad_cases_really_change_the_file():
    assert all(text != GOOD for text, _ in BAD_CASES.values())


@pytest.mark.parametrize("case", list(BAD_CASES))
def test_validator_names_file_and_field(tmp_path: Path, case):
    text, field = BAD_CASES[case]
    (tmp_path / "qkv.toml").write_text(text, encoding="utf-8")
    with pytest.raises(PresetError) as err:
        load_library(tmp_path)
    assert "qkv.toml" in str(err.value)
    assert field in str(err.value)


def test_missing_file_is_named(tmp_path: Path):
    with pytest.raises(PresetError, match="qkv.toml"):
        load_library(tmp_path)


def test_the_good_file_round_trips(tmp_path: Path):
    (tmp_path / "qkv.toml").write_text(GOOD, encoding="utf-8")
    assert [b.id for b in load_library(tmp_path).books] == [b.id for b in LIB.books]
