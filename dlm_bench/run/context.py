"""What the run harness gives a model family for one run (`RunContext`): the seeded process, the device and dtype,
the loaded dataset and its protocol split, the thread rule, the training clock, and the `Outcome` the family fills.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig

from .. import data
from ..config.capabilities import ModelSpec
from ..errors import ConfigError
from ..results.outcome import Outcome
from .threads import apply_threads

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device=cuda but torch sees no CUDA device (use device=auto or device=cpu)")
    return torch.device(name)


@dataclass
class Prepared:
    dataset: data.Dataset
    split: data.Split
    tensors: dict  # name -> (X, y) torch tensors in normalised units


def split_tensors(cfg: DictConfig, ds: data.Dataset, device: torch.device, dtype: torch.dtype) -> Prepared:
    """The protocol's seeded train/val/test split of `ds`, normalised, as tensors."""
    split = data.make_split(cfg.protocol, ds, cfg.seed)
    tensors = {}
    for part in ("train", "val", "test"):
        idx = getattr(split, part)
        X = split.x_stats.transform(ds.X[idx])
        y = split.y_stats.transform(ds.y[idx])
        tensors[part] = (torch.as_tensor(X, dtype=dtype, device=device), torch.as_tensor(y, dtype=dtype, device=device))
    return Prepared(ds, split, tensors)


def prepare_data(cfg: DictConfig, device: torch.device, dtype: torch.dtype) -> Prepared:
    """Load the configured dataset and split it (scripts and tests that build a model outside a run)."""
    return split_tensors(cfg, data.load_from_config(cfg.dataset), device, dtype)


@dataclass
class RunContext:
    cfg: DictConfig
    spec: ModelSpec
    run_dir: Path
    device: torch.device
    dtype: torch.dtype
    outcome: Outcome = field(default_factory=Outcome)
    dataset: data.Dataset | None = None
    threads: int | None = None
    checkpoint_identity: dict = field(default_factory=dict)  # run name + config hash (run/naming.py), checkpoints
    _splits: dict = field(default_factory=dict)
    _t0: float | None = None

    @classmethod
    def create(cls, cfg: DictConfig, spec: ModelSpec, run_dir: Path) -> "RunContext":
        ctx = cls(cfg, spec, run_dir, resolve_device(cfg.device.value), DTYPES[cfg.dtype.value])
        seed_everything(cfg.seed)
        return ctx

    def load(self) -> data.Dataset:
        """The configured dataset, then the family's data-dependent checks (ConfigError before any training)."""
        self.dataset = data.load_from_config(self.cfg.dataset)
        if self.spec.check_data is not None:
            self.spec.check_data(self.cfg, self.dataset)
        return self.dataset

    def split(self, dtype: torch.dtype | None = None) -> Prepared:
        dtype = dtype or self.dtype
        if dtype not in self._splits:
            self._splits[dtype] = split_tensors(self.cfg, self.dataset, self.device, dtype)
            if self._splits[dtype].split.name and not self.outcome.split:
                self.outcome.split = self._splits[dtype].split.name  # run.json says the test part was scaled
        return self._splits[dtype]

    def apply_threads(self, n: int, num_inducing: int | None, batch_size: int | None) -> int:
        """The thread rule (dlm_bench/run/threads.py) for this run's size; recorded in run.json's train.threads."""
        self.threads = apply_threads(int(n), None if num_inducing is None else int(num_inducing), batch_size)
        return self.threads

    def begin_training(self) -> None:
        """From here on an exception is a failed run (recorded), not a configuration error (raised)."""
        self._t0 = time.perf_counter()

    @property
    def training(self) -> bool:
        return self._t0 is not None

    def training_wall(self) -> float:
        return 0.0 if self._t0 is None else time.perf_counter() - self._t0
