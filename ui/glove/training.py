"""Lesson 6, training the head: runs shared by the server's sessions, and the conclusion, our trained head beside a
real trained model (lesson 8's) on the same held-out sentences with the same two-way choice (chance 50 %)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import asdict

import streamlit as st

from attention_core.glove.pretrained import candidates, choice_weights, picked_head, two_way_rows
from attention_core.glove.pronouns import load_pronoun_dataset
from attention_core.glove.training import TrainSetting, train_head
from attention_core.pretrained import INSTALL_COMMAND, ModelUnavailable, load_model
from ui.shared.common import data_table, explanation

REAL_TRAIN_SENTENCES = 48  # the real model's head is picked on these many training sentences (24 pairs)


class SharedTrainings:
    """Finished training runs shared by every session of the server, one per setting (a run is seeded: the same
    setting gives the same weights), so a class that presses "Train" together trains once, not 40 times.

    ``run(setting, train)`` returns (result, seconds, trained_here): the first caller of a setting trains (with its
    own progress bar); callers of the same setting meanwhile wait for that run instead of queueing their own.
    """

    def __init__(self, max_entries: int = 32):
        self._lock = threading.Lock()
        self._key_locks: dict[TrainSetting, threading.Lock] = {}
        self._done: OrderedDict[TrainSetting, tuple] = OrderedDict()
        self._max = max_entries

    def get(self, setting: TrainSetting):
        with self._lock:
            return self._done.get(setting)

    def run(self, setting: TrainSetting, train):
        with self._lock:
            key_lock = self._key_locks.setdefault(setting, threading.Lock())
        with key_lock:
            done = self.get(setting)
            if done is not None:
                return (*done, False)
            start = time.perf_counter()
            result = train()
            seconds = time.perf_counter() - start
            for array in (result.W_q, result.W_k, result.W_q_init, result.W_k_init, result.losses):
                array.flags.writeable = False  # shared by every session: read-only
            with self._lock:
                self._done[setting] = (result, seconds)
                while len(self._done) > self._max:
                    self._key_locks.pop(self._done.popitem(last=False)[0], None)
            return result, seconds, True


@st.cache_resource(show_spinner=False)
def shared_trainings() -> SharedTrainings:
    return SharedTrainings()


def run_training(t, batch, setting: TrainSetting) -> dict:
    store = shared_trainings()
    bar = st.progress(0.0, text=t("glove.train_running", step=0, steps=setting.steps, loss="…"))
    every = max(1, setting.steps // 40)

    def progress(step: int, loss: float) -> None:
        if step % every == 0 or step == setting.steps:
            bar.progress(step / setting.steps, text=t("glove.train_running", step=step, steps=setting.steps,
                                                      loss=f"{loss:.4f}"))

    result, seconds, _ = store.run(setting, lambda: train_head(batch, setting, callback=progress))
    bar.empty()
    return {"setting": asdict(setting), "W_q": result.W_q, "W_k": result.W_k, "W_q_init": result.W_q_init,
            "W_k_init": result.W_k_init, "losses": result.losses, "seconds": seconds}


@st.cache_resource(show_spinner=False)
def real_model_head():
    """-> (layer, head, accuracy on the picking sentences, held-out accuracy, how many picked on), or None when lesson
    8's model is not installed. Once per process: one forward pass per sentence."""
    try:
        model = load_model()
    except ModelUnavailable:
        return None
    dataset = load_pronoun_dataset()
    picking = dataset.train[:REAL_TRAIN_SENTENCES]
    return (*picked_head(choice_weights(model, picking), choice_weights(model, dataset.held_out)), len(picking))


def section_side_by_side(t, trained: dict | None, held_before, held_after) -> None:
    """After a training run: the two-way accuracy of our head (before, after) and of the real model's picked head."""
    if trained is None:
        return
    st.markdown("##### " + t("glove.compare_header"))
    dataset = load_pronoun_dataset()
    choices = candidates(dataset.held_out)
    ours_before, ours_after = two_way_rows(held_before, choices).mean(), two_way_rows(held_after, choices).mean()
    with st.spinner(t("glove.compare_running")):
        real = real_model_head()
    explanation(t("glove.compare_intro", n=len(dataset.held_out), pronoun=dataset.pronoun,
                  n_pick=REAL_TRAIN_SENTENCES))
    rows = {t("glove.compare_col_head"): [t("glove.compare_ours_before"), t("glove.compare_ours_after")],
            t("glove.compare_col_acc"): [f"{100 * ours_before:.1f} %", f"{100 * ours_after:.1f} %"]}
    if real is None:
        data_table(rows, hide_index=True, key="glove_compare_table")
        st.caption(t("glove.compare_missing", command=INSTALL_COMMAND))
        return
    layer, head, picked_on, held = real[:4]
    rows[t("glove.compare_col_head")].append(t("glove.compare_real", head=f"L{layer}H{head}"))
    rows[t("glove.compare_col_acc")].append(f"{100 * held:.1f} %")
    data_table(rows, hide_index=True, key="glove_compare_table")
    st.caption(t("glove.compare_caption", ours=f"{100 * ours_after:.1f} %", real=f"{100 * held:.1f} %",
                 head=f"L{layer}H{head}", picked=f"{100 * picked_on:.1f} %", n_pick=REAL_TRAIN_SENTENCES))
