"""What lessons 9 and 10 measure on a real GPT, beside the models rather than inside them: head scores and their
held-out studies (heads.py), switching heads off and the random-head band (causal_study.py), "does the model decide
'it'" (referent_study.py), the head on ordinary text (ordinary_text.py), what the 4-bit rounding changes (rounding.py)
and the KV cache timed (kv_timing.py). A study imports a model and the measurement toolkit (attention_core.measure);
no model imports a study.
"""
