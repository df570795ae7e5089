"""What every GPT of the course shares, whichever model it runs (SmolLM2 in attention_core.smollm2, Gemma 3 in
attention_core.gemma): the GGUF reader and its dequantizers (gguf_file.py), the float32 cache built once and
memory-mapped read-only by every process (float_cache.py), a sequence's keys and values while it writes
(kv_cache.py), choosing the next token (sampling.py), the class's generation server (batching.py) and results kept on
disk keyed by the weights and the code (disk_cache.py). Nothing here imports a model; the models import these, and the
studies (attention_core.gpt_studies) import the models.
"""
