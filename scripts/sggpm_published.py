"""Print upstream's two stored ucsdpeds1l objective values (M = 167, fixed hyperparameters) next to ours:
sparse fold 10 (FP, grad, dual) and SoD fold 1 (FP, grad, dual), with relative errors.
Usage: DLM_BENCH_MIRROR=../shared/data .venv/bin/python scripts/sggpm_published.py"""

import argparse
import os
from pathlib import Path

import torch

import entry
from dlm_bench.data.parsers import read_lgm_mat
from dlm_bench.sggpm.fit import fit_method
from dlm_bench.sggpm.protocol import published_ucsdpeds_splits, zscore_stats


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", type=Path, default=Path(os.environ.get("DLM_BENCH_MIRROR", "../shared/data")),
                    help="the data mirror (default: $DLM_BENCH_MIRROR, else ../shared/data)")
    root = ap.parse_args(argv).root
    X, y = read_lgm_mat(root / "ucsd_peds1/lgm_fp_inf/glm_test_data_poisson_ucsdpeds.mat")
    _, folds = published_ucsdpeds_splits(root)
    for kind, fold, ref in (("sparse", 10, 8208.705779651731), ("sod", 1, 514.8181266442094)):
        rows = folds[fold - 1].train
        mu, sd = zscore_stats(X[rows])
        Xt, yt = torch.tensor((X[rows] - mu) / sd), torch.tensor(y[rows], dtype=torch.float64)
        for alg in ("fp", "grad", "dual"):
            _, fit, _ = fit_method(f"{alg}_{kind}", "count", Xt, yt, 167)
            obj = -fit.objective if alg == "dual" else fit.objective
            print(f"{kind:6s} fold {fold:2d} {alg:4s} objective {fit.objective:.12f}  stored "
                  f"{ref if alg != 'dual' else -ref:.12f}  rel.err {abs(obj - ref) / ref:.2e}  cpu {fit.cpu_s:.2f} s  "
                  f"({fit.reason})")


if __name__ == "__main__":
    entry.run(main)
