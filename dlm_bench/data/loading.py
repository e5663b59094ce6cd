"""Spec -> Dataset: locate the files (shipped, or fetched into the cache), parse, check the shape."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Optional

import numpy as np

from . import cache
from .datasets import Dataset, DatasetError, DatasetSpec, shipped_path
from .fetch import cache_dir, commit_file, files_of, record_path, stage_file, unpacked_paths, usable, writable_cache


def parse_fetched(spec: DatasetSpec, force: bool = False, sources: Optional[dict[str, Path]] = None) -> Dataset:
    """Parse `spec`'s files; files that are not cached yet (or all, with force; or those given a local file in
    `sources`, by mirror path) are staged, parsed and shape-checked in the staging folder and only then moved into
    the cache (see cache.py). When everything is cached, nothing is created in the cache (it may be read-only)."""
    if spec.shipped:
        return parse(spec, [shipped_path(p) for p in spec.shipped])
    sources = sources or {}
    # each file, or the registered copy that stands for it here; a local file given for a path is that path's own form
    chosen = files_of(spec)
    files = tuple(rf if rf.mirror_path in sources else c for rf, c in zip(spec.files, chosen))
    todo = [rf for rf in files if force or rf.mirror_path in sources or not usable(rf, spec.name)]
    if todo:
        writable_cache()
    with cache.staging_area(cache_dir()) if todo else contextlib.nullcontext() as area:
        paths = [stage_file(rf, area, source=sources.get(rf.mirror_path)) if rf in todo else unpacked_paths(rf)
                 for rf in files]
        ds = parse(spec, [p for ps in paths for p in ps])
        for rf in files:
            if rf in todo:
                commit_file(rf, area)
            elif cache.read_sidecar(record_path(rf)) is None:  # no registry hash: recorded once it parsed
                cache.try_write_sidecar(record_path(rf), unpacked_paths(rf) if rf.unpack else [])
    return ds


def parse(spec: DatasetSpec, paths: list[Path]) -> Dataset:
    try:
        out = spec.parser(paths)
    except DatasetError:
        raise
    except (ValueError, KeyError, IndexError, OSError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else ""
        raise DatasetError(
            f"dataset {spec.name!r}: cannot parse {', '.join(p.name for p in paths)} ({type(exc).__name__}: {msg})"
        ) from None
    X, y, names = out[:3]
    splits = out[3] if len(out) > 3 else None
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y).reshape(-1)
    spec.check(X, y)
    return Dataset(spec.name, spec.task, X, y, list(names), splits)
