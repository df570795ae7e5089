"""Lesson 9's KV-cache timing in a child process of its own (attention_core/gpt_studies/kv_timing.py run through
ui/shared/child.py): the child's timing has the page's keys and writes the tokens the model writes here, it runs at
the lowest priority, a learner who leaves kills it at once, a failing child is one line. No test times anything: a
state is waited on (a file the child writes) with a generous timeout."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from attention_core import smollm2
from attention_core.gpt_studies import kv_timing
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from ui.shared import child

WAIT = 300  # seconds: generous, for a busy 2-core machine


def greedy(weights, ids, count) -> list[int]:
    """The reference: ``count`` greedy tokens, prefill then one decode step per token, in this process."""
    logits, cache = smollm2.prefill(weights, list(ids))
    caches, made = [cache], []
    for _ in range(count):
        made.append(int(logits.argmax()))
        logits = smollm2.decode_step(weights, caches, [made[-1]])[0]
    return made


def test_the_childs_timing_has_the_pages_keys_and_writes_the_models_tokens():
    weights, tokenizer = smollm2.default_model()
    ids = tuple(tokenizer.encode("The cat sat on the mat. The cat"))
    long_ids = tuple((list(ids) * 8)[:40])
    stats = {}
    result = child.run(kv_timing.time_lengths, (((ids, 3), (long_ids, 2)),), stats=stats)
    short, long = result["timings"]
    for timing, n, k in ((short, len(ids), 3), (long, 40, 2)):
        assert {"without", "with", "same", "n", "k", "length"} <= set(timing)
        assert timing["without"] > 0 and timing["with"] > 0
        assert (timing["n"], timing["k"], timing["length"]) == (n, k, n + k)
        assert timing["same"] is True
    assert short["tokens"] == greedy(weights, ids, 3)
    assert long["tokens"] == greedy(weights, long_ids, 2)
    assert result["load_cpu_s"] > 0 and stats["cpu_s"] > 0 and stats["nice"] == child.NICE
    assert multiprocessing.active_children() == []


def test_the_child_times_gemma_too_and_writes_the_tokens_its_full_passes_write():
    from attention_core import gemma
    from attention_core.gemma.weights import GemmaUnavailable

    try:
        weights = gemma.default_model()[0]
    except GemmaUnavailable as missing:
        pytest.skip(f"Gemma's packages are absent: {missing}")
    ids = tuple(gemma.encode("日本の首都は"))
    (timing,) = child.run(kv_timing.time_lengths, (((ids, 3),), "gemma"))["timings"]
    text = list(ids)
    for _ in range(3):  # the reference: the whole text run again for every token, no cache
        text.append(int(gemma.forward(weights, text, all_logits=False).logits[-1].argmax()))
    assert timing["tokens"] == text[len(ids):] and timing["same"] is True
    assert (timing["n"], timing["k"]) == (len(ids), 3)


def test_the_child_runs_at_the_lowest_priority():
    assert child.NICE == 19
    stats = {}
    assert child.run(os.nice, (0,), stats=stats) == 19  # the child's own niceness, as it reports it
    assert stats["nice"] == 19


def sleeper(folder: str) -> None:
    """In the child: write <pid>.pid, then sleep far longer than any test waits."""
    Path(folder, f"{os.getpid()}.pid").write_text(str(os.getpid()))
    time.sleep(3600)


def test_a_learner_who_leaves_kills_the_child_at_once(tmp_path):
    def wait():  # the script thread's checkpoint: Streamlit raises there once the child is known to run
        if list(tmp_path.glob("*.pid")):
            raise StopException()
        if time.monotonic() > deadline:
            raise TimeoutError("the child never started")

    deadline = time.monotonic() + WAIT
    with pytest.raises(StopException):
        child.run(sleeper, (str(tmp_path),), wait=wait)
    pid = int(next(tmp_path.glob("*.pid")).read_text())
    assert multiprocessing.active_children() == []
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped: no process, not even a zombie


def fails() -> None:
    raise ValueError("no such token\nsecond line")


def test_a_failing_child_is_one_line():
    with pytest.raises(child.ChildFailed) as error:
        child.run(fails)
    assert str(error.value) == "ValueError: no such token"
    assert multiprocessing.active_children() == []


def test_the_page_measures_in_a_child_and_shares_one_measurement_per_press(monkeypatch):
    """measure(): both lengths in one child; a later press measures again; wait() is handed to the child runner."""
    import ui.gpt.cache as cache

    seen = []

    def fake(jobs, wait=None, model_key="smollm2"):
        seen.append(([len(ids) for ids, _ in jobs], wait))
        return [{"without": 2.0, "with": 1.0, "same": True, "n": len(ids), "k": k, "length": len(ids) + k}
                for ids, k in jobs]

    monkeypatch.setattr(cache, "_in_child", fake)
    monkeypatch.setattr(cache, "measuring", lambda: lock)
    monkeypatch.setattr(cache, "measurements", lambda: store)
    import threading

    lock, store = threading.Lock(), {}
    ids = (1, 2, 3)
    first = cache.measure(ids, wait=print)
    second = cache.measure(ids)
    assert [lengths for lengths, _ in seen] == [[3, cache.LONG], [3, cache.LONG]]
    assert seen[0][1] is print
    assert first["short"]["n"] == 3 and second["long"]["n"] == cache.LONG and second["finished"] >= first["finished"]
    assert not lock.locked()
