"""Results of the GPT that are the same at every start (the repeated-sequence study, a fixed sentence's measurements)
kept on disk beside the float32 weights, so a restarted server reads them instead of computing them again.

    value = load_or_compute("study", {"sequences": 8, "period": 20}, compute, sources=(heads_module, ...),
                            digest=weights_digest(model_file))

One small JSON file per result under ``<GPT cache root>/results/<weights SHA-256>-f<FORMAT_VERSION>/``, named by the
result and a digest of its parameters and of the source files that compute it (an edited study is computed again,
never read stale). Written to a temporary file and renamed into place (a reader never sees half a file; two processes
writing at once both write the same bytes). Values: None, bool, int, float (exact: JSON keeps a float's shortest
round-trip repr), str, lists, tuples, dicts with str keys and NumPy arrays (dtype and shape kept). An unreadable or
undecodable file is computed again and replaced; an unwritable folder only costs the next start the computation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from attention_core.gpt.float_cache import default_cache_root, file_sha256

FORMAT_VERSION = 1  # bump when the encoding below changes


def encode(value: Any) -> Any:
    """A value (see the module's docstring for the kinds) -> plain JSON data that decode() turns back into it."""
    if isinstance(value, np.ndarray):
        return {"__array__": value.dtype.str, "shape": list(value.shape), "data": value.ravel().tolist()}
    if isinstance(value, np.generic):
        return encode(value.item())
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value) or "__array__" in value or "__tuple__" in value:
            raise TypeError("only dicts with str keys (and no '__array__'/'__tuple__' key) can be cached")
        return {k: encode(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot cache a {type(value).__name__}")


def decode(data: Any) -> Any:
    """encode()'s output -> the value (arrays read-only)."""
    if isinstance(data, dict):
        if "__array__" in data:
            array = np.array(data["data"], dtype=np.dtype(data["__array__"])).reshape(data["shape"])
            array.setflags(write=False)
            return array
        if "__tuple__" in data:
            return tuple(decode(v) for v in data["__tuple__"])
        return {k: decode(v) for k, v in data.items()}
    if isinstance(data, list):
        return [decode(v) for v in data]
    return data


@functools.cache  # per process on purpose: the GGUF file does not change under a running server (0.2 s to hash)
def _weights_digest(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(Path(path))


def weights_digest(path: Path) -> str:
    """GGUF file -> its SHA-256 (hashed once per process per file version)."""
    path = Path(path)
    stat = path.stat()
    return _weights_digest(str(path), stat.st_size, stat.st_mtime_ns)


def results_folder(digest: str, cache_root: Path | None = None) -> Path:
    """-> the folder of the results computed with the weights whose SHA-256 is `digest`."""
    root = Path(cache_root) if cache_root is not None else default_cache_root()
    return root / "results" / f"{digest}-f{FORMAT_VERSION}"


def result_path(name: str, params: dict, digest: str, sources: Iterable = (), cache_root: Path | None = None) -> Path:
    """-> the file of result `name` for these parameters, weights and source files (modules or paths)."""
    key = hashlib.sha256(json.dumps(encode(params), sort_keys=True).encode())
    for source in sources:
        file = Path(getattr(source, "__file__", source))
        key.update(file.name.encode() + b"\0" + file.read_bytes())
    return results_folder(digest, cache_root) / f"{name}-{key.hexdigest()[:20]}.json"


def read(path: Path) -> tuple[bool, Any]:
    """-> (True, the value) from a result file, or (False, None) when it is missing or cannot be read."""
    try:
        return True, decode(json.loads(path.read_text(encoding="utf-8"))["value"])
    except (OSError, ValueError, KeyError, TypeError):
        return False, None


def write(path: Path, value: Any) -> bool:
    """Write the value atomically (a temporary file renamed into place) -> whether it was written."""
    text = json.dumps({"format": FORMAT_VERSION, "value": encode(value)}, ensure_ascii=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".writing-", suffix=".json", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(temporary, 0o644)  # mkstemp's file is 0o600; other users' server processes share the cache
        os.replace(temporary, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False


def load_or_compute(name: str, params: dict, compute: Callable[[], Any], *, sources: Iterable = (),
                    digest: str, cache_root: Path | None = None) -> Any:
    """-> the result read from disk, or compute() written to disk (see the module's docstring).

    digest: the weights' SHA-256 (weights_digest of the model's file); sources: the modules (or files) whose code makes
    the result; params: everything else it depends on."""
    path = result_path(name, params, digest, tuple(sources), cache_root)
    found, value = read(path)
    if found:
        return value
    value = compute()
    write(path, value)
    return value


def on_disk(name: str, *, model_file: Callable[[], Path], sources: Iterable = (), result: type | None = None):
    """Decorator: fn(*args) -> its value, kept on disk by load_or_compute under `name`, keyed by the arguments, the
    source files of fn's own module and of `sources` (modules, or paths such as a data file fn reads) and the
    hash of the weights in model_file() (the GGUF the result was computed with). result: the dataclass fn returns (stored field by field, rebuilt on reading)."""
    def wrap(fn):
        files = (sys.modules[fn.__module__], *sources)

        @functools.wraps(fn)
        def cached(*args):
            def compute():
                value = fn(*args)
                if result is not None:
                    return {f.name: getattr(value, f.name) for f in dataclasses.fields(result)}
                return value

            params = {"function": fn.__qualname__, "args": list(args)}
            if result is not None:
                params["fields"] = [f.name for f in dataclasses.fields(result)]
            value = load_or_compute(name, params, compute, sources=files, digest=weights_digest(model_file()))
            return result(**value) if result is not None else value

        return cached

    return wrap
