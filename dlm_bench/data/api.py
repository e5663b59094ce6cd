"""What the rest of dlm_bench calls: load a dataset by name or config, fetch / verify the cache, the datasets
table. The top of the data layer (registry <- cache <- fetch <- loading <- large <- api): nothing below imports it."""

from __future__ import annotations

from typing import Optional, Union

from .datasets import DATASETS, Dataset, DatasetError, DatasetSpec, get_spec
from .fetch import cache_dir, status, verify
from .large import load_large
from .loading import parse_fetched
from .user import load_user_table


def load_spec(spec: DatasetSpec, progress: Optional[bool] = None, force: bool = False) -> Dataset:
    if spec.large:
        return load_large(spec, progress=progress, force=force)
    return parse_fetched(spec, progress=progress, force=force)


def load_dataset(name: str, progress: Optional[bool] = None) -> Dataset:
    return load_spec(get_spec(name), progress=progress)


def load_from_config(dataset_cfg) -> Dataset:
    """The dataset a `dataset` config node names (the runner's single entry point into data/).
    `dataset=csv` reads the user's own file (dataset.path, dataset.target, dataset.task)."""
    if dataset_cfg.name == "csv":
        return load_user_table(dataset_cfg)
    return load_dataset(dataset_cfg.name)


def fetch(names: Union[list[str], str], progress: Optional[bool] = None, force: bool = False) -> list[tuple[str, bool, str]]:
    """`dlm-bench fetch NAME... | --all [--force]`: fetch (and for large sets convert) each dataset; force:
    fetch again even if cached. Returns (name, ok, one-line message) per dataset; never raises DatasetError."""
    if names == "all":
        names = sorted(DATASETS)
    out = []
    for name in names:
        try:
            spec = get_spec(name)
            if spec.shipped:
                out.append((name, True, "shipped with the package"))
                continue
            ds = load_spec(spec, progress=progress, force=force)
            out.append((name, True, f"{ds.X.shape[0]} x {ds.X.shape[1]} in {cache_dir()}"))
        except DatasetError as exc:
            out.append((name, False, str(exc)))
    return out


def datasets_table() -> str:
    """Plain-text table for `dlm-bench datasets`: name, task, N x D, papers, status."""
    rows = [("name", "task", "N x D", "papers", "status")]
    for name in sorted(DATASETS):
        spec = DATASETS[name]
        n, d = spec.shape
        rows.append((name, spec.task, f"{n if n is not None else '?'} x {d}", ",".join(spec.papers), status(spec)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
