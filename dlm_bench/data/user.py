"""`dataset=csv dataset.path=FILE dataset.target=COL dataset.task=TASK`: the user's own table
(CSV or parquet). Non-numeric feature columns are dummy-coded (L-1 columns), like the papers'
categorical features; rows with missing values are rejected with a one-line error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .registry import TASKS, Dataset, DatasetError
from .transforms import dummy_code


def _read(path: Path) -> pd.DataFrame:
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            return pd.read_parquet(path)
        return pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",")
    except (ValueError, OSError, ImportError, pd.errors.ParserError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DatasetError(f"cannot read {path}: {msg}") from None


_SHA_MEMO: dict[tuple, str] = {}


def user_file_sha256(path_s) -> str | None:
    """sha256 of the user's file (part of dataset=csv run names); None if there is no such file.
    Memoised on (path, size, mtime), as run names are computed several times per run."""
    if not path_s:
        return None
    path = Path(str(path_s)).expanduser()
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA_MEMO:
        from .cache import sha256_of

        _SHA_MEMO[key] = sha256_of(path)
    return _SHA_MEMO[key]


def load_user_table(cfg) -> Dataset:
    path_s = getattr(cfg, "path", None)
    target = getattr(cfg, "target", None)
    task = getattr(cfg, "task", None)
    if not path_s or target is None or not task:
        raise DatasetError("dataset=csv needs dataset.path=FILE dataset.target=COLUMN dataset.task=" + "|".join(TASKS))
    task = str(task)
    if task not in TASKS:
        raise DatasetError(f"dataset.task={task!r} is not one of {', '.join(TASKS)}")
    path = Path(str(path_s)).expanduser()
    if not path.is_file():
        raise DatasetError(f"dataset.path={path}: no such file")
    df = _read(path)
    if len(df) == 0:
        raise DatasetError(f"{path.name}: no data rows (only a header)")
    target = str(target)
    if target not in df.columns:
        if target.lstrip("-").isdigit() and -len(df.columns) <= int(target) < len(df.columns):
            target = df.columns[int(target)]
        else:
            raise DatasetError(f"dataset.target={target!r} is not a column of {path.name}; columns: {', '.join(map(str, df.columns))}")
    if df.isna().any().any():
        bad = [str(c) for c in df.columns if df[c].isna().any()]
        raise DatasetError(f"{path.name}: missing values in column(s) {', '.join(bad)}; clean the file first")
    y_raw = df[target]
    feats = df.drop(columns=[target])
    blocks, names = [], []
    for col in feats.columns:
        if pd.api.types.is_numeric_dtype(feats[col]) and not pd.api.types.is_bool_dtype(feats[col]):
            blocks.append(feats[col].to_numpy(np.float64)[:, None])
            names.append(str(col))
        else:
            d, n = dummy_code(feats[col].astype(str).to_numpy(), prefix=f"{col}=")
            blocks.append(d)
            names += n
    if not blocks:
        raise DatasetError(f"{path.name}: no feature columns besides the target {target!r}")
    X = np.hstack(blocks)
    if task in ("binary", "multiclass", "ordinal") and not pd.api.types.is_numeric_dtype(y_raw):
        levels = sorted(y_raw.astype(str).unique())
        if task == "binary" and len(levels) != 2:
            raise DatasetError(f"dataset.task=binary but column {target!r} has {len(levels)} distinct values")
        y = y_raw.astype(str).map({v: i for i, v in enumerate(levels)}).to_numpy(np.float64)
    else:
        try:
            y = y_raw.to_numpy(np.float64)
        except (TypeError, ValueError):
            raise DatasetError(f"column {target!r} is not numeric; task={task} needs numeric targets") from None
    if task == "binary" and not set(np.unique(y)) <= {0.0, 1.0}:
        vals = np.unique(y)
        if len(vals) != 2:
            raise DatasetError(f"dataset.task=binary but column {target!r} has {len(vals)} distinct values")
        y = (y == vals[1]).astype(np.float64)  # e.g. {-1, 1} -> {0, 1}
    if task == "count" and (np.any(y < 0) or np.any(y != np.round(y))):
        raise DatasetError(f"dataset.task=count but column {target!r} has negative or non-integer values")
    return Dataset(path.stem, task, X, y, names)
