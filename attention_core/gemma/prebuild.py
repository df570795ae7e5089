"""`python -m attention_core.gemma.prebuild [--strict]`: join and check Gemma 3's GGUF and build its float32 caches
(the weights and the untrained copy, attention_core.gemma.weights) before a server starts, and say so in one line
with how long it took. A failure is printed (the pages then say how to install the model); the Dockerfile calls it
with --strict while building the image: an image without its weights is a broken build.
"""

from __future__ import annotations

import sys
import time


def prebuild() -> tuple[bool, str]:
    """-> (whether Gemma's caches are ready, the line to print). Never raises: a missing package is said in the line."""
    start = time.perf_counter()
    try:
        from attention_core.gemma.weights import gguf_path, model_cache_folder, read_weights, untrained_weights

        path = gguf_path()
        was_built = model_cache_folder(path).is_dir()
        read_weights(path)
        weights_s = time.perf_counter() - start
        untrained_weights()
    except Exception as exc:  # noqa: BLE001 - whatever it is, the app must still start: the page reports it
        return False, f"Gemma 3: the float32 weights are not built now ({type(exc).__name__}: {exc})"
    total_s = time.perf_counter() - start
    state = "already built" if was_built else "joined, checked and built"
    return True, (f"Gemma 3: the float32 weights are ready in {total_s:.1f} s (the weights {weights_s:.1f} s, "
                  f"{state}; the untrained copy {total_s - weights_s:.1f} s)")

def main(argv: list[str]) -> int:
    ready, line = prebuild()
    print(line, flush=True)
    return 1 if "--strict" in argv and not ready else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
