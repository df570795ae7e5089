"""Lesson 4's scaling switch, as shown, against the theory: with q and k of d random unit-variance entries,
Var(q·k) = d unscaled and 1 once divided by √d. The same draws are shown both ways, so the measured variance and
spread change by exactly d and √d, and the one query's weights unscaled are its scaled weights to the power √d
(renormalised). The shown entropy, largest weight and gradient size are recomputed here from the drawn bars."""

import math

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import bar_labels, bar_values, figure, find_sentence, number, strings, texts, title_text

D, KEYS = 64, 16  # the page's defaults (scaling_d, scaling_keys; τ = 1)


def shown(at, lang: str) -> dict:
    """What the page shows with the switch where it is: the histogram caption's fields, the metrics, the bars."""
    w = strings(lang)
    caption = find_sentence(texts(at), "scaling.hist_caption", lang)
    metrics = {m.label: m.value for m in at.metric}
    fig = figure(at, "scaling_weights")
    assert title_text(fig["layout"]) == w["scaling.weights_title"].format(n=KEYS, d=D)
    assert bar_labels(fig) == [f"k{i + 1}" for i in range(KEYS)]
    return {"caption": caption, "sd": number(metrics[w["scaling.metric_sd"]]),
            "max": number(metrics[w["scaling.metric_max"]]), "weights": np.array(bar_values(fig)),
            "x_title": title_text(figure(at, "scaling_hist")["layout"]["xaxis"]),
            "row": find_sentence(texts(at), "scaling.weights_caption", lang)}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_switch_changes_the_spread_as_theory_says(lang):
    w = strings(lang)
    at = open_page("scaling", lang)
    assert_clean(at)
    assert at.toggle(key="scaling_scale").value is True  # the page opens scaled
    on = shown(at, lang)
    at.toggle(key="scaling_scale").set_value(False).run()
    assert_clean(at)
    off = shown(at, lang)

    assert on["x_title"] == w["scaling.x_scaled"] and off["x_title"] == w["scaling.x_unscaled"]
    assert int(on["caption"]["d"]) == int(off["caption"]["d"]) == D
    assert number(on["caption"]["theory"]) == 1 and number(off["caption"]["theory"]) == D
    var_on, var_off = number(on["caption"]["measured"]), number(off["caption"]["measured"])
    draws = number(on["caption"]["n"])
    assert abs(var_on - 1) < 6 * math.sqrt(2 / draws) * KEYS ** 0.5, var_on  # a loose sampling band around 1
    assert var_off / var_on == pytest.approx(D, rel=2e-3)  # the same scores, multiplied by √d
    assert off["sd"] / on["sd"] == pytest.approx(math.sqrt(D), rel=2e-3)
    assert on["sd"] ** 2 == pytest.approx(var_on, rel=3e-3)

    # one query: unscaled logits are √d times the scaled ones, so w_off ∝ w_on ** √d
    expected_off = on["weights"] ** math.sqrt(D)
    np.testing.assert_allclose(off["weights"], expected_off / expected_off.sum(), rtol=1e-6, atol=1e-12)
    assert off["weights"].max() > on["weights"].max()
    for state in (on, off):
        p = state["weights"]
        np.testing.assert_allclose(p.sum(), 1.0)
        assert state["max"] == pytest.approx(p.max(), abs=5e-4)
        row = state["row"]
        assert number(row["max"]) == pytest.approx(p.max(), abs=5e-5) and row["top"] == f"k{int(p.argmax()) + 1}"
        entropy = -sum(x * math.log(x) for x in p if x > 0)
        assert number(row["h"]) == pytest.approx(entropy, abs=5e-5)
        assert number(row["hmax"]) == pytest.approx(math.log(KEYS), abs=5e-5) and int(row["n"]) == KEYS
        jacobian = [[(p[i] if i == j else 0.0) - p[i] * p[j] for j in range(KEYS)] for i in range(KEYS)]
        frobenius = math.sqrt(sum(v * v for r in jacobian for v in r))
        assert number(row["j"]) == pytest.approx(frobenius, abs=5e-5)
