"""`python -m attention_core.smollm2.prebuild [--strict]`: build the GPT lesson's float32 caches (SmolLM2's weights and
the untrained copy, attention_core.smollm2.weights) before a server starts, and say so in one line with how long it took.

dev.py run calls it before `streamlit run`: on a new machine the first visitor of lesson 9 then finds the weights
built. A failure is printed and the app starts anyway (the page builds the caches at its first visit, as it did
before, or says how to install the model). The Dockerfile calls it with --strict while building the image: an image
without its weights is a broken build.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def _shown(folder: Path) -> str:
    """folder -> its path with the home folder as ~ (the line stays short)."""
    try:
        return f"~/{folder.relative_to(Path.home())}"
    except ValueError:
        return str(folder)


def prebuild(path: Path | None = None, cache_root: Path | None = None) -> tuple[bool, str]:
    """GGUF file (default: the installed model's), cache root (default: default_cache_root()) -> (whether the
    caches are ready, the line to print). Never raises: a missing package or a bad file is said in the line."""
    start = time.perf_counter()
    try:
        from attention_core.smollm2.weights import gguf_path, model_cache_folder, read_weights, untrained_weights

        path = gguf_path() if path is None else Path(path)
        folder = model_cache_folder(path, cache_root)
        was_built = folder.is_dir()
        read_weights(path, cache_root=cache_root)
        weights_s = time.perf_counter() - start
        untrained_weights(cache_root=cache_root)
    except Exception as exc:  # noqa: BLE001 - whatever it is, the app must still start: the page reports it
        return False, (f"GPT lesson: the float32 weights are not built now ({type(exc).__name__}: {exc}); "
                       "the page builds them at its first visit")
    total_s = time.perf_counter() - start
    where = _shown(folder.parent)
    if was_built:
        return True, f"GPT lesson: the float32 weights are ready in {where} (already built; {total_s:.1f} s)"
    return True, (f"GPT lesson: built the float32 weights in {where} in {total_s:.1f} s (weights {weights_s:.1f} s, "
                  f"the untrained copy {total_s - weights_s:.1f} s): no first visitor waits for them")


def main(argv: list[str]) -> int:
    ready, line = prebuild()
    print(line, flush=True)
    return 1 if "--strict" in argv and not ready else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
