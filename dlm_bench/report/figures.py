"""Figures from FigureSpecs: one panel per (dataset, metric), one error-bar line per method."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .spec_types import FigureSpec  # noqa: E402
from .tables import SERIES, apply_methods, mean_se, series_labels  # noqa: E402


def _grid_and_legend(ax, legend: bool, fontsize: int = 8) -> None:
    """Every panel: a light grid; the legend on the panel that gets it (the first), if it has labelled lines."""
    ax.grid(alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=fontsize)


def finish_figure(fig, title: str | None):
    """Every figure: the title (if any) above the panels, laid out tight."""
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def save_figure(fig, stem: Path, dpi: int) -> list[Path]:
    """`fig` as stem.png and stem.pdf, then closed (pyplot keeps every open figure alive)."""
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:
        fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return paths


def make_figure(df: pd.DataFrame, spec: FigureSpec):
    """The matplotlib Figure for `spec` (error bars: standard error over seeds); None when no run matches."""
    data = apply_methods(df, spec.methods, extra_group=(spec.x,) if spec.x != "beta" else (), cell=("dataset", spec.x),
                         over=spec.over)
    datasets = sorted(data["dataset"].unique())
    if not datasets:
        return None
    fig, axes = plt.subplots(
        len(datasets), len(spec.metrics), figsize=(4.2 * len(spec.metrics), 3.4 * len(datasets)), squeeze=False
    )
    series = series_labels(data, spec.methods)
    for i, ds in enumerate(datasets):
        for j, metric in enumerate(spec.metrics):
            ax = axes[i][j]
            sub = data[data["dataset"] == ds]
            for label in series:
                rows = sub[sub[SERIES] == label]
                if rows.empty or metric not in rows:
                    continue
                if spec.scatter:
                    ax.scatter(rows[spec.x], rows[metric], s=12, alpha=0.7, label=label)
                    continue
                agg = mean_se(rows, [spec.x], (metric,)).sort_values(spec.x)
                ax.errorbar(agg[spec.x], agg["mean"], yerr=agg["se"].fillna(0.0), label=label, marker="o",
                            markersize=4, capsize=3)
            ax.set_xscale(spec.xscale)
            ax.set_xlabel(spec.xlabel or spec.x)
            ax.set_ylabel(metric)
            ax.set_title(ds)
            _grid_and_legend(ax, legend=i == 0 and j == 0)
    return finish_figure(fig, spec.title)


def make_curve_figure(df: pd.DataFrame, spec):
    """Learning curves (CurveSpec): reads curve.csv next to each selected run; None when no run matches."""
    data = apply_methods(df, spec.methods)
    datasets = sorted(data["dataset"].unique())
    if not datasets:
        return None
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.6 * len(datasets), 3.6), squeeze=False)
    series = series_labels(data, spec.methods)
    for j, ds in enumerate(datasets):
        ax = axes[0][j]
        drawn = 0
        for label in series:
            runs = data[(data["dataset"] == ds) & (data[SERIES] == label)]
            curves = []
            usable = runs["curve_ok"] if "curve_ok" in runs else [True] * len(runs)
            for run_dir, seed, ok in zip(runs["run_dir"], runs["seed"], usable):
                if not ok:  # broke the curve.csv contract: listed in index.md by the collector
                    continue
                try:
                    c = pd.read_csv(Path(run_dir) / "curve.csv")
                except (OSError, ValueError):
                    continue
                if spec.metric in c and spec.x in c:
                    xy = c[[spec.x, spec.metric]].apply(pd.to_numeric, errors="coerce").dropna()
                    if not xy.empty:  # e.g. a metric column of text ("abc"): nothing of it to draw
                        curves.append(xy.assign(seed=seed))
            if not curves:
                continue
            agg = mean_se(pd.concat(curves), [spec.x], (spec.metric,)).sort_values(spec.x)
            drawn += 1
            line = ax.plot(agg[spec.x], agg["mean"], label=label)[0]
            ax.fill_between(agg[spec.x], agg["mean"] - agg["se"].fillna(0), agg["mean"] + agg["se"].fillna(0),
                            color=line.get_color(), alpha=0.2)
        if not drawn:  # e.g. runs restored from a report's runs.tgz, which keeps run.json but not curve.csv
            ax.text(0.5, 0.5, f"no {spec.metric} curve:\nits runs have no curve.csv", ha="center", va="center",
                    transform=ax.transAxes)
        ax.set_xlabel(spec.x)
        ax.set_ylabel(spec.metric)
        ax.set_yscale(getattr(spec, "yscale", "linear"))
        ax.set_title(ds)
        _grid_and_legend(ax, legend=j == 0)
    return finish_figure(fig, spec.title)


def make_sweep_figure(df: pd.DataFrame, spec):
    """SweepFigureSpec: one panel per metric; x = the swept column (numeric axis, log when it spans more than
    two decades, else categorical), one series per combination of the other swept columns (a line on a numeric
    axis, points on a categorical one); error bars are the standard error over seeds."""
    ok = df[df["status"] == "ok"]
    fig, axes = plt.subplots(1, len(spec.metrics), figsize=(4.4 * len(spec.metrics), 3.6), squeeze=False)
    xs = pd.to_numeric(ok[spec.x], errors="coerce")
    numeric = xs.notna().all() and not ok[spec.x].map(lambda v: isinstance(v, bool)).any()
    if numeric:
        data = ok.assign(_x=xs.astype(float))
    else:
        # map(str), not astype(str): pandas 3 keeps NaN (a run off the beta grid) as NaN there, unsortable with text
        cats = sorted(ok[spec.x].map(str).unique())
        data = ok.assign(_x=ok[spec.x].map(str).map({c: i for i, c in enumerate(cats)}).astype(float))
    others = list(spec.others)
    groups = list(data.groupby([data[c].map(str) for c in others], sort=True)) if others else [((), data)]
    # a categorical axis has no order between its values: points (side by side per group), no joining line
    dodge = 0.0 if numeric else min(0.15, 0.6 / len(groups))
    for j, metric in enumerate(spec.metrics):
        ax = axes[0][j]
        for g, (key, rows) in enumerate(groups):
            key = key if isinstance(key, tuple) else (key,)
            label = ", ".join(f"{c[len('cfg.'):]}={v}" for c, v in zip(others, key)) or None
            agg = mean_se(rows, ["_x"], (metric,)).sort_values("_x")
            if agg.empty or agg["mean"].isna().all():
                continue
            x = agg["_x"].to_numpy(float) + (g - (len(groups) - 1) / 2) * dodge
            ax.errorbar(x, agg["mean"].to_numpy(float), yerr=agg["se"].fillna(0.0).to_numpy(float), label=label,
                        marker="o", markersize=4, capsize=3, linestyle="-" if numeric else "none")
        if numeric and (xs > 0).all() and xs.max() / xs.min() >= 100:
            ax.set_xscale("log")
        if not numeric:
            ax.set_xticks(range(len(cats)), cats, rotation=30 if max(map(len, cats)) > 6 else 0)
            ax.set_xlim(-0.5, len(cats) - 0.5)
        ax.set_xlabel(spec.x[len("cfg."):])
        ax.set_ylabel(metric)
        _grid_and_legend(ax, legend=j == 0, fontsize=7)
    return finish_figure(fig, f"{spec.x[len('cfg.'):]} sweep: mean ± standard error over seeds")


def make_paired_figure(pairs: pd.DataFrame):
    """Paired differences (method - baseline, per seed) with their 95% t intervals: one panel per metric, one row per
    (cell, method), the cell being the columns before `method` (dataset, train size unless a layout says otherwise);
    a dashed line at 0 (no difference); None when there is nothing to draw."""
    cell = list(pairs.columns[:list(pairs.columns).index("method")])
    one = pairs.drop_duplicates([*cell, "method", "metric"])  # one row per test: keep one
    metrics = list(dict.fromkeys(one["metric"]))
    if one.empty:
        return None
    keys = one[[*cell, "method"]].drop_duplicates()
    if cell == ["dataset", "train_size"]:
        labels = [f"{d}, n={t}: {m}" for d, t, m in keys.itertuples(index=False)]
    else:
        labels = [", ".join(f"{c}={v}" for c, v in zip(cell, row[:-1])) + f": {row[-1]}"
                  for row in keys.itertuples(index=False)]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.8 * len(metrics), 1.2 + 0.32 * len(labels)), squeeze=False)
    for j, metric in enumerate(metrics):
        ax = axes[0][j]
        rows = keys.merge(one[one["metric"] == metric], how="left")
        y = range(len(rows))
        ax.errorbar(rows["mean_diff"], y, xerr=rows["ci95"].fillna(0.0), fmt="o", markersize=4, capsize=3)
        ax.axvline(0.0, color="0.4", linestyle="--", linewidth=1)
        ax.set_yticks(list(y), labels if j == 0 else [""] * len(labels), fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(f"{metric}: method - baseline")
        ax.grid(alpha=0.3)
    base = ", ".join(dict.fromkeys(one["baseline"]))
    return finish_figure(fig, f"paired difference to {base} over seeds (mean, 95% t interval; < 0: method lower)")


def draw_selected_lines(ax, selected: pd.DataFrame, metric: str, dataset=None) -> None:
    """On a figure against beta: each selecting method's test `metric` at the beta chosen on validation, mean ±
    standard error over seeds, as a dashed horizontal line with a band, labelled "... [beta selected on validation]"."""
    rows = selected[selected["selected_by"] != ""]
    if dataset is not None:
        rows = rows[rows["dataset"].astype(str) == str(dataset)]
    if metric not in rows or rows.empty:
        return
    for i, (label, g) in enumerate(rows.groupby("method", sort=False)):
        v = pd.to_numeric(g[metric], errors="coerce").dropna().to_numpy(float)
        if not len(v):
            continue
        mean, se = v.mean(), (v.std(ddof=1) / len(v) ** 0.5 if len(v) > 1 else 0.0)
        name = label if "selected" in label else f"{label} (beta selected on validation)"
        color = f"C{(i + 3) % 10}"  # off the first colours, which the per-beta lines take
        ax.axhline(mean, linestyle="--", linewidth=1.2, color=color, label=name)
        ax.axhspan(mean - se, mean + se, color=color, alpha=0.12)


BETA_AXES = ("beta", "cfg.objective.beta", "cfg.objective.beta_index")


def add_selected_lines(fig, spec, selected: pd.DataFrame | None) -> None:
    """A figure against beta (a paper layout's or an ad-hoc sweep's) also shows the selected rows: per panel, the
    lines of draw_selected_lines for the panel's metric (its y label) and dataset (its title; a sweep figure's
    panels have none and get the lines only when the report holds one dataset)."""
    if selected is None or selected.empty or getattr(spec, "x", None) not in BETA_AXES:
        return
    single = selected["dataset"].nunique() == 1
    for ax in fig.axes:
        title = ax.get_title()
        if not title and not single:
            continue
        draw_selected_lines(ax, selected, ax.get_ylabel(), dataset=title or None)
        if ax.get_legend() is not None or ax is fig.axes[0]:
            ax.legend(fontsize=7)
