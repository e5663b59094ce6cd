"""Figures from FigureSpecs: one panel per (dataset, metric), one error-bar line per method."""

from __future__ import annotations

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
