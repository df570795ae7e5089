"""Runs on disk: the page's default runs are trained once per machine and shared by every server process.

A run is one .npz file in $XDG_CACHE_HOME/attention-live/tiny_gpt/ (or ~/.cache/attention-live/tiny_gpt/), named
by a hash of everything that decides it: the configuration, the seed, `every`, whether snapshots are kept and the
source of this package (a change to the model or the data makes new files; old ones are never read again). Written
to a temporary file beside it and renamed into place, so a reader never sees half a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np

from .model import Config
from .train import Run, train

FORMAT = 1  # bump when the file's layout changes
_SOURCES = ("model.py", "data.py", "measure.py", "train.py", "store.py")
_CURVES = ("steps", "loss_repeated", "loss_unrepeated", "previous_token", "induction")


def cache_root() -> Path:
    """-> $XDG_CACHE_HOME/attention-live/tiny_gpt, or ~/.cache/attention-live/tiny_gpt."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-live" / "tiny_gpt"


def _source_hash() -> str:
    digest = hashlib.sha256()
    for name in _SOURCES:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()


def run_path(config: Config, seed: int, every: int, keep_snapshots: bool = True, root: Path | None = None) -> Path:
    """-> the file a run of (config, seed, every, keep_snapshots) is kept in."""
    what = json.dumps([asdict(config), int(seed), int(every), bool(keep_snapshots), FORMAT, _source_hash()])
    return Path(root or cache_root()) / f"run-{hashlib.sha256(what.encode()).hexdigest()[:24]}.npz"


def save_run(run: Run, path: Path) -> bool:
    """Write run to path atomically -> True, or False if the folder is not writable (the caller keeps it in RAM)."""
    arrays = {name: getattr(run, name) for name in _CURVES}
    arrays |= {f"params.{name}": p for name, p in run.params.items()}
    arrays |= {f"snapshots.{name}": s for name, s in run.snapshots.items()}
    arrays["meta"] = np.array(json.dumps({"config": asdict(run.config), "seed": run.seed, "format": FORMAT}))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".writing-", suffix=".npz", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as f:
                np.savez(f, **arrays)
            os.chmod(temporary, 0o644)  # mkstemp's file is 0o600; other users' server processes read it
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    except OSError:
        return False
    return True


def load_run(path: Path) -> Run:
    """path -> the Run saved there, every array read-only."""
    with np.load(path) as f:
        arrays = {name: f[name] for name in f.files}
    meta = json.loads(str(arrays.pop("meta")))
    if meta["format"] != FORMAT:
        raise ValueError(f"{path} has format {meta['format']}, expected {FORMAT}")
    for array in arrays.values():
        array.flags.writeable = False
    config = Config(**{f.name: meta["config"][f.name] for f in fields(Config)})
    params = {name.split(".", 1)[1]: a for name, a in arrays.items() if name.startswith("params.")}
    snapshots = {name.split(".", 1)[1]: a for name, a in arrays.items() if name.startswith("snapshots.")}
    return Run(config, int(meta["seed"]), *(arrays[name] for name in _CURVES), snapshots, params)


def cached_run(config: Config, seed: int, every: int = 25, keep_snapshots: bool = True, progress=None,
               root: Path | None = None, fit=None) -> Run:
    """-> the run from its file, or trained now (progress as in train) and saved for the next process. fit: what
    trains it, with train's arguments (config, seed, every, progress, keep_snapshots); train itself by default."""
    path = run_path(config, seed, every, keep_snapshots, root)
    if path.is_file():
        try:
            return load_run(path)
        except (OSError, ValueError, KeyError):
            pass  # a damaged file is trained again and replaced
    run = (fit or train)(config, seed, every, progress, keep_snapshots)
    save_run(run, path)
    return run
