"""Train / validation / test protocols of the papers: seeded, deterministic index splits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .registry import DatasetError


@dataclass
class Split:
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray


def dlm_regression_split(
    n: int,
    seed: int,
    train_frac: float = 0.67,
    val_frac: float = 0.08,
    train_size: int | None = None,
    test_size: int | None = None,
) -> Split:
    """DLM paper, regression: shuffle, 67/8/25, optional subsample of the training part."""
    if not (0 < train_frac and 0 <= val_frac and train_frac + val_frac < 1):
        raise DatasetError(f"bad split fractions train_frac={train_frac}, val_frac={val_frac}")
    perm = np.random.default_rng(seed).permutation(n)
    n_train = int(round(train_frac * n))
    n_val = int(round(val_frac * n))
    train, val, test = perm[:n_train], perm[n_train : n_train + n_val], perm[n_train + n_val :]
    if train_size is not None:
        if not 0 < train_size <= len(train):
            raise DatasetError(f"protocol.train_size={train_size} must be in [1, {len(train)}] for this dataset")
        train = train[:train_size]
    if test_size is not None:
        test = test[:test_size]
    return Split(train, val, test)


PROTOCOLS = {"dlm_regression": dlm_regression_split}
