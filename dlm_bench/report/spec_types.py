"""The schema of a report layout: one frozen dataclass per kind of table or figure. The layouts themselves are data
(each paper's YAML file, read by layout_files.py); default_specs (layouts.py) builds the generic ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class MethodSpec:
    """A line in a figure / a row in a table: the runs matching `where`, with beta selected on the
    validation metric `select_by` per (dataset, train_size, seed[, x]) when given."""

    label: str
    where: tuple[tuple[str, object], ...] = ()
    select_by: str | None = None


@dataclass(frozen=True)
class FigureSpec:
    name: str
    x: str  # run column on the x axis
    metrics: tuple[str, ...]  # one panel per metric, one row of panels per dataset
    methods: tuple[MethodSpec, ...] = ()  # empty: one line per distinct `method`
    xscale: str = "linear"
    xlabel: str | None = None
    title: str = ""
    scatter: bool = False  # one marker per run instead of mean ± SE lines (e.g. local optima over initialisations)
    over: tuple[str, ...] = ()  # settings the lines average over on purpose, as TableSpec.over


@dataclass(frozen=True)
class CurveSpec:
    """Learning curves from each run's curve.csv: `metric` against `x` (iteration or wall_s), one panel
    per dataset, one line per method, mean ± standard error over seeds at each logged x."""

    name: str
    metric: str
    methods: tuple[MethodSpec, ...] = ()
    x: str = "iteration"
    title: str = ""
    yscale: str = "linear"  # log: the FP paper's GP panels (log(-VLB))


@dataclass(frozen=True)
class TableSpec:
    name: str
    by: tuple[str, ...]  # columns that split the table (besides the method)
    metrics: tuple[str, ...]
    methods: tuple[MethodSpec, ...] = ()
    # published values {(by values..., method label): {metric: (mean, se)}}: the report adds <name>_vs_paper.md
    reference: dict | None = field(default=None, compare=False, hash=False)
    # settings the table averages over on purpose (App. E: 100 noise initialisations); any other setting in which
    # a method's runs differ inside a row splits that method into one series per value (tables.variant_settings)
    over: tuple[str, ...] = ()


@dataclass(frozen=True)
class PairedSpec:
    """Each method against `baseline` over the seeds both have (compare.paired: mean difference, SE, paired t-test and
    Wilcoxon p, wins), in every cell of `by`: for experiments without a beta grid (a learning curve's iterations), where
    the beta-selection tables' own paired table (against the ELBO) is not made."""
    name: str
    by: tuple[str, ...]
    metrics: tuple[str, ...]
    methods: tuple[MethodSpec, ...]
    baseline: str


@dataclass(frozen=True)
class PredictiveSpec:
    """1-D predictive distributions (from each run's predictive.json): one panel per value of `panels` for the
    runs of `method` with seed `seed`, with `overlay` (e.g. the full GP, mean +- 2 sd including noise) drawn in each."""

    name: str
    method: MethodSpec
    panels: str = "epsilon"
    overlay: MethodSpec | None = None
    seed: int = 0
    title: str = ""


@dataclass(frozen=True)
class PredictiveComparisonSpec:
    """Several methods' 1-D predictive distributions side by side (Reeb et al. 2018, Fig. 6): one panel per method
    of `methods` (seed `seed`), `overlay` (the full GP) drawn in each, and a table of the distances of each panel to
    the overlay and to each label in `against`. Labels in `pac` are PAC posteriors: drawn noise-free with their
    epsilon band; the others include their noise."""

    name: str
    methods: tuple[MethodSpec, ...]
    overlay: MethodSpec
    pac: tuple[str, ...] = ()
    against: tuple[str, ...] = ()
    seed: int = 0
    title: str = ""


@dataclass(frozen=True)
class SweepFigureSpec:
    """Ad-hoc sweeps (no spec of their own): each metric against the swept config column `x`, one panel per
    metric, one line per combination of the other swept columns `others`, mean ± SE over seeds."""

    name: str
    x: str
    metrics: tuple[str, ...]
    others: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExternalSpec:
    """A paper's own report code for plots the generic specs cannot draw (SAVIGP's per-point box plots):
    build(run_json_paths, out_dir, name) -> list of written files."""

    name: str
    build: Callable
