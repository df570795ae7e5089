"""Lesson 9's sections (inside a GPT). Read page.py first: the model choice (SmolLM2 or Gemma 3), the learner's
prompt and its one shared pass; then the sections in the page's order: next_token.py (the next token, generation),
mask.py (the mask, the famous sentence), sink.py (the attention sink), study.py (the repeated-sequence study) and
circuits.py (induction heads; the lesson's start-up work), cache.py (the KV cache); serving.py is the process's
generation server."""
