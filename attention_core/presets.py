"""One loader for the presets in data/: TOML files, validated, with errors that name the file and field."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Callable

import numpy as np

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


class PresetError(ValueError):
    """A preset file is missing or malformed; the message names the file and the field."""


class Checker:
    """Reads fields out of one parsed file, raising PresetError('<file>: <field>: <problem>')."""

    def __init__(self, file: str):
        self.file = file

    def fail(self, path: str, problem: str):
        raise PresetError(f"{self.file}: field '{path}': {problem}")

    def get(self, obj: dict, key: str, kind: type | tuple, path: str = "") -> Any:
        where = f"{path}.{key}" if path else key
        if not isinstance(obj, dict) or key not in obj:
            self.fail(where, "is missing")
        value = obj[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(k.__name__ for k in kinds)
            self.fail(where, f"must be {names}, got {type(value).__name__} {value!r:.60}")
        return value

    def text(self, obj: dict, key: str, path: str = "") -> str:
        value = self.get(obj, key, str, path)
        if not value.strip():
            self.fail(f"{path}.{key}" if path else key, "must not be empty")
        return value

    def vector(self, obj: dict, key: str, path: str = "", length: int | None = None) -> np.ndarray:
        where = f"{path}.{key}" if path else key
        values = self.get(obj, key, list, path)
        if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            self.fail(where, "must be a non-empty list of numbers")
        if length is not None and len(values) != length:
            self.fail(where, f"must have {length} numbers, got {len(values)}")
        arr = np.asarray(values, dtype=np.float64)
        if not np.isfinite(arr).all():
            self.fail(where, "must hold finite numbers")
        return arr

    def table_list(self, obj: dict, key: str, path: str = "", min_len: int = 1) -> list[dict]:
        where = f"{path}.{key}" if path else key
        items = self.get(obj, key, list, path)
        if len(items) < min_len or not all(isinstance(i, dict) for i in items):
            self.fail(where, f"must be a list of at least {min_len} tables ([[{key}]])")
        return items


def read_preset(name: str, validate: Callable[[dict, Checker], Any], data_dir: str | Path | None = None) -> Any:
    """Parse data/<name>.toml and return ``validate(parsed, checker)``; any problem raises PresetError."""
    root = Path(data_dir) if data_dir is not None else DATA_DIR
    path = root / f"{name}.toml"
    try:
        parsed = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise PresetError(f"{path.name}: the preset file is missing (looked in {root})") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PresetError(f"{path.name}: not valid TOML: {exc}") from exc
    return validate(parsed, Checker(path.name))


def bilingual(check: Checker, obj: dict, key: str, path: str = "") -> dict[str, str]:
    """A field given as {en = "...", ja = "..."} -> {"en": ..., "ja": ...}, both required."""
    table = check.get(obj, key, dict, path)
    where = f"{path}.{key}" if path else key
    return {lang: check.text(table, lang, where) for lang in ("en", "ja")}
