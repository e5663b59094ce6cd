"""Generated logistic GLM data for the smoke of Sheth & Khardon (2016) supplement Fig. 5 (epsilon with its first
250 / 500 / 750 features): one dense problem (lgm/fpdiag.synthetic_logistic, x ~ N(0, I), latent sd 3) written
as CSVs with its first D columns for each --dims, like epsilon_fp_d250/_d500/_d750 take the first D of epsilon_fp.

    python scripts/make_logistic_synthetic.py results/fp_supp5_data --n 1500 --dims 50,100,150
"""

import argparse
from pathlib import Path

import pandas as pd

from dlm_bench.lgm.fpdiag import synthetic_logistic
import entry  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=1500)
    ap.add_argument("--dims", default="50,100,150")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    dims = [int(d) for d in a.dims.split(",")]
    X, y, _ = synthetic_logistic(a.n, max(dims), a.seed)
    a.out.mkdir(parents=True, exist_ok=True)
    for d in dims:
        p = a.out / f"logistic_synth_d{d}.csv"
        pd.DataFrame(X[:, :d], columns=[f"x{i}" for i in range(d)]).assign(y=y.astype(int)).to_csv(p, index=False)
        print(f"wrote {p}: {a.n} x {d}")


if __name__ == "__main__":
    entry.run(main)
