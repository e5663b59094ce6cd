"""Method selection and mean ± standard error over seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..config.beta_grid import select_beta
from .layouts import MethodSpec

SERIES = "series"


def apply_methods(df: pd.DataFrame, methods: tuple[MethodSpec, ...], extra_group: tuple[str, ...] = ()) -> pd.DataFrame:
    """Rows of each method (beta selected where the spec says so), labelled in column `series`."""
    ok = df[df["status"] == "ok"]
    if not methods:
        return ok.assign(**{SERIES: ok["method"]})
    parts = []
    for m in methods:
        rows = ok
        for col, val in m.where:
            if col not in rows:  # a setting no collected run.json has (written before it existed): no match
                rows = rows.iloc[0:0]
                break
            rows = rows[np.isclose(rows[col], val)] if isinstance(val, float) else rows[rows[col] == val]
        if m.select_by:
            group = tuple(dict.fromkeys(("dataset", "train_size", "seed") + extra_group))
            rows = select_beta(rows.assign(method=m.label), metric=m.select_by, group_cols=group)
        parts.append(rows.assign(**{SERIES: m.label}))
    return pd.concat(parts, ignore_index=True) if parts else ok.iloc[0:0].assign(**{SERIES: []})


def mean_se(df: pd.DataFrame, by: list[str], metrics: tuple[str, ...]) -> pd.DataFrame:
    """Tidy: by..., metric, mean, se (std with ddof=1 / sqrt(n); NaN for n=1), n (number of seeds)."""
    rows = []
    for key, g in df.groupby(by, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        for metric in metrics:
            if metric not in g:
                continue
            v = pd.to_numeric(g[metric], errors="coerce").dropna().to_numpy(dtype=float)
            n = len(v)
            se = v.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
            rows.append({**dict(zip(by, key)), "metric": metric, "mean": v.mean() if n else np.nan, "se": se, "n": n})
    return pd.DataFrame(rows, columns=[*by, "metric", "mean", "se", "n"])  # the columns even when empty


def fmt_cell(mean: float, se: float) -> str:
    if np.isnan(mean):
        return "-"
    return f"{mean:.4g}" if np.isnan(se) else f"{mean:.4g} ± {se:.2g}"


def pivot_for_markdown(tidy: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    cells = tidy.assign(cell=[fmt_cell(m, s) for m, s in zip(tidy["mean"], tidy["se"])])
    wide = cells.pivot_table(index=by, columns="metric", values="cell", aggfunc="first")
    n = tidy.groupby(by, dropna=False)["n"].max().rename("seeds")
    return wide.join(n).reset_index()


def to_markdown(df: pd.DataFrame) -> str:
    # pandas' to_markdown needs the optional tabulate package; a pipe table is a few lines
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)
