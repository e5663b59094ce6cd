"""Method selection and mean ± standard error over seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..config.beta_grid import GRID_COL, select_beta
from .layouts import result_settings
from .spec_types import MethodSpec

SERIES = "series"
# What a series is drawn against or selected over, not a variant of it
AXIS_SETTINGS = ("cfg.objective.beta", "cfg.objective.beta_index")


def variant_settings(rows: pd.DataFrame, cell: tuple[str, ...], over: tuple[str, ...] = ()) -> list[str]:
    """The result-changing settings (layouts.result_settings) in which a method's runs differ inside one cell of
    the table or figure (`cell`: its row keys, e.g. dataset, train_size, beta), where every run has the setting:
    fixed DLM with a collapsed-SGPR and with a beta-SVGP stage 1 are two series, not seeds of one. A setting that
    older run.json files lack (written before it existed) does not split: their runs ran with its default, which
    is not known here. Settings that vary only between cells (dataset, ard, num_inducing of a table's rows) are
    the cells' business; `over` are settings averaged over on purpose (TableSpec.over)."""
    keys = [c for c in cell if c in rows and c != SERIES]
    candidates = [c for c in sorted(result_settings(rows.columns), key=lambda c: (len(c), c))
                  if c not in AXIS_SETTINGS and c not in over and rows[c].notna().all()]
    if not candidates:
        return []
    grouped = rows.astype({c: str for c in candidates}).groupby(keys, dropna=False) if keys else None
    return [c for c in candidates
            if (grouped[c].nunique().max() if grouped is not None else rows[c].astype(str).nunique()) > 1]


def _variant_labels(rows: pd.DataFrame, label: str, cols: list[str]) -> list[str]:
    """`label [noise_init=0.1, ard=True]`: each variant setting by the last part of its name."""
    return [f"{label} [" + ", ".join(f"{c.split('.')[-1]}={v}" for c, v in zip(cols, values)) + "]"
            for values in rows[cols].itertuples(index=False)]


def series_labels(data: pd.DataFrame, methods: tuple[MethodSpec, ...]) -> list[str]:
    """The series of `data` in the methods' order (a method's variants after it, sorted), or sorted."""
    present = list(dict.fromkeys(data[SERIES])) if SERIES in data else []
    if not methods:
        return sorted(present)
    return [s for m in methods for s in sorted(x for x in present if x == m.label or x.startswith(m.label + " ["))]


def apply_methods(df: pd.DataFrame, methods: tuple[MethodSpec, ...], extra_group: tuple[str, ...] = (),
                  cell: tuple[str, ...] = ("dataset", "train_size", "beta"), over: tuple[str, ...] = ()) -> pd.DataFrame:
    """Rows of each method (beta selected where the spec says so), labelled in column `series`; a method whose runs
    differ in a setting inside one `cell` (the caller's row keys) gets one series per value (variant_settings)."""
    ok = df[df["status"] == "ok"]
    if not methods:
        return ok.assign(**{SERIES: ok["method"]})
    parts = []
    for m in methods:
        ran, rows, group, variants = _candidates(df, m, cell, over, extra_group)
        if m.select_by:
            rows = rows[_full_grid(ran, rows, group)]
            rows = select_beta(rows.assign(method=m.label), metric=m.select_by, group_cols=group)
        parts.append(rows.assign(**{SERIES: _variant_labels(rows, m.label, variants) if variants else m.label}))
    return pd.concat(parts, ignore_index=True)


def partial_grids(df: pd.DataFrame, methods: tuple[MethodSpec, ...], cell: tuple[str, ...] = ("dataset", "train_size", "beta"),
                  over: tuple[str, ...] = ()) -> list[str]:
    """The selection groups apply_methods leaves out because their beta grid is partial, one line each, for
    index.md: "beta-ELBO {'dataset': 'cadata', 'train_size': 13829, 'seed': 3}: left out of the beta selection,
    8 of 21 grid points run"."""
    notes = []
    for m in (m for m in methods if m.select_by):
        ran, rows, group, _ = _candidates(df, m, cell, over, ())
        if GRID_COL not in rows or rows[GRID_COL].isna().all():
            continue
        counts = _grid_counts(ran, group)
        short = counts[counts["have"] < counts["of"]].merge(rows[list(counts.columns[:-2])].drop_duplicates())
        for key in short.to_dict("records"):
            have, of = key.pop("have"), key.pop("of")
            notes.append(f"{m.label} {key}: left out of the beta selection, {have} of {of} grid points run")
    return notes


def _candidates(df: pd.DataFrame, m: MethodSpec, cell: tuple[str, ...], over: tuple[str, ...],
                extra_group: tuple[str, ...]):
    """A method's runs (any status), its ok runs to select among or average, its selection group and variants."""
    ran = _matching(df, m.where)
    rows = ran[ran["status"] == "ok"]
    if m.select_by and GRID_COL in rows and rows[GRID_COL].notna().any():
        rows = rows[rows[GRID_COL].notna()]  # what select_beta chooses among: the grid's runs
    within = tuple(c for c in cell if not (m.select_by and c == "beta"))  # a selection's cell spans its betas
    variants = variant_settings(rows, within, over) if len(rows) > 1 else []
    group = tuple(dict.fromkeys(("dataset", "train_size", "seed") + extra_group + tuple(variants)))
    return ran, rows, group, variants


def _matching(df: pd.DataFrame, where: tuple) -> pd.DataFrame:
    """The runs (any status) whose settings equal a MethodSpec's `where`."""
    rows = df
    for col, val in where:
        if col not in rows:  # a setting no collected run.json has (written before it existed): no match
            return rows.iloc[0:0]
        rows = rows[np.isclose(rows[col], val)] if isinstance(val, float) else rows[rows[col] == val]
    return rows


def _full_grid(ran: pd.DataFrame, rows: pd.DataFrame, group: tuple[str, ...]) -> pd.Series:
    """Mask of `rows` whose selection group (a seed of a cell) ran every grid point that a sibling seed ran.

    A beta selected over part of the grid is a different statistic: a sweep stopped midway (--time-limit) leaves
    its newest seeds with the small betas only, and their minimum then drags the mean (Fig. 1(c) at n = 13,829
    with 16 of 42 beta-ELBO points read 1383 ± 850). Such a seed is left out of the selection until its grid is
    complete; index.md lists its missing points. A point that ran and diverged or failed counts as run: it is
    part of the grid, only never chosen."""
    if GRID_COL not in rows or rows.empty or rows[GRID_COL].isna().all():
        return pd.Series(True, index=rows.index)
    counts = _grid_counts(ran, group)
    full = counts.loc[counts["have"] == counts["of"], counts.columns[:-2]]
    hit = rows[list(full.columns)].merge(full, how="left", indicator=True)  # a left merge keeps the rows' order
    return pd.Series((hit["_merge"] == "both").to_numpy(), index=rows.index)


def _grid_counts(ran: pd.DataFrame, group: tuple[str, ...]) -> pd.DataFrame:
    """One row per selection group of `ran` (any status): its keys, `have` (grid points it ran) and `of` (grid
    points its sibling groups, the same keys but the seed, ran together)."""
    keys = [c for c in group if c in ran]
    siblings = [c for c in keys if c != "seed"]
    grid = ran[ran[GRID_COL].notna()]
    have = grid.groupby(keys, dropna=False)[GRID_COL].nunique().rename("have").reset_index()
    if not siblings:
        return have.assign(of=grid[GRID_COL].nunique())
    of = grid.groupby(siblings, dropna=False)[GRID_COL].nunique().rename("of").reset_index()
    return have.merge(of, on=siblings, how="left")


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
