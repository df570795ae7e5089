"""The summary's lesson-10 claim in the fast loop (tests/test_page_seam_summary_heads.py holds both languages and the
band's waiting state, outside it): its losses against model.py's own pass with the top 8 induction heads zeroed, and
its mean-ablated loss against the picking set's means written out here (tests/test_page_seam_heads_meaning.py)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.smollm2 import weights as gpt_weights
from tests.apptest_utils import assert_clean, open_page
from tests.seam import find_sentence, number, texts

try:
    gpt_weights.gguf_path()
except gpt_weights.GPTUnavailable as missing:
    pytest.skip(f"the model package is absent: {missing}", allow_module_level=True)

from tests.test_page_seam_heads import K, one_blas_thread, picked, results, second_copy_loss  # noqa: E402,F401
from tests.test_page_seam_heads_meaning import mean_ablated_loss  # noqa: E402


def test_the_summarys_switch_off_claim_reads_the_right_numbers(results):  # noqa: F811 - the fixture
    _, band = results
    at = open_page("summary", "en", timeout=600)
    assert_clean(at)
    shown = find_sentence(texts(at), "summary.claim_heads", "en")
    ranked, _ = picked()
    top = tuple(ranked[:K])
    assert int(shown["k"]) == K
    assert number(shown["loss"]) == pytest.approx(second_copy_loss(top).mean(), abs=0.006)
    assert number(shown["clean"]) == pytest.approx(second_copy_loss().mean(), abs=0.006)
    assert number(shown["mean_loss"]) == pytest.approx(mean_ablated_loss(top).mean(), abs=0.006)
    draws = band.ablation.random_zero[band.ablation.ks.index(K)]
    assert number(shown["median"]) == pytest.approx(np.median(draws), abs=0.006)
