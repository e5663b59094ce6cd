"""Benchmark: ms per iteration of the fixed-hyperparameter path vs the joint path (issue 16 item 4).

Same log-loss DLM SVGP (Gaussian likelihood, exact DLM term), synthetic N=5000, D=8, M=100, full batch,
float64, Adam. joint: kernel, noise, Z and q(u) trained (GPyTorch's forward every iteration). fixed:
hyperparameters and Z adopted and frozen, q(u) trained, with the cached chol(K_ZZ) and K_ZZ^-1/2 K_ZX
(models/svgp.py FrozenPredictive); "fixed, uncached" is the same frozen bundle through GPyTorch's path.
Rounds are interleaved; medians are reported. Target: fixed / joint <= 0.6.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from dlm_bench.cli import compose_config
from dlm_bench.models.builders import build_bundle
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run.context import seed_everything


def bundles(X, y, m):
    cfg = compose_config(["dataset=boston", "objective=dlm", f"model.num_inducing={m}", "trainer.progress=off"])
    resolve_task_defaults(cfg)
    seed_everything(0)
    joint = build_bundle(cfg, X, y).double()
    fixed_cfg = compose_config(["dataset=boston", "objective=dlm", "objective.hyperparameters=fixed",
                                f"model.num_inducing={m}", "trainer.progress=off"])
    resolve_task_defaults(fixed_cfg)
    fixed = build_bundle(fixed_cfg, X, y).double()
    fixed.adopt_hyperparameters(joint)
    return joint, fixed


def ms_per_iteration(bundle, X, y, iters):
    opt = torch.optim.Adam(bundle.trainable_parameters(), lr=0.01)
    bundle.train()
    t0 = time.perf_counter()
    for _ in range(iters):
        opt.zero_grad()
        bundle.loss(X, y).backward()
        opt.step()
    return (time.perf_counter() - t0) / iters * 1e3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--m", type=int, default=100)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    g = torch.Generator().manual_seed(0)
    X = torch.randn(args.n, 8, generator=g, dtype=torch.float64)
    y = torch.sin(X.sum(-1)) + 0.1 * torch.randn(args.n, generator=g, dtype=torch.float64)
    joint, fixed = bundles(X, y, args.m)
    ms_per_iteration(fixed, X, y, 2)  # initialises q(u) and fills the cache, as the first iteration of a run
    times = {"joint": [], "fixed": [], "fixed, uncached": []}
    for _ in range(args.rounds):
        times["joint"].append(ms_per_iteration(joint, X, y, args.iters))
        fixed.fast_fixed = True
        times["fixed"].append(ms_per_iteration(fixed, X, y, args.iters))
        fixed.fast_fixed = False
        times["fixed, uncached"].append(ms_per_iteration(fixed, X, y, args.iters))
    ms = {k: statistics.median(v) for k, v in times.items()}
    print(f"fixed-path benchmark: DLM SVGP, synthetic N={args.n} D=8 M={args.m}, full batch, float64, "
          f"{torch.get_num_threads()} thread(s), {args.rounds} interleaved rounds of {args.iters} iterations")
    print("ms/iteration (median): " + " | ".join(f"{k} {v:7.2f}" for k, v in ms.items()))
    return ms["fixed"] / ms["joint"], ms


if __name__ == "__main__":
    main()
