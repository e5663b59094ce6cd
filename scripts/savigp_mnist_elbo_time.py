"""CPU time of one SAVIGP ELBO evaluation (value + score_cv gradient) at MNIST odd/even size: N = 60 000, D = 784,
M = 200 (--m: 2000 is issue 55's departure test 1), S = 2000, FG posterior, logistic likelihood, on generated data of
MNIST's shape (pixels in [0, 1])."""

import argparse
import time

import torch

import entry
from dlm_bench.savigp.likelihoods import LogisticPM
from dlm_bench.savigp.model import Savigp


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=60000)
    p.add_argument("--samples", type=int, default=2000)
    p.add_argument("--chunk", type=int, default=2000)
    p.add_argument("--m", type=int, default=200)
    p.add_argument("--estimators", default="score_cv,reparam")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    X = torch.rand(a.n, 784, generator=g, dtype=torch.float64)
    y = torch.where(torch.rand(a.n, generator=g) < 0.5, -1.0, 1.0).double()
    mod = Savigp([X[:a.m].clone()], LogisticPM(), posterior="fg", estimator="score_cv", lengthscale=9.0, variance=11.0)
    mod.init_posterior(y[:a.m].reshape(1, 1, a.m))
    eps = mod.draw_eps(a.samples, a.n, g)
    for est in a.estimators.split(","):
        mod.estimator = est
        c0, w0 = time.process_time(), time.perf_counter()
        v, s = mod.elbo(X, y, eps, chunk=a.chunk)
        c1 = time.process_time()
        (-s).backward()
        c2, w2 = time.process_time(), time.perf_counter()
        print(f"N={a.n} D=784 M={a.m} S={a.samples} {est}: ELBO {v.item():.1f}; CPU s (1 thread): value {c1 - c0:.1f}, "
              f"value + gradient {c2 - c0:.1f}; wall {w2 - w0:.1f}")


if __name__ == "__main__":
    entry.run(main)
