"""Benchmark: ms per iteration of the fixed-hyperparameter path vs the joint path (issue 16 item 4).

Same log-loss DLM SVGP (Gaussian likelihood, exact DLM term), synthetic N=5000, D=8, M=100, full batch,
float64, Adam. joint: kernel, noise, Z and q(u) trained (GPyTorch's forward every iteration). fixed:
hyperparameters and Z adopted and frozen, q(u) trained, with the cached chol(K_ZZ) and K_ZZ^-1/2 K_ZX
(models/svgp.py FrozenPredictive); "fixed, uncached" is the same frozen bundle through GPyTorch's path.
Rounds are interleaved; medians are reported. Target: fixed / joint <= 0.6.
"""

from __future__ import annotations

import torch

import benchkit
import entry


def bundles(X, y, m):
    joint, _, _ = benchkit.run_bundle(["dataset=boston", "objective=dlm", f"model.num_inducing={m}"], X, y)
    fixed, _, _ = benchkit.run_bundle(["dataset=boston", "objective=dlm", "objective.hyperparameters=fixed",
                                       f"model.num_inducing={m}"], X, y)
    fixed.adopt_hyperparameters(joint)
    return joint, fixed


def adam_steps(bundle, X, y, iters):
    """`iters` Adam steps of the bundle's loss from a fresh Adam: the timed work of one round."""
    bundle.train()
    benchkit.adam_steps(bundle.loss, torch.optim.Adam(bundle.trainable_parameters(), lr=0.01), X, y, iters)


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"n": 300, "m": 10, "iters": 2, "rounds": 1}, threads=None)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--m", type=int, default=100)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    args = benchkit.parse(ap, argv)
    X, y = benchkit.synthetic_regression(args.n, 8)
    joint, fixed = bundles(X, y, args.m)
    adam_steps(fixed, X, y, 2)  # initialises q(u) and fills the cache, as the first iteration of a run

    def fixed_path(cached):
        def go():
            fixed.fast_fixed = cached
            return adam_steps(fixed, X, y, args.iters)
        return go

    times = benchkit.interleaved({"joint": lambda: adam_steps(joint, X, y, args.iters),
                                  "fixed": fixed_path(True), "fixed, uncached": fixed_path(False)},
                                 args.rounds, cpu=False, warmup=False)
    ms = benchkit.medians(times, 1e3 / args.iters)
    print(f"fixed-path benchmark: DLM SVGP, synthetic N={args.n} D=8 M={args.m}, full batch, float64, "
          f"{torch.get_num_threads()} thread(s), {args.rounds} interleaved rounds of {args.iters} iterations")
    print("ms/iteration (median): " + " | ".join(f"{k} {v:7.2f}" for k, v in ms.items()))
    return ms["fixed"] / ms["joint"], ms


if __name__ == "__main__":
    entry.run(main)
