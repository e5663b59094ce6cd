"""Benchmark: wall of one batched beta grid vs one unbatched run (issue 16 items 1 and 6).

Default (--task regression): fixed DLM (dlm_fixed: SVGP pretraining, then q(u) with the DLM objective), pol-sized synthetic regression
data (D = 26, n_train = 1000), M = 50, float64, default trainer (Adam, full batch, the paper's stopping rule).
batched: `objective.beta_batch=true` trains all 17 betas of the grid [1000, 500, ..., >= 0.01] (one shared
stage 1, one batched stage 2) and writes 17 run directories; one run: the same configuration at one beta
index, unbatched. --task binary: the non-conjugate line, joint DLM with the probit likelihood and the
unwhitened strategy (the settings of experiment=dlm_classification) on generated 2-D binary data
(n_train = 500, M = 20, window 20, at most --max-iters iterations): all 16 betas [500, ..., >= 0.01] batched vs
one run; `--method beta_elbo`: the same for the joint beta-ELBO grid. Walls are of execute in-process (data,
training, evaluation, writing); the one-run
wall is the median over beta indices --indices, interleaved with the batched repeats. Target: <= 3.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import benchkit
import entry
from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config


def synthetic_csv(path: Path, n: int = 2000, d: int = 26, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d) / np.sqrt(d)
    y = np.sin(2 * X @ w) + 0.5 * np.cos(X[:, 0] * X[:, 1]) + 0.1 * rng.normal(size=n)
    header = ",".join([f"x{i}" for i in range(d)] + ["y"])
    np.savetxt(path, np.column_stack([X, y]), fmt="%.6g", delimiter=",", header=header, comments="")
    return path


def binary_csv(path: Path, n: int = 1500, seed: int = 0) -> Path:
    """Two interleaved noisy half-moons (banana-like), labels 0/1."""
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, size=n)
    t = rng.uniform(0, np.pi, size=n)
    X = np.column_stack([np.cos(t) + label, np.sin(t) * (1 - 2 * label) + 0.5 * label]) + 0.3 * rng.normal(size=(n, 2))
    np.savetxt(path, np.column_stack([X, label]), fmt=["%.6g", "%.6g", "%d"], delimiter=",", header="x0,x1,y",
               comments="")
    return path


def wall(overrides: list[str]) -> tuple[float, dict]:
    cfg = compose_config(overrides)
    t0 = time.perf_counter()
    record, _ = execute(cfg)
    return time.perf_counter() - t0, record.train


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"indices": "0", "max_iters": 2, "train_size": 60})
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--indices", default="0,8,16", help="beta indices of the single runs")
    ap.add_argument("--max-iters", type=int, default=None, help="trainer.max_iters (default: the trainer's)")
    ap.add_argument("--task", choices=("regression", "binary"), default="regression")
    ap.add_argument("--method", default=None, help="--task binary: method=dlm (default) or beta_elbo (the joint "
                    "beta-ELBO grid)")
    ap.add_argument("--train-size", type=int, default=None, help="training rows (default 1000; 500 with --task binary)")
    args = benchkit.parse(ap, argv)
    n_train = args.train_size or (500 if args.task == "binary" else 1000)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.task == "binary":
            base = ["experiment=dlm_classification", "dataset=csv", f"dataset.path={binary_csv(tmp / 'moons.csv', max(1500, 3 * n_train))}",
                    "dataset.target=y", "dataset.task=binary", f"method={args.method or 'dlm'}",
                    "model.num_inducing=20",
                    f"protocol.train_size={n_train}", "trainer.progress=off", "device=cpu", "dtype=float64"]
        else:
            base = ["dataset=csv", f"dataset.path={synthetic_csv(tmp / 'pol_like.csv', 2 * n_train)}", "dataset.target=y",
                    "method=dlm_fixed", "model.num_inducing=50", f"protocol.train_size={n_train}", "trainer.progress=off",
                    "device=cpu", "dtype=float64"]
        if args.max_iters:
            base.append(f"trainer.max_iters={args.max_iters}")
        singles, batches = [], []
        for r in range(args.repeats):
            for k in [int(i) for i in args.indices.split(",")]:
                w, train = wall(base + [f"objective.beta_index={k}", "objective.beta_batch=false",
                                        f"results_dir={tmp / f'single{r}_{k}'}"])
                singles.append(w)
                print(f"  one run, beta_index={k:2d}: {w:7.2f} s  (stage 1 {train.get('pretrain_iterations')} it, "
                      f"stage 2 {train['iterations']} it)", flush=True)
            w, train = wall(base + ["objective.beta_index=0", "objective.beta_batch=true",
                                    f"results_dir={tmp / f'batched{r}'}"])
            batches.append(w)
            n_runs = len(list((tmp / f"batched{r}").glob("*/*/run.json")))
            print(f"  batched grid ({train['batched']} betas, {n_runs} run dirs): {w:7.2f} s  (stage 1 "
                  f"{train.get('pretrain_iterations')} it, batch {train['batch_wall_s']:.1f} s)", flush=True)
    ratio = statistics.median(batches) / statistics.median(singles)
    print(f"batched-grid wall / one-run wall: {ratio:.2f} (median {statistics.median(batches):.1f} s / "
          f"{statistics.median(singles):.1f} s)")
    return ratio


if __name__ == "__main__":
    entry.run(main)
