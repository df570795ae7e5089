"""A sequence's keys and values for every layer, kept while a GPT writes one token at a time (any model whose config
names n_layer, n_kv_head and head_dim)."""

from __future__ import annotations

import numpy as np


class KVCache:
    """One sequence's keys and values, every layer: keys/values (L, n_kv, t, hd) for its `length` tokens so far.

    Storage grows by doubling, so adding a token copies nothing most of the time."""

    def __init__(self, config, capacity: int = 64):
        shape = (config.n_layer, config.n_kv_head, max(1, capacity), config.head_dim)
        self._keys = np.zeros(shape, dtype=np.float32)
        self._values = np.zeros(shape, dtype=np.float32)
        self.length = 0

    @property
    def keys(self) -> np.ndarray:
        return self._keys[:, :, :self.length]

    @property
    def values(self) -> np.ndarray:
        return self._values[:, :, :self.length]

    def reserve(self, extra: int) -> None:
        """Make room for `extra` more tokens (capacity doubles until they fit)."""
        capacity = self._keys.shape[2]
        if self.length + extra <= capacity:
            return
        while capacity < self.length + extra:
            capacity *= 2
        for name in ("_keys", "_values"):
            old = getattr(self, name)
            grown = np.zeros(old.shape[:2] + (capacity,) + old.shape[3:], dtype=np.float32)
            grown[:, :, :self.length] = old[:, :, :self.length]
            setattr(self, name, grown)

    def store(self, layer: int, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """k, v: (n_kv, n, hd) of the new tokens at `layer` -> all keys, values (n_kv, length + n, hd) so far."""
        self.reserve(k.shape[1])
        end = self.length + k.shape[1]
        self._keys[layer, :, self.length:end] = k
        self._values[layer, :, self.length:end] = v
        return self._keys[layer, :, :end], self._values[layer, :, :end]
