"""Large datasets (airline ~2M rows, song 515k, ...) are parsed once and stored as an uncompressed
.npz in the cache, so later loads take seconds instead of re-reading CSV text."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from ..results.atomic import atomic_write
from . import cache
from .datasets import Dataset, DatasetSpec
from .fetch import processed_path, writable_cache
from .loading import parse_fetched


def load_large(spec: DatasetSpec, force: bool = False, sources: Optional[dict[str, Path]] = None) -> Dataset:
    path = processed_path(spec)
    if path.is_file() and not force and not sources:
        if not cache.quick_check(path, spec.name):
            cache.try_write_sidecar(path)  # converted before sidecars existed
        with np.load(path, allow_pickle=False) as z:
            X, y, names = z["X"], z["y"], [str(s) for s in z["names"]]
        spec.check(X, y)
        return Dataset(spec.name, spec.task, X, y, names)
    writable_cache()
    ds = parse_fetched(spec, force=force, sources=sources)
    names = np.array(ds.feature_names, dtype=str)
    atomic_write(path, lambda fh: np.savez(fh, X=ds.X, y=ds.y, names=names))
    cache.write_sidecar(path)
    return ds
