"""SAVIGP figures from a results folder: `python -m dlm_bench.savigp.report results/<experiment> [--out DIR]`.

Regression (Figs. 1, 2): box plots of the per-test-point SSE and NLPD (points.csv of every run, pooled over splits), one
box per posterior (FG, MoG1, MoG2) x sparsity factor. Classification (Fig. 3): error rate with 95 % CI bars and NLP box
plots. Fig. 4 (track=true runs): test error rate and NLP against training wall time (curve.csv). Writes summary.csv/.md
(means over runs) and, for regression, pooled.csv/.md: the statistics of the pooled per-point values the boxes draw.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..results.labels import record_variant  # noqa: E402
from ..results.schema import check_curve_csv  # noqa: E402

VARIANTS = ("fg", "mog1", "mog2")


def collect(root) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """root: a results folder (searched for run.json) or a list of run.json paths."""
    runs, points, curves = [], [], {}
    files = sorted(Path(root).rglob("run.json")) if isinstance(root, (str, Path)) else sorted(map(Path, root))
    for rj in files:
        r = json.loads(rj.read_text())
        if r.get("model") != "savigp":
            continue
        sf = r["config"]["savigp"]["sparsity_factor"]
        row = {"run": rj.parent.name, "status": r["status"], "variant": record_variant(r), "sf": sf, "seed": r["seed"],
               "dataset": r["dataset"], "wall_s": r["train"].get("wall_s"), "iterations": r["train"].get("iterations"),
               "M": r["num_inducing"], **(r.get("metrics") or {})}
        runs.append(row)
        pc = rj.parent / "points.csv"
        if pc.is_file():
            p = pd.read_csv(pc)
            p["variant"], p["sf"], p["seed"] = row["variant"], sf, row["seed"]
            points.append(p)
        cc = rj.parent / "curve.csv"
        if cc.is_file() and check_curve_csv(cc, "savigp") is None:  # a broken one is listed by report/collect.py
            curves[(row["variant"], sf, row["seed"])] = pd.read_csv(cc)
    return pd.DataFrame(runs), (pd.concat(points, ignore_index=True) if points else pd.DataFrame()), curves


def _groups(points: pd.DataFrame):
    sfs = sorted(points["sf"].unique(), reverse=True)
    variants = [v for v in VARIANTS if v in set(points["variant"])] + sorted(set(points["variant"]) - set(VARIANTS))
    return sfs, variants


def _boxes(ax, points: pd.DataFrame, metric: str, sfs, variants, colours=None):
    """One box of `metric`'s per-test-point values per posterior x SF, grouped by posterior; filled with the SF's
    colour when `colours` is given."""
    data, pos, col = [], [], []
    for i, v in enumerate(variants):
        for j, sf in enumerate(sfs):
            d = points[(points.variant == v) & (points.sf == sf)][metric].dropna().to_numpy()
            if len(d) or colours is None:
                data.append(d)
                pos.append(i * (len(sfs) + 1) + j)
                col.append(colours[j % len(colours)] if colours else None)
    bp = ax.boxplot(data, positions=pos, widths=0.8, showfliers=False, patch_artist=colours is not None)
    if colours is not None:
        for patch, c in zip(bp["boxes"], col):
            patch.set_facecolor(c)
            patch.set_alpha(0.6)
    ax.set_xticks([i * (len(sfs) + 1) + (len(sfs) - 1) / 2 for i in range(len(variants))])
    ax.set_xticklabels([v.upper() for v in variants])


def boxplots(points: pd.DataFrame, metrics: list[str], title: str):
    sfs, variants = _groups(points)
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.5 * len(metrics), 3.6), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, metric in zip(axes[0], metrics):
        _boxes(ax, points, metric, sfs, variants, colours)
        ax.set_title(metric.upper())
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[j % len(colours)], alpha=0.6) for j in range(len(sfs))]
    axes[0][-1].legend(handles, [f"SF={sf:g}" for sf in sfs], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside: no box hidden
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def error_bars(points: pd.DataFrame, title: str):
    sfs, variants = _groups(points)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    w = 0.8 / len(sfs)
    for j, sf in enumerate(sfs):
        er, ci = [], []
        for v in variants:
            e = points[(points.variant == v) & (points.sf == sf)]["err"].to_numpy()
            p = e.mean() if len(e) else np.nan
            er.append(p)
            ci.append(1.96 * np.sqrt(p * (1 - p) / max(len(e), 1)))
        axes[0].bar(np.arange(len(variants)) + j * w, er, w, yerr=ci, capsize=3, color=colours[j], alpha=0.7, label=f"SF={sf:g}")
    axes[0].set_xticks(np.arange(len(variants)) + w * (len(sfs) - 1) / 2)
    axes[0].set_xticklabels([v.upper() for v in variants])
    axes[0].set_title("error rate (95% CI)")
    axes[0].legend(fontsize=8)
    _boxes(axes[1], points, "nlp", sfs, variants)
    axes[1].set_title("NLP (per test point)")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def time_curves(curves: dict, title: str):
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for key, c in curves.items():
        for ax, m in zip(axes, ("test_err", "test_nlp")):
            if m in c and "wall_s" in c:
                ax.plot(c["wall_s"], c[m], marker=".", label=f"{key[0]} SF={key[1]:g} seed {key[2]}")
    axes[0].set_ylabel("test error rate")
    axes[1].set_ylabel("test NLP")
    for ax in axes:
        ax.set_xlabel("training time (s)")
    axes[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def pooled_stats(points: pd.DataFrame, metrics=("sse", "nlpd")) -> pd.DataFrame:
    """Per posterior x SF, over the per-test-point values pooled across splits: count, mean, quartiles, median and
    the upper whisker the box plots draw (the largest value <= Q3 + 1.5 IQR, matplotlib's default whis=1.5)."""
    sfs, variants = _groups(points)
    rows = []
    for v in variants:
        for sf in sfs:
            sel = points[(points.variant == v) & (points.sf == sf)]
            if sel.empty:
                continue
            row = {"variant": v, "sf": sf, "points": len(sel)}
            for m in metrics:
                d = sel[m].dropna().to_numpy()
                q1, med, q3 = np.percentile(d, [25, 50, 75])
                row |= {f"{m}_mean": d.mean(), f"{m}_q1": q1, f"{m}_median": med, f"{m}_q3": q3,
                        f"{m}_upper_whisker": d[d <= q3 + 1.5 * (q3 - q1)].max()}
            rows.append(row)
    return pd.DataFrame(rows)


def markdown(df: pd.DataFrame) -> str:
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    rows = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    rows += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in df.itertuples(index=False)]
    return "\n".join(rows)


