"""Issue 40 item 23: lesson 10's results on disk (base, band, defaults, referent) are keyed by the model's hash and by
the source files that compute them (disk_cache.result_path, as lessons 9 and 11), never by a hand-bumped version: a
machine holding the old cache computes them again after a code change instead of showing the old numbers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from attention_core.gpt_studies import causal_study, heads as head_scores, referent_study
from attention_core.smollm2 import interventions, model as gpt_model
from attention_core.smollm2.weights import GPTUnavailable, gguf_path

try:
    gguf_path()
except GPTUnavailable:
    pytest.skip("the model package (requirements-model.txt) is absent", allow_module_level=True)

from ui.heads import referent, study  # noqa: E402


def _edited_copy(module, tmp_path: Path) -> Path:
    """-> a copy of the module's file with one more line (the same name: only its code differs)."""
    copy = tmp_path / Path(module.__file__).name
    shutil.copyfile(module.__file__, copy)
    with open(copy, "a") as fh:
        fh.write("\n# an edit\n")
    return copy


def test_the_code_that_computes_the_results_is_part_of_their_key():
    for module in (causal_study, head_scores, interventions, gpt_model):
        assert module in study.STUDY_SOURCES
    assert set(study.STUDY_SOURCES) <= set(study.DEFAULTS_SOURCES)
    assert referent_study in referent.REFERENT_SOURCES and set(study.STUDY_SOURCES) <= set(referent.REFERENT_SOURCES)
    assert not hasattr(study, "STUDY_VERSION")  # (no hand-bumped version left to forget)


@pytest.mark.parametrize("name", ["base", "band", "defaults", "referent"])
def test_an_edited_source_gives_a_new_folder(name, tmp_path):
    sources = {"defaults": study.DEFAULTS_SOURCES, "referent": referent.REFERENT_SOURCES}.get(name,
                                                                                          study.STUDY_SOURCES)
    edited = tuple(_edited_copy(causal_study, tmp_path) if s is causal_study else s for s in sources)
    before, after = study.stored_folder(name, sources), study.stored_folder(name, edited)
    assert before != after and before.parent == after.parent  # (the same weights' results folder)
    assert study.stored_folder(name, sources) == before  # (and an unchanged source keeps it)


def test_stored_reads_back_what_it_wrote_in_the_keyed_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = tmp_path / "computing.py"
    source.write_text("x = 1\n")
    calls = []
    assert study.stored("probe", lambda: calls.append(1) or {"a": 1}, (source,)) == {"a": 1}
    assert study.stored_folder("probe", (source,)).is_dir() and str(tmp_path) in str(study.stored_folder("probe", (source,)))
    assert study.stored("probe", lambda: calls.append(1) or {"a": 2}, (source,)) == {"a": 1} and calls == [1]
    source.write_text("x = 2\n")  # the code changed: computed again
    assert study.stored("probe", lambda: calls.append(1) or {"a": 2}, (source,)) == {"a": 2} and calls == [1, 1]
