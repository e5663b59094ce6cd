"""`dataset=csv dataset.path=FILE dataset.target=COL dataset.task=TASK [dataset.categorical=[COL,...]]`: the
user's own table (CSV, TSV or parquet). Text feature columns are dummy-coded (L-1 columns), like the papers'
categorical features; a numeric column is dummy-coded only when declared in `dataset.categorical`.

Refused with a one-line DatasetError (exit 2), before anything trains: a path that is not a regular file
(`/dev/zero`, a folder, a FIFO); duplicate column names, or a second column named like the target; a feature
column that is a copy of the target; a column that mixes numbers and text (one typo must not become hundreds of
dummy columns) unless declared categorical; missing or infinite values; a constant target, or features constant in every row; a True/False target with
dataset.task=regression; binary labels other
than two classes in {0, 1}, {-1, 1} or {False, True} (or two text labels); count targets that are negative or
not integers; numbers written with thousands separators ("1,000,345.584": read as text, they would become one dummy
column per value); values so large that their variance overflows float64 (1e300: standardising them gives inf)."""

from __future__ import annotations

import collections
import csv
import os
import re
import stat
from pathlib import Path

import numpy as np
import pandas as pd

from .datasets import TASKS, Dataset, DatasetError
from .transforms import dummy_code

BINARY_LABELS = ({0.0, 1.0}, {-1.0, 1.0})


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def _sep(path: Path) -> str:
    return "\t" if path.suffix.lower() == ".tsv" else ","


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__


def regular_file(path_s) -> Path:
    """dataset.path as a Path, or a DatasetError when it is not an existing regular file (a device such as
    /dev/zero would be read, and hashed for the run name, forever)."""
    path = Path(str(path_s)).expanduser()
    try:
        st = path.stat()
    except FileNotFoundError:
        raise DatasetError(f"dataset.path={path}: no such file") from None
    except OSError as exc:
        raise DatasetError(f"dataset.path={path}: cannot be read ({exc.strerror or _first_line(exc)})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a device, pipe or socket"
        raise DatasetError(f"dataset.path={path} is {kind}, not a regular file")
    if not os.access(path, os.R_OK):
        raise DatasetError(f"dataset.path={path}: permission denied")
    return path


def _header(path: Path) -> list[str]:
    """The column names as written in the file (pandas renames a duplicate `y` to `y.1`)."""
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as fh:
            return next(csv.reader(fh, delimiter=_sep(path)), [])
    except (OSError, csv.Error) as exc:
        raise DatasetError(f"cannot read {path}: {_first_line(exc)}") from None


def _read(path: Path) -> pd.DataFrame:
    try:
        if _is_parquet(path):
            return pd.read_parquet(path)
        return pd.read_csv(path, sep=_sep(path))
    except (ValueError, OSError, ImportError, pd.errors.ParserError) as exc:
        raise DatasetError(f"cannot read {path}: {_first_line(exc)}") from None


_SHA_MEMO: dict[tuple, str] = {}


def user_file_sha256(path_s) -> str | None:
    """sha256 of the user's file (part of dataset=csv run names); None if there is no such regular file (the
    load then refuses it). Memoised on (path, size, mtime), as run names are computed several times per run."""
    if not path_s:
        return None
    path = Path(str(path_s)).expanduser()
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):  # /dev/zero, a FIFO: hashing it would never end
        return None
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA_MEMO:
        from .cache import sha256_of

        try:
            _SHA_MEMO[key] = sha256_of(path)
        except OSError:  # unreadable: the load says why
            return None
    return _SHA_MEMO[key]


def _declared(cfg) -> list[str]:
    cats = getattr(cfg, "categorical", None)
    if cats is None:
        return []
    if isinstance(cats, str):
        cats = [cats]
    return [str(c) for c in cats]


def check_header(names: list[str], target: str, where: str) -> None:
    """Duplicate column names, or a second column named like the target (differing in case or spaces)."""
    seen = collections.Counter(n.strip() for n in names)
    dups = [n for n, k in seen.items() if k > 1]
    if dups:
        what = ", ".join(f"{n!r} ({seen[n]} times)" for n in dups)
        leak = " (it would leak the target into the inputs)" if target.strip() in dups else ""
        raise DatasetError(f"{where}: duplicate column name(s) {what}{leak}; rename or drop them")
    alias = [n for n in names if n != target and n.strip().lower() == target.strip().lower()]
    if alias:
        raise DatasetError(f"{where}: column {alias[0]!r} is named like the target {target!r} "
                           "(it would leak the target into the inputs); rename or drop it")


