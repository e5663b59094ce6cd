"""Synthetic data for Reeb et al. (2018), App. F: x ~ U[-3, 3]^d, f a draw from a zero-mean GP with an SE-ARD kernel
(unit signal variance, log-lengthscales ~ U(-1, 1) per dimension), y = f + N(0, noise) noise. The GP draw is
approximated with random Fourier features (exact in distribution as the number of features grows), so 12000 points
need no 12000 x 12000 Cholesky. Writes a CSV with columns x0..x{d-1}, y (use with dataset=csv).

    python scripts/make_gp_synthetic.py results/pac_appF_data/gp_synthetic_d3.csv --n 12000 --d 3 --seed 0

`--seeds 0-67` writes one data set per seed, each with its own lengthscales (the paper's App. F draws new ones for each
repetition; experiment pac_appF_draws): OUT must then contain `{seed}`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import entry  # noqa: E402


def gp_synthetic(n: int, d: int, seed: int, noise: float = 0.01, features: int = 4000):
    rng = np.random.default_rng(seed)
    lengthscales = np.exp(rng.uniform(-1.0, 1.0, size=d))
    X = rng.uniform(-3.0, 3.0, size=(n, d))
    W = rng.normal(size=(features, d)) / lengthscales  # spectral density of the SE kernel
    b = rng.uniform(0.0, 2 * np.pi, size=features)
    w = rng.normal(size=features)
    f = np.sqrt(2.0 / features) * np.cos(X @ W.T + b) @ w
    y = f + np.sqrt(noise) * rng.normal(size=n)
    return X, y, lengthscales


def seed_range(text: str) -> range:
    """'A-B' (both included) or 'A'."""
    lo, _, hi = text.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="CSV path; with --seeds it must contain {seed}")
    ap.add_argument("--n", type=int, default=12000)
    ap.add_argument("--d", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=seed_range, default=None, help="A-B: one data set per seed (overrides --seed)")
    ap.add_argument("--noise", type=float, default=0.01)
    args = ap.parse_args()
    if args.seeds is not None and "{seed}" not in args.out:
        ap.error(f"--seeds writes one file per seed: OUT must contain {{seed}}, got {args.out!r}")
    for seed in args.seeds if args.seeds is not None else [args.seed]:
        out = Path(args.out.format(seed=seed))
        X, y, ls = gp_synthetic(args.n, args.d, seed, args.noise)
        out.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(X, columns=[f"x{i}" for i in range(args.d)]).assign(y=y).to_csv(out, index=False)
        print(f"wrote {out}: {args.n} x {args.d}, lengthscales {np.round(ls, 3).tolist()}")


if __name__ == "__main__":
    entry.run(main)
