"""One-dimensional predictive distributions (PAC-GP paper, Figs. 1 and 6), drawn from each run's predictive.json.

A PAC posterior Q is drawn as its noise-free mean +- 2 sd with the epsilon band of the 0-1 loss around the mean
(Reeb et al. 2018, eq. 9: the observation noise is not part of Q's predictive); an ordinary GP (full GP, FITC, VFE)
as mean +- 2 sd including its learned noise, as the paper draws them (App. E)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .figures import finish_figure, save_figure  # noqa: E402
from .spec_types import MethodSpec, PredictiveComparisonSpec, PredictiveSpec  # noqa: E402
from .tables import apply_methods, to_markdown  # noqa: E402


def _runs(df: pd.DataFrame, seed: int, method: MethodSpec) -> pd.DataFrame:
    """The ok runs of `method` with seed `seed` (a predictive figure draws one seed)."""
    return apply_methods(df[(df["status"] == "ok") & (df["seed"] == seed)], (method,))


def _predictive(rows: pd.DataFrame) -> dict | None:
    for run_dir in rows["run_dir"]:
        path = Path(run_dir) / "predictive.json"
        if path.is_file():
            return json.loads(path.read_text())
    return None


def _draw_gp(ax, p: dict, colour: str, label: str, alpha: float = 0.12) -> None:
    """An ordinary GP: mean +- 2 sd including its noise."""
    m, sd = np.array(p["mean"]), np.sqrt(np.array(p["var"]) + (p["noise"] or 0.0))
    ax.plot(p["x"], m, f"{colour}-", lw=1, label=label)
    ax.fill_between(p["x"], m - 2 * sd, m + 2 * sd, color=colour, alpha=alpha)


def _draw_pac(ax, p: dict, label: str) -> None:
    """A PAC posterior Q: noise-free mean +- 2 sd (dashed) and the epsilon band (green)."""
    x, m, sd = np.array(p["x"]), np.array(p["mean"]), np.sqrt(np.array(p["var"]))
    eps = p["epsilon"]
    ax.fill_between(x, m - eps, m + eps, color="g", alpha=0.25, label="epsilon band")
    ax.plot(x, m, "b-", lw=1.2, label=label)
    ax.plot(x, m - 2 * sd, "b--", lw=0.8)
    ax.plot(x, m + 2 * sd, "b--", lw=0.8)


def _draw_data_and_z(ax, p: dict) -> None:
    ax.plot(p["X_train"], p["y_train"], "k.", ms=3)
    lo, hi = ax.get_ylim()
    if p.get("Z_init"):  # inducing inputs before (top) and after (bottom) training
        ax.plot(p["Z_init"], [hi] * len(p["Z_init"]), "kx", ms=5, clip_on=False)
        ax.plot(p["Z"], [lo] * len(p["Z"]), "bx", ms=5, clip_on=False)
    ax.set_xlabel("x (standardised)")
    ax.grid(alpha=0.3)


def make_predictive_figure(df: pd.DataFrame, spec: PredictiveSpec):
    """Fig. 1 style: per panel value, the method's Q (mean +- 2 sd and epsilon band), the overlay's mean +- 2 sd
    including its noise (red), the data, and Z before (top) / after (bottom)."""
    sel = _runs(df, spec.seed, spec.method)
    values = sorted(sel[spec.panels].dropna().unique()) if spec.panels in sel else []
    overlay = _predictive(_runs(df, spec.seed, spec.overlay)) if spec.overlay else None
    fig, axes = plt.subplots(1, max(len(values), 1), figsize=(4.6 * max(len(values), 1), 3.6), squeeze=False)
    for ax, value in zip(axes[0], values):
        rows = sel[sel[spec.panels] == value]
        p = _predictive(rows)
        if p is None:
            continue
        if overlay is not None:
            _draw_gp(ax, overlay, "r", spec.overlay.label)
        _draw_pac(ax, p, spec.method.label)
        _draw_data_and_z(ax, p)
        kl = rows["kl_over_n"].iloc[0] if "kl_over_n" in rows else float("nan")
        ax.set_title(f"{spec.panels}={value:g}, KL/N={kl:.3f}")
    axes[0][0].legend(fontsize=7, loc="lower left")
    return finish_figure(fig, spec.title)


def _panels(df: pd.DataFrame, spec: PredictiveComparisonSpec) -> list[tuple[str, dict, pd.DataFrame]]:
    out = []
    for m in spec.methods:
        rows = _runs(df, spec.seed, m)
        p = _predictive(rows)
        if p is not None:
            out.append((m.label, p, rows))
    return out


def predictive_distances(panels: list[tuple[str, dict, pd.DataFrame]], references: dict[str, dict]) -> pd.DataFrame:
    """How far apart two predictive distributions are: root mean square, over the grid points inside the training
    inputs' range, of the difference of the means and of the noise-free standard deviations. Noise-free for every
    method, so that a PAC posterior (whose predictive has no noise, eq. 9) and a GP are compared on the same
    quantity. One row per panel, two columns per reference (label -> predictive.json contents)."""
    rows = []
    for label, p, runs in panels:
        x = np.array(p["x"])
        inside = (x >= min(p["X_train"])) & (x <= max(p["X_train"]))
        row = {"panel": label, "noise_var": p["noise"], "kl_over_n": float(runs["kl_over_n"].iloc[0])
               if "kl_over_n" in runs else float("nan")}
        for ref, q in references.items():
            if not np.allclose(q["x"], x):
                continue
            dm = np.array(p["mean"]) - np.array(q["mean"])
            ds = np.sqrt(np.array(p["var"])) - np.sqrt(np.array(q["var"]))
            row[f"mean RMS to {ref}"] = float(np.sqrt(np.mean(dm[inside] ** 2)))
            row[f"sd RMS to {ref}"] = float(np.sqrt(np.mean(ds[inside] ** 2)))
        rows.append(row)
    return pd.DataFrame(rows)


def make_predictive_comparison(df: pd.DataFrame, spec: PredictiveComparisonSpec):
    """Fig. 6 style: one panel per method, the overlay (full GP, red) in each; and the distance table. Returns
    (figure, table) or (None, None) when no run has a predictive.json."""
    panels = _panels(df, spec)
    if not panels:
        return None, None
    overlay = _predictive(_runs(df, spec.seed, spec.overlay))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), squeeze=False)
    for ax, (label, p, _) in zip(axes[0], panels):
        if overlay is not None:
            _draw_gp(ax, overlay, "r", spec.overlay.label)
        if label in spec.pac:
            _draw_pac(ax, p, label)
        else:
            _draw_gp(ax, p, "b", label, alpha=0.2)
        _draw_data_and_z(ax, p)
        ax.set_title(f"{label}, noise var {p['noise']:.3f}" if p["noise"] is not None else label)
    axes[0][0].legend(fontsize=7, loc="lower left")
    finish_figure(fig, spec.title)
    references = {spec.overlay.label: overlay} if overlay is not None else {}
    references.update({label: p for label, p, _ in panels if label in spec.against})
    return fig, predictive_distances(panels, references)


def write_predictive_comparison(df: pd.DataFrame, spec: PredictiveComparisonSpec, stem: Path) -> tuple[list, list]:
    """The figure (png, pdf) and the distance table (csv, md) at `stem`; ([], []) when nothing to draw."""
    fig, table = make_predictive_comparison(df, spec)
    if fig is None:
        return [], []
    figures = save_figure(fig, stem, dpi=130)
    md = stem.with_name(stem.name + "_distances.md")
    csv = md.with_suffix(".csv")
    table.to_csv(csv, index=False)
    md.write_text(f"# {stem.name}: distances between predictive distributions\n\n"
                  "RMS over the grid inside the training inputs' range, of the difference of the means and of the "
                  "noise-free standard deviations (standardised units; seed "
                  f"{spec.seed})\n\n{to_markdown(table.round(4))}")
    return figures, [csv, md]
