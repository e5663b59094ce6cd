"""Benchmark: the uPS sampler and the cost of a training iteration with uPS vs bMC-10 vs exact.

1. uPS throughput on a minibatch of 1000 training points (L = 10 samples each): samples per second and
   mean proposals per accepted sample, at initialisation and after a warm-up of DLM training (the paper
   reports about 2 proposals per sample after warm-up; with K = l_max the expected count is
   l_max / E_q[p(y|f)] per example).
2. ms per training iteration (DLM loss + backward + Adam step, minibatch of 1000) for uPS-10, bMC-10 and
   the deterministic likelihood term (exact probit / quadrature Poisson), same model state.

Data: abalone (count, Poisson exp link) and twonorm (binary, probit) through the normal data path
(needs them cached or DLM_BENCH_MIRROR). float64, one thread unless --threads.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from dlm_bench import methods, runner
from dlm_bench.cli import compose_config
from dlm_bench.estimators.ups import UPSStats, ups_sample


def bundle_for(dataset, estimator_overrides, n_train, seed=0):
    cfg = compose_config([f"dataset={dataset}", "protocol=dlm_classification", f"protocol.train_size={n_train}",
                          "objective=dlm", "model.num_inducing=50", f"seed={seed}", "trainer.progress=off",
                          *estimator_overrides])
    runner.resolve_task_defaults(cfg)
    runner.seed_everything(seed)
    prep = runner.prepare_data(cfg, torch.device("cpu"), torch.float64)
    X, y = prep.tensors["train"]
    return methods.build_bundle(cfg, X, y).double(), X, y


def marginals(bundle, X):
    bundle.train()
    with torch.no_grad():
        f = bundle.model(X)
        return f.mean, f.variance


def sampler_throughput(bundle, X, y, reps, L=10):
    mu, var = marginals(bundle, X)
    stats, t0 = UPSStats(), time.perf_counter()
    for _ in range(reps):
        _, s = ups_sample(bundle.likelihood, y, mu, var, L)
        stats.add(s)
    wall = time.perf_counter() - t0
    return stats.samples / wall, stats.proposals_per_sample, stats.fallback / stats.samples


def warm_up(bundle, X, y, iters, lr=0.1):
    opt = torch.optim.Adam(bundle.trainable_parameters(), lr=lr)
    bundle.train()
    for _ in range(iters):
        opt.zero_grad()
        bundle.loss(X, y).backward()
        opt.step()


def ms_per_iteration(bundle, X, y, iters):
    opt = torch.optim.Adam(bundle.trainable_parameters(), lr=1e-3)
    bundle.train()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        opt.zero_grad()
        bundle.loss(X, y).backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=300, help="DLM iterations (Adam 0.1, quadrature) before timing")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"uPS benchmark: minibatch {args.batch}, L = 10, float64, {args.threads} thread(s)")
    for dataset, deterministic in (("abalone", "quadrature"), ("twonorm", "exact")):
        base, X, y = bundle_for(dataset, [f"estimator={deterministic}"], args.batch)
        X, y = X[: args.batch], y[: args.batch]
        sps0, pps0, fb0 = sampler_throughput(base, X, y, max(1, args.reps // 2))
        warm_up(base, X, y, args.warmup)
        sps, pps, fb = sampler_throughput(base, X, y, args.reps)
        print(f"{dataset:8s} sampler at init:   {sps0:9.0f} samples/s  {pps0:6.2f} proposals/sample  "
              f"{100 * fb0:5.1f}% to the per-example stage")
        print(f"{dataset:8s} after {args.warmup} its: {sps:9.0f} samples/s  {pps:6.2f} proposals/sample  "
              f"{100 * fb:5.1f}% to the per-example stage")
        state = base.state_dict()
        row = []
        for label, est in (("uPS-10", ["estimator=ups", "estimator.num_samples=10"]),
                           ("bMC-10", ["estimator=bmc", "estimator.num_samples=10"]),
                           (deterministic, [f"estimator={deterministic}"])):
            b, _, _ = bundle_for(dataset, est, args.batch)
            b.load_state_dict(state)
            row.append(f"{label} {ms_per_iteration(b, X, y, args.iters):7.1f}")
        print(f"{dataset:8s} ms/iteration (median of {args.iters}): " + " | ".join(row))


if __name__ == "__main__":
    main()
