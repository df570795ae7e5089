"""Both model lessons point the learner at the forward pass to read (issue 26): the page names a file that exists,
and that file is the readable kind, one small function per step, which the tests hold the app's numbers to."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.apptest_utils import assert_clean, open_page
from ui.shared.i18n import load_strings

ROOT = Path(__file__).resolve().parent.parent
READABLE = {"pretrained": "attention_core/pretrained/bert_readable.py", "gpt": "attention_core/smollm2/model.py"}


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section", sorted(READABLE))
def test_the_model_page_names_the_file_to_read(section, lang):
    at = open_page(section, lang, timeout=300)
    assert_clean(at)
    said = load_strings(lang)["common.read_the_code"].format(path=READABLE[section])
    assert said in [c.value for c in at.caption]


@pytest.mark.parametrize("path", sorted(READABLE.values()))
def test_the_named_file_reads_one_short_function_per_step(path):
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert len(functions) >= 6  # embeddings/norm/attention/feed-forward/block/model at least
    assert max(f.end_lineno - f.lineno + 1 for f in functions) <= 60  # each a step a learner can read at once
    assert all(ast.get_docstring(f) for f in functions if not f.name.startswith("_"))  # every public step says what it does
