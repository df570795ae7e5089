"""The generation server over the real model: its request check, and batched = H1's one-at-a-time path."""

from __future__ import annotations

import dataclasses
import threading
import types

import pytest

from attention_core.gpt.batching import GenerationError, GenerationRequest, GenerationServer, step_seed
from tests.test_gpt_serving import generation_threads, read_all, wait_for


def served_together(real, reqs) -> tuple[GenerationServer, list]:
    """Every request read by its own thread, their first step held until all have joined (so they share steps) ->
    (the server, each request's (token, probability) list)."""
    gate = threading.Event()
    held = dataclasses.replace(real, step=lambda caches, chunks: (gate.wait(60), real.step(caches, chunks))[1])
    server = GenerationServer(held)
    results = [None] * len(reqs)
    threads = [threading.Thread(target=read_all, args=(server, r, results, i)) for i, r in enumerate(reqs)]
    for t in threads:
        t.start()
    wait_for(lambda: server.readers_joined == len(reqs))
    gate.set()
    for t in threads:
        t.join(300)
    return server, results


CHECKS = [  # (model, the request's fields, what the refusal says)
    ("smollm2", dict(prompt_ids=(49152,)), "token ids must lie in [0, 49152)"),
    ("smollm2", dict(prompt_ids=(5,) * 8190, max_new_tokens=3), "context of 8192"),
    ("smollm2", dict(prompt_ids=(5,), top_k=0), "top_k must be at least 1"),
    ("smollm2", dict(prompt_ids=(5,), top_p=1.5), "top_p must lie in (0, 1]"),
    ("smollm2", dict(prompt_ids=(5,), temperature=-1.0), "temperature must be a finite number >= 0"),
    ("gemma", dict(prompt_ids=(262144,)), "token ids must lie in [0, 262144)"),
    ("gemma", dict(prompt_ids=(5,) * 32766, max_new_tokens=3), "context of 32768"),
    ("gemma", dict(prompt_ids=(5,), top_k=0), "top_k must be at least 1"),
]


@pytest.mark.parametrize("model, kwargs, message", CHECKS)
def test_each_real_models_check_refuses_what_the_model_cannot_take(model, kwargs, message):
    if model == "gemma":
        from attention_core.gemma.serving import gemma_step_functions as step_functions
        from attention_core.gemma.weights import GemmaConfig as Config
    else:
        from attention_core.smollm2.serving import gpt_step_functions as step_functions
        from attention_core.smollm2.weights import GPTConfig as Config

    functions = step_functions(types.SimpleNamespace(config=Config()))  # check needs only the sizes
    with pytest.raises(GenerationError) as refused:
        functions.check(GenerationRequest(**kwargs))
    assert message in str(refused.value)
    vocab = Config().vocab
    functions.check(GenerationRequest((0, vocab - 1), temperature=0.0, top_k=1, top_p=1.0))  # the ends are fine


@pytest.mark.slow
def test_the_real_model_batched_equals_one_at_a_time_with_h1s_decode_step_and_sample_token():
    from attention_core import smollm2
    from attention_core.gpt import sampling as gpt_sampling
    from attention_core.smollm2.serving import gpt_step_functions

    weights, tokenizer = smollm2.default_model()
    reqs = [GenerationRequest(tuple(tokenizer.encode("The capital of France is")), temperature=0.7, seed=5,
                              max_new_tokens=6),
            GenerationRequest(tuple(tokenizer.encode("Once upon a time, there was a small robot who")),
                              top_k=20, seed=9, max_new_tokens=6),
            GenerationRequest(tuple(tokenizer.encode("1, 2, 3,")), top_p=0.9, temperature=1.3, seed=0,
                              max_new_tokens=6)]
    server, results = served_together(gpt_step_functions(weights), reqs)
    for request, result in zip(reqs, results):
        settings_ = dict(temperature=request.temperature, top_k=request.top_k, top_p=request.top_p)
        logits, cache = smollm2.prefill(weights, list(request.prompt_ids))
        for step, (token, prob) in enumerate(result):
            assert token == gpt_sampling.sample_token(logits, seed=step_seed(request.seed, step), **settings_)
            assert prob == pytest.approx(gpt_sampling.sampling_probs(logits, **settings_)[token], abs=1e-4)
            logits = smollm2.decode_step(weights, [cache], [token])[0]
        assert len(result) == 6 or result[-1][0] in (0, 2)
    assert 3 in server.batch_sizes  # they shared steps (after any prompts that arrived late had a step of their own)
    wait_for(lambda: not server.running())
    assert generation_threads() == []


def test_gemma_batched_equals_each_text_run_again_in_full_at_every_step():
    """Two texts (English, Japanese) generated together by the server = each text's full pass (no cache) over its
    prompt and the tokens so far, sampled here with NumPy's generator seeded as the server's step_seed."""
    gemma_weights = pytest.importorskip("attention_core.gemma.weights")
    try:
        gemma_weights.gguf_path()
    except gemma_weights.GemmaUnavailable as missing:
        pytest.skip(f"Gemma's packages are absent: {missing}")
    import numpy as np

    from attention_core import gemma
    from attention_core.gemma.serving import gemma_step_functions

    weights, _ = gemma.default_model()
    reqs = [GenerationRequest(tuple(gemma.encode("The capital of France is")), temperature=0.7, seed=5,
                              max_new_tokens=4),
            GenerationRequest(tuple(gemma.encode("日本の首都は")), temperature=1.0, seed=3, max_new_tokens=4)]
    server, results = served_together(gemma_step_functions(weights), reqs)
    for request, result in zip(reqs, results):
        ids = list(request.prompt_ids)
        for step, (token, prob) in enumerate(result):
            z = gemma.forward(weights, ids, all_logits=False).logits[-1].astype(np.float64) / request.temperature
            p = np.exp(z - z.max())
            p /= p.sum()
            assert token == int(np.random.default_rng(step_seed(request.seed, step)).choice(p.size, p=p))
            assert prob == pytest.approx(p[token], abs=1e-4)
            ids.append(token)
        assert len(result) == 4 or result[-1][0] == 1
    wait_for(lambda: not server.running())
    assert generation_threads() == []
