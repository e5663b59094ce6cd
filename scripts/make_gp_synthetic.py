"""Synthetic data for Reeb et al. (2018), App. F: x ~ U[-3, 3]^d, f a draw from a zero-mean GP with an SE-ARD kernel
(unit signal variance, log-lengthscales ~ U(-1, 1) per dimension), y = f + N(0, noise) noise. The GP draw is
approximated with random Fourier features (exact in distribution as the number of features grows), so 12000 points
need no 12000 x 12000 Cholesky. Writes a CSV with columns x0..x{d-1}, y (use with dataset=csv).

    python scripts/make_gp_synthetic.py results/pac_appF_data/gp_synthetic_d3.csv --n 12000 --d 3 --seed 0
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=12000)
    ap.add_argument("--d", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--noise", type=float, default=0.01)
    args = ap.parse_args()
    X, y, ls = gp_synthetic(args.n, args.d, args.seed, args.noise)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(args.d)]).assign(y=y)
    df.to_csv(args.out, index=False)
    print(f"wrote {args.out}: {args.n} x {args.d}, lengthscales {np.round(ls, 3).tolist()}")


if __name__ == "__main__":
    entry.run(main)
