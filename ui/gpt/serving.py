"""The GPT lesson's generation, shared by every session of the server process: one GenerationServer
(attention_core.gpt.batching: continuous batching and single flight) over the installed model.

    stream_generation(prompt_ids, *, temperature=1.0, top_k=None, top_p=None, seed=0, max_new_tokens=20,
                      cancel=None, on_wait=None) -> Iterator[tuple[int, float]]

yields (token id, its probability under the settings) as each token is made; the same arguments give the same
tokens whoever else is generating. It stops early once `cancel` (a threading.Event) is set, or when the caller drops
the iterator (a rerun, a page change). Raises GenerationError (a one-line message, e.g. a bad setting or a failed
step) and GPTUnavailable (the model's package is missing), for the page to show.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Callable, Iterator, Sequence

import streamlit as st

from attention_core.gpt.batching import GenerationRequest, GenerationServer, QueueState
from attention_core.smollm2.serving import gpt_step_functions
from attention_core.smollm2.weights import build_progress
from ui.gpt import presets
from ui.shared.startup import Background


def _load_model():
    from attention_core import smollm2

    return smollm2.default_model()


MODEL = Background("gpt-model", _load_model)  # the weights and tokenizer, loaded (or built) once per process


_ROOT = Path(__file__).resolve().parents[2]


def results_on_disk(name: str, result: type | None = None, sources: tuple = ()):
    """Decorator for a lesson-9 function whose value is the same at every start (a fixed sentence's measurements):
    kept on disk with attention_core.gpt.disk_cache.on_disk, keyed also by the model's code, the lesson's texts
    (data/gpt.toml), ui/gpt/page.py (shown_tokens), ui/gpt/presets.py (encode) and `sources` (more modules or files
    the function's value depends on). Put it under @st.cache_resource (or @st.cache_data)."""
    from attention_core import attention  # noqa: PLC0415 - softmax, under the model's and the measurements' code
    from attention_core.gpt import disk_cache  # noqa: PLC0415
    from attention_core.gpt_studies import heads  # noqa: PLC0415
    from attention_core.smollm2 import model, tokenizer, weights  # noqa: PLC0415

    return disk_cache.on_disk(name, model_file=weights.gguf_path, result=result,
                              sources=(model, tokenizer, heads, weights, attention,
                                       _ROOT / "data" / "gpt.toml", _ROOT / "ui" / "gpt" / "page.py",
                                       _ROOT / "ui" / "gpt" / "presets.py",
                                       _ROOT / "ui" / "shared" / "gpt_models.py", *sources))


def presets_on_disk(name: str, result: type | None = None, sources: tuple = ()):
    """Decorator for a lesson-9 function of a prompt's ids (its first argument; more arguments may follow): for the
    page's preset prompts (fixed texts, so the same value at every start) the value is kept on disk as
    results_on_disk keeps it; for any other prompt (a learner's own text) it is computed, and never written to disk.
    Put it under @st.cache_data (or @st.cache_resource)."""
    def wrap(fn):
        stored = results_on_disk(name, result, sources)(fn)

        @functools.wraps(fn)
        def cached(ids, *args):
            return (stored if tuple(ids) in presets.preset_prompts() else fn)(ids, *args)

        return cached

    return wrap


def loading_state() -> tuple[str, int, int]:
    """-> what loading the model does now: (stage, done, total), as attention_core.smollm2.weights.build_progress; stage
    "" when nothing is being built (the float32 cache is there: reading it takes about a second)."""
    return build_progress()


@st.cache_resource(show_spinner=False)
def generation_server(model_key: str = "smollm2") -> GenerationServer:
    """-> the process's one generation server of a model ("smollm2" or "gemma"; its worker thread runs only while
    someone is generating with it)."""
    if model_key == "gemma":
        from attention_core import gemma
        from attention_core.gemma.serving import gemma_step_functions

        return GenerationServer(gemma_step_functions(gemma.default_model()[0]))
    from attention_core import smollm2

    weights, _ = smollm2.default_model()
    return GenerationServer(gpt_step_functions(weights))


def stream_generation(prompt_ids: Sequence[int], *, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, seed: int = 0, max_new_tokens: int = 20,
                      cancel: threading.Event | None = None,
                      on_wait: Callable[[QueueState], None] | None = None,
                      model_key: str = "smollm2") -> Iterator[tuple[int, float]]:
    """prompt ids (n,) -> the generated (token id, probability) pairs, streamed (see the module's docstring);
    on_wait(state) is called while the first token has not come (queue_message says it to the learner)."""
    request = GenerationRequest(tuple(prompt_ids), temperature, top_k, top_p, seed, max_new_tokens)
    return generation_server(model_key).stream(request, cancel, on_wait)


def queue_message(t, state: QueueState) -> str:
    """-> what the learner reads while the first token has not come: queued behind the class's current step, or
    the prompt being read in the step now, with how many texts the server is writing."""
    if state.phase == "queued":
        return t("gpt.gen_queued", ahead=state.ahead, running=state.running)
    return t("gpt.gen_reading", running=state.running)
