"""ucsdpeds GLM-Poisson reference (released lgm_fp_inf file, Sigma = 0.1 I, V0 = 0.1 I, no intercept): final VLB,
iterations and CPU s of every optimiser; VLB* = -68371.32156 (12940.26392 without -sum log y!).

usage: python scripts/fp_ucsdpeds_reference.py [../shared/data]"""

import argparse
from pathlib import Path

import torch

import entry
from dlm_bench.data.parsers import read_lgm_mat
from dlm_bench.lgm.optim import StopRule, optimise
from dlm_bench.gpmath.lgm import glm
from dlm_bench.gpmath.sites import make_site


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", type=Path, default=Path("../shared/data"), help="the data mirror")
    path = ap.parse_args(argv).root / "ucsd_peds1/lgm_fp_inf/glm_test_data_poisson_ucsdpeds.mat"
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path} (give the data mirror as the argument)")
    torch.set_default_dtype(torch.float64)
    X, y = map(torch.as_tensor, read_lgm_mat(path))
    M = glm(X, y, make_site("poisson"), 0.1)
    m0, L0 = torch.zeros(30), 0.1**0.5 * torch.eye(30)
    for opt in ["fpi", "fpb", "fpi_mean", "grad"]:
        r = optimise(M, opt, m0, L0, StopRule(max_iters=2000))
        print(opt, f"{r.vlb:.6f}", r.iterations, r.reason, f"cpu={r.cpu_s:.3f}",
              f"no_logy={r.vlb + float(torch.lgamma(y + 1).sum()):.5f}")


if __name__ == "__main__":
    entry.run(main)
