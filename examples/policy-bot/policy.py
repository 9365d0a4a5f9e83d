"""A linear softmax policy over the legal answers: the smallest policy that learns, in numpy alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class LinearPolicy:
    """Logits = observation @ weights + bias; illegal answers are never chosen."""

    def __init__(self, weights: np.ndarray, bias: np.ndarray) -> None:
        self.weights = weights
        self.bias = bias

    @classmethod
    def zeros(cls, observations: int, actions: int) -> LinearPolicy:
        """The uniform policy: every legal answer alike."""
        return cls(np.zeros((observations, actions)), np.zeros(actions))

    @classmethod
    def load(cls, path: str | Path) -> LinearPolicy:
        with np.load(path) as saved:
            return cls(saved["weights"], saved["bias"])

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, weights=self.weights.astype(np.float32), bias=self.bias.astype(np.float32))

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits = observation @ self.weights + self.bias
        logits = np.where(mask.astype(bool), logits, -np.inf)
        exp = np.exp(logits - logits.max())
        return exp / exp.sum()

    def sample(self, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(rng.choice(len(mask), p=self.probabilities(observation, mask)))

    def best(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return int(np.argmax(self.probabilities(observation, mask)))
