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


def dummy_code(values, drop_first: bool = True, prefix: str = "", categories=None) -> tuple[np.ndarray, list[str]]:
    """Categorical column -> indicator columns. With drop_first (the DLM supplement's coding), L
    categories give L-1 columns and the first category is the all-zero code. `categories` fixes
    the levels and their order (default: the sorted observed values)."""
    values = np.asarray(values)
    cats = list(categories) if categories is not None else sorted(set(values.tolist()))
    unknown = set(values.tolist()) - set(cats)
    if unknown:
        raise ValueError(f"values {sorted(map(str, unknown))} not among the categories {cats}")
    keep = cats[1:] if drop_first else cats
    cols = np.stack([(values == c) for c in keep], axis=1).astype(np.float64) if keep else np.zeros((len(values), 0))
    return cols, [f"{prefix}{c}" for c in keep]
