"""Replay readings of the DLM paper's stopping rule on long tracked runs, and redo the validation selection of beta.

Usage: python scripts/replay_stopping_rule.py RESULTS/<experiment> [--out FILE.md]

The runs must have been trained with `trainer.tol=-1` (never stop early) and `trainer.track_every=k`, so each
curve.csv holds the loss at every iteration and val/test metrics at iteration 1 and every k. Full-batch Adam is
deterministic, so the state at iteration t of such a run is the state a rule that stops at t would have kept
(tests/unit/training/test_trainer.py checks this). For each reading of the rule (what the tolerance applies to,
the window, the tolerance) this prints how many runs would have converged before the cap and which beta the
validation NLL at the stop selects, per method and seed. The metrics are read at the first tracked iteration
at or after the stop (at most k - 1 iterations later).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from dlm_bench.training.trainer import StoppingRule
import entry  # noqa: E402

# (label, tol_on, window, tol): the DLM supplement's rule is "max - min of the loss over the last I = 50
# iterations <= 1e-4" (regression); which loss (the sum over N, as upstream's regression code, or the mean) and
# how strict are the readings tested.
READINGS = [
    ("sum, I=50, 1e-4 (ours, upstream)", "sum", 50, 1e-4),
    ("mean, I=50, 1e-4", "mean", 50, 1e-4),
    ("mean, I=20, 1e-4", "mean", 20, 1e-4),
    ("mean, I=50, 1e-3", "mean", 50, 1e-3),
    ("mean, I=20, 1e-3", "mean", 20, 1e-3),
    ("mean, I=10, 1e-3", "mean", 10, 1e-3),
]


def series(record: dict) -> str:
    if record["objective"] == "dlm":
        return f"DLM ({'fixed' if record.get('hyperparameters') == 'fixed' else 'joint'})"
    return "beta-ELBO"


def load_runs(root: Path) -> list[dict]:
    runs = []
    for path in sorted(root.rglob("run.json")):
        record = json.loads(path.read_text())
        curve_path = path.parent / "curve.csv"
        if record.get("status") != "ok" or not curve_path.exists():
            continue
        curve = pd.read_csv(curve_path)
        if "val_nll" not in curve.columns:
            sys.exit(f"replay: {curve_path} has no val_nll column (train with trainer.track_every=k)")
        runs.append({"series": series(record), "beta": float(record["beta"]), "seed": int(record["seed"]),
                     "n": int(record["train_size"]), "curve": curve})
    return runs


def at_stop(run: dict, tol_on: str, window: int, tol: float) -> dict:
    curve = run["curve"]
    scale = run["n"] if tol_on == "sum" else 1.0
    stop = StoppingRule(window, tol).first_stop(curve["loss"].to_numpy() * scale)
    t = stop if stop is not None else int(curve["iteration"].iloc[-1])
    tracked = curve.dropna(subset=["val_nll"])
    row = tracked[tracked["iteration"] >= t].iloc[0] if (tracked["iteration"] >= t).any() else tracked.iloc[-1]
    return {"series": run["series"], "seed": run["seed"], "beta": run["beta"], "converged": stop is not None,
            "iteration": t, "val_nll": float(row["val_nll"]), "test_nll": float(row["test_nll"])}


def replay(runs: list[dict]) -> pd.DataFrame:
    rows = []
    for label, tol_on, window, tol in READINGS:
        for run in runs:
            rows.append({"reading": label, **at_stop(run, tol_on, window, tol)})
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> str:
    lines = ["| reading | converged before the cap | median stop | series | selected beta per seed (val NLL) "
             "| test NLL at the selection |", "|---|---|---|---|---|---|"]
    for reading, sub in df.groupby("reading", sort=False):
        conv = f"{int(sub['converged'].sum())} of {len(sub)}"
        median = f"{int(np.median(sub['iteration']))}"
        for name, ser in sub.groupby("series"):
            picks = ser.loc[ser.groupby("seed")["val_nll"].idxmin()].sort_values("seed")
            betas = " / ".join(f"{b:.3g}" for b in picks["beta"])
            tests = " / ".join(f"{v:.3f}" for v in picks["test_nll"])
            n_conv = f"{int(ser['converged'].sum())} of {len(ser)}"
            lines.append(f"| {reading} | {conv} (this series {n_conv}) | {median} | {name} | {betas} | {tests} |")
    return "\n".join(lines)


def figure(df: pd.DataFrame, path: Path) -> None:
    """Val NLL at the stop against beta, one panel per series, one line per reading (seeds averaged)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(df["series"].unique())
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    for ax, name in zip(axes[0], names):
        sub = df[df["series"] == name]
        for reading, r in sub.groupby("reading", sort=False):
            m = r.groupby("beta")[["val_nll", "converged"]].mean()
            ax.plot(m.index, m["val_nll"], marker="o", ms=3, label=f"{reading} ({int(r['converged'].sum())}/{len(r)} conv.)")
        ax.set_xscale("log")
        ax.axvline(1.0, color="grey", lw=0.6, ls=":")
        ax.set_title(name)
        ax.set_xlabel("beta")
        ax.set_ylabel("val NLL at the stop")
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--out", type=Path, help="also write the table, the per-run rows (CSV) and a figure (PNG) beside it")
    args = ap.parse_args(argv)
    runs = load_runs(args.root)
    if not runs:
        sys.exit(f"replay: no ok run with a tracked curve.csv under {args.root}")
    df = replay(runs)
    text = summary(df)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
        df.to_csv(args.out.with_suffix(".csv"), index=False)
        figure(df, args.out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    entry.run(main)
