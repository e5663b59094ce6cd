"""Per-seed beta selection and paired comparisons across seeds: what "does DLM beat the ELBO on my data?" needs.

`selected_rows` gives one row per (dataset, train size, method, seed) with the method's beta chosen on validation
(config/beta_grid.select_beta, through tables.apply_methods); `paired` compares each method with a baseline seed by
seed (the paired t-test and the Wilcoxon signed-rank test of scipy.stats)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .layouts import TEST_METRICS, where
from .spec_types import FigureSpec, MethodSpec, TableSpec
from .tables import GRID_COL, SERIES, apply_methods, partial_grids

ON_GRID = "on_beta_grid"  # derived column: the run is a point of the beta grid (objective.beta_index set)
CELL = ("dataset", "train_size")
# The ELBO-trained SVGP, as the paper layouts and the ad-hoc labels name it: the default baseline, first found
DEFAULT_BASELINES = ("ELBO (beta=1)", "SVGP (collapsed ELBO)", "svgp-elbo (beta=1)", "ELBO")
MIN_SEEDS = 3  # below this a p-value says nothing: the table says "too few seeds"
TOO_FEW = "too few seeds"
SELECTED_NOTE = "beta selected on validation"


def has_beta_grid(df: pd.DataFrame) -> bool:
    ok = df[df["status"] == "ok"]
    return GRID_COL in ok and ok[GRID_COL].notna().any()


def with_grid_flag(df: pd.DataFrame) -> pd.DataFrame:
    flag = df[GRID_COL].notna() if GRID_COL in df else pd.Series(False, index=df.index)
    return df.assign(**{ON_GRID: flag})


def _val_metric(rows: pd.DataFrame) -> str:
    """sq-DLM is selected on validation MSE (the paper's rule, layouts.DLM_MSE_METHODS), every other method on NLL."""
    sq = "objective" in rows and (rows["objective"] == "sq_dlm").all()
    return "val_mse" if sq and "val_mse" in rows else "val_nll"


def adhoc_methods(df: pd.DataFrame) -> tuple[MethodSpec, ...]:
    """One MethodSpec per method label of an ad-hoc sweep: its grid runs with beta selected on validation
    ("svgp-dlm (beta selected)"), and its runs off the grid as they are ("svgp-elbo (beta=1)"; beta selected among
    them as well when they hold several betas by value)."""
    methods = []
    for label in sorted(df["method"].dropna().unique()):
        rows = df[df["method"] == label]
        metric = _val_metric(rows)
        if rows[ON_GRID].any():
            methods.append(MethodSpec(f"{label} (beta selected)", where(method=label, **{ON_GRID: True}), metric))
        off = rows[~rows[ON_GRID]]
        if off.empty:
            continue
        betas = off["beta"].dropna().unique()
        if len(betas) == 1:
            methods.append(MethodSpec(f"{label} (beta={betas[0]:g})", where(method=label, **{ON_GRID: False})))
        else:
            methods.append(MethodSpec(f"{label} (beta by value, selected)", where(method=label, **{ON_GRID: False}),
                                      metric))
    return tuple(methods)


def spec_methods(specs) -> tuple[MethodSpec, ...]:
    """The methods of a paper layout's tables and figures, one per label, the selecting form where there is one
    (dlm_fig1c's by_beta draws beta-ELBO at every beta, its selected_beta table selects it)."""
    found: dict[str, MethodSpec] = {}
    for spec in specs:
        if not isinstance(spec, (TableSpec, FigureSpec)):
            continue
        for m in spec.methods:
            if m.label not in found or (m.select_by and not found[m.label].select_by):
                found[m.label] = m
    return tuple(found.values())


def selection_methods(df: pd.DataFrame, specs) -> tuple[MethodSpec, ...]:
    """The methods whose per-seed selected rows a report shows: its layout's, or for an ad-hoc sweep (a layout
    without methods) one per method label; () when none selects a beta."""
    methods = spec_methods(specs) or adhoc_methods(df)
    return methods if any(m.select_by for m in methods) else ()


def selected_rows(df: pd.DataFrame, methods: tuple[MethodSpec, ...]) -> pd.DataFrame:
    """One row per (dataset, train_size, method, seed): `method` is the series label, `beta_selected` the beta
    of the chosen run (the only beta for a method that does not select), `selected_by` the validation metric
    (empty when nothing was selected), then the validation and test metrics of that run."""
    rows = apply_methods(df, methods, cell=CELL)
    by = {m.label: m.select_by for m in methods}
    if rows.empty:
        return pd.DataFrame(columns=[*CELL, "method", "seed", "beta_selected", "selected_by"])
    label = rows[SERIES]
    chosen = [next((by[k] for k in by if s == k or s.startswith(k + " [")), None) for s in label]
    metrics = [c for c in ("val_nll", "val_mse", *TEST_METRICS) if c in rows and rows[c].notna().any()]
    out = pd.DataFrame({"dataset": rows["dataset"], "train_size": rows["train_size"], "method": label,
                        "seed": rows["seed"], "beta_selected": rows["beta"],
                        "selected_by": [c or "" for c in chosen]})
    out = pd.concat([out, rows[metrics]], axis=1)
    order = {m: i for i, m in enumerate(dict.fromkeys(label))}
    return out.sort_values(["dataset", "train_size", "method", "seed"],
                           key=lambda s: s.map(order) if s.name == "method" else s).reset_index(drop=True)


def selection_notes(df: pd.DataFrame, methods: tuple[MethodSpec, ...]) -> list[str]:
    """The seeds left out of the per-seed selection because their beta grid is partial (tables.partial_grids)."""
    return partial_grids(df, methods, cell=CELL + ("beta",))


def pick_baseline(labels, wanted: str | None) -> str | None:
    """`wanted` when it is one of `labels`, else (no wish) the first DEFAULT_BASELINES present, else None."""
    labels = list(labels)
    if wanted is not None:
        return wanted if wanted in labels else None
    return next((b for b in DEFAULT_BASELINES if b in labels), None)


def paired_test(diff: np.ndarray) -> list[dict]:
    """The paired t-test and the Wilcoxon signed-rank test of `diff` (method - baseline, one per seed):
    [{test, p_value}], p_value "too few seeds" below MIN_SEEDS and "all differences zero" when there is nothing
    to test."""
    n = len(diff)
    tests = ("paired t", "Wilcoxon signed-rank")
    if n < MIN_SEEDS:
        return [{"test": t, "p_value": TOO_FEW} for t in tests]
    if np.all(diff == 0):
        return [{"test": t, "p_value": "all differences zero"} for t in tests]
    t_p = float(stats.ttest_1samp(diff, 0.0).pvalue)
    w_p = float(stats.wilcoxon(diff).pvalue)
    return [{"test": tests[0], "p_value": t_p}, {"test": tests[1], "p_value": w_p}]


PAIRED_COLUMNS = ["dataset", "train_size", "method", "baseline", "metric", "test", "mean_diff", "se", "ci95",
                  "p_value", "n_seeds", "wins"]


def _by_seed(rows: pd.DataFrame) -> pd.DataFrame:
    """A method's metrics indexed by seed; a seed with two runs (a rerun kept beside the first) is their mean, so
    that each seed counts once in a paired test."""
    return rows.drop(columns=["method"]).groupby("seed").mean(numeric_only=True)


def paired(sel: pd.DataFrame, baseline: str, by: tuple[str, ...] = CELL,
           metrics: tuple[str, ...] = TEST_METRICS) -> pd.DataFrame:
    """Each method against `baseline` per cell of `by` (default: dataset, train_size) over the seeds both have: mean
    of the per-seed difference method - baseline (every test metric here is lower-is-better: negative favours the
    method), its standard error (std ddof=1 / sqrt(n)), the half-width of its 95% t interval, the tests' p-values and
    `wins` (seeds where the method is strictly lower)."""
    rows = []
    metrics = [m for m in metrics if m in sel and sel[m].notna().any()]
    for key, cell in sel.groupby(list(by), sort=True):
        base = _by_seed(cell[cell["method"] == baseline])
        if base.empty:
            continue
        for method in dict.fromkeys(cell["method"]):
            if method == baseline:
                continue
            ours = _by_seed(cell[cell["method"] == method])
            for metric in metrics:
                pair = pd.concat([ours[metric].rename("m"), base[metric].rename("b")], axis=1, join="inner").dropna()
                if pair.empty:
                    continue
                d = (pair["m"] - pair["b"]).to_numpy(float)
                n = len(d)
                se = d.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
                ci = stats.t.ppf(0.975, n - 1) * se if n > 1 else np.nan
                for test in paired_test(d):
                    rows.append({**dict(zip(by, key)), "method": method, "baseline": baseline,
                                 "metric": metric, **test, "mean_diff": d.mean(), "se": se, "ci95": ci,
                                 "n_seeds": n, "wins": int((d < 0).sum())})
    return pd.DataFrame(rows, columns=[*by, *PAIRED_COLUMNS[len(CELL):]])
