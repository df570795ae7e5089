"""UI text, keyed, one folder per language: locales/<lang>/<section>.toml -> keys "<section>.<key>".

Pure Python (no Streamlit): the pages get a translator from ui.shared.common.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

LOCALES_DIR = Path(__file__).resolve().parents[2] / "locales"
LANGUAGES = {"en": "English", "ja": "日本語"}
DEFAULT_LANGUAGE = "en"


def _flatten(table: dict, prefix: str, out: dict[str, str]) -> None:
    for key, value in table.items():
        full = f"{prefix}.{key}"
        if isinstance(value, dict):
            _flatten(value, full, out)
        else:
            out[full] = str(value)


@functools.lru_cache(maxsize=None)
def load_strings(lang: str, locales_dir: Path = LOCALES_DIR) -> dict[str, str]:
    """lang -> {"section.key": text} read from every locales/<lang>/*.toml (cached per process)."""
    if lang not in LANGUAGES:
        raise KeyError(f"unknown language {lang!r}; known: {sorted(LANGUAGES)}")
    strings: dict[str, str] = {}
    for path in sorted((locales_dir / lang).glob("*.toml")):
        with path.open("rb") as fh:
            _flatten(tomllib.load(fh), path.stem, strings)
    return strings


class Translator:
    """t("section.key", **values) -> the text in this language, formatted with ``values``."""

    def __init__(self, lang: str):
        self.lang = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
        self.strings = load_strings(self.lang)

    def __call__(self, key: str, **values) -> str:
        text = self.strings.get(key)
        if text is None:  # a missing key is a bug the key-parity test catches; never crash a class over it
            text = load_strings(DEFAULT_LANGUAGE).get(key, key)
        return text.format(**values) if values else text

    def has(self, key: str) -> bool:
        return key in self.strings

    def join(self, items) -> str:
        """["a", "b"] -> "a, b" in English, "a、b" in Japanese: a list inside a sentence of this language."""
        return self("common.list_separator").join(str(item) for item in items)


_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x: float, digits: int = 2) -> str:
    """1.7e-07 -> "1.7 × 10⁻⁷" (``digits`` significant digits): how a page writes a very small or large number."""
    mantissa, exponent = f"{x:.{max(digits - 1, 0)}e}".split("e")
    power = int(exponent)
    if power == 0:
        return mantissa
    return f"{mantissa} × 10{str(power).translate(_SUPERSCRIPTS)}"


def percent(share: float, decimals: int = 1) -> str:
    """0.789 -> "78.9 %": a share as the locales write it, in both languages (a space before %, as "95 %")."""
    return f"{share:.{decimals}%}".replace("%", " %")
