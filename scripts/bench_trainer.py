"""Benchmark: ms per iteration of dlm_bench's Trainer vs a bare GPyTorch loop.

Same SVGP, data, ELBO and Adam; synthetic N=10000, D=8, M=100, full batch, float64.
Rounds alternate between the loops so drift in machine load hits all; the median is reported.
Target (issue 16): ratio <= 1.05. A third loop trains the same model as a run does, through its bundle
(models/svgp.py SVGPBundle.loss: the blocked q(f) of models/fast_svgp.py) with the Trainer: bundle / bare
is the gain of the fast path over GPyTorch's own call.
"""

from __future__ import annotations

import statistics
import time

import gpytorch
import torch

import benchkit
import entry
from dlm_bench.config.schema import InducingInit, Kernel, MeanFunction
from dlm_bench.models.components import initial_inducing_points, make_kernel
from dlm_bench.models.svgp import SVGP, SVGPBundle
from dlm_bench.training.trainer import Trainer


def make(X, M, seed):
    torch.manual_seed(seed)
    Z = initial_inducing_points(X, M, InducingInit.random, seed)
    model = SVGP(Z, make_kernel(Kernel.rbf, None), MeanFunction.zero).double()
    likelihood = gpytorch.likelihoods.GaussianLikelihood().double()
    mll = gpytorch.mlls.VariationalELBO(likelihood, model, num_data=X.shape[0])
    return mll


def bare_loop(mll, X, y, iters, lr):
    opt = torch.optim.Adam(mll.parameters(), lr=lr)
    mll.train()
    steps = benchkit.adam_steps(lambda xb, yb: -mll(mll.model(xb), yb), opt, X, y, iters, cpu=False)
    return sum(steps) / iters * 1e3


def trainer_ms(loss, params, X, y, iters, lr):
    """ms per iteration of Trainer.fit; tol < 0: the stopping rule never fires, so it runs exactly `iters` steps,
    as the bare loop does."""
    trainer = Trainer(lr=lr, max_iters=iters, window=50, tol=-1.0, progress=False)
    t0 = time.perf_counter()
    result = trainer.fit(loss, params, X, y)
    assert result.iterations == iters and result.status == "ok"
    return (time.perf_counter() - t0) / iters * 1e3


def trainer_loop(mll, X, y, iters, lr):
    mll.train()
    return trainer_ms(lambda xb, yb: -mll(mll.model(xb), yb), mll.parameters(), X, y, iters, lr)


def bundle_loop(mll, X, y, iters, lr):
    bundle = SVGPBundle(mll.model, mll.likelihood, gpytorch.mlls.VariationalELBO, X.shape[0], 1.0)
    bundle.train()
    return trainer_ms(bundle.loss, bundle.trainable_parameters(), X, y, iters, lr)


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"n": 300, "m": 10, "iters": 3, "rounds": 1}, threads=None)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--d", type=int, default=8)
    ap.add_argument("--m", type=int, default=100)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lr", type=float, default=0.01)
    args = benchkit.parse(ap, argv)
    X, y = benchkit.synthetic_regression(args.n, args.d)
    bare_loop(make(X, args.m, 0), X, y, 3, args.lr)  # warm-up
    loops = {"bare GPyTorch loop ": bare_loop, "dlm_bench Trainer  ": trainer_loop, "bundle + Trainer   ": bundle_loop}
    times = {label: [] for label in loops}
    for r in range(args.rounds):  # interleaved; each loop trains a fresh model of round r
        for label, loop in loops.items():
            times[label].append(loop(make(X, args.m, r), X, y, args.iters, args.lr))
    b, o, bb = benchkit.medians(times).values()
    print(f"synthetic N={args.n} D={args.d} M={args.m}, {args.iters} iterations x {args.rounds} rounds, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for label, v in times.items():
        print(f"{label}: {statistics.median(v):8.2f} ms/iteration (median; rounds: {benchkit.rounds_text(v, 1)})")
    print(benchkit.line("ratio Trainer/bare ", o / b, 1.05, fmt="8.3f"))
    print(benchkit.line("ratio bundle/bare  ", bb / b, note="the blocked q(f), models/fast_svgp.py", fmt="8.3f"))
    return o / b, bb / b


if __name__ == "__main__":
    entry.run(main)
