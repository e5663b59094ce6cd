"""Dataset registry: config name -> DatasetSpec (task, files and where they come from, parser, shape).

The entries themselves are data (catalog.yaml, loaded by catalog.py); this module holds the types and the lookups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

TASKS = ("regression", "binary", "multiclass", "count", "ordinal")


class DatasetError(Exception):
    """A user-facing data problem (unknown name, missing file, bad shape): one line, exit 2."""


@dataclass
class Dataset:
    name: str
    task: str  # regression | binary | multiclass | count | ordinal
    X: np.ndarray  # (N, D) float64, raw units
    y: np.ndarray  # (N,) raw units / labels
    feature_names: list[str] = field(default_factory=list)
    # upstream fixed (train, test) index pairs, e.g. the SAVIGP split files; None: protocols draw splits
    fixed_splits: Optional[list[tuple[np.ndarray, np.ndarray]]] = None
    # the user table's target labels as written -> the numbers trained on (yes/no -> 1/0, -1/1 -> 0/1); None when
    # the values are used as they are (run.json `label_map`)
    label_map: Optional[dict[str, float]] = None


HASH_ALGORITHMS = ("sha256", "sha512")


@dataclass(frozen=True)
class RemoteFile:
    """One downloadable file. `mirror_path` is its path inside a mirror and inside the cache
    (the layout of ../shared/data, e.g. "pol/fgp/pol_train_data.asc")."""

    url: str
    # "sha256:<hex>" / "sha512:<hex>" (pooch's known_hash form; a bare hex digest is sha256) of the file at
    # mirror_path; None: unpinned (no copy to check against), recorded in the cache only after it parsed
    known_hash: Optional[str]
    mirror_path: str
    unpack: Optional[str] = None  # "zip" | "tar" | "bz2" | "gz": unpacked next to the download
    members: Optional[tuple[str, ...]] = None  # archive members to extract (zip / tar)
    size: Optional[int] = None  # bytes of the download at `url`, where known
    approx_mb: Optional[float] = None  # an approximate public size, where the exact one is unknown
    member: Optional[str] = None  # `url` serves a zip holding this file under that name (mirrors keep the file)
    head_lines: Optional[int] = None  # only the first N lines are needed: streamed from the bz2 and stopped
    large_download: bool = False  # multi-GB: `fetch --all` leaves it out unless asked (--large)
    evidence: str = ""  # public source showing url / hash are current, with the date checked
    # other archives holding the same members under their own path, hash and member names (catalog.yaml `copy_of`):
    # used in this file's place only where one of them is here and this file is not (fetch.choose)
    copies: tuple["RemoteFile", ...] = ()

    def __post_init__(self):
        h = self.known_hash
        if h is not None:
            h = h.strip().lower()
            if ":" not in h:
                h = "sha256:" + h
            alg, _, digest = h.partition(":")
            if alg not in HASH_ALGORITHMS or not re.fullmatch(r"[0-9a-f]+", digest):
                raise ValueError(f"{self.mirror_path}: hash {self.known_hash!r} is not sha256:<hex> or sha512:<hex>")
            object.__setattr__(self, "known_hash", h)

    @property
    def fname(self) -> str:
        return self.mirror_path.rsplit("/", 1)[-1]

    @property
    def algorithm(self) -> Optional[str]:
        return self.known_hash.split(":", 1)[0] if self.known_hash else None

    @property
    def digest(self) -> Optional[str]:
        return self.known_hash.split(":", 1)[1] if self.known_hash else None

    @property
    def sha256(self) -> Optional[str]:
        """The pinned sha256 hex digest, if the pin is a sha256 (None for sha512 pins and unpinned files)."""
        return self.digest if self.algorithm == "sha256" else None

    @property
    def size_mb(self) -> Optional[float]:
        return self.size / 1e6 if self.size is not None else self.approx_mb


# A parser gets the local paths (shipped or fetched, unpacked where asked) in the order of
# `DatasetSpec.files` and returns X, y, feature names and, optionally, fixed splits.
Parser = Callable[[Sequence[Path]], tuple]


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    task: str
    papers: tuple[str, ...]
    shape: tuple[Optional[int], int]  # (N, D) expected after loading; N None: not known in advance
    parser: Parser
    files: tuple[RemoteFile, ...] = ()  # fetched into the cache
    shipped: tuple[str, ...] = ()  # paths inside the package's shipped data (used instead of files)
    description: str = ""
    source: str = ""  # provenance note: which upstream form, what was verified
    large: bool = False  # converted once to a compact .npz in the cache (see large.py)
    parser_name: str = ""  # the recipes.PARSERS entry `parser` was built from (catalog.yaml `parser`)

    def check(self, X: np.ndarray, y: np.ndarray) -> None:
        n, d = self.shape
        if X.ndim != 2 or X.shape[1] != d or (n is not None and X.shape[0] != n) or y.shape != (X.shape[0],):
            want = f"({n if n is not None else 'N'}, {d})"
            raise DatasetError(
                f"dataset {self.name!r}: expected X of shape {want} and y of matching length, "
                f"got X {X.shape} and y {y.shape} (corrupt or different upstream file?)"
            )


DATASETS: dict[str, DatasetSpec] = {}


def register(spec: DatasetSpec) -> DatasetSpec:
    if spec.task not in TASKS:
        raise ValueError(f"{spec.name}: task {spec.task!r} not in {TASKS}")
    DATASETS[spec.name] = spec
    return spec


def get_spec(name: str) -> DatasetSpec:
    if name not in DATASETS:
        raise DatasetError(f"unknown dataset {name!r}; valid choices: {', '.join(sorted(DATASETS))}, csv")
    return DATASETS[name]


def shipped_dir() -> Path:
    try:
        base = Path(str(resources.files("dlm_bench.shipped_data")))
        if (base / "README.md").is_file():
            return base
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parents[2] / "data"


def shipped_path(relpath: str) -> Path:
    """A file in the package's shipped data (repo: data/)."""
    base = shipped_dir()
    path = base / relpath
    if not path.is_file():
        raise DatasetError(f"shipped data file {relpath!r} is missing from {base} (broken install?)")
    return path
