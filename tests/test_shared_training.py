"""A class pressing "Train the head" together trains each setting once (ui.glove.training.SharedTrainings)."""

import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from attention_core.glove.training import TrainResult, TrainSetting
from ui.glove.training import SharedTrainings


def fake_result(setting: TrainSetting) -> TrainResult:
    w = np.full((3, 2), float(setting.seed))
    return TrainResult(setting, w.copy(), w.copy(), w.copy(), w.copy(), np.arange(3.0))


def test_forty_presses_of_one_setting_train_once_and_share_the_weights():
    store, calls, setting = SharedTrainings(), [], TrainSetting()

    def train():
        calls.append(1)
        time.sleep(0.05)  # long enough that the other presses arrive while it runs
        return fake_result(setting)

    results = []
    threads = [threading.Thread(target=lambda: results.append(store.run(setting, train))) for _ in range(40)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(calls) == 1
    assert sum(trained_here for _, _, trained_here in results) == 1
    first = results[0][0]
    assert all(r is first for r, _, _ in results)
    with pytest.raises(ValueError):
        first.W_q[0, 0] = 1.0  # shared by every session: read-only


def test_other_settings_train_separately_and_the_store_is_bounded():
    store = SharedTrainings(max_entries=2)
    settings = [replace(TrainSetting(), seed=s) for s in range(3)]
    for s in settings:
        result, _, trained_here = store.run(s, lambda s=s: fake_result(s))
        assert trained_here and result.W_q[0, 0] == s.seed
    assert store.get(settings[0]) is None  # the oldest went first
    assert store.get(settings[2]) is not None
    _, _, trained_here = store.run(settings[2], lambda: pytest.fail("trained twice"))
    assert not trained_here
