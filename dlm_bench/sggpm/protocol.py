"""Upstream's experimental protocol (sparse_var_inf_ggpm_experiments, sparse_exp_*.m / sod_exp_*.m):

ISS = round(logspace(log10 ceil(N/100), log10 min(1000, floor(N/2)), 10)) with MATLAB rounding (half away from 0);
one random permutation of ISS_max rows gives nested active sets (the first M rows); the N - M other rows are split
into 10 folds; train = 9 folds + the active set (in that order), test = the held-out fold; z-scoring on the train
rows. SoD methods train once per M, on the active rows z-scored with the fold-1 training statistics.

`published_ucsdpeds_splits` reads upstream's stored ixpseudo and M = 167 folds (0-based copies of the variables of
sparse_exp_gppr_count_dataset_ucsdpeds1l_N4000_D30_output_052615_193244.mat in outputs.zip of
rsheth80/sparse_var_inf_ggpm_experiments@71ebd234), each file sha256-checked.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.datasets import DatasetError
from ..errors import ConfigError

EXPERIMENTS = ("rsheth80/sparse_var_inf_ggpm_experiments", "71ebd234e303791b1e71325db29b3c79865fe745")
SPLITS_DIR = "ucsd_peds1/sggpm_splits"
_SHA = {
    "active_set_order.txt": "055acb1ce1bd0a6daf92a9f26f5b9189a7b1ec82af72952867b874a5b8947ec2",
    "rest_M167.txt": "fb958f0c4d5dc99f5f94a858f602980432fc2548a4ccd33a5e5a0313639c25c0",
    "fold01_train_M167.txt": "def31075d77273c096b9f9bd33bfa35b4641c119f1f7bf11bb534a329674c718",
    "fold01_test_M167.txt": "d7ea71a6bfb21b150cbcef76192341c392bfb1d6326fd012591d8779968fdfb0",
    "fold02_train_M167.txt": "a3ded52d893204fecb16079648ca36c2365b32eb78e0988e705072d9aed7e9db",
    "fold02_test_M167.txt": "1560156677aed5d9accf92fa18a4eb1ff627bd9e492a3805c1e4c44c00a65df6",
    "fold03_train_M167.txt": "35bd6cf15b635245b57e4148dbbbe7ba4288ed9187de540640d0d66920266198",
    "fold03_test_M167.txt": "02cbe780b6fc88a33b3cc241d8506f8d3c9f80ad69f000cec7e5f6977aae470b",
    "fold04_train_M167.txt": "1a304dee5bf2b7fdb8c801ba90ca0d33eef4c97f0385198febc56735cc6b25fe",
    "fold04_test_M167.txt": "327aa45cfebbb64cc3b09de847ae12c6c2603a22a9e633f93d7fcb367893c518",
    "fold05_train_M167.txt": "6e7703eecfd9e7a4e3a4f9b68c8fcc7c9cedb95674b42ea8a25877f8d0417b3b",
    "fold05_test_M167.txt": "c858acfe4fb9859dd3413d6a6277b847afba15a7c04ffb725255e9d1c9e2a978",
    "fold06_train_M167.txt": "d12095f2e8057f26ec133c6180ae79549e6bd2c910b16395b9144ec3dfc320c1",
    "fold06_test_M167.txt": "e7a02db9afc117b27baf13de9f91a6d2d62b80bfdcb01af163b4fd05ebd442e2",
    "fold07_train_M167.txt": "b3df7ae751556b4f80860676975b9e73c3e33e73e4f76a86bd1ca86762e40ad7",
    "fold07_test_M167.txt": "c14792c0a34651098cca4201a097091363d247cad84d13a5c3b93cae39aa273d",
    "fold08_train_M167.txt": "da075115558955d524d7be0670f5ce8455a48a55837cc44a2f500ef4c01a1e2f",
    "fold08_test_M167.txt": "b5c525cc59512934b7a664c4585b9fe4635781311a0b96e92f884dd99c8039f0",
    "fold09_train_M167.txt": "9a6c67cd51bcab9bd3bc416d95004adf2e640f1b7e839c17c02e7dd2362759a6",
    "fold09_test_M167.txt": "c5a358dcd830fce28452bdfb2d37eb9e5dca92950d5e823b90b94f81241ec326",
    "fold10_train_M167.txt": "27e41ae52f33fee898ca6d2e5ba2f0a1f4c0a2719e62befdc575ff1781cd7095",
    "fold10_test_M167.txt": "8c2e53bb90087c1100016d03c2707a9c7b290fbd4ce4aa959e438717f26fad42",
}


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
    out = {}
    for M in sizes:
        active = order[:M]
        rest = np.setdiff1d(np.arange(N), active)
        parts = np.array_split(rest[rng.permutation(len(rest))], folds)
        out[M] = [Fold(np.concatenate([np.concatenate([p for j, p in enumerate(parts) if j != k]), active]), parts[k])
                  for k in range(folds)]
    return order, out


def _splits_root(root: str | os.PathLike | None) -> Path:
    base = root or os.environ.get("DLM_BENCH_MIRROR")
    if not base:
        raise DatasetError("sggpm.published_splits needs the offline mirror: set DLM_BENCH_MIRROR (e.g. ../shared/data) "
                           f"holding {SPLITS_DIR}/ (derived from {EXPERIMENTS[0]} outputs.zip)")
    return Path(base).expanduser() / SPLITS_DIR


def _read(root: Path, name: str) -> np.ndarray:
    import hashlib

    p = root / name
    if not p.is_file():
        raise DatasetError(f"published split file {p} is missing")
    data = p.read_bytes()
    if hashlib.sha256(data).hexdigest() != _SHA[name]:
        raise DatasetError(f"{p} does not match its registered sha256 {_SHA[name]}")
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
