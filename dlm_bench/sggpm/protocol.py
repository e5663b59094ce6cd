"""Upstream's experimental protocol (sparse_var_inf_ggpm_experiments, sparse_exp_*.m / sod_exp_*.m):

ISS = round(logspace(log10 ceil(N/100), log10 min(1000, floor(N/2)), 10)) with MATLAB rounding (half away from 0);
one random permutation of ISS_max rows gives nested active sets (the first M rows); the N - M other rows are split
into 10 folds; train = 9 folds + the active set (in that order), test = the held-out fold; z-scoring on the train
rows. SoD methods train once per M, on the active rows z-scored with the fold-1 training statistics.

`published_ucsdpeds_splits` reads upstream's stored ixpseudo and M = 167 folds (0-based copies of the variables of
sparse_exp_gppr_count_dataset_ucsdpeds1l_N4000_D30_output_052615_193244.mat in outputs.zip of
rsheth80/sparse_var_inf_ggpm_experiments@71ebd234), each file sha256-checked against published_splits.yaml.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import yaml

from ..data.datasets import DatasetError
from ..errors import ConfigError

EXPERIMENTS = ("rsheth80/sparse_var_inf_ggpm_experiments", "71ebd234e303791b1e71325db29b3c79865fe745")
SPLITS_DIR = "ucsd_peds1/sggpm_splits"
SHA_FILE = "published_splits.yaml"  # the sha256 of each split file, shipped with the package


def mround(x):
    """MATLAB round: half away from zero."""
    x = np.asarray(x, float)
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(int)


def iss(N: int, num: int = 10) -> list[int]:
    lo, hi = math.ceil(N / 100), min(1000, math.floor(N / 2))
    return [int(v) for v in mround(np.logspace(math.log10(lo), math.log10(hi), num))]


@dataclass
class Fold:
    train: np.ndarray  # data rows: the 9 folds, then the active set (last M rows)
    test: np.ndarray


def nested_protocol(N: int, sizes, seed: int = 1, folds: int = 10):
    """(active_order, {M: [Fold] * folds}): one permutation gives the nested active sets; per M the other rows
    are split into `folds` folds by one permutation of them."""
    if folds < 2:
        raise ConfigError(f"sggpm.folds must be >= 2, got {folds}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(N)[: max(sizes)]
    return order, {M: split_rest(N, order[:M], rng, folds) for M in sizes}


def split_rest(N: int, active, rng, folds: int) -> list[Fold]:
    """The N rows but the active ones, permuted by rng and split into `folds` folds; train = the other folds, then
    the active set."""
    rest = np.setdiff1d(np.arange(N), active)
    parts = np.array_split(rest[rng.permutation(len(rest))], folds)
    return [Fold(np.concatenate([np.concatenate([p for j, p in enumerate(parts) if j != k]), active]), parts[k])
            for k in range(folds)]


def _splits_root(root: str | os.PathLike | None) -> Path:
    base = root or os.environ.get("DLM_BENCH_MIRROR")
    if not base:
        raise DatasetError("sggpm.published_splits needs the offline mirror: set DLM_BENCH_MIRROR (e.g. ../shared/data) "
                           f"holding {SPLITS_DIR}/ (derived from {EXPERIMENTS[0]} outputs.zip)")
    return Path(base).expanduser() / SPLITS_DIR


@lru_cache(maxsize=1)
def _registered_sha() -> dict:
    return yaml.safe_load(resources.files(__package__).joinpath(SHA_FILE).read_text())


def _read(root: Path, name: str) -> np.ndarray:
    p = root / name
    if not p.is_file():
        raise DatasetError(f"published split file {p} is missing")
    sha = _registered_sha()[name]
    if hashlib.sha256(p.read_bytes()).hexdigest() != sha:
        raise DatasetError(f"{p} does not match its registered sha256 {sha}")
    return np.loadtxt(p, dtype=np.int64, ndmin=1)


def published_ucsdpeds_splits(root=None):
    """(active_order (167 rows), [Fold] * 10 at M = 167): train = fold train rows + the active set."""
    r = _splits_root(root)
    order = _read(r, "active_set_order.txt")
    folds = [Fold(np.concatenate([_read(r, f"fold{k:02d}_train_M167.txt"), order]), _read(r, f"fold{k:02d}_test_M167.txt"))
             for k in range(1, 11)]
    return order, folds


def zscore_stats(X):
    """MATLAB zscore: sample standard deviation (ddof = 1); constant columns get sd 1."""
    mu, sd = X.mean(0), X.std(0, ddof=1)
    sd = np.where(sd == 0, 1.0, sd)
    return mu, sd
