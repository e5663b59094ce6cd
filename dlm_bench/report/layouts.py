"""Report specs are data: one small spec per paper figure / table, keyed by experiment name. The specs are read from
each paper's layout file (YAML, dlm_bench/papers/; layout_files.py) into the dataclasses of spec_types.py; this
module picks an experiment's specs and builds the generic ones for experiments without a layout."""

from __future__ import annotations

import pandas as pd

from .layout_files import all_layouts
from .spec_types import SweepFigureSpec, TableSpec


def where(**kw) -> tuple[tuple[str, object], ...]:
    return tuple(kw.items())


TEST_METRICS = ("test_nll", "test_mse", "test_error", "test_mre")  # lower is better, every one
SPECS: dict[str, tuple] = all_layouts()  # report spec name (an experiment's `report:` key) -> its tables and figures


def specs_for(experiment: str, df) -> tuple:
    """An experiment's report spec: the `report` key its runs were made with (runs written before the key
    existed: the spec named like the experiment, or like its full variant), else default_specs."""
    names = df["cfg.report"].dropna().unique().tolist() if "cfg.report" in df else []
    for name in names + [experiment, experiment.removesuffix("_smoke")]:
        if name in SPECS:
            return SPECS[name]
    return default_specs(df)


NOT_SWEPT = ("cfg.seed", "cfg.experiment", "cfg.paper")  # seeds are replicates, not a swept setting
# Settings that say where or how a run ran, not what it computed: they never split a series, a facet or a cell,
# even when two runs differ in them (a sweep forces trainer.progress=lines; single runs keep auto). The same
# settings run/naming.run_name leaves out of a run's name (tests/unit/test_report.py checks that each of these
# leaves the name unchanged); launcher (threads: launcher.cpus), resume, results_dir and run_dir are not even
# collected (collect.CONFIG_SKIP).
NO_EFFECT = ("cfg.trainer.progress", "cfg.report", "cfg.objective.beta_batch")


def result_settings(columns) -> list[str]:
    """The config columns among `columns` that can change a result: cfg.* less NOT_SWEPT and NO_EFFECT."""
    return [c for c in columns if c.startswith("cfg.") and c not in NOT_SWEPT and c not in NO_EFFECT]


def swept_columns(df) -> list[str]:
    """Config columns that can change a result and take more than one value among the ok runs; of columns that
    vary together (method=... sets several keys) only the shortest name is kept."""
    ok = df[df["status"] == "ok"] if "status" in df else df
    groups: dict[tuple, str] = {}
    for col in sorted(result_settings(ok.columns), key=lambda c: (len(c), c)):
        values = ok[col].astype(str)
        if values.nunique() < 2:
            continue
        partition = tuple(pd.factorize(values, use_na_sentinel=False)[0])  # which runs share a value
        groups.setdefault(partition, col)
    return list(groups.values())


def sweep_axes(df, swept: list[str]) -> list[str]:
    """The swept columns worth an x axis. A method preset (method=dlm,elbo,beta_elbo) fixes several settings at once
    (objective.name, model.noise_init, the beta grid flag): such a column, constant within each method and beta-grid
    group, only says which method ran, so it splits series but is no axis when another column varies within a method
    (objective.beta): against it, a 2-point figure with a line per beta would hide the comparison the report makes."""
    keys = [c for c in ("method", "cfg.objective.beta_grid") if c in df]
    if not keys or not swept:
        return swept
    ok = df[df["status"] == "ok"] if "status" in df else df
    groups = ok.groupby([ok[k].astype(str) for k in keys], sort=False)
    within = [c for c in swept if (groups[c].nunique(dropna=False) > 1).any()]
    return within or swept


def default_specs(df) -> tuple:
    """For experiments without a spec: a table of every test metric by dataset, beta and train size, and
    for each swept config key a figure of every test metric against it (SweepFigureSpec)."""
    metrics = tuple(c for c in TEST_METRICS if c in df and df[c].notna().any())
    specs = [TableSpec("summary", by=("dataset", "train_size", "beta"), metrics=metrics or ("train_final_loss",))]
    swept = swept_columns(df)
    for x in sweep_axes(df, swept):
        specs.append(SweepFigureSpec("sweep_" + x[len("cfg."):].replace(".", "-"), x=x, metrics=metrics or ("train_final_loss",),
                                     others=tuple(c for c in swept if c != x)))
    return tuple(specs)
