"""The tiny GPT's training runs (reproducible for a seed, snapshots, cancelling) and the runs kept on disk."""

from __future__ import annotations
import math
from dataclasses import replace
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from attention_core.attention import causal_mask, log_softmax, scaled_dot_product_attention
from attention_core.tiny_gpt import (Adam, Buffers, Cancelled, Config, attention_maps, batch, cache_root, cached_run,
                                     eval_set, formation_step, forward, grads, init, initial_params, load_run, loss,
                                     measure, plateau_loss, run_path, save_run, sequences, shapes, train)
from attention_core.tiny_gpt.measure import induction_scores, previous_token_scores
from tests.hypothesis_budget import examples
from tests.test_tiny_gpt_core import reference_forward, tiny  # noqa: F401 - helpers and fixtures of that file


# --- training ------------------------------------------------------------------------------------------------------

def small_run_config(**kw) -> Config:
    return replace(Config(n_layer=1, n_head=1, d_model=8, vocab=8, seq_len=8, segment_min=2, segment_max=4,
                          batch_size=4, steps=7, eval_size=6), **kw)


def test_a_run_is_reproduced_by_its_seed_and_differs_for_another():
    config = small_run_config()
    one, two, other = train(config, 3, every=3), train(config, 3, every=3), train(config, 4, every=3)
    assert one.steps.tolist() == [0, 3, 6, 7]
    for field in ("loss_repeated", "loss_unrepeated", "previous_token", "induction"):
        assert np.array_equal(getattr(one, field), getattr(two, field))
        assert not np.array_equal(getattr(one, field), getattr(other, field))
    for name in one.params:
        assert np.array_equal(one.params[name], two.params[name])
        assert np.array_equal(one.snapshots[name][-1], one.params[name])
        assert one.snapshots[name].shape == (4, *one.params[name].shape)
    start = init(config, np.random.default_rng(np.random.SeedSequence(3).spawn(2)[0]))
    for name in start:
        assert np.array_equal(one.params_at(0)[name], start[name])
        assert np.array_equal(initial_params(config, 3)[name], start[name])


def test_a_run_records_what_its_snapshots_measure():
    config = small_run_config()
    run = train(config, 0, every=2)
    seqs = eval_set(config)
    for i in (0, 2, len(run.steps) - 1):
        m = measure(run.params_at(i), seqs)
        assert run.loss_repeated[i] == m.loss_repeated and np.array_equal(run.induction[i], m.induction)
    assert run.loss_repeated[-1] < run.loss_repeated[0]


def test_a_run_stops_when_its_progress_says_so():
    config = small_run_config(steps=20)
    seen = []
    with pytest.raises(Cancelled, match="step 10"):
        train(config, 0, every=5, progress=lambda step: seen.append(step) or step < 10)
    assert seen == [0, 5, 10]
    with pytest.raises(ValueError):
        train(config, 0, every=0)


def test_reused_buffers_give_the_fresh_arrays_results_call_after_call():
    config = replace(tiny(), dtype="float32", init_std=0.3)
    params = init(config, 0)
    buffers = Buffers()
    for seed in (1, 2, 1):
        tokens = batch(config, seed)
        want, got = grads(params, tokens), grads(params, tokens, new=buffers)
        for name in params:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        got, want = measure(params, eval_set(config), new=buffers), measure(params, eval_set(config))
        assert (got.loss_repeated, got.loss_unrepeated) == (want.loss_repeated, want.loss_unrepeated)
        assert np.array_equal(got.induction, want.induction) and np.array_equal(got.previous_token, want.previous_token)


def test_formation_step_is_the_first_step_meeting_both_conditions():
    steps = np.array([0, 25, 50, 75])
    induction = np.zeros((4, 2, 2))
    induction[1:, 1, 0] = [0.5, 0.39, 0.6]
    induction[3, 0, 1] = 0.9  # the first layer does not count
    losses = np.array([3.4, 1.5, 1.0, 0.9])
    assert formation_step(steps, induction, losses, plateau=2.8) == 75  # 25: loss too high; 50: score too low
    assert formation_step(steps, induction, losses, plateau=3.2) == 25
    assert formation_step(steps, induction, losses, plateau=1.0) is None


