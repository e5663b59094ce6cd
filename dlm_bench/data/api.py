"""What the rest of dlm_bench calls: load a dataset by name or config, fetch / verify the cache, the datasets
table. The top of the data layer (registry <- cache <- fetch <- loading <- large <- api): nothing below imports it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

from .datasets import DATASETS, Dataset, DatasetError, DatasetSpec, get_spec
from .availability import availability
from .fetch import cache_dir, hand_placed, is_cached, verify, wrapper_zip_path
from .large import load_large
from .loading import parse_fetched


def load_spec(spec: DatasetSpec, force: bool = False, sources: Optional[dict[str, Path]] = None) -> Dataset:
    if spec.large:
        return load_large(spec, force=force, sources=sources)
    return parse_fetched(spec, force=force, sources=sources)


def load_dataset(name: str, path=None) -> Dataset:
    spec = get_spec(name)
    return load_spec(spec, sources=local_sources(spec, path) if path else None)


def local_sources(spec: DatasetSpec, path) -> dict[str, Path]:
    """`dataset.path` for a named dataset: the file the user already has (a dataset with one file), or a folder
    holding its files under their mirror paths, their names, or (for a file served inside a zip) that zip. Each
    file found is checked (hash where pinned, shape always) like a download, then cached; the rest come as usual."""
    p = Path(str(path)).expanduser()
    if spec.shipped:
        raise DatasetError(f"dataset.path is not used for {spec.name!r}: it is shipped with the package")
    if p.is_file():
        if len(spec.files) != 1:
            raise DatasetError(f"dataset.path={p}: {spec.name!r} has {len(spec.files)} files "
                               f"({', '.join(rf.fname for rf in spec.files)}); give a folder that holds them")
        return {spec.files[0].mirror_path: p}
    if not p.is_dir():
        raise DatasetError(f"dataset.path={p}: no such file or folder")
    found = {}
    for rf in spec.files:
        z = wrapper_zip_path(rf)
        for cand in (p / rf.mirror_path, p / rf.fname, p / z.name if z is not None else None):
            if cand is not None and cand.is_file():
                found[rf.mirror_path] = cand
                break
    if not found:
        raise DatasetError(f"dataset.path={p} holds none of {spec.name!r}'s files "
                           f"({', '.join(rf.mirror_path for rf in spec.files)})")
    return found


def load_from_config(dataset_cfg) -> Dataset:
    """The dataset a `dataset` config node names (the runner's single entry point into data/).
    `dataset=csv` reads the user's own file (dataset.path, dataset.target, dataset.task); for a named dataset,
    dataset.path names local copies of its files (local_sources)."""
    if dataset_cfg.name == "csv":
        from .user import load_user_table  # here: pandas loads with the first user table, not the registry

        return load_user_table(dataset_cfg)
    return load_dataset(dataset_cfg.name, path=getattr(dataset_cfg, "path", None))


_SIZE_MEMO: dict[tuple, int] = {}


def dataset_size(dataset_cfg) -> int:
    """Rows of the whole data set a `dataset` config node names, before any split (what model.num_inducing_rule
    reads: models/num_inducing.py). Memoised on the file's hash and the settings that shape it, as a sweep names
    hundreds of points on one file."""
    if dataset_cfg.name == "csv":
        from .user import user_file_sha256

        key = ("csv", user_file_sha256(dataset_cfg.path), str(dataset_cfg.target), str(dataset_cfg.task),
               tuple(dataset_cfg.get("categorical") or ()))
    else:
        key = (dataset_cfg.name, str(dataset_cfg.get("path")))
    if key not in _SIZE_MEMO:
        _SIZE_MEMO[key] = len(load_from_config(dataset_cfg).y)
    return _SIZE_MEMO[key]


def fetch(names: Union[list[str], str], force: bool = False, large: bool = False) -> list[tuple[str, bool, str]]:
    """`dlm-bench fetch NAME... | --all [--large] [--force]`: fetch (and for large sets convert) each dataset;
    force: fetch again even if cached. With "all", a dataset that needs a multi-GB download (large_download in
    catalog.yaml) is left out unless `large`, and reported as skipped. Returns (name, ok, one-line message) per
    dataset; never raises DatasetError."""
    skip_large = names == "all" and not large
    if names == "all":
        names = sorted(DATASETS)
    out = []
    for name in names:
        try:
            spec = get_spec(name)
            if spec.shipped:
                out.append((name, True, "shipped with the package"))
                continue
            heavy = [rf for rf in spec.files if rf.large_download and not rf.head_lines and not is_cached(rf)
                     and hand_placed(rf) is None]
            if skip_large and heavy and (force or availability(name).startswith("download")):
                mb = ", ".join(f"{rf.fname} ~{rf.size_mb:,.0f} MB" if rf.size_mb else rf.fname for rf in heavy)
                out.append((name, True, f"skipped: multi-GB download ({mb}); fetch it by name or with --all --large"))
                continue
            ds = load_spec(spec, force=force)
            out.append((name, True, f"{ds.X.shape[0]} x {ds.X.shape[1]} in {cache_dir()}"))
        except DatasetError as exc:
            out.append((name, False, str(exc)))
    return out


def datasets_table() -> str:
    """Plain-text table for `dlm-bench datasets`: name, task, N x D, papers, availability (availability.availability:
    shipped / cached / in mirror / download of N MB / no known source ...)."""
    rows = [("name", "task", "N x D", "papers", "availability")]
    for name in sorted(DATASETS):
        spec = DATASETS[name]
        n, d = spec.shape
        rows.append((name, spec.task, f"{n if n is not None else '?'} x {d}", ",".join(spec.papers), availability(name)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def url_table_markdown() -> str:
    """The URL table of docs/datasets.md, generated from catalog.yaml (a test keeps the doc equal to it):
    file, the datasets using it, URL, hash (abbreviated; full in catalog.yaml) or "unpinned", size, evidence; a
    registered copy (catalog.yaml `copy_of`) gets its own row."""
    users: dict[str, list[str]] = {}
    files: dict[str, object] = {}
    copy_of: dict[str, str] = {}  # a registered copy's path -> the canonical file it stands in for
    for name in sorted(DATASETS):
        for rf in DATASETS[name].files:
            for f in (rf,) + rf.copies:
                users.setdefault(f.mirror_path, []).append(name)
                files[f.mirror_path] = f
            copy_of.update({c.mirror_path: rf.mirror_path for c in rf.copies})
    rows = ["| file (mirror / cache path) | datasets | URL | hash | size | public evidence (source, date) |",
            "|---|---|---|---|---|---|"]
    for path in sorted(files):
        rf = files[path]
        h = f"`{rf.algorithm}:{rf.digest[:12]}…`" if rf.known_hash else "unpinned"
        if rf.size is not None:
            size = f"{rf.size:,} B"
        elif rf.approx_mb is not None:
            size = f"~{rf.approx_mb:,.0f} MB"
        else:
            size = "?"
        extra = f" (zip member `{rf.member}`)" if rf.member else ""
        extra += f" (first {rf.head_lines} lines streamed)" if rf.head_lines else ""
        extra += f" (copy of `{copy_of[path]}`, used only where it is here and that file is not)" if path in copy_of else ""
        evidence = (rf.evidence or "").replace("|", "/")
        rows.append(f"| `{path}` | {', '.join(users[path])} | <{rf.url}>{extra} | {h} | {size} | {evidence} |")
    return "\n".join(rows)
