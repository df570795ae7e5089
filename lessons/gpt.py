"""Lesson 9, inside a GPT: SmolLM2-135M-Instruct, or Gemma 3 270M (it reads Japanese as words), run live in NumPy on
the learner's prompt.

The model choice and the prompt are here (changing either reruns the page); every section below is in ui/gpt/ and
asks its question before it shows what answers it. The chosen model reads the prompt in the first sections (the next
token and generation, the mask, the sink, the KV cache) and has its induction heads measured. The other sections
measure SmolLM2 (the page says so when Gemma is chosen): the famous sentence, Japanese and the 4-bit copy.
The famous sentence, the repeated sequences and Japanese do not read the prompt: they stay when the prompt is empty.
"""

from ui.shared.common import page_header, translator, what_to_try
from ui.gpt.page import (GEMMA, SMOLLM2, S, formula, japanese_section, model_card, model_choice, model_or_message, on_smollm2,
                         prompt_picker)
from ui.gpt.rounding import rounding_section
from ui.gpt.cache import cache_section
from ui.gpt.circuits import induction_section
from ui.gpt.sink import sink_section
from ui.gpt.mask import mask_section, minimal_pair_section
from ui.gpt.next_token import generation_section, next_token_section

t = translator()
page_header(t, S, formula())
if model_or_message(t):
    which = model_choice(t)  # SmolLM2, or Gemma 3 (Gemma not installed: a message, and SmolLM2)
    prompt = prompt_picker(t, which)  # None (with a message shown): the sections that read the prompt are left out
    what_to_try(t, S)
    model_card(t, which)  # what the model is, and how small next to chat models
    if prompt is not None:
        knobs = next_token_section(t, prompt)
        generation_section(t, prompt, knobs)
        mask_section(t, prompt)
    if which == GEMMA:
        if prompt is not None:
            sink_section(t, prompt)  # Gemma's sink: its start token
        induction_section(t, prompt, GEMMA)  # Gemma's heads on repeated random sequences
        if prompt is not None:
            cache_section(t, prompt)  # Gemma's cache: one key/value head, and the sliding window
    prompt = on_smollm2(t, prompt, which)  # from here on SmolLM2 (said when Gemma was chosen), on the same text
    minimal_pair_section(t)  # the famous sentence, whatever the prompt
    if which == SMOLLM2:
        if prompt is not None:
            sink_section(t, prompt)
        induction_section(t, prompt)  # repeated random sequences (the prompt's head scores in its CSV), a made-up name
        if prompt is not None:
            cache_section(t, prompt)
    japanese_section(t)
    rounding_section(t)  # what the 4-bit copy changes (it names the answers of the questions above, so it comes last)
