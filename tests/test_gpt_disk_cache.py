"""Results kept on disk between starts (attention_core/gpt/disk_cache.py), and lesson 9's study read from there: a
second start computes nothing (counted in model passes)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from attention_core.gpt import disk_cache

DIGEST = "ab" * 32


def counting(values):
    calls = []

    def compute():
        calls.append(1)
        return values

    return compute, calls


def test_a_value_comes_back_exactly_and_is_computed_once(tmp_path):
    value = {"induction": np.arange(12, dtype=np.float64).reshape(3, 4) / 7, "head": (4, 2),
             "score": (0.1 + 0.2, 1e-300, float("nan")), "count": np.int64(7), "name": "L4H2", "rows": [1, [2.5]],
             "none": None, "flag": True, "ids": np.array([17, 49151], dtype=np.int32)}
    compute, calls = counting(value)
    first = disk_cache.load_or_compute("study", {"n": 8}, compute, digest=DIGEST, cache_root=tmp_path)
    again = disk_cache.load_or_compute("study", {"n": 8}, compute, digest=DIGEST, cache_root=tmp_path)
    assert len(calls) == 1  # the second call read the file
    assert first is value
    assert again["induction"].dtype == np.float64 and again["induction"].shape == (3, 4)
    assert np.array_equal(again["induction"], value["induction"])  # bit for bit, not approximately
    assert not again["induction"].flags.writeable
    assert again["head"] == (4, 2) and isinstance(again["head"], tuple)
    assert again["score"][0] == 0.1 + 0.2 and again["score"][1] == 1e-300 and np.isnan(again["score"][2])
    assert again["count"] == 7 and again["name"] == "L4H2" and again["rows"] == [1, [2.5]]
    assert again["none"] is None and again["flag"] is True
    assert again["ids"].dtype == np.int32 and again["ids"].tolist() == [17, 49151]


def test_the_file_lives_under_the_weights_hash_and_the_format_version(tmp_path):
    disk_cache.load_or_compute("study", {}, lambda: 1, digest=DIGEST, cache_root=tmp_path)
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 1
    assert files[0].parent == tmp_path / "results" / f"{DIGEST}-f{disk_cache.FORMAT_VERSION}"
    assert files[0].name.startswith("study-")
    assert [p.name for p in files[0].parent.iterdir()] == [files[0].name]  # no temporary file left behind


@pytest.mark.parametrize("change", ["digest", "params", "source", "name", "format"])
def test_other_weights_parameters_code_or_format_compute_again(tmp_path, monkeypatch, change):
    source = tmp_path / "study_code.py"
    source.write_text("A = 1\n")
    args = dict(name="study", params={"n": 8}, digest=DIGEST)
    compute, calls = counting(5)

    def run(**over):
        a = {**args, **over}
        return disk_cache.load_or_compute(a["name"], a["params"], compute, digest=a["digest"], sources=(source,),
                                          cache_root=tmp_path / "cache")

    run()
    if change == "digest":
        run(digest="cd" * 32)
    elif change == "params":
        run(params={"n": 9})
    elif change == "name":
        run(name="other")
    elif change == "source":
        source.write_text("A = 2\n")
        run()
    else:
        monkeypatch.setattr(disk_cache, "FORMAT_VERSION", disk_cache.FORMAT_VERSION + 1)
        run()
    assert len(calls) == 2


def test_a_damaged_file_is_computed_again_and_replaced(tmp_path):
    compute, calls = counting([1.5])
    disk_cache.load_or_compute("study", {}, compute, digest=DIGEST, cache_root=tmp_path)
    (path,) = tmp_path.rglob("*.json")
    path.write_text('{"format": 1, "value": [1.')  # half a file (what an atomic write never leaves)
    assert disk_cache.load_or_compute("study", {}, compute, digest=DIGEST, cache_root=tmp_path) == [1.5]
    assert len(calls) == 2
    assert disk_cache.read(path) == (True, [1.5])


def test_an_unwritable_folder_still_gives_the_value(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    compute, calls = counting(3)
    assert disk_cache.load_or_compute("study", {}, compute, digest=DIGEST, cache_root=blocker) == 3
    assert disk_cache.load_or_compute("study", {}, compute, digest=DIGEST, cache_root=blocker) == 3
    assert len(calls) == 2


def test_writers_racing_leave_one_whole_file(tmp_path):
    value = {"a": np.linspace(0, 1, 5000)}
    path = disk_cache.result_path("race", {}, DIGEST, (), tmp_path)
    threads = [threading.Thread(target=disk_cache.write, args=(path, value)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    found, read = disk_cache.read(path)
    assert found and np.array_equal(read["a"], value["a"])
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o644)


def test_what_cannot_be_stored_is_refused():
    with pytest.raises(TypeError):
        disk_cache.encode({1: "int key"})
    with pytest.raises(TypeError):
        disk_cache.encode(object())


# ---------------------------------------------------------------- lesson 9's study, a second start


@pytest.mark.slow
def test_a_second_start_reads_the_study_from_disk_without_a_model_pass(tmp_path, monkeypatch):
    from attention_core.smollm2 import model as gpt_model
    from ui.gpt import study as circuits  # the study's module

    monkeypatch.setattr(circuits, "SEQUENCES", 2)  # a small study: the parameters are part of the file's key
    monkeypatch.setattr(circuits, "PERIOD", 6)
    monkeypatch.setattr(disk_cache, "default_cache_root", lambda: tmp_path)  # only the results move; weights stay
    passes = []
    real_run = gpt_model.run

    def counted(*args, **kwargs):
        passes.append(1)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(gpt_model, "run", counted)
    circuits.study.clear()
    first = circuits.study()  # the first start: computed and written
    computed = len(passes)
    assert computed >= 3  # picking set, scoring set, the untrained copy's scoring set
    assert list((tmp_path / "results").rglob("induction-study-*.json"))
    circuits.study.clear()  # a restart: the process's cache is gone, the disk's is not
    second = circuits.study()
    assert len(passes) == computed  # not one pass more
    for name in ("induction", "picked", "picked_score", "strong", "untrained_best", "previous", "losses", "example"):
        assert np.array_equal(np.asarray(getattr(first, name)), np.asarray(getattr(second, name))), name
    assert second.induction.shape == (30, 9) and second.sequences == 2 and second.period == 6
    circuits.study.clear()


@pytest.mark.slow
def test_a_second_start_reads_the_famous_sentence_and_japanese_from_disk(tmp_path, monkeypatch):
    from attention_core.smollm2 import model as gpt_model
    from ui.gpt import mask, page

    monkeypatch.setattr(disk_cache, "default_cache_root", lambda: tmp_path)
    passes = []
    real_run = gpt_model.run
    monkeypatch.setattr(gpt_model, "run", lambda *a, **k: (passes.append(1), real_run(*a, **k))[1])
    for function, expected_passes in ((mask.minimal_pair_sentences, 2), (page.japanese_facts, 1)):
        function.clear()
        before = len(passes)
        first = function()
        assert len(passes) - before == expected_passes  # computed on the first start
        function.clear()  # a restart
        second = function()
        assert len(passes) - before == expected_passes  # read from disk: no pass more
        items = first.items() if isinstance(first, dict) else vars(first).items()
        for name, value in items:
            got = second[name] if isinstance(second, dict) else getattr(second, name)
            assert np.array_equal(np.asarray(value), np.asarray(got)), name
        assert type(first) is type(second)
        function.clear()


def test_the_decorator_keeps_a_functions_dataclass_on_disk(tmp_path, monkeypatch):
    import dataclasses

    monkeypatch.setattr(disk_cache, "default_cache_root", lambda: tmp_path)
    monkeypatch.setattr(disk_cache, "weights_digest", lambda path: DIGEST if path == "model.gguf" else "wrong file")

    @dataclasses.dataclass(frozen=True)
    class Facts:
        top: tuple
        scores: np.ndarray

    calls = []

    @disk_cache.on_disk("facts", model_file=lambda: "model.gguf", result=Facts)
    def facts(n):
        calls.append(n)
        return Facts(tuple(range(n)), np.full(n, 0.25, dtype=np.float32))

    first, again, other = facts(3), facts(3), facts(4)
    assert calls == [3, 4]  # facts(3) the second time came from disk
    assert isinstance(again, Facts) and again.top == (0, 1, 2) and again.scores.dtype == np.float32
    assert np.array_equal(again.scores, first.scores) and other.top == (0, 1, 2, 3)


@pytest.mark.slow
def test_building_the_float32_copy_reports_each_stage_and_every_tensor(tmp_path, monkeypatch):
    from attention_core.smollm2 import weights

    seen = []
    real_report = weights._report
    monkeypatch.setattr(weights, "_report", lambda *a: (seen.append(a), real_report(*a))[1])
    weights.model_cache_dir(weights.gguf_path(), cache_root=tmp_path)  # a fresh folder: built now
    stages = [s[0] for s in seen]
    assert stages[:2] == ["hashing", "reading"] and stages[-2:] == ["writing", ""]
    counts = [s[1:] for s in seen if s[0] == "dequantizing"]
    config = weights.GPTConfig()
    total = 9 * config.n_layer + 2  # nine tensors a layer, the embedding and the final norm
    assert counts == [(k, total) for k in range(1, total + 1)]  # every tensor, in order, out of the right total
    assert weights.build_progress() == ("", 0, 0)  # nothing being built any more
    seen.clear()
    weights.model_cache_dir(weights.gguf_path(), cache_root=tmp_path)  # built: only the hash is checked
    assert [s[0] for s in seen] == ["hashing", ""]


def test_a_presets_value_is_kept_on_disk_and_a_learners_own_prompt_never_is(tmp_path, monkeypatch):
    """ui.gpt.serving.presets_on_disk: the page's preset prompts (fixed texts) are read from disk at a later start;
    any other prompt is computed every time and leaves nothing on disk."""
    from ui.gpt import presets, serving

    monkeypatch.setattr(disk_cache, "default_cache_root", lambda: tmp_path)
    monkeypatch.setattr(disk_cache, "weights_digest", lambda path: DIGEST)
    monkeypatch.setattr(presets, "preset_prompts", lambda: ((5, 6, 7), (8, 9)))
    calls = []

    @serving.presets_on_disk("measured")
    def measured(ids, head):
        calls.append((ids, head))
        return {"sum": float(sum(ids)) / 3, "head": head}

    assert measured((5, 6, 7), (1, 2)) == {"sum": 6.0, "head": (1, 2)}
    assert measured((5, 6, 7), (1, 2)) == {"sum": 6.0, "head": (1, 2)}  # read back: the same value
    assert calls == [((5, 6, 7), (1, 2))]  # a preset: computed once, then read from disk
    assert measured((5, 6, 7), (3, 4))["head"] == (3, 4) and len(calls) == 2  # another argument: its own file
    written = sorted(tmp_path.rglob("measured-*.json"))
    assert len(written) == 2
    own = (5, 6, 8)  # a learner's own prompt
    assert measured(own, (1, 2)) == {"sum": 19 / 3, "head": (1, 2)} and measured(own, (1, 2))["sum"] == 19 / 3
    assert calls[-2:] == [(own, (1, 2)), (own, (1, 2))]  # computed each time (the page's own cache keeps it)
    assert sorted(tmp_path.rglob("measured-*.json")) == written  # and never written to disk


@pytest.mark.slow
def test_a_second_start_reads_every_first_answers_result_from_disk(tmp_path, monkeypatch):
    """store_results (dev.py, the image's build) writes what each question's first answer reads; after a restart
    (the process's caches cleared) warm_answers reads them back with no pass of the model but the presets' own
    passes, and every value is the one computed."""
    from attention_core.smollm2 import interventions, model as gpt_model
    from ui.gpt import circuits, mask, next_token, page, sink

    monkeypatch.setattr(disk_cache, "default_cache_root", lambda: tmp_path)
    passes, here = [], threading.get_ident()  # (a start-up thread of an earlier page test may run passes too)
    for module in (gpt_model, interventions):
        real = module.run
        monkeypatch.setattr(module, "run", lambda *a, _real=real, **k: (
            threading.get_ident() == here and passes.append(1), _real(*a, **k))[1])
    functions = (mask.referent_study, circuits.held_out_score, next_token.chat_top, mask.leak_test,
                 circuits.rotary_check, sink.random_first)

    def restart():
        for function in (*functions, mask.minimal_pair_sentences, page.japanese_facts, page._preset_pass,
                         page._own_pass, next_token.distribution):
            function.clear()

    restart()
    circuits.store_results()
    s = circuits.study()
    presets = page.preset_prompts()
    computed = {"referent": vars(mask.referent_study()), "ordinary": circuits.held_out_sentence_values(s.picked),
                "chat": [next_token.chat_top(ids) for ids in presets],
                "leak": [vars(mask.leak_test(ids)) for ids in presets],
                "rotary": [circuits.rotary_check(ids, s.previous) for ids in presets],
                "first": [sink.random_first(ids) for ids in presets]}
    for name in ("referent-study", "ordinary-text-held-out", "chat-top", "leak-test", "rotary-check", "random-first"):
        assert list(tmp_path.rglob(f"{name}-*.json")), name
    restart()
    passes.clear()
    monkeypatch.setattr(circuits.WARM, "result", lambda: None)  # (the default prompt's warm-up is not under test)
    circuits.warm_answers()
    own_passes = sum(1 + (len(ids) >= 3) for ids in presets)  # each preset's pass, and the untrained copy's
    assert len(passes) == own_passes
    again = {"referent": vars(mask.referent_study()), "ordinary": circuits.held_out_sentence_values(s.picked),
             "chat": [next_token.chat_top(ids) for ids in presets],
             "leak": [vars(mask.leak_test(ids)) for ids in presets],
             "rotary": [circuits.rotary_check(ids, s.previous) for ids in presets],
             "first": [sink.random_first(ids) for ids in presets]}
    assert len(passes) == own_passes  # all of it read back (or from the process's caches): not one pass more
    for key in ("ordinary", "chat", "leak", "rotary", "first"):
        assert again[key] == computed[key], key
    for name, value in computed["referent"].items():
        assert np.array_equal(np.asarray(value), np.asarray(again["referent"][name])), name
    restart()
