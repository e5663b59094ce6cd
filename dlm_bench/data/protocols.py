"""Train / validation / test protocols of the papers: seeded, deterministic index splits plus the
normalisation statistics of the training rows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .registry import Dataset, DatasetError
from .transforms import Standardizer


@dataclass
class Split:
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    x_stats: Standardizer | None = None  # fitted on the training rows only
    y_stats: Standardizer | None = None  # identity for non-regression tasks


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


def make_split(protocol_cfg, dataset: Dataset, seed: int) -> Split:
    """The split named by `protocol_cfg.name`, with train-only normalisation statistics attached."""
    name = protocol_cfg.name
    if name == "dlm_regression":
        split = dlm_regression_split(
            len(dataset.y),
            seed,
            train_frac=protocol_cfg.train_frac,
            val_frac=protocol_cfg.val_frac,
            train_size=protocol_cfg.train_size,
            test_size=protocol_cfg.test_size,
        )
    else:
        raise DatasetError(f"unknown protocol {name!r}; valid choices: {', '.join(PROTOCOLS)}")
    split.x_stats = Standardizer.fit(dataset.X[split.train], enabled=protocol_cfg.normalize_x)
    regression = dataset.task == "regression"
    split.y_stats = Standardizer.fit(dataset.y[split.train], enabled=protocol_cfg.normalize_y and regression)
    return split


PROTOCOLS = {"dlm_regression": dlm_regression_split}
