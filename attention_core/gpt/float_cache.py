"""The float32 cache every GGUF GPT shares: a model file dequantized once into a folder of .npy files, built
atomically (a reader never sees half a folder), keyed by the file's SHA-256, and memory-mapped read-only by every
process, so replicas on one host share its pages."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np


def file_sha256(path: Path) -> str:
    """file -> its SHA-256 in hex (the cache folder's key: another file never reuses a stale cache)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def default_cache_root() -> Path:
    """-> $XDG_CACHE_HOME/attention-live/gpt, or ~/.cache/attention-live/gpt."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-live" / "gpt"


# one lock per folder, not one for all: a build whose write asks for another folder (the heads' band waits for their
# base) would otherwise wait for a lock it holds itself (a fresh machine's start-up hung there)
_FOLDER_LOCKS: dict[Path, threading.Lock] = {}
_FOLDER_LOCKS_GUARD = threading.Lock()


def _folder_lock(final: Path) -> threading.Lock:
    with _FOLDER_LOCKS_GUARD:
        return _FOLDER_LOCKS.setdefault(Path(os.path.abspath(final)), threading.Lock())


def built_once(final: Path, write) -> Path | None:
    """final: a folder, write(folder) fills one -> final, made once if missing; None if no folder is writable.

    Built in a temporary folder next to it and renamed into place: a reader never sees half a cache, and when two
    processes build at once, the second rename fails and that process uses the first one's folder. Within a process,
    a thread that asks while another builds the same folder waits for that build (the start-up work and a first
    visitor, say); builds of other folders go on meanwhile, so a write may itself ask for another folder.
    """
    if final.is_dir():
        return final
    with _folder_lock(final):
        return _build(final, write)


def _build(final: Path, write) -> Path | None:
    if final.is_dir():  # built while this thread waited
        return final
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=".building-", dir=final.parent))
    except OSError:
        return None  # read-only home, full disk...: the caller keeps the weights in RAM
    try:
        write(building)
        os.chmod(building, 0o755)  # mkdtemp's folder is 0o700; other users' server processes share the cache
        try:
            os.rename(building, final)
        except OSError:
            if not final.is_dir():
                raise
    except OSError:
        return final if final.is_dir() else None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return final


def read_only(array: np.ndarray) -> np.ndarray:
    """array -> the same array, marked read-only (a shared, memory-mapped weight must never be written)."""
    array.flags.writeable = False
    return array


def mapped_arrays(folder: Path, shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """folder of <name>.npy, {name: shape} -> {name: float32 array memory-mapped read-only}; a file of another shape
    or dtype -> ValueError naming it (delete the folder to rebuild)."""
    # plain read-only ndarray views of the mappings (np.memmap's subclass hooks cost ~10 ms a pass in slicing)
    arrays = {name: np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r")) for name in shapes}
    for name, shape in shapes.items():
        if arrays[name].shape != shape or arrays[name].dtype != np.float32:
            raise ValueError(f"cached weight {folder / name}.npy is {arrays[name].shape} {arrays[name].dtype}, "
                             f"expected {shape} float32: delete the folder to rebuild it")
    return arrays
