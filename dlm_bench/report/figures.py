"""Figures from FigureSpecs: one panel per (dataset, metric), one error-bar line per method."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from .specs import FigureSpec, PredictiveSpec  # noqa: E402
from .tables import SERIES, apply_methods, mean_se  # noqa: E402


def make_figure(df: pd.DataFrame, spec: FigureSpec):
    """The matplotlib Figure for `spec` (error bars: standard error over seeds); None when no run matches."""
    data = apply_methods(df, spec.methods, extra_group=(spec.x,) if spec.x != "beta" else ())
    datasets = sorted(data["dataset"].unique())
    if not datasets:
        return None
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
            ax.grid(alpha=0.3)
            if i == 0 and j == 0 and ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=8)
    if spec.title:
        fig.suptitle(spec.title)
    fig.tight_layout()
    return fig


def make_curve_figure(df: pd.DataFrame, spec):
    """Learning curves (CurveSpec): reads curve.csv next to each selected run; None when no run matches."""
    data = apply_methods(df, spec.methods)
    datasets = sorted(data["dataset"].unique())
    if not datasets:
        return None
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.6 * len(datasets), 3.6), squeeze=False)
    series = [m.label for m in spec.methods] if spec.methods else sorted(data[SERIES].unique())
    for j, ds in enumerate(datasets):
        ax = axes[0][j]
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
                    curves.append(xy.assign(seed=seed))
            if not curves:
                continue
            agg = mean_se(pd.concat(curves), [spec.x], (spec.metric,)).sort_values(spec.x)
            line = ax.plot(agg[spec.x], agg["mean"], label=label)[0]
            ax.fill_between(agg[spec.x], agg["mean"] - agg["se"].fillna(0), agg["mean"] + agg["se"].fillna(0),
                            color=line.get_color(), alpha=0.2)
        ax.set_xlabel(spec.x)
        ax.set_ylabel(spec.metric)
        ax.set_yscale(getattr(spec, "yscale", "linear"))
        ax.set_title(ds)
        ax.grid(alpha=0.3)
        if j == 0 and ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    if spec.title:
        fig.suptitle(spec.title)
    fig.tight_layout()
    return fig


def _predictive(rows: pd.DataFrame) -> dict | None:
    for run_dir in rows["run_dir"]:
        path = Path(run_dir) / "predictive.json"
        if path.is_file():
            return json.loads(path.read_text())
    return None


def make_predictive_figure(df: pd.DataFrame, spec: PredictiveSpec):
    """Fig. 1 style: per panel value, the method's mean +- 2 sd (noise-free, as Q's predictive), its epsilon band
    (green), the overlay's mean +- 2 sd including its noise (red), the data, and Z before (top) / after (bottom)."""
    ok = df[(df["status"] == "ok") & (df["seed"] == spec.seed)]
    sel = apply_methods(ok, (spec.method,))
    values = sorted(sel[spec.panels].dropna().unique()) if spec.panels in sel else []
    overlay = _predictive(apply_methods(ok, (spec.overlay,))) if spec.overlay else None
    fig, axes = plt.subplots(1, max(len(values), 1), figsize=(4.6 * max(len(values), 1), 3.6), squeeze=False)
    for ax, value in zip(axes[0], values):
        rows = sel[sel[spec.panels] == value]
        p = _predictive(rows)
        if p is None:
            continue
        x, m, sd = np.array(p["x"]), np.array(p["mean"]), np.sqrt(np.array(p["var"]))
        ax.plot(p["X_train"], p["y_train"], "k.", ms=3)
        if overlay is not None:
            om, osd = np.array(overlay["mean"]), np.sqrt(np.array(overlay["var"]) + (overlay["noise"] or 0.0))
            ax.plot(overlay["x"], om, "r-", lw=1, label=spec.overlay.label)
            ax.fill_between(overlay["x"], om - 2 * osd, om + 2 * osd, color="r", alpha=0.12)
        eps = p["epsilon"]
        ax.fill_between(x, m - eps, m + eps, color="g", alpha=0.25, label="epsilon band")
        ax.plot(x, m, "b-", lw=1.2, label=spec.method.label)
        ax.plot(x, m - 2 * sd, "b--", lw=0.8)
        ax.plot(x, m + 2 * sd, "b--", lw=0.8)
        lo, hi = ax.get_ylim()
        if p.get("Z_init"):
            ax.plot(p["Z_init"], [hi] * len(p["Z_init"]), "kx", ms=5, clip_on=False)
            ax.plot(p["Z"], [lo] * len(p["Z"]), "bx", ms=5, clip_on=False)
        kl = rows["kl_over_n"].iloc[0] if "kl_over_n" in rows else float("nan")
        ax.set_title(f"{spec.panels}={value:g}, KL/N={kl:.3f}")
        ax.set_xlabel("x (standardised)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="lower left")
    if spec.title:
        fig.suptitle(spec.title)
    fig.tight_layout()
    return fig


def make_sweep_figure(df: pd.DataFrame, spec):
    """SweepFigureSpec: one panel per metric; x = the swept column (numeric axis, log when it spans more than
    two decades, else categorical), one line per combination of the other swept columns; error bars are the
    standard error over seeds."""
    ok = df[df["status"] == "ok"]
    fig, axes = plt.subplots(1, len(spec.metrics), figsize=(4.4 * len(spec.metrics), 3.6), squeeze=False)
    xs = pd.to_numeric(ok[spec.x], errors="coerce")
    numeric = xs.notna().all() and not ok[spec.x].map(lambda v: isinstance(v, bool)).any()
    if numeric:
        data = ok.assign(_x=xs.astype(float))
    else:
        cats = sorted(ok[spec.x].astype(str).unique())
        data = ok.assign(_x=ok[spec.x].astype(str).map({c: i for i, c in enumerate(cats)}).astype(float))
    others = list(spec.others)
    groups = data.groupby([data[c].astype(str) for c in others], sort=True) if others else [((), data)]
    for j, metric in enumerate(spec.metrics):
        ax = axes[0][j]
        for key, rows in groups:
            key = key if isinstance(key, tuple) else (key,)
            label = ", ".join(f"{c[len('cfg.'):]}={v}" for c, v in zip(others, key)) or None
            agg = mean_se(rows, ["_x"], (metric,)).sort_values("_x")
            if agg.empty or agg["mean"].isna().all():
                continue
            ax.errorbar(agg["_x"].to_numpy(float), agg["mean"].to_numpy(float), yerr=agg["se"].fillna(0.0).to_numpy(float),
                        label=label, marker="o", markersize=4, capsize=3)
        if numeric and (xs > 0).all() and xs.max() / xs.min() >= 100:
            ax.set_xscale("log")
        if not numeric:
            ax.set_xticks(range(len(cats)), cats, rotation=30 if max(map(len, cats)) > 6 else 0)
        ax.set_xlabel(spec.x[len("cfg."):])
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        if j == 0 and ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle(f"{spec.x[len('cfg.'):]} sweep: mean ± standard error over seeds")
    fig.tight_layout()
    return fig
