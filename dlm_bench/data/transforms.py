"""Standardisation with training statistics, kept so metrics can be reported in original units."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Standardizer:
    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def fit(cls, a: np.ndarray, enabled: bool = True) -> "Standardizer":
        if not enabled:
            shape = a.shape[1:]
            return cls(np.zeros(shape), np.ones(shape))
        mean = a.mean(axis=0)
        std = a.std(axis=0)
        # constant columns (e.g. a dummy that never fires in the training part) stay unscaled
        std = np.where(std > 0, std, 1.0)
        return cls(mean, std)

    def transform(self, a: np.ndarray) -> np.ndarray:
        return (a - self.mean) / self.std

    def inverse(self, a: np.ndarray) -> np.ndarray:
        return a * self.std + self.mean
