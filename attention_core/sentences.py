"""Preset sentences shared by the pages that run real word vectors."""

from __future__ import annotations

from dataclasses import dataclass

from attention_core.presets import Checker, bilingual, read_preset


@dataclass(frozen=True)
class PresetSentence:
    id: str
    text: str
    label: dict[str, str]


def _validate(parsed: dict, check: Checker) -> list[PresetSentence]:
    out = []
    for i, item in enumerate(check.table_list(parsed, "sentences")):
        path = f"sentences[{i}]"
        out.append(PresetSentence(check.text(item, "id", path), check.text(item, "text", path), bilingual(check, item, "label", path)))
    ids = [s.id for s in out]
    if len(set(ids)) != len(ids):
        check.fail("sentences[].id", "ids must be unique")
    return out


def load_sentences(data_dir=None) -> list[PresetSentence]:
    """-> the preset sentences of data/sentences.toml, in file order."""
    return read_preset("sentences", _validate, data_dir)
