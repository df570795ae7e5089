"""What every GPT of the course shares, whichever model it runs (SmolLM2 in attention_core.smollm2, Gemma 3 in
attention_core.gemma): the GGUF reader and its dequantizers (gguf_file.py), a model's weights read out of its file
into fields and its untrained copy (weight_files.py), the float32 cache built once and memory-mapped read-only by every
process (float_cache.py), the BPE merge loop (bpe.py), every sequence's maps in one pass and a long text's prefill in
chunks (passes.py), a sequence's keys and values while it writes
(kv_cache.py), choosing the next token (sampling.py), the class's generation server (batching.py) and results kept on
disk keyed by the weights and the code (disk_cache.py). Nothing here imports a model; the models import these, and the
studies (attention_core.gpt_studies) import the models.
"""
