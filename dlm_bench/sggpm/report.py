"""Figs. 2-3 of Sheth, Wang & Khardon (2015) from sggpm run.json files, per dataset:
  {ds}.png            Fig. 2: error (MFE for counts, MZE otherwise), MNLPD and CPU training time vs active-set size
                      (log x), one line per method, mean +- standard error over folds;
  {ds}_cpu_time.png   average training CPU time (mean over folds) vs set size, log-log, one line per method;
  {ds}_fig3.png       Fig. 3 (the paper's "training time / accuracy curves"): error and MNLPD vs average training CPU
                      time (log x), one dot per set size joined in size order, the smallest size circled;
and tables.md with the same numbers."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..results.labels import record_variant  # noqa: E402
from ..papers.sggpm import METHODS  # noqa: E402

LABEL = {"laplace_sod": "Laplace-SoD", "grad_sod": "grad-SoD", "dual_sod": "dual-SoD", "fp_sod": "FP-SoD",
         "grad_sparse": "grad-sparse", "dual_sparse": "dual-sparse", "fp_sparse": "FP-sparse"}
COLOR = {"laplace": "r", "grad": "c", "dual": "g", "fp": "b"}


def collect(paths):
    rows = []
    for p in paths:
        d = json.loads(Path(p).read_text())
        if d.get("status") != "ok" or d.get("model") != "sggpm":
            continue
        m = d["metrics"]
        err = "mfe" if "mfe" in m else "mze"
        rows.append({"dataset": d["dataset"], "method": record_variant(d), "M": int(m["set_size"]), "err_name": err,
                     "err": m[err], "err_se": m[f"{err}_se"], "mnlpd": m["mnlpd"], "mnlpd_se": m["mnlpd_se"],
                     "cpu_s": m["cpu_s"], "folds": m["folds"], "neg_vlb": m["neg_vlb"]})
    return rows


def build(paths, out: Path, name: str = "sggpm") -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = collect(paths)
    written = []
    lines = [f"# {name}: error, MNLPD (mean +- SE over folds) and CPU training time (s, mean over fits)\n"]
    for ds in sorted({r["dataset"] for r in rows}):
        sub = [r for r in rows if r["dataset"] == ds]
        err = sub[0]["err_name"].upper()
        sizes = sorted({r["M"] for r in sub})
        methods = [m for m in METHODS if any(r["method"] == m for r in sub)]
        cell = {(r["method"], r["M"]): r for r in sub}
        for key, title in (("err", err), ("mnlpd", "MNLPD"), ("cpu_s", "CPU s")):
            lines.append(f"\n## {ds}: {title}\n\n| method | " + " | ".join(f"M={M}" for M in sizes) + " |")
            lines.append("|---|" + "---|" * len(sizes))
            for m in methods:
                vals = []
                for M in sizes:
                    r = cell.get((m, M))
                    if r is None:
                        vals.append("-")
                    elif key == "cpu_s":
                        vals.append(f"{r[key]:.3g}")
                    else:
                        vals.append(f"{r[key]:.4f} +- {r[key + '_se']:.4f}")
                lines.append(f"| {LABEL[m]} | " + " | ".join(vals) + " |")
        fig, axes = plt.subplots(1, 3, figsize=(14, 4))
        for ax, (key, title) in zip(axes, (("err", err), ("mnlpd", "MNLPD"), ("cpu_s", "CPU training time (s)"))):
            for m in methods:
                pts = sorted((r["M"], r[key], r.get(key + "_se", 0.0)) for r in sub if r["method"] == m)
                x = [p[0] for p in pts]
                ax.errorbar(x, [p[1] for p in pts], yerr=[p[2] for p in pts], label=LABEL[m], marker="o", ms=3,
                            capsize=2, **_style(m))
            ax.set_xscale("log")
            if key == "cpu_s":
                ax.set_yscale("log")
            ax.set_xlabel("set size")
            ax.set_title(f"{ds}: {title}")
        axes[0].legend(fontsize=7)
        written.append(_save(fig, out / f"{ds}.png"))
        written += time_figures(ds, sub, methods, err, out)
    md = out / "tables.md"
    md.write_text("\n".join(lines) + "\n")
    written.append(md)
    return written


def _save(fig, path: Path) -> Path:
    """Lay out, write at the reports' resolution and free the figure."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _style(m):
    alg, kind = m.rsplit("_", 1)
    return dict(color=COLOR[alg], linestyle="--" if kind == "sod" else "-")


def time_figures(ds, sub, methods, err, out: Path) -> list[Path]:
    """CPU time vs set size (log-log) and the paper's Fig. 3 time / accuracy curves."""
    series = {m: sorted((r["M"], r["cpu_s"], r["err"], r["mnlpd"]) for r in sub if r["method"] == m) for m in methods}
    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    for m, pts in series.items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=LABEL[m], **_style(m))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("set size")
    ax.set_ylabel("average training CPU time (s)")
    ax.set_title(f"{ds}: CPU time vs set size")
    ax.legend(fontsize=7)
    p1 = _save(fig, out / f"{ds}_cpu_time.png")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (j, title) in zip(axes, ((2, err), (3, "MNLPD"))):
        for m, pts in series.items():
            st = _style(m)
            x, y = [p[1] for p in pts], [p[j] for p in pts]
            ax.plot(x, y, marker="o", ms=3, label=LABEL[m], **st)
            ax.scatter(x[:1], y[:1], s=90, facecolors="none", edgecolors=st["color"], linewidths=1.2)
        ax.set_xscale("log")
        ax.set_xlabel("average training CPU time (s)")
        ax.set_ylabel(title)
        ax.set_title(f"{ds}: {title} vs CPU time (circle: smallest set size)")
    axes[0].legend(fontsize=7)
    return [p1, _save(fig, out / f"{ds}_fig3.png")]
