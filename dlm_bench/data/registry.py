"""Dataset registry: config name -> DatasetSpec (task, where the data comes from, how to parse it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np


class DatasetError(Exception):
    """A user-facing data problem (unknown name, missing file, bad shape): one line, exit 2."""


@dataclass
class Dataset:
    name: str
    task: str  # regression | binary | multiclass | count | ordinal
    X: np.ndarray  # (N, D) float64, raw units
    y: np.ndarray  # (N,) raw units / labels
    feature_names: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    task: str
    papers: tuple[str, ...]
    shape: tuple[int, int]  # (N, D) expected after loading
    loader: Callable[[], tuple[np.ndarray, np.ndarray, list[str]]]
    shipped: bool = False
    description: str = ""

    def load(self) -> Dataset:
        X, y, names = self.loader()
        if X.shape != self.shape or y.shape != (self.shape[0],):
            raise DatasetError(
                f"dataset {self.name!r}: expected X of shape {self.shape} and y of length {self.shape[0]}, "
                f"got X {X.shape} and y {y.shape}"
            )
        return Dataset(self.name, self.task, X, y, names)


DATASETS: dict[str, DatasetSpec] = {}


def register(spec: DatasetSpec) -> DatasetSpec:
    DATASETS[spec.name] = spec
    return spec


def get_spec(name: str) -> DatasetSpec:
    if name not in DATASETS:
        raise DatasetError(f"unknown dataset {name!r}; valid choices: {', '.join(sorted(DATASETS))}")
    return DATASETS[name]


def load_dataset(name: str) -> Dataset:
    return get_spec(name).load()


def load_from_config(dataset_cfg) -> Dataset:
    """The dataset a `dataset` config node names (the runner's single entry point into data/)."""
    return load_dataset(dataset_cfg.name)


def shipped_path(relpath: str) -> Path:
    """A file in the package's shipped data (repo: data/)."""
    try:
        base = Path(str(resources.files("dlm_bench.shipped_data")))
    except ModuleNotFoundError:
        base = Path(__file__).resolve().parents[2] / "data"
    path = base / relpath
    if not path.is_file():
        raise DatasetError(f"shipped data file {relpath!r} is missing from {base} (broken install?)")
    return path


BOSTON_COLUMNS = "CRIM ZN INDUS CHAS NOX RM AGE DIS RAD TAX PTRATIO B LSTAT".split()


def _load_boston():
    table = np.loadtxt(shipped_path("boston/housing.data"), dtype=np.float64)
    return table[:, :13], table[:, 13], list(BOSTON_COLUMNS)


register(
    DatasetSpec(
        name="boston",
        task="regression",
        papers=("pac", "savigp"),
        shape=(506, 13),
        loader=_load_boston,
        shipped=True,
        description="Boston housing (UCI): 13 features, target MEDV in $1000s",
    )
)
