"""Collect run.json files into one flat table (one row per run)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pandas as pd

from ..results.labels import record_method, record_variant
from ..results.schema import check_curve_csv, check_run_record

NESTED = ("metrics", "train", "config", "env", "label_map")
# Settings copied from run.json's config into columns (dotted path -> column), when present: what a report
# may need on an axis or in a table split that is not a top-level field.
CONFIG_COLUMNS = {"pac.epsilon": "epsilon", "pac.loss": "pac_loss", "pac.grid_L": "grid_L",
                  "pac.round_digits": "round_digits", "model.ard": "ard"}


class ReportError(FileNotFoundError):
    """An input the report cannot read or an output it cannot write: one line, exit 2. (A FileNotFoundError so
    that `dlm-bench report` prints it as its other one-line errors.)"""


def check_input(d) -> Path:
    """A results directory (or a run.json) given to `dlm-bench report`, or a ReportError saying why not."""
    path = Path(d)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ReportError(f"no such results directory: {d}") from None
    except OSError as err:
        raise ReportError(f"cannot read results directory {d}: {err.strerror or err}") from None
    if stat.S_ISDIR(st.st_mode):
        if not os.access(path, os.R_OK | os.X_OK):
            raise ReportError(f"cannot read results directory {d}: permission denied")
        try:
            with os.scandir(path):
                pass
        except OSError as err:
            raise ReportError(f"cannot read results directory {d}: {err.strerror or err}") from None
        return path
    if stat.S_ISREG(st.st_mode) and path.name == "run.json":
        return path
    raise ReportError(f"{d} is not a results directory (nor a run.json)")


def find_run_files(dirs, problems: list) -> list[Path]:
    """Every run.json under `dirs` (not under _hydra/). Sub-folders that cannot be listed go to `problems` as
    (path, reason)."""
    files = []

    def unreadable(err: OSError) -> None:
        problems.append((Path(err.filename or "?"), f"folder not readable ({err.strerror or err})"))

    for d in dirs:
        d = Path(d)
        if d.is_file() and d.name == "run.json":
            files.append(d)
        elif d.is_dir():
            for root, subdirs, names in os.walk(d, onerror=unreadable):
                subdirs[:] = sorted(s for s in subdirs if s != "_hydra")
                if "run.json" in names:
                    files.append(Path(root) / "run.json")
    return sorted(set(files))


CONFIG_SKIP = ("launcher", "resume", "results_dir", "run_dir")


def _flat_config(d: dict, prefix: str = "cfg") -> dict:
    """config.a.b -> column 'cfg.a.b' (so specs can filter on any setting); lists become strings."""
    out = {}
    for k, v in d.items():
        if prefix == "cfg" and k in CONFIG_SKIP:
            continue
        key = f"{prefix}.{k}"
        if isinstance(v, dict):
            out.update(_flat_config(v, key))
        else:
            out[key] = json.dumps(v) if isinstance(v, (list, tuple)) else v
    return out


def flatten(rec: dict, path: Path) -> dict:
    row = {k: v for k, v in rec.items() if k not in NESTED}
    row.update(_flat_config(rec.get("config") or {}))
    row.update(rec.get("metrics") or {})
    row.update({f"train_{k}": v for k, v in (rec.get("train") or {}).items()})
    for dotted, col in CONFIG_COLUMNS.items():
        if row.get(f"cfg.{dotted}") is not None and col not in row:
            row[col] = row[f"cfg.{dotted}"]
    row["git"] = (rec.get("env") or {}).get("git")
    row["num_samples"] = row.get("cfg.estimator.num_samples")
    row["method"] = record_method(rec)  # run.json's own label, derived the same way for older records
    row["variant"] = record_variant(rec)  # own-loop models: fpi, fp_sparse, mog2 (what their reports group by)
    row["run_dir"] = str(path.parent)
    return row


def collect_runs(dirs, bad_curves: list | None = None) -> tuple[pd.DataFrame, list[tuple[Path, str]]]:
    """(one row per usable run.json, [(path, reason)] for the ones skipped: truncated, [], null, {}, fields of the
    wrong type, ...). A usable run's curve.csv that breaks the contract goes to `bad_curves` as (path, reason)
    (the run itself is kept; its curve is not drawn); a missing curve.csv is not listed (archives hold run.json
    only)."""
    rows, skipped = [], []
    for path in find_run_files(dirs, skipped):
        try:
            if not path.is_file():  # a FIFO named run.json would block the read forever
                skipped.append((path, "not a regular file"))
                continue
            rec = json.loads(path.read_text())
        except OSError as err:
            skipped.append((path, f"unreadable ({err.strerror or err})"))
            continue
        except ValueError as err:  # run.json is replaced atomically, so a broken one stays broken
            skipped.append((path, f"not valid JSON ({str(err).splitlines()[0]})"))
            continue
        except RecursionError:  # [[[[... or {"a": {"a": ... nested deeper than the parser's stack allows
            skipped.append((path, "nested too deeply to be a run record"))
            continue
        try:
            why = check_run_record(rec)
            row = None if why else flatten(rec, path)
        except RecursionError:  # parsed, but a config too deep to walk
            why = "nested too deeply to be a run record"
        if why:
            skipped.append((path, why))
            continue
        curve = path.parent / "curve.csv"
        problem = check_curve_csv(curve, rec.get("model")) if curve.is_file() else None
        row["curve_ok"] = problem is None  # False: breaks the contract, not drawn (a missing one is just absent)
        if problem and bad_curves is not None:
            bad_curves.append((curve, problem))
        rows.append(row)
    return pd.DataFrame(rows), skipped


def collect(dirs) -> pd.DataFrame:
    return collect_runs(dirs)[0]
