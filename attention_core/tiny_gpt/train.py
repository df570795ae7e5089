"""Training a tiny GPT: Adam on fresh batches, measured on a fixed evaluation set every `every` steps.

The seed decides everything: the initial weights and the stream of batches come from two independent generators
spawned from it, so a run is reproduced exactly by its (config, seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .data import batch, eval_set
from .measure import measure
from .model import Adam, Buffers, Config, grads, init


class Cancelled(Exception):
    """A run stopped because its progress callback returned False."""


@dataclass(frozen=True)
class Run:
    """One training run. S evaluations at `steps` (every `every` steps, the first before any training, the last at
    config.steps): losses (S,), scores (S, L, H), snapshots {name: (S, *shape)} (empty if not kept), params the final
    weights."""

    config: Config
    seed: int
    steps: np.ndarray
    loss_repeated: np.ndarray
    loss_unrepeated: np.ndarray
    previous_token: np.ndarray
    induction: np.ndarray
    snapshots: dict
    params: dict

    def params_at(self, index: int) -> dict[str, np.ndarray]:
        """-> the weights of snapshot `index` (at step steps[index])."""
        return {name: values[index] for name, values in self.snapshots.items()}


def initial_params(config: Config, seed: int) -> dict[str, np.ndarray]:
    """-> the weights a run of (config, seed) starts from (its step 0), drawn without training."""
    return init(config, np.random.default_rng(np.random.SeedSequence(int(seed)).spawn(2)[0]))


def train(config: Config, seed: int, every: int = 25, progress: Callable[[int], bool | None] | None = None,
          keep_snapshots: bool = True) -> Run:
    """(config, seed) -> Run. progress(step) is called at every evaluation; returning False stops with Cancelled."""
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    params = initial_params(config, seed)
    data = np.random.default_rng(np.random.SeedSequence(int(seed)).spawn(2)[1])
    adam = Adam(params, config.learning_rate)
    evaluation = eval_set(config)
    step_buffers, eval_buffers = Buffers(), Buffers()
    steps = sorted(set(range(0, config.steps, every)) | {config.steps})
    records, snapshots = [], []
    for step in range(config.steps + 1):
        if step in steps[len(records):len(records) + 1]:
            records.append(measure(params, evaluation, new=eval_buffers))
            if keep_snapshots:
                snapshots.append({name: p.copy() for name, p in params.items()})
            if progress is not None and progress(step) is False:
                raise Cancelled(f"stopped at step {step} of {config.steps}")
        if step < config.steps:
            adam.step(params, grads(params, batch(config, data), new=step_buffers))
    return Run(config, int(seed), np.array(steps),
               np.array([r.loss_repeated for r in records]), np.array([r.loss_unrepeated for r in records]),
               np.array([r.previous_token for r in records]), np.array([r.induction for r in records]),
               {name: np.stack([s[name] for s in snapshots]) for name in params} if snapshots else {}, params)
