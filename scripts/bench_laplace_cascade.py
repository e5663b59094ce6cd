"""Benchmark: a Poisson DLM step with the `quadrature` estimator, log E_q[p(y|f)] by Laplace-centred Gauss-Hermite
with the cascade of rules (likelihoods/quadrature/laplace_hermite.py LAPLACE_NODES) against the single (12, 20)
pair it replaced.

With (12, 20) alone most points of a Poisson DLM posterior (var ~ 0.1-1) failed the 12-node check and went to the
~380-node panel rule (docs/performance.md, the cost model's known miss). Setting: supplement Figs. 13-14
(`dlm_samplers_count`): abalone (Poisson exp link; generated as in bench_ups.py when not available offline),
n = 2000 full batch, M = 50, joint DLM, estimator=quadrature, the experiment's unwhitened model with GPyTorch's
initial kernel; timed at initialisation and after 200 iterations of the experiment's Adam 0.01 (a learning curve's
early points, where q(f)'s variances are ~0.1-0.7); interleaved rounds of loss + backward + Adam step, one thread, float64, process CPU time.
Also prints the share of points each setting answers by Gauss-Hermite.
"""

from __future__ import annotations

import statistics

import torch

import bench_ups
import benchkit
import entry
from dlm_bench.likelihoods import quadrature as quad
from dlm_bench.likelihoods.quadrature import laplace_hermite as lh


def trusted_share(bundle, X, y):
    lik = bundle.likelihood
    mu, var = bench_ups.marginals(bundle, X)
    y, mu, var = (t.double() for t in (y, mu, var))
    centre = quad.tilted_mode(lik.log_prob_f, lik.log_prob_f_derivs, y, mu, var)
    with torch.no_grad():
        _, ok = lh._laplace_hermite(lik.log_prob_f, y, mu, var, lik.features(y), centre)
    return float(ok.double().mean()), float(var.median())


EXPERIMENT = ["estimator=quadrature", "model.whiten=false", "model.lengthscale_init=0.6931471805599453",
              "model.outputscale_init=0.6931471805599453"]  # conf/experiment/dlm_samplers_count.yaml


def compare(bundle, X, y, rounds, iters):
    """{label: (ms/iteration, share by Gauss-Hermite, median var)} for the cascade and (12, 20), same q(f)."""
    rules = {"cascade": lh.LAPLACE_NODES, "(12, 20)": lh.LAPLACE_NODES[:2]}
    times, share = {label: [] for label in rules}, {}
    start = {k: v.clone() for k, v in bundle.state_dict().items()}
    try:
        for label, nodes in rules.items():
            lh.LAPLACE_NODES = nodes
            share[label] = trusted_share(bundle, X, y)
        for _ in range(rounds):  # interleaved: A B A B ...
            for label, nodes in rules.items():
                lh.LAPLACE_NODES = nodes
                times[label].append(benchkit.median_step_ms(bundle, X, y, iters))
                bundle.load_state_dict(start)  # both settings time the same q(f)
    finally:
        lh.LAPLACE_NODES = rules["cascade"]
    return {label: (statistics.median(times[label]), *share[label]) for label in rules}


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"n": 200, "warmup": 2, "rounds": 1, "iters": 1})
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200, help="Adam 0.01 iterations before the second timing")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10, help="iterations per round")
    args = benchkit.parse(ap, argv)
    bundle, X, y, source = bench_ups.bundle_for("abalone", EXPERIMENT, args.n)
    X, y = X[:args.n], y[:args.n]
    bundle.train()
    ratios = {}
    for when in ("at init", f"after {args.warmup} its"):
        if when != "at init":
            benchkit.adam_steps(bundle.loss, torch.optim.Adam(bundle.trainable_parameters(), lr=0.01), X, y,
                                args.warmup)
        res = compare(bundle, X, y, args.rounds, args.iters)
        for label, (ms, share, var) in res.items():
            print(f"abalone ({source}, n={X.shape[0]}, M=50) {when:15s} {label:9s} {ms:7.1f} ms/iteration, "
                  f"{100 * share:5.1f}% of points by Gauss-Hermite (median var {var:.3f})", flush=True)
        ratios[when] = res["cascade"][0] / res["(12, 20)"][0]
    print("Poisson quadrature DLM step, cascade / (12, 20): "
          + ", ".join(f"{when} {r:.2f}" for when, r in ratios.items()))
    return ratios


if __name__ == "__main__":
    entry.run(main)
