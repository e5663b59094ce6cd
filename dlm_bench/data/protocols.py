"""Train / validation / test protocols of the papers: seeded, deterministic index splits plus the
normalisation statistics of the training rows.

  dlm_regression      shuffle, 67/8/25, optional train-size subsample of the train part, optional
                      cap on the test part (song: 10000)
  dlm_classification  10% of all rows validation, up to test_size (1000) test rows, the training
                      rows (up to train_size) from the rest; also count data; airline: 100000 test.
                      A small table whose test part would outnumber its training part gets a test
                      part of 25% of all rows instead (as dlm_regression), recorded as split
                      dlm_classification_test25
  pac                 80/20 train/test; the seed is the repetition (the paper uses 10)
  savigp              the upstream fixed splits stored with the dataset, split number seed % n
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .datasets import Dataset, DatasetError
from .transforms import Standardizer


@dataclass
class Split:
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    x_stats: Standardizer | None = None  # fitted on the training rows only
    y_stats: Standardizer | None = None  # identity for non-regression tasks
    name: str | None = None  # run.json's split when it is not the protocol's name (a scaled test part)


def _empty() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


def _take_train(train: np.ndarray, train_size: Optional[int]) -> np.ndarray:
    if train_size is None:
        return train
    if not 0 < train_size <= len(train):
        raise DatasetError(f"protocol.train_size={train_size} must be in [1, {len(train)}] for this dataset")
    return train[:train_size]


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
    train = _take_train(train, train_size)
    if test_size is not None:
        test = test[:test_size]
    return Split(train, val, test)


SMALL_TEST_FRAC = 0.25
SCALED_TEST_SPLIT = "dlm_classification_test25"


def dlm_classification_split(
    n: int, seed: int, val_frac: float = 0.1, train_size: int | None = 2000, test_size: int | None = 1000
) -> Split:
    """DLM paper, classification / count: validation = val_frac of all rows, then up to test_size
    test rows, training rows from the rest (the test set does not depend on train_size)."""
    if not 0 <= val_frac < 1:
        raise DatasetError(f"bad protocol.val_frac={val_frac}")
    perm = np.random.default_rng(seed).permutation(n)
    n_val = int(round(val_frac * n))
    rest = n - n_val
    n_test = rest - 1 if test_size is None else min(test_size, rest - 1)
    name = None
    if test_size is not None and n_test > rest - n_test:
        # a small table (a 300-row CSV): a fixed 1000-row test part would leave (almost) nothing to train on, so the
        # test part is dlm_regression's 25 % of all rows; no registered DLM data set is small enough to get here
        n_test, name = max(1, int(round(SMALL_TEST_FRAC * n))), SCALED_TEST_SPLIT
    if n_test < 1:
        raise DatasetError(f"dataset of {n} rows is too small for this protocol")
    val, test, train = perm[:n_val], perm[n_val : n_val + n_test], perm[n_val + n_test :]
    if train_size is not None and train_size > len(train):
        train_size = len(train)  # "up to" the requested size on small data sets
    return Split(_take_train(train, train_size), val, test, name=name)


def pac_split(n: int, seed: int, train_frac: float = 0.8, train_size: int | None = None,
              stride: int | None = None) -> Split:
    """PAC-GP paper: 80/20 train/test; repetitions are seeds 0..9. `stride`: the deterministic subsample of App. E
    (every stride-th row trains, the rest test; the seed then varies only the model's initialisation)."""
    if stride is not None:
        rows = np.arange(n)
        train = rows[::stride]
        return Split(_take_train(train, train_size), _empty(), np.setdiff1d(rows, train))
    if not 0 < train_frac < 1:
        raise DatasetError(f"bad protocol.train_frac={train_frac}")
    return dlm_regression_split(n, seed, train_frac, val_frac=0.0, train_size=train_size)  # the same draw, no val part


def savigp_split(dataset: Dataset, seed: int) -> Split:
    """SAVIGP supplement: the upstream fixed train/test splits; seed picks split number seed % n."""
    if not dataset.fixed_splits:
        from .datasets import DATASETS

        names = sorted(n for n in DATASETS if n.endswith("_savigp") or n in ("usps479", "mnist", "mnist_oddeven"))
        raise DatasetError(f"dataset {dataset.name!r} has no upstream fixed splits; use one of: {', '.join(names)}")
    train, test = dataset.fixed_splits[seed % len(dataset.fixed_splits)]
    return Split(np.asarray(train), _empty(), np.asarray(test))


MIN_TRAIN = 3  # a mean, a standard deviation and one degree of freedom left


def check_split(split: Split, dataset: Dataset, protocol: str, wants_val: bool) -> None:
    """Degenerate data are a data error before training, not a diverged run or an "ok" run without metrics."""
    for what, a in (("feature", dataset.X), ("target", dataset.y)):
        bad = ~np.isfinite(a)
        if bad.any():
            rows = np.unique(np.nonzero(bad)[0])
            raise DatasetError(
                f"dataset {dataset.name!r}: {len(rows)} row(s) with a non-finite {what} value (first: row {rows[0]}); "
                "clean the data first"
            )
    sizes = {"train": len(split.train), "val": len(split.val), "test": len(split.test)}
    need = {"train": MIN_TRAIN, "test": 1, "val": 1 if wants_val else 0}
    for part, n in sizes.items():
        if n < need[part]:
            raise DatasetError(
                f"dataset {dataset.name!r} ({len(dataset.y)} rows) leaves {n} {part} row(s) under protocol={protocol} "
                f"(train/val/test = {sizes['train']}/{sizes['val']}/{sizes['test']}; at least {need[part]} needed)"
                + ("; set protocol.test_size (the test part is up to 1000 rows) or protocol.val_frac smaller"
                   if protocol == "dlm_classification" and part == "train" else "")
            )


PROTOCOLS = {
    "dlm_regression": dlm_regression_split,
    "dlm_classification": dlm_classification_split,
    "pac": pac_split,
    "savigp": savigp_split,
}


def make_split(protocol_cfg, dataset: Dataset, seed: int) -> Split:
    """The split named by `protocol_cfg.name`, with train-only normalisation statistics attached. A split function's
    keyword arguments (after n, seed) are protocol config keys of the same name; savigp reads the dataset's own."""
    name = protocol_cfg.name
    if name not in PROTOCOLS:
        raise DatasetError(f"unknown protocol {name!r}; valid choices: {', '.join(PROTOCOLS)}")
    if name == "savigp":
        split = savigp_split(dataset, seed)
    else:
        keys = list(inspect.signature(PROTOCOLS[name]).parameters)[2:]
        # only the keys the config has: a split argument it lacks keeps the function's own default, not None
        given = {k: getattr(protocol_cfg, k) for k in keys if hasattr(protocol_cfg, k)}
        split = PROTOCOLS[name](len(dataset.y), seed, **given)
    check_split(split, dataset, name, wants_val=name in ("dlm_regression", "dlm_classification") and protocol_cfg.val_frac > 0)
    split.x_stats = Standardizer.fit(dataset.X[split.train], enabled=protocol_cfg.normalize_x)
    regression = dataset.task == "regression"
    split.y_stats = Standardizer.fit(dataset.y[split.train], enabled=protocol_cfg.normalize_y and regression)
    return split
