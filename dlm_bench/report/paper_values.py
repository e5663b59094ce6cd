"""Published numbers that reports print next to ours (TableSpec.reference): {(by values..., series):
{metric: (mean, standard error)}}, read from paper_values.csv beside this module (one row per table, key, metric).

Transcribed from Reeb et al. (2018), App. G:
- pac_table1: Table 1, boston, full-GP models; key (dataset, epsilon, method).
- pac_table2: Table 2, sparse GPs, M = 500, epsilon = 0.6; key (dataset, ARD, method).
- pac_table3: Table 3, the l_exp loss, M = 500, epsilon = 0.6, kin40k SE-ARD only: the only complete row group in our
  copy of the paper (pol's is cut off, sarcos has no offline training file). Column 4 (R_S[test], metric gibbs_test)
  is left out: for VFE and FITC it equals Table 2's 0-1 test Gibbs risk (0.011, 0.048), and for VFE it is below the
  training risk (0.076), so it is not the l_exp test risk the other columns use.

A table's key is its non-empty columns among dataset, epsilon (a float), ard (true/false), then the method.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

CSV = Path(__file__).with_name("paper_values.csv")
_KEY_COLUMNS = ("dataset", "epsilon", "ard")
_PARSE = {"dataset": str, "epsilon": float, "ard": {"true": True, "false": False}.__getitem__}


@lru_cache(maxsize=None)
def _all() -> dict[str, dict[tuple, dict[str, tuple[float, float]]]]:
    out: dict[str, dict[tuple, dict[str, tuple[float, float]]]] = {}
    with open(CSV, newline="") as f:
        for i, row in enumerate(csv.DictReader(f), start=2):
            try:
                key = tuple(_PARSE[c](row[c]) for c in _KEY_COLUMNS if row[c] != "") + (row["method"],)
                cell = (float(row["mean"]), float(row["se"]))
            except (KeyError, ValueError) as exc:
                raise ValueError(f"{CSV.name} line {i}: cannot read {row} ({exc})") from None
            metrics = out.setdefault(row["table"], {}).setdefault(key, {})
            if row["metric"] in metrics:
                raise ValueError(f"{CSV.name} line {i}: {row['table']} {key} {row['metric']} given twice")
            metrics[row["metric"]] = cell
    return out


def table(name: str) -> dict[tuple, dict[str, tuple[float, float]]]:
    """The published values of one table (a fresh copy: callers may not change the cached one)."""
    return {k: dict(v) for k, v in _all()[name].items()}
