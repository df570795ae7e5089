"""One name per concept across the repository: lesson 8's control is "the untrained copy" (未学習の同型モデル) and
its sentence test "the tired/wide minimal pair" (最小対); the word that used to name both is gone from code,
locales, tests and docs (issue 24)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RETIRED = re.compile("tw" + "in|双" + "子|ツ" + "イン", re.IGNORECASE)  # spelled apart so this file passes itself
KINDS = {".py", ".toml", ".md", ".txt", ".cfg", ".ini", ".json", ".yml", ".yaml"}


def tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    # the glossary names the retired words as forbidden variants, which is the point of it
    return [ROOT / name for name in listed.splitlines()
            if Path(name).suffix in KINDS and name != "locales/glossary.toml"]


def test_the_retired_name_appears_nowhere():
    files = tracked_files()
    assert len(files) > 100  # the repository's files, not an empty list
    found = [f"{path.relative_to(ROOT)}:{n}" for path in files if path.is_file()
             for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if RETIRED.search(line)]
    assert found == []


def test_the_pattern_catches_each_spelling():
    for word in ("the untrained " + "tw" + "in", "TW" + "IN_SEED", "双" + "子", "ツ" + "インテスト"):
        assert RETIRED.search(word)
