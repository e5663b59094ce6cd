"""Figures from FigureSpecs: one panel per (dataset, metric), one error-bar line per method."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .specs import FigureSpec  # noqa: E402
from .tables import SERIES, apply_methods, mean_se  # noqa: E402


def make_figure(df: pd.DataFrame, spec: FigureSpec):
    """The matplotlib Figure for `spec` (error bars: standard error over seeds)."""
    data = apply_methods(df, spec.methods, extra_group=(spec.x,) if spec.x != "beta" else ())
    datasets = sorted(data["dataset"].unique()) or ["-"]
    fig, axes = plt.subplots(
        len(datasets), len(spec.metrics), figsize=(4.2 * len(spec.metrics), 3.4 * len(datasets)), squeeze=False
    )
    series = [m.label for m in spec.methods] if spec.methods else sorted(data[SERIES].unique())
    for i, ds in enumerate(datasets):
        for j, metric in enumerate(spec.metrics):
            ax = axes[i][j]
            sub = data[data["dataset"] == ds]
            for label in series:
                rows = sub[sub[SERIES] == label]
                if rows.empty or metric not in rows:
                    continue
                agg = mean_se(rows, [spec.x], (metric,)).sort_values(spec.x)
                ax.errorbar(agg[spec.x], agg["mean"], yerr=agg["se"].fillna(0.0), label=label, marker="o",
                            markersize=4, capsize=3)
            ax.set_xscale(spec.xscale)
            ax.set_xlabel(spec.xlabel or spec.x)
            ax.set_ylabel(metric)
            ax.set_title(ds)
            ax.grid(alpha=0.3)
            if i == 0 and j == 0 and ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=8)
    if spec.title:
        fig.suptitle(spec.title)
    fig.tight_layout()
    return fig


def make_curve_figure(df: pd.DataFrame, spec):
    """Learning curves (CurveSpec): reads curve.csv next to each selected run."""
    data = apply_methods(df, spec.methods)
    datasets = sorted(data["dataset"].unique()) or ["-"]
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.6 * len(datasets), 3.6), squeeze=False)
    series = [m.label for m in spec.methods] if spec.methods else sorted(data[SERIES].unique())
    for j, ds in enumerate(datasets):
        ax = axes[0][j]
        for label in series:
            runs = data[(data["dataset"] == ds) & (data[SERIES] == label)]
            curves = []
            for run_dir, seed in zip(runs["run_dir"], runs["seed"]):
                try:
                    c = pd.read_csv(Path(run_dir) / "curve.csv")
                except (OSError, ValueError):
                    continue
                if spec.metric in c:
                    curves.append(c[[spec.x, spec.metric]].dropna().assign(seed=seed))
            if not curves:
                continue
            agg = mean_se(pd.concat(curves), [spec.x], (spec.metric,)).sort_values(spec.x)
            line = ax.plot(agg[spec.x], agg["mean"], label=label)[0]
            ax.fill_between(agg[spec.x], agg["mean"] - agg["se"].fillna(0), agg["mean"] + agg["se"].fillna(0),
                            color=line.get_color(), alpha=0.2)
        ax.set_xlabel(spec.x)
        ax.set_ylabel(spec.metric)
        ax.set_title(ds)
        ax.grid(alpha=0.3)
        if j == 0 and ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    if spec.title:
        fig.suptitle(spec.title)
    fig.tight_layout()
    return fig
