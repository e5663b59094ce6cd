"""The results contract (docs/results.md) as checks: is a parsed run.json, or a curve.csv, something a report
can use? One function each, returning None (usable) or a one-line reason. Standard library only, like contract.py
(which writes the files and whose RunRecord gives the fields): `import dlm_bench.report` must stay free of torch.

Fields a report cannot group by (status, experiment, dataset, model, objective, seed) are required; the other
top-level fields are checked for their type where present, so run.json files written before a field existed
(docs/reproductions/*/runs.tgz) stay readable. NaN and infinite floats are written as null, so every number
may also be null where the contract allows a float.
"""

from __future__ import annotations

import csv
import math
from dataclasses import fields
from pathlib import Path

from .contract import STATUSES, RunRecord

# what a record needs for the report to group it; anything less is skipped (and named in index.md)
REQUIRED = ("status", "experiment", "dataset", "model", "objective", "seed")

_STR, _INT, _NUM, _DICT = "a string", "an integer", "a number", "an object"
_KINDS = {"str": _STR, "int": _INT, "float": _NUM, "dict": _DICT}
_RECORD = {f.name: f.type for f in fields(RunRecord)}  # annotations as text: "str", "int | None", ...
# field -> (expected type, null allowed): every field RunRecord writes, the schema number first; null is allowed
# for all but the schema and REQUIRED (a diverged run's NaN is written as null; `method` and `label_map` came later)
FIELDS = {name: (_KINDS[_RECORD[name].split()[0]], name != "schema" and name not in REQUIRED)
          for name in ("schema", *_RECORD)}


def _is(value, kind: str) -> bool:
    if kind == _STR:
        return isinstance(value, str)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, dict)


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_run_record(rec) -> str | None:
    """Why `rec` (a parsed run.json) breaks the results contract, or None if a report can use it."""
    if not isinstance(rec, dict):
        return f"not a JSON object ({type(rec).__name__})"
    if not rec:
        return "empty record"
    missing = [k for k in REQUIRED if rec.get(k) is None]
    if missing:
        return f"missing {', '.join(missing)}"
    bad = []
    for key, (kind, nullable) in FIELDS.items():
        if key not in rec or (rec[key] is None and nullable):
            continue
        if not _is(rec[key], kind):
            bad.append(f"{key} is {_show(rec[key])}, not {kind}")
    if bad:
        return "; ".join(bad)
    if rec["status"] not in STATUSES:
        return f"status is {_show(rec['status'])}, not one of {', '.join(STATUSES)}"
    for name, value in (rec.get("metrics") or {}).items():
        if value is not None and not _is(value, _NUM):
            return f"metric {name} is {_show(value)}, not a number"
    return None


def curve_index_column(model: str | None) -> str:
    """The column that numbers curve.csv's rows: `fold` for SGGPM runs (one row per fold), else `iteration`."""
    return "fold" if model == "sggpm" else "iteration"


def check_curve_csv(path: Path, model: str | None = None) -> str | None:
    """Why the curve.csv at `path` breaks the contract, or None: a header with distinct, non-empty names that
    include the index column (curve_index_column), every row as wide as the header, the index an integer."""
    index = curve_index_column(model)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                return "empty file (no header)"
            names = [h.strip() for h in header]
            if any(not n for n in names):
                return "a column without a name in the header"
            dups = sorted({n for n in names if names.count(n) > 1})
            if dups:
                return f"duplicate column(s) {', '.join(dups)}"
            if index not in names:
                return f"no {index!r} column (columns: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''})"
            at, width = names.index(index), len(names)
            for line, row in enumerate(reader, start=2):
                if len(row) != width:
                    return f"line {line} has {len(row)} fields, the header {width}"
                try:
                    value = float(row[at])
                except ValueError:
                    return f"line {line}: {index} is {_show(row[at])}, not a number"
                if not value.is_integer():
                    return f"line {line}: {index} is {_show(row[at])}, not an integer"
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except csv.Error as err:
        return f"not CSV ({err})"
    except OSError as err:
        return f"unreadable ({err.strerror or err})"
    return None