def build(root, out: Path, name: str | None = None) -> list[Path]:
    """root: a results folder or a list of run.json paths (dlm-bench report passes those of one experiment)."""
    runs, points, curves = collect(root)
    if runs.empty:
        raise FileNotFoundError(f"no savigp run.json under {root}")
    out.mkdir(parents=True, exist_ok=True)
    name = name or Path(root).name
    made = []
    metric_cols = [c for c in runs.columns if c.startswith("test_")]
    summary = runs.groupby(["variant", "sf"], sort=True).agg(
        runs=("run", "size"), ok=("status", lambda s: int((s == "ok").sum())), M=("M", "first"),
        wall_s=("wall_s", "mean"), **{c: (c, "mean") for c in metric_cols}).reset_index()
    summary.to_csv(out / "summary.csv", index=False)
    (out / "summary.md").write_text(f"# {name}: mean over runs (splits)\n\n" + markdown(summary) + "\n")
    made += [out / "summary.csv", out / "summary.md"]
    if not points.empty:
        if "sse" in points:
            fig = boxplots(points, ["sse", "nlpd"], f"{name}: per-test-point SSE and NLPD (pooled over splits)")
            pooled = pooled_stats(points)
            pooled.to_csv(out / "pooled.csv", index=False)
            (out / "pooled.md").write_text(f"# {name}: per-test-point values pooled over splits (the box plots)\n\n"
                                           + markdown(pooled) + "\n")
            made += [out / "pooled.csv", out / "pooled.md"]
        else:
            fig = error_bars(points, f"{name}: error rate and NLP")
        fig.savefig(out / f"{name}.png", dpi=120)
        plt.close(fig)
        made.append(out / f"{name}.png")
    if any("test_err" in c for c in curves.values()):
        fig = time_curves(curves, f"{name}: test error and NLP vs training time")
        fig.savefig(out / f"{name}_vs_time.png", dpi=120)
        plt.close(fig)
        made.append(out / f"{name}_vs_time.png")
    return made


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m dlm_bench.savigp.report", description=__doc__.splitlines()[0])
    p.add_argument("root", help="results/<experiment> folder of savigp runs")
    p.add_argument("--out", help="output folder (default: <root>/report_savigp)")
    a = p.parse_args(argv)
    try:
        made = build(Path(a.root), Path(a.out) if a.out else Path(a.root) / "report_savigp")
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for m in made:
        print(m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
