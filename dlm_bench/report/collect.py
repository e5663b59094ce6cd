"""Collect run.json files into one flat table (one row per run)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..labels import record_method, record_variant

NESTED = ("metrics", "train", "config", "env")
# Settings copied from run.json's config into columns (dotted path -> column), when present: what a report
# may need on an axis or in a table split that is not a top-level field.
CONFIG_COLUMNS = {"pac.epsilon": "epsilon", "pac.loss": "pac_loss", "pac.grid_L": "grid_L",
                  "pac.round_digits": "round_digits", "model.ard": "ard"}


def find_run_files(dirs) -> list[Path]:
    files = []
    for d in dirs:
        d = Path(d)
        if d.is_file() and d.name == "run.json":
            files.append(d)
        elif d.is_dir():
            files.extend(p for p in d.rglob("run.json") if "_hydra" not in p.parts)
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
        node = rec.get("config") or {}
        for key in dotted.split("."):
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None and col not in row:
            row[col] = node
    row["git"] = (rec.get("env") or {}).get("git")
    row["num_samples"] = ((rec.get("config") or {}).get("estimator") or {}).get("num_samples")
    row["method"] = record_method(rec)  # run.json's own label, derived the same way for older records
    row["variant"] = record_variant(rec)  # own-loop models: fpi, fp_sparse, mog2 (what their reports group by)
    row["run_dir"] = str(path.parent)
    return row


# what a record needs for the report to group it; anything less is skipped (and named in index.md)
REQUIRED = ("status", "experiment", "dataset", "model", "objective", "seed")


def check_record(rec) -> str | None:
    """Why `rec` (a parsed run.json) cannot be reported, or None if it can."""
    if not isinstance(rec, dict):
        return f"not a JSON object ({type(rec).__name__})"
    missing = [k for k in REQUIRED if rec.get(k) is None]
    if missing:
        return "empty record" if not rec else f"missing {', '.join(missing)}"
    return None


def collect_runs(dirs) -> tuple[pd.DataFrame, list[tuple[Path, str]]]:
    """(one row per usable run.json, [(path, reason)] for the ones skipped: truncated, [], null, {}, ...)."""
    rows, skipped = [], []
    for path in find_run_files(dirs):
        try:
            rec = json.loads(path.read_text())
        except OSError as err:
            skipped.append((path, f"unreadable ({err.strerror or err})"))
            continue
        except ValueError as err:  # run.json is replaced atomically, so a broken one stays broken
            skipped.append((path, f"not valid JSON ({str(err).splitlines()[0]})"))
            continue
        why = check_record(rec)
        if why:
            skipped.append((path, why))
            continue
        rows.append(flatten(rec, path))
    return pd.DataFrame(rows), skipped


def collect(dirs) -> pd.DataFrame:
    return collect_runs(dirs)[0]