def _numbers(col: pd.Series) -> pd.Series:
    """The column as float64 (NaN where a cell is not a number); bool stays text-like for the caller."""
    return pd.to_numeric(col, errors="coerce").astype(np.float64)


def _mixed_cell(col: pd.Series) -> tuple[int, str] | None:
    """(data row, cell) of the first cell that is not a number, in a column that otherwise holds numbers."""
    if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return None
    num = _numbers(col)
    if num.notna().sum() == 0:  # all text: a categorical column
        return None
    i = int(np.flatnonzero(num.isna().to_numpy())[0])
    return i + 1, str(col.iloc[i])


# a number with digit grouping by commas: 1,000 or -12,345,678.9 (pandas reads such quoted cells as text)
_GROUPED = re.compile(r"^\s*[+-]?\d{1,3}(,\d{3})+(\.\d*)?\s*$")


def _grouped_cell(col: pd.Series) -> tuple[int, str] | None:
    """(data row, cell) of the first number written with thousands separators, in a text column whose every cell
    is a number once the separators are removed; None otherwise."""
    if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return None
    text = col.astype(str)
    grouped = text.str.match(_GROUPED)
    if not grouped.any() or _numbers(text.str.replace(",", "", regex=False)).isna().any():
        return None
    i = int(np.flatnonzero(grouped.to_numpy())[0])
    return i + 1, str(col.iloc[i])


def _grouped_error(fname: str, what: str, cell: tuple[int, str], extra: str = "") -> DatasetError:
    return DatasetError(f"{fname}: {what} holds numbers with thousands separators ({cell[1]!r} in data row {cell[0]}); "
                        f"write the file without digit grouping{extra}")


def _check_finite(x: np.ndarray, what: str, fname: str) -> None:
    """A non-finite value, or values whose variance overflows float64 (|x| ~ 1e155 and up: the standardisation
    every protocol applies would turn the column into inf / nan): one line naming the data row."""
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise DatasetError(f"{fname}: {what} has a non-finite value ({x[bad[0]]}) in data row {bad[0] + 1}")
    with np.errstate(over="ignore", invalid="ignore"):
        overflows = not np.isfinite(np.var(x))
    if overflows:
        row = int(np.argmax(np.abs(x)))
        raise DatasetError(f"{fname}: {what} has values too large for float64 arithmetic "
                           f"({x[row]:g} in data row {row + 1}: its variance overflows); rescale the column")


def load_user_table(cfg) -> Dataset:
    task = _task(cfg)
    path = regular_file(cfg.path)
    header = None if _is_parquet(path) else _header(path)
    df = _read(path)
    names = header if header is not None and len(header) == len(df.columns) else [str(c) for c in df.columns]
    if len(df) == 0:
        raise DatasetError(f"{path.name}: no data rows (only a header)")
    target = _target_column(str(cfg.target), df, names, path.name)
    check_header(names, target, path.name)
    declared = _declared(cfg)
    unknown = [c for c in declared if c not in df.columns]
    if unknown:
        raise DatasetError(f"dataset.categorical names {', '.join(map(repr, unknown))}, not a column of {path.name}; "
                           f"columns: {', '.join(names)}")
    if target in declared:
        raise DatasetError(f"dataset.categorical lists the target {target!r}; declare feature columns only")
    if df.isna().any().any():
        bad = [str(c) for c in df.columns if df[c].isna().any()]
        raise DatasetError(f"{path.name}: missing values in column(s) {', '.join(bad)}; clean the file first")
    y_raw = df[target]
    feats = df.drop(columns=[target])
    blocks, feat_names = [], []
    for col in feats.columns:
        block, col_names = _feature_block(feats[col], col, str(col) in declared, path.name)
        blocks.append(block)
        feat_names += col_names
    if not blocks:
        raise DatasetError(f"{path.name}: no feature columns besides the target {target!r}")
    X = np.hstack(blocks)
    _check_not_all_constant(X, feats, path.name)
    y, label_map = _target(y_raw, target, task, path.name)
    _check_no_target_copy(feats, y_raw, declared, target, path.name)
    return Dataset(path.stem, task, X, y, feat_names, label_map=label_map)