def test_attention_maps_of_one_sequence_are_the_batched_forward_pass_row():
    config = tiny()
    params = init(config, 2)
    tokens = batch(config, 3)
    _, want = reference_forward(params, tokens)
    got = attention_maps(params, tokens[1])
    assert got.shape == (config.n_layer, config.n_head, config.seq_len, config.seq_len)
    np.testing.assert_allclose(got, want[1], rtol=1e-10, atol=1e-12)


# --- runs on disk --------------------------------------------------------------------------------------------------

def assert_same_run(a, b):
    assert (a.config, a.seed) == (b.config, b.seed)
    for field in ("steps", "loss_repeated", "loss_unrepeated", "previous_token", "induction"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert a.params.keys() == b.params.keys() and a.snapshots.keys() == b.snapshots.keys()
    for name in a.params:
        assert np.array_equal(a.params[name], b.params[name]) and a.params[name].dtype == b.params[name].dtype
    for name in a.snapshots:
        assert np.array_equal(a.snapshots[name], b.snapshots[name])


def test_a_run_saved_and_loaded_is_the_same_run_read_only(tmp_path):
    run = train(small_run_config(), 1, every=3)
    path = tmp_path / "sub" / "run.npz"
    assert save_run(run, path)
    loaded = load_run(path)
    assert_same_run(run, loaded)
    assert not loaded.params["W_Q"].flags.writeable and not loaded.induction.flags.writeable
    assert [p.name for p in path.parent.iterdir()] == ["run.npz"]  # no temporary file left behind
    bare = train(small_run_config(), 1, every=3, keep_snapshots=False)
    assert bare.snapshots == {} and save_run(bare, tmp_path / "bare.npz")
    assert_same_run(bare, load_run(tmp_path / "bare.npz"))


def test_cached_run_trains_once_then_reads_the_file(tmp_path, monkeypatch):
    import attention_core.tiny_gpt.store as store

    config = small_run_config()
    calls = []
    real_train = store.train
    monkeypatch.setattr(store, "train", lambda *a, **k: calls.append(a) or real_train(*a, **k))
    first = cached_run(config, 2, every=3, root=tmp_path)
    second = cached_run(config, 2, every=3, root=tmp_path)
    assert len(calls) == 1
    assert_same_run(first, second)
    assert_same_run(first, train(config, 2, every=3))
    path = run_path(config, 2, 3, root=tmp_path)
    path.write_bytes(b"not a run")  # damaged: trained again and replaced
    assert_same_run(cached_run(config, 2, every=3, root=tmp_path), first)
    assert len(calls) == 2 and load_run(path).seed == 2


def test_every_setting_has_its_own_file_under_the_cache_root(tmp_path, monkeypatch):
    config = small_run_config()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_root() == tmp_path / "attention-live" / "tiny_gpt"
    paths = {run_path(config, 0, 25), run_path(config, 1, 25), run_path(config, 0, 5),
             run_path(config, 0, 25, keep_snapshots=False), run_path(replace(config, learning_rate=0.02), 0, 25)}
    assert len(paths) == 5 and all(p.parent == cache_root() for p in paths)
    assert run_path(config, 0, 25) == run_path(small_run_config(), 0, 25)


def test_an_unwritable_cache_still_gives_the_run(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder should be")
    run = cached_run(small_run_config(), 0, every=3, root=blocked / "cache")
    assert run.steps[-1] == 7 and not save_run(run, blocked / "cache" / "x.npz")


def test_cached_run_trains_a_missing_file_with_the_fit_it_is_given(tmp_path):
    config, calls = small_run_config(), []

    def fit(*args):
        calls.append(args[:3])
        return train(*args)

    first = cached_run(config, 4, every=3, root=tmp_path, fit=fit)
    assert calls == [(config, 4, 3)] and run_path(config, 4, 3, root=tmp_path).is_file()
    assert_same_run(cached_run(config, 4, every=3, root=tmp_path, fit=fit), first)  # read from the file
    assert len(calls) == 1
    assert_same_run(first, train(config, 4, every=3))