def _check_not_all_constant(X: np.ndarray, feats: pd.DataFrame, fname: str) -> None:
    """Inputs that are the same in every row carry nothing to learn from: the model would fit the target's mean
    and report it as a result."""
    if len(X) > 1 and bool((X == X[0]).all()):
        cols = ", ".join(f"{c}={feats[c].iloc[0]}" for c in list(feats.columns)[:5])
        more = f" and {len(feats.columns) - 5} more" if len(feats.columns) > 5 else ""
        raise DatasetError(f"{fname}: every feature column is constant ({cols}{more}); nothing to learn from")


def _task(cfg) -> str:
    """dataset.task, after checking that path, target and task are all given."""
    if not getattr(cfg, "path", None) or getattr(cfg, "target", None) is None or not getattr(cfg, "task", None):
        raise DatasetError("dataset=csv needs dataset.path=FILE dataset.target=COLUMN dataset.task=" + "|".join(TASKS))
    task = str(cfg.task)
    if task not in TASKS:
        raise DatasetError(f"dataset.task={task!r} is not one of {', '.join(TASKS)}")
    return task


def _target_column(target: str, df: pd.DataFrame, names: list[str], fname: str) -> str:
    """dataset.target as a column of df: a column name, or a column index (negative from the end)."""
    if target in df.columns:
        return target
    if target.lstrip("-").isdigit() and -len(df.columns) <= int(target) < len(df.columns):
        return str(df.columns[int(target)])
    if target in names:  # a duplicated name, renamed by pandas: check_header names it
        return target
    raise DatasetError(f"dataset.target={target!r} is not a column of {fname}; columns: {', '.join(names)}")


def _feature_block(values: pd.Series, col, categorical: bool, fname: str) -> tuple[np.ndarray, list[str]]:
    """One feature column as model inputs: dummy-coded when declared categorical or text, else its finite
    numbers; a column mixing numbers and text is an error (which cell, and how to declare it)."""
    if not categorical:
        grouped = _grouped_cell(values)
        if grouped is not None:
            raise _grouped_error(fname, f"column {col!r}", grouped,
                                 f", or declare the column categorical with dataset.categorical=[{col}]")
        mixed = _mixed_cell(values)
        if mixed is not None:
            raise DatasetError(f"{fname}: column {col!r} mixes numbers and text ({mixed[1]!r} in data row {mixed[0]}); "
                               f"fix the cell, or declare the column categorical with dataset.categorical=[{col}]")
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            x = values.to_numpy(np.float64)
            _check_finite(x, f"column {col!r}", fname)
            return x[:, None], [str(col)]
    d, n = dummy_code(values.astype(str).to_numpy(), prefix=f"{col}=")
    return d, list(n)


def _check_no_target_copy(feats: pd.DataFrame, y_raw: pd.Series, declared, target: str, fname: str) -> None:
    """A numeric feature equal to the target would leak it into the inputs."""
    if not pd.api.types.is_numeric_dtype(y_raw):
        return
    for col in feats.columns:
        if str(col) not in declared and pd.api.types.is_numeric_dtype(feats[col]) \
                and not pd.api.types.is_bool_dtype(feats[col]) \
                and np.array_equal(feats[col].to_numpy(np.float64), y_raw.to_numpy(np.float64)):
            raise DatasetError(f"{fname}: column {col!r} is a copy of the target {target!r} "
                               "(it would leak the target into the inputs); drop it")


def _label_map(raw: pd.Series, y: np.ndarray) -> dict[str, float] | None:
    """{label as written: number trained on}, or None when every label is already that number."""
    pairs = dict(zip(raw.astype(str).str.strip(), y.tolist()))
    if all(_is_same_number(k, v) for k, v in pairs.items()):
        return None
    return {k: pairs[k] for k in sorted(pairs, key=lambda k: (pairs[k], k))}


def _is_same_number(text: str, value: float) -> bool:
    try:
        return float(text) == value
    except ValueError:
        return False


def _target(y_raw: pd.Series, target: str, task: str, fname: str) -> tuple[np.ndarray, dict | None]:
    """The target as float64 labels / values, checked for the task, and its label map (_label_map)."""
    if task == "binary":
        y = _binary(y_raw, target, fname)
        return y, _label_map(y_raw, y)
    label_map = None
    if pd.api.types.is_bool_dtype(y_raw) and task == "regression":
        raise DatasetError(f"{fname}: target column {target!r} holds True/False labels, but dataset.task=regression "
                           "fits real numbers; use dataset.task=binary")
    if pd.api.types.is_bool_dtype(y_raw):
        y = y_raw.to_numpy(np.float64)
        label_map = _label_map(y_raw, y)
    elif task in ("multiclass", "ordinal") and not pd.api.types.is_numeric_dtype(y_raw):
        levels = sorted(y_raw.astype(str).unique())
        y = y_raw.astype(str).map({v: i for i, v in enumerate(levels)}).to_numpy(np.float64)
        label_map = _label_map(y_raw, y)
    else:
        grouped = _grouped_cell(y_raw)
        if grouped is not None:
            raise _grouped_error(fname, f"target column {target!r}", grouped)
        num = _numbers(y_raw)
        if num.isna().any():
            i = int(np.flatnonzero(num.isna().to_numpy())[0])
            raise DatasetError(f"{fname}: target column {target!r} is not numeric ({str(y_raw.iloc[i])!r} in data row "
                               f"{i + 1}); dataset.task={task} needs numbers")
        y = num.to_numpy()
    _check_finite(y, f"target column {target!r}", fname)
    values = np.unique(y)
    if values.size < 2:
        raise DatasetError(f"{fname}: target column {target!r} is constant (every row is {values[0]:g}); nothing to learn")
    if task == "count":
        bad = np.flatnonzero((y < 0) | (y != np.round(y)))
        if bad.size:
            raise DatasetError(f"{fname}: dataset.task=count but target column {target!r} has negative or non-integer "
                               f"values ({y[bad[0]]:g} in data row {bad[0] + 1})")
    return y, label_map


def _binary(y_raw: pd.Series, target: str, fname: str) -> np.ndarray:
    """Binary labels -> {0, 1}: numbers must be {0, 1} or {-1, 1}, booleans {False, True}; text labels must be
    exactly two distinct values ('true'/'false' in any case are booleans; others map to 0, 1 in sorted order)."""
    if pd.api.types.is_bool_dtype(y_raw) or pd.api.types.is_numeric_dtype(y_raw):
        y = y_raw.to_numpy(np.float64)
    else:
        text = y_raw.astype(str).str.strip()
        if set(text.str.lower()) <= {"true", "false"}:
            y = (text.str.lower() == "true").to_numpy(np.float64)
        elif (mixed := _mixed_cell(y_raw)) is not None:
            raise DatasetError(f"{fname}: target column {target!r} mixes numbers and text ({mixed[1]!r} in "
                               f"data row {mixed[0]}); dataset.task=binary needs two classes")
        else:
            levels = sorted(text.unique())
            if len(levels) != 2:
                raise DatasetError(f"{fname}: dataset.task=binary needs two classes but target column {target!r} has "
                                   f"{len(levels)} distinct values ({', '.join(levels[:5])}{', ...' if len(levels) > 5 else ''})")
            return (text == levels[1]).to_numpy(np.float64)
    values = sorted(set(np.unique(y).tolist()))
    shown = ", ".join(f"{v:g}" for v in values[:5]) + (", ..." if len(values) > 5 else "")
    if len(values) != 2:
        raise DatasetError(f"{fname}: dataset.task=binary needs two classes but target column {target!r} has "
                           f"{len(values)} distinct value(s) ({shown})")
    if set(values) not in BINARY_LABELS:
        raise DatasetError(f"{fname}: dataset.task=binary needs labels {{0, 1}}, {{-1, 1}} or {{False, True}}; "
                           f"target column {target!r} has {{{shown}}}")
    return (y == 1.0).astype(np.float64)  # {-1, 1} -> {0, 1}
